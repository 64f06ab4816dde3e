--- The editor context sent with every chat (`context` of `invincat/chat`, docs/protocol.md):
--- the file of the window the user was in, its cursor, the lines it shows, a range the
--- command was given, and the diagnostics there.
---
--- It is taken in two steps: `capture()` when the command runs (the window is the user's,
--- before the chat opens its own), `encode()` once the client is initialized (positions
--- are in the position encoding the client negotiated, unknown before).
local invincat = require("invincat")
local protocol = require("invincat.protocol")

local M = {}

--- Diagnostics beyond this many are left out (the model needs the ones at hand, not all).
local MAX_DIAGNOSTICS = 50

---@class invincat.ContextSnapshot
---@field buf integer
---@field uri string
---@field filetype string
---@field cursor {[1]: integer, [2]: integer} 1-based row, 0-based byte column
---@field visible {[1]: integer, [2]: integer} first and last line shown (1-based)
---@field range? {[1]: integer, [2]: integer} lines of the command's range (1-based, inclusive)
---@field attachments? string[] uris of whole files to attach

--- The window to take the context from: the current one when it shows a project file,
--- else the previous window (e.g. `i` in the chat buffer), else none.
---@return integer?
local function file_window()
  local candidates = { vim.api.nvim_get_current_win(), vim.fn.win_getid(vim.fn.winnr("#")) }
  for _, win in ipairs(candidates) do
    if win ~= 0 and vim.api.nvim_win_is_valid(win) and invincat.is_project_file(vim.api.nvim_win_get_buf(win)) then
      return win
    end
  end
end

--- Take the context of the current window (nil when it shows no project file).
---@param range? {[1]: integer, [2]: integer} the command's line range, for the current window only
---@return invincat.ContextSnapshot?
function M.capture(range)
  local win = file_window()
  if not win then
    return nil
  end
  local buf = vim.api.nvim_win_get_buf(win)
  return {
    buf = buf,
    uri = vim.uri_from_bufnr(buf),
    filetype = vim.bo[buf].filetype,
    cursor = vim.api.nvim_win_get_cursor(win),
    visible = { vim.fn.line("w0", win), vim.fn.line("w$", win) },
    -- A range belongs to the window the command ran in, not to the one we fell back to.
    range = win == vim.api.nvim_get_current_win() and range or nil,
  }
end

---@param buf integer
---@param row integer 0-based
---@param col integer byte column
---@param encoding string
---@return lsp.Position
local function position(buf, row, col, encoding)
  local character = col > 0 and vim.lsp.util.character_offset(buf, row, col, encoding) or 0
  return { line = row, character = character }
end

--- Whole lines `first`..`last` (1-based, inclusive) as an LSP range: from the start of the
--- first to the start of the line after the last, or the end of the last line of the buffer.
---@param buf integer
---@param first integer
---@param last integer
---@param encoding string
---@return lsp.Range
local function line_range(buf, first, last, encoding)
  local count = vim.api.nvim_buf_line_count(buf)
  last = math.min(last, count)
  local finish
  if last < count then
    finish = { line = last, character = 0 }
  else
    local text = vim.api.nvim_buf_get_lines(buf, last - 1, last, false)[1] or ""
    finish = position(buf, last - 1, #text, encoding)
  end
  return { start = { line = first - 1, character = 0 }, ["end"] = finish }
end

--- Neovim's severities are the LSP numbers (1 error, 2 warning, 3 information, 4 hint);
--- named here so a change on either side shows.
local SEVERITY = {
  [vim.diagnostic.severity.ERROR] = 1,
  [vim.diagnostic.severity.WARN] = 2,
  [vim.diagnostic.severity.INFO] = 3,
  [vim.diagnostic.severity.HINT] = 4,
}

--- Diagnostics of every source on lines `first`..`last` (1-based), except Invincat's own
--- marks of pending edits.
---@param buf integer
---@param first integer
---@param last integer
---@param encoding string
---@return table[]
local function diagnostics(buf, first, last, encoding)
  local found = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    local end_lnum = d.end_lnum or d.lnum
    if d.source ~= protocol.DIAGNOSTIC_SOURCE and d.lnum <= last - 1 and end_lnum >= first - 1 then
      table.insert(found, {
        range = {
          start = position(buf, d.lnum, d.col or 0, encoding),
          ["end"] = position(buf, end_lnum, d.end_col or d.col or 0, encoding),
        },
        message = d.message,
        severity = SEVERITY[d.severity],
        source = d.source,
        code = d.code,
      })
      if #found >= MAX_DIAGNOSTICS then
        break
      end
    end
  end
  return found
end

--- The `context` param for a snapshot, positions in `encoding` (the client's).
---@param snapshot invincat.ContextSnapshot?
---@param encoding? string "utf-8" | "utf-16" | "utf-32" (default "utf-16")
---@return table? context nil when there is nothing to send
function M.encode(snapshot, encoding)
  if not snapshot then
    return nil
  end
  encoding = encoding or "utf-16"
  local buf, uri = snapshot.buf, snapshot.uri
  local context = { attachments = {} }
  for _, attached in ipairs(snapshot.attachments or {}) do
    table.insert(context.attachments, { uri = attached })
  end
  if #context.attachments == 0 then
    context.attachments = nil
  end
  if not vim.api.nvim_buf_is_valid(buf) then
    return context.attachments and context or nil
  end
  context.activeDocument = { uri = uri, languageId = snapshot.filetype ~= "" and snapshot.filetype or nil }
  local row, col = snapshot.cursor[1], snapshot.cursor[2]
  local text = vim.api.nvim_buf_get_lines(buf, row - 1, row, false)[1] or ""
  context.cursor = { uri = uri, position = position(buf, row - 1, math.min(col, #text), encoding) }
  context.visibleRange = { uri = uri, range = line_range(buf, snapshot.visible[1], snapshot.visible[2], encoding) }
  local first, last = row, row
  if snapshot.range then
    first, last = snapshot.range[1], snapshot.range[2]
    context.selections = { { uri = uri, range = line_range(buf, first, last, encoding) } }
  end
  local found = diagnostics(buf, first, last, encoding)
  if #found > 0 then
    context.diagnostics = {}
    for _, d in ipairs(found) do
      d.uri = uri
      table.insert(context.diagnostics, d)
    end
  end
  return context
end

return M
