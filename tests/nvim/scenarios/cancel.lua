-- :Invincat cancel while a write waits for approval: the turn ends cancelled, the diff
-- tab closes, the approval line says so; the next prompt on the thread works.
local T = require("invincat_test")

T.run(function()
  T.on_select("Write file notes.txt", nil)
  vim.cmd("Invincat chat write notes")
  T.wait("the diff tab", function()
    return #vim.api.nvim_list_tabpages() == 2 and #T.prompts == 1
  end)
  vim.cmd("Invincat cancel")
  T.wait_chat("— turn cancelled —")
  local tabs = #vim.api.nvim_list_tabpages()
  vim.cmd("Invincat chat are you still there?")
  T.wait_chat("— turn completed —")
  T.done({ tabs_after_cancel = tabs, chat = T.chat_text() })
end)
