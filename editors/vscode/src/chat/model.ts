/**
 * The chat's state, kept in the extension host: one transcript per thread, built from the
 * server's `invincat/event` notifications, thread history, and the user's own actions.
 * Pure (no `vscode`): the chat view feeds it and posts `snapshot()` to the webview.
 */

import type {
  ApprovalRequested,
  EventParams,
  HistoryMessage,
  ThreadInfo,
  TodoItem,
} from "../common/protocol";
import { HIDDEN_TOOLS, messageText, summarizeToolResult, toolOutput } from "./summaries";
import type {
  ApprovalEntry,
  AssistantEntry,
  ChatViewState,
  Entry,
  ServerState,
  ToolEntry,
} from "./viewState";

/** Key of the transcript of a thread the server has not named yet. */
const NEW_THREAD = "";

interface Transcript {
  entries: Entry[];
  todos: TodoItem[];
  turnId?: string;
  contextUsage?: { tokens: number; limit: number };
  /** The thread's history was loaded (or it was born here): no need to fetch it. */
  loaded: boolean;
}

function emptyTranscript(loaded: boolean): Transcript {
  return { entries: [], todos: [], loaded };
}

export class ChatModel {
  server: { state: ServerState; message?: string } = { state: "starting" };
  threads: ThreadInfo[] = [];
  planMode = false;
  memoryUpdating = false;
  /** A chat was sent on a new thread and its id is not known yet. */
  private awaitingThread = false;
  private current = NEW_THREAD;
  private readonly transcripts = new Map<string, Transcript>([[NEW_THREAD, emptyTranscript(true)]]);
  private seq = 0;
  private sending = false;
  /** Titles of threads born here that threads/list does not list yet (their prompt). */
  private readonly newTitles = new Map<string, string>();

  // ------------------------------------------------------------------ queries

  get threadId(): string | undefined {
    return this.current === NEW_THREAD ? undefined : this.current;
  }

  /** The running turn of the shown thread. */
  get turnId(): string | undefined {
    return this.transcript(this.current).turnId;
  }

  get busy(): boolean {
    return this.sending || this.turnId !== undefined;
  }

  /** The shown thread needs its history fetched. */
  needsHistory(): boolean {
    return !this.transcript(this.current).loaded;
  }

  /** The shown thread's prompt `entryId`: its position among the prompts, and its text. */
  findPrompt(entryId: string): { index: number; text: string } | undefined {
    const prompts = this.transcript(this.current).entries.filter((e) => e.kind === "user");
    const index = prompts.findIndex((e) => e.id === entryId);
    const entry = prompts[index];
    return entry && entry.kind === "user" ? { index, text: entry.text } : undefined;
  }

  /** The thread's saved history must be read again (a rewind changed it). */
  forgetHistory(threadId: string): void {
    this.transcript(threadId).loaded = false;
  }

  findApproval(approvalId: string): ApprovalEntry | undefined {
    for (const transcript of this.transcripts.values()) {
      for (const entry of transcript.entries) {
        if (entry.kind === "approval" && entry.request.approval_id === approvalId) {
          return entry;
        }
      }
    }
    return undefined;
  }

  snapshot(): ChatViewState {
    const t = this.transcript(this.current);
    return {
      server: { ...this.server },
      threads: this.threadList(),
      threadId: this.threadId,
      planMode: this.planMode,
      turnId: t.turnId,
      busy: this.busy,
      entries: t.entries,
      todos: t.todos,
      contextUsage: t.contextUsage,
      memoryUpdating: this.memoryUpdating,
    };
  }

  // ------------------------------------------------------------------ user actions

  /** The user sent a prompt: show it at once, before the server answers. */
  beginSend(prompt: string, mode: "agent" | "plan"): void {
    this.sending = true;
    if (this.current === NEW_THREAD) {
      this.awaitingThread = true;
    }
    this.push(this.current, { id: this.nextId("u"), rev: 0, kind: "user", text: prompt, mode });
  }

  /** The server accepted the chat. */
  sendAccepted(threadId: string, turnId: string): void {
    this.sending = false;
    this.adoptThread(threadId);
    const t = this.transcript(threadId);
    if (t.turnId === undefined) {
      t.turnId = turnId;
    }
  }

  /** The server refused the chat (busy thread, model not configured, …). */
  sendFailed(message: string): void {
    this.sending = false;
    this.awaitingThread = false;
    this.notice(this.current, "error", message);
  }

  newThread(): void {
    this.current = NEW_THREAD;
    this.awaitingThread = false;
    this.transcripts.set(NEW_THREAD, emptyTranscript(true));
  }

  switchThread(threadId: string): void {
    this.current = threadId;
    this.transcript(threadId);
  }

  /** A decision was sent for the approval: disable its buttons until the answer. */
  markDeciding(approvalId: string, deciding: boolean, note?: string): void {
    const entry = this.findApproval(approvalId);
    if (!entry) {
      return;
    }
    entry.busy = deciding;
    entry.note = note;
    entry.rev++;
  }

  notice(threadKey: string | undefined, level: "info" | "error", text: string): void {
    this.push(threadKey ?? this.current, { id: this.nextId("n"), rev: 0, kind: "notice", level, text });
  }

  // ------------------------------------------------------------------ server data

  setThreads(threads: ThreadInfo[]): void {
    this.threads = threads;
    for (const thread of threads) {
      this.newTitles.delete(thread.threadId);
    }
  }

  /** Replace a thread's transcript by its saved history (tool cards included). */
  loadHistory(threadId: string, messages: HistoryMessage[]): void {
    const t = this.transcript(threadId);
    const live = t.entries.filter((e) => e.kind === "approval" && e.state === "pending");
    t.entries = [...historyToEntries(messages, () => this.nextId("h")), ...live];
    t.loaded = true;
  }

  /** Approvals still waiting (they survive restarts): show each on its thread. */
  addPendingApprovals(approvals: ApprovalRequested[]): void {
    for (const request of approvals) {
      if (!this.findApproval(request.approval_id)) {
        this.addApproval(request.thread_id, request, undefined);
      }
    }
  }

  /** Apply one `invincat/event` notification. */
  applyEvent(params: EventParams): void {
    const { event, turnId } = params;
    const key = this.keyFor(params.threadId);
    const t = this.transcript(key);
    switch (event.type) {
      case "turn_start":
        t.turnId = turnId;
        this.memoryUpdating = false;
        break;
      case "message_delta": {
        const last = t.entries[t.entries.length - 1];
        if (last && last.kind === "assistant" && last.streaming && last.turnId === turnId) {
          last.text += event.text;
          last.rev++;
        } else {
          this.push(key, { id: this.nextId("a"), rev: 0, kind: "assistant", text: event.text, streaming: true, turnId });
        }
        break;
      }
      case "tool_call":
        this.endStreaming(t);
        if (!HIDDEN_TOOLS.has(event.name)) {
          this.push(key, {
            id: `tool:${turnId}:${event.id}`,
            rev: 0,
            kind: "tool",
            callId: event.id,
            name: event.name,
            summary: event.summary ?? "",
            status: "running",
            depth: event.depth ?? 0,
            turnId,
          });
        }
        break;
      case "tool_result": {
        const card = t.entries.find(
          (e): e is ToolEntry => e.kind === "tool" && e.callId === event.id && e.status === "running",
        );
        if (card) {
          card.status = event.status;
          card.detail = summarizeToolResult(event.content);
          card.output = toolOutput(event.content);
          card.rev++;
        }
        break;
      }
      case "approval_requested":
        this.endStreaming(t);
        this.addApproval(key, event, turnId);
        break;
      case "approval_resolved": {
        const card = this.findApproval(event.approval_id);
        if (card) {
          card.state = "resolved";
          card.decision = event.decision;
          card.remembered = event.remembered ?? null;
          card.busy = false;
          card.note = undefined;
          card.rev++;
        }
        break;
      }
      case "todos":
        t.todos = event.items.map((item) => ({ content: String(item.content ?? ""), status: item.status ?? "pending" }));
        break;
      case "context_usage":
        t.contextUsage = { tokens: event.tokens, limit: event.limit };
        break;
      case "memory_updating":
        this.memoryUpdating = true;
        break;
      case "memory_changed":
      case "memory_idle":
        this.memoryUpdating = false;
        break;
      case "error":
        this.endStreaming(t);
        this.notice(key, "error", event.message);
        break;
      case "turn_end":
        this.endStreaming(t);
        if (t.turnId === turnId) {
          t.turnId = undefined;
        }
        this.closePending(t, turnId, event.status === "cancelled" ? "cancelled" : "turn ended");
        if (event.status !== "completed") {
          this.notice(key, event.status === "failed" ? "error" : "info", `Turn ${event.status}.`);
        }
        break;
      default:
        break;
    }
  }

  /** The server stopped (restart, crash): its turns are gone without a `turn_end`. Their
   * pending approvals stay: they survive in the server's store and are offered again. */
  serverStopped(): void {
    this.sending = false;
    this.memoryUpdating = false;
    for (const t of this.transcripts.values()) {
      const turnId = t.turnId;
      t.turnId = undefined;
      this.endStreaming(t);
      if (turnId === undefined) {
        continue;
      }
      for (const entry of t.entries) {
        if (entry.kind === "tool" && entry.status === "running" && entry.turnId === turnId) {
          entry.status = "error";
          entry.detail = "the server stopped";
          entry.rev++;
        }
      }
    }
  }

  /** The shown thread is an untouched new one (nothing typed or received yet). */
  isPristine(): boolean {
    return this.current === NEW_THREAD && this.transcript(NEW_THREAD).entries.length === 0 && !this.sending;
  }

  /** No memory event came for a while: the memory agent ended without a change. */
  memoryIdle(): void {
    this.memoryUpdating = false;
  }

  // ------------------------------------------------------------------ internals

  /** threads/list plus the threads born here since, newest first like the server's list. */
  private threadList(): ThreadInfo[] {
    if (this.newTitles.size === 0) {
      return this.threads;
    }
    const born = [...this.newTitles].reverse().map(([threadId, title]) => ({ threadId, title, workspace: "", createdAt: "", updatedAt: "" }));
    return [...born, ...this.threads];
  }

  private transcript(key: string): Transcript {
    let t = this.transcripts.get(key);
    if (!t) {
      t = emptyTranscript(key === NEW_THREAD);
      this.transcripts.set(key, t);
    }
    return t;
  }

  /** The transcript key for an event's thread: a new thread adopts its first id. */
  private keyFor(threadId: string): string {
    if (!this.transcripts.has(threadId) && this.awaitingThread) {
      this.adoptThread(threadId);
    }
    return threadId;
  }

  private adoptThread(threadId: string): void {
    if (!this.awaitingThread) {
      return;
    }
    this.awaitingThread = false;
    const draft = this.transcripts.get(NEW_THREAD) ?? emptyTranscript(true);
    // The picker names the thread by its prompt at once, as threads/list will after the turn.
    const prompt = draft.entries.find((e) => e.kind === "user");
    if (prompt && prompt.kind === "user" && !this.threads.some((t) => t.threadId === threadId)) {
      this.newTitles.set(threadId, threadTitle(prompt.text));
    }
    const existing = this.transcripts.get(threadId);
    if (existing) {
      // Events for the new thread arrived first: the draft (the prompt) goes before them.
      existing.entries = [...draft.entries, ...existing.entries];
    } else {
      this.transcripts.set(threadId, { ...draft, loaded: true });
    }
    this.transcripts.set(NEW_THREAD, emptyTranscript(true));
    if (this.current === NEW_THREAD) {
      this.current = threadId;
    }
  }

  private addApproval(key: string, request: ApprovalRequested, turnId: string | undefined): void {
    this.push(key, {
      id: `approval:${request.approval_id}`,
      rev: 0,
      kind: "approval",
      request,
      state: "pending",
      turnId,
    });
  }

  private closePending(t: Transcript, turnId: string, why: string): void {
    for (const entry of t.entries) {
      if (entry.kind === "approval" && entry.state === "pending" && entry.turnId === turnId) {
        entry.state = "closed";
        entry.decision = why;
        entry.busy = false;
        entry.rev++;
      }
      if (entry.kind === "tool" && entry.status === "running" && entry.turnId === turnId) {
        entry.status = "error";
        entry.detail = why;
        entry.rev++;
      }
    }
  }

  private endStreaming(t: Transcript): void {
    for (const entry of t.entries) {
      if (entry.kind === "assistant" && entry.streaming) {
        entry.streaming = false;
        entry.rev++;
      }
    }
  }

  private push(key: string, entry: Entry): void {
    this.transcript(key).entries.push(entry);
  }

  private nextId(prefix: string): string {
    this.seq += 1;
    return `${prefix}${this.seq}`;
  }
}

/** A thread's title from its first prompt: one line, at most 80 characters. */
export function threadTitle(prompt: string): string {
  const line = prompt.replace(/\s+/g, " ").trim();
  return line.length <= 80 ? line : `${line.slice(0, 79)}…`;
}

/** Saved thread messages as transcript entries: prompts, answers and tool cards. */
export function historyToEntries(messages: HistoryMessage[], nextId: () => string): Entry[] {
  const entries: Entry[] = [];
  const cards = new Map<string, ToolEntry>();
  for (const message of messages) {
    const text = messageText(message.content);
    switch (message.role) {
      case "user":
        entries.push({ id: nextId(), rev: 0, kind: "user", text });
        break;
      case "assistant": {
        if (text.trim()) {
          const answer: AssistantEntry = { id: nextId(), rev: 0, kind: "assistant", text, streaming: false };
          entries.push(answer);
        }
        for (const call of message.tool_calls ?? []) {
          if (HIDDEN_TOOLS.has(call.name)) {
            continue;
          }
          const card: ToolEntry = {
            id: nextId(),
            rev: 0,
            kind: "tool",
            callId: call.id,
            name: call.name,
            summary: call.summary ?? "",
            status: "success",
            depth: 0,
          };
          cards.set(call.id, card);
          entries.push(card);
        }
        break;
      }
      case "tool": {
        const card = message.tool_call_id ? cards.get(message.tool_call_id) : undefined;
        if (card) {
          card.status = message.status ?? "success";
          card.detail = summarizeToolResult(text);
          card.output = toolOutput(text);
        }
        break;
      }
      default:
        break;
    }
  }
  return entries;
}
