-- A proposed plan arrives while the user edits in Normal mode ("ax<Esc>" again and again).
-- Before the fix the plan float opened focused, and its `a` mapping took the user's next
-- "a" as "approve the plan". Now nothing opens: every key edits the user's buffer and the
-- plan stays proposed until the user opens it (`:Invincat plan`) and rejects it (`r`,
-- the reason typed at Neovim's own input() prompt); focus comes back to their window.
local T = require("invincat_test")

T.run_async(function()
  vim.ui.select = T.real_select
  vim.ui.input = T.real_input
  local plan = require("invincat.plan")

  vim.cmd.edit("draft.txt")
  local win, buf = vim.api.nvim_get_current_win(), vim.api.nvim_get_current_buf()
  vim.cmd("Invincat plan add a greeting file")
  vim.api.nvim_set_current_win(win)

  local typist = T.typist("<Esc>", { "a", "x", "<Esc>" }, 40)
  T.await("the plan to arrive", function()
    return plan.state().phase ~= "planning" or T.chat_text():find("Plan proposed", 1, true)
  end)
  local arrived_at = typist.count()
  T.await("more typing after the plan arrived", function()
    return typist.count() >= arrived_at + 45
  end)
  typist.stop()
  T.await("the typist to stop", typist.stopped)
  T.await("every typed key to be read", function()
    return vim.fn.getchar(1) == 0
  end)

  local while_typing = {
    phase = plan.state().phase,
    float_open = plan.state().win ~= nil and vim.api.nvim_win_is_valid(plan.state().win),
    mode = vim.api.nvim_get_mode().mode,
    same_window = vim.api.nvim_get_current_win() == win,
    line = T.lines(buf)[1],
    typed = typist.typed(),
    chat = T.chat_text(),
  }
  io.stderr:write("while typing: " .. vim.inspect(while_typing) .. "\n")

  vim.api.nvim_input(":Invincat plan<CR>")
  T.await("the plan float", function()
    return vim.api.nvim_get_current_win() == plan.state().win
  end)
  vim.api.nvim_input("r")
  T.await("the reason prompt", function()
    return vim.api.nvim_get_mode().mode == "c"
  end)
  vim.api.nvim_input("not now<CR>")
  T.await("the plan's turn to end", function()
    return T.chat_text():find("— turn completed —", 1, true)
  end)
  T.await("focus back in the draft", function()
    return vim.api.nvim_get_current_win() == win
  end)

  T.done({ while_typing = while_typing, phase = plan.state().phase, chat = T.chat_text() })
end)
