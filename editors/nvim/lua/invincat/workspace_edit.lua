--- `workspace/applyEdit` from the server: how an approved edit of an open file reaches
--- its buffer (the server writes files that are not open itself).
local M = {}

---@param bufnr integer
local function break_undo_sequence(bufnr)
  -- Setting 'undolevels' closes the undo block, so the edit is one undo step of its own,
  -- never merged with the user's typing before or after it.
  vim.api.nvim_buf_call(bufnr, function()
    vim.cmd("let &g:undolevels = &g:undolevels")
  end)
end

--- `workspace/applyEdit` from the server (an approved edit of an open file): applied as
--- its own undo step; refused when the buffer changed since the server computed it.
---@param params lsp.ApplyWorkspaceEditParams
---@param ctx lsp.HandlerContext
---@return lsp.ApplyWorkspaceEditResult
function M.apply(_, params, ctx)
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  local edit = params.edit or {}
  local buffers = {}
  for _, change in ipairs(edit.documentChanges or {}) do
    local doc = change.textDocument
    if doc then
      local bufnr = vim.uri_to_bufnr(doc.uri)
      local current = vim.lsp.util.buf_versions[bufnr]
      if doc.version and current and vim.api.nvim_buf_is_loaded(bufnr) and current ~= doc.version then
        return { applied = false, failureReason = ("the buffer changed (version %d, edit for %d)"):format(current, doc.version) }
      end
      table.insert(buffers, bufnr)
    end
  end
  for uri in pairs(edit.changes or {}) do
    table.insert(buffers, vim.uri_to_bufnr(uri))
  end
  for _, bufnr in ipairs(buffers) do
    if vim.api.nvim_buf_is_loaded(bufnr) then
      break_undo_sequence(bufnr)
    end
  end
  local ok, err = pcall(vim.lsp.util.apply_workspace_edit, edit, client and client.offset_encoding or "utf-16")
  for _, bufnr in ipairs(buffers) do
    if vim.api.nvim_buf_is_loaded(bufnr) then
      break_undo_sequence(bufnr)
    end
  end
  if not ok then
    return { applied = false, failureReason = tostring(err) }
  end
  return { applied = true }
end

return M
