--- Helpers for the headless Neovim scenarios (tests/nvim/scenarios/*.lua).
---
--- A scenario runs inside `T.run(fn)`: it drives the plugin, waits for events with
--- `T.wait`, answers `vim.ui.select` / `vim.ui.input` from rules it registers, and ends
--- with `T.done(result)`, which writes the result JSON (`$INVINCAT_TEST_RESULT`) and quits.
--- Any error writes `{error = ...}` with what the editor showed, and exits non-zero.
local T = {}

T.args = vim.json.decode(vim.env.INVINCAT_TEST_ARGS or "{}")
T.notifications = {} ---@type {message: string, level: integer}[]
T.prompts = {} ---@type {kind: string, prompt: string, items: string[]?, tabs: integer}[]

local select_rules = {} ---@type {pattern: string, pick: fun(items: any[], labels: string[]): integer?}[]
local input_rules = {} ---@type {pattern: string, answer: string?}[]

--- Error notifications fail the scenario at the next `T.wait` unless it expects them.
T.allow_errors = false

vim.notify = function(message, level)
  level = level or vim.log.levels.INFO
  table.insert(T.notifications, { message = message, level = level })
  io.stderr:write("[notify] " .. tostring(message) .. "\n")
  if level >= vim.log.levels.ERROR and not T.allow_errors then
    T.unexpected = T.unexpected or ("error notification: " .. tostring(message))
  end
end

--- Answer the next `vim.ui.select` whose prompt contains `pattern` (plain text) with the
--- item whose label contains `label` (nil: dismiss the prompt).
---@param pattern string
---@param label string?
function T.on_select(pattern, label)
  table.insert(select_rules, {
    pattern = pattern,
    pick = function(_, labels)
      if label == nil then
        return nil
      end
      for i, text in ipairs(labels) do
        if text:find(label, 1, true) then
          return i
        end
      end
      error(("no item %q in select %q: %s"):format(label, pattern, vim.inspect(labels)))
    end,
  })
end

--- Answer the next `vim.ui.input` whose prompt contains `pattern` with `answer`.
---@param pattern string
---@param answer string?
function T.on_input(pattern, answer)
  table.insert(input_rules, { pattern = pattern, answer = answer })
end

local function take_rule(rules, prompt)
  for i, rule in ipairs(rules) do
    if prompt:find(rule.pattern, 1, true) then
      return table.remove(rules, i)
    end
  end
end

vim.ui.select = function(items, opts, on_choice)
  opts = opts or {}
  local format = opts.format_item or tostring
  local labels = vim.tbl_map(format, items)
  local prompt = opts.prompt or ""
  table.insert(T.prompts, { kind = "select", prompt = prompt, items = labels, tabs = #vim.api.nvim_list_tabpages() })
  local rule = take_rule(select_rules, prompt)
  if not rule then
    T.unexpected = ("unexpected vim.ui.select %q: %s"):format(prompt, vim.inspect(labels))
    return vim.schedule(function()
      on_choice(nil, nil)
    end)
  end
  local index = rule.pick(items, labels)
  vim.schedule(function()
    on_choice(index and items[index] or nil, index)
  end)
end

vim.ui.input = function(opts, on_confirm)
  opts = opts or {}
  local prompt = opts.prompt or ""
  table.insert(T.prompts, { kind = "input", prompt = prompt, tabs = #vim.api.nvim_list_tabpages() })
  local rule = take_rule(input_rules, prompt)
  if not rule then
    T.unexpected = ("unexpected vim.ui.input %q"):format(prompt)
  end
  vim.schedule(function()
    on_confirm(rule and rule.answer or nil)
  end)
end

--- Wait until `condition()` is truthy (processing events meanwhile); fail after `ms`.
---@param what string
---@param condition fun(): any
---@param ms? integer
---@return any
function T.wait(what, condition, ms)
  local value
  local ok = vim.wait(ms or 30000, function()
    if T.unexpected then
      error(T.unexpected)
    end
    value = condition()
    return value
  end, 20)
  if not ok then
    error(("timed out waiting for %s"):format(what))
  end
  return value
end

--- Lines of a buffer (default: the chat buffer).
---@param buf? integer
---@return string[]
function T.lines(buf)
  buf = buf or require("invincat.chat").buf()
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

--- The chat buffer's text.
---@return string
function T.chat_text()
  return table.concat(T.lines(), "\n")
end

--- Wait for the chat to show a line containing `text`.
---@param text string
---@param ms? integer
function T.wait_chat(text, ms)
  return T.wait("the chat to show " .. vim.inspect(text), function()
    return T.chat_text():find(text, 1, true)
  end, ms)
end

---@param result table
local function write(result)
  local file = assert(io.open(assert(vim.env.INVINCAT_TEST_RESULT), "w"))
  file:write(vim.json.encode(result))
  file:close()
end

--- Write the result and quit Neovim.
---@param result table
function T.done(result)
  result.notifications = T.notifications
  result.prompts = T.prompts
  write(result)
  vim.cmd("qall!")
end

--- Run the scenario; any error is written as the result and Neovim exits with 1.
---@param fn fun()
function T.run(fn)
  local ok, err = xpcall(fn, debug.traceback)
  if ok then
    return
  end
  local chat_ok, chat = pcall(T.chat_text)
  write({
    error = tostring(err),
    chat = chat_ok and chat or nil,
    notifications = T.notifications,
    prompts = T.prompts,
    messages = vim.fn.execute("messages"),
  })
  io.stderr:write(tostring(err) .. "\n")
  vim.cmd("cquit 1")
end

return T
