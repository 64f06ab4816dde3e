--- Saved threads: pick one of this workspace with `vim.ui.select` and show its history in
--- the chat buffer; the next prompt continues it.
local format = require("invincat.format")
local invincat = require("invincat")
local protocol = require("invincat.protocol")

local M = {}

--- Transcript lines for `invincat/threads/history` messages.
---@param messages table[]
---@return {[1]: string, [2]: string?}[]
function M.transcript(messages)
  local lines = {}
  local function add(text, hl)
    table.insert(lines, { text, hl })
  end
  for _, message in ipairs(messages) do
    local content = type(message.content) == "string" and message.content or ""
    if message.role == "user" then
      add("## You", "InvincatHeader")
      for _, line in ipairs(vim.split(content, "\n", { plain = true })) do
        add(line)
      end
      add("")
    elseif message.role == "assistant" then
      if content ~= "" then
        add("## Invincat", "InvincatHeader")
        for _, line in ipairs(vim.split(content, "\n", { plain = true })) do
          add(line)
        end
      end
      for _, call in ipairs(message.tool_calls or {}) do
        add("  ⚙ " .. format.call_line(call), "InvincatTool")
      end
    elseif message.role == "tool" then
      local icon = format.RESULT_ICONS[message.status] or "·"
      add(("  %s %s: %s"):format(icon, message.name or "?", format.result_text(message, content)), "InvincatTool")
    end
  end
  return lines
end

--- Switch the chat to a saved thread and show its history.
---@param thread_id string
---@param workspace? string the project root it ran in (threads/list), so it continues there
function M.load(thread_id, workspace)
  invincat.request(protocol.THREADS_HISTORY, { threadId = thread_id }, function(err, result)
    if err then
      invincat.notify(err.message, vim.log.levels.ERROR)
      return
    end
    local folder = invincat.folder_of_workspace(workspace)
    require("invincat.chat").replace(thread_id, M.transcript(result.messages or {}), folder)
  end)
end

--- `:Invincat threads`: pick a saved thread of this workspace.
function M.pick()
  if require("invincat.chat").status() ~= "" then
    invincat.notify("a turn is still running; wait for it or :Invincat cancel", vim.log.levels.WARN)
    return
  end
  invincat.request(protocol.THREADS_LIST, {}, function(err, result)
    if err then
      invincat.notify(err.message, vim.log.levels.ERROR)
      return
    end
    local threads = result.threads or {}
    if #threads == 0 then
      invincat.notify("no saved threads in this workspace yet")
      return
    end
    vim.ui.select(threads, {
      prompt = "Invincat thread",
      kind = "invincat.thread",
      format_item = function(thread)
        local label = ("%s  (%s)"):format(thread.title, (thread.updatedAt or ""):sub(1, 16))
        -- Several workspace folders: threads/list has every project's; say whose.
        local folder = #invincat.folders() > 1 and invincat.folder_of_workspace(thread.workspace)
        return folder and ("%s  [%s]"):format(label, folder.name) or label
      end,
    }, function(choice)
      if choice then
        M.load(choice.threadId, choice.workspace)
      end
    end)
  end)
end

return M
