-- Real keys: in app.py, `2GVjj` selects lines 2-4 and `:` makes the command line
-- `:'<,'>`; `Invincat chat explain<CR>` sends the lines as the selection, with the
-- cursor, the visible lines and the diagnostics of the range (not the one outside it).
-- Then `1G:Invincat chat again<CR>` (no range) sends the cursor and no selection.
-- The `invincat/chat` requests the client sent are recorded.
local T = require("invincat_test")

T.run_async(function()
  vim.cmd.edit("app.py")
  local buf = vim.api.nvim_get_current_buf()
  local win = vim.api.nvim_get_current_win()
  local ns = vim.api.nvim_create_namespace("fake-linter")
  local row3 = T.args.lines[3]
  local col = assert(row3:find("foo", 1, true)) - 1
  vim.diagnostic.set(ns, buf, {
    { lnum = 2, col = col, end_lnum = 2, end_col = col + 3, severity = vim.diagnostic.severity.ERROR,
      message = '"foo" is not defined', source = "FakeLint", code = "undefined-name" },
    { lnum = 4, col = 0, severity = vim.diagnostic.severity.WARN, message = "outside the range", source = "FakeLint" },
  })

  -- Start the client first, so its requests can be recorded.
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

  vim.api.nvim_input("2GVjj:Invincat chat explain<CR>")
  T.await("the first chat request", function()
    return #sent == 1
  end)
  T.await("the first turn to end", function()
    return T.chat_text():find("— turn completed —", 1, true)
  end)

  vim.api.nvim_set_current_win(win)
  vim.api.nvim_input("1G:Invincat chat again<CR>")
  T.await("the second chat request", function()
    return #sent == 2
  end)
  T.await("the second turn to end", function()
    local _, ends = T.chat_text():gsub("— turn completed —", "")
    return ends == 2
  end)

  T.done({
    sent = sent,
    encoding = client.offset_encoding,
    uri = vim.uri_from_bufnr(buf),
    chat = T.chat_text(),
  })
end)
