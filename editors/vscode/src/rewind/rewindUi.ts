/** `RewindUi` (rewind.ts) with VS Code: the plan in a `diff` document beside the chat,
 * the scope in a QuickPick, each conflicting file in a modal question. */

import * as vscode from "vscode";
import type { InvincatConnection } from "../server/connection";
import type { RewindUi } from "./rewind";

export function vscodeRewindUi(connection: InvincatConnection): RewindUi {
  return {
    request: (method, params) => connection.request(method, params),
    showPlan: async (text) => {
      const document = await vscode.workspace.openTextDocument({ content: text, language: "diff" });
      await vscode.window.showTextDocument(document, { preview: true, preserveFocus: true, viewColumn: vscode.ViewColumn.Beside });
    },
    pickScope: async (items, title) => vscode.window.showQuickPick(items, { title, matchOnDescription: true }),
    confirm: async (message, action) => (await vscode.window.showWarningMessage(message, { modal: true }, action, "Keep")) === action,
    info: (message) => void vscode.window.showInformationMessage(message),
    error: (message) => void vscode.window.showErrorMessage(message),
  };
}
