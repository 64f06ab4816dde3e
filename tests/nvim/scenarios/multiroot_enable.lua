-- vim.lsp.enable("invincat") with files of two projects: the second project's file joins
-- the client the first one started (its root becomes a workspace folder, announced before
-- its didOpen) instead of starting a second server.
local T = require("invincat_test")

T.run(function()
  T.allow_errors = true
  vim.lsp.config("invincat", { cmd = { T.args.invincat, "--stdio" } })
  vim.lsp.enable("invincat")
  vim.cmd.edit("a.py")
  local client = T.wait("the client started by vim.lsp.enable", function()
    local c = vim.lsp.get_clients({ name = "invincat", bufnr = 0 })[1]
    return c and c.initialized and c
  end)
  local sent = {}
  local notify = client.notify
  client.notify = function(self, method, params, ...)
    if method == "workspace/didChangeWorkspaceFolders" or method == "textDocument/didOpen" then
      table.insert(sent, { method = method, params = vim.deepcopy(params) })
    end
    return notify(self, method, params, ...)
  end

  vim.cmd.edit(vim.fn.fnameescape(T.args.other .. "/b.py"))
  local b_buf = vim.api.nvim_get_current_buf()
  T.wait("the other file attached", function()
    return #vim.lsp.get_clients({ name = "invincat", bufnr = b_buf }) > 0
  end)
  -- A second client would have been created by now (Neovim starts it from the FileType
  -- autocommand) but lists only once its server answered `initialize`: count those too.
  local all_clients = #vim.lsp.get_clients({ name = "invincat", _uninitialized = true })

  T.done({
    sent = sent,
    clients = all_clients,
    attached_to = vim.lsp.get_clients({ name = "invincat", bufnr = b_buf })[1].id == client.id,
    folders = client.workspace_folders,
  })
end)
