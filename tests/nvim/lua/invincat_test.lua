--- Helpers for the headless Neovim scenarios (tests/nvim/scenarios/*.lua).
---
--- A scenario runs inside `T.run(fn)`: it drives the plugin, waits for events with
--- `T.wait`, answers `vim.ui.select` / `vim.ui.input` from rules it registers, and ends
--- with `T.done(result)`, which writes the result JSON (`$INVINCAT_TEST_RESULT`) and quits.
--- Any error writes `{error = ...}` with what the editor showed, and exits non-zero.
local T = {}

T.args = vim.json.decode(vim.env.INVINCAT_TEST_ARGS or "{}")
--- How long a wait may take before the test fails (tests/deadlines.py: the machine may be
--- loaded; the deadline only fails a stuck test).
T.DEADLINE_MS = 90000
T.notifications = {} ---@type {message: string, level: integer}[]
T.prompts = {} ---@type {kind: string, prompt: string, items: string[]?, tabs: integer}[]

local select_rules = {} ---@type {pattern: string, pick: fun(items: any[], labels: string[]): integer?}[]
local input_rules = {} ---@type {pattern: string, answer: string?}[]

--- Neovim's own `vim.ui.select` / `vim.ui.input` (prompts that read typed keys), for
--- scenarios that must see what a user's keystrokes do; the others answer from rules.
T.real_select = vim.ui.select
T.real_input = vim.ui.input

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
  local ok = vim.wait(ms or T.DEADLINE_MS, function()
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

---@param err any
local function fail(err)
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

--- Run the scenario; any error is written as the result and Neovim exits with 1.
---@param fn fun()
function T.run(fn)
  local ok, err = xpcall(fn, debug.traceback)
  if not ok then
    fail(err)
  end
end

---@param co thread
local function resume(co)
  local ok, err = coroutine.resume(co)
  if not ok then
    fail(debug.traceback(co, err))
  end
end

--- Run a scenario that lets Neovim's main loop run between its steps: keys sent with
--- `nvim_input` (real typing) are only read there, never inside `vim.wait`. `fn` runs in
--- a coroutine and waits with `T.await`.
---@param fn fun()
function T.run_async(fn)
  resume(coroutine.create(fn))
end

--- In `T.run_async`: wait until `condition()` is truthy, letting the main loop read keys
--- and events meanwhile; fail after `ms` (default `T.DEADLINE_MS`).
---@param what string
---@param condition fun(): any
---@param ms? integer
---@return any
function T.await(what, condition, ms)
  local co = assert(coroutine.running(), "T.await outside T.run_async")
  local deadline = vim.uv.hrtime() + (ms or T.DEADLINE_MS) * 1e6
  while true do
    if T.unexpected then
      error(T.unexpected)
    end
    local value = condition()
    if value then
      return value
    end
    if vim.uv.hrtime() > deadline then
      error(("timed out waiting for %s"):format(what))
    end
    vim.defer_fn(function()
      resume(co)
    end, 20)
    coroutine.yield()
  end
end

--- Type like a person: `first` (e.g. "i"), then `line` again and again, one key every
--- `interval` ms, with `nvim_input` from a libuv timer — so keys keep coming even while
--- Neovim waits in a prompt — until `stop()` (at the end of a line). `typed()` is the
--- text typed after `first`, `count()` the keys sent so far.
---@param first string
---@param line string[] keys of one line, ending with "<CR>"
---@param interval integer
function T.typist(first, line, interval)
  local typed, count, stopping, stopped = {}, 0, false, false
  local timer = assert(vim.uv.new_timer())
  local queue = { first }
  timer:start(interval, interval, function()
    if #queue == 0 then
      if stopping or count > 5000 then
        stopped = true
        timer:stop()
        timer:close()
        return
      end
      vim.list_extend(queue, line)
    end
    local key = table.remove(queue, 1)
    if count > 0 then
      table.insert(typed, key == "<CR>" and "\n" or key)
    end
    count = count + 1
    vim.api.nvim_input(key) -- api-fast: allowed in a libuv callback
  end)
  return {
    count = function()
      return count
    end,
    stop = function()
      stopping = true
    end,
    stopped = function()
      return stopped
    end,
    typed = function()
      return table.concat(typed)
    end,
  }
end


return T
