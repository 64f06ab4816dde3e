// "Invincat: Remote Approvals": list → pick a thread → pick approve, reject or cancel → send,
// against a fake editor UI and a fake server; a closed pick sends nothing, errors are shown.
import { test } from "node:test";
import assert from "node:assert/strict";
import { REMOTE_APPROVE, REMOTE_CANCEL, REMOTE_LIST } from "../../src/common/constants";
import {
  APPROVE_ACTION,
  CANCEL_ACTION,
  REJECT_ACTION,
  pendingPicks,
  remoteApprovals,
  type ActionPick,
  type PendingPick,
  type RemotePending,
  type RemoteUi,
} from "../../src/remote/remote";

const PENDING: RemotePending = {
  deployment: "lab",
  thread_id: "01a23a9d-41cf-74c9-a3ab-364889f19092",
  kind: "tool_approval",
  calls: [{ tool_name: "write_file", summary: "Write notes.txt", tool_call_id: "call_1", approval_id: "ap_1" }],
};

interface Script {
  listed?: unknown;
  listFails?: string;
  approveFails?: string;
  cancelFails?: string;
  cancelled?: unknown;
  thread?: (items: PendingPick[]) => PendingPick | undefined;
  action?: (items: ActionPick[]) => ActionPick | undefined;
}

function harness(script: Script) {
  const sent: [string, object][] = [];
  const infos: string[] = [];
  const errors: string[] = [];
  const threads: PendingPick[][] = [];
  const actions: ActionPick[][] = [];
  const ui: RemoteUi = {
    request: async <R>(method: string, params: object): Promise<R> => {
      sent.push([method, params]);
      if (method === REMOTE_LIST) {
        if (script.listFails) throw new Error(script.listFails);
        return (script.listed ?? { pending: [PENDING], skipped: 0 }) as R;
      }
      if (method === REMOTE_CANCEL) {
        if (script.cancelFails) throw new Error(script.cancelFails);
        return (script.cancelled ?? { deployment: "lab", thread_id: PENDING.thread_id, cancelled: ["r2"] }) as R;
      }
      if (script.approveFails) throw new Error(script.approveFails);
      const reject = (params as { reject: boolean }).reject;
      return { deployment: "lab", thread_id: PENDING.thread_id, run_id: "r2", decision: reject ? "reject" : "approve", calls: ["Write notes.txt"] } as R;
    },
    pickThread: async (items) => {
      threads.push(items);
      return (script.thread ?? ((all) => all[0]))(items);
    },
    pickAction: async (items) => {
      actions.push(items);
      return (script.action ?? ((all) => all[0]))(items);
    },
    info: (message) => void infos.push(message),
    error: (message) => void errors.push(message),
  };
  return { ui, sent, infos, errors, threads, actions };
}

test("a picked thread is approved on its deployment, for the folder it was listed in", async () => {
  const h = harness({});
  assert.equal(await remoteApprovals(h.ui, "file:///p"), "approved");
  assert.deepEqual(h.sent, [
    [REMOTE_LIST, { folder: "file:///p" }],
    [REMOTE_APPROVE, { threadId: PENDING.thread_id, deployment: "lab", reject: false, folder: "file:///p" }],
  ]);
  assert.equal(h.threads[0][0].label, "Write notes.txt");
  assert.match(h.threads[0][0].description, /lab · 01a23a9d/);
  assert.deepEqual(h.infos, ["Approved on lab: Write notes.txt"]);
});

test("reject sends reject: true and no folder when there is none", async () => {
  const h = harness({ action: (all) => all.find((a) => a.label === REJECT_ACTION) });
  assert.equal(await remoteApprovals(h.ui, undefined), "rejected");
  assert.deepEqual(h.sent[1], [REMOTE_APPROVE, { threadId: PENDING.thread_id, deployment: "lab", reject: true }]);
  assert.match(h.infos[0], /^Rejected on lab/);
});

test("the three actions are offered for the picked thread, approve first", async () => {
  const h = harness({});
  await remoteApprovals(h.ui, undefined);
  assert.deepEqual(h.actions[0].map((a) => [a.label, a.action]), [
    [APPROVE_ACTION, "approve"],
    [REJECT_ACTION, "reject"],
    [CANCEL_ACTION, "cancel"],
  ]);
  assert.match(CANCEL_ACTION, /^Cancel run/);
});

test("cancel run sends invincat/remote/cancel for the thread on its deployment, and nothing else", async () => {
  const h = harness({ action: (all) => all.find((a) => a.action === "cancel") });
  assert.equal(await remoteApprovals(h.ui, "file:///p"), "cancelled");
  assert.deepEqual(h.sent, [
    [REMOTE_LIST, { folder: "file:///p" }],
    [REMOTE_CANCEL, { threadId: PENDING.thread_id, deployment: "lab", folder: "file:///p" }],
  ]);
  assert.deepEqual(h.infos, ["Cancelled on lab: run r2"]);
  const bare = harness({ action: (all) => all.find((a) => a.action === "cancel") });
  await remoteApprovals(bare.ui, undefined);
  assert.deepEqual(bare.sent[1], [REMOTE_CANCEL, { threadId: PENDING.thread_id, deployment: "lab" }]);
});

test("a cancel the server refuses is shown as its message, not thrown", async () => {
  const h = harness({
    action: (all) => all.find((a) => a.action === "cancel"),
    cancelFails: "Thread x has no run to cancel (it waits for an approval: reject it instead).",
  });
  assert.equal(await remoteApprovals(h.ui, undefined), "failed");
  assert.deepEqual(h.infos, []);
  assert.match(h.errors[0], /no run to cancel/);
});

test("a cancel answer of the wrong shape or with control characters stays text", async () => {
  for (const cancelled of [null, { deployment: "lab", cancelled: "r2" }, { deployment: "l\u001bab", cancelled: ["r\n2", 7] }]) {
    const h = harness({ action: (all) => all.find((a) => a.action === "cancel"), cancelled });
    assert.equal(await remoteApprovals(h.ui, undefined), "cancelled");
    assert.equal(h.errors.length, 0);
    assert.doesNotMatch(h.infos[0], /[\u0000-\u001f]/);
  }
});

test("closing either pick sends no decision", async () => {
  for (const script of [{ thread: () => undefined }, { action: () => undefined }] as Script[]) {
    const h = harness(script);
    assert.equal(await remoteApprovals(h.ui, undefined), "closed");
    assert.deepEqual(h.sent.map(([method]) => method), [REMOTE_LIST]);
  }
});

test("nothing waiting: said, nothing to pick", async () => {
  const h = harness({ listed: { pending: [], skipped: 0 } });
  assert.equal(await remoteApprovals(h.ui, undefined), "empty");
  assert.equal(h.threads.length, 0);
  assert.match(h.infos[0], /No remote run waits/);
});

test("server errors are shown, not thrown", async () => {
  const listing = harness({ listFails: "Cannot reach the remote deployment lab at http://127.0.0.1:9" });
  assert.equal(await remoteApprovals(listing.ui, undefined), "failed");
  assert.match(listing.errors[0], /Cannot reach/);
  const approving = harness({ approveFails: "Thread x waits for no approval." });
  assert.equal(await remoteApprovals(approving.ui, undefined), "failed");
  assert.match(approving.errors[0], /waits for no approval/);
});

test("an answer of the wrong shape offers only the items that fit", async () => {
  const h = harness({ listed: { pending: [42, { thread_id: 1 }, null, PENDING] } });
  assert.equal(await remoteApprovals(h.ui, undefined), "approved");
  assert.equal(h.threads[0].length, 1);
  const bad = harness({ listed: { pending: "nope" } });
  assert.equal(await remoteApprovals(bad.ui, undefined), "empty");
});

test("control characters from the server do not reach the pick's text", () => {
  const [pick] = pendingPicks([{ ...PENDING, thread_id: "t\u001b[2J", calls: [{ ...PENDING.calls[0], summary: "Write\na" }] }]);
  assert.equal(pick.label, "Write a");
  assert.equal(pick.description, "lab · t [2J");
  assert.equal(APPROVE_ACTION.startsWith("Approve"), true);
});
