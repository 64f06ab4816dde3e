-- Neovim 0.11's vim.lsp.config/enable with the plugin's lsp/invincat.lua: the client
-- starts for a project file, and :Invincat (and :checkhealth) use that client instead of
-- starting a second one.
local T = require("invincat_test")

T.run(function()
  vim.lsp.config("invincat", { cmd = { T.args.invincat, "--stdio" } })
  vim.lsp.enable("invincat")
  vim.cmd.edit("main.py")
  local client = T.wait("the client started by vim.lsp.enable", function()
    return vim.lsp.get_clients({ name = "invincat", bufnr = 0 })[1]
  end)
  vim.cmd("Invincat chat hello")
  T.wait_chat("— turn completed —")
  -- :checkhealth asks the running client (no second server).
  vim.cmd("checkhealth invincat")
  local report = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")

  T.done({
    report = report,
    clients = #vim.lsp.get_clients({ name = "invincat" }),
    same_client = require("invincat").client().id == client.id,
    root = client.root_dir,
    chat = T.chat_text(),
  })
end)
