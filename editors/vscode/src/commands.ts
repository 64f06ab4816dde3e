/** The palette commands that are not the memory tree's own (it registers those). */

import * as vscode from "vscode";
import { Commands } from "./common/constants";
import type { ChatView } from "./chat/chatView";
import { registerRemoteCommand } from "./remote/remoteCommand";
import { registerRulesCommand } from "./rules/rulesCommand";
import type { InvincatConnection } from "./server/connection";

export function registerCommands(connection: InvincatConnection, chat: ChatView): vscode.Disposable[] {
  return [
    vscode.commands.registerCommand(Commands.openChat, () => chat.focus()),
    // The editor context menu passes the document's uri; the selection is the active editor's.
    vscode.commands.registerCommand(Commands.askInvincat, () => chat.addSelection(vscode.window.activeTextEditor, true)),
    vscode.commands.registerCommand(Commands.addSelectionToChat, () => chat.addSelection(vscode.window.activeTextEditor, false)),
    vscode.commands.registerCommand(Commands.newThread, async () => {
      chat.newThread();
      await chat.focus();
    }),
    vscode.commands.registerCommand(Commands.togglePlanMode, () => chat.togglePlanMode()),
    vscode.commands.registerCommand(Commands.restartServer, () => connection.restart()),
    vscode.commands.registerCommand(Commands.showOutput, () => connection.output.show(true)),
    registerRulesCommand(connection),
    registerRemoteCommand(connection),
  ];
}
