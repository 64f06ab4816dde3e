-- `d` and `D` in the approval view on a pending shell command (no file diff): a warning, no
-- diff tab, no preview, and the approval stays pending; `r` then rejects it.
local T = require("invincat_test")

T.run(function()
  T.on_input("Why?", "")
  vim.cmd("Invincat chat list the files")
  T.wait_chat("— pending")
  vim.cmd("Invincat approvals")
  vim.api.nvim_feedkeys("d", "x", false)
  vim.api.nvim_feedkeys("D", "x", false)
  local after_keys = {
    tabs = #vim.api.nvim_list_tabpages(),
    pending = vim.tbl_count(require("invincat.approvals").pending()),
    filetype = vim.bo.filetype,
  }
  vim.api.nvim_feedkeys("r", "x", false)
  T.wait_chat("— turn completed —")
  local warnings = {}
  for _, note in ipairs(T.notifications) do
    if note.level == vim.log.levels.WARN then
      table.insert(warnings, note.message)
    end
  end
  T.done({ after_keys = after_keys, warnings = warnings, chat = T.chat_text() })
end)
