/**
 * One-line texts the chat shows for tool calls, tool results and decisions. Pure functions
 * (no `vscode`, no DOM) shared by the chat model and the tests.
 */

import type { HistoryMessage } from "../common/protocol";

const MAX_DETAIL = 400;

export function truncate(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

/** The start of a tool result, for the card's detail line. */
export function summarizeToolResult(content: string): string {
  return truncate(content, MAX_DETAIL);
}

const MAX_OUTPUT = 20_000;

/** A multi-line tool result (a read file, a command's output) kept with its line breaks,
 * capped, for a preformatted block; undefined for one-line results (the detail shows those). */
export function toolOutput(content: string): string | undefined {
  const text = content.replace(/\s+$/, "");
  if (!text.includes("\n")) {
    return undefined;
  }
  return text.length <= MAX_OUTPUT ? text : `${text.slice(0, MAX_OUTPUT)}\n… (${text.length - MAX_OUTPUT} more characters)`;
}

/** Tools whose calls the chat does not show as cards: their effect has its own UI
 * (the todo list, the plan card, the question card). */
export const HIDDEN_TOOLS = new Set(["write_todos", "approve_plan", "ask_user"]);

/** `approval_resolved.decision` as the card shows it ("approve_always (session)" too). */
export function decisionLabel(decision: string): string {
  if (decision.startsWith("approve_always")) {
    const scope = /\((\w+)\)/.exec(decision)?.[1];
    return scope ? `Approved always (${scope})` : "Approved always";
  }
  if (decision.startsWith("reject_always")) {
    return "Rejected always (this session)";
  }
  const labels: Record<string, string> = {
    approve: "Approved",
    reject: "Rejected",
    edit: "Approved with edited arguments",
    refine: "Changes requested",
    answer: "Answered",
    cancelled: "Cancelled",
    superseded: "Superseded",
  };
  return labels[decision] ?? decision;
}

/** How a decided card reads: approved (green ✓), rejected (red ✗), or neither. */
export function decisionTone(decision: string): { tone: "approved" | "rejected" | "neutral"; icon: string } {
  if (decision.startsWith("approve") || decision === "edit" || decision === "answer") {
    return { tone: "approved", icon: "✓" };
  }
  if (decision === "reject" || decision.startsWith("reject_always")) {
    return { tone: "rejected", icon: "✗" };
  }
  return { tone: "neutral", icon: decision === "refine" ? "↻" : "–" };
}

/** Text of a history message's `content`, which may be a string or a list of parts. */
export function messageText(content: unknown): string {
  if (typeof content === "string") {
    return content;
  }
  if (Array.isArray(content)) {
    return content
      .map((part) => {
        if (typeof part === "string") {
          return part;
        }
        if (part && typeof part === "object" && typeof (part as { text?: unknown }).text === "string") {
          return (part as { text: string }).text;
        }
        return "";
      })
      .join("");
  }
  return "";
}

export function isToolMessage(message: HistoryMessage): boolean {
  return message.role === "tool";
}

export function formatTokens(tokens: number): string {
  if (tokens >= 1_000_000) {
    return `${(tokens / 1_000_000).toFixed(1)}M`;
  }
  if (tokens >= 1000) {
    return `${(tokens / 1000).toFixed(1)}k`;
  }
  return String(tokens);
}

/** "12.3k / 128.0k tokens (10%)" */
export function contextUsageLabel(tokens: number, limit: number): string {
  const percent = limit > 0 ? Math.round((tokens / limit) * 100) : 0;
  return `${formatTokens(tokens)} / ${formatTokens(limit)} tokens (${percent}%)`;
}
