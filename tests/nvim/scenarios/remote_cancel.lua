-- :Invincat remote, `c`: "Keep running" sends nothing; "Cancel run" on a thread that only
-- waits for its approval shows the core's refusal; once the thread's run goes on (approved
-- through the server behind the buffer's back, the list not refreshed), `c` cancels it.
local T = require("invincat_test")
local protocol = require("invincat.protocol")

---@param needle string
---@return integer? row
local function find_line(needle)
  local remote = require("invincat.remote")
  for row, line in ipairs(T.lines(remote.state().buf)) do
    if line:find(needle, 1, true) then
      return row
    end
  end
end

---@param needle string
local function notified(needle)
  for _, n in ipairs(T.notifications) do
    if n.message:find(needle, 1, true) then
      return true
    end
  end
  return false
end

T.run(function()
  local remote = require("invincat.remote")
  vim.cmd("Invincat remote")
  T.wait("the waiting thread", function()
    if remote.state().loaded and not find_line(T.args.thread) then
      remote.refresh() -- the run may not have reached its approval yet
    end
    return find_line(T.args.thread)
  end)
  local header = T.lines(remote.state().buf)[2]
  local cancel_prompt = "Cancel the runs of " .. T.args.thread

  -- "Keep running": nothing is sent.
  T.on_select(cancel_prompt, "Keep running")
  vim.api.nvim_win_set_cursor(0, { find_line(T.args.thread), 0 })
  vim.api.nvim_feedkeys("c", "x", false)
  T.wait("the first cancel question", function()
    return #T.prompts >= 1
  end)

  -- Waiting for its approval, the thread has no run: the core's message is shown.
  T.allow_errors = true
  T.on_select(cancel_prompt, "Cancel run")
  vim.api.nvim_feedkeys("c", "x", false)
  T.wait("the refusal", function()
    return notified("no run to cancel") and remote.state().loaded and find_line(T.args.thread) ~= nil
  end)
  T.allow_errors = false

  -- The run goes on (the fake model then hangs); the buffer still shows the thread.
  local approved = false
  require("invincat").request(protocol.REMOTE_APPROVE, { threadId = T.args.thread, deployment = "lab" }, function(err)
    assert(not err, err and err.message)
    approved = true
  end)
  T.wait("the approval", function()
    return approved
  end)
  T.on_select(cancel_prompt, "Cancel run")
  vim.api.nvim_win_set_cursor(0, { find_line(T.args.thread) + 1, 0 }) -- the call's line
  vim.api.nvim_feedkeys("c", "x", false)
  T.wait("the cancel", function()
    return notified("cancelled on lab: run ") and remote.state().loaded
  end)

  T.done({
    header = header,
    prompts = T.prompts,
    notifications = T.notifications,
  })
end)
