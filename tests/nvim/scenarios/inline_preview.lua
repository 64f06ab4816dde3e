-- Real keys: a proposed edit of the open (modified) notes.txt; from the chat the user
-- types `:Invincat approvals<CR>` and `d`: the edit is previewed inline in the file's
-- window (no new tab), then `ga` accepts it: the buffer changes and focus stays there,
-- and the buffer's own `ga` mapping is back.
local T = require("invincat_test")

T.run_async(function()
  vim.cmd.edit("notes.txt")
  local file_win, buf = vim.api.nvim_get_current_win(), vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, T.args.buffer)
  -- The user's own mapping of `ga` in this buffer: shadowed by the preview, then back.
  vim.keymap.set("n", "ga", "<Nop>", { buffer = buf, desc = "the user's ga" })

  vim.cmd("Invincat chat rename line two")
  local approvals = require("invincat.approvals")
  T.await("the approval", function()
    return next(approvals.pending())
  end)
  local preview = require("invincat.preview")

  vim.api.nvim_input(":Invincat approvals<CR>d")
  T.await("the inline preview", function()
    return preview.approval_in(buf)
  end)
  local view_open = false
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    view_open = view_open or vim.bo[vim.api.nvim_win_get_buf(win)].filetype == "invincat-approvals"
  end
  local previewed = {
    in_file_window = vim.api.nvim_get_current_win() == file_win,
    tabs = #vim.api.nvim_list_tabpages(),
    view_open = view_open,
    cursor_line = vim.api.nvim_win_get_cursor(0)[1],
    preview = preview.describe(buf),
    lines = T.lines(buf),
  }

  vim.api.nvim_input("ga")
  T.await("the buffer to change", function()
    return T.lines(buf)[2] ~= T.args.buffer[2]
  end)
  T.await("the turn to end", function()
    return T.chat_text():find("— turn completed —", 1, true)
  end)
  T.done({
    previewed = previewed,
    after = {
      lines = T.lines(buf),
      in_file_window = vim.api.nvim_get_current_win() == file_win,
      mode = vim.api.nvim_get_mode().mode,
      tabs = #vim.api.nvim_list_tabpages(),
      preview = preview.describe(buf),
      ga_mapping = vim.fn.maparg("ga", "n", false, true).desc,
    },
    chat = T.chat_text(),
  })
end)
