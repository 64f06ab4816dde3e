/**
 * Payload types of the Invincat LSP extension (docs/protocol.md "LSP" and "Events").
 *
 * Params and results are camelCase; event objects keep the core's snake_case shape. Fields
 * may be added by the server at any time, so every consumer tolerates extra fields and
 * missing optional ones. No `vscode` import: the chat model and the tests use these too.
 */

export type Mode = "agent" | "plan";
export type TurnStatus = "completed" | "cancelled" | "failed";
export type ToolStatus = "success" | "error" | "rejected";
export type Decision = "approve" | "approve_always" | "reject" | "reject_always" | "edit" | "refine" | "answer";
export type AlwaysScope = "session" | "workspace";

export interface ChatParams {
  prompt: string;
  threadId?: string;
  mode?: Mode;
  wait?: boolean;
  workDoneToken?: string | number;
  /** What the editor shows (docs/protocol.md, "Editor context"). */
  context?: EditorContext;
  /** The workspace folder (file:// uri) whose project the chat is in (multi-root). */
  folder?: string;
}

export interface LspPosition {
  line: number;
  character: number;
}

export interface LspRange {
  start: LspPosition;
  end: LspPosition;
}

export interface UriRange {
  uri: string;
  range: LspRange;
}

export interface ContextDiagnostic {
  uri: string;
  range: LspRange;
  message: string;
  severity?: number;
  source?: string;
  code?: string | number;
}

/** `invincat/chat` `context`: every field optional; uris are file:// inside the workspace. */
export interface EditorContext {
  activeDocument?: { uri: string; languageId?: string };
  selections?: UriRange[];
  cursor?: { uri: string; position: LspPosition };
  visibleRange?: UriRange;
  diagnostics?: ContextDiagnostic[];
  attachments?: { uri: string; range?: LspRange }[];
}

export interface TurnRef {
  threadId: string;
  turnId: string;
  status?: TurnStatus;
}

export interface CancelResult {
  cancelled: boolean;
}

export interface ResolveApprovalParams {
  approvalId: string;
  decision: Decision;
  scope?: AlwaysScope;
  message?: string;
  editedArgs?: Record<string, unknown>;
  feedback?: string;
  answers?: string[];
}

export interface ResolveResult {
  resolved: boolean;
  reason?: string;
  threadId?: string;
  turnId?: string;
}

export interface ThreadInfo {
  threadId: string;
  title: string;
  workspace: string;
  createdAt: string;
  updatedAt: string;
}

export interface HistoryMessage {
  role: "user" | "assistant" | "system" | "tool";
  content: unknown;
  tool_calls?: { id: string; name: string; args: Record<string, unknown>; summary?: string }[];
  tool_call_id?: string;
  name?: string;
  status?: ToolStatus;
  /** One-line text computed by the server (absent from older servers). */
  summary?: string;
}

export interface TodoItem {
  content: string;
  status?: "pending" | "in_progress" | "completed" | string;
}

/** A tool call's "reject always (this session)" choice: the decision `reject_always`
 * rejects it and, for the rest of this server session, every call the rule covers. */
export interface DenyOption {
  scope: "session";
  label: string;
  tool: string;
  command_prefix?: string | null;
}

export interface AlwaysOption {
  scope: AlwaysScope;
  label: string;
  tool: string;
  command_prefix?: string | null;
}

export interface ApprovalRequested {
  type: "approval_requested";
  approval_id: string;
  kind: "tool" | "plan" | "question";
  thread_id: string;
  tool_call_id?: string | null;
  tool_name?: string | null;
  args?: Record<string, unknown>;
  description?: string;
  path?: string | null;
  diff?: string | null;
  proposed_text?: string | null;
  always_options?: AlwaysOption[];
  deny_option?: DenyOption | null;
  todos?: TodoItem[] | null;
  questions?: { question: string; options?: string[] }[] | null;
  agent?: "main" | "planner";
}

export type InvincatEvent =
  | { type: "turn_start"; thread_id: string; turn_id: string }
  | { type: "message_delta"; text: string }
  | { type: "tool_call"; id: string; name: string; args: Record<string, unknown>; depth?: number; summary?: string }
  | {
      type: "tool_result";
      id: string;
      name: string;
      status: ToolStatus;
      content: string;
      depth?: number;
      summary?: string;
    }
  | ApprovalRequested
  | { type: "approval_resolved"; approval_id: string; decision: string; remembered?: string | null }
  | { type: "todos"; items: TodoItem[] }
  | { type: "memory_updating"; scope?: string; batch_id?: string }
  | { type: "memory_changed"; scope: string; batch_id: string }
  | { type: "memory_idle"; changed?: boolean }
  | { type: "context_usage"; tokens: number; limit: number; compacted?: boolean; tokens_before?: number | null }
  | { type: "error"; message: string }
  | { type: "turn_end"; status: TurnStatus; thread_id: string; turn_id: string };

export interface EventParams {
  threadId: string;
  turnId: string;
  event: InvincatEvent;
}

// --------------------------------------------------------------------------- memory

export type MemoryScope = "user" | "project";
export type Tier = "hot" | "warm" | "cold";

export interface MemoryEntry {
  id: string;
  scope: MemoryScope;
  section: string;
  content: string;
  status: "active" | "archived";
  confidence?: string;
  score: number;
  tier: Tier;
  score_reason?: string | null;
  invalid?: unknown;
  created_at?: string;
  updated_at?: string;
  archived_at?: string | null;
  /** Where the supporting text is (project-relative path, 1-based inclusive lines). */
  citations?: MemoryCitation[];
  /** The cited evidence changed or is gone (`invincat/memory/list` and `show`). */
  stale?: boolean;
  verification?: MemoryVerification;
  /** Who proposed it and where (issue 25): self-asserted, shown as "by NAME", never trusted. */
  source?: MemorySource;
}

export interface MemorySource {
  thread_id?: string | null;
  actor?: string | null;
  /** Absent on entries made before attribution existed. */
  author?: { name: string; email?: string | null } | null;
  branch?: string | null;
}

export interface MemoryCitation {
  path: string;
  start_line: number;
  end_line: number;
  sha256?: string;
  anchor?: string;
}

export interface MemoryCitationCheck {
  citation: MemoryCitation;
  state: "fresh" | "moved" | "changed" | "missing";
  /** For `moved`: where the text is now. */
  current?: MemoryCitation;
  change?: string;
}

export interface MemoryVerification {
  state: "fresh" | "moved" | "stale";
  stale: boolean;
  note?: string;
  citations: MemoryCitationCheck[];
}

export interface MemoryListParams {
  scope?: MemoryScope;
  includeArchived?: boolean;
  /** The workspace folder whose project memory to list (multi-root). */
  folder?: string;
}

export interface MemoryListResult {
  items: MemoryEntry[];
  stores?: { user?: string; project?: string };
  /**
   * `[{scope, index, id, reason}]`: stored entries that do not validate and were skipped.
   * Absent from older servers and when there are none; `unknown` because it is parsed
   * defensively (memory/skipped.ts) before anything is shown.
   */
  invalid_entries?: unknown;
}

export interface MemoryOperation {
  op: "create" | "update" | "rescore" | "archive" | "restore" | "delete" | "noop";
  scope?: MemoryScope;
  id?: string;
  reason?: string;
  [field: string]: unknown;
}

export interface MemoryApplyParams {
  scope: MemoryScope;
  operations: MemoryOperation[];
  folder?: string;
}

/** The governance report (`BatchReport`), as far as the sidebar reads it. */
export interface MemoryReport {
  batch_id?: string;
  rejected?: boolean;
  reason?: string | null;
  applied?: { op: string; id?: string }[];
  dropped?: { index?: number; op?: string; id?: string; reason: string }[];
  [field: string]: unknown;
}

export interface MemoryDidChangeParams {
  scope: MemoryScope;
  batchId: string | null;
  /** For `scope: "project"`: the workspace folder (uri) whose project store changed. */
  folder?: string;
}

/** `invincat/status` result and `invincat/statusChanged` params (docs/protocol.md). */
export type ServerState = "starting" | "ready" | "failed";

export interface StatusTimings {
  initializeMs: number | null;
  stackImportMs: number | null;
  sessionOpenMs: number | null;
}

export interface ServerStatus {
  state: ServerState;
  /** For `failed`: why, and what to do. */
  message?: string;
  timings: StatusTimings;
}
