-- :checkhealth invincat, its report as lines.
local T = require("invincat_test")

T.run(function()
  vim.cmd("checkhealth invincat")
  local lines = T.wait("the health report", function()
    for _, buf in ipairs(vim.api.nvim_list_bufs()) do
      if vim.bo[buf].filetype == "checkhealth" then
        local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
        local text = table.concat(lines, "\n")
        if text:find("model configured", 1, true) or text:find("ERROR", 1, true) then
          return lines
        end
      end
    end
  end, T.DEADLINE_MS)
  T.done({ report = table.concat(lines, "\n") })
end)
