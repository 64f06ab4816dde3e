/**
 * "Invincat: Remote Approvals": the threads whose run on a LangGraph deployment waits for
 * an approval (`invincat/remote/list`) in a QuickPick; picking one offers Approve or
 * Reject, sent as `invincat/remote/approve` (every call of the batch gets the decision,
 * docs/remote.md), or Cancel run, sent as `invincat/remote/cancel` (the core decides
 * what there is to cancel and says so when there is nothing). Free of the `vscode` module (only its types): the flow runs against
 * `RemoteUi`, which remoteCommand.ts implements with VS Code and the unit tests with fakes.
 */

import { REMOTE_APPROVE, REMOTE_CANCEL, REMOTE_LIST } from "../common/constants";

export interface RemoteCall {
  tool_name: string;
  /** The call's redacted, cut title ("Write notes.txt"), made by the core. */
  summary: string;
  tool_call_id: string;
  approval_id: string;
}

export interface RemotePending {
  deployment: string;
  thread_id: string;
  kind: string;
  calls: RemoteCall[];
}

export interface RemoteListResult {
  pending: RemotePending[];
  skipped?: number;
}

export interface RemoteApproveResult {
  deployment: string;
  thread_id: string;
  run_id: string;
  decision: "approve" | "reject";
  calls: string[];
}

export interface RemoteCancelResult {
  deployment: string;
  thread_id: string;
  cancelled: string[];
}

export interface PendingPick {
  label: string;
  description: string;
  detail: string;
  pending: RemotePending;
}

export type RemoteAction = "approve" | "reject" | "cancel";

export interface ActionPick {
  label: string;
  action: RemoteAction;
}

/** What the flow needs from the editor. */
export interface RemoteUi {
  request<R>(method: string, params: object): Promise<R>;
  pickThread(items: PendingPick[], title: string): Promise<PendingPick | undefined>;
  pickAction(items: ActionPick[], title: string): Promise<ActionPick | undefined>;
  info(message: string): void;
  error(message: string): void;
}

export type RemoteOutcome = "approved" | "rejected" | "cancelled" | "closed" | "empty" | "failed";

export const APPROVE_ACTION = "Approve: let the remote run go on";
export const REJECT_ACTION = "Reject: nothing of it runs";
export const CANCEL_ACTION = "Cancel run: stop the thread's pending and running runs";

/** What a server sent is shown as text only: control characters never shape the pick. */
function printable(text: unknown): string {
  return String(text ?? "").replace(/[\u0000-\u001f\u007f]/g, " ");
}

function wellFormed(item: unknown): item is RemotePending {
  const p = item as RemotePending;
  return (
    typeof p === "object" &&
    p !== null &&
    typeof p.thread_id === "string" &&
    typeof p.deployment === "string" &&
    Array.isArray(p.calls) &&
    p.calls.every((c) => typeof c === "object" && c !== null && typeof c.summary === "string")
  );
}

export function pendingPicks(pending: readonly RemotePending[]): PendingPick[] {
  return pending.map((p) => ({
    label: printable(p.calls.map((c) => c.summary).join("; ")),
    description: `${printable(p.deployment)} · ${printable(p.thread_id)}`,
    detail: printable(p.calls.map((c) => c.tool_name).join(", ")),
    pending: p,
  }));
}

export function approveParams(
  pending: RemotePending,
  reject: boolean,
  folder: string | undefined,
): { threadId: string; deployment: string; reject: boolean; folder?: string } {
  const params = { threadId: pending.thread_id, deployment: pending.deployment, reject };
  return folder === undefined ? params : { ...params, folder };
}

export function cancelParams(
  pending: RemotePending,
  folder: string | undefined,
): { threadId: string; deployment: string; folder?: string } {
  const params = { threadId: pending.thread_id, deployment: pending.deployment };
  return folder === undefined ? params : { ...params, folder };
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** List, let the user pick a thread and a decision, send it. `folder`: the project's uri. */
export async function remoteApprovals(ui: RemoteUi, folder: string | undefined): Promise<RemoteOutcome> {
  let listed: RemoteListResult;
  try {
    listed = await ui.request<RemoteListResult>(REMOTE_LIST, folder === undefined ? {} : { folder });
  } catch (err) {
    ui.error(message(err));
    return "failed";
  }
  const pending = Array.isArray(listed?.pending) ? listed.pending.filter(wellFormed) : [];
  if (pending.length === 0) {
    ui.info("No remote run waits for an approval.");
    return "empty";
  }
  const chosen = await ui.pickThread(pendingPicks(pending), "Invincat remote runs waiting for approval");
  if (chosen === undefined) {
    return "closed";
  }
  const action = await ui.pickAction(
    [
      { label: APPROVE_ACTION, action: "approve" },
      { label: REJECT_ACTION, action: "reject" },
      { label: CANCEL_ACTION, action: "cancel" },
    ],
    `${chosen.label} (${chosen.description})`,
  );
  if (action === undefined) {
    return "closed";
  }
  try {
    if (action.action === "cancel") {
      const done = await ui.request<RemoteCancelResult>(REMOTE_CANCEL, cancelParams(chosen.pending, folder));
      const runs = Array.isArray(done?.cancelled) ? done.cancelled.map(printable).join(", ") : "";
      ui.info(`Cancelled on ${printable(done?.deployment)}: run ${runs}`);
      return "cancelled";
    }
    const reject = action.action === "reject";
    const done = await ui.request<RemoteApproveResult>(REMOTE_APPROVE, approveParams(chosen.pending, reject, folder));
    const verb = reject ? "Rejected" : "Approved";
    ui.info(`${verb} on ${printable(done.deployment)}: ${printable((done.calls ?? []).join("; "))}`);
    return reject ? "rejected" : "approved";
  } catch (err) {
    ui.error(message(err));
    return "failed";
  }
}
