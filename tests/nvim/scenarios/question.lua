-- The agent asks a question (ask_user): its options are offered with vim.ui.select.
local T = require("invincat_test")

T.run(function()
  T.on_select("Which file should I greet in?", "b.txt")
  vim.cmd("Invincat chat greet someone")
  T.wait_chat("— turn completed —")
  T.done({ chat = T.chat_text() })
end)
