--- Windows and scratch buffers shared by the chat, the approval view, the plan float and the
--- memory sidebar.
local M = {}

---@param size number Columns/lines, or a fraction of `total` when < 1.
---@param total integer
---@return integer
function M.dimension(size, total)
  return math.max(1, math.floor(size < 1 and size * total or size))
end

--- A scratch buffer named `name` (an `invincat://` URI), not listed, never written.
---@param name string
---@param filetype string
---@param bufhidden? string default "hide"
---@return integer
function M.scratch_buffer(name, filetype, bufhidden)
  local buf = vim.api.nvim_create_buf(false, true)
  pcall(vim.api.nvim_buf_set_name, buf, name)
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = bufhidden or "hide"
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = filetype
  return buf
end

--- Open `buf` in a new split on one side of the editor and focus it.
---@param buf integer
---@param position "left"|"right"|"bottom"
---@param size number width (height for "bottom"): columns/lines or a fraction
---@return integer win
function M.open_split(buf, position, size)
  if position == "bottom" then
    vim.cmd("botright split")
    vim.api.nvim_win_set_height(0, M.dimension(size, vim.o.lines))
  else
    vim.cmd((position == "left" and "topleft" or "botright") .. " vsplit")
    vim.api.nvim_win_set_width(0, M.dimension(size, vim.o.columns))
  end
  local win = vim.api.nvim_get_current_win()
  vim.api.nvim_win_set_buf(win, buf)
  vim.wo[win].number = false
  vim.wo[win].relativenumber = false
  vim.wo[win].signcolumn = "no"
  return win
end

--- Open `buf` in a centered float (sizes in cells or fractions of the editor).
---@param buf integer
---@param width number
---@param height number
---@param title string
---@param enter? boolean default true
---@return integer win
function M.open_float(buf, width, height, title, enter)
  local w = M.fit(M.dimension(width, vim.o.columns), vim.o.columns)
  local h = M.fit(M.dimension(height, vim.o.lines), vim.o.lines)
  local config = vim.tbl_extend("force", M.centered(w, h), { border = "rounded", title = " " .. title .. " " })
  return vim.api.nvim_open_win(buf, enter ~= false, config)
end

--- A float's size along one side of the editor: at most the editor's `total` cells less 4,
--- room for the float's border and the command line.
---@param size integer
---@param total integer vim.o.columns or vim.o.lines
---@return integer
function M.fit(size, total)
  return math.min(size, math.max(1, total - 4))
end

--- The window config of a float of `width` × `height` cells centred in the editor (for
--- nvim_open_win, or nvim_win_set_config when a float is resized to its content).
---@param width integer
---@param height integer
---@return table
function M.centered(width, height)
  return {
    relative = "editor",
    width = width,
    height = height,
    row = math.max(0, math.floor((vim.o.lines - height) / 2) - 1),
    col = math.floor((vim.o.columns - width) / 2),
  }
end

--- Replace all the lines of a scratch buffer the user cannot edit (the approval view, the
--- plan float): writable only for the replacement.
---@param buf integer
---@param lines string[]
function M.set_lines(buf, lines)
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
end

return M
