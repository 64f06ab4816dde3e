--- The compose buffer (`:Invincat compose`, `c` in the chat): a multi-line prompt in a
--- markdown scratch buffer, sent with `:w` or <C-s>.
---
--- `#buffer` attaches the file the compose buffer was opened from, `#buffer:{path}` another
--- loaded file of the project: each becomes an `attachments` entry (the server reads the
--- buffer's synced text) and reads as its path in the prompt. `@file` mentions stay in the
--- prompt; the server resolves them. Both complete with the omnifunc (<C-x><C-o>).
local context = require("invincat.context")
local invincat = require("invincat")
local ui = require("invincat.ui")

local M = {}

--- At most this many workspace files are listed for `@` completion.
local MAX_FILES = 5000
--- At most this many completion items are offered.
local MAX_ITEMS = 200
local HINT = "%#InvincatHeader# Invincat prompt%#InvincatStatus#  :w or <C-s> send · #buffer @file: <C-x><C-o> · :q! discard"

---@class invincat.ComposeState
---@field buf integer
---@field win integer
---@field snapshot invincat.ContextSnapshot? the context of the window it was opened from
---@field origin integer? that window
---@field origin_buf integer? the file buffer `#buffer` stands for
---@field mode "agent"|"plan"

---@type invincat.ComposeState?
local state = nil

--- The path of `buf` relative to the project root.
---@param buf integer
---@return string
local function relative(buf)
  local root = vim.fs.normalize(invincat.root_dir())
  local name = vim.fs.normalize(vim.api.nvim_buf_get_name(buf))
  return name:sub(1, #root + 1) == root .. "/" and name:sub(#root + 2) or name
end

--- Loaded project file buffers by relative path, the alternate one first.
---@return {path: string, buf: integer, first: boolean}[]
local function project_buffers()
  local list = {}
  local alternate = state and state.origin and vim.api.nvim_win_is_valid(state.origin)
    and vim.api.nvim_win_call(state.origin, function()
      return vim.fn.bufnr("#")
    end)
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if invincat.is_project_file(buf) then
      table.insert(list, { path = relative(buf), buf = buf, first = buf == alternate })
    end
  end
  table.sort(list, function(a, b)
    if a.first ~= b.first then
      return a.first
    end
    return a.path < b.path
  end)
  return list
end

--- Files of the workspace, relative to the root: `git ls-files` (tracked and untracked,
--- not ignored) in a git repository, else a walk of the tree without hidden directories.
---@return string[]
local function workspace_files()
  local root = invincat.root_dir()
  local ok, done = pcall(function()
    return vim.system({ "git", "ls-files", "--cached", "--others", "--exclude-standard" }, { cwd = root, text = true })
      :wait(2000)
  end)
  if ok and done.code == 0 then
    local files = vim.split(done.stdout or "", "\n", { trimempty = true })
    return vim.list_slice(files, 1, MAX_FILES)
  end
  local files = {}
  for name, kind in
    vim.fs.dir(root, {
      depth = 10,
      skip = function(dir)
        return not dir:match("^%.") and dir ~= "node_modules"
      end,
    })
  do
    if kind == "file" and not name:match("^%.") and not name:match("/%.") then
      table.insert(files, name)
      if #files >= MAX_FILES then
        break
      end
    end
  end
  return files
end

--- `@path` as the server reads it: quoted when the path has a space.
---@param path string
---@return string
local function mention(path)
  return path:find("%s") and ('@"' .. path .. '"') or ("@" .. path)
end

---@param candidates string[]
---@param needle string
---@return string[] prefix matches first, then substring matches (case-insensitive)
local function matching(candidates, needle)
  needle = needle:lower()
  local first, then_ = {}, {}
  for _, candidate in ipairs(candidates) do
    local lower = candidate:lower()
    if lower:sub(1, #needle) == needle then
      table.insert(first, candidate)
    elseif lower:find(needle, 1, true) then
      table.insert(then_, candidate)
    end
  end
  return vim.list_slice(vim.list_extend(first, then_), 1, MAX_ITEMS)
end

--- 'omnifunc' of the compose buffer: `@` completes workspace files, `#` the buffers.
---@param findstart integer
---@param base string
---@return integer|table
function M.omnifunc(findstart, base)
  if findstart == 1 then
    local line = vim.api.nvim_get_current_line():sub(1, vim.api.nvim_win_get_cursor(0)[2])
    local start = line:find('[@#][^%s@#]*$') or line:find('@"[^"]*$')
    return start and start - 1 or -3 -- -3: no completion, no message
  end
  local items = {}
  if base:sub(1, 1) == "@" then
    local needle = base:sub(2):gsub('^"', "")
    for _, path in ipairs(matching(workspace_files(), needle)) do
      table.insert(items, { word = mention(path), abbr = path, menu = "[file]" })
    end
  else
    local words = { "#buffer" }
    local paths = { ["#buffer"] = state and state.origin_buf and relative(state.origin_buf) or "" }
    for _, entry in ipairs(project_buffers()) do
      local word = "#buffer:" .. entry.path
      table.insert(words, word)
      paths[word] = entry.path
    end
    for _, word in ipairs(matching(words, base)) do
      table.insert(items, { word = word, menu = "[buffer] " .. paths[word] })
    end
  end
  return items
end

--- Resolve the `#buffer` references of `text`: the prompt with each one read as its path,
--- and the uris to attach; or an error naming a reference that is no loaded project file.
---@param text string
---@return string? prompt
---@return string[]|string attachments, or the problem
local function resolve(text)
  local uris, seen = {}, {}
  local problem
  local by_path = {}
  for _, entry in ipairs(project_buffers()) do
    by_path[entry.path] = entry.buf
  end
  local prompt = text:gsub("#buffer(:?)([^%s#]*)", function(colon, path)
    local buf
    if colon == "" and path:match("^[%w_%-]") then
      return nil -- another word (`#buffers`), not a reference
    elseif colon == "" then
      buf = state and state.origin_buf
      if not (buf and vim.api.nvim_buf_is_valid(buf)) then
        problem = problem or "#buffer: the compose buffer was not opened from a file of the project"
        return nil
      end
      path = relative(buf) .. path -- `path` is what followed the word (e.g. punctuation)
    else
      -- Punctuation right after the path ends the sentence, not the path.
      local name, rest = path:match("^(.-)([%.,;:!?%)]*)$")
      buf = by_path[name]
      if not buf then
        problem = problem or ("#buffer:%s is not a loaded file of the project"):format(name)
        return nil
      end
      path = name .. rest
    end
    local uri = vim.uri_from_bufnr(buf)
    if not seen[uri] then
      seen[uri] = true
      table.insert(uris, uri)
    end
    return path
  end)
  if problem then
    return nil, problem
  end
  return prompt, uris
end

--- Send the compose buffer's text (`:w`, <C-s>). A bad reference or a running turn keeps
--- the text in the buffer, with a message saying why.
function M.submit()
  if not (state and vim.api.nvim_buf_is_valid(state.buf)) then
    return
  end
  local text = vim.trim(table.concat(vim.api.nvim_buf_get_lines(state.buf, 0, -1, false), "\n"))
  if text == "" then
    return invincat.notify("the prompt is empty; nothing sent", vim.log.levels.WARN)
  end
  local chat = require("invincat.chat")
  if chat.status() ~= "" then
    return invincat.notify("a turn is still running; the prompt is kept (send it once the turn ends)", vim.log.levels.WARN)
  end
  local prompt, attachments = resolve(text)
  if not prompt then
    return invincat.notify(attachments --[[@as string]] .. "; nothing sent", vim.log.levels.ERROR)
  end
  local snapshot = state.snapshot or { attachments = {} }
  snapshot.attachments = attachments --[[@as string[] ]]
  local done = state
  state = nil
  vim.bo[done.buf].modified = false
  vim.schedule(function()
    if vim.api.nvim_win_is_valid(done.win) and #vim.api.nvim_list_wins() > 1 then
      vim.api.nvim_win_close(done.win, true)
    end
    if vim.api.nvim_buf_is_valid(done.buf) then
      vim.api.nvim_buf_delete(done.buf, { force = true })
    end
    if done.origin and vim.api.nvim_win_is_valid(done.origin) then
      vim.api.nvim_set_current_win(done.origin)
    end
    vim.cmd("stopinsert")
    chat.open({ prompt = prompt, mode = done.mode, snapshot = snapshot })
  end)
end

--- Open the compose buffer (or focus the open one) below the current window, in Insert
--- mode. The context is taken from the window it is opened from (`range`: the command's
--- lines, sent as the selection).
---@param opts? {range?: {[1]: integer, [2]: integer}, mode?: "agent"|"plan"}
function M.open(opts)
  opts = opts or {}
  if state and vim.api.nvim_win_is_valid(state.win) then
    vim.api.nvim_set_current_win(state.win)
    return
  end
  require("invincat.chat") -- defines the highlight groups of the winbar
  local snapshot = context.capture(opts.range)
  local origin = vim.api.nvim_get_current_win()
  if not invincat.is_project_file(vim.api.nvim_win_get_buf(origin)) then
    origin = vim.fn.win_getid(vim.fn.winnr("#"))
    origin = origin ~= 0 and origin or vim.api.nvim_get_current_win()
  end
  local buf = ui.scratch_buffer("invincat://compose", "markdown", "wipe")
  vim.bo[buf].buftype = "acwrite" -- :w runs BufWriteCmd: it sends instead of writing a file
  vim.bo[buf].omnifunc = "v:lua.require'invincat.compose'.omnifunc"
  vim.api.nvim_create_autocmd("BufWriteCmd", { buffer = buf, callback = M.submit })
  vim.keymap.set({ "n", "i" }, "<C-s>", M.submit, { buffer = buf, desc = "Invincat: send the prompt" })
  vim.cmd("belowright 8split")
  local win = vim.api.nvim_get_current_win()
  vim.api.nvim_win_set_buf(win, buf)
  vim.wo[win].winbar = HINT
  vim.wo[win].wrap = true
  vim.wo[win].linebreak = true
  state = {
    buf = buf,
    win = win,
    snapshot = snapshot,
    origin = origin,
    origin_buf = snapshot and snapshot.buf or nil,
    mode = opts.mode or "agent",
  }
  vim.api.nvim_create_autocmd("BufWipeout", {
    buffer = buf,
    callback = function()
      if state and state.buf == buf then
        state = nil
      end
    end,
  })
  vim.cmd("startinsert")
end

return M
