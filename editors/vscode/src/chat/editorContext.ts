/**
 * Reads what the active editor shows into the plain shapes of `context.ts`: only file://
 * documents inside the workspace (the server refuses any other uri), positions in UTF-16
 * code units (the LSP default encoding vscode-languageclient negotiates).
 */

import * as vscode from "vscode";
import type { LspPosition, LspRange } from "../common/protocol";
import type { Chip, EditorSnapshot } from "./context";
import { rangeLabel } from "./context";

export function toPosition(position: vscode.Position): LspPosition {
  return { line: position.line, character: position.character };
}

export function toRange(range: vscode.Range): LspRange {
  return { start: toPosition(range.start), end: toPosition(range.end) };
}

/** A document the server may be told about: a saved file inside a workspace folder. */
export function inWorkspace(uri: vscode.Uri): boolean {
  return uri.scheme === "file" && vscode.workspace.getWorkspaceFolder(uri) !== undefined;
}

/** The active text editor when it shows a workspace file. */
export function workspaceEditor(): vscode.TextEditor | undefined {
  const editor = vscode.window.activeTextEditor;
  return editor && inWorkspace(editor.document.uri) ? editor : undefined;
}

function diagnosticCode(code: vscode.Diagnostic["code"]): string | number | undefined {
  if (code === undefined) {
    return undefined;
  }
  return typeof code === "object" ? code.value : code;
}

export function snapshotEditor(editor: vscode.TextEditor): EditorSnapshot {
  const uri = editor.document.uri;
  const visible = editor.visibleRanges[0];
  return {
    uri: uri.toString(),
    languageId: editor.document.languageId,
    selections: editor.selections.map(toRange),
    cursor: toPosition(editor.selection.active),
    visibleRange: visible ? toRange(visible) : undefined,
    // Every source (the language's own server, linters, Invincat's pending edits).
    diagnostics: vscode.languages.getDiagnostics(uri).map((d) => {
      const code = diagnosticCode(d.code);
      return {
        range: toRange(d.range),
        message: d.message,
        // vscode's DiagnosticSeverity is 0-based, LSP's 1-based.
        severity: d.severity + 1,
        ...(d.source ? { source: d.source } : {}),
        ...(code !== undefined ? { code } : {}),
      };
    }),
  };
}

let chipSeq = 0;

export function fileName(uri: vscode.Uri): string {
  return uri.path.slice(uri.path.lastIndexOf("/") + 1);
}

export function selectionChip(uri: vscode.Uri, range: vscode.Range): Chip {
  chipSeq += 1;
  return {
    id: `sel${chipSeq}`,
    kind: "selection",
    uri: uri.toString(),
    range: toRange(range),
    label: rangeLabel(fileName(uri), toRange(range)),
    title: `Selection: ${rangeLabel(vscode.workspace.asRelativePath(uri, false), toRange(range))}`,
  };
}

export function currentFileChip(editor: vscode.TextEditor): Chip {
  const uri = editor.document.uri;
  return {
    id: "current",
    kind: "currentFile",
    uri: uri.toString(),
    label: fileName(uri),
    title: `Current file: ${vscode.workspace.asRelativePath(uri, false)} (its selection, cursor, visible lines and diagnostics go with the prompt; click × to leave it out)`,
  };
}
