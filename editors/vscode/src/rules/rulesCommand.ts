/** The "Invincat: Show Approval Rules" command: `showRules` (rules.ts) with VS Code's UI. */

import * as vscode from "vscode";
import { Commands } from "../common/constants";
import { folderOfUri } from "../common/folders";
import type { InvincatConnection } from "../server/connection";
import { workspaceFolderRefs } from "../server/workspaceFolders";
import { showRules, type RulesUi } from "./rules";

export function registerRulesCommand(connection: InvincatConnection): vscode.Disposable {
  const ui: RulesUi = {
    request: (method, params) => connection.request(method, params),
    pick: async (items, title) => vscode.window.showQuickPick(items, { title, matchOnDescription: true, matchOnDetail: true }),
    confirm: async (message, action) => (await vscode.window.showWarningMessage(message, { modal: true }, action)) === action,
    info: (message) => void vscode.window.showInformationMessage(message),
    error: (message) => void vscode.window.showErrorMessage(message),
  };
  return vscode.commands.registerCommand(Commands.showRules, async () => {
    // The active editor's project; without one (or with one folder) the server's first.
    const folders = workspaceFolderRefs();
    const active = vscode.window.activeTextEditor?.document.uri.toString();
    const folder = folders.length > 1 ? folderOfUri(active, folders)?.uri : undefined;
    await showRules(ui, folder);
  });
}
