-- A stale cited entry in the sidebar: a badge on the entry, its citation as a row, and
-- <CR> on the citation opens the file at the cited line.
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
  vim.cmd("Invincat memory")
  T.wait("the citation row", function()
    return find_line("↳ scripts/deploy.sh:3")
  end)
  local _, entry_line = find_line(T.args.content)
  local row, citation_line = find_line("↳ scripts/deploy.sh:3")

  vim.api.nvim_set_current_win(memory.state().win)
  vim.api.nvim_win_set_cursor(0, { row, 0 })
  vim.api.nvim_feedkeys(vim.keycode("<CR>"), "x", false)
  local opened = T.wait("the cited file", function()
    local name = vim.api.nvim_buf_get_name(0)
    return name:find("scripts/deploy.sh", 1, true) and name
  end)
  T.done({
    entry_line = entry_line,
    citation_line = citation_line,
    opened = opened,
    cursor_line = vim.api.nvim_win_get_cursor(0)[1],
    in_sidebar = vim.api.nvim_get_current_win() == memory.state().win,
  })
end)
