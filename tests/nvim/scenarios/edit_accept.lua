-- A proposed edit of an open, modified buffer: shown as diagnostics at once, and in the
-- approval view (`:Invincat approvals`) with its diff; `d` opens the native diff tab. It is
-- accepted through vim.lsp.buf.code_action() → the server's workspace/applyEdit changes
-- the buffer (not the file); one undo restores the user's unsaved text.
local T = require("invincat_test")

T.run(function()
  vim.cmd.edit("notes.txt")
  local buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, T.args.buffer)
  local before = T.lines(buf)

  vim.cmd("Invincat chat rename line two")
  local chat_win = vim.api.nvim_get_current_win()

  local diagnostic = T.wait("the pending edit's diagnostic", function()
    return vim.diagnostic.get(buf, { namespace = nil })[1]
  end)
  local approvals = require("invincat.approvals")
  local approval = T.wait("the approval", function()
    local _, pending = next(approvals.pending())
    return pending
  end)
  -- It arrived without opening anything: same window, one tab.
  local arrived = { same_window = vim.api.nvim_get_current_win() == chat_win, tabs = #vim.api.nvim_list_tabpages() }

  vim.cmd("Invincat approvals")
  local view = T.lines(0)
  vim.api.nvim_feedkeys("D", "x", false)
  T.wait("the diff tab", function()
    return approval.diff_tab
  end)
  local diff_windows = {}
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(approval.diff_tab)) do
    local shown = vim.api.nvim_win_get_buf(win)
    table.insert(diff_windows, {
      name = vim.api.nvim_buf_get_name(shown),
      diff = vim.wo[win].diff,
      is_file_buffer = shown == buf,
      lines = vim.api.nvim_buf_get_lines(shown, 0, -1, false),
    })
  end

  -- In the diff tab's window on the file, on the edited range: the server's code actions.
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_win_get_buf(win) == buf then
      vim.api.nvim_set_current_win(win)
    end
  end
  vim.api.nvim_win_set_cursor(0, { diagnostic.lnum + 1, diagnostic.col })
  local offered = {}
  vim.lsp.buf.code_action({
    apply = true,
    filter = function(action)
      table.insert(offered, action.title)
      return action.title == require("invincat.protocol").ACCEPT_EDIT_TITLE
    end,
  })
  T.wait("the buffer to change", function()
    return T.lines(buf)[2] ~= before[2]
  end)
  T.wait_chat("— turn completed —")
  local after = T.lines(buf)
  local tabs_after = #vim.api.nvim_list_tabpages()
  local diagnostics_after = #vim.diagnostic.get(buf)

  vim.api.nvim_buf_call(buf, function()
    vim.cmd("undo")
  end)

  T.done({
    before = before,
    after = after,
    undone = T.lines(buf),
    modified = vim.bo[buf].modified,
    diagnostic = { lnum = diagnostic.lnum, col = diagnostic.col, end_col = diagnostic.end_col, source = diagnostic.source },
    arrived = arrived,
    view = view,
    diff_windows = diff_windows,
    offered = offered,
    tabs_after = tabs_after,
    diagnostics_after = diagnostics_after,
    chat = T.chat_text(),
  })
end)
