/** The "Invincat: Remote Approvals" command: `remoteApprovals` (remote.ts) with VS Code's UI. */

import * as vscode from "vscode";
import { Commands } from "../common/constants";
import { folderOfUri } from "../common/folders";
import type { InvincatConnection } from "../server/connection";
import { workspaceFolderRefs } from "../server/workspaceFolders";
import { remoteApprovals, type RemoteUi } from "./remote";

export function registerRemoteCommand(connection: InvincatConnection): vscode.Disposable {
  const ui: RemoteUi = {
    request: (method, params) => connection.request(method, params),
    pickThread: async (items, title) => vscode.window.showQuickPick(items, { title, matchOnDescription: true, matchOnDetail: true }),
    pickAction: async (items, title) => vscode.window.showQuickPick(items, { title }),
    info: (message) => void vscode.window.showInformationMessage(message),
    error: (message) => void vscode.window.showErrorMessage(message),
  };
  return vscode.commands.registerCommand(Commands.remoteApprovals, async () => {
    // The active editor's project (its .invincat/subagents.json counts); else the first.
    const folders = workspaceFolderRefs();
    const active = vscode.window.activeTextEditor?.document.uri.toString();
    const folder = folders.length > 1 ? folderOfUri(active, folders)?.uri : undefined;
    await remoteApprovals(ui, folder);
  });
}
