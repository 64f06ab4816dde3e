--- `:Invincat rules`: the "always" approval rules of the current buffer's project in a
--- scratch buffer (this server's session rules and the workspace's remembered ones, from
--- `invincat/rules/list`), one a line with what it covers. `d` (or `x`) on a rule asks,
--- then takes it back (`invincat/rules/revoke`): the next such call asks again.
local invincat = require("invincat")
local protocol = require("invincat.protocol")
local ui = require("invincat.ui")

local M = {}

---@class invincat.Rule
---@field id string
---@field scope "session"|"workspace"
---@field effect "allow"|"deny"
---@field tool string
---@field command string?
---@field covers string
---@field createdAt string
---@field workspace string

---@class invincat.RulesState
---@field buf integer?
---@field folder string? The `folder` param of the requests (the project shown).
---@field items invincat.Rule[]
---@field problems string[]
---@field rows table<integer, invincat.Rule> 1-based line → the rule it shows
---@field loaded boolean A list answer arrived since the last refresh.
local state = { items = {}, problems = {}, rows = {}, loaded = false }

local HEADER = {
  " Invincat approval rules",
  " d revoke · R refresh · q close",
  "",
}

--- The buffer's state, for tests and integrations.
---@return invincat.RulesState
function M.state()
  return state
end

--- One rule as its line shows it.
---@param rule invincat.Rule
---@return string
function M.line(rule)
  -- A hand-edited rules file must not put a newline (or other control text) in a line.
  local covers = tostring(rule.covers or ""):gsub("%c", " ")
  return ("%s  %-9s  %s"):format(rule.id, rule.scope, covers)
end

local function render()
  local buf = state.buf
  if not (buf and vim.api.nvim_buf_is_valid(buf)) then
    return
  end
  local lines = vim.deepcopy(HEADER)
  state.rows = {}
  if #state.items == 0 then
    table.insert(lines, state.loaded and "  (no rules: risky calls ask every time)" or "  (loading…)")
  end
  for _, rule in ipairs(state.items) do
    table.insert(lines, M.line(rule))
    state.rows[#lines] = rule
  end
  for _, problem in ipairs(state.problems) do
    table.insert(lines, "! " .. tostring(problem):gsub("%c", " "))
  end
  ui.set_lines(buf, lines)
end

--- Ask the server again and redraw.
---@param done? fun()
function M.refresh(done)
  state.loaded = false
  local params = state.folder and { folder = state.folder } or {}
  invincat.request(protocol.RULES_LIST, params, function(err, result)
    if err then
      invincat.notify(err.message, vim.log.levels.ERROR)
    else
      state.items = result.items or {}
      state.problems = result.problems or {}
    end
    state.loaded = true
    render()
    if done then
      done()
    end
  end)
end

--- The rule on the cursor's line of the rules buffer, if any.
---@return invincat.Rule?
function M.at_cursor()
  return state.rows[vim.api.nvim_win_get_cursor(0)[1]]
end

--- Ask, then revoke `rule`; the list refreshes after the answer.
---@param rule invincat.Rule?
function M.revoke(rule)
  if not rule then
    invincat.notify("no rule on this line", vim.log.levels.WARN)
    return
  end
  local choices = { "Revoke", "Keep" }
  vim.ui.select(choices, {
    prompt = ("Revoke %s (%s)? Matching calls will ask again."):format(rule.id, M.line(rule)),
    kind = "invincat.rule",
  }, function(choice)
    if choice ~= "Revoke" then
      return
    end
    local params = { id = rule.id, folder = state.folder }
    invincat.request(protocol.RULES_REVOKE, params, function(err)
      if err then
        invincat.notify(err.message, vim.log.levels.ERROR)
      else
        invincat.notify(("revoked %s: %s"):format(rule.id, rule.covers))
      end
      M.refresh()
    end)
  end)
end

--- `:Invincat rules`: open (or focus) the rules buffer for the current buffer's project.
function M.open()
  state.folder = invincat.folder_uri(vim.api.nvim_get_current_buf())
  if not (state.buf and vim.api.nvim_buf_is_valid(state.buf)) then
    state.buf = ui.scratch_buffer("invincat://rules", "invincat-rules")
    local buf = state.buf
    local function map(lhs, fn, desc)
      vim.keymap.set("n", lhs, fn, { buffer = buf, nowait = true, silent = true, desc = desc })
    end
    map("d", function()
      M.revoke(M.at_cursor())
    end, "Invincat: revoke the rule under the cursor")
    map("x", function()
      M.revoke(M.at_cursor())
    end, "Invincat: revoke the rule under the cursor")
    map("R", M.refresh, "Invincat: refresh the rules")
    map("q", "<cmd>close<cr>", "Invincat: close the rules")
  end
  local win = vim.fn.bufwinid(state.buf)
  if win ~= -1 then
    vim.api.nvim_set_current_win(win)
  else
    ui.open_split(state.buf, "bottom", 12)
  end
  state.items, state.problems = {}, {}
  render()
  M.refresh()
end

return M
