-- The agent asks a question (ask_user): it waits in the approval view, where `a` offers
-- its options with vim.ui.select.
local T = require("invincat_test")

T.run(function()
  T.on_select("Which file should I greet in?", "b.txt")
  vim.cmd("Invincat chat greet someone")
  T.wait_chat("Which file should I greet in? — pending")
  vim.cmd("Invincat approvals")
  local view = T.lines(0)
  vim.api.nvim_feedkeys("a", "x", false)
  T.wait_chat("— turn completed —")
  T.done({ chat = T.chat_text(), view = view })
end)
