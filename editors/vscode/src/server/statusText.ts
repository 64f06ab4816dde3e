/** What the status bar says, as pure functions (unit-tested without VS Code). */

import type { ServerStatus, SessionStatus } from "./connection";

const LOOK: Record<ServerStatus["state"], { icon: string; text: string }> = {
  starting: { icon: "$(sync~spin)", text: "starting" },
  running: { icon: "$(hubot)", text: "ready" },
  stopped: { icon: "$(debug-stop)", text: "stopped" },
  error: { icon: "$(error)", text: "error" },
};

/** For callers that do not track the session (tests of the process states). */
export const READY_IF_UNKNOWN: SessionStatus = {
  state: "ready",
  timings: { initializeMs: null, stackImportMs: null, sessionOpenMs: null },
};

/** The state shown: the process's, refined by the session's while the process runs. */
export function shownStatus(status: ServerStatus, session: SessionStatus | undefined): ServerStatus {
  if (status.state !== "running" || session?.state === "ready") {
    return status;
  }
  if (session?.state === "failed") {
    return { state: "error", message: session.message };
  }
  return { state: "starting", message: "the session is opening (memory and threads already work)" };
}

export function statusText(status: ServerStatus, working: boolean, session?: SessionStatus): string {
  const shown = shownStatus(status, session ?? READY_IF_UNKNOWN);
  if (shown.state === "running" && working) {
    return "$(loading~spin) Invincat: working";
  }
  const look = LOOK[shown.state];
  return `${look.icon} Invincat: ${look.text}${shown.state === "starting" ? "…" : ""}`;
}
