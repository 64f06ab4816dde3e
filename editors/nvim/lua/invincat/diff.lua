--- The diff tab of a proposed file edit: current text vs proposed text, in diff mode.
local invincat = require("invincat")

local M = {}

--- The absolute path of a proposed edit's `path` (relative to the project root: the
--- thread's workspace folder when the chat knows it, else the cwd's root).
---@param path string
---@param thread_id? string the approval's thread
---@return string
function M.absolute(path, thread_id)
  if path:sub(1, 1) == "/" then
    return vim.fs.normalize(path)
  end
  local folder = thread_id and require("invincat.chat").folder_of_thread(thread_id)
  local root = folder and vim.uri_to_fname(folder.uri) or invincat.root_dir()
  return vim.fs.normalize(root .. "/" .. path)
end

--- The lines of a file's text as a buffer holds them: a final newline ends the last line,
--- it does not start an empty one. Shared by the diff tab and the inline preview.
---@param text string
---@return string[]
function M.text_lines(text)
  local lines = vim.split(text, "\n", { plain = true })
  if lines[#lines] == "" then
    table.remove(lines)
  end
  return lines
end

---@param name string
---@param lines string[]
---@param filetype string?
---@param id string The approval id, appended to `name` when another buffer has it.
---@return integer
local function scratch(name, lines, filetype, id)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  if not pcall(vim.api.nvim_buf_set_name, buf, name) then
    pcall(vim.api.nvim_buf_set_name, buf, name .. "#" .. id)
  end
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].swapfile = false
  vim.bo[buf].modifiable = false
  if filetype then
    vim.bo[buf].filetype = filetype
  end
  return buf
end

--- Show a proposed file edit as a native diff in a new tab: the current text (the open
--- buffer itself when loaded, so its unsaved changes show) against the proposed text.
--- In the proposed side, `ga` / `gR` call `decide(id, "approve" | "reject")` (not `gr`,
--- the prefix of Neovim 0.11's `gra`, `grn`…: see preview.lua), `q` closes the tab and calls
--- `on_close`. Opened only on request: the approval view's `D`, or its `d` when the file is
--- not loaded in a buffer (else `d` previews inline, preview.lua).
---@param approval invincat.Approval
---@param decide fun(id: string, decision: "approve"|"reject")
---@param on_close? fun()
function M.open(approval, decide, on_close)
  if approval.diff_tab and vim.api.nvim_tabpage_is_valid(approval.diff_tab) then
    vim.api.nvim_set_current_tabpage(approval.diff_tab)
    return
  end
  local event = approval.event
  local path = M.absolute(event.path, event.thread_id)
  local filetype = vim.filetype.match({ filename = path })
  local current = vim.fn.bufnr(path)
  if current == -1 or not vim.api.nvim_buf_is_loaded(current) then
    local lines = vim.fn.filereadable(path) == 1 and vim.fn.readfile(path) or {}
    current = scratch("invincat://current/" .. event.path, lines, filetype, approval.id)
  end
  local proposed
  if event.proposed_text ~= nil then
    proposed = scratch(
      "invincat://proposed/" .. event.path,
      M.text_lines(event.proposed_text),
      filetype,
      approval.id
    )
  else
    proposed = scratch("invincat://diff/" .. event.path, M.text_lines(event.diff), "diff", approval.id)
  end

  vim.cmd("tabnew")
  local tab = vim.api.nvim_get_current_tabpage()
  local placeholder = vim.api.nvim_get_current_buf()
  vim.api.nvim_win_set_buf(0, current)
  if event.proposed_text ~= nil then
    vim.cmd("diffthis")
  end
  vim.cmd("rightbelow vsplit")
  vim.api.nvim_win_set_buf(0, proposed)
  if event.proposed_text ~= nil then
    vim.cmd("diffthis")
  end
  if vim.api.nvim_buf_is_valid(placeholder) and placeholder ~= current then
    vim.api.nvim_buf_delete(placeholder, { force = true })
  end
  vim.api.nvim_tabpage_set_var(tab, "invincat_approval", approval.id)
  for _, lhs in ipairs({ "ga", "gR" }) do
    vim.keymap.set("n", lhs, function()
      decide(approval.id, lhs == "ga" and "approve" or "reject")
    end, { buffer = proposed, desc = lhs == "ga" and "Invincat: approve" or "Invincat: reject" })
  end
  vim.keymap.set("n", "q", function()
    M.close(approval)
    if on_close then
      on_close()
    end
  end, { buffer = proposed, desc = "Invincat: close the diff (the approval stays pending)" })
  vim.wo.winbar = "%#InvincatHeader# Proposed%#InvincatStatus#  ga approve · gR reject · q back"
  approval.diff_tab = tab
end

--- Close the approval's diff tab, if open.
---@param approval invincat.Approval
function M.close(approval)
  local tab = approval.diff_tab
  approval.diff_tab = nil
  if not (tab and vim.api.nvim_tabpage_is_valid(tab)) then
    return
  end
  if #vim.api.nvim_list_tabpages() > 1 then
    vim.cmd.tabclose(vim.api.nvim_tabpage_get_number(tab))
    return
  end
  -- The last tab: leave the file's window, without diff mode.
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(tab)) do
    vim.api.nvim_win_call(win, function()
      vim.cmd("diffoff")
    end)
    if vim.bo[vim.api.nvim_win_get_buf(win)].buftype == "nofile" and #vim.api.nvim_tabpage_list_wins(tab) > 1 then
      vim.api.nvim_win_close(win, true)
    end
  end
end

return M
