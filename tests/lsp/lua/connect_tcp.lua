-- The recipe of docs/editors.md "Connecting over a socket": a Neovim without the plugin
-- attaches to `invincat --tcp` (token from the connection-info file) or `--socket`, runs
-- one chat turn and detaches. Writes {result=..., err=...} as JSON to $RESULT.
local function finish(value)
  vim.fn.writefile({ vim.json.encode(value) }, os.getenv("RESULT"))
  vim.cmd("qa!")
end

local ok, failure = pcall(function()
  local cmd, init_options
  if os.getenv("SOCKET") then
    cmd = vim.lsp.rpc.connect(os.getenv("SOCKET"))
  else
    local info = vim.json.decode(table.concat(vim.fn.readfile(os.getenv("INFO")), "\n"))
    cmd = vim.lsp.rpc.connect(info.host, info.port)
    init_options = { token = info.token }
  end
  vim.lsp.start({
    name = "invincat",
    cmd = cmd,
    init_options = init_options,
    root_dir = os.getenv("ROOT"),
    on_init = function(client)
      client:request("invincat/chat", { prompt = "hi", wait = true }, function(err, result)
        client:stop()
        finish({ err = err, result = result })
      end)
    end,
  })
end)
if not ok then
  finish({ err = tostring(failure) })
end
vim.defer_fn(function()
  finish({ err = "timed out" })
end, 60000)
