-- :Invincat rewind after a real turn that wrote a file, edited the open buffer and created
-- a file (then changed by hand): the turn is picked, the plan shows in a float, "Files and
-- conversation" is chosen, the open file is overwritten and the hand-changed one kept. The
-- buffer goes back through the server's workspace/applyEdit (one `u` brings the agent's
-- edit back), the chat shows the thread without the undone turn.
local T = require("invincat_test")

T.run(function()
  local approvals = require("invincat.approvals")
  local rewind = require("invincat.rewind")
  vim.cmd.edit("open.txt")
  local buf = vim.api.nvim_get_current_buf()

  vim.cmd("Invincat chat change three files")
  for i = 1, 3 do
    local approval = T.wait("approval " .. i, function()
      return approvals.list()[1]
    end)
    approvals.resolve(approval.id, "approve")
    T.wait("approval " .. i .. " to be settled", function()
      return approvals.pending()[approval.id] == nil
    end)
  end
  T.wait_chat("— turn completed —")
  local edited = T.lines(buf)
  vim.fn.writefile({ "changed by hand" }, "created.txt")

  T.on_select("Rewind to before which turn?", "1. change three files")
  T.on_select("Rewind what?", "Files and conversation")
  T.on_select("open.txt changed since Invincat wrote it", "Overwrite")
  T.on_select("created.txt changed since Invincat wrote it", "Keep")
  vim.cmd("Invincat rewind")
  local done = T.wait("the rewind", function()
    return rewind.state().last
  end)
  T.wait("the chat to show the rewound thread", function()
    return not T.chat_text():find("turn completed", 1, true)
  end)
  local restored = T.lines(buf)
  local modified = vim.bo[buf].modified
  local plan = T.lines(rewind.state().buf)
  local float_closed = rewind.state().float == nil
  vim.api.nvim_buf_call(buf, function()
    vim.cmd("undo")
  end)

  T.done({
    edited = edited,
    restored = restored,
    modified = modified,
    undone = T.lines(buf),
    plan = plan,
    float_closed = float_closed,
    done = done,
    prompts = T.prompts,
    chat = T.chat_text(),
    notifications = T.notifications,
  })
end)
