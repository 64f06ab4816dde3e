-- First session: a write asks for approval; the prompt is dismissed and Neovim quits.
local T = require("invincat_test")

T.run(function()
  T.on_select("Write file hello.txt", nil)
  vim.cmd("Invincat chat write a greeting")
  T.wait_chat("Write file hello.txt — pending")
  T.wait("the prompt", function()
    return #T.prompts == 1
  end)
  T.done({ chat = T.chat_text() })
end)
