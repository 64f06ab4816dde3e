--- The approval view (`:Invincat approvals`, or <CR> on an approval line in the chat): a
--- float listing the approvals that wait for a decision, each decided with one key.
---
--- It opens only when the user asks. An approval that arrives never takes focus or reads
--- keys (keys typed for a buffer would answer it); it is announced instead (approvals.lua).
--- After a decision taken here, focus goes back to the window the view was opened from.
local format = require("invincat.format")
local invincat = require("invincat")
local ui = require("invincat.ui")

local M = {}

local ns = vim.api.nvim_create_namespace("invincat.approval_view")
--- A longer diff is cut here; `d` (inline) and `D` (side by side) show all of it.
local MAX_DIFF_LINES = 40

---@class invincat.ApprovalViewState
---@field buf integer?
---@field win integer?
---@field origin integer? The window the user opened the view from.
---@field rows table<integer, string> 1-based row → approval id
---@field deciding {id: string, win: integer}? The approval a key of this view (or its diff tab) decided, and the window the key was pressed in.
local state = { rows = {} }

local function approvals()
  return require("invincat.approvals")
end

---@param event table
---@return boolean
local function has_diff(event)
  return event.kind == "tool" and type(event.path) == "string" and (event.proposed_text ~= nil or event.diff ~= nil)
end

---@param event table
---@return string
local function keys_line(event)
  if event.kind == "plan" then
    return "a approve · r reject · f refine · <CR> plan view"
  elseif event.kind == "question" then
    return "a / <CR> answer · r dismiss the question"
  end
  local keys = { "a approve" }
  if #(event.always_options or {}) > 0 then
    table.insert(keys, "A approve always…")
  end
  table.insert(keys, "r reject")
  if type(event.deny_option) == "table" then
    table.insert(keys, "X reject always (this session)…")
  end
  table.insert(keys, "e edit arguments")
  if has_diff(event) then
    vim.list_extend(keys, { "d preview in the file", "D side-by-side diff" })
  end
  table.insert(keys, "<CR> all choices")
  return table.concat(keys, " · ")
end

--- Lines describing one approval: {text, highlight group?} pairs.
---@param event table
---@return {[1]: string, [2]: string?}[]
local function describe(event)
  local title = format.approval_line(event):gsub(" — pending$", "")
  local lines = { { title, "InvincatApproval" } }
  if event.kind == "plan" then
    for i, todo in ipairs(event.todos or {}) do
      table.insert(lines, { ("      %d. %s"):format(i, format.one_line(todo.content or "", 120)) })
    end
  elseif event.kind == "question" then
    for _, question in ipairs(event.questions or {}) do
      table.insert(lines, { "    ? " .. format.one_line(question.question or "", 120) })
      for _, option in ipairs(question.options or {}) do
        table.insert(lines, { "      • " .. format.one_line(option, 110) })
      end
    end
  elseif type(event.diff) == "string" then
    local diff = vim.split(event.diff, "\n", { plain = true, trimempty = true })
    for i, line in ipairs(diff) do
      if i > MAX_DIFF_LINES then
        table.insert(lines, { ("    … %d more lines (d or D shows the whole diff)"):format(#diff - MAX_DIFF_LINES), "InvincatStatus" })
        break
      end
      local first, header = line:sub(1, 1), line:sub(1, 3)
      local hl = (header == "+++" or header == "---") and "InvincatStatus"
        or first == "+" and "DiffAdd"
        or first == "-" and "DiffDelete"
        or first == "@" and "InvincatStatus"
        or nil
      table.insert(lines, { "    " .. line, hl })
    end
  elseif event.args ~= nil then
    table.insert(lines, { "    " .. format.one_line(event.args, 200), "InvincatTool" })
  end
  table.insert(lines, { "    " .. keys_line(event), "InvincatStatus" })
  table.insert(lines, { "" })
  return lines
end

--- The approval under the cursor in the view (the first one on the header).
---@return invincat.Approval?
local function current()
  local pending = approvals().pending()
  local row = vim.api.nvim_win_get_cursor(0)[1]
  local id = state.rows[row]
  if id and pending[id] then
    return pending[id]
  end
  return approvals().list()[1]
end

local function render()
  local buf = state.buf
  if not (buf and vim.api.nvim_buf_is_valid(buf)) then
    return
  end
  local list = approvals().list()
  local lines = {
    { " " .. format.count(#list, "approval") .. " waiting for your decision", "InvincatHeader" },
    { "" },
  }
  state.rows = {}
  for _, approval in ipairs(list) do
    for _, line in ipairs(describe(approval.event)) do
      table.insert(lines, line)
      state.rows[#lines] = approval.id
    end
  end
  table.insert(lines, { " j/k move · q close (the approvals stay pending)", "InvincatStatus" })
  ui.set_lines(
    buf,
    vim.tbl_map(function(line)
      return line[1]
    end, lines)
  )
  vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  for i, line in ipairs(lines) do
    if line[2] then
      vim.api.nvim_buf_set_extmark(buf, ns, i - 1, 0, { line_hl_group = line[2] })
    end
  end
  if state.win and vim.api.nvim_win_is_valid(state.win) then
    vim.api.nvim_win_set_height(state.win, ui.fit(#lines, vim.o.lines))
  end
end

--- Move the cursor to the first line of approval `id`.
---@param id string?
local function goto_approval(id)
  for row = 1, vim.api.nvim_buf_line_count(state.buf) do
    if state.rows[row] and (id == nil or state.rows[row] == id) then
      vim.api.nvim_win_set_cursor(state.win, { row, 0 })
      return
    end
  end
end

local function focus_origin()
  if state.origin and vim.api.nvim_win_is_valid(state.origin) then
    vim.api.nvim_set_current_win(state.origin)
  end
end

--- Close the view and go back to the window it was opened from.
function M.close()
  local win = state.win
  state.win = nil
  state.deciding = nil
  if win and vim.api.nvim_win_is_valid(win) then
    vim.api.nvim_win_close(win, true)
  end
  focus_origin()
end

--- Remember that a key in the approval UI decided `id`, so that once it is settled focus
--- comes back to the view (more approvals) or to the origin (none left).
---@param id string
local function deciding(id)
  state.deciding = { id = id, win = vim.api.nvim_get_current_win() }
end

--- Run `action(approval)` on the approval under the cursor; `decides`: the key sends a
--- decision (or opens the prompt that does).
---@param action fun(approval: invincat.Approval)
---@param kinds? table<string, boolean> the kinds it applies to (default: all)
---@param decides? boolean default true
local function on_current(action, kinds, decides)
  return function()
    local approval = current()
    if not approval then
      return
    end
    if kinds and not kinds[approval.event.kind] then
      invincat.notify("that key does not apply to this approval", vim.log.levels.WARN)
      return
    end
    if decides ~= false then
      deciding(approval.id)
    end
    action(approval)
  end
end

---@param approval invincat.Approval
local function approve(approval)
  if approval.event.kind == "question" then
    approvals().answer(approval)
  else
    approvals().decide(approval.id, "approve")
  end
end

--- `action(approval)` for an approval with a file diff (`d`, `D`); a warning for any other.
---@param action fun(approval: invincat.Approval)
---@return fun(approval: invincat.Approval)
local function with_diff(action)
  return function(approval)
    if not has_diff(approval.event) then
      invincat.notify("this approval has no file diff", vim.log.levels.WARN)
      return
    end
    action(approval)
  end
end

---@param approval invincat.Approval
local function show_diff(approval)
  require("invincat.diff").open(approval, function(id, decision)
    deciding(id)
    approvals().decide(id, decision)
  end, function()
    if state.win and vim.api.nvim_win_is_valid(state.win) then
      vim.api.nvim_set_current_win(state.win)
    end
  end)
end

--- `d`: the proposed edit inline in the file's window when the file is loaded (focus goes
--- there and stays there after `ga` / `gR`); else the diff tab.
---@param approval invincat.Approval
local function preview(approval)
  local inline = require("invincat.preview")
  local buf = inline.buffer_for(approval, require("invincat.diff").absolute(approval.event.path, approval.event.thread_id))
  if not buf then
    return show_diff(approval)
  end
  -- Close the view without going back to the origin: the preview takes focus itself.
  local win, origin = state.win, state.origin
  state.win = nil
  state.deciding = nil
  if win and vim.api.nvim_win_is_valid(win) then
    vim.api.nvim_win_close(win, true)
  end
  inline.open(approval, buf, function(id, decision)
    approvals().decide(id, decision)
  end, origin)
end

---@param approval invincat.Approval
local function all_choices(approval)
  local kind = approval.event.kind
  if kind == "plan" then
    require("invincat.plan").show()
  elseif kind == "question" then
    approvals().answer(approval)
  else
    approvals().choose(approval)
  end
end

---@param buf integer
local function set_keymaps(buf)
  local function map(lhs, fn, desc)
    vim.keymap.set("n", lhs, fn, { buffer = buf, nowait = true, silent = true, desc = "Invincat: " .. desc })
  end
  local tool = { tool = true }
  map("a", on_current(approve), "approve (answer a question)")
  map("A", on_current(function(approval)
    approvals().approve_always(approval)
  end, tool), "approve always (choose the scope)")
  map("r", on_current(function(approval)
    approvals().decide(approval.id, "reject")
  end), "reject")
  -- The same confirmation as `r` (the prompt names the rule; only its Enter decides).
  map("X", on_current(function(approval)
    approvals().decide(approval.id, "reject_always")
  end, tool), "reject always (this session)")
  map("e", on_current(function(approval)
    approvals().edit_arguments(approval)
  end, tool), "edit the arguments")
  map("f", on_current(function(approval)
    require("invincat.plan").refine(approval.id)
  end, { plan = true }), "refine the plan")
  map("d", on_current(with_diff(preview), tool, false), "preview the edit in the file (else the diff tab)")
  map("D", on_current(with_diff(show_diff), tool, false), "show the side-by-side diff")
  map("<CR>", on_current(all_choices), "all choices")
  map("q", M.close, "close (the approvals stay pending)")
  map("<Esc>", M.close, "close (the approvals stay pending)")
end

--- Open the view (focused) on approval `id`, else the first pending one.
---@param id? string
function M.open(id)
  if #approvals().list() == 0 then
    invincat.notify("no approval is pending")
    return
  end
  local here = vim.api.nvim_get_current_win()
  if state.win and vim.api.nvim_win_is_valid(state.win) then
    if vim.api.nvim_win_get_tabpage(state.win) ~= vim.api.nvim_get_current_tabpage() then
      vim.api.nvim_win_close(state.win, true) -- reopened in this tab
      state.win = nil
    end
  end
  if here ~= state.win then
    state.origin = here
  end
  if not (state.buf and vim.api.nvim_buf_is_valid(state.buf)) then
    state.buf = ui.scratch_buffer("invincat://approvals", "invincat-approvals")
    vim.bo[state.buf].modifiable = false
    set_keymaps(state.buf)
  end
  if state.win and vim.api.nvim_win_is_valid(state.win) then
    vim.api.nvim_set_current_win(state.win)
  else
    state.win = ui.open_float(state.buf, math.min(110, vim.o.columns - 4), 10, "Invincat approvals")
    vim.wo[state.win].wrap = false
    vim.wo[state.win].cursorline = true
  end
  render()
  goto_approval(id)
end

--- Called when an approval arrives or is settled (`settled`: its id). Updates an open
--- view in place — never moving focus for an arrival. When this view decided `settled`,
--- focus goes to the view if approvals remain, else the view closes and focus returns
--- to where the user opened it.
---@param settled? string
function M.refresh(settled)
  if not (state.win and vim.api.nvim_win_is_valid(state.win)) then
    state.win = nil
    return
  end
  -- Focus moves only when the user is still where they decided (or that window was the
  -- diff tab, closed by the decision): never when they went on to something else.
  local decided = state.deciding
  local decided_here = false
  if settled ~= nil and decided and decided.id == settled then
    state.deciding = nil
    local win = decided.win
    decided_here = not vim.api.nvim_win_is_valid(win) or vim.api.nvim_get_current_win() == win
  end
  if #approvals().list() == 0 then
    if decided_here or vim.api.nvim_get_current_win() == state.win then
      return M.close()
    end
    -- The user went elsewhere meanwhile: close the view, leave them where they are.
    local win = state.win
    state.win = nil
    vim.api.nvim_win_close(win, true)
    return
  end
  render()
  if decided_here then
    vim.api.nvim_set_current_win(state.win)
    goto_approval(nil)
  end
end

--- The approval under the cursor when the cursor is in the view.
---@return string?
function M.approval_at_cursor()
  if state.win and vim.api.nvim_get_current_win() == state.win then
    local approval = current()
    return approval and approval.id
  end
end

return M
