-- :Invincat chat streams the answer into the chat buffer; a second prompt continues the
-- thread; :Invincat threads reloads it from the server's history.
local T = require("invincat_test")

T.run(function()
  vim.cmd("Invincat chat say hello")
  local chat_win = vim.api.nvim_get_current_win()
  T.wait_chat("— turn completed —")
  local streamed = T.chat_text()
  local winbar = vim.wo[chat_win].winbar

  vim.cmd("Invincat chat and again")
  T.wait("the second turn to end", function()
    local _, ends = T.chat_text():gsub("— turn completed —", "")
    return ends == 2
  end)
  local thread = require("invincat.chat").thread_id()

  T.on_select("Invincat thread", "say hello")
  vim.cmd("Invincat threads")
  T.wait("the history to replace the transcript", function()
    return not T.chat_text():find("turn completed", 1, true) and T.chat_text():find("second answer", 1, true)
  end)

  T.done({
    streamed = streamed,
    winbar = winbar,
    thread = thread,
    history = T.chat_text(),
    chat_is_split = #vim.api.nvim_list_wins() == 2,
    chat_filetype = vim.bo[require("invincat.chat").buf()].filetype,
  })
end)
