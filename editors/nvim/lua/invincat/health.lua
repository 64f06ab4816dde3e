--- `:checkhealth invincat`: Neovim version, the server executable and its version, and
--- whether the model is configured (the server opens its session, or says what to set),
--- with the server's start-up timings from `invincat/status`.
local protocol = require("invincat.protocol")

local M = {}

local health = vim.health

---@class invincat.Probe
---@field err? invincat.RpcError
---@field result? any
---@field status? table The `invincat/status` object once the session is no longer starting.
---@field failure? string Why the server could not be asked at all.

local STATUS_WAIT_MS = 30000

--- `invincat/status` until the session is no longer `starting` (it opens in the background
--- after `initialize`), then `invincat/threads/list`. A server too old for
--- `invincat/status` is asked `invincat/threads/list` alone, which then needs the session.
---@param ask fun(method: string, params: any): {err?: invincat.RpcError, result?: any}?
---@return invincat.Probe
local function probe(ask)
  local deadline = vim.uv.now() + STATUS_WAIT_MS
  local status
  while true do
    local answer = ask(protocol.STATUS, vim.empty_dict())
    if not answer then
      return { failure = "the server did not answer invincat/status" }
    end
    if answer.err then
      break -- an older server: no readiness signal
    end
    status = answer.result
    if type(status) ~= "table" or status.state ~= "starting" or vim.uv.now() > deadline then
      break
    end
    vim.wait(100)
  end
  if status and status.state == "starting" then
    return { status = status, failure = "the session was still starting after 30 s" }
  end
  local threads = ask(protocol.THREADS_LIST, vim.empty_dict()) or { failure = "the server did not answer in 30 s" }
  threads.status = status
  return threads
end

--- Ask a short-lived server (not the editor's client): its readiness and saved threads.
---@param cmd string[]
---@param env table<string, string>?
---@param root string
---@return invincat.Probe
local function probe_new_server(cmd, env, root)
  local exited, stderr = false, {}
  local ok, rpc = pcall(vim.lsp.rpc.start, cmd, {
    notification = function() end,
    server_request = function(method)
      if method == "workspace/applyEdit" then
        return { applied = false, failureReason = "checkhealth" }
      end
      return vim.NIL
    end,
    on_error = function(_, err)
      table.insert(stderr, tostring(err))
    end,
    on_exit = function()
      exited = true
    end,
  }, { cwd = root, env = env })
  if not ok or not rpc then
    return { failure = "could not start the server: " .. tostring(rpc) }
  end
  local answer
  local function ask(method, params)
    answer = nil
    rpc.request(method, params, function(err, result)
      answer = { err = err, result = result }
    end)
    vim.wait(30000, function()
      return answer ~= nil or exited
    end, 20)
    return answer
  end
  local uri = vim.uri_from_fname(root)
  local init = ask("initialize", {
    processId = vim.fn.getpid(),
    clientInfo = { name = "Neovim checkhealth" },
    rootUri = uri,
    workspaceFolders = { { uri = uri, name = vim.fs.basename(root) } },
    capabilities = vim.empty_dict(),
  })
  local result
  if not init or init.err then
    result = { failure = "the server did not answer initialize" .. (init and (": " .. init.err.message) or "") }
  else
    rpc.notify("initialized", vim.empty_dict())
    result = probe(ask)
    ask("shutdown", vim.NIL)
    rpc.notify("exit", vim.NIL)
  end
  vim.wait(2000, function()
    return exited
  end, 20)
  if not exited then
    rpc.terminate()
  end
  if result.failure and #stderr > 0 then
    result.failure = result.failure .. " (" .. table.concat(stderr, "; ") .. ")"
  end
  return result
end

---@param client vim.lsp.Client
---@return invincat.Probe
local function probe_client(client)
  return probe(function(method, params)
    local response
    if vim.fn.has("nvim-0.11") == 1 then
      response = client:request_sync(method, params, 30000)
    else
      response = client.request_sync(method, params, 30000)
    end
    return response and { err = response.err, result = response.result } or nil
  end)
end

--- "initialize 412 ms, stack import 1650 ms, session open 1803 ms" (steps not done: "-").
---@param timings table?
---@return string
local function describe_timings(timings)
  local function ms(value)
    return type(value) == "number" and ("%d ms"):format(value) or "-"
  end
  timings = timings or {}
  return ("initialize %s, stack import %s, session open %s"):format(
    ms(timings.initializeMs),
    ms(timings.stackImportMs),
    ms(timings.sessionOpenMs)
  )
end

function M.check()
  health.start("invincat")
  if vim.fn.has("nvim-0.10") == 1 then
    health.ok("Neovim " .. tostring(vim.version()))
  else
    health.error("Neovim 0.10 or newer is required", { "Upgrade Neovim" })
  end

  local invincat = require("invincat")
  local config = invincat.config
  -- The plugin's own lookup (absolute PATH entries only), not exepath(): checking must
  -- not run a repository's `./invincat` either.
  local cmd, unresolved = require("invincat.command").resolve_cmd(config.cmd, config.cmd_env)
  if not cmd then
    health.error(("server not found: %s"):format(unresolved), {
      "Install the server: pip install invincat-server (it provides the `invincat` command)",
      "Or point the plugin at it: require('invincat').setup({ cmd = { '/path/to/.venv/bin/invincat', '--stdio' } })",
    })
    return
  end
  local exe = cmd[1]
  health.ok("server found: " .. exe)

  local ok, version = pcall(function()
    return vim.system({ exe, "--version" }, { text = true, env = config.cmd_env }):wait(20000)
  end)
  if not ok or version.code ~= 0 then
    local why = ok and vim.trim((version.stderr or "") .. (version.stdout or "")) or tostring(version)
    health.error(("`%s --version` failed: %s"):format(exe, why), { "Reinstall the server (pip install -e . in its checkout)" })
    return
  end
  health.ok("version: " .. vim.trim(version.stdout))

  local client = invincat.client()
  local result = client and probe_client(client) or probe_new_server(cmd, config.cmd_env, invincat.root_dir())
  local status = result.status
  if status then
    health.info(("server state: %s; start-up: %s"):format(status.state, describe_timings(status.timings)))
  end
  local how_to_configure = {
    "Set the variables in the environment Neovim starts with, or in setup({ cmd_env = { ... } })",
    "Or write them to $INVINCAT_HOME/config.toml (see docs/configuration.md)",
  }
  if result.failure then
    health.error(result.failure, { "See the server log: :LspLog, or run `invincat --stdio` in a terminal" })
  elseif status and status.state == "failed" then
    health.error("model not configured: " .. (status.message or "the session could not open"), how_to_configure)
  elseif result.err and result.err.code == protocol.ErrorCode.MODEL_NOT_CONFIGURED then
    health.error("model not configured: " .. result.err.message, how_to_configure)
  elseif result.err then
    health.error("the server refused a request: " .. result.err.message)
  else
    local model = (config.cmd_env or {}).INVINCAT_MODEL or vim.env.INVINCAT_MODEL
    health.ok("model configured" .. (model and (": " .. model) or "") .. " (the server opened its session)")
    local threads = type(result.result) == "table" and result.result.threads or {}
    health.info(("%s in %s"):format(require("invincat.format").count(#threads, "saved thread"), invincat.root_dir()))
  end
end

return M
