-- :Invincat plan: the plan float lists the proposed todos; `f` refines it with feedback
-- (vim.ui.input), `a` approves the second plan; the float follows the execution live.
local T = require("invincat_test")

T.run(function()
  local plan = require("invincat.plan")
  T.on_input("What should change in the plan?", "use a markdown file called greeting.md")
  T.on_select("Write file greeting.md", "Approve")

  vim.cmd("Invincat plan add a greeting file")
  T.wait("the first plan", function()
    return plan.state().phase == "proposed"
  end)
  local first = T.lines(plan.state().buf)
  local first_id = plan.state().approval_id
  local float_focused = vim.api.nvim_get_current_win() == plan.state().win
  local float_config = vim.api.nvim_win_get_config(plan.state().win)

  vim.api.nvim_feedkeys("f", "x", false)
  T.wait("the refined plan", function()
    return plan.state().phase == "proposed" and plan.state().approval_id ~= first_id
  end)
  local second = T.lines(plan.state().buf)

  vim.api.nvim_set_current_win(plan.state().win)
  vim.api.nvim_feedkeys("a", "x", false)

  local snapshots = {}
  T.wait("the plan's turn to end", function()
    local lines = T.lines(plan.state().buf)
    local text = table.concat(lines, "\n")
    if snapshots[#snapshots] ~= text then
      table.insert(snapshots, text)
    end
    return plan.state().phase == "done"
  end, 60000)

  T.done({
    first = first,
    second = second,
    float_focused = float_focused,
    float_relative = float_config.relative,
    snapshots = snapshots,
    final = T.lines(plan.state().buf),
    todos = plan.state().todos,
    outcome = plan.state().outcome,
    chat = T.chat_text(),
  })
end)
