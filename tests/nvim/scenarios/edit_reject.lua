-- A proposed edit of an open, modified buffer, rejected in the approval view (`r`) with a
-- message for the agent: the buffer and the file stay as they were, and focus returns to
-- the window the view was opened from.
local T = require("invincat_test")

T.run(function()
  vim.cmd.edit("notes.txt")
  local buf = vim.api.nvim_get_current_buf()
  local win = vim.api.nvim_get_current_win()
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, T.args.buffer)

  T.on_input("Why?", "keep line two as it is")
  vim.cmd("Invincat chat rename line two")
  vim.api.nvim_set_current_win(win)
  T.wait_chat("Edit file notes.txt — pending")
  vim.cmd("Invincat approvals")
  local in_view = vim.bo.filetype == "invincat-approvals"
  vim.api.nvim_feedkeys("r", "x", false)
  T.wait_chat("— turn completed —")
  T.wait("focus back in the file's window", function()
    return vim.api.nvim_get_current_win() == win
  end)

  T.done({
    in_view = in_view,
    after = T.lines(buf),
    modified = vim.bo[buf].modified,
    tabs = #vim.api.nvim_list_tabpages(),
    diagnostics = #vim.diagnostic.get(buf),
    chat = T.chat_text(),
  })
end)
