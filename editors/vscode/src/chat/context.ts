/**
 * The `context` of an `invincat/chat` request (docs/protocol.md, "Editor context") from what
 * the editor shows and the chips in the prompt box. Pure (plain data in, JSON out), so the
 * rules are tested without VS Code; `editorContext.ts` reads the editor into this shape.
 */

import type { ContextDiagnostic, EditorContext, LspPosition, LspRange, UriRange } from "../common/protocol";

/** What the active editor shows, already limited to file:// uris inside the workspace. */
export interface EditorSnapshot {
  uri: string;
  languageId: string;
  selections: LspRange[];
  cursor: LspPosition;
  visibleRange?: LspRange;
  /** All of the document's diagnostics (every source); only those at the selection or
   * cursor are sent. */
  diagnostics: Omit<ContextDiagnostic, "uri">[];
}

/** A chip in the prompt box: the current file (follows the active editor) or an added
 * selection / file. */
export interface Chip {
  id: string;
  kind: "currentFile" | "selection" | "file";
  uri: string;
  range?: LspRange;
  /** Shown on the chip: `app.py`, `app.py:10-15`. */
  label: string;
  /** The chip's tooltip: the workspace-relative path. */
  title: string;
}

export function isEmptyRange(range: LspRange): boolean {
  return range.start.line === range.end.line && range.start.character === range.end.character;
}

function before(a: LspPosition, b: LspPosition): boolean {
  return a.line < b.line || (a.line === b.line && a.character < b.character);
}

/** The ranges touch (a diagnostic at the selection); an empty range touches its line. */
export function rangesTouch(a: LspRange, b: LspRange): boolean {
  if (isEmptyRange(a) || isEmptyRange(b)) {
    const point = isEmptyRange(a) ? a : b;
    const other = point === a ? b : a;
    return point.start.line >= other.start.line && point.start.line <= other.end.line;
  }
  return !before(a.end, b.start) && !before(b.end, a.start);
}

/** `app.py:10-15` (1-based lines; a selection ending at column 0 ends on the line before). */
export function rangeLabel(name: string, range: LspRange | undefined): string {
  if (!range) {
    return name;
  }
  const first = range.start.line + 1;
  const last = range.end.character === 0 && range.end.line > range.start.line ? range.end.line : range.end.line + 1;
  return first === last ? `${name}:${first}` : `${name}:${first}-${last}`;
}

/**
 * The `context` param. `editor` is undefined when no workspace file is active or the user
 * removed the current-file chip; chips other than the current file become attachments.
 */
export function buildContext(editor: EditorSnapshot | undefined, chips: Chip[]): EditorContext | undefined {
  const context: EditorContext = {};
  if (editor) {
    context.activeDocument = { uri: editor.uri, languageId: editor.languageId };
    const selections: UriRange[] = editor.selections.filter((r) => !isEmptyRange(r)).map((range) => ({ uri: editor.uri, range }));
    if (selections.length > 0) {
      context.selections = selections;
    }
    context.cursor = { uri: editor.uri, position: editor.cursor };
    if (editor.visibleRange) {
      context.visibleRange = { uri: editor.uri, range: editor.visibleRange };
    }
    const at: LspRange[] = selections.length > 0 ? selections.map((s) => s.range) : [{ start: editor.cursor, end: editor.cursor }];
    const diagnostics = editor.diagnostics.filter((d) => at.some((range) => rangesTouch(d.range, range)));
    if (diagnostics.length > 0) {
      context.diagnostics = diagnostics.map((d) => ({ uri: editor.uri, ...d }));
    }
  }
  const attachments = chips
    .filter((chip) => chip.kind !== "currentFile")
    .map((chip) => (chip.range ? { uri: chip.uri, range: chip.range } : { uri: chip.uri }));
  if (attachments.length > 0) {
    context.attachments = attachments;
  }
  return Object.keys(context).length > 0 ? context : undefined;
}

/** `@path` for a workspace-relative path, quoted when it has spaces (`@"my dir/x.md"`). */
export function mentionFor(relativePath: string): string {
  return /\s|"/.test(relativePath) ? `@"${relativePath.replace(/"/g, '\\"')}"` : `@${relativePath}`;
}

/** The `@query` being typed just before the caret, if any (its start index and text). */
export function mentionAt(text: string, caret: number): { start: number; query: string } | undefined {
  const match = /(^|\s)@("?)([^\s@"]*)$/.exec(text.slice(0, caret));
  if (!match) {
    return undefined;
  }
  return { start: match.index + match[1].length, query: match[3] };
}

/** Workspace files matching a query: substring of the path, basename matches first. */
export function rankFiles(paths: string[], query: string, limit: number): string[] {
  const q = query.toLowerCase();
  const scored: { path: string; score: number }[] = [];
  for (const path of paths) {
    const lower = path.toLowerCase();
    const base = lower.slice(lower.lastIndexOf("/") + 1);
    let score: number;
    if (!q) {
      score = 3;
    } else if (base.startsWith(q)) {
      score = 0;
    } else if (base.includes(q)) {
      score = 1;
    } else if (lower.includes(q)) {
      score = 2;
    } else {
      continue;
    }
    scored.push({ path, score });
  }
  scored.sort((a, b) => a.score - b.score || a.path.length - b.path.length || a.path.localeCompare(b.path));
  return scored.slice(0, limit).map((s) => s.path);
}
