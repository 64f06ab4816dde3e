-- :Invincat rules lists the workspace rule granted at a real approval (by `invincat chat`)
-- with what it covers; `d` asks first: "Keep" keeps it, "Revoke" takes it back (the file
-- loses it and the list says there are none).
local T = require("invincat_test")

---@param text string
---@return integer? row, string? line
local function find_line(text)
  local rules = require("invincat.rules")
  for row, line in ipairs(T.lines(rules.state().buf)) do
    if line:find(text, 1, true) then
      return row, line
    end
  end
end

T.run(function()
  local rules = require("invincat.rules")
  vim.cmd("Invincat rules")
  local row = T.wait("the rule", function()
    return find_line(T.args.id)
  end)
  local _, listed_line = find_line(T.args.id)
  local listed = T.lines(rules.state().buf)
  local filetype = vim.bo[rules.state().buf].filetype

  -- `d` on the header: nothing to revoke, no question.
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  vim.api.nvim_feedkeys("d", "x", false)

  -- `d` on the rule, answered "Keep": still there.
  T.on_select("Revoke " .. T.args.id, "Keep")
  vim.api.nvim_win_set_cursor(0, { row, 0 })
  vim.api.nvim_feedkeys("d", "x", false)
  T.wait("the keep question", function()
    return #T.prompts >= 1
  end)
  -- The answer runs scheduled; what is scheduled after it runs after it. Then a fresh
  -- list, requested after any revoke "Keep" might wrongly have sent.
  local answered = false
  vim.schedule(function()
    answered = true
  end)
  T.wait("the keep answer", function()
    return answered
  end)
  rules.refresh()
  T.wait("the list after keep", function()
    return rules.state().loaded
  end)
  local kept = find_line(T.args.id) ~= nil

  -- `x` on the rule, answered "Revoke": gone.
  T.on_select("Revoke " .. T.args.id, "Revoke")
  vim.api.nvim_win_set_cursor(0, { row, 0 })
  vim.api.nvim_feedkeys("x", "x", false)
  T.wait("the rule to go", function()
    return rules.state().loaded and find_line("(no rules") ~= nil
  end)

  T.done({
    listed = listed,
    listed_line = listed_line,
    filetype = filetype,
    kept = kept,
    prompts = T.prompts,
    after = T.lines(rules.state().buf),
    notifications = T.notifications,
  })
end)
