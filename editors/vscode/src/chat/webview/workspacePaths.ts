/**
 * Which words of an answer name a workspace file, so the chat can make them open the file.
 * Pure (no DOM, no `vscode`): the webview marks candidates, the extension host opens them
 * only when they resolve to a file inside the workspace (anything else does nothing).
 */

/** Extensions that make a bare word in prose (`app.py`, `README.md`) a file reference.
 * Prose needs this list (unlike code spans) so "Node.js" or "e.g." stay words. */
const PROSE_EXTENSIONS = new Set(
  (
    "py pyi ts tsx js jsx mjs cjs json jsonc md rst txt toml yaml yml ini cfg conf lock " +
    "rs go java kt kts c h cc cpp hpp cs rb php swift scala lua vim sh bash zsh fish ps1 " +
    "html htm css scss less vue svelte sql graphql proto xml csv env gitignore dockerfile mk gradle"
  ).split(" "),
);

/** Product names shaped like files ("Node.js"), which prose uses as names. */
const NOT_FILES = new Set(["node.js", "vue.js", "next.js", "nuxt.js", "express.js", "d3.js", "three.js", "chart.js", "deno.js", "ember.js", "backbone.js"]);

/** A relative or absolute path with an extension, optionally `:line[:column]`. */
const PATH_SHAPE = /^(?:~?\/|\.{1,2}\/)?(?:[\w@+-][\w.@+-]*\/)*[\w@+-][\w.@+-]*\.([A-Za-z][A-Za-z0-9]{0,9})(?::(\d+)(?::\d+)?)?$/;
/** Prose words that look like paths; trailing punctuation is not part of them. */
const PROSE_CANDIDATE = /(?:~?\/|\.{1,2}\/)?(?:[\w@+-][\w.@+-]*\/)*[\w@+-][\w.@+-]*\.[A-Za-z][A-Za-z0-9]{0,9}(?::\d+(?::\d+)?)?/g;

export interface FileReference {
  /** The path as written (without `:line`). */
  path: string;
  /** 1-based line, when the reference carries one. */
  line?: number;
}

/** A code span's text as a file reference, when it is shaped like a path (`src/app.py:12`). */
export function fileReference(text: string): FileReference | undefined {
  const match = PATH_SHAPE.exec(text.trim());
  if (!match) {
    return undefined;
  }
  // The path itself never contains ":" (PATH_SHAPE), so the first one starts the line.
  const path = text.trim().split(":")[0];
  return match[2] !== undefined ? { path, line: Number(match[2]) } : { path };
}

export interface ProsePiece {
  text: string;
  file?: FileReference;
}

/** Split prose into plain text and file references (`see app.py and src/x.ts:3.` → …). */
export function splitFileReferences(text: string): ProsePiece[] {
  const pieces: ProsePiece[] = [];
  let last = 0;
  for (const match of text.matchAll(PROSE_CANDIDATE)) {
    const start = match.index ?? 0;
    const word = match[0];
    const before = start > 0 ? text[start - 1] : "";
    const after = text[start + word.length] ?? "";
    // Part of a longer token (a URL, an e-mail address, a dotted name): leave it.
    if (/[\w@:/.-]/.test(before) || /[\w@/-]/.test(after)) {
      continue;
    }
    const file = fileReference(word);
    const extension = file ? /\.([A-Za-z][A-Za-z0-9]*)$/.exec(file.path)?.[1]?.toLowerCase() : undefined;
    const bare = !file?.path.includes("/");
    if (!file || !extension || (bare && (!PROSE_EXTENSIONS.has(extension) || NOT_FILES.has(file.path.toLowerCase())))) {
      continue;
    }
    if (start > last) {
      pieces.push({ text: text.slice(last, start) });
    }
    pieces.push({ text: word, file });
    last = start + word.length;
  }
  if (last < text.length) {
    pieces.push({ text: text.slice(last) });
  }
  return pieces;
}
