-- A pending write (nothing opened by itself) is approved with :Invincat approve on its chat line.
local T = require("invincat_test")

T.run(function()
  vim.cmd("Invincat chat write a greeting")
  T.wait_chat("Write file hello.txt — pending")
  local tabs_while_pending = #vim.api.nvim_list_tabpages()
  local chat = require("invincat.chat")
  for row, line in ipairs(T.lines()) do
    if line:find("Write file hello.txt", 1, true) then
      vim.api.nvim_win_set_cursor(0, { row, 0 })
    end
  end
  local row = vim.api.nvim_win_get_cursor(0)[1] - 1
  local hint = {}
  for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(0, -1, { row, 0 }, { row, -1 }, { details = true })) do
    for _, chunk in ipairs(mark[4].virt_text or {}) do
      table.insert(hint, chunk[1])
    end
  end
  local status = require("invincat").status()
  vim.cmd("Invincat approve")
  T.wait_chat("— turn completed —")
  T.done({
    chat = T.chat_text(),
    hint = table.concat(hint),
    tabs_while_pending = tabs_while_pending,
    status_while_pending = status,
    status_after = chat.status(),
  })
end)
