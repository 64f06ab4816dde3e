-- A repository with its own executable `invincat`, Neovim started in it with `.` and an
-- empty entry first on PATH, the plugin's command the bare name `invincat`: `:Invincat
-- chat`, `:checkhealth invincat` and `vim.lsp.enable("invincat")` each start (or report)
-- the real server from an absolute PATH entry, or say clearly that there is none.
local T = require("invincat_test")

---@return string
local function health_report()
  vim.cmd("checkhealth invincat")
  local lines = T.wait("the health report", function()
    for _, buf in ipairs(vim.api.nvim_list_bufs()) do
      if vim.bo[buf].filetype == "checkhealth" then
        local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
        local text = table.concat(lines, "\n")
        if text:find("model configured", 1, true) or text:find("ERROR", 1, true) then
          return lines
        end
      end
    end
  end)
  vim.cmd("tabclose") -- :checkhealth opened its own tab
  return table.concat(lines, "\n")
end

T.run(function()
  local found = T.args.server_on_path
  T.allow_errors = not found
  local result = {}

  vim.cmd("Invincat chat hello")
  if found then
    T.wait_chat("— turn completed —")
    result.program = require("invincat").client().config.cmd[1]
    result.chat = T.chat_text()
    result.report = health_report()
    -- The client stops; vim.lsp.enable's own start is checked next.
    local stopped = require("invincat").client()
    stopped:stop()
    T.wait("the first client to stop", function()
      return stopped:is_stopped()
    end)
  else
    T.wait_chat("cannot start the server")
    result.chat = T.chat_text()
    result.report = health_report()
  end

  vim.lsp.enable("invincat")
  vim.cmd.edit("main.py")
  if found then
    local client = T.wait("the client started by vim.lsp.enable", function()
      return vim.lsp.get_clients({ name = "invincat", bufnr = 0 })[1]
    end)
    T.wait("the enabled client to initialize", function()
      return client.initialized
    end)
    result.enabled_initialized = true
  else
    T.wait("vim.lsp.enable's start to fail", function()
      for _, note in ipairs(T.notifications) do
        if note.message:find("Invincat: cannot start the server", 1, true) then
          return true
        end
      end
    end)
    result.enabled_clients = #vim.lsp.get_clients({ name = "invincat" })
  end
  T.done(result)
end)
