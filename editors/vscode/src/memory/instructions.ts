/**
 * The project's instruction files (AGENTS.md, CLAUDE.md and its imports, copilot,
 * GEMINI.md, Cursor's rules): `instructions` of `invincat/memory/list`, a read-only tier
 * the model is shown before memory. The memory view lists them under the project, one row
 * per file with no edit or delete action (they are the repository's files, edited as any
 * other), like the Neovim sidebar's "instruction files (N, read-only)" section.
 *
 * Read defensively, like ./skipped: an older server sends no `instructions`, and the
 * names come from the repository. A malformed item costs that item only; nothing here
 * throws. Pure, so it is tested without VS Code.
 */

import { displayable } from "./skipped";

/** One instruction file, checked and made safe to display. */
export interface InstructionFile {
  /** Its kind (`AGENTS.md`, …; a Cursor rule's own path). */
  source: string;
  /** Relative to the project root; `<outside project>` for an import refused as outside it. */
  path: string;
  /** Bytes on disk, null when it was refused unseen. */
  size: number | null;
  /** Bytes the model is shown. */
  included: number;
  truncated: boolean;
  /** Why none of it is shown (null: it is). */
  skipped: string | null;
  /** The file importing it (a CLAUDE.md's `@path`), or null. */
  importedBy: string | null;
  /** A glob-scoped Cursor rule's globs. */
  appliesTo: string | null;
}

/** The server lists at most 64; more than this is not a listing anyone reads. */
export const MAX_INSTRUCTIONS_SHOWN = 100;
const MAX_PATH_CHARS = 300;
const MAX_NOTE_CHARS = 400;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function count(value: unknown): number | null {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : null;
}

function note(value: unknown, max: number): string | null {
  return typeof value === "string" && value !== "" ? displayable(value, max) : null;
}

function instructionFile(raw: unknown): InstructionFile | undefined {
  if (!isRecord(raw) || typeof raw.source !== "string" || typeof raw.path !== "string" || raw.path === "") {
    return undefined;
  }
  return {
    source: displayable(raw.source, MAX_PATH_CHARS),
    path: displayable(raw.path, MAX_PATH_CHARS),
    size: count(raw.size),
    included: count(raw.included) ?? 0,
    truncated: raw.truncated === true,
    skipped: note(raw.skipped, MAX_NOTE_CHARS),
    importedBy: note(raw.imported_by, MAX_PATH_CHARS),
    appliesTo: note(raw.applies_to, MAX_NOTE_CHARS),
  };
}

/** The valid items of an answer's `instructions`, in the server's (reading) order. */
export function parseInstructions(raw: unknown): InstructionFile[] {
  if (!Array.isArray(raw)) {
    return [];
  }
  const files: InstructionFile[] = [];
  for (const item of raw.slice(0, MAX_INSTRUCTIONS_SHOWN)) {
    const file = instructionFile(item);
    if (file) {
      files.push(file);
    }
  }
  return files;
}

/** "docs/style.md" */
export function instructionLabel(file: InstructionFile): string {
  return file.path;
}

function bytes(n: number): string {
  return `${n.toLocaleString("en-US")} ${n === 1 ? "byte" : "bytes"}`;
}

/** "CLAUDE.md · 412 bytes · imported by CLAUDE.md", or the reason it is not shown. */
export function instructionDescription(file: InstructionFile): string {
  const parts = [file.source];
  if (file.skipped !== null) {
    parts.push(file.skipped);
  } else {
    parts.push(file.truncated && file.size !== null ? `${bytes(file.included)} of ${bytes(file.size)}, truncated` : bytes(file.included));
  }
  if (file.appliesTo !== null) {
    parts.push(`applies to ${file.appliesTo}`);
  }
  if (file.importedBy !== null) {
    parts.push(`imported by ${file.importedBy}`);
  }
  return parts.join(" · ");
}

/** Plain text (not markdown: every name in it comes from the repository). */
export function instructionTooltip(file: InstructionFile): string {
  const lines = [`${file.path} (source: ${file.source})`, ""];
  if (file.skipped !== null) {
    lines.push(`Not shown to the model: ${file.skipped}`);
  } else if (file.truncated) {
    lines.push(`Shown to the model: the first ${bytes(file.included)}${file.size !== null ? ` of ${bytes(file.size)}` : ""} (the instruction files are capped in all).`);
  } else {
    lines.push(`Shown to the model before memory: ${bytes(file.included)}.`);
  }
  if (file.appliesTo !== null) {
    lines.push(`A Cursor rule for the files matching ${file.appliesTo}.`);
  }
  if (file.importedBy !== null) {
    lines.push(`Imported by ${file.importedBy}.`);
  }
  lines.push("", "Read-only here: it is the repository's file, edited and reviewed like any other.");
  return lines.join("\n");
}

/** "3 · read-only" after the "Instruction files" row. */
export function instructionsDescription(files: InstructionFile[]): string {
  return `${files.length} · read-only`;
}

/**
 * Whether clicking the row opens the file: a project-relative path of a file that was
 * not refused (a link out of the project, an import outside it, a path into .git/ are
 * not opened from here, as citations that leave the project are not).
 */
export function instructionOpensInProject(file: InstructionFile): boolean {
  const path = file.path;
  if (file.skipped !== null && file.skipped.startsWith("refused")) {
    return false;
  }
  if (path.startsWith("<") || /^([\\/]|[A-Za-z]:)/.test(path) || path.includes("\uFFFD")) {
    return false;
  }
  return !path.split(/[\\/]/).includes("..");
}
