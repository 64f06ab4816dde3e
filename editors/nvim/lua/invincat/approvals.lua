--- Approvals: the decision prompt (with the diff tab of a proposed file edit), decisions
--- on the approval under the cursor, and approvals left pending by an earlier session.
---
--- Every approval can be decided from several places — this prompt, the chat line, the
--- code actions on the edited range (`vim.lsp.buf.code_action()`), the diff tab, another
--- editor — and the server lets the first decision win; the others are told why not.
local diff = require("invincat.diff")
local invincat = require("invincat")
local protocol = require("invincat.protocol")

local M = {}

---@class invincat.Approval
---@field id string
---@field event table The `approval_requested` event.
---@field thread_id string
---@field turn_id string
---@field diff_tab? integer Tab page of the diff view, while it is open.

---@type table<string, invincat.Approval>
local pending = {}
---@type string[]
local prompt_queue = {}
local prompting = false

--- Pending approvals by id.
---@return table<string, invincat.Approval>
function M.pending()
  return pending
end

---@param event table
---@return boolean
local function is_file_edit(event)
  return event.kind == "tool" and type(event.path) == "string" and (event.proposed_text ~= nil or event.diff ~= nil)
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

--- Decide an approval: "reject" asks for an optional message for the agent first.
---@param id string
---@param decision "approve"|"reject"
---@param on_done? fun() Called once the decision was sent or abandoned.
function M.decide(id, decision, on_done)
  on_done = on_done or function() end
  if decision ~= "reject" then
    M.resolve(id, decision)
    return on_done()
  end
  vim.ui.input({ prompt = "Why? (optional, told to the agent): " }, function(message)
    if message ~= nil then -- nil: cancelled, the approval stays pending
      M.resolve(id, "reject", { message = message ~= "" and message or nil })
    end
    on_done()
  end)
end

---@param approval invincat.Approval
---@param done fun()
local function ask_questions(approval, done)
  local questions = approval.event.questions or {}
  local answers = {}
  local function ask(i)
    local question = questions[i]
    if not question then
      M.resolve(approval.id, "answer", { answers = answers })
      return done()
    end
    local function take(answer)
      if answer == nil then
        return done() -- dismissed: still pending (`:Invincat approve|reject`, or <CR> in the chat)
      end
      answers[i] = answer
      ask(i + 1)
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

---@param approval invincat.Approval
---@param done fun()
local function ask_tool(approval, done)
  local event = approval.event
  if is_file_edit(event) and invincat.config.approvals.diff then
    diff.open(approval, M.decide)
  end
  -- The default vim.ui.select blocks in a prompt: show the diff and the chat line first.
  vim.cmd.redraw()
  local items = { { label = "Approve", decision = "approve" } }
  for _, option in ipairs(event.always_options or {}) do
    table.insert(items, { label = "Approve always: " .. option.label, decision = "approve_always", scope = option.scope })
  end
  table.insert(items, { label = "Reject", decision = "reject" })
  table.insert(items, { label = "Edit arguments", decision = "edit" })
  local title = event.description or event.tool_name or "approval"
  vim.ui.select(items, {
    prompt = "Invincat: " .. title,
    kind = "invincat.approval",
    format_item = function(item)
      return item.label
    end,
  }, function(choice)
    if not choice then
      -- Dismissed: it stays pending (diff tab, code actions, chat line, :Invincat approve).
      return done()
    end
    if choice.decision == "reject" then
      return M.decide(approval.id, "reject", done)
    elseif choice.decision == "edit" then
      vim.ui.input({ prompt = "Arguments (JSON): ", default = vim.json.encode(event.args or {}) }, function(text)
        local ok, args = pcall(vim.json.decode, text or "")
        if text and ok and type(args) == "table" then
          M.resolve(approval.id, "edit", { editedArgs = args })
        elseif text then
          invincat.notify("not a JSON object; the approval is still pending", vim.log.levels.WARN)
        end
        done()
      end)
      return
    else
      M.resolve(approval.id, choice.decision, choice.scope and { scope = choice.scope } or nil)
    end
    done()
  end)
end

local function next_prompt()
  if prompting then
    return
  end
  local id = table.remove(prompt_queue, 1)
  while id and not pending[id] do
    id = table.remove(prompt_queue, 1)
  end
  if not id then
    return
  end
  prompting = true
  local function done()
    prompting = false
    vim.schedule(next_prompt)
  end
  local approval = pending[id]
  if approval.event.kind == "plan" then
    require("invincat.plan").show()
    done()
  elseif approval.event.kind == "question" then
    ask_questions(approval, done)
  else
    ask_tool(approval, done)
  end
end

--- Ask for a decision (one prompt at a time; parallel tool calls queue up).
---@param id string
function M.prompt(id)
  if not pending[id] then
    invincat.notify("that approval was already decided")
    return
  end
  table.insert(prompt_queue, id)
  vim.schedule(next_prompt)
end

---@param params invincat.EventParams
function M.on_requested(params)
  local event = params.event
  pending[event.approval_id] = {
    id = event.approval_id,
    event = event,
    thread_id = params.threadId,
    turn_id = params.turnId,
  }
  if event.kind == "plan" then
    require("invincat.plan").on_requested(params)
  elseif invincat.config.approvals.prompt then
    M.prompt(event.approval_id)
  end
end

--- Drop a decided (or closed) approval and its diff tab.
---@param id string
function M.forget(id)
  local approval = pending[id]
  if approval then
    pending[id] = nil
    diff.close(approval)
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
        pending[event.approval_id] = { id = event.approval_id, event = event, thread_id = event.thread_id }
        table.insert(restored, event)
      end
    end
    if #restored > 0 then
      require("invincat.chat").show_restored(restored)
      invincat.notify(
        ("%d approval(s) pending from an earlier session; :Invincat chat shows them, :Invincat approve / reject decide"):format(
          #restored
        ),
        vim.log.levels.WARN
      )
    end
  end)
end

--- The approval the cursor is on: a chat line, the plan float, a diff tab, or a pending
--- edit's diagnostic in a file buffer.
---@return string?
function M.at_cursor()
  local id = require("invincat.chat").approval_at_cursor() or require("invincat.plan").approval_at_cursor()
  if id then
    return id
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
