-- :Invincat remote lists the thread whose run on a real `langgraph dev` waits for an
-- approval, with the call's title; `x` answered "Keep waiting" sends nothing, `a`
-- answered "Approve" approves it (the list then says nothing waits).
local T = require("invincat_test")

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

T.run(function()
  local remote = require("invincat.remote")
  vim.cmd("Invincat remote")
  local row = T.wait("the waiting thread", function()
    if remote.state().loaded and not find_line(T.args.thread) then
      remote.refresh() -- the run may not have reached its approval yet
    end
    return find_line(T.args.thread)
  end)
  local listed = T.lines(remote.state().buf)
  local filetype = vim.bo[remote.state().buf].filetype

  -- `x` answered "Keep waiting": nothing is sent, the thread still waits.
  T.on_select("Reject " .. T.args.thread, "Keep waiting")
  vim.api.nvim_win_set_cursor(0, { row, 0 })
  vim.api.nvim_feedkeys("x", "x", false)
  T.wait("the reject question", function()
    return #T.prompts >= 1
  end)

  T.on_select("Approve " .. T.args.thread, "Approve")
  vim.api.nvim_win_set_cursor(0, { row + 1, 0 }) -- the call's line belongs to the thread too
  vim.api.nvim_feedkeys("a", "x", false)
  T.wait("the approval to go", function()
    return remote.state().loaded and find_line("(no remote run waits") ~= nil
  end)

  T.done({
    listed = listed,
    filetype = filetype,
    prompts = T.prompts,
    notifications = T.notifications,
  })
end)
