-- Neovim 0.11 configuration for the Invincat language server:
--   vim.lsp.enable("invincat")       -- start it for the buffers of a project
--   vim.lsp.config("invincat", { cmd = { "/path/to/.venv/bin/invincat", "--stdio" } })
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

---@type vim.lsp.Config
return {
  cmd = { "invincat", "--stdio" },
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
