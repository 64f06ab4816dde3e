/** The status bar item: the server's state; a click offers restart and the logs. */

import * as vscode from "vscode";
import { Commands } from "../common/constants";
import type { ServerStatus } from "./connection";

const LOOK: Record<ServerStatus["state"], { icon: string; text: string }> = {
  starting: { icon: "$(sync~spin)", text: "starting" },
  running: { icon: "$(hubot)", text: "ready" },
  stopped: { icon: "$(debug-stop)", text: "stopped" },
  error: { icon: "$(error)", text: "error" },
};

export function statusText(status: ServerStatus, working: boolean): string {
  if (status.state === "running" && working) {
    return "$(loading~spin) Invincat: working";
  }
  const look = LOOK[status.state];
  return `${look.icon} Invincat: ${look.text}`;
}

export class ServerStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem("invincat.status", vscode.StatusBarAlignment.Left, 0);
  private status: ServerStatus = { state: "stopped" };
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

  setWorking(working: boolean): void {
    this.working = working;
    this.render();
  }

  dispose(): void {
    this.item.dispose();
  }

  private render(): void {
    this.item.text = statusText(this.status, this.working);
    this.item.tooltip = this.status.message
      ? `Invincat server: ${this.status.state} — ${this.status.message}\nClick for the server output.`
      : `Invincat server: ${this.status.state}. Click for the server output.`;
    this.item.backgroundColor =
      this.status.state === "error" ? new vscode.ThemeColor("statusBarItem.errorBackground") : undefined;
  }
}
