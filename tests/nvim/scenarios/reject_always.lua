-- `X` in the approval view on a shell command that offers "reject always": a stray `X`
-- only opens the reject prompt (naming the rule); <Esc> there keeps it pending. `X` and
-- Enter reject it and, for this session, the next `touch` call is rejected unasked.
local T = require("invincat_test")

T.run(function()
  local approvals = require("invincat.approvals")
  vim.cmd("Invincat chat touch one")
  T.wait("the first approval", function()
    return #approvals.list() == 1
  end)
  local deny_option = approvals.list()[1].event.deny_option
  vim.cmd("Invincat approvals")
  local view = T.lines(0)

  T.on_input("Reject, and reject shell commands", nil) -- <Esc>: stays pending
  vim.api.nvim_feedkeys("X", "x", false)
  T.wait("the cancelled prompt", function()
    return #T.prompts == 1
  end)
  local answered = false
  vim.schedule(function()
    answered = true
  end)
  T.wait("the cancel to run", function()
    return answered
  end)
  local still_pending = #approvals.list()

  T.on_input("Reject, and reject shell commands", "") -- <Enter>
  vim.cmd("Invincat approvals")
  vim.api.nvim_feedkeys("X", "x", false)
  T.wait_chat("— turn completed —")

  vim.cmd("Invincat chat touch two")
  T.wait("the second turn to end", function()
    local _, ends = T.chat_text():gsub("— turn completed —", "")
    return ends == 2
  end, T.DEADLINE_MS)
  T.done({
    deny_option = deny_option,
    view = view,
    still_pending = still_pending,
    pending_after = #approvals.list(),
    chat = T.chat_text(),
  })
end)
