/**
 * "Show diff" for a pending file edit: VS Code's diff editor with the file as it is now
 * (the live buffer, so unsaved changes count) on the left and the proposed text on the
 * right, served read-only from the `invincat-proposed:` scheme. Closing the tab decides
 * nothing: only the card's buttons and the server's code actions resolve an approval.
 */

import * as fs from "fs";
import * as vscode from "vscode";
import { PROPOSED_SCHEME } from "../common/constants";
import type { ApprovalRequested } from "../common/protocol";
import { resolveApprovalPath } from "./paths";

export class ProposedContent implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly texts = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly registration: vscode.Disposable;

  constructor() {
    this.registration = vscode.workspace.registerTextDocumentContentProvider(PROPOSED_SCHEME, this);
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.query) ?? "";
  }

  /** Open the diff editor for a file-edit approval; `folder`: the workspace folder (a path)
   * of the approval's project (multi-root), else the first folder. */
  async show(request: ApprovalRequested, folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath): Promise<void> {
    if (!request.path || typeof request.proposed_text !== "string") {
      void vscode.window.showInformationMessage("Invincat: this approval has no file diff to show.");
      return;
    }
    const file = resolveApprovalPath(request.path, folder, (p) => fs.existsSync(p));
    const name = request.path.split(/[\\/]/).pop() ?? request.path;
    const proposedKey = `proposed:${request.approval_id}`;
    this.texts.set(proposedKey, request.proposed_text);
    const proposed = vscode.Uri.from({ scheme: PROPOSED_SCHEME, path: `/${name}`, query: proposedKey });
    let current: vscode.Uri;
    if (file && fs.existsSync(file)) {
      current = vscode.Uri.file(file);
    } else {
      // A new file: compare with an empty document.
      const emptyKey = `empty:${request.approval_id}`;
      this.texts.set(emptyKey, "");
      current = vscode.Uri.from({ scheme: PROPOSED_SCHEME, path: `/${name}`, query: emptyKey });
    }
    this.changed.fire(proposed);
    await vscode.commands.executeCommand("vscode.diff", current, proposed, `${name}: current ↔ proposed (Invincat)`, {
      preview: true,
    });
  }

  dispose(): void {
    this.registration.dispose();
    this.changed.dispose();
  }
}
