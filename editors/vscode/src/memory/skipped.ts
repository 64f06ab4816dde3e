/**
 * Stored memory entries the server skipped because they do not validate (a hand edit or a
 * pull of the project store): `invalid_entries` of `invincat/memory/list`. The memory view
 * shows each as a warning under its scope, so a VS Code user learns an entry is being
 * ignored, like the Neovim sidebar's `⚠ project items[1] (id) skipped: …` line.
 *
 * The answer is read defensively: an older server sends no `invalid_entries`, and the
 * store the ids come from travels through git. A malformed list or item costs that item
 * only; nothing here throws. Pure, so it is tested without VS Code.
 */

import { MEMORY_SCOPES } from "../common/constants";
import type { MemoryScope } from "../common/protocol";

/** One skipped entry, checked and made safe to display. */
export interface SkippedEntry {
  scope: MemoryScope;
  /** Its position in the store's `items`. */
  index: number;
  /** Its id when the server could name one, else null. */
  id: string | null;
  /** The fields and what is wrong with them (the server never sends the value). */
  reason: string;
}

/** More than this many and one summary row stands for the rest (a tree of thousands helps no one). */
export const MAX_SKIPPED_SHOWN = 100;
/** Longer ids and reasons are cut: a row is one line, and a store can carry anything. */
const MAX_ID_CHARS = 80;
const MAX_REASON_CHARS = 1000;

/**
 * Control characters (a NUL, a newline, an escape) and the bidirectional overrides that can
 * make a label read differently from what it says are shown as U+FFFD.
 */
export function displayable(text: string, max: number): string {
  const clean = text.replace(/[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, "\uFFFD");
  return clean.length > max ? `${clean.slice(0, max)}…` : clean;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function skippedEntry(raw: unknown): SkippedEntry | undefined {
  if (!isRecord(raw)) {
    return undefined;
  }
  const { scope, index, id, reason } = raw;
  if (typeof scope !== "string" || !(MEMORY_SCOPES as readonly string[]).includes(scope)) {
    return undefined;
  }
  if (typeof index !== "number" || !Number.isSafeInteger(index) || index < 0) {
    return undefined;
  }
  if (typeof reason !== "string") {
    return undefined;
  }
  // A JSON null (the documented "no printable id") or any other non-string: no id shown.
  const shownId = typeof id === "string" && id !== "" ? displayable(id, MAX_ID_CHARS) : null;
  return { scope: scope as MemoryScope, index, id: shownId, reason: displayable(reason, MAX_REASON_CHARS) || "invalid" };
}

/**
 * The valid items of a `memory/list` answer's `invalid_entries`, of `scope` when given, in
 * the server's order. A missing or non-list field is no skipped entries; an item of the
 * wrong shape is left out; a repeated scope and index is shown once (tree ids must be unique).
 */
export function parseSkipped(raw: unknown, scope?: MemoryScope): SkippedEntry[] {
  if (!Array.isArray(raw)) {
    return [];
  }
  const seen = new Set<string>();
  const result: SkippedEntry[] = [];
  for (const item of raw) {
    const skipped = skippedEntry(item);
    if (!skipped || (scope !== undefined && skipped.scope !== scope)) {
      continue;
    }
    const key = `${skipped.scope}:${skipped.index}`;
    if (!seen.has(key)) {
      seen.add(key);
      result.push(skipped);
    }
  }
  return result;
}

/** "project items[1] (mem_p_000002) skipped: content: not a string", as the Neovim sidebar says it. */
export function skippedLabel(entry: SkippedEntry): string {
  const id = entry.id !== null ? ` (${entry.id})` : "";
  return `${entry.scope} items[${entry.index}]${id} skipped: ${entry.reason}`;
}

/** Plain text (not markdown: the reason names fields of a store that came through git). */
export function skippedTooltip(entry: SkippedEntry): string {
  return [
    `Skipped: this stored entry does not validate, so Invincat ignores it (it is not listed, injected or searched).`,
    "",
    `Where: ${entry.scope} memory, items[${entry.index}]${entry.id !== null ? `, id ${entry.id}` : ""}`,
    `Reason: ${entry.reason}`,
    "",
    "Fix or remove it in the store file (invincat memory verify names it too).",
  ].join("\n");
}

/** The summary row for the skipped entries past MAX_SKIPPED_SHOWN. */
export function moreSkippedLabel(count: number): string {
  return `${count} more skipped ${count === 1 ? "entry" : "entries"} — run invincat memory verify`;
}
