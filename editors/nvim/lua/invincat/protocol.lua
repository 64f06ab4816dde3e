--- The Invincat LSP extension: method names, commands and error codes.
---
--- Mirrors `invincat_server/lsp/protocol.py` (the single source of these names); a test
--- (`tests/nvim/test_protocol_mirror.py`) fails when the two drift apart.
local M = {}

-- Client → server requests.
M.CHAT = "invincat/chat"
M.CANCEL = "invincat/cancel"
M.RESOLVE_APPROVAL = "invincat/resolveApproval"
M.PENDING_APPROVALS = "invincat/pendingApprovals"
M.THREADS_LIST = "invincat/threads/list"
M.THREADS_HISTORY = "invincat/threads/history"
M.THREADS_DELETE = "invincat/threads/delete"
M.THREADS_PRUNE = "invincat/threads/prune"
M.MEMORY_LIST = "invincat/memory/list"
M.MEMORY_APPLY = "invincat/memory/apply"
M.MEMORY_LOG = "invincat/memory/log"
M.MEMORY_REVERT = "invincat/memory/revert"
M.MEMORY_VERIFY = "invincat/memory/verify"
M.MEMORY_SHOW = "invincat/memory/show"
M.OFFLOAD = "invincat/offload"
M.RULES_LIST = "invincat/rules/list"
M.RULES_REVOKE = "invincat/rules/revoke"
M.CHECKPOINTS_LIST = "invincat/checkpoints/list"
M.REMOTE_LIST = "invincat/remote/list"
M.REMOTE_APPROVE = "invincat/remote/approve"
M.REMOTE_CANCEL = "invincat/remote/cancel"
M.CHECKPOINTS_DIFF = "invincat/checkpoints/diff"
M.CHECKPOINTS_RESTORE = "invincat/checkpoints/restore"
M.STATUS = "invincat/status"
M.DEBUG_STATUS = "invincat/debug/status"

-- Server → client notifications.
M.EVENT = "invincat/event"
M.MEMORY_DID_CHANGE = "invincat/memory/didChange"
M.STATUS_CHANGED = "invincat/statusChanged"

-- workspace/executeCommand command behind the "accept/reject proposed edit" code actions.
M.RESOLVE_APPROVAL_COMMAND = "invincat.resolveApproval"

M.DIAGNOSTIC_SOURCE = "invincat"
-- "Invincat: fix this / explain / ask" code actions (any server's diagnostics) run this
-- command with the invincat/chat params.
M.START_CHAT_COMMAND = "invincat.startChat"
M.FIX_TITLE = "Invincat: fix this"
M.EXPLAIN_TITLE = "Invincat: explain"
M.ASK_TITLE = "Invincat: ask about selection"
M.INVINCAT_ACTION_KIND = "refactor.invincat"
M.EXPLAIN_ACTION_KIND = "refactor.invincat.explain"
M.ASK_ACTION_KIND = "refactor.invincat.ask"
M.ACCEPT_EDIT_TITLE = "Invincat: accept proposed edit"
M.REJECT_EDIT_TITLE = "Invincat: reject proposed edit"

--- JSON-RPC error codes of Invincat requests.
---@enum invincat.ErrorCode
M.ErrorCode = {
  INVALID_PARAMS = -32602,
  MODEL_NOT_CONFIGURED = -32010,
  UNKNOWN_THREAD = -32011,
  THREAD_BUSY = -32012,
  REFUSED = -32013,
  MEMORY_UNAVAILABLE = -32014,
  UNKNOWN_MEMORY = -32015,
  REMOTE_UNAVAILABLE = -32016,
  METHOD_NOT_FOUND = -32601,
}

--- Decisions `invincat/resolveApproval` takes (which fit depends on the approval's kind).
M.DECISIONS = { "approve", "approve_always", "reject", "edit", "refine", "answer" }

return M
