/** The chat webview's page: layout, content security policy, and the bundled script. */

import * as crypto from "crypto";
import * as vscode from "vscode";

export function chatHtml(webview: vscode.Webview, extensionUri: vscode.Uri): string {
  const nonce = crypto.randomBytes(16).toString("base64");
  const script = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, "dist", "webview.js"));
  const style = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, "media", "chat.css"));
  const csp = [
    "default-src 'none'",
    `style-src ${webview.cspSource}`,
    `img-src ${webview.cspSource} data:`,
    `font-src ${webview.cspSource}`,
    `script-src 'nonce-${nonce}'`,
  ].join("; ");
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${style.toString()}">
<title>Invincat</title>
</head>
<body>
<div id="app">
  <header id="header">
    <select id="thread-select" title="Threads" aria-label="Thread"></select>
    <button id="new-thread" class="icon" title="New thread" aria-label="New thread">+</button>
    <div id="status-line"></div>
  </header>
  <main id="transcript" aria-live="polite"></main>
  <div id="empty">Ask Invincat to change something in this workspace. Writes and commands ask you first.</div>
  <section id="todos" hidden></section>
  <footer id="composer">
    <div id="chips" aria-label="Context sent with the prompt"></div>
    <div id="mentions" role="listbox" aria-label="Workspace files" hidden></div>
    <textarea id="prompt" rows="3" placeholder="Ask Invincat… (@ adds a file; Enter sends, Shift+Enter for a new line)" aria-label="Prompt"></textarea>
    <div id="composer-actions">
      <label class="toggle" title="Plan mode: a read-only planner proposes a todo list for you to approve first">
        <input id="plan-mode" type="checkbox"> Plan mode
      </label>
      <span class="spacer"></span>
      <button id="cancel" class="secondary" hidden>Cancel</button>
      <button id="send" class="primary">Send</button>
    </div>
  </footer>
</div>
<script nonce="${nonce}" src="${script.toString()}"></script>
</body>
</html>`;
}
