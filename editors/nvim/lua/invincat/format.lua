--- How events and history read in the chat: one-line summaries of tool calls, results
--- and approvals (pure functions, shared by the chat buffer and the thread history).
local M = {}

---@param value any
---@param limit integer
---@return string
function M.one_line(value, limit)
  local text = type(value) == "string" and value or vim.json.encode(value)
  text = text:gsub("%s+", " ")
  if #text > limit then
    text = text:sub(1, limit - 1) .. "…"
  end
  return text
end

---@param name string
---@param args table?
---@return string
function M.describe_call(name, args)
  args = type(args) == "table" and args or {}
  if type(args.todos) == "table" then
    return ("%s  (%d items)"):format(name, #args.todos) -- write_todos, approve_plan
  end
  local first_question = type(args.questions) == "table" and type(args.questions[1]) == "table" and args.questions[1].question
  local subject = args.path or args.command or args.pattern or args.url or args.description or first_question
  if subject == nil and next(args) ~= nil then
    subject = M.one_line(args, 80)
  end
  return subject and (name .. "  " .. M.one_line(subject, 100)) or name
end

M.RESULT_ICONS = { success = "✓", error = "✗", rejected = "⊘" }

---@param event table
---@return string
function M.approval_line(event)
  if event.kind == "plan" then
    return ("  ⚠ Plan proposed (%d steps) — pending"):format(#(event.todos or {}))
  elseif event.kind == "question" then
    local first = (event.questions or {})[1] or {}
    return "  ? " .. M.one_line(first.question or "The agent asks a question", 100) .. " — pending"
  end
  return "  ⚠ " .. M.one_line(event.description or event.tool_name or "Approval", 100) .. " — pending"
end

M.DECIDED = {
  approve = "approved",
  approve_always = "approved (always)",
  reject = "rejected",
  edit = "approved with edited arguments",
  refine = "refinement requested",
  answer = "answered",
}

return M
