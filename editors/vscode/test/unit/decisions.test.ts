// Card buttons → invincat/resolveApproval params.
import { test } from "node:test";
import assert from "node:assert/strict";
import { DecisionError, hasDiff, resolveParams } from "../../src/approvals/decisions";
import type { ApprovalRequested } from "../../src/common/protocol";

test("approve sends only the id and the decision", () => {
  assert.deepEqual(resolveParams({ approvalId: "ap_1", decision: "approve" }), { approvalId: "ap_1", decision: "approve" });
});

test("approve always carries the chosen scope", () => {
  assert.deepEqual(resolveParams({ approvalId: "ap_1", decision: "approve_always", scope: "workspace" }), {
    approvalId: "ap_1",
    decision: "approve_always",
    scope: "workspace",
  });
  assert.throws(() => resolveParams({ approvalId: "ap_1", decision: "approve_always" }), DecisionError);
});

test("reject sends the message only when the user typed one", () => {
  assert.deepEqual(resolveParams({ approvalId: "ap_1", decision: "reject", message: "  " }), {
    approvalId: "ap_1",
    decision: "reject",
  });
  assert.deepEqual(resolveParams({ approvalId: "ap_1", decision: "reject", message: " use README.md " }), {
    approvalId: "ap_1",
    decision: "reject",
    message: "use README.md",
  });
});

test("refine needs feedback and is only for plans", () => {
  assert.deepEqual(resolveParams({ approvalId: "ap_p", decision: "refine", feedback: "smaller steps" }, "plan"), {
    approvalId: "ap_p",
    decision: "refine",
    feedback: "smaller steps",
  });
  assert.throws(() => resolveParams({ approvalId: "ap_p", decision: "refine", feedback: " " }, "plan"), /Say what to change/);
  assert.throws(() => resolveParams({ approvalId: "ap_t", decision: "refine", feedback: "x" }, "tool"), DecisionError);
  assert.throws(() => resolveParams({ approvalId: "ap_p", decision: "approve_always", scope: "session" }, "plan"), DecisionError);
});

test("answers are trimmed and every question must be answered", () => {
  assert.deepEqual(resolveParams({ approvalId: "ap_q", decision: "answer", answers: [" yes ", "blue"] }, "question"), {
    approvalId: "ap_q",
    decision: "answer",
    answers: ["yes", "blue"],
  });
  assert.throws(() => resolveParams({ approvalId: "ap_q", decision: "answer", answers: ["yes", ""] }, "question"), DecisionError);
});

test("only file edits with a path and proposed text have a diff", () => {
  const base: ApprovalRequested = { type: "approval_requested", approval_id: "a", kind: "tool", thread_id: "t" };
  assert.equal(hasDiff({ ...base, path: "a.txt", proposed_text: "x\n" }), true);
  assert.equal(hasDiff({ ...base, path: "a.txt", proposed_text: "" }), true);
  assert.equal(hasDiff({ ...base, tool_name: "execute", args: { command: "ls" } }), false);
  assert.equal(hasDiff({ ...base, kind: "plan", path: "a.txt", proposed_text: "x" }), false);
});

test("reject always (this session) sends reject_always, with the message when one was typed", () => {
  assert.deepEqual(resolveParams({ approvalId: "ap_1", decision: "reject_always" }), { approvalId: "ap_1", decision: "reject_always" });
  assert.deepEqual(resolveParams({ approvalId: "ap_1", decision: "reject_always", message: " not now " }), {
    approvalId: "ap_1",
    decision: "reject_always",
    message: "not now",
  });
  // Plans and questions offer no deny rule: the server would refuse it.
  assert.throws(() => resolveParams({ approvalId: "ap_p", decision: "reject_always" }, "plan"), DecisionError);
  assert.throws(() => resolveParams({ approvalId: "ap_q", decision: "reject_always" }, "question"), DecisionError);
});
