-- <CR> in the approval view lists "reject always" (the rule's label) among the choices;
-- picking it asks the same reject prompt, and its Enter decides.
local T = require("invincat_test")

T.run(function()
  local approvals = require("invincat.approvals")
  vim.cmd("Invincat chat touch one")
  T.wait("the approval", function()
    return #approvals.list() == 1
  end)
  T.on_select("Invincat: ", "Reject, and reject shell commands")
  T.on_input("Reject, and reject shell commands", "not that")
  vim.cmd("Invincat approvals")
  vim.api.nvim_feedkeys("\r", "x", false)
  T.wait_chat("— turn completed —")
  T.done({ chat = T.chat_text() })
end)
