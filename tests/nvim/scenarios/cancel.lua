-- :Invincat cancel while a write waits for approval (its diff tab open from the approval
-- view): the turn ends cancelled, the diff tab and the view close, the approval line says
-- so; the next prompt on the thread works.
local T = require("invincat_test")

T.run(function()
  vim.cmd("Invincat chat write notes")
  T.wait_chat("Write file notes.txt — pending")
  vim.cmd("Invincat approvals")
  vim.api.nvim_feedkeys("d", "x", false)
  T.wait("the diff tab", function()
    return #vim.api.nvim_list_tabpages() == 2
  end)
  vim.cmd("Invincat cancel")
  T.wait_chat("— turn cancelled —")
  local tabs = #vim.api.nvim_list_tabpages()
  local view_open = false
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    view_open = view_open or vim.bo[vim.api.nvim_win_get_buf(win)].filetype == "invincat-approvals"
  end
  vim.cmd("Invincat chat are you still there?")
  T.wait_chat("— turn completed —")
  T.done({ tabs_after_cancel = tabs, view_open_after_cancel = view_open, chat = T.chat_text() })
end)
