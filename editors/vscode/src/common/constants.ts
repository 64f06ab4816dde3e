/**
 * The Invincat LSP extension's names, mirrored from `invincat_server/lsp/protocol.py` (the
 * single source; docs/protocol.md "LSP" documents each). Keep the two in step: a rename
 * there is a versioned protocol change.
 */

// Client → server requests.
export const CHAT = "invincat/chat";
export const CANCEL = "invincat/cancel";
export const RESOLVE_APPROVAL = "invincat/resolveApproval";
export const PENDING_APPROVALS = "invincat/pendingApprovals";
export const THREADS_LIST = "invincat/threads/list";
export const THREADS_HISTORY = "invincat/threads/history";
export const THREADS_DELETE = "invincat/threads/delete";
export const THREADS_PRUNE = "invincat/threads/prune";
export const DEBUG_STATUS = "invincat/debug/status";
export const MEMORY_LIST = "invincat/memory/list";
export const MEMORY_APPLY = "invincat/memory/apply";
export const MEMORY_SHOW = "invincat/memory/show";
export const MEMORY_LOG = "invincat/memory/log";
export const MEMORY_REVERT = "invincat/memory/revert";
export const MEMORY_VERIFY = "invincat/memory/verify";
export const OFFLOAD = "invincat/offload";
export const RULES_LIST = "invincat/rules/list";
export const RULES_REVOKE = "invincat/rules/revoke";
export const CHECKPOINTS_LIST = "invincat/checkpoints/list";
export const REMOTE_LIST = "invincat/remote/list";
export const REMOTE_APPROVE = "invincat/remote/approve";
export const REMOTE_CANCEL = "invincat/remote/cancel";
export const CHECKPOINTS_DIFF = "invincat/checkpoints/diff";
export const CHECKPOINTS_RESTORE = "invincat/checkpoints/restore";
export const STATUS = "invincat/status";

// Server → client notifications.
export const EVENT = "invincat/event";
export const MEMORY_DID_CHANGE = "invincat/memory/didChange";
export const STATUS_CHANGED = "invincat/statusChanged";

/** workspace/executeCommand command behind the "accept/reject proposed edit" code actions.
 * vscode-languageclient registers it as a VS Code command from the server's
 * executeCommandProvider, so this extension must not register it itself. */
export const RESOLVE_APPROVAL_COMMAND = "invincat.resolveApproval";

/** workspace/executeCommand command of the server's "Invincat: fix this / ask about this"
 * code actions: one argument, the `invincat/chat` params; answers `{threadId, turnId}`.
 * Registered by vscode-languageclient too; the extension runs it through its middleware
 * (startChatCommand.ts) to ask for a prompt and show the thread. */
export const START_CHAT_COMMAND = "invincat.startChat";

export const DIAGNOSTIC_SOURCE = "invincat";
/** Titles of the server's lightbulb actions (mirrored from protocol.py). */
export const FIX_TITLE = "Invincat: fix this";
export const EXPLAIN_TITLE = "Invincat: explain";
export const ASK_TITLE = "Invincat: ask about selection";
export const INVINCAT_ACTION_KIND = "refactor.invincat";
export const EXPLAIN_ACTION_KIND = "refactor.invincat.explain";
export const ASK_ACTION_KIND = "refactor.invincat.ask";
export const ACCEPT_EDIT_TITLE = "Invincat: accept proposed edit";
export const REJECT_EDIT_TITLE = "Invincat: reject proposed edit";

export const MEMORY_SCOPES = ["user", "project"] as const;
export const MEMORY_LOG_DEFAULT_LIMIT = 100;

export const MAX_PROMPT_CHARS = 1_000_000;

/** JSON-RPC error codes of Invincat requests (protocol.py `ErrorCode`). */
export const ErrorCode = {
  InvalidParams: -32602,
  ModelNotConfigured: -32010,
  UnknownThread: -32011,
  ThreadBusy: -32012,
  Refused: -32013,
  MemoryUnavailable: -32014,
  UnknownMemory: -32015,
  RemoteUnavailable: -32016,
  RequestCancelled: -32800,
} as const;

export const DECISIONS = ["approve", "approve_always", "reject", "reject_always", "edit", "refine", "answer"] as const;

// This extension's own identifiers (package.json contributes them).
export const CLIENT_ID = "invincat";
export const CLIENT_NAME = "Invincat";
export const CHAT_VIEW_ID = "invincat.chat";
export const MEMORY_VIEW_ID = "invincat.memory";
export const PROPOSED_SCHEME = "invincat-proposed";
export const MEMORY_HISTORY_SCHEME = "invincat-memory";
export const SHOWING_ARCHIVED_CONTEXT = "invincat.memory.showingArchived";

export const Commands = {
  openChat: "invincat.openChat",
  askInvincat: "invincat.askInvincat",
  addSelectionToChat: "invincat.addSelectionToChat",
  newThread: "invincat.newThread",
  restartServer: "invincat.restartServer",
  showOutput: "invincat.showOutput",
  togglePlanMode: "invincat.togglePlanMode",
  memoryRefresh: "invincat.memory.refresh",
  memoryShowArchived: "invincat.memory.showArchived",
  memoryHideArchived: "invincat.memory.hideArchived",
  memoryArchive: "invincat.memory.archive",
  memoryRestore: "invincat.memory.restore",
  memoryDelete: "invincat.memory.delete",
  memoryShowHistory: "invincat.memory.showHistory",
  showRules: "invincat.showRules",
  remoteApprovals: "invincat.remoteApprovals",
} as const;
