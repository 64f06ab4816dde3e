-- A store with an entry that does not validate: the sidebar lists the valid entries and
-- shows the skipped one as a warning line under the key hints.
local T = require("invincat_test")

T.run(function()
  local memory = require("invincat.memory")
  vim.cmd("Invincat memory")
  T.wait("the valid entries", function()
    for _, line in ipairs(T.lines(memory.state().buf)) do
      if line:find(T.args.content, 1, true) then
        return true
      end
    end
  end)
  T.done({ listed = T.lines(memory.state().buf) })
end)
