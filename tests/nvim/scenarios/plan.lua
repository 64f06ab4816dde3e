-- :Invincat plan: a proposed plan is announced, not opened; `:Invincat plan` opens the
-- float listing the todos; `f` refines it with feedback (vim.ui.input), `a` approves the
-- second plan and focus returns to where the user was; the float follows the execution
-- live, and the plan's write is approved in the approval view.
local T = require("invincat_test")

T.run(function()
  local plan = require("invincat.plan")
  local approvals = require("invincat.approvals")
  T.on_input("What should change in the plan?", "use a markdown file called greeting.md")

  vim.cmd("Invincat plan add a greeting file")
  local user_win = vim.api.nvim_get_current_win()
  T.wait("the first plan", function()
    return plan.state().phase == "proposed"
  end)
  local opened_by_itself = plan.state().win ~= nil or vim.api.nvim_get_current_win() ~= user_win

  vim.cmd("Invincat plan")
  local first = T.lines(plan.state().buf)
  local first_id = plan.state().approval_id
  local float_focused = vim.api.nvim_get_current_win() == plan.state().win
  local float_config = vim.api.nvim_win_get_config(plan.state().win)

  vim.api.nvim_feedkeys("f", "x", false)
  T.wait("the refined plan", function()
    return plan.state().phase == "proposed" and plan.state().approval_id ~= first_id
  end)
  local second = T.lines(plan.state().buf)

  vim.cmd("Invincat plan")
  vim.api.nvim_feedkeys("a", "x", false)
  local focus_returned = vim.api.nvim_get_current_win() == user_win

  local snapshots = {}
  local function snapshot()
    local text = table.concat(T.lines(plan.state().buf), "\n")
    if snapshots[#snapshots] ~= text then
      table.insert(snapshots, text)
    end
  end
  T.wait("the plan's write to ask for approval", function()
    snapshot()
    for _, approval in pairs(approvals.pending()) do
      if approval.event.kind == "tool" then
        return true
      end
    end
  end, T.DEADLINE_MS)
  vim.cmd("Invincat approvals")
  vim.api.nvim_feedkeys("a", "x", false)
  T.wait("the plan's turn to end", function()
    snapshot()
    return plan.state().phase == "done"
  end, T.DEADLINE_MS)

  T.done({
    opened_by_itself = opened_by_itself,
    first = first,
    second = second,
    float_focused = float_focused,
    float_relative = float_config.relative,
    focus_returned = focus_returned,
    snapshots = snapshots,
    final = T.lines(plan.state().buf),
    todos = plan.state().todos,
    outcome = plan.state().outcome,
    chat = T.chat_text(),
  })
end)
