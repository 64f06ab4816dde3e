--- Invincat for Neovim: setup, the language client, and the `:Invincat` commands.
---
--- The plugin talks to `invincat --stdio` through Neovim's built-in LSP client. One client
--- named "invincat" serves every buffer of the project; it is started on the first
--- `:Invincat` command (or by `vim.lsp.enable("invincat")` with `lsp/invincat.lua`), and
--- `invincat/event` notifications are routed from here to the chat, approvals, plan and
--- memory modules.
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

--- Whether `bufnr` is a loaded file of the project (what the client attaches to, and the
--- only files whose context a chat sends: the server refuses uris outside the workspace).
---@param bufnr integer
---@return boolean
function M.is_project_file(bufnr)
  if not vim.api.nvim_buf_is_loaded(bufnr) or vim.bo[bufnr].buftype ~= "" then
    return false
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == "" or name:match("^%a[%w+.-]*://") then
    return false
  end
  local root = vim.fs.normalize(M.root_dir())
  return vim.fs.normalize(name):sub(1, #root + 1) == root .. "/"
end

--- Attach the running client to a project file buffer (so the server sees unsaved text).
---@param bufnr integer
function M._on_buffer(bufnr)
  if not M.is_project_file(bufnr) then
    return
  end
  local client = M.client()
  if client == nil and M.config.autostart then
    client = M.start()
  end
  if client and not vim.lsp.buf_is_attached(bufnr, client.id) then
    vim.lsp.buf_attach_client(bufnr, client.id)
  end
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
---@return vim.lsp.ClientConfig
function M.client_config()
  local root = M.root_dir()
  return {
    name = "invincat",
    cmd = M.config.cmd,
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
  if vim.fn.executable(M.config.cmd[1]) ~= 1 then
    return nil,
      ("cannot start the server: `%s` is not executable. Install it (pip install invincat-server) or set `cmd` in require('invincat').setup{}; see :checkhealth invincat"):format(
        M.config.cmd[1]
      )
  end
  local id
  if has_011 then
    id = vim.lsp.start(M.client_config(), { attach = false })
  else
    id = vim.lsp.start_client(M.client_config())
  end
  if not id then
    return nil, "the language server did not start; see :LspLog"
  end
  client_id = id
  create_autocmds()
  -- Start watching keys now, so an approval that arrives in the middle of typing is
  -- known to (its announcement waits for a pause).
  require("invincat.attention")
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if M.is_project_file(bufnr) then
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
