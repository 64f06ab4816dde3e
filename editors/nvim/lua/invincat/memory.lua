--- The memory sidebar: long-term memory entries by scope → tier, with keys to archive,
--- restore and delete them (through governance: `invincat/memory/apply`, journaled and
--- revertable), and refreshed whenever the server says memory changed
--- (`invincat/memory/didChange`, or a turn's `memory_changed` event). With several
--- workspace folders it shows the project memory of the folder of the buffer it was opened
--- from (requests carry that `folder`).
local invincat = require("invincat")
local protocol = require("invincat.protocol")
local ui = require("invincat.ui")

local M = {}

local ns = vim.api.nvim_create_namespace("invincat.memory")

---@class invincat.MemoryEntry
---@field id string
---@field scope "user"|"project"
---@field section string
---@field content string
---@field status "active"|"archived"
---@field tier "hot"|"warm"|"cold"
---@field score integer
---@field citations? {path: string, start_line: integer, end_line: integer}[]
---@field stale? boolean
---@field verification? {note?: string, citations?: {state: string, current?: table, change?: string}[]}
---@field source? {author?: {name: string, email?: string}, branch?: string}

--- Who proposed the entry (`source.author`, self-asserted: shown, never trusted), or nil.
--- JSON null arrives as vim.NIL, so every field is checked for its type.
---@param entry invincat.MemoryEntry
---@return string? name, string? email, string? branch
local function attribution(entry)
  local source = type(entry.source) == "table" and entry.source or {}
  local author = type(source.author) == "table" and source.author or {}
  local name = type(author.name) == "string" and author.name or nil
  local email = type(author.email) == "string" and author.email or nil
  local branch = type(source.branch) == "string" and source.branch or nil
  return name, email, branch
end

---@class invincat.InstructionFile
---@field source string AGENTS.md, CLAUDE.md, .github/copilot-instructions.md, GEMINI.md
---@field path string relative to the project root
---@field size integer|nil bytes on disk (vim.NIL: not opened)
---@field included integer bytes the model is shown
---@field truncated boolean
---@field skipped string|nil why none of it is shown (vim.NIL: shown)
---@field imported_by string|nil

---@class invincat.MemoryRow
---@field kind "scope"|"tier"|"entry"|"citation"|"instructions"|"instruction"
---@field scope string
---@field tier? string
---@field entry? invincat.MemoryEntry
---@field citation? {path: string, start_line: integer, end_line: integer}
---@field file? invincat.InstructionFile

---@class invincat.MemoryState
---@field buf integer?
---@field win integer?
---@field show_archived boolean
---@field items invincat.MemoryEntry[]
---@field stores table<string, string>
---@field collapsed table<string, boolean> "project" / "project.hot" → folded
---@field rows table<integer, invincat.MemoryRow> 1-based line → what it shows
---@field loaded boolean At least one list answer arrived.
---@field problems table<string, string> scope → why its store is read-only or damaged
---@field invalid {scope: string, index: integer, id: string?, reason: string}[] entries the server skipped (they do not validate)
---@field instructions invincat.InstructionFile[] the project's instruction files: a read-only tier, not memory
---@field source_buf integer? The file buffer `:Invincat memory` was run from: its folder's project is shown.
---@field folder invincat.Folder? The workspace folder whose project memory is shown.
local state = {
  show_archived = false,
  items = {},
  stores = {},
  collapsed = {},
  rows = {},
  loaded = false,
  problems = {},
  invalid = {},
  instructions = {},
}

local SCOPES = { "user", "project" } -- the server's order
local TIERS = { "hot", "warm", "cold" }
--- The key hints under the title: two short lines that fit the default width (48), so no
--- key is cut off; `?` lists every key with what it does.
local HELP = {
  " a archive · u restore · d delete · q close",
  " <CR> open · A archived · R refresh · ? help",
}
--- `?`: every key of the sidebar, one a line.
local FULL_HELP = {
  "a     archive the entry under the cursor (asks for a reason)",
  "u     restore an archived entry",
  "d     delete the entry (asks for a reason)",
  "A     show / hide archived entries",
  "<CR>  fold a scope or tier, show an entry and its history, open a citation",
  "      or an instruction file (AGENTS.md, …: read-only, not memory)",
  "R     refresh from the server",
  "q     close the sidebar",
  "?     this help",
}

--- Where a citation points now: its new place when the text moved, else as recorded.
---@param entry invincat.MemoryEntry
---@param index integer
local function citation_target(entry, index)
  local check = entry.verification and entry.verification.citations and entry.verification.citations[index]
  if check and check.state == "moved" and check.current then
    return check.current
  end
  return entry.citations[index]
end

---@param citation {path: string, start_line: integer, end_line: integer}
local function citation_label(citation)
  if citation.start_line == citation.end_line then
    return ("%s:%d"):format(citation.path, citation.start_line)
  end
  return ("%s:%d-%d"):format(citation.path, citation.start_line, citation.end_line)
end

--- The sidebar's state, for tests and integrations.
---@return invincat.MemoryState
function M.state()
  return state
end

---@param entries invincat.MemoryEntry[]
local function sort(entries)
  table.sort(entries, function(a, b)
    if (a.score or 0) ~= (b.score or 0) then
      return (a.score or 0) > (b.score or 0)
    end
    return a.id < b.id
  end)
end

--- The instruction files, under the scopes and apart from them: the team's AGENTS.md and
--- the like, shown to the model before memory, never changed from here.
---@param add fun(line: string, row: invincat.MemoryRow, virt?: string)
local function add_instructions(add)
  local files = state.instructions
  if #files == 0 then
    return
  end
  local folded = state.collapsed.instructions
  add(
    ("%s instruction files  (%d, read-only)"):format(folded and "▸" or "▾", #files),
    { kind = "instructions", scope = "instructions" }
  )
  if folded then
    return
  end
  for _, file in ipairs(files) do
    -- A JSON null arrives as vim.NIL: only strings count.
    local skipped = type(file.skipped) == "string" and file.skipped or nil
    local by = type(file.imported_by) == "string" and ("  ← " .. file.imported_by) or ""
    local what = skipped
      or (("%d bytes%s"):format(file.included or 0, file.truncated and ", truncated" or ""))
    add(
      ("    %s %s%s"):format(skipped and "⚠" or "▪", tostring(file.path), by),
      { kind = "instruction", scope = "instructions", file = file },
      ("%s · %s"):format(tostring(file.source), what)
    )
  end
end

local function render()
  local buf = state.buf
  if not (buf and vim.api.nvim_buf_is_valid(buf)) then
    return
  end
  local title = " Invincat memory"
  if state.folder and #invincat.folders() > 1 then
    title = title .. " — " .. state.folder.name
  end
  local lines = { title .. (state.show_archived and "  (with archived)" or "") }
  vim.list_extend(lines, HELP)
  table.insert(lines, "")
  for scope, problem in pairs(state.problems) do
    table.insert(lines, #HELP + 2, ("⚠ %s: %s"):format(scope, problem))
  end
  for _, bad in ipairs(state.invalid) do
    -- A JSON null arrives as vim.NIL: the id is shown only when it is a string.
    local id = type(bad.id) == "string" and (" (" .. bad.id .. ")") or ""
    local where = ("%s items[%s]%s"):format(bad.scope, tostring(bad.index), id)
    table.insert(lines, #HELP + 2, ("⚠ %s skipped: %s"):format(where, tostring(bad.reason)))
  end
  local rows = {}
  local marks = {}
  local function add(line, row, virt)
    table.insert(lines, line)
    rows[#lines] = row
    if virt then
      marks[#lines] = virt
    end
  end
  for _, scope in ipairs(SCOPES) do
    local of_scope = vim.tbl_filter(function(item)
      return item.scope == scope
    end, state.items)
    local folded = state.collapsed[scope]
    add(
      ("%s %s  (%d)"):format(folded and "▸" or "▾", scope, #of_scope),
      { kind = "scope", scope = scope },
      state.stores[scope] and vim.fn.fnamemodify(state.stores[scope], ":~") or nil
    )
    if not folded then
      if #of_scope == 0 then
        add(state.loaded and "    (no entries)" or "    (loading…)", { kind = "scope", scope = scope })
      end
      for _, tier in ipairs(TIERS) do
        local of_tier = vim.tbl_filter(function(item)
          return item.tier == tier
        end, of_scope)
        if #of_tier > 0 then
          sort(of_tier)
          local key = scope .. "." .. tier
          add(
            ("  %s %s  (%d)"):format(state.collapsed[key] and "▸" or "▾", tier, #of_tier),
            { kind = "tier", scope = scope, tier = tier }
          )
          if not state.collapsed[key] then
            for _, entry in ipairs(of_tier) do
              local archived = entry.status == "archived"
              add(
                ("    %s [%s] %s%s%s"):format(
                  archived and "○" or "●",
                  entry.section or "",
                  (entry.content or ""):gsub("\n", " "),
                  archived and "  (archived)" or "",
                  entry.stale and "  ⚠ may be stale" or ""
                ),
                { kind = "entry", scope = scope, tier = tier, entry = entry },
                ("%s · %s%s"):format(
                  entry.id,
                  entry.score or "?",
                  attribution(entry) and (" · by " .. attribution(entry)) or ""
                )
              )
              for index in ipairs(entry.citations or {}) do
                local target = citation_target(entry, index)
                local check = entry.verification and entry.verification.citations and entry.verification.citations[index]
                local what = check and check.state ~= "fresh" and (check.state == "moved" and "moved" or check.change)
                add(
                  "      ↳ " .. citation_label(target),
                  { kind = "citation", scope = scope, tier = tier, entry = entry, citation = target },
                  what or nil
                )
              end
            end
          end
        end
      end
    end
  end
  add_instructions(add)
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  vim.api.nvim_buf_set_extmark(buf, ns, 0, 0, { line_hl_group = "Title" })
  for row = 1, #HELP do
    vim.api.nvim_buf_set_extmark(buf, ns, row, 0, { line_hl_group = "Comment" })
  end
  for lnum, text in pairs(marks) do
    vim.api.nvim_buf_set_extmark(buf, ns, lnum - 1, 0, { virt_text = { { text, "Comment" } } })
  end
  state.rows = rows
end

--- `params` with the `folder` of the project shown (once the client runs, so a file of a
--- new root has joined as a workspace folder first).
---@param params table
---@param send fun(params: table)
local function with_folder(params, send)
  invincat.with_client(function(client)
    local buf = state.source_buf
    if buf and vim.api.nvim_buf_is_valid(buf) then
      invincat.join(client, buf)
      state.folder = invincat.folder_of(buf) or state.folder
    end
    state.folder = state.folder or invincat.folders()[1]
    params.folder = state.folder and state.folder.uri or nil
    send(params)
  end, function()
    send(params) -- invincat.request reports that there is no server
  end)
end

---@param params table
---@param on_done? fun()
local function list(params, on_done)
  invincat.request(protocol.MEMORY_LIST, params, function(err, result)
    if err then
      invincat.notify(err.message, vim.log.levels.ERROR)
    else
      state.items = result.items or {}
      state.stores = result.stores or {}
      state.problems = result.problems or {}
      state.invalid = result.invalid_entries or {}
      state.instructions = result.instructions or {}
      state.loaded = true
      render()
    end
    if on_done then
      on_done()
    end
  end)
end

--- Reload the entries from the server.
---@param on_done? fun()
function M.refresh(on_done)
  with_folder({ includeArchived = state.show_archived }, function(params)
    list(params, on_done)
  end)
end

---@return invincat.MemoryRow?
local function row_at_cursor()
  if vim.api.nvim_get_current_buf() ~= state.buf then
    return nil
  end
  return state.rows[vim.api.nvim_win_get_cursor(0)[1]]
end

---@param report table
---@param done_message string
local function report_outcome(report, done_message)
  if report.rejected then
    invincat.notify("memory change refused: " .. (report.reason or "rejected"), vim.log.levels.WARN)
  elseif report.dropped and #report.dropped > 0 then
    invincat.notify("memory change dropped: " .. (report.dropped[1].reason or "?"), vim.log.levels.WARN)
  else
    invincat.notify(done_message)
  end
end

--- Apply one user operation through governance (`invincat/memory/apply`).
---@param entry invincat.MemoryEntry
---@param op "archive"|"restore"|"delete"
---@param reason string
function M.apply(entry, op, reason)
  local operation = { op = op, scope = entry.scope, id = entry.id, reason = reason }
  with_folder({ scope = entry.scope, operations = { operation } }, function(params)
    invincat.request(protocol.MEMORY_APPLY, params, function(err, report)
      if err then
        invincat.notify(err.message, vim.log.levels.ERROR)
        return
      end
      report_outcome(report or {}, ("%sd %s"):format(op, entry.id))
      M.refresh()
    end)
  end)
end

---@param op "archive"|"restore"|"delete"
local function act(op)
  local row = row_at_cursor()
  local entry = row and row.entry
  if not entry then
    invincat.notify("put the cursor on an entry")
    return
  end
  if op == "archive" and entry.status == "archived" then
    return invincat.notify(entry.id .. " is already archived; u restores it")
  elseif op == "restore" and entry.status ~= "archived" then
    return invincat.notify(entry.id .. " is active; only archived entries can be restored")
  end
  local verb = op:sub(1, 1):upper() .. op:sub(2)
  vim.ui.input({ prompt = ("%s %s — reason: "):format(verb, entry.id), default = op .. "d in Neovim" }, function(reason)
    if reason and vim.trim(reason) ~= "" then
      M.apply(entry, op, reason)
    end
  end)
end

---@param entry invincat.MemoryEntry
local function show_entry(entry)
  local function open(lines)
    local buf = ui.scratch_buffer("invincat://memory/" .. entry.id, "invincat-memory-entry", "wipe")
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
    vim.bo[buf].modifiable = false
    local win = ui.open_float(buf, 90, #lines, entry.id)
    vim.keymap.set("n", "q", function()
      vim.api.nvim_win_close(win, true)
    end, { buffer = buf })
  end
  local lines = {
    ("%s  %s  %s  score %s (%s)"):format(entry.id, entry.scope, entry.status, entry.score, entry.tier),
    "[" .. (entry.section or "") .. "] " .. (entry.content or ""),
  }
  local name, email, branch = attribution(entry)
  if name then
    table.insert(
      lines,
      "by " .. name .. (email and (" <" .. email .. ">") or "") .. (branch and (" on " .. branch) or "")
    )
  end
  if entry.stale then
    table.insert(lines, "⚠ " .. ((entry.verification or {}).note or "may be stale: its cited evidence changed"))
  end
  for index in ipairs(entry.citations or {}) do
    table.insert(lines, "cites " .. citation_label(citation_target(entry, index)))
  end
  local params = { id = entry.id, folder = state.folder and state.folder.uri or nil }
  invincat.request(protocol.MEMORY_SHOW, params, function(err, result)
    if not err and type(result) == "table" and type(result.history) == "table" then
      table.insert(lines, "")
      table.insert(lines, "History:")
      for _, record in ipairs(result.history) do
        local ops = {}
        for _, applied in ipairs(record.applied or {}) do
          if applied.id == entry.id then
            table.insert(ops, applied.op)
          end
        end
        table.insert(
          lines,
          ("  %s  %s  %s  %s"):format(record.time or "", record.actor or "", table.concat(ops, ","), record.batch_id or "")
        )
      end
    end
    open(lines)
  end)
end

--- The project root citations are relative to: the project store is
--- `<root>/.invincat/memory_project.json`.
---@return string?
function M.project_root()
  local store = state.stores.project
  return store and vim.fn.fnamemodify(store, ":h:h") or nil
end

--- Open a cited file at its range in the window the sidebar was opened from.
---@param citation {path: string, start_line: integer, end_line: integer}
function M.open_citation(citation)
  local root = M.project_root()
  if not root then
    return invincat.notify("the project store path is unknown; R refreshes", vim.log.levels.WARN)
  end
  -- Only project-relative paths: the project store travels through git, so a citation
  -- could name `../../.ssh/…` or an absolute path (the server marks those stale).
  local p = citation.path
  if p:match("^[/\\]") or p:match("^%a:") or ("/" .. p .. "/"):find("[/\\]%.%.[/\\]") then
    return invincat.notify(citation.path .. " is outside the project; not opened", vim.log.levels.WARN)
  end
  local path = root .. "/" .. citation.path
  if vim.fn.filereadable(path) == 0 then
    return invincat.notify(citation.path .. " no longer exists (the memory may be stale)", vim.log.levels.WARN)
  end
  vim.cmd("wincmd p")
  if vim.api.nvim_get_current_win() == state.win then
    vim.cmd("vsplit")
  end
  vim.cmd("edit " .. vim.fn.fnameescape(path))
  local last = vim.api.nvim_buf_line_count(0)
  vim.api.nvim_win_set_cursor(0, { math.min(citation.start_line, last), 0 })
  vim.cmd("normal! zz")
end

local function activate()
  local row = row_at_cursor()
  if not row then
    return
  end
  if row.kind == "entry" then
    return show_entry(row.entry)
  end
  if row.kind == "citation" then
    return M.open_citation(row.citation)
  end
  if row.kind == "instruction" then
    if type(row.file.skipped) == "string" then
      return invincat.notify(row.file.path .. ": " .. row.file.skipped, vim.log.levels.WARN)
    end
    return M.open_citation({ path = row.file.path, start_line = 1, end_line = 1 })
  end
  local key = row.kind == "tier" and (row.scope .. "." .. row.tier) or row.scope
  state.collapsed[key] = not state.collapsed[key]
  render()
end

---@param buf integer
local function set_keymaps(buf)
  local function map(lhs, fn, desc)
    vim.keymap.set("n", lhs, fn, { buffer = buf, nowait = true, silent = true, desc = desc })
  end
  map("a", function()
    act("archive")
  end, "Invincat: archive the entry")
  map("u", function()
    act("restore")
  end, "Invincat: restore the archived entry")
  map("d", function()
    act("delete")
  end, "Invincat: delete the entry")
  map("A", function()
    state.show_archived = not state.show_archived
    M.refresh()
  end, "Invincat: show/hide archived entries")
  map("R", function()
    M.refresh()
  end, "Invincat: refresh")
  map("<CR>", activate, "Invincat: fold a scope or tier, show an entry")
  map("q", M.close, "Invincat: close the memory sidebar")
  map("?", M.show_help, "Invincat: list the sidebar's keys")
end

--- `?` in the sidebar: every key in a float (`q` or <Esc> closes it).
function M.show_help()
  local buf = ui.scratch_buffer("invincat://memory/help", "invincat-memory-help", "wipe")
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, FULL_HELP)
  vim.bo[buf].modifiable = false
  local width = 0
  for _, line in ipairs(FULL_HELP) do
    width = math.max(width, vim.fn.strdisplaywidth(line))
  end
  local win = ui.open_float(buf, width, #FULL_HELP, "Invincat memory keys")
  for _, lhs in ipairs({ "q", "<Esc>", "?" }) do
    vim.keymap.set("n", lhs, function()
      vim.api.nvim_win_close(win, true)
    end, { buffer = buf, nowait = true })
  end
end

--- Open the sidebar (or focus it) and load the entries of the current buffer's project
--- (from the sidebar itself or the chat: the project shown before).
function M.open()
  local current = vim.api.nvim_get_current_buf()
  local folder = invincat.folder_of(current)
  if folder then
    if state.folder and state.folder.uri ~= folder.uri then
      state.items, state.loaded = {}, false -- another project: not its entries meanwhile
    end
    state.source_buf = current
  end
  if not (state.buf and vim.api.nvim_buf_is_valid(state.buf)) then
    local buf = ui.scratch_buffer("invincat://memory", "invincat-memory")
    set_keymaps(buf)
    state.buf = buf
    render()
  end
  if state.win and vim.api.nvim_win_is_valid(state.win) then
    vim.api.nvim_set_current_win(state.win)
  else
    local cfg = invincat.config.memory
    state.win = ui.open_split(state.buf, cfg.position == "right" and "right" or "left", cfg.width)
    vim.wo[state.win].winfixwidth = true
    vim.wo[state.win].wrap = false
    vim.wo[state.win].cursorline = true
  end
  M.refresh()
end

--- Close the sidebar window.
function M.close()
  if state.win and vim.api.nvim_win_is_valid(state.win) and #vim.api.nvim_list_wins() > 1 then
    vim.api.nvim_win_close(state.win, false)
  end
  state.win = nil
end

local refresh_pending = false

--- Whether a `memory/didChange` is about another project than the one shown (its
--- `folder` names another workspace folder).
---@param params? table
---@return boolean
local function about_other_project(params)
  if type(params) ~= "table" or params.scope ~= "project" or type(params.folder) ~= "string" or not state.folder then
    return false
  end
  local ok, path = pcall(vim.uri_to_fname, params.folder)
  local changed = ok and invincat.folder_of_path(vim.fs.normalize(path))
  return changed ~= nil and changed ~= false and changed.uri ~= state.folder.uri
end

--- `invincat/memory/didChange` `{scope, batchId, folder?}` (and `memory_changed` events):
--- refresh the sidebar if it is open, once per burst of changes; a change of another
--- project's store than the one shown is ignored.
---@param params? table
function M.on_did_change(params)
  if refresh_pending or not (state.buf and vim.api.nvim_buf_is_valid(state.buf)) or about_other_project(params) then
    return
  end
  refresh_pending = true
  vim.defer_fn(function()
    refresh_pending = false
    M.refresh()
  end, 50)
end

return M
