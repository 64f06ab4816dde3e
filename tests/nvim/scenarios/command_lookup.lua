-- invincat.command.resolve for each case of T.args.cases ({program, path?, cmd_env?}):
-- the program it would start, or why not. `path` replaces Neovim's PATH for the case.
local T = require("invincat_test")

T.run(function()
  local command = require("invincat.command")
  local saved = vim.env.PATH
  local results = {}
  for _, case in ipairs(T.args.cases) do
    if case.path ~= nil then
      vim.env.PATH = case.path
    end
    local cmd_env = case.cmd_env ~= vim.NIL and case.cmd_env or nil
    local ok, program, problem = pcall(command.resolve, case.program, cmd_env)
    vim.env.PATH = saved
    table.insert(results, { ok = ok, program = program or vim.NIL, problem = problem or vim.NIL })
  end
  T.done({ results = results })
end)
