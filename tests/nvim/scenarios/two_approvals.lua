-- Two calls in one batch wait together: the approval view counts them in words ("2
-- approvals"); approving the first leaves "1 approval"; both are approved from the view.
local T = require("invincat_test")

T.run(function()
  local approvals = require("invincat.approvals")
  vim.cmd("Invincat chat write two files")
  T.wait("both approvals", function()
    return #approvals.list() == 2
  end)
  vim.cmd("Invincat approvals")
  local two = T.lines(0)[1]
  vim.api.nvim_feedkeys("a", "x", false)
  T.wait("one approval left", function()
    return #approvals.list() == 1
  end)
  local one = T.lines(0)[1]
  vim.api.nvim_feedkeys("a", "x", false)
  T.wait_chat("— turn completed —")
  T.done({ two = two, one = one })
end)
