-- Without a server: :Invincat chat explains what to install or set, and the chat does not
-- stay "working". Invalid setup() options are reported and the defaults used instead.
local T = require("invincat_test")

T.run(function()
  T.allow_errors = true
  vim.cmd("Invincat chat hi")
  T.wait_chat("cannot start the server")
  local status = require("invincat").status()

  require("invincat").setup({ cmd = "invincat --stdio", chat = { layout = "tab" } })
  T.done({ chat = T.chat_text(), status = status, cmd = require("invincat").config.cmd })
end)
