-- Neovim 0.11 configuration for the Invincat language server:
--   vim.lsp.enable("invincat")       -- start it for the buffers of a project
--   vim.lsp.config("invincat", { cmd = { "/path/to/.venv/bin/invincat", "--stdio" } })
-- The default `cmd` starts the command of require("invincat").setup() (default
-- `invincat --stdio`), its bare name looked up by the plugin on the absolute PATH entries
-- only (invincat.command): Neovim's own lookup would search `.` in the project root. A
-- `cmd` list given to vim.lsp.config is Neovim's to start: give it an absolute path.
-- The `:Invincat` commands use this client when it is running (it is named "invincat").
-- One client serves every project: a buffer of another root adds that root as a workspace
-- folder of the running client instead of starting a second server.

---@param method string
---@return lsp.Handler
local function route(method)
  return function(...)
    return require("invincat").handlers[method](...)
  end
end

--- Start the server with the plugin's command, its program resolved; an unknown one is a
--- clear error (Neovim reports the failed start, the plugin says why).
---@param dispatchers vim.lsp.rpc.Dispatchers
---@param config vim.lsp.ClientConfig
---@return vim.lsp.rpc.PublicClient
local function start(dispatchers, config)
  local invincat = require("invincat")
  local cmd_env = config.cmd_env or invincat.config.cmd_env
  local cmd, unresolved = require("invincat.command").resolve_cmd(invincat.config.cmd, cmd_env)
  if not cmd then
    local problem = "cannot start the server: " .. unresolved .. "; see :checkhealth invincat"
    invincat.notify(problem, vim.log.levels.ERROR)
    error(problem, 0)
  end
  return vim.lsp.rpc.start(cmd, dispatchers, { cwd = config.cmd_cwd, env = cmd_env, detached = config.detached })
end

---@type vim.lsp.Config
return {
  cmd = start,
  root_markers = { ".git" },
  handlers = {
    ["invincat/event"] = route("invincat/event"),
    ["invincat/memory/didChange"] = route("invincat/memory/didChange"),
    ["workspace/applyEdit"] = route("workspace/applyEdit"),
    ["workspace/executeCommand"] = route("workspace/executeCommand"),
  },
  reuse_client = function(client, config)
    return require("invincat").reuse_client(client, config)
  end,
  on_init = function(client)
    require("invincat")._on_init(client)
  end,
}
