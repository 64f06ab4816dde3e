-- Two projects in one session: the workspace (the cwd's root) and another root opened by
-- path. The second root becomes a workspace folder of the one client (its didOpen after
-- the folder), and `:Invincat chat` / `:Invincat memory` send the `folder` of the current
-- buffer. What the client sends is recorded (requests and notifications).
local T = require("invincat_test")

T.run_async(function()
  local invincat = require("invincat")
  T.allow_errors = true -- a server without multi-root may refuse the other root's requests
  vim.cmd.edit("a.py")
  local a_buf = vim.api.nvim_get_current_buf()

  local client = T.await("the client", function()
    local c = invincat.start()
    return c and c.initialized and c
  end)

  local sent = {} ---@type {kind: string, method: string, params: any}[]
  local request, notify = client.request, client.notify
  client.request = function(self, method, params, ...)
    if method:match("^invincat/") then
      table.insert(sent, { kind = "request", method = method, params = vim.deepcopy(params) })
    end
    return request(self, method, params, ...)
  end
  client.notify = function(self, method, params, ...)
    if method == "workspace/didChangeWorkspaceFolders" or method == "textDocument/didOpen" then
      table.insert(sent, { kind = "notify", method = method, params = vim.deepcopy(params) })
    end
    return notify(self, method, params, ...)
  end
  local function of(method)
    return vim.tbl_filter(function(s)
      return s.method == method
    end, sent)
  end

  -- A file of another root: its folder joins the same client.
  vim.cmd.edit(vim.fn.fnameescape(T.args.other .. "/b.py"))
  local b_buf = vim.api.nvim_get_current_buf()
  T.await("the other file attached", function()
    return vim.lsp.buf_is_attached(b_buf, client.id)
  end)

  -- :Invincat chat from b.py: the chat names b.py's folder.
  vim.cmd("Invincat chat hello from b")
  T.await("the chat request", function()
    return #of("invincat/chat") == 1
  end)

  -- :Invincat memory from b.py, then from a.py: each lists its own folder's project.
  vim.cmd("wincmd p") -- back to b.py's window (the chat took the focus)
  local from_b = vim.api.nvim_get_current_buf()
  vim.cmd("Invincat memory")
  T.await("the memory list of b", function()
    return #of("invincat/memory/list") == 1
  end)
  local memory = require("invincat.memory")
  T.await("the sidebar loaded", function()
    return memory.state().loaded
  end)
  local title_b = T.lines(memory.state().buf)[1]
  local store_b = memory.state().stores.project
  -- A server with multi-root lists its projects in invincat/status (docs/protocol.md).
  local status = client:request_sync("invincat/status", vim.empty_dict(), T.DEADLINE_MS)
  local multiroot_server = status and status.result and status.result.projects ~= nil

  -- A change of the other project's store does not reload; one of this project's does.
  memory.on_did_change({ scope = "project", batchId = "b_x", folder = T.args.workspace_uri })
  vim.wait(300)
  local lists_after_other = #of("invincat/memory/list")
  memory.on_did_change({ scope = "project", batchId = "b_y", folder = T.args.other_uri })
  T.await("the reload for b's change", function()
    return #of("invincat/memory/list") == 2
  end)

  vim.cmd("wincmd p")
  vim.cmd.buffer(a_buf)
  local from_a = vim.api.nvim_get_current_buf()
  vim.cmd("Invincat memory")
  T.await("the memory list of a", function()
    return #of("invincat/memory/list") == 3
  end)

  T.done({
    sent = sent,
    clients = #vim.lsp.get_clients({ name = "invincat" }),
    folders = client.workspace_folders,
    a_attached = vim.lsp.buf_is_attached(a_buf, client.id),
    from_b = vim.api.nvim_buf_get_name(from_b),
    from_a = vim.api.nvim_buf_get_name(from_a),
    title_b = title_b,
    store_b = store_b or vim.NIL,
    multiroot_server = multiroot_server or false,
    lists_after_other = lists_after_other,
  })
end)
