-- Real keys: in app.py, `:Invincat compose<CR>` opens the compose buffer in Insert mode;
-- two lines are typed with `#buffer` and `@ut` completed by <C-x><C-o>, and `:w` sends
-- them. Then, from the chat, `c` opens it again and <C-s> sends a bad reference (kept,
-- with an error) and, once fixed, a good one. The `invincat/chat` requests are recorded.
local T = require("invincat_test")

T.run_async(function()
  T.allow_errors = true -- the bad reference is an error notification, on purpose
  vim.cmd.edit("util.py")
  vim.cmd.edit("app.py")
  local file_win = vim.api.nvim_get_current_win()
  local client = T.await("the client", function()
    local c = require("invincat").start()
    return c and c.initialized and c
  end)
  local sent = {}
  local request = client.request
  client.request = function(self, method, params, ...)
    if method == "invincat/chat" then
      table.insert(sent, vim.deepcopy(params))
    end
    return request(self, method, params, ...)
  end

  vim.api.nvim_input(":Invincat compose<CR>")
  local compose = T.await("the compose buffer", function()
    local buf = vim.api.nvim_get_current_buf()
    return vim.api.nvim_buf_get_name(buf) == "invincat://compose" and vim.api.nvim_get_mode().mode == "i" and buf
  end)
  local opened = {
    filetype = vim.bo[compose].filetype,
    winbar = vim.wo.winbar,
    below_file = vim.api.nvim_win_get_position(0)[1] > vim.api.nvim_win_get_position(file_win)[1],
  }
  vim.api.nvim_input("Explain #buffer, and how it uses @ut<C-x><C-o>")
  T.await("the completed mention", function()
    return (vim.api.nvim_buf_get_lines(compose, 0, 1, false)[1] or ""):find("@util.py", 1, true)
  end)
  vim.api.nvim_input(" please.<CR>Second line.<Esc>:w<CR>")
  T.await("the first chat request", function()
    return #sent == 1
  end)
  T.await("the first turn to end", function()
    return T.chat_text():find("— turn completed —", 1, true)
  end)
  local after_first = {
    compose_open = vim.fn.bufexists("invincat://compose") == 1,
    in_chat = vim.api.nvim_get_current_buf() == require("invincat.chat").buf(),
  }

  -- From the chat: `c`, a reference to a buffer that is not loaded, <C-s>.
  vim.api.nvim_input("cSee #buffer:missing.py<C-s>")
  T.await("the error", function()
    for _, note in ipairs(T.notifications) do
      if note.message:find("missing.py", 1, true) then
        return true
      end
    end
  end)
  local kept = T.lines(vim.api.nvim_get_current_buf())
  local sent_count_after_error = #sent
  vim.api.nvim_input("<Esc>ccCompare #buffer:util.py with #buffer<C-s>")
  T.await("the second chat request", function()
    return #sent == 2
  end)
  T.await("the second turn to end", function()
    local _, ends = T.chat_text():gsub("— turn completed —", "")
    return ends == 2
  end)

  T.done({
    sent = sent,
    opened = opened,
    after_first = after_first,
    kept = kept,
    sent_count_after_error = sent_count_after_error,
    app = vim.uri_from_fname(vim.fn.fnamemodify("app.py", ":p")),
    util = vim.uri_from_fname(vim.fn.fnamemodify("util.py", ":p")),
    chat = T.chat_text(),
  })
end)
