-- :Invincat memory lists the entry under scope → tier; `a` archives it (through the
-- server's governance); `A` shows archived entries; a change made elsewhere (the CLI)
-- refreshes the sidebar by itself through invincat/memory/didChange.
local T = require("invincat_test")

---@param text string
---@return integer? row, string? line
local function find_line(text)
  for row, line in ipairs(T.lines(require("invincat.memory").state().buf)) do
    if line:find(text, 1, true) then
      return row, line
    end
  end
end

T.run(function()
  local memory = require("invincat.memory")
  local content = T.args.content
  T.on_input("Archive " .. T.args.id, "moved to CI")

  vim.cmd("Invincat memory")
  local row = T.wait("the entry", function()
    return find_line(content)
  end)
  local listed = T.lines(memory.state().buf)
  local sidebar = vim.api.nvim_get_current_win() == memory.state().win
  -- The key hints fit the sidebar (default width 48): every line shows whole.
  local width = vim.api.nvim_win_get_width(memory.state().win)
  local hints_fit = true
  for _, line in ipairs(listed) do
    if line:find(" · ", 1, true) and vim.fn.strdisplaywidth(line) > width then
      hints_fit = false
    end
  end
  -- `?` lists every key in a float; `q` closes it, back in the sidebar.
  vim.api.nvim_feedkeys("?", "x", false)
  local full_help = T.lines(0)
  vim.api.nvim_feedkeys("q", "x", false)
  local back_in_sidebar = vim.api.nvim_get_current_win() == memory.state().win

  vim.api.nvim_win_set_cursor(0, { row, 0 })
  vim.api.nvim_feedkeys("a", "x", false)
  T.wait("the archived entry to leave the list", function()
    return memory.state().loaded and not find_line(content)
  end)
  local store = vim.json.decode(table.concat(vim.fn.readfile(memory.state().stores.project), "\n"))

  vim.api.nvim_feedkeys("A", "x", false)
  T.wait("archived entries to show", function()
    return find_line("(archived)")
  end)
  local _, archived_line = find_line(content)

  -- Restored from a terminal: the server notices and the sidebar refreshes by itself.
  local restore = vim.system({ T.args.invincat, "memory", "restore", T.args.id, "--reason", "back" }):wait()
  T.wait("the sidebar to show the restored entry", function()
    local _, line = find_line(content)
    return line and not line:find("(archived)", 1, true)
  end, T.DEADLINE_MS)
  local _, restored_line = find_line(content)

  -- <CR> on the entry: a float with the entry and its history from the journal.
  vim.api.nvim_set_current_win(memory.state().win)
  vim.api.nvim_win_set_cursor(0, { find_line(content), 0 })
  vim.api.nvim_feedkeys(vim.keycode("<CR>"), "x", false)
  local shown = T.wait("the entry float", function()
    local buf = vim.api.nvim_get_current_buf()
    return vim.api.nvim_buf_get_name(buf):find("invincat://memory/" .. T.args.id, 1, true) and T.lines(buf)
  end)

  T.done({
    shown = shown,
    listed = listed,
    width = width,
    hints_fit = hints_fit,
    full_help = full_help,
    back_in_sidebar = back_in_sidebar,
    sidebar_focused = sidebar,
    store = store,
    archived_line = archived_line,
    restore_code = restore.code,
    restore_stderr = restore.stderr,
    restored_line = restored_line,
  })
end)
