-- A write left pending (prompt dismissed) is approved with :Invincat approve on its chat line.
local T = require("invincat_test")

T.run(function()
  T.on_select("Write file hello.txt", nil)
  vim.cmd("Invincat chat write a greeting")
  T.wait_chat("Write file hello.txt — pending")
  T.wait("the prompt to be dismissed", function()
    return #T.prompts == 1 and #vim.api.nvim_list_tabpages() == 2
  end)
  -- Back to the chat window (the diff tab of the new file is open), onto the approval line.
  vim.cmd("tabfirst")
  vim.cmd("Invincat chat")
  local chat = require("invincat.chat")
  for row, line in ipairs(T.lines()) do
    if line:find("Write file hello.txt", 1, true) then
      vim.api.nvim_win_set_cursor(0, { row, 0 })
    end
  end
  local status = require("invincat").status()
  vim.cmd("Invincat approve")
  T.wait_chat("— turn completed —")
  T.done({ chat = T.chat_text(), status_while_pending = status, status_after = chat.status() })
end)
