--- Invincat for Neovim: setup, the language client, and the `:Invincat` commands.
---
--- The plugin talks to `invincat --stdio` through Neovim's built-in LSP client. One client
--- named "invincat" serves every buffer of the session; it is started on the first
--- `:Invincat` command (or by `vim.lsp.enable("invincat")` with `lsp/invincat.lua`), and
--- `invincat/event` notifications are routed from here to the chat, approvals, plan and
--- memory modules. Its first workspace folder is the cwd's project root; a file of another
--- project (another root) adds that root as a workspace folder of the same client, and the
--- server serves each folder as its own project (docs/editors.md, "Multi-root workspaces").
local protocol = require("invincat.protocol")

local M = {}

---@class invincat.ChatConfig
---@field layout? "split"|"float" Where `:Invincat chat` opens the chat buffer.
---@field position? "right"|"left"|"bottom" Side of the split (layout "split").
---@field width? number Split width in columns, or a fraction of the editor when < 1.
---@field height? number Bottom split height in lines, or a fraction when < 1.

---@class invincat.ApprovalsConfig
---@field notify? boolean Say with one short `vim.notify` message (once the user pauses typing) that approvals are waiting. Approvals never open a prompt or take focus by themselves.

---@class invincat.MemoryConfig
---@field width? integer Sidebar width in columns.
---@field position? "left"|"right"

---@class invincat.Config
---@field cmd? string[] Command that starts the language server.
---@field cmd_env? table<string, string> Extra environment for the server (e.g. `{ INVINCAT_MODEL = "gpt-4o-mini" }`).
---@field root_markers? string[] Files or directories marking the project root (nearest ancestor of the cwd).
---@field autostart? boolean Start the server when the first file of the project is opened (default: on the first `:Invincat` command).
---@field chat? invincat.ChatConfig
---@field approvals? invincat.ApprovalsConfig
---@field memory? invincat.MemoryConfig

---@type invincat.Config
local defaults = {
  cmd = { "invincat", "--stdio" },
  cmd_env = nil,
  root_markers = { ".git" },
  autostart = false,
  chat = { layout = "split", position = "right", width = 0.4, height = 0.35 },
  approvals = { notify = true },
  memory = { width = 48, position = "left" },
}

---@type invincat.Config
M.config = vim.deepcopy(defaults)

local group = vim.api.nvim_create_augroup("invincat", { clear = true })
-- Neovim 0.11 made client methods real methods (`client:request`); 0.10 has closures.
local has_011 = vim.fn.has("nvim-0.11") == 1

---@type integer?
local client_id = nil
--- Work waiting for the client to finish initializing: `run(client)`, or `fail(why)`
--- if the server exits first.
---@type {run: fun(client: vim.lsp.Client), fail: fun(problem: string)}[]
local waiting = {}

--- Notify the user, prefixed with "Invincat: ".
---@param message string
---@param level? integer vim.log.levels
function M.notify(message, level)
  vim.notify("Invincat: " .. message, level or vim.log.levels.INFO, { title = "Invincat" })
end

local option_types = {
  cmd = "table",
  cmd_env = "table",
  root_markers = "table",
  autostart = "boolean",
  chat = "table",
  approvals = "table",
  memory = "table",
}

---@param opts table
---@return string? problem
local function validate(opts)
  for name, wanted in pairs(option_types) do
    if opts[name] ~= nil and type(opts[name]) ~= wanted then
      return ("%s: expected a %s, got %s"):format(name, wanted, type(opts[name]))
    end
  end
  if opts.cmd ~= nil and (#opts.cmd == 0 or type(opts.cmd[1]) ~= "string") then
    return "cmd: expected a list of strings such as { 'invincat', '--stdio' }"
  end
  local layout = opts.chat and opts.chat.layout
  if layout ~= nil and layout ~= "split" and layout ~= "float" then
    return "chat.layout: expected 'split' or 'float', got " .. vim.inspect(layout)
  end
end

--- On exit Neovim sends `shutdown` but quits without waiting for the answer, so the
--- server would see its input close in the middle of shutting down (and could be left
--- running). Wait for it to finish (at most 3 s), then terminate what is left.
local function stop_clients_on_exit()
  local clients = vim.lsp.get_clients({ name = "invincat" })
  for _, client in ipairs(clients) do
    if has_011 and not client:is_stopped() then
      client:stop()
    elseif not has_011 and not client.is_stopped() then
      client.stop()
    end
  end
  vim.wait(3000, function()
    for _, client in ipairs(clients) do
      if not client.rpc.is_closing() then
        return false
      end
    end
    return true
  end, 10)
  for _, client in ipairs(clients) do
    if not client.rpc.is_closing() then
      client.rpc.terminate()
    end
  end
end

local function create_autocmds()
  vim.api.nvim_clear_autocmds({ group = group })
  vim.api.nvim_create_autocmd({ "BufReadPost", "BufNewFile", "BufEnter" }, {
    group = group,
    callback = function(args)
      M._on_buffer(args.buf)
    end,
  })
  vim.api.nvim_create_autocmd("VimLeavePre", { group = group, callback = stop_clients_on_exit })
end

--- Configure the plugin. Invalid options are reported and the defaults are used instead.
---@param opts? invincat.Config
function M.setup(opts)
  opts = opts or {}
  local problem = validate(opts)
  if problem then
    M.notify("invalid setup() options (" .. problem .. "); using the defaults.", vim.log.levels.WARN)
    opts = {}
  end
  M.config = vim.tbl_deep_extend("force", vim.deepcopy(defaults), opts)
  M.config.cmd = opts.cmd or defaults.cmd -- lists are replaced, not merged
  M.config.root_markers = opts.root_markers or defaults.root_markers
  create_autocmds()
end

--- The project root: the nearest ancestor of the cwd with one of `root_markers`.
---@return string
function M.root_dir()
  local cwd = vim.fn.getcwd()
  return vim.fs.root(cwd, M.config.root_markers) or cwd
end

---@class invincat.Folder
---@field uri string
---@field name string

---@param dir string
---@return invincat.Folder
local function folder_of_dir(dir)
  return { uri = vim.uri_from_fname(dir), name = vim.fs.basename(dir) }
end

--- The path of a loaded file buffer (what a project can hold), else nil.
---@param bufnr integer
---@return string?
local function file_path(bufnr)
  if not (vim.api.nvim_buf_is_valid(bufnr) and vim.api.nvim_buf_is_loaded(bufnr)) or vim.bo[bufnr].buftype ~= "" then
    return nil
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == "" or name:match("^%a[%w+.-]*://") then
    return nil
  end
  return vim.fs.normalize(name)
end

---@param dir string
---@param path string
local function inside(dir, path)
  local prefix = dir:sub(-1) == "/" and dir or dir .. "/"
  return path == dir or path:sub(1, #prefix) == prefix
end

--- The workspace folders: the running client's, in order, else the cwd's project root.
---@return invincat.Folder[]
function M.folders()
  local client = M.client()
  if client and client.workspace_folders and #client.workspace_folders > 0 then
    return client.workspace_folders
  end
  return { folder_of_dir(M.root_dir()) }
end

--- The innermost workspace folder holding `path` (as the server matches a `folder` uri).
---@param path string
---@param folders? invincat.Folder[]
---@return invincat.Folder?
function M.folder_of_path(path, folders)
  local best, best_length
  for _, folder in ipairs(folders or M.folders()) do
    local dir = vim.fs.normalize(vim.uri_to_fname(folder.uri))
    if inside(dir, path) and (not best or #dir > best_length) then
      best, best_length = folder, #dir
    end
  end
  return best
end

--- The workspace folder of a thread from its `workspace` (threads/list: the project root it
--- ran in): the folder itself or one below the root, else the folder holding the root.
---@param workspace string?
---@return invincat.Folder?
function M.folder_of_workspace(workspace)
  if type(workspace) ~= "string" or workspace == "" then
    return nil
  end
  local root = vim.fs.normalize(workspace)
  for _, folder in ipairs(M.folders()) do
    if inside(root, vim.fs.normalize(vim.uri_to_fname(folder.uri))) then
      return folder
    end
  end
  return M.folder_of_path(root)
end

--- The folder a buffer belongs to: the workspace folder holding it, else its own project
--- root (nearest ancestor with a root marker), which becomes a workspace folder when the
--- buffer is attached. Nil for other buffers (no file, or a file in no project).
---@param bufnr integer
---@return invincat.Folder?
function M.folder_of(bufnr)
  local path = file_path(bufnr)
  if not path then
    return nil
  end
  local folder = M.folder_of_path(path)
  if folder then
    return folder
  end
  local root = vim.fs.root(path, M.config.root_markers)
  return root and folder_of_dir(vim.fs.normalize(root)) or nil
end

--- Whether `bufnr` is a loaded file of a project of the session (what the client attaches
--- to, and the only files whose context a chat sends: the server refuses other uris).
---@param bufnr integer
---@return boolean
function M.is_project_file(bufnr)
  return M.folder_of(bufnr) ~= nil
end

--- Whether the server takes new workspace folders (it advertises folder change
--- notifications); without that a file of another root stays unattached, as before.
---@param client vim.lsp.Client
---@return boolean
local function takes_folders(client)
  local folders = vim.tbl_get(client.server_capabilities or {}, "workspace", "workspaceFolders") or {}
  return folders.changeNotifications == true or type(folders.changeNotifications) == "string"
end

--- Make `folder` a workspace folder of `client` (once). Hand-written rather than
--- `vim.lsp.buf.add_workspace_folder()`: that one acts on the clients of the current buffer
--- (the new file is not attached yet, and must not be: its didOpen has to follow the
--- folder) and prints; this is the same notification and the client's public folder list.
---@param client vim.lsp.Client
---@param folder invincat.Folder
---@return boolean added_or_known false when the server takes no new folders
function M.add_folder(client, folder)
  for _, known in ipairs(client.workspace_folders or {}) do
    if known.uri == folder.uri then
      return true
    end
  end
  if not takes_folders(client) then
    return false
  end
  local event = { added = { folder }, removed = {} }
  if has_011 then
    client:notify("workspace/didChangeWorkspaceFolders", { event = event })
  else
    client.notify("workspace/didChangeWorkspaceFolders", { event = event })
  end
  client.workspace_folders = client.workspace_folders or {}
  table.insert(client.workspace_folders, folder)
  return true
end

--- Attach an initialized client to a project file buffer (so the server sees unsaved
--- text), first adding the buffer's root as a workspace folder when it is a new one.
---@param client vim.lsp.Client
---@param bufnr integer
local function join(client, bufnr)
  local folder = M.folder_of(bufnr)
  if not folder or not M.add_folder(client, folder) then
    return
  end
  if not vim.lsp.buf_is_attached(bufnr, client.id) then
    vim.lsp.buf_attach_client(bufnr, client.id)
  end
end

--- Attach the running client to a project file buffer (see `join`).
---@param bufnr integer
function M._on_buffer(bufnr)
  if not M.is_project_file(bufnr) then
    return
  end
  local client = M.client()
  if client == nil and M.config.autostart then
    client = M.start()
  end
  if not client then
    return
  end
  if client.initialized then
    join(client, bufnr)
  elseif M.folder_of_path(file_path(bufnr) or "", client.workspace_folders or {}) then
    -- A file of a folder the server is being initialized with: its didOpen follows.
    vim.lsp.buf_attach_client(bufnr, client.id)
  end
  -- Other roots are added once the server has said it takes folders (on_init).
end

--- Make sure the buffer's folder is a workspace folder of the initialized client before a
--- request names it (`:Invincat chat` / `memory` from a file of a new root).
---@param client vim.lsp.Client
---@param bufnr integer?
function M.join(client, bufnr)
  if bufnr and client.initialized then
    join(client, bufnr)
  end
end

--- The `folder` param of a request about `bufnr`'s project: its workspace folder's uri,
--- nil when the buffer is in no project.
---@param bufnr integer?
---@return string?
function M.folder_uri(bufnr)
  local folder = bufnr and M.folder_of(bufnr)
  return folder and folder.uri or nil
end

--- `reuse_client` of `lsp/invincat.lua`: every buffer shares the one client; a buffer of
--- another root first makes that root a workspace folder of it (Neovim attaches the buffer
--- right after this returns true, so the folder precedes the didOpen). A server that takes
--- no new folders keeps Neovim's default: a client per root.
---@param client vim.lsp.Client
---@param config vim.lsp.ClientConfig
---@return boolean
function M.reuse_client(client, config)
  if client.name ~= config.name then
    return false
  end
  local root = config.root_dir
  if type(root) ~= "string" then
    return true
  end
  local folder = folder_of_dir(vim.fs.normalize(root))
  if M.folder_of_path(vim.fs.normalize(root), client.workspace_folders or {}) then
    return true
  end
  if not client.initialized then
    return true -- on_init adds the folders of the buffers attached meanwhile
  end
  return M.add_folder(client, folder)
end

--- Route one server → client message to the module that renders it.
---@type table<string, lsp.Handler>
M.handlers = {
  [protocol.EVENT] = function(_, params)
    require("invincat.events").dispatch(params)
  end,
  [protocol.MEMORY_DID_CHANGE] = function(_, params)
    require("invincat.memory").on_did_change(params)
  end,
  ["workspace/applyEdit"] = function(err, params, ctx)
    return require("invincat.workspace_edit").apply(err, params, ctx)
  end,
  ["workspace/executeCommand"] = function(err, result)
    -- The answer to a code action's `invincat.resolveApproval` (a decision may lose the race).
    if err then
      M.notify(err.message, vim.log.levels.ERROR)
    elseif type(result) == "table" and result.resolved == false and result.reason then
      M.notify(result.reason, vim.log.levels.WARN)
    end
  end,
}

--- The running Invincat client (ours, or one started by `vim.lsp.enable("invincat")`).
---@return vim.lsp.Client?
function M.client()
  local client = client_id and vim.lsp.get_client_by_id(client_id)
  if client and not (has_011 and client:is_stopped() or not has_011 and client.is_stopped()) then
    return client
  end
  client_id = nil
  for _, other in ipairs(vim.lsp.get_clients({ name = "invincat" })) do
    client_id = other.id
    return other
  end
end

---@param client vim.lsp.Client
local function on_init(client)
  create_autocmds() -- also for a client started by vim.lsp.enable()
  require("invincat.attention") -- watch keys before the first approval (see M.start)
  -- Files of other roots loaded meanwhile join now, their folders before their didOpen.
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if M.is_project_file(bufnr) then
      join(client, bufnr)
    end
  end
  local queued = waiting
  waiting = {}
  for _, work in ipairs(queued) do
    work.run(client)
  end
  vim.schedule(function()
    require("invincat.approvals").restore_pending()
  end)
end

--- `on_init` of the client, also used by `lsp/invincat.lua`.
M._on_init = on_init

---@param code integer
---@param signal integer
local function on_exit(code, signal)
  local queued = waiting
  waiting = {}
  local problem = ("the server exited (code %d, signal %d); see :LspLog"):format(code, signal)
  vim.schedule(function()
    for _, work in ipairs(queued) do
      work.fail(problem)
    end
    if (code ~= 0 or signal ~= 0) and vim.v.exiting == vim.NIL then
      M.notify(problem, vim.log.levels.ERROR)
    end
  end)
end

--- The client configuration `vim.lsp.start` gets.
---@param cmd? string[] The command with its program resolved (default: as configured).
---@return vim.lsp.ClientConfig
function M.client_config(cmd)
  local root = M.root_dir()
  return {
    name = "invincat",
    cmd = cmd or M.config.cmd,
    cmd_env = M.config.cmd_env,
    cmd_cwd = root,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = vim.fs.basename(root) } },
    handlers = M.handlers,
    on_init = on_init,
    on_exit = on_exit,
  }
end

--- Start the client if it is not running, and attach it to the project's file buffers.
---@return vim.lsp.Client? client
---@return string? problem Why it could not start (the client is nil).
function M.start()
  local running = M.client()
  if running then
    return running
  end
  -- Resolved here, not by Neovim: its lookup would search `.` in the project root.
  local cmd, unresolved = require("invincat.command").resolve_cmd(M.config.cmd, M.config.cmd_env)
  if not cmd then
    return nil,
      ("cannot start the server: %s. Install it (pip install invincat-server) or set `cmd` in require('invincat').setup{}; see :checkhealth invincat"):format(
        unresolved
      )
  end
  local id
  if has_011 then
    id = vim.lsp.start(M.client_config(cmd), { attach = false })
  else
    id = vim.lsp.start_client(M.client_config(cmd))
  end
  if not id then
    return nil, "the language server did not start; see :LspLog"
  end
  client_id = id
  create_autocmds()
  -- Start watching keys now, so an approval that arrives in the middle of typing is
  -- known to (its announcement waits for a pause).
  require("invincat.attention")
  local folders = { folder_of_dir(M.root_dir()) }
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    local path = file_path(bufnr)
    if path and M.folder_of_path(path, folders) then
      vim.lsp.buf_attach_client(bufnr, id)
    end
  end
  return vim.lsp.get_client_by_id(id)
end

--- Run `fn` with an initialized client (starting it if needed); `on_fail(problem)` when
--- there is none (default: notify the problem).
---@param fn fun(client: vim.lsp.Client)
---@param on_fail? fun(problem: string)
function M.with_client(fn, on_fail)
  on_fail = on_fail or function(problem)
    M.notify(problem, vim.log.levels.ERROR)
  end
  local client, problem = M.start()
  if not client then
    return on_fail(problem or "the server is not running")
  end
  if client.initialized then
    fn(client)
  else
    table.insert(waiting, { run = fn, fail = on_fail })
  end
end

--- Error code of a request that was never sent (no server).
local NOT_SENT = -32099
M.NOT_SENT = NOT_SENT

---@class invincat.RpcError
---@field code integer
---@field message string

--- Send an `invincat/*` request. `callback(err, result)`; without a callback, errors are
--- shown with `vim.notify`.
---@param method string
---@param params table
---@param callback? fun(err: invincat.RpcError?, result: any)
function M.request(method, params, callback)
  if next(params) == nil then
    params = vim.empty_dict() -- `{}` would be sent as an array; params must be an object
  end
  local function handler(err, result)
    if callback then
      callback(err, result)
    elseif err then
      M.notify(err.message, vim.log.levels.ERROR)
    end
  end
  M.with_client(function(client)
    if has_011 then
      client:request(method, params, handler)
    else
      client.request(method, params, handler)
    end
  end, function(problem)
    handler({ code = NOT_SENT, message = problem }, nil)
  end)
end

--- A short status for statuslines: "working", "waiting for approval", …; "" when idle.
---@return string
function M.status()
  local ok, chat = pcall(require, "invincat.chat")
  return ok and chat.status() or ""
end

--- `range`: the command's line range ({line1, line2}) when it was given one.
---@type table<string, fun(rest: string, range?: {[1]: integer, [2]: integer})>
local subcommands = {
  chat = function(rest, range)
    require("invincat.chat").open({ prompt = rest ~= "" and rest or nil, range = range })
  end,
  cancel = function()
    require("invincat.chat").cancel()
  end,
  compose = function(_, range)
    require("invincat.compose").open({ range = range })
  end,
  new = function(rest, range)
    require("invincat.chat").new_thread()
    if rest ~= "" then
      require("invincat.chat").open({ prompt = rest, range = range })
    end
  end,
  plan = function(rest, range)
    require("invincat.plan").start(rest ~= "" and rest or nil, range)
  end,
  memory = function()
    require("invincat.memory").open()
  end,
  threads = function()
    require("invincat.threads").pick()
  end,
  rules = function()
    require("invincat.rules").open()
  end,
  remote = function()
    require("invincat.remote").open()
  end,
  rewind = function()
    require("invincat.rewind").pick()
  end,
  approvals = function()
    require("invincat.approval_view").open(require("invincat.approvals").at_cursor())
  end,
  approve = function()
    require("invincat.approvals").decide_at_cursor("approve")
  end,
  reject = function()
    require("invincat.approvals").decide_at_cursor("reject")
  end,
}

--- Names of the `:Invincat` subcommands, for completion.
---@return string[]
function M.subcommands()
  local names = vim.tbl_keys(subcommands)
  table.sort(names)
  return names
end

--- `:Invincat {subcommand} [args]`.
---@param args { fargs: string[], args: string, range?: integer, line1?: integer, line2?: integer }
function M.command(args)
  local name = args.fargs[1] or "chat"
  local run = subcommands[name]
  if not run then
    M.notify(
      ("unknown command %q; use one of: %s"):format(name, table.concat(M.subcommands(), ", ")),
      vim.log.levels.ERROR
    )
    return
  end
  local rest = vim.trim((args.args or ""):gsub("^%s*%S+", "", 1))
  local range = (args.range or 0) > 0 and { args.line1, args.line2 } or nil
  run(rest, range)
end

return M
