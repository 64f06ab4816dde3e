--- `invincat/event` notifications: `{threadId, turnId, event}` with a snake_case event
--- (docs/protocol.md, "Events"), routed to the modules that render them.
local M = {}

---@class invincat.EventParams
---@field threadId string
---@field turnId string
---@field event table The core event (`type` plus its fields).

---@param name string
---@param fn function
---@param ... any
local function safely(name, fn, ...)
  -- One renderer failing must not keep the others (or later events) from running.
  local ok, err = pcall(fn, ...)
  if not ok then
    require("invincat").notify(("%s failed to handle an event: %s"):format(name, err), vim.log.levels.ERROR)
  end
end

--- Handle one `invincat/event` notification.
---@param params invincat.EventParams
function M.dispatch(params)
  if type(params) ~= "table" or type(params.event) ~= "table" then
    return
  end
  local chat = require("invincat.chat")
  local approvals = require("invincat.approvals")
  local plan = require("invincat.plan")
  local kind = params.event.type
  safely("chat", chat.on_event, params)
  if kind == "approval_requested" then
    safely("approvals", approvals.on_requested, params)
  elseif kind == "approval_resolved" then
    safely("approvals", approvals.on_resolved, params)
    safely("plan", plan.on_resolved, params)
  elseif kind == "todos" then
    safely("plan", plan.on_todos, params)
  elseif kind == "turn_end" then
    safely("approvals", approvals.on_turn_end, params)
    safely("plan", plan.on_turn_end, params)
  elseif kind == "memory_changed" then
    safely("memory", require("invincat.memory").on_did_change, params.event)
  end
end

return M
