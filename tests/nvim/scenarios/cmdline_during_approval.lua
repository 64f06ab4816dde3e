-- The user types on the command line (":1111…") while a write asks for approval. Nothing
-- opens or answers: the command line keeps every key, and even the announcement waits
-- until the command line is closed (a message would clobber it). Then the user rejects
-- it in the approval view with a reason typed at Neovim's own input() prompt.
local T = require("invincat_test")

T.run_async(function()
  vim.ui.select = T.real_select
  vim.ui.input = T.real_input
  local approvals = require("invincat.approvals")
  local function announcements()
    return #vim.tbl_filter(function(note)
      return note.message:find("approval", 1, true) ~= nil
    end, T.notifications)
  end

  vim.cmd.edit("draft.txt")
  local win = vim.api.nvim_get_current_win()
  vim.cmd("Invincat chat write a greeting")
  vim.api.nvim_set_current_win(win)

  local typist = T.typist(":", { "1" }, 40)
  T.await("the approval to arrive", function()
    return next(approvals.pending()) or T.chat_text():find("Write file hello.txt", 1, true)
  end)
  local arrived_at = typist.count()
  T.await("more typing after the approval arrived", function()
    return typist.count() >= arrived_at + 40
  end)
  typist.stop()
  T.await("the typist to stop", typist.stopped)
  T.await("every typed key to be read", function()
    return vim.fn.getchar(1) == 0
  end)
  local paused_at = vim.uv.hrtime()
  -- A pause on the command line: still no message over it.
  T.await("a pause of 1.5 s", function()
    return vim.uv.hrtime() - paused_at > 1.5e9
  end)
  local on_cmdline = {
    mode = vim.api.nvim_get_mode().mode,
    cmdline = vim.fn.getcmdline(),
    typed = typist.typed(),
    same_window = vim.api.nvim_get_current_win() == win,
    tabs = #vim.api.nvim_list_tabpages(),
    pending = vim.tbl_count(approvals.pending()),
    written = vim.uv.fs_stat("hello.txt") ~= nil,
    announced = announcements(),
  }
  io.stderr:write("on the command line: " .. vim.inspect(on_cmdline) .. "\n")

  vim.api.nvim_input("<Esc>")
  T.await("the announcement once the command line closed", function()
    return announcements() > 0
  end, T.DEADLINE_MS)
  vim.api.nvim_input(":Invincat approvals<CR>")
  T.await("the approval view", function()
    return vim.bo.filetype == "invincat-approvals"
  end)
  vim.api.nvim_input("r")
  T.await("the reason prompt", function()
    return vim.api.nvim_get_mode().mode == "c"
  end)
  vim.api.nvim_input("not now<CR>")
  T.await("the turn to complete", function()
    return T.chat_text():find("— turn completed —", 1, true)
  end)
  T.await("focus back in the draft", function()
    return vim.api.nvim_get_current_win() == win
  end)

  T.done({
    on_cmdline = on_cmdline,
    after = {
      mode = vim.api.nvim_get_mode().mode,
      tabs = #vim.api.nvim_list_tabpages(),
      written = vim.uv.fs_stat("hello.txt") ~= nil,
    },
    chat = T.chat_text(),
  })
end)
