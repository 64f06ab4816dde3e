--- Approvals: what is pending, how an arriving approval is announced, and the decisions.
---
--- An approval that arrives never takes focus or reads keys — keys the user is typing
--- would answer it. It is announced (a chat line with a hint, the chat's winbar, one short
--- message once the user pauses typing) and decided only by an explicit action: the
--- approval view (`:Invincat approvals`, <CR> on its chat line), `:Invincat approve|reject`,
--- the code actions on the edited range, the diff tab, another editor. The server lets the
--- first decision win; the others are told why not.
local attention = require("invincat.attention")
local diff = require("invincat.diff")
local format = require("invincat.format")
local invincat = require("invincat")
local protocol = require("invincat.protocol")

local M = {}

---@class invincat.Approval
---@field id string
---@field event table The `approval_requested` event.
---@field thread_id string
---@field turn_id string
---@field diff_tab? integer Tab page of the diff view, while it is open.
---@field seq integer Arrival order.
---@field announced? boolean

---@type table<string, invincat.Approval>
local pending = {}
local arrivals = 0

--- Pending approvals by id.
---@return table<string, invincat.Approval>
function M.pending()
  return pending
end

--- Pending approvals in the order they arrived.
---@return invincat.Approval[]
function M.list()
  local list = vim.tbl_values(pending)
  table.sort(list, function(a, b)
    return a.seq < b.seq
  end)
  return list
end

---@param event table
---@param thread_id string?
---@param turn_id string?
local function add(event, thread_id, turn_id)
  arrivals = arrivals + 1
  pending[event.approval_id] = {
    id = event.approval_id,
    event = event,
    thread_id = thread_id,
    turn_id = turn_id,
    seq = arrivals,
  }
end

local view = function()
  return require("invincat.approval_view")
end

--- `message`, cut to fit on the command line: a longer message would open a "Press
--- ENTER" prompt, which reads the next key the user types.
---@param message string
---@return string
local function one_screen_line(message)
  local room = math.max(20, vim.v.echospace - #"Invincat: " - 1)
  if vim.fn.strdisplaywidth(message) <= room then
    return message
  end
  return vim.fn.strcharpart(message, 0, room - 1) .. "…"
end

local announcing = false

--- Say once, when the user pauses typing, that approvals are waiting.
local function announce()
  if announcing then
    return
  end
  announcing = true
  attention.when_quiet(function()
    announcing = false
    local list, fresh = M.list(), 0
    for _, approval in ipairs(list) do
      fresh = fresh + (approval.announced and 0 or 1)
      approval.announced = true
    end
    if fresh == 0 then
      return
    end
    local what = #list == 1 and vim.trim(format.approval_line(list[1].event):gsub("^%s*%S+%s*", ""):gsub(" — pending$", ""))
      or format.count(#list, "approval")
    invincat.notify(one_screen_line(what .. " waiting: :Invincat approvals"), vim.log.levels.WARN)
  end)
end

--- Send a decision. `extra` carries `scope`, `message`, `editedArgs`, `feedback`, `answers`.
---@param id string
---@param decision string
---@param extra? table
function M.resolve(id, decision, extra)
  local params = vim.tbl_extend("force", { approvalId = id, decision = decision }, extra or {})
  invincat.request(protocol.RESOLVE_APPROVAL, params, function(err, result)
    if err then
      invincat.notify(err.message, vim.log.levels.ERROR)
    elseif not result.resolved then
      invincat.notify(result.reason or "the decision was not taken", vim.log.levels.WARN)
    elseif pending[id] then
      -- Settled here too: after a restart, a decision that completes no batch yet emits
      -- no approval_resolved event.
      require("invincat.chat").settle(id, decision)
      M.forget(id)
    end
  end)
end

--- Drop keys typed ahead of a prompt: they were meant for what the user saw before it
--- opened (the rest of `gra`, a line of text), never as its answer.
local function discard_typeahead()
  -- getchar(1) can keep reporting a key getchar(0) does not return (inside feedkeys 'x'):
  -- stop at the first key that is not there, and after a bounded number.
  for _ = 1, 10000 do
    if vim.fn.getchar(1) == 0 or vim.fn.getchar(0) == 0 then
      return
    end
  end
end

--- Decide an approval: "reject" and "reject_always" ask for an optional message for the
--- agent first. The prompt names what it rejects (and, for "reject_always", the calls it
--- will reject without asking for the rest of this session) and starts empty: keys typed
--- ahead of it are dropped, so only an Enter the user gives with the prompt in front of
--- them rejects (<Esc> keeps the approval pending).
---@param id string
---@param decision "approve"|"reject"|"reject_always"
---@param on_done? fun() Called once the decision was sent or abandoned.
function M.decide(id, decision, on_done)
  on_done = on_done or function() end
  if decision ~= "reject" and decision ~= "reject_always" then
    M.resolve(id, decision)
    return on_done()
  end
  local approval = pending[id]
  local what = approval and format.approval_line(approval.event):gsub(" — pending$", "") or id
  local deny = approval and approval.event.deny_option
  if decision == "reject_always" and type(deny) ~= "table" then
    invincat.notify("this approval offers no 'reject always'", vim.log.levels.WARN)
    return on_done()
  end
  discard_typeahead()
  local head = decision == "reject_always" and ("%s (%s)"):format(tostring(deny.label), vim.trim(what))
    or ("Reject %s"):format(vim.trim(what))
  local prompt = head .. " — Why? (optional, told to the agent; <Esc> keeps it pending): "
  vim.ui.input({ prompt = prompt }, function(message)
    if message ~= nil then -- nil: cancelled, the approval stays pending
      M.resolve(id, decision, { message = message ~= "" and message or nil })
    end
    on_done()
  end)
end

--- Answer a question approval: each question's options with `vim.ui.select` (plus
--- "Something else…"), or free text with `vim.ui.input`. Dismissing leaves it pending.
---@param approval invincat.Approval
function M.answer(approval)
  local questions = approval.event.questions or {}
  local answers = {}
  local function ask(i)
    local question = questions[i]
    if not question then
      return M.resolve(approval.id, "answer", { answers = answers })
    end
    local function take(answer)
      if answer ~= nil then -- nil: dismissed, still pending
        answers[i] = answer
        ask(i + 1)
      end
    end
    local options = question.options or {}
    if #options == 0 then
      return vim.ui.input({ prompt = question.question .. " " }, take)
    end
    local items = vim.list_extend(vim.deepcopy(options), { "Something else…" })
    vim.ui.select(items, { prompt = question.question, kind = "invincat.question" }, function(choice, idx)
      if idx == #items then
        return vim.ui.input({ prompt = question.question .. " " }, take)
      end
      take(choice)
    end)
  end
  ask(1)
end

--- Approve always: pick the scope (session, workspace) the rule is remembered for.
---@param approval invincat.Approval
function M.approve_always(approval)
  local options = approval.event.always_options or {}
  if #options == 0 then
    invincat.notify("this approval offers no 'approve always'", vim.log.levels.WARN)
    return
  end
  vim.ui.select(options, {
    prompt = "Invincat: approve always — which rule?",
    kind = "invincat.approval_scope",
    format_item = function(option)
      return option.label
    end,
  }, function(option)
    if option then
      M.resolve(approval.id, "approve_always", { scope = option.scope })
    end
  end)
end

--- Run the call with arguments edited as JSON (`vim.ui.input`).
---@param approval invincat.Approval
function M.edit_arguments(approval)
  local current = vim.json.encode(approval.event.args or vim.empty_dict())
  vim.ui.input({ prompt = "Arguments (JSON): ", default = current }, function(text)
    local ok, args = pcall(vim.json.decode, text or "")
    if text and ok and type(args) == "table" then
      M.resolve(approval.id, "edit", { editedArgs = args })
    elseif text then
      invincat.notify("not a JSON object; the approval is still pending", vim.log.levels.WARN)
    end
  end)
end

--- Every decision of a tool approval in one `vim.ui.select` (opened from the approval
--- view's <CR>: an explicit action, never on arrival).
---@param approval invincat.Approval
function M.choose(approval)
  local event = approval.event
  local items = { { label = "Approve", decision = "approve" } }
  for _, option in ipairs(event.always_options or {}) do
    table.insert(items, { label = "Approve always: " .. option.label, decision = "approve_always", scope = option.scope })
  end
  table.insert(items, { label = "Reject", decision = "reject" })
  if type(event.deny_option) == "table" then
    table.insert(items, { label = tostring(event.deny_option.label), decision = "reject_always" })
  end
  table.insert(items, { label = "Edit arguments", decision = "edit" })
  vim.ui.select(items, {
    prompt = "Invincat: " .. (event.description or event.tool_name or "approval"),
    kind = "invincat.approval",
    format_item = function(item)
      return item.label
    end,
  }, function(choice)
    if not choice then
      return -- dismissed: still pending
    elseif choice.decision == "reject" or choice.decision == "reject_always" then
      M.decide(approval.id, choice.decision)
    elseif choice.decision == "edit" then
      M.edit_arguments(approval)
    else
      M.resolve(approval.id, choice.decision, choice.scope and { scope = choice.scope } or nil)
    end
  end)
end

---@param params invincat.EventParams
function M.on_requested(params)
  local event = params.event
  add(event, params.threadId, params.turnId)
  if event.kind == "plan" then
    require("invincat.plan").on_requested(params)
  end
  view().refresh()
  if invincat.config.approvals.notify then
    announce()
  end
end

--- Drop a decided (or closed) approval and its diff tab.
---@param id string
function M.forget(id)
  local approval = pending[id]
  if approval then
    pending[id] = nil
    diff.close(approval)
    require("invincat.preview").close(id)
    view().refresh(id)
  end
end

---@param params invincat.EventParams
function M.on_resolved(params)
  M.forget(params.event.approval_id)
end

---@param params invincat.EventParams
function M.on_turn_end(params)
  -- A cancelled turn closes the approvals it waited for.
  for id, approval in pairs(pending) do
    if approval.turn_id == params.turnId then
      M.forget(id)
    end
  end
end

--- Ask the server for approvals that survived a restart (`invincat/pendingApprovals`) and
--- list them in the chat; they are decided like any other (nothing is prompted at start).
function M.restore_pending()
  invincat.request(protocol.PENDING_APPROVALS, {}, function(err, result)
    if err or type(result) ~= "table" then
      return -- e.g. the model is not configured: the server already said so
    end
    local restored = {}
    for _, event in ipairs(result.approvals or {}) do
      if not pending[event.approval_id] then
        add(event, event.thread_id, nil)
        pending[event.approval_id].announced = true
        table.insert(restored, event)
      end
    end
    if #restored > 0 then
      require("invincat.chat").show_restored(restored)
      view().refresh()
      attention.when_quiet(function()
        local message = format.count(#restored, "approval") .. " pending from an earlier session: :Invincat approvals"
        invincat.notify(one_screen_line(message), vim.log.levels.WARN)
      end)
    end
  end)
end

--- The approval the cursor is on: the approval view, a chat line, the plan float, an
--- inline preview, a diff tab, or a pending edit's diagnostic in a file buffer.
---@return string?
function M.at_cursor()
  local id = view().approval_at_cursor()
    or require("invincat.chat").approval_at_cursor()
    or require("invincat.plan").approval_at_cursor()
  if id then
    return id
  end
  local previewed = require("invincat.preview").approval_in(vim.api.nvim_get_current_buf())
  if previewed and pending[previewed] then
    return previewed
  end
  local ok, tab_id = pcall(vim.api.nvim_tabpage_get_var, 0, "invincat_approval")
  if ok and pending[tab_id] then
    return tab_id
  end
  local row = vim.api.nvim_win_get_cursor(0)[1] - 1
  for _, diagnostic in ipairs(vim.diagnostic.get(0, { lnum = row })) do
    local data = vim.tbl_get(diagnostic, "user_data", "lsp", "data") or {}
    if diagnostic.source == protocol.DIAGNOSTIC_SOURCE and pending[data.approvalId] then
      return data.approvalId
    end
  end
end

--- `:Invincat approve` / `:Invincat reject`: decide the approval under the cursor, else the
--- only pending one, else pick one.
---@param decision "approve"|"reject"
function M.decide_at_cursor(decision)
  local id = M.at_cursor()
  if id then
    return M.decide(id, decision)
  end
  local all = vim.tbl_values(pending)
  if #all == 0 then
    invincat.notify("no approval is pending")
  elseif #all == 1 then
    M.decide(all[1].id, decision)
  else
    vim.ui.select(all, {
      prompt = "Invincat: " .. decision .. " which approval?",
      format_item = function(approval)
        return approval.event.description or approval.event.tool_name or approval.id
      end,
    }, function(choice)
      if choice then
        M.decide(choice.id, decision)
      end
    end)
  end
end

return M
