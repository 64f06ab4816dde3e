--- `:checkhealth invincat`: Neovim version, the server executable and its version, and
--- whether the model is configured (the server opens its session, or says what to set).
local protocol = require("invincat.protocol")

local M = {}

local health = vim.health

---@class invincat.Probe
---@field err? invincat.RpcError
---@field result? any
---@field failure? string Why the server could not be asked at all.

--- Ask a short-lived server (not the editor's client) for `invincat/threads/list`, which
--- needs an open session: it answers, or fails with the configuration error.
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
  local probe
  if not init or init.err then
    probe = { failure = "the server did not answer initialize" .. (init and (": " .. init.err.message) or "") }
  else
    rpc.notify("initialized", vim.empty_dict())
    probe = ask(protocol.THREADS_LIST, vim.empty_dict()) or { failure = "the server did not answer in 30 s" }
    ask("shutdown", vim.NIL)
    rpc.notify("exit", vim.NIL)
  end
  vim.wait(2000, function()
    return exited
  end, 20)
  if not exited then
    rpc.terminate()
  end
  if probe.failure and #stderr > 0 then
    probe.failure = probe.failure .. " (" .. table.concat(stderr, "; ") .. ")"
  end
  return probe
end

---@param client vim.lsp.Client
---@return invincat.Probe
local function probe_client(client)
  local response, err
  if vim.fn.has("nvim-0.11") == 1 then
    response, err = client:request_sync(protocol.THREADS_LIST, vim.empty_dict(), 30000)
  else
    response, err = client.request_sync(protocol.THREADS_LIST, vim.empty_dict(), 30000)
  end
  if not response then
    return { failure = "the running server did not answer: " .. tostring(err) }
  end
  return { err = response.err, result = response.result }
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
  local name = config.cmd[1]
  local exe = vim.fn.exepath(name)
  if exe == "" then
    health.error(("server not found: `%s` is not an executable"):format(name), {
      "Install the server: pip install invincat-server (it provides the `invincat` command)",
      "Or point the plugin at it: require('invincat').setup({ cmd = { '/path/to/.venv/bin/invincat', '--stdio' } })",
    })
    return
  end
  health.ok("server found: " .. exe)

  local cmd = vim.deepcopy(config.cmd)
  cmd[1] = exe
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
  local probe = client and probe_client(client) or probe_new_server(cmd, config.cmd_env, invincat.root_dir())
  if probe.failure then
    health.error(probe.failure, { "See the server log: :LspLog, or run `invincat --stdio` in a terminal" })
  elseif probe.err and probe.err.code == protocol.ErrorCode.MODEL_NOT_CONFIGURED then
    health.error("model not configured: " .. probe.err.message, {
      "Set the variables in the environment Neovim starts with, or in setup({ cmd_env = { ... } })",
      "Or write them to $INVINCAT_HOME/config.toml (see docs/configuration.md)",
    })
  elseif probe.err then
    health.error("the server refused a request: " .. probe.err.message)
  else
    local model = (config.cmd_env or {}).INVINCAT_MODEL or vim.env.INVINCAT_MODEL
    health.ok("model configured" .. (model and (": " .. model) or "") .. " (the server opened its session)")
    local threads = type(probe.result) == "table" and probe.result.threads or {}
    health.info(("%d saved thread(s) in %s"):format(#threads, invincat.root_dir()))
  end
end

return M
