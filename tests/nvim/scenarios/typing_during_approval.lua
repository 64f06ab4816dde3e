-- The user types lines "1<CR>" in Insert mode while a write asks for approval, with
-- Neovim's own vim.ui.select: its inputlist() reads a typed line as the item number, so
-- before the fix a prompt that opened before a "1" chose item 1, "Approve" (one that
-- opened before a <CR> was dismissed, and the following keys went into the diff tab).
-- Nothing may answer the approval: the keys land in the user's buffer, the window, tab
-- and mode stay. Then the user decides explicitly (:Invincat approvals, `a`) and is back
-- in the window they were typing in.
local T = require("invincat_test")

T.run_async(function()
  vim.ui.select = T.real_select
  vim.ui.input = T.real_input
  local approvals = require("invincat.approvals")

  vim.cmd.edit("draft.txt")
  local win, buf = vim.api.nvim_get_current_win(), vim.api.nvim_get_current_buf()
  vim.cmd("Invincat chat write a greeting")
  vim.api.nvim_set_current_win(win) -- back to writing while the agent works

  local typist = T.typist("i", { "1", "<CR>" }, 40)
  T.await("the approval to arrive", function()
    return next(approvals.pending()) or T.chat_text():find("Write file hello.txt", 1, true)
  end)
  local arrived_at = typist.count()
  T.await("more typing after the approval arrived", function()
    return typist.count() >= arrived_at + 40
  end)
  local function announcements()
    return #vim.tbl_filter(function(note)
      return note.message:find("approval", 1, true) ~= nil
    end, T.notifications)
  end
  local announced_while_typing = announcements()
  typist.stop()
  T.await("the typist to stop", typist.stopped)
  T.await("every typed key to be read", function()
    return vim.fn.getchar(1) == 0
  end)

  local while_typing = {
    mode = vim.api.nvim_get_mode().mode,
    same_window = vim.api.nvim_get_current_win() == win,
    tabs = #vim.api.nvim_list_tabpages(),
    lines = T.lines(buf),
    typed = typist.typed(),
    pending = vim.tbl_count(approvals.pending()),
    written = vim.uv.fs_stat("hello.txt") ~= nil,
    chat = T.chat_text(),
    announced = announced_while_typing,
  }
  io.stderr:write("while typing: " .. vim.inspect(while_typing) .. "\n")

  T.await("the approval to be announced", function()
    return announcements() > 0
  end, T.DEADLINE_MS)
  local announced_in_mode = vim.api.nvim_get_mode().mode

  vim.api.nvim_input("<Esc>")
  T.await("Normal mode", function()
    return vim.api.nvim_get_mode().mode == "n"
  end)
  vim.api.nvim_input(":Invincat approvals<CR>")
  T.await("the approval view", function()
    return vim.bo.filetype == "invincat-approvals"
  end)
  local view = T.lines(0)
  vim.api.nvim_input("a")
  T.await("the turn to complete", function()
    return T.chat_text():find("— turn completed —", 1, true)
  end)
  T.await("focus back in the draft", function()
    return vim.api.nvim_get_current_win() == win
  end)

  T.done({
    while_typing = while_typing,
    announced_in_mode = announced_in_mode,
    view = view,
    after = {
      mode = vim.api.nvim_get_mode().mode,
      same_window = vim.api.nvim_get_current_win() == win,
      tabs = #vim.api.nvim_list_tabpages(),
      lines = T.lines(buf),
      written = vim.uv.fs_stat("hello.txt") ~= nil,
    },
    chat = T.chat_text(),
  })
end)
