--- The inline preview of a proposed file edit, in the window of the file itself: removed
--- lines highlighted, added lines as virtual lines below them, and a header line with the
--- keys. Opened only on request (the approval view's `d`), for a file loaded in a buffer;
--- an edit of a file that is not open is shown in the diff tab instead (diff.lua).
---
--- While a preview is open, `ga` accepts, `gR` rejects and `q` closes it in that buffer
--- (mappings the buffer had for those keys are put back when the preview closes). Focus
--- stays in the file's window after a decision. Not `gr`: Neovim 0.11 maps `gra`, `grn`,
--- `grr`, `gri`, `grt`, and a `gr` here would either swallow them (`<nowait>`) or decide
--- after 'timeoutlen' when the user paused between keys.
local diff = require("invincat.diff")
local format = require("invincat.format")

local M = {}

local ns = vim.api.nvim_create_namespace("invincat.preview")
local KEYS = { "ga", "gR", "q" }

for name, link in pairs({
  InvincatPreviewAdd = "DiffAdd",
  InvincatPreviewDelete = "DiffDelete",
  InvincatPreviewHeader = "DiagnosticInfo",
}) do
  vim.api.nvim_set_hl(0, name, { link = link, default = true })
end

---@class invincat.Preview
---@field approval invincat.Approval
---@field buf integer
---@field win integer
---@field saved table<string, table> key → the buffer's own mapping it replaced ({} if none)
---@field autocmd integer

---@type table<integer, invincat.Preview> by buffer
local open = {}

--- Draw the proposal's hunks over the buffer's current text.
---@param preview invincat.Preview
local function render(preview)
  local buf, event = preview.buf, preview.approval.event
  vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  local current = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local proposed = diff.text_lines(event.proposed_text)
  local hunks = vim.diff(table.concat(current, "\n") .. "\n", table.concat(proposed, "\n") .. "\n", {
    result_type = "indices",
  }) --[[@as integer[][] ]]
  local title = vim.trim(format.approval_line(event):gsub("^%s*%S+%s*", ""):gsub(" — pending$", ""))
  local header = {
    { "Invincat: " .. title .. " — ", "InvincatPreviewHeader" },
    { "ga accept · gR reject · q close", "InvincatPreviewHeader" },
  }
  if #hunks == 0 then
    vim.api.nvim_buf_set_extmark(buf, ns, 0, 0, { virt_lines = { header }, virt_lines_above = true })
    return
  end
  for i, hunk in ipairs(hunks) do
    local start_a, count_a, start_b, count_b = hunk[1], hunk[2], hunk[3], hunk[4]
    for row = start_a, start_a + count_a - 1 do
      vim.api.nvim_buf_set_extmark(buf, ns, row - 1, 0, { line_hl_group = "InvincatPreviewDelete" })
    end
    local added = {}
    for row = start_b, start_b + count_b - 1 do
      table.insert(added, { { proposed[row] ~= "" and proposed[row] or " ", "InvincatPreviewAdd" } })
    end
    -- Added lines go below the removed ones; a pure insertion after line `start_a`
    -- (0: before the first line).
    local anchor = count_a > 0 and (start_a + count_a - 1) or start_a
    local above = anchor == 0
    anchor = math.max(anchor, 1)
    if #added > 0 then
      vim.api.nvim_buf_set_extmark(buf, ns, anchor - 1, 0, { virt_lines = added, virt_lines_above = above })
    end
    if i == 1 then
      local first = count_a > 0 and start_a or math.max(start_a, 1)
      vim.api.nvim_buf_set_extmark(buf, ns, first - 1, 0, {
        virt_lines = { header },
        virt_lines_above = true,
      })
    end
  end
end

--- The first changed line (1-based) of the proposal, to put the cursor on.
---@param buf integer
---@param event table
---@return integer
local function first_change(buf, event)
  local current = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local hunks = vim.diff(table.concat(current, "\n") .. "\n", table.concat(diff.text_lines(event.proposed_text), "\n") .. "\n", {
    result_type = "indices",
  }) --[[@as integer[][] ]]
  local hunk = hunks[1]
  return hunk and math.max(1, math.min(hunk[1], #current)) or 1
end

--- The window of the current tab to show `buf` in: one already showing it, else `origin`
--- (switched to the buffer), else the current window.
---@param buf integer
---@param origin? integer
---@return integer
local function window_for(buf, origin)
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_win_get_buf(win) == buf and vim.api.nvim_win_get_config(win).relative == "" then
      return win
    end
  end
  local win = origin and vim.api.nvim_win_is_valid(origin) and origin or vim.api.nvim_get_current_win()
  vim.api.nvim_win_set_buf(win, buf)
  return win
end

--- Whether `approval` can be previewed inline: a proposed text for a file loaded in a buffer.
---@param approval invincat.Approval
---@param path string absolute path of the file
---@return integer? buf
function M.buffer_for(approval, path)
  if approval.event.proposed_text == nil then
    return nil
  end
  local buf = vim.fn.bufnr(path)
  if buf ~= -1 and vim.api.nvim_buf_is_loaded(buf) then
    return buf
  end
end

--- Close the preview in `buf` (its marks, keys and autocmd).
---@param buf integer
local function close_buf(buf)
  local preview = open[buf]
  if not preview then
    return
  end
  open[buf] = nil
  pcall(vim.api.nvim_del_autocmd, preview.autocmd)
  if not vim.api.nvim_buf_is_valid(buf) then
    return
  end
  vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  for lhs, mapping in pairs(preview.saved) do
    pcall(vim.keymap.del, "n", lhs, { buffer = buf })
    if mapping.lhs then
      vim.fn.mapset("n", false, mapping)
    end
  end
end

--- Show `approval`'s proposed edit inline in `buf`, in a window of the current tab, and
--- focus that window on the first change. `decide(id, decision)` is called by `ga`/`gR`.
---@param approval invincat.Approval
---@param buf integer
---@param decide fun(id: string, decision: "approve"|"reject")
---@param origin? integer the window to show the buffer in when no window shows it
function M.open(approval, buf, decide, origin)
  close_buf(buf)
  local win = window_for(buf, origin)
  vim.api.nvim_set_current_win(win)
  local preview = { approval = approval, buf = buf, win = win, saved = {} }
  for _, lhs in ipairs(KEYS) do
    local mapping = vim.fn.maparg(lhs, "n", false, true)
    preview.saved[lhs] = (mapping.buffer == 1) and mapping or {}
  end
  local function key(lhs, fn, desc)
    -- No <nowait>: in the user's own file, longer mappings (theirs, Neovim's) must still work.
    vim.keymap.set("n", lhs, fn, { buffer = buf, silent = true, desc = "Invincat: " .. desc })
  end
  key("ga", function()
    decide(approval.id, "approve")
  end, "accept the previewed edit")
  key("gR", function()
    decide(approval.id, "reject")
  end, "reject the previewed edit")
  key("q", function()
    close_buf(buf)
  end, "close the preview (the approval stays pending)")
  -- The buffer may change under the preview (typing, an undo): redraw against it.
  preview.autocmd = vim.api.nvim_create_autocmd({ "TextChanged", "TextChangedI" }, {
    buffer = buf,
    callback = function()
      if open[buf] == preview then
        render(preview)
      end
    end,
  })
  open[buf] = preview
  render(preview)
  vim.api.nvim_win_set_cursor(win, { first_change(buf, approval.event), 0 })
  vim.cmd("normal! zz")
end

--- Close the preview of approval `id` (decided, closed), wherever it is.
---@param id string
function M.close(id)
  for buf, preview in pairs(open) do
    if preview.approval.id == id then
      close_buf(buf)
    end
  end
end

--- The approval previewed in `buf`, if any.
---@param buf integer
---@return string?
function M.approval_in(buf)
  local preview = open[buf]
  return preview and preview.approval.id
end

--- Lines of the preview's virtual text in `buf` (for tests): {added, removed rows, header}.
---@param buf integer
---@return {added: string[], removed: integer[], header: string?}
function M.describe(buf)
  local added, removed, header = {}, {}, nil
  for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(buf, ns, 0, -1, { details = true })) do
    local details = mark[4]
    if details.line_hl_group then
      table.insert(removed, mark[2] + 1)
    end
    for _, line in ipairs(details.virt_lines or {}) do
      local text = table.concat(vim.tbl_map(function(chunk)
        return chunk[1]
      end, line))
      if line[1][2] == "InvincatPreviewHeader" then
        header = text
      else
        table.insert(added, text)
      end
    end
  end
  return { added = added, removed = removed, header = header }
end

return M
