--- When may the plugin speak to the user? An approval must never take focus or read keys
--- while the user types — keys meant for their buffer would answer it (a line starting
--- with "1" picked item 1 of a `vim.ui.select`: "Approve"). Approvals are only announced,
--- and even the announcement (a one-line message) waits until the user pauses: not while
--- keys are coming, and not over the command line or a prompt.
local M = {}

--- How long after the last key the user counts as no longer typing.
M.QUIET_MS = 1000
--- How often a waiting announcement checks again.
local POLL_MS = 200

local last_key_ms = -math.huge

local function now_ms()
  return vim.uv.hrtime() / 1e6
end

-- Every key, typed or fed by a mapping: the time of the last one is all we keep.
vim.on_key(function()
  last_key_ms = now_ms()
end, vim.api.nvim_create_namespace("invincat.attention"))

--- True while keys are coming (one within `QUIET_MS`), in Cmdline mode, at a prompt
--- (hit-enter, confirm, `input()`), or while Neovim waits for the rest of a mapping.
---@return boolean
function M.typing()
  local mode = vim.api.nvim_get_mode()
  local first = mode.mode:sub(1, 1)
  if mode.blocking or first == "c" or first == "r" then
    return true
  end
  return now_ms() - last_key_ms < M.QUIET_MS
end

--- Run `fn` (on the main loop) once the user is not typing.
---@param fn fun()
function M.when_quiet(fn)
  local function check()
    if M.typing() then
      vim.defer_fn(check, POLL_MS)
    else
      fn()
    end
  end
  vim.schedule(check)
end

return M
