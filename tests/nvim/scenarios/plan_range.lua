-- `:'<,'>Invincat plan` with no prompt (and no plan yet) asks for the prompt; the plan
-- it starts still sends the selected lines. The `invincat/chat` requests are recorded.
local T = require("invincat_test")

T.run_async(function()
  vim.cmd.edit("app.py")
  local uri = vim.uri_from_bufnr(0)
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
  T.on_input("Invincat plan:", "plan the lines")

  vim.api.nvim_input("2GVj:Invincat plan<CR>")
  T.await("the plan request", function()
    return #sent == 1
  end)
  T.await("the plan's turn to end", function()
    return T.chat_text():find("— turn ", 1, true)
  end)
  T.done({ sent = sent, uri = uri })
end)
