/**
 * What the memory view keeps of an `invincat/memory/list` answer: the listed entries, the
 * entries the server skipped as invalid (`invalid_entries`, read by ./skipped) and the
 * project's instruction files (`instructions`, read by ./instructions). Pure,
 * so a server's answer can be turned into the tree in a test without VS Code.
 */

import type { FolderRef } from "../common/folders";
import type { MemoryEntry, MemoryListResult, MemoryScope } from "../common/protocol";
import { parseInstructions } from "./instructions";
import { buildMemoryTree, type FolderMemory, type ScopeNode } from "./nodes";
import { parseSkipped, type SkippedEntry } from "./skipped";

/** One scope's part of an answer (a multi-root window asks for each scope on its own). */
export interface ScopeAnswer {
  items: MemoryEntry[];
  skipped: SkippedEntry[];
}

/** A one-folder window's tree: both scopes of one answer. */
export function treeOfAnswer(result: MemoryListResult, showArchived: boolean): ScopeNode[] {
  return buildMemoryTree(result.items ?? [], showArchived, parseSkipped(result.invalid_entries), instructionsOf(result));
}

/** `instructions` of an answer (not in the shared protocol type: only this view reads it). */
function instructionsOf(result: MemoryListResult) {
  return parseInstructions((result as MemoryListResult & { instructions?: unknown }).instructions);
}

/** The answer to a `scope`-only list: only that scope's skipped entries are kept. */
export function scopeAnswer(result: MemoryListResult, scope: MemoryScope): ScopeAnswer {
  return { items: result.items ?? [], skipped: parseSkipped(result.invalid_entries, scope) };
}

/** A multi-root window: one folder's project memory. */
export function folderMemoryOf(folder: FolderRef, result: MemoryListResult): FolderMemory {
  const { items, skipped } = scopeAnswer(result, "project");
  return { folder, items, store: result.stores?.project, skipped, instructions: instructionsOf(result) };
}
