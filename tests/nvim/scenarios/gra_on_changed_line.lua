-- Real keys: a proposed edit of the open notes.txt replaces one word of line two. With the
-- cursor at the start of that line (not on the changed word), Neovim's own `gra` lists
-- the accept / reject code actions, and accepting one edits the buffer.
local T = require("invincat_test")

T.run_async(function()
  vim.cmd.edit("notes.txt")
  local file_win, buf = vim.api.nvim_get_current_win(), vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, T.args.buffer)
  vim.cmd("Invincat chat rename line two")
  local diagnostic = T.await("the pending edit's diagnostic", function()
    return vim.diagnostic.get(buf)[1]
  end)
  vim.api.nvim_set_current_win(file_win)
  vim.api.nvim_win_set_cursor(file_win, { 2, 0 })
  T.on_select("Code actions", "accept proposed edit")
  vim.api.nvim_input("gra")
  T.await("the buffer to change", function()
    return T.lines(buf)[2] ~= T.args.buffer[2]
  end)
  T.await("the turn to end", function()
    return T.chat_text():find("— turn completed —", 1, true)
  end)
  T.done({
    diagnostic_col = diagnostic.col,
    lines = T.lines(buf),
    chat = T.chat_text(),
  })
end)
