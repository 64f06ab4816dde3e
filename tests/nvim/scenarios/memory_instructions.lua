-- The project's instruction files in the memory sidebar: a read-only group of their own
-- under the scopes, a refused file marked, and <CR> on AGENTS.md opens it.
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
  T.wait("the instruction files", function()
    return find_line("instruction files")
  end)
  local listed = T.lines(memory.state().buf)
  local marks = {}
  for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(memory.state().buf, -1, 0, -1, { details = true })) do
    local virt = mark[4].virt_text
    if virt then
      marks[#marks + 1] = virt[1][1]
    end
  end
  local row = find_line("▪ AGENTS.md")
  vim.api.nvim_set_current_win(memory.state().win)
  vim.api.nvim_win_set_cursor(0, { row, 0 })
  vim.api.nvim_feedkeys(vim.keycode("<CR>"), "x", false)
  local opened = T.wait("AGENTS.md opened", function()
    local name = vim.api.nvim_buf_get_name(0)
    return name:find("AGENTS.md", 1, true) and name
  end)
  T.done({ listed = listed, marks = marks, opened = opened })
end)
