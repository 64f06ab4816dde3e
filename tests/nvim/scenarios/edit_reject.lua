-- A proposed edit of an open, modified buffer, rejected from the approval prompt with a
-- message for the agent: the buffer and the file stay as they were.
local T = require("invincat_test")

T.run(function()
  vim.cmd.edit("notes.txt")
  local buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, T.args.buffer)

  T.on_select("Edit file notes.txt", "Reject")
  T.on_input("Why?", "keep line two as it is")
  vim.cmd("Invincat chat rename line two")
  T.wait_chat("— turn completed —")

  T.done({
    after = T.lines(buf),
    modified = vim.bo[buf].modified,
    tabs = #vim.api.nvim_list_tabpages(),
    diagnostics = #vim.diagnostic.get(buf),
    chat = T.chat_text(),
  })
end)
