-- Real keys in the inline preview of a proposed edit, with Neovim's own vim.ui.input:
-- `gra` typed key by key (Neovim 0.11's code-action mapping) opens the code actions, not a reject prompt;
-- `gR` followed at once by "a<CR>" opens the reject prompt empty (the typed-ahead keys
-- are dropped) and nothing is decided; <Esc> keeps the edit pending; only a reason typed
-- into the open prompt and its Enter reject it.
local T = require("invincat_test")

T.run_async(function()
  vim.ui.input = T.real_input
  vim.cmd.edit("notes.txt")
  local buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, T.args.buffer)
  vim.cmd("Invincat chat rename line two")
  local approvals = require("invincat.approvals")
  T.await("the approval", function()
    return next(approvals.pending())
  end)
  local preview = require("invincat.preview")
  vim.api.nvim_input(":Invincat approvals<CR>d")
  T.await("the inline preview", function()
    return preview.approval_in(buf)
  end)
  local header = preview.describe(buf).header

  T.on_select("Code actions", nil) -- looked at, dismissed
  -- Typed as a person types: "gr", a pause (well within 'timeoutlen'), then "a".
  vim.o.timeoutlen = 60000
  -- (A libuv timer: Neovim runs no scheduled Lua while it waits for a mapping's next key.)
  vim.api.nvim_input("gr")
  local timer = assert(vim.uv.new_timer())
  timer:start(300, 0, function()
    timer:close()
    vim.api.nvim_input("a") -- api-fast: allowed in the timer's callback
  end)
  T.await("the code action menu", function()
    return #vim.tbl_filter(function(p)
      return p.prompt:find("Code actions", 1, true) ~= nil
    end, T.prompts) > 0
  end)
  T.await("the keys to be read", function()
    return vim.fn.getchar(1) == 0
  end)
  local after_gra = { mode = vim.api.nvim_get_mode().mode, pending = vim.tbl_count(approvals.pending()) }

  vim.api.nvim_input("gRa<CR>")
  T.await("the reject prompt", function()
    return vim.api.nvim_get_mode().mode == "c"
  end)
  local prompt = { text = vim.fn.getcmdline(), pending = vim.tbl_count(approvals.pending()) }
  vim.api.nvim_input("<Esc>")
  T.await("Normal mode", function()
    return vim.api.nvim_get_mode().mode == "n"
  end)
  local after_esc = { pending = vim.tbl_count(approvals.pending()), previewed = preview.approval_in(buf) ~= nil }

  vim.api.nvim_input("gR")
  T.await("the reject prompt again", function()
    return vim.api.nvim_get_mode().mode == "c"
  end)
  vim.api.nvim_input("not this way<CR>")
  T.await("the turn to end", function()
    return T.chat_text():find("— turn completed —", 1, true)
  end)
  T.done({
    header = header,
    after_gra = after_gra,
    prompt = prompt,
    after_esc = after_esc,
    lines = T.lines(buf),
    chat = T.chat_text(),
  })
end)
