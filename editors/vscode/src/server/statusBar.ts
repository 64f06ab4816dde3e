/** The status bar item: the server's state; a click offers restart and the logs.
 *
 * A running server is "starting…" until its session is open (`invincat/status` says
 * `ready`): memory and threads already work then, a chat waits. A session that cannot open
 * (`failed`: e.g. no API key) shows as an error with the server's message. */

import * as vscode from "vscode";
import { Commands } from "../common/constants";
import type { ServerStatus, SessionStatus } from "./connection";
import { READY_IF_UNKNOWN, shownStatus, statusText } from "./statusText";


export class ServerStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem("invincat.status", vscode.StatusBarAlignment.Left, 0);
  private status: ServerStatus = { state: "stopped" };
  private session: SessionStatus | undefined;
  private working = false;

  constructor() {
    this.item.name = "Invincat";
    this.item.command = Commands.showOutput;
    this.render();
    this.item.show();
  }

  update(status: ServerStatus): void {
    this.status = status;
    this.render();
  }

  updateSession(session: SessionStatus | undefined): void {
    this.session = session;
    this.render();
  }

  setWorking(working: boolean): void {
    this.working = working;
    this.render();
  }

  dispose(): void {
    this.item.dispose();
  }

  private render(): void {
    // Unknown session (just started, answer not in yet) counts as starting, honestly.
    const shown = shownStatus(this.status, this.session);
    this.item.text = statusText(shown, this.working, READY_IF_UNKNOWN);
    this.item.tooltip = shown.message
      ? `Invincat server: ${shown.state} — ${shown.message}\nClick for the server output.`
      : `Invincat server: ${shown.state}. Click for the server output.`;
    this.item.backgroundColor =
      shown.state === "error" ? new vscode.ThemeColor("statusBarItem.errorBackground") : undefined;
  }
}
