--- How events and history read in the chat: tool lines (the server computes their
--- summaries) and approvals (pure functions, shared by the chat buffer and the thread history).
local M = {}

--- "1 approval", "2 approvals": a count with its noun in the right number.
---@param n integer
---@param singular string
---@param plural? string default `singular .. "s"`
---@return string
function M.count(n, singular, plural)
  return ("%d %s"):format(n, n == 1 and singular or (plural or singular .. "s"))
end

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

--- The line for a tool call: the server's `summary` ("Read src/app.py"), or the tool
--- name from an older server that sends none.
---@param call table a `tool_call` event or a history message's tool call
---@return string
function M.call_line(call)
  local summary = type(call.summary) == "string" and call.summary ~= "" and call.summary or nil
  return summary or call.name or "?"
end

--- The text of a tool result: the server's `summary`, or the content's first line.
---@param result table a `tool_result` event or a history `tool` message
---@param content string?
---@return string
function M.result_text(result, content)
  if type(result.summary) == "string" and result.summary ~= "" then
    return result.summary
  end
  return M.one_line(vim.split(content or "", "\n", { plain = true })[1] or "", 120)
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
  reject_always = "rejected (always, this session)",
  ["reject_always (session)"] = "rejected (always, this session)",
  edit = "approved with edited arguments",
  refine = "refinement requested",
  answer = "answered",
}

return M
