--- `:Invincat rewind`: undo turns of the chat's thread (docs/rewind.md). Lists its turns
--- (`invincat/checkpoints/list`) with |vim.ui.select()|, shows what going back to before
--- the chosen one changes (`invincat/checkpoints/diff`) in a float, asks files /
--- conversation / both, then by name about each file changed since Invincat wrote it,
--- and rewinds (`invincat/checkpoints/restore`). Open files are restored in their buffers
--- by the server (`workspace/applyEdit`: `u` undoes it, `:w` saves it); the others on disk.
local invincat = require("invincat")
local protocol = require("invincat.protocol")
local ui = require("invincat.ui")

local M = {}

---@class invincat.RewindState
---@field float integer? the diff float's window
---@field buf integer? its buffer
---@field last table? the last restore's result (for tests and integrations)
local state = {}

--- The dialogue's state, for tests and integrations.
---@return invincat.RewindState
function M.state()
  return state
end

--- Text from the server on one line (a prompt or a path may hold control characters).
---@param text any
---@return string
local function flat(text)
  return (tostring(text or ""):gsub("%c", " "))
end

--- One turn as the picker shows it.
---@param turn {turn: integer, prompt: string, files: string[]}
---@return string
function M.turn_label(turn)
  local files = #turn.files > 0 and table.concat(vim.tbl_map(flat, turn.files), ", ") or "no files changed"
  return ("%d. %s  [%s]"):format(turn.turn, flat(turn.prompt), files)
end

--- The lines of the diff float for a `invincat/checkpoints/diff` result.
---@param plan table
---@return string[]
function M.plan_lines(plan)
  local lines = {}
  local target = plan.undo and "Undo the last rewind" or ("Back to before turn %d"):format(plan.to_turn)
  table.insert(lines, target)
  if #plan.files == 0 then
    table.insert(lines, "No file differs from that point: nothing to restore.")
  end
  for _, file in ipairs(plan.files) do
    local notes = {}
    if file.in_editor then
      table.insert(notes, "in its buffer")
    end
    if file.changed_by_hand then
      table.insert(notes, "changed since Invincat wrote it")
    end
    local note = #notes > 0 and ("  (" .. table.concat(notes, "; ") .. ")") or ""
    table.insert(lines, ("  %-6s %s%s"):format(file.action, flat(file.path), note))
  end
  for _, file in ipairs(plan.files) do
    if file.problem ~= nil and file.problem ~= vim.NIL then
      table.insert(lines, ("! %s: %s"):format(flat(file.path), flat(file.problem)))
    elseif file.diff ~= "" then
      local diff = file.diff:gsub("\n$", "")
      vim.list_extend(lines, vim.split(diff, "\n", { plain = true }))
    end
  end
  for _, problem in ipairs(plan.problems or {}) do
    table.insert(lines, "! " .. flat(problem))
  end
  return lines
end

local function close_float()
  if state.float and vim.api.nvim_win_is_valid(state.float) then
    vim.api.nvim_win_close(state.float, true)
  end
  state.float = nil
end

---@param plan table
local function show_plan(plan)
  close_float()
  if not (state.buf and vim.api.nvim_buf_is_valid(state.buf)) then
    state.buf = ui.scratch_buffer("invincat://rewind", "diff")
    vim.keymap.set("n", "q", close_float, { buffer = state.buf, nowait = true, silent = true })
  end
  ui.set_lines(state.buf, M.plan_lines(plan))
  -- Not entered: the questions that follow are asked over it.
  state.float = ui.open_float(state.buf, 0.8, 0.7, "Invincat rewind", false)
end

--- The restore's outcome as one message (and its level).
---@param done table
---@return string, integer
function M.summary(done)
  local parts = { ("restored %d file(s)"):format(#done.restored) }
  if #done.skipped > 0 then
    table.insert(parts, "kept " .. table.concat(vim.tbl_map(flat, done.skipped), ", "))
  end
  local conversation = done.conversation_removed
  if conversation ~= nil and conversation ~= vim.NIL then
    table.insert(parts, ("the thread forgot %d message(s)"):format(conversation))
  end
  local level = vim.log.levels.INFO
  for path, why in pairs(done.failed or {}) do
    table.insert(parts, ("could not restore %s: %s"):format(flat(path), flat(why)))
    level = vim.log.levels.WARN
  end
  return table.concat(parts, "; "), level
end

--- Ask by name about each conflicting file in turn; `done(names to overwrite)`.
---@param conflicts string[]
---@param done fun(overwrite: string[])
local function ask_conflicts(conflicts, done)
  local overwrite = {}
  local function ask(i)
    if i > #conflicts then
      return done(overwrite)
    end
    local path = conflicts[i]
    vim.ui.select({ "Keep", "Overwrite" }, {
      prompt = ("%s changed since Invincat wrote it; overwrite it?"):format(flat(path)),
      kind = "invincat.rewind_conflict",
    }, function(choice)
      if choice == "Overwrite" then
        table.insert(overwrite, path)
      end
      ask(i + 1)
    end)
  end
  ask(1)
end

---@param params table the diff's params (threadId, toTurn | undo)
---@param scope string
---@param overwrite string[]
local function restore(params, scope, overwrite)
  local request = vim.tbl_extend("force", params, { scope = scope, overwrite = overwrite })
  invincat.request(protocol.CHECKPOINTS_RESTORE, request, function(err, done)
    close_float()
    if err then
      invincat.notify(err.message, vim.log.levels.ERROR)
      return
    end
    state.last = done
    local message, level = M.summary(done)
    invincat.notify(message, level)
    local removed = done.conversation_removed
    if removed ~= nil and removed ~= vim.NIL then
      -- The thread forgot those turns: show what it holds now.
      local chat = require("invincat.chat")
      local folder = chat.folder_of_thread(params.threadId)
      require("invincat.threads").load(params.threadId, folder and vim.uri_to_fname(folder.uri) or nil)
    end
  end)
end

local SCOPES = {
  { label = "Files and conversation", scope = "both" },
  { label = "Files only", scope = "code" },
  { label = "Conversation only", scope = "conversation" },
}

--- Show the plan, ask the scope and the conflicts, restore.
---@param params table threadId and toTurn, or undo = true
local function plan_and_ask(params)
  invincat.request(protocol.CHECKPOINTS_DIFF, params, function(err, plan)
    if err then
      invincat.notify(err.message, vim.log.levels.ERROR)
      return
    end
    show_plan(plan)
    local choices = params.undo and { SCOPES[2] } or SCOPES
    vim.ui.select(choices, {
      prompt = "Rewind what?",
      kind = "invincat.rewind_scope",
      format_item = function(item)
        return item.label
      end,
    }, function(choice)
      if not choice then
        close_float()
        return
      end
      if choice.scope == "conversation" then
        return restore(params, choice.scope, {})
      end
      ask_conflicts(plan.conflicts or {}, function(overwrite)
        restore(params, choice.scope, overwrite)
      end)
    end)
  end)
end

--- `:Invincat rewind`: pick a turn of the chat's thread (or undo the last rewind).
function M.pick()
  local chat = require("invincat.chat")
  local thread = chat.thread_id()
  if not thread then
    invincat.notify("no thread to rewind: chat first, or pick one with :Invincat threads", vim.log.levels.WARN)
    return
  end
  if chat.status() ~= "" then
    invincat.notify("a turn is still running; wait for it or :Invincat cancel", vim.log.levels.WARN)
    return
  end
  invincat.request(protocol.CHECKPOINTS_LIST, { threadId = thread }, function(err, found)
    if err then
      invincat.notify(err.message, vim.log.levels.ERROR)
      return
    end
    local items = {}
    for _, turn in ipairs(found.turns or {}) do
      table.insert(items, { label = M.turn_label(turn), params = { threadId = thread, toTurn = turn.turn } })
    end
    if #(found.rewinds or {}) > 0 then
      table.insert(items, { label = "Undo the last rewind", params = { threadId = thread, undo = true } })
    end
    for _, problem in ipairs(found.problems or {}) do
      invincat.notify(flat(problem), vim.log.levels.WARN)
    end
    if #items == 0 then
      invincat.notify("this thread has no turns to rewind yet")
      return
    end
    vim.ui.select(items, {
      prompt = "Rewind to before which turn?",
      kind = "invincat.rewind_turn",
      format_item = function(item)
        return item.label
      end,
    }, function(choice)
      if choice then
        plan_and_ask(choice.params)
      end
    end)
  end)
end

return M
