/**
 * Entry point: creates the parts (server connection, status bar, chat panel, diff provider,
 * memory sidebar), wires them, and starts the server. Logic lives in the named modules.
 */

import * as vscode from "vscode";
import { ProposedContent } from "./approvals/diffView";
import { ChatView } from "./chat/chatView";
import { startChatMiddleware } from "./chat/startChatCommand";
import { registerCommands } from "./commands";
import { MemoryTree } from "./memory/memoryTree";
import { InvincatConnection } from "./server/connection";
import { RESTART_KEYS } from "./server/settings";
import { ServerStatusBar } from "./server/statusBar";

let connection: InvincatConnection | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  connection = new InvincatConnection();
  const statusBar = new ServerStatusBar();
  const diffs = new ProposedContent();
  const chat = new ChatView(context.extensionUri, connection, diffs);
  const memory = new MemoryTree(connection);
  connection.executeCommandMiddleware = startChatMiddleware(chat, (options) => vscode.window.showInputBox(options));
  const server = connection;
  context.subscriptions.push(
    server,
    statusBar,
    diffs,
    chat,
    memory,
    server.onStatus((status) => statusBar.update(status)),
    server.onSessionStatus((session) => statusBar.updateSession(session)),
    chat.onWorking((working) => statusBar.setWorking(working)),
    ...registerCommands(server, chat),
    vscode.workspace.onDidChangeConfiguration((change) => {
      if (RESTART_KEYS.some((key) => change.affectsConfiguration(key))) {
        void server.restart();
      }
    }),
  );
  // Not awaited: activation must not wait for the server (a failure is shown by the connection).
  void server.start();
}

export async function deactivate(): Promise<void> {
  await connection?.stop();
  connection = undefined;
}
