-- First session: a write asks for approval; it is left pending and Neovim quits.
local T = require("invincat_test")

T.run(function()
  vim.cmd("Invincat chat write a greeting")
  T.wait_chat("Write file hello.txt — pending")
  T.done({ chat = T.chat_text() })
end)
