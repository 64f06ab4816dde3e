/**
 * What the extension host sends the chat webview, and what the webview sends back. The host
 * owns the state (a webview can be destroyed while hidden); the webview renders snapshots
 * and posts user actions. Shared by both bundles, so no `vscode` import here.
 */

import type { AlwaysScope, ApprovalRequested, ThreadInfo, TodoItem, ToolStatus } from "../common/protocol";

export type ServerState = "starting" | "running" | "stopped" | "error";

interface EntryBase {
  /** Stable key of the entry in the transcript. */
  id: string;
  /** Bumped on every change, so the webview re-renders only what changed. */
  rev: number;
  turnId?: string;
}

export interface UserEntry extends EntryBase {
  kind: "user";
  text: string;
  mode?: "agent" | "plan";
}

export interface AssistantEntry extends EntryBase {
  kind: "assistant";
  text: string;
  streaming: boolean;
}

export interface ToolEntry extends EntryBase {
  kind: "tool";
  callId: string;
  name: string;
  summary: string;
  status: "running" | ToolStatus;
  detail?: string;
  /** A multi-line result, shown preformatted (collapsed to a few lines). */
  output?: string;
  depth: number;
}

export type ApprovalState = "pending" | "resolved" | "closed";

export interface ApprovalEntry extends EntryBase {
  kind: "approval";
  request: ApprovalRequested;
  state: ApprovalState;
  /** The server's `approval_resolved.decision`, or why the card closed. */
  decision?: string;
  remembered?: string | null;
  /** A refusal from the server (`resolved: false` reason), shown on the card. */
  note?: string;
  /** A decision was sent and not answered yet: the buttons are disabled. */
  busy?: boolean;
}

export interface NoticeEntry extends EntryBase {
  kind: "notice";
  level: "info" | "error";
  text: string;
}

export type Entry = UserEntry | AssistantEntry | ToolEntry | ApprovalEntry | NoticeEntry;

export interface ChatViewState {
  server: { state: ServerState; message?: string };
  threads: ThreadInfo[];
  threadId?: string;
  planMode: boolean;
  /** The running turn of the shown thread, if any. */
  turnId?: string;
  busy: boolean;
  entries: Entry[];
  todos: TodoItem[];
  contextUsage?: { tokens: number; limit: number };
  memoryUpdating: boolean;
  /** Context chips in the prompt box (the current file, added selections). */
  chips?: ChipView[];
  /** The workspace folder the chat is in, named only when the window has more than one. */
  project?: string;
}

export interface ChipView {
  id: string;
  kind: "currentFile" | "selection" | "file";
  label: string;
  title: string;
}

export type HostMessage =
  | { type: "state"; state: ChatViewState }
  | { type: "focusPrompt" }
  /** Workspace files for the `@` completion of the request with the same `seq`. */
  | { type: "fileMatches"; seq: number; paths: string[] };

export interface DecisionAction {
  approvalId: string;
  decision: "approve" | "approve_always" | "reject" | "reject_always" | "refine" | "answer";
  scope?: AlwaysScope;
  message?: string;
  feedback?: string;
  answers?: string[];
}

export type WebviewMessage =
  | { type: "ready" }
  | { type: "send"; prompt: string }
  | { type: "cancel" }
  | { type: "newThread" }
  | { type: "switchThread"; threadId: string }
  | { type: "setPlanMode"; on: boolean }
  | { type: "resolve"; action: DecisionAction }
  | { type: "showDiff"; approvalId: string }
  /** "Rewind to here" on a prompt of the transcript (its entry id). */
  | { type: "rewind"; entryId: string }
  | { type: "openFile"; path: string }
  | { type: "removeChip"; id: string }
  | { type: "findFiles"; seq: number; query: string }
  /** A file named in an answer (untrusted text): opened only if it is in the workspace. */
  | { type: "openWorkspaceFile"; path: string; line?: number };
