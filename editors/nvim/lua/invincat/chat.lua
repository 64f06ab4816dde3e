--- The chat buffer: prompts, the streamed answer, tool-call lines, approvals and status.
---
--- One buffer (`invincat://chat`) holds the conversation of the current thread. Events of
--- every turn are rendered into it, even while no window shows it, so opening it later
--- shows what happened.
local context = require("invincat.context")
local invincat = require("invincat")
local format = require("invincat.format")
local protocol = require("invincat.protocol")
local ui = require("invincat.ui")

local M = {}

local ns = vim.api.nvim_create_namespace("invincat.chat")
local approvals_ns = vim.api.nvim_create_namespace("invincat.chat.approvals")

---@class invincat.ChatState
---@field buf integer?
---@field win integer?
---@field thread_id string?
---@field thread_folder invincat.Folder? The workspace folder the thread is in (it continues there).
---@field turn_id string?
---@field running boolean
---@field waiting integer Approvals of the running turn still undecided.
---@field text_open boolean The last line is assistant text still being streamed.
---@field marks table<string, integer> approval id → extmark on its line
---@field usage string?
local state = {
  running = false,
  waiting = 0,
  text_open = false,
  marks = {},
}

for name, link in pairs({
  InvincatHeader = "Title",
  InvincatTool = "Comment",
  InvincatApproval = "DiagnosticWarn",
  InvincatResolved = "DiagnosticOk",
  InvincatError = "DiagnosticError",
  InvincatStatus = "Comment",
}) do
  vim.api.nvim_set_hl(0, name, { link = link, default = true })
end

local HINT = "i ask · c compose (multi-line) · <CR> open the approval under the cursor · <C-c> cancel · q close"
--- Shown after a pending approval's line: how to decide it.
local APPROVAL_HINT = { { "  ← :Invincat approvals", "InvincatStatus" } }

--- The current thread id (nil before the first prompt).
---@return string?
function M.thread_id()
  return state.thread_id
end

--- The workspace folder of a thread, when it is the chat's thread and its folder is known.
---@param thread_id string
---@return invincat.Folder?
function M.folder_of_thread(thread_id)
  return thread_id == state.thread_id and state.thread_folder or nil
end

--- A short status: "working", "waiting for approval", or "" when idle.
---@return string
function M.status()
  if not state.running then
    return ""
  end
  return state.waiting > 0 and "waiting for approval" or "working"
end

local function update_winbar()
  if state.win and vim.api.nvim_win_is_valid(state.win) then
    local status = M.status()
    local thread = state.thread_id and ("  %#InvincatStatus#" .. state.thread_id) or ""
    -- With several workspace folders, which project the thread is in.
    if state.thread_folder and #invincat.folders() > 1 then
      thread = "  %#Directory#" .. state.thread_folder.name:gsub("%%", "%%%%") .. thread
    end
    local extra = status ~= "" and ("  %#DiagnosticInfo#" .. status) or ""
    local usage = state.usage and ("  %#InvincatStatus#" .. state.usage) or ""
    vim.wo[state.win].winbar = "%#InvincatHeader# Invincat" .. thread .. extra .. usage
  end
end

---@param buf integer
local function set_keymaps(buf)
  local function map(lhs, fn, desc)
    vim.keymap.set("n", lhs, fn, { buffer = buf, nowait = true, silent = true, desc = desc })
  end
  map("i", function()
    M.ask()
  end, "Invincat: ask")
  map("<CR>", function()
    local id = M.approval_at_cursor()
    if id then
      require("invincat.approval_view").open(id)
    else
      M.ask()
    end
  end, "Invincat: open the approval under the cursor, or ask")
  map("c", function()
    require("invincat.compose").open()
  end, "Invincat: compose a multi-line prompt")
  map("<C-c>", M.cancel, "Invincat: cancel the running turn")
  map("q", M.close, "Invincat: close the chat window")
end

---@return integer buf
local function ensure_buf()
  if state.buf and vim.api.nvim_buf_is_valid(state.buf) then
    return state.buf
  end
  local buf = ui.scratch_buffer("invincat://chat", "invincat")
  vim.bo[buf].modifiable = false
  set_keymaps(buf)
  state.buf = buf
  state.marks = {}
  state.text_open = false
  return buf
end

---@param buf integer
---@param fn fun()
local function edit(buf, fn)
  vim.bo[buf].modifiable = true
  local ok, err = pcall(fn)
  vim.bo[buf].modifiable = false
  if not ok then
    error(err)
  end
end

local function follow()
  -- Windows whose cursor is on the last line keep following the stream.
  local buf = state.buf
  if not buf then
    return
  end
  local last = vim.api.nvim_buf_line_count(buf)
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    if vim.api.nvim_get_current_win() ~= win or vim.api.nvim_win_get_cursor(win)[1] >= last - 1 then
      vim.api.nvim_win_set_cursor(win, { last, 0 })
    end
  end
end

--- Append lines (a highlight group for all of them optional); returns the first line's row.
---@param lines string[]
---@param hl? string
---@return integer row 0-based row of the first appended line
local function append(lines, hl)
  local buf = ensure_buf()
  local row
  edit(buf, function()
    local count = vim.api.nvim_buf_line_count(buf)
    local empty = count == 1 and vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1] == ""
    row = empty and 0 or count
    vim.api.nvim_buf_set_lines(buf, empty and 0 or -1, -1, false, lines)
  end)
  if hl then
    for i = 0, #lines - 1 do
      vim.api.nvim_buf_set_extmark(buf, ns, row + i, 0, { line_hl_group = hl })
    end
  end
  state.text_open = false
  follow()
  return row
end

--- Append streamed assistant text to the last line (starting one if needed).
---@param text string
local function append_text(text)
  local buf = ensure_buf()
  if not state.text_open then
    append({ "" })
  end
  edit(buf, function()
    local last = vim.api.nvim_buf_line_count(buf) - 1
    local col = #vim.api.nvim_buf_get_lines(buf, last, last + 1, false)[1]
    vim.api.nvim_buf_set_text(buf, last, col, last, col, vim.split(text, "\n", { plain = true }))
  end)
  state.text_open = true
  follow()
end

---@param id string
---@param outcome string
local function settle_approval_line(id, outcome)
  local mark = state.marks[id]
  local buf = state.buf
  if not (mark and buf and vim.api.nvim_buf_is_valid(buf)) then
    return
  end
  local pos = vim.api.nvim_buf_get_extmark_by_id(buf, approvals_ns, mark, {})
  if not pos[1] then
    return
  end
  local line = vim.api.nvim_buf_get_lines(buf, pos[1], pos[1] + 1, false)[1] or ""
  local text = line:gsub(" — pending$", " — " .. outcome)
  edit(buf, function()
    vim.api.nvim_buf_set_lines(buf, pos[1], pos[1] + 1, false, { text })
  end)
  vim.api.nvim_buf_set_extmark(buf, ns, pos[1], 0, { line_hl_group = "InvincatResolved" })
  state.marks[id] = nil
  vim.api.nvim_buf_del_extmark(buf, approvals_ns, mark)
end

--- Render one `invincat/event` notification.
---@param params invincat.EventParams
function M.on_event(params)
  local event = params.event
  local kind = event.type
  if kind == "turn_start" then
    state.thread_id = state.thread_id or params.threadId
    state.turn_id = params.turnId
    state.running = true
    state.waiting = 0
  elseif kind == "message_delta" then
    append_text(event.text or "")
  elseif kind == "tool_call" then
    local indent = string.rep("  ", (event.depth or 0) + 1)
    append({ indent .. "⚙ " .. format.call_line(event) }, "InvincatTool")
  elseif kind == "tool_result" then
    local indent = string.rep("  ", (event.depth or 0) + 1)
    local icon = format.RESULT_ICONS[event.status] or "·"
    local hl = event.status == "success" and "InvincatTool" or "InvincatError"
    append({ ("%s%s %s: %s"):format(indent, icon, event.name or "?", format.result_text(event, event.content)) }, hl)
  elseif kind == "approval_requested" then
    local row = append({ format.approval_line(event) }, "InvincatApproval")
    state.marks[event.approval_id] =
      vim.api.nvim_buf_set_extmark(state.buf, approvals_ns, row, 0, { virt_text = APPROVAL_HINT })
    state.waiting = state.waiting + 1
  elseif kind == "approval_resolved" then
    if state.marks[event.approval_id] then
      settle_approval_line(event.approval_id, format.DECIDED[event.decision] or event.decision or "decided")
      state.waiting = math.max(0, state.waiting - 1)
    end
  elseif kind == "todos" then
    local items = event.items or {}
    local done, current = 0, nil
    for _, item in ipairs(items) do
      done = done + (item.status == "completed" and 1 or 0)
      current = current or (item.status == "in_progress" and item.content or nil)
    end
    local suffix = current and ("  — " .. format.one_line(current, 80)) or ""
    append({ ("  ▤ todos %d/%d done%s"):format(done, #items, suffix) }, "InvincatTool")
  elseif kind == "memory_changed" then
    append({ ("  ⟳ memory updated (%s)"):format(event.scope or "?") }, "InvincatTool")
  elseif kind == "context_usage" then
    state.usage = event.limit and ("%d/%d tokens"):format(event.tokens or 0, event.limit) or nil
  elseif kind == "error" then
    append({ "  ✗ " .. (event.message or "error") }, "InvincatError")
  elseif kind == "turn_end" then
    for id in pairs(state.marks) do
      settle_approval_line(id, "closed")
    end
    state.running = false
    state.waiting = 0
    append({ ("  — turn %s —"):format(event.status or "ended"), "" }, "InvincatStatus")
  end
  update_winbar()
end

--- Mark an approval's line as decided (also done by its `approval_resolved` event).
---@param id string
---@param decision string
function M.settle(id, decision)
  if state.marks[id] then
    settle_approval_line(id, format.DECIDED[decision] or decision)
    state.waiting = math.max(0, state.waiting - 1)
    update_winbar()
  end
end

--- Show approvals left pending by an earlier server (they survive restarts).
---@param events table[] `approval_requested` events
function M.show_restored(events)
  append({ ("── %s pending from an earlier session ──"):format(format.count(#events, "approval")) }, "InvincatStatus")
  for _, event in ipairs(events) do
    local row = append({ format.approval_line(event) }, "InvincatApproval")
    state.marks[event.approval_id] =
      vim.api.nvim_buf_set_extmark(state.buf, approvals_ns, row, 0, { virt_text = APPROVAL_HINT })
  end
  append({ "" })
end

--- The approval whose line is under the cursor in the chat window, if any.
---@return string?
function M.approval_at_cursor()
  local buf = vim.api.nvim_get_current_buf()
  if buf ~= state.buf then
    return nil
  end
  local row = vim.api.nvim_win_get_cursor(0)[1] - 1
  local marks = vim.api.nvim_buf_get_extmarks(buf, approvals_ns, { row, 0 }, { row, -1 }, {})
  for id, mark in pairs(state.marks) do
    for _, found in ipairs(marks) do
      if found[1] == mark then
        return id
      end
    end
  end
end

--- Show the chat buffer in a window (a split or a float, see `chat.layout`).
function M.show()
  local buf = ensure_buf()
  if state.win and vim.api.nvim_win_is_valid(state.win) and vim.api.nvim_win_get_buf(state.win) == buf then
    vim.api.nvim_set_current_win(state.win)
    return
  end
  local cfg = invincat.config.chat
  if cfg.layout == "float" then
    state.win = ui.open_float(buf, 0.7, 0.7, "Invincat")
  else
    state.win = ui.open_split(buf, cfg.position, cfg.position == "bottom" and cfg.height or cfg.width)
  end
  vim.wo[state.win].wrap = true
  vim.wo[state.win].linebreak = true
  if vim.api.nvim_buf_line_count(buf) == 1 and vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1] == "" then
    append({ "Invincat — " .. HINT, "" }, "InvincatStatus")
  end
  update_winbar()
  follow()
end

--- Open the chat; with a prompt, send it on the current thread with the context of the
--- window the command ran in (`range`: lines sent as the selection).
--- `snapshot`: a context taken earlier (the compose buffer's), instead of the current window's.
---@param opts? { prompt?: string, mode?: "agent"|"plan", range?: {[1]: integer, [2]: integer}, snapshot?: invincat.ContextSnapshot }
function M.open(opts)
  opts = opts or {}
  -- Taken before the chat takes focus.
  local snapshot = opts.snapshot or (opts.prompt and context.capture(opts.range)) or nil
  M.show()
  -- At once, so approvals left pending by an earlier session are listed.
  local _, problem = invincat.start()
  if problem and not opts.prompt then
    append({ "  ✗ " .. problem, "" }, "InvincatError")
    invincat.notify(problem, vim.log.levels.ERROR)
  end
  if opts.prompt then
    M.send(opts.prompt, opts.mode, snapshot)
  end
end

--- Close the chat window (the conversation is kept).
function M.close()
  if state.win and vim.api.nvim_win_is_valid(state.win) then
    if #vim.api.nvim_list_wins() > 1 then
      vim.api.nvim_win_close(state.win, false)
    end
  end
  state.win = nil
end

--- Ask for a prompt with `vim.ui.input` and send it (with the context of the file window
--- the chat was opened from).
function M.ask()
  local snapshot = context.capture()
  vim.ui.input({ prompt = "Invincat: " }, function(input)
    if input and vim.trim(input) ~= "" then
      M.send(input, nil, snapshot)
    end
  end)
end

--- Start a turn on the current thread (a new thread before the first prompt).
---@param prompt string
---@param mode? "agent"|"plan"
---@param snapshot? invincat.ContextSnapshot the editor context (`context.capture()`)
function M.send(prompt, mode, snapshot)
  if state.running then
    invincat.notify("a turn is still running; wait for it or :Invincat cancel", vim.log.levels.WARN)
    return
  end
  local lines = { "## You" }
  vim.list_extend(lines, vim.split(prompt, "\n", { plain = true }))
  vim.list_extend(lines, { "", mode == "plan" and "## Invincat (plan)" or "## Invincat" })
  local row = append(lines)
  vim.api.nvim_buf_set_extmark(state.buf, ns, row, 0, { line_hl_group = "InvincatHeader" })
  vim.api.nvim_buf_set_extmark(state.buf, ns, row + #lines - 1, 0, { line_hl_group = "InvincatHeader" })
  state.running = true
  update_winbar()
  local params = { prompt = prompt, threadId = state.thread_id, mode = mode or "agent" }
  local folder ---@type invincat.Folder?
  local function on_answer(err, result)
    if err then
      state.running = false
      append({ "  ✗ " .. err.message, "" }, "InvincatError")
      invincat.notify(err.message, vim.log.levels.ERROR)
      update_winbar()
      return
    end
    state.thread_id = result.threadId
    state.thread_folder = state.thread_folder or folder
    state.turn_id = result.turnId
    update_winbar()
  end
  -- Positions are encoded once the client has negotiated its position encoding.
  invincat.with_client(function(client)
    folder, snapshot = M.route(client, snapshot)
    params.folder = folder and folder.uri or nil
    params.context = context.encode(snapshot, client.offset_encoding)
    invincat.request(protocol.CHAT, params, on_answer)
  end, function(problem)
    on_answer({ code = invincat.NOT_SENT, message = problem }, nil)
  end)
end

--- The workspace folder a prompt goes to, and the context that may go with it: a thread
--- continues in its project; a new one goes to the folder of the file the command came
--- from, else the first folder. A file of another project than the thread's is left out
--- (the server would refuse it), with a word why.
---@param client vim.lsp.Client
---@param snapshot? invincat.ContextSnapshot
---@return invincat.Folder? folder
---@return invincat.ContextSnapshot? snapshot
function M.route(client, snapshot)
  invincat.join(client, snapshot and snapshot.buf) -- a file of a new root: its folder first
  local of_file = snapshot and invincat.folder_of(snapshot.buf) or nil
  if state.thread_id and state.thread_folder then
    if snapshot and #invincat.folders() > 1 and (not of_file or of_file.uri ~= state.thread_folder.uri) then
      invincat.notify(
        ("this thread is in %s; the context of %s is left out (:Invincat new starts a thread there)"):format(
          state.thread_folder.name,
          vim.fn.fnamemodify(vim.api.nvim_buf_get_name(snapshot.buf), ":~:.")
        )
      )
      snapshot = nil
    end
    return state.thread_folder, snapshot
  end
  if state.thread_id then
    return nil, snapshot -- a thread of unknown folder: the server routes it by its id
  end
  return of_file or invincat.folders()[1], snapshot
end

--- Cancel the running turn.
function M.cancel()
  if not (state.running and state.turn_id) then
    invincat.notify("no turn is running")
    return
  end
  invincat.request(protocol.CANCEL, { turnId = state.turn_id }, function(err, result)
    if err then
      invincat.notify(err.message, vim.log.levels.ERROR)
    elseif not result.cancelled then
      invincat.notify("the turn had already ended")
    end
  end)
end

--- Forget the current thread: the next prompt starts a new one.
function M.new_thread()
  if state.running then
    invincat.notify("a turn is still running; wait for it or :Invincat cancel", vim.log.levels.WARN)
    return
  end
  state.thread_id = nil
  state.thread_folder = nil
  if state.buf and vim.api.nvim_buf_is_valid(state.buf) then
    append({ "── new thread ──", "" }, "InvincatStatus")
  end
  update_winbar()
end

--- Replace the transcript with a saved thread's (`lines`: {text, highlight group?} pairs).
---@param thread_id string
---@param lines {[1]: string, [2]: string?}[]
---@param folder? invincat.Folder the workspace folder the thread is in, when known
function M.replace(thread_id, lines, folder)
  local buf = ensure_buf()
  edit(buf, function()
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, {})
  end)
  vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  state.marks = {}
  state.thread_id = thread_id
  state.thread_folder = folder
  for _, line in ipairs(lines) do
    append({ line[1] }, line[2])
  end
  append({ "" })
  M.show()
end

--- The chat buffer (created if needed), for tests and integrations.
---@return integer
function M.buf()
  return ensure_buf()
end

return M
