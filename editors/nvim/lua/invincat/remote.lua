--- `:Invincat remote`: the threads whose run on a LangGraph deployment waits for an
--- approval (`invincat/remote/list`, docs/remote.md) in a scratch buffer, one call a line
--- under its thread. `a` on a thread's line asks, then approves every call it waits on;
--- `x` asks, then rejects them (`invincat/remote/approve`, nothing of it runs); `c` asks,
--- then cancels the thread's pending and running runs (`invincat/remote/cancel`; the core
--- says when there is none).
local invincat = require("invincat")
local protocol = require("invincat.protocol")
local ui = require("invincat.ui")

local M = {}

---@class invincat.RemoteCall
---@field tool_name string
---@field summary string The call's redacted, cut title, made by the core.

---@class invincat.RemotePending
---@field deployment string
---@field thread_id string
---@field kind string
---@field calls invincat.RemoteCall[]

---@class invincat.RemoteState
---@field buf integer?
---@field folder string?
---@field items invincat.RemotePending[]
---@field skipped integer
---@field rows table<integer, invincat.RemotePending> 1-based line → the thread it shows
---@field loaded boolean A list answer arrived since the last refresh.
local state = { items = {}, skipped = 0, rows = {}, loaded = false }

local HEADER = {
  " Invincat remote runs waiting for approval",
  " a approve · x reject · c cancel run · R refresh · q close",
  "",
}

---@return invincat.RemoteState
function M.state()
  return state
end

--- What a server sent, shown as text: no newline or other control character in a line.
---@param value any
---@return string
local function text(value)
  return (tostring(value or ""):gsub("%c", " "))
end

--- Only the items of the shape the protocol documents: one odd item costs that item.
---@param pending any
---@return invincat.RemotePending[]
local function well_formed(pending)
  local out = {}
  if type(pending) ~= "table" then
    return out
  end
  for _, item in ipairs(pending) do
    if type(item) == "table" and type(item.thread_id) == "string" and type(item.deployment) == "string"
      and type(item.calls) == "table" then
      table.insert(out, item)
    end
  end
  return out
end

--- The thread's heading line.
---@param item invincat.RemotePending
---@return string
function M.line(item)
  return ("%s  %s"):format(text(item.deployment), text(item.thread_id))
end

local function render()
  local buf = state.buf
  if not (buf and vim.api.nvim_buf_is_valid(buf)) then
    return
  end
  local lines = vim.deepcopy(HEADER)
  state.rows = {}
  if #state.items == 0 then
    table.insert(lines, state.loaded and "  (no remote run waits for an approval)" or "  (loading…)")
  end
  for _, item in ipairs(state.items) do
    table.insert(lines, M.line(item))
    state.rows[#lines] = item
    for _, call in ipairs(item.calls) do
      if type(call) == "table" then
        table.insert(lines, ("    %s: %s"):format(text(call.tool_name), text(call.summary)))
        state.rows[#lines] = item
      end
    end
  end
  if (state.skipped or 0) > 0 then
    table.insert(lines, ("! %d waiting thread(s) in a shape Invincat does not know"):format(state.skipped))
  end
  ui.set_lines(buf, lines)
end

---@param done? fun()
function M.refresh(done)
  state.loaded = false
  local params = state.folder and { folder = state.folder } or {}
  invincat.request(protocol.REMOTE_LIST, params, function(err, result)
    if err then
      invincat.notify(err.message, vim.log.levels.ERROR)
    else
      state.items = well_formed(result and result.pending)
      state.skipped = tonumber(result and result.skipped) or 0
    end
    state.loaded = true
    render()
    if done then
      done()
    end
  end)
end

---@return invincat.RemotePending?
function M.at_cursor()
  return state.rows[vim.api.nvim_win_get_cursor(0)[1]]
end

--- Ask, then approve (or reject) every call `item` waits on; the list refreshes after.
---@param item invincat.RemotePending?
---@param reject boolean
function M.decide(item, reject)
  if not item then
    invincat.notify("no remote thread on this line", vim.log.levels.WARN)
    return
  end
  local verb = reject and "Reject" or "Approve"
  vim.ui.select({ verb, "Keep waiting" }, {
    prompt = ("%s %s on %s?"):format(verb, text(item.thread_id), text(item.deployment)),
    kind = "invincat.remote",
  }, function(choice)
    if choice ~= verb then
      return
    end
    local params = { threadId = item.thread_id, deployment = item.deployment, reject = reject, folder = state.folder }
    invincat.request(protocol.REMOTE_APPROVE, params, function(err, result)
      if err then
        invincat.notify(err.message, vim.log.levels.ERROR)
      else
        local calls = type(result) == "table" and type(result.calls) == "table" and result.calls or {}
        invincat.notify(("%s on %s: %s"):format(reject and "rejected" or "approved", text(item.deployment),
          text(table.concat(vim.tbl_map(text, calls), "; "))))
      end
      M.refresh()
    end)
  end)
end

--- Ask, then cancel the pending and running runs of `item`'s thread; the list refreshes after.
---@param item invincat.RemotePending?
function M.cancel(item)
  if not item then
    invincat.notify("no remote thread on this line", vim.log.levels.WARN)
    return
  end
  vim.ui.select({ "Cancel run", "Keep running" }, {
    prompt = ("Cancel the runs of %s on %s?"):format(text(item.thread_id), text(item.deployment)),
    kind = "invincat.remote",
  }, function(choice)
    if choice ~= "Cancel run" then
      return
    end
    local params = { threadId = item.thread_id, deployment = item.deployment, folder = state.folder }
    invincat.request(protocol.REMOTE_CANCEL, params, function(err, result)
      if err then
        invincat.notify(err.message, vim.log.levels.ERROR)
      else
        local runs = type(result) == "table" and type(result.cancelled) == "table" and result.cancelled or {}
        invincat.notify(("cancelled on %s: run %s"):format(text(item.deployment),
          text(table.concat(vim.tbl_map(text, runs), ", "))))
      end
      M.refresh()
    end)
  end)
end

--- `:Invincat remote`: open (or focus) the buffer for the current buffer's project.
function M.open()
  state.folder = invincat.folder_uri(vim.api.nvim_get_current_buf())
  if not (state.buf and vim.api.nvim_buf_is_valid(state.buf)) then
    state.buf = ui.scratch_buffer("invincat://remote", "invincat-remote")
    local buf = state.buf
    local function map(lhs, fn, desc)
      vim.keymap.set("n", lhs, fn, { buffer = buf, nowait = true, silent = true, desc = desc })
    end
    map("a", function()
      M.decide(M.at_cursor(), false)
    end, "Invincat: approve the remote thread under the cursor")
    map("x", function()
      M.decide(M.at_cursor(), true)
    end, "Invincat: reject the remote thread under the cursor")
    map("c", function()
      M.cancel(M.at_cursor())
    end, "Invincat: cancel the runs of the remote thread under the cursor")
    map("R", M.refresh, "Invincat: refresh the remote list")
    map("q", "<cmd>close<cr>", "Invincat: close the remote list")
  end
  local win = vim.fn.bufwinid(state.buf)
  if win ~= -1 then
    vim.api.nvim_set_current_win(win)
  else
    ui.open_split(state.buf, "bottom", 12)
  end
  state.items, state.skipped = {}, 0
  render()
  M.refresh()
end

return M
