-- Second session: the approval left pending is listed at start; :Invincat approve on its
-- line resumes the turn, whose events stream into the chat.
local T = require("invincat_test")

T.run(function()
  vim.cmd("Invincat chat")
  T.wait_chat("pending from an earlier session")
  for row, line in ipairs(T.lines()) do
    if line:find("Write file hello.txt — pending", 1, true) then
      vim.api.nvim_win_set_cursor(0, { row, 0 })
    end
  end
  vim.cmd("Invincat approve")
  T.wait_chat("— turn completed —")
  T.done({ chat = T.chat_text() })
end)
