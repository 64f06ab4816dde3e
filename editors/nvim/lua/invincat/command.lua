--- Where the server command is found. A bare name (`invincat`, the default) is looked up
--- here, on the absolute entries of PATH only: the server starts in the project root, and
--- Neovim's own lookup (libuv's execvp) would take an empty or relative entry
--- (`PATH=.:$PATH`, a trailing `:`) as that directory and run a program the repository
--- planted under that name (docs/security.md, "Repository content never runs as
--- Invincat's code"). A command with a directory part is the user's own setting (their
--- init.lua; the plugin reads no project file) and is used as written.
local M = {}

---@param file string
---@return boolean
local function executable_file(file)
  local stat = vim.uv.fs_stat(file)
  return stat ~= nil and stat.type == "file" and vim.uv.fs_access(file, "X") == true
end

--- The PATH the server would be started with: `cmd_env.PATH` replaces Neovim's.
---@param cmd_env table<string, string>?
---@return string
local function search_path(cmd_env)
  local path = cmd_env and cmd_env.PATH
  if type(path) ~= "string" then
    path = vim.env.PATH
  end
  return path or ""
end

--- The absolute path of the executable `name` on an absolute entry of `path`, else nil.
---@param name string A bare name (no "/").
---@param path string A PATH value ("dir:dir:…").
---@return string?
function M.find_on_path(name, path)
  for dir in vim.gsplit(path, ":", { plain = true }) do
    -- "", ".", "bin", "~/bin": relative to the directory the server starts in (or not
    -- expanded by anyone), so never searched.
    if dir:sub(1, 1) == "/" then
      local candidate = vim.fs.joinpath(dir, name)
      if executable_file(candidate) then
        return candidate
      end
    end
  end
  return nil
end

--- The program to start for `cmd[1]`, or nil and why not (a message for the user).
---@param program string
---@param cmd_env table<string, string>?
---@return string? executable
---@return string? problem
function M.resolve(program, cmd_env)
  if program:find("\0", 1, true) then
    return nil, "`cmd` holds a NUL byte"
  end
  if program:find("/", 1, true) then
    if executable_file(program) then
      return program
    end
    return nil, ("`%s` is not executable"):format(program)
  end
  local found = M.find_on_path(program, search_path(cmd_env))
  if found then
    return found
  end
  return nil,
    ("`%s` is not on an absolute PATH entry (empty and relative entries such as `.` are not searched)"):format(
      program
    )
end

--- `cmd` with its program resolved (see `resolve`), or nil and why not.
---@param cmd string[]
---@param cmd_env table<string, string>?
---@return string[]? cmd
---@return string? problem
function M.resolve_cmd(cmd, cmd_env)
  local program, problem = M.resolve(cmd[1], cmd_env)
  if not program then
    return nil, problem
  end
  local resolved = vim.deepcopy(cmd)
  resolved[1] = program
  return resolved
end

return M
