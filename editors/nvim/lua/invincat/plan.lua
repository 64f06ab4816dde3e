--- Plan mode: the plan float listing the proposed todos, with approve / reject / refine,
--- and the todos' live statuses while the main agent executes the approved plan.
local invincat = require("invincat")
local ui = require("invincat.ui")

local M = {}

---@alias invincat.PlanPhase "idle"|"planning"|"proposed"|"refining"|"executing"|"rejected"|"done"

---@class invincat.Todo
---@field content string
---@field status "pending"|"in_progress"|"completed"

---@class invincat.PlanState
---@field phase invincat.PlanPhase
---@field approval_id string? The plan approval waiting for a decision.
---@field thread_id string?
---@field todos invincat.Todo[]
---@field outcome string? How the turn ended (phase "done").
---@field buf integer?
---@field win integer?
---@field origin integer? The window the user opened the float from; focus returns there after a decision.
local state = { phase = "idle", todos = {} }

local HEADERS = {
  planning = "Planning…",
  proposed = "Proposed plan — approve, reject or refine",
  refining = "Refining the plan…",
  executing = "Executing the plan",
  rejected = "Plan rejected",
}

local MARKS = { pending = "[ ]", in_progress = "[~]", completed = "[x]" }

--- The plan's state, for statuslines and tests.
---@return invincat.PlanState
function M.state()
  return state
end

---@return string[]
local function render_lines()
  local header = HEADERS[state.phase] or ("Plan " .. (state.outcome or "finished"))
  local lines = { " " .. header, "" }
  for i, todo in ipairs(state.todos) do
    table.insert(lines, ("  %d. %s %s"):format(i, MARKS[todo.status] or "[?]", todo.content or ""))
  end
  if #state.todos == 0 then
    table.insert(lines, "  (no steps yet)")
  end
  table.insert(lines, "")
  if state.phase == "proposed" then
    table.insert(lines, " a approve   r reject   f refine   q close")
  else
    table.insert(lines, " q close")
  end
  return lines
end

---@param buf integer
local function set_keymaps(buf)
  local function map(lhs, fn, desc)
    vim.keymap.set("n", lhs, fn, { buffer = buf, nowait = true, silent = true, desc = desc })
  end
  map("a", function()
    M.decide("approve")
  end, "Invincat: approve the plan")
  map("r", function()
    M.decide("reject")
  end, "Invincat: reject the plan")
  map("f", function()
    M.decide("refine")
  end, "Invincat: refine the plan (feedback)")
  map("q", M.close, "Invincat: close the plan")
  map("<Esc>", M.close, "Invincat: close the plan")
end

local function render()
  local buf = state.buf
  if not (buf and vim.api.nvim_buf_is_valid(buf)) then
    return
  end
  local lines = render_lines()
  ui.set_lines(buf, lines)
  local win = state.win
  if win and vim.api.nvim_win_is_valid(win) then
    -- Fit the float to the plan, centred; never narrower than 20 columns.
    local width = 20
    for _, line in ipairs(lines) do
      width = math.max(width, vim.fn.strdisplaywidth(line) + 2)
    end
    width = math.min(width, math.max(20, vim.o.columns - 4))
    vim.api.nvim_win_set_config(win, ui.centered(width, ui.fit(#lines, vim.o.lines)))
  end
end

--- Open (or focus) the plan float — only on the user's request (`:Invincat plan`, the
--- approval view): a proposed plan never takes focus by itself.
function M.show()
  local here = vim.api.nvim_get_current_win()
  if here ~= state.win then
    state.origin = here
  end
  if not (state.buf and vim.api.nvim_buf_is_valid(state.buf)) then
    local buf = ui.scratch_buffer("invincat://plan", "invincat-plan")
    set_keymaps(buf)
    state.buf = buf
  end
  if not (state.win and vim.api.nvim_win_is_valid(state.win)) then
    state.win = vim.api.nvim_open_win(state.buf, true, {
      relative = "editor",
      width = 40,
      height = 5,
      row = 1,
      col = 1,
      border = "rounded",
      title = " Invincat plan ",
      style = "minimal",
    })
  else
    vim.api.nvim_set_current_win(state.win)
  end
  render()
end

--- Back to the window the float was opened from (the float stays, showing the plan).
local function return_focus()
  if state.win and vim.api.nvim_get_current_win() == state.win then
    if state.origin and vim.api.nvim_win_is_valid(state.origin) then
      vim.api.nvim_set_current_win(state.origin)
    end
  end
end

--- Close the float (the plan and its approval are kept; `:Invincat plan` reopens it).
function M.close()
  local leaving = state.win and vim.api.nvim_get_current_win() == state.win
  if state.win and vim.api.nvim_win_is_valid(state.win) then
    vim.api.nvim_win_close(state.win, true)
  end
  state.win = nil
  if leaving and state.origin and vim.api.nvim_win_is_valid(state.origin) then
    vim.api.nvim_set_current_win(state.origin)
  end
end

--- Ask for feedback (`vim.ui.input`) and send it as a `refine` decision on plan approval `id`.
---@param id string
function M.refine(id)
  vim.ui.input({ prompt = "What should change in the plan? " }, function(feedback)
    if feedback and vim.trim(feedback) ~= "" then
      require("invincat.approvals").resolve(id, "refine", { feedback = feedback })
      return_focus()
    end
  end)
end

--- `:Invincat plan [prompt]`: plan mode on the current thread; without a prompt, reopen
--- the plan float, or, when there is no plan yet, ask for the prompt (the range is kept
--- for it: the user selected the lines before they were asked).
---@param prompt? string
---@param range? {[1]: integer, [2]: integer} lines sent as the selection
function M.start(prompt, range)
  if not prompt then
    if state.phase ~= "idle" then
      return M.show()
    end
    vim.ui.input({ prompt = "Invincat plan: " }, function(input)
      if input and vim.trim(input) ~= "" then
        M.start(input, range)
      end
    end)
    return
  end
  local chat = require("invincat.chat")
  if chat.status() ~= "" then
    invincat.notify("a turn is still running; wait for it or :Invincat cancel", vim.log.levels.WARN)
    return
  end
  state.phase = "planning"
  state.todos = {}
  state.approval_id = nil
  state.outcome = nil
  state.thread_id = chat.thread_id()
  chat.open({ prompt = prompt, mode = "plan", range = range })
end

--- Send a decision on the proposed plan: approve, reject (optional message) or refine
--- (feedback asked with `vim.ui.input`).
---@param decision "approve"|"reject"|"refine"
function M.decide(decision)
  local id = state.phase == "proposed" and state.approval_id or nil
  if not id then
    invincat.notify("no plan is waiting for a decision")
    return
  end
  if decision == "refine" then
    return M.refine(id)
  end
  require("invincat.approvals").decide(id, decision, return_focus)
end

--- The plan approval, when the cursor is in the plan float.
---@return string?
function M.approval_at_cursor()
  if state.buf and vim.api.nvim_get_current_buf() == state.buf and state.phase == "proposed" then
    return state.approval_id
  end
end

---@param params invincat.EventParams
function M.on_requested(params)
  local event = params.event
  state.phase = "proposed"
  state.approval_id = event.approval_id
  state.thread_id = params.threadId
  state.todos = vim.deepcopy(event.todos or {})
  render() -- in place if the float is open; announced like any approval, never focused
end

---@param params invincat.EventParams
function M.on_resolved(params)
  if params.event.approval_id ~= state.approval_id then
    return
  end
  local decision = params.event.decision
  state.phase = decision == "approve" and "executing" or decision == "refine" and "refining" or "rejected"
  state.approval_id = nil
  render()
end

---@param params invincat.EventParams
function M.on_todos(params)
  if state.phase == "planning" and state.thread_id == nil then
    state.thread_id = params.threadId -- the first event of a plan on a new thread
  end
  if state.phase == "idle" or params.threadId ~= state.thread_id then
    return
  end
  state.todos = vim.deepcopy(params.event.items or {})
  render()
end

---@param params invincat.EventParams
function M.on_turn_end(params)
  if state.phase == "idle" or params.threadId ~= state.thread_id then
    return
  end
  if state.phase ~= "rejected" then
    state.phase = "done"
  end
  state.outcome = params.event.status
  state.approval_id = nil
  render()
end

return M
