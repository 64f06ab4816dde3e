// The chat model: invincat/event notifications → what the panel shows.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ChatModel, historyToEntries } from "../../src/chat/model";
import { renderEntry, renderThreadOptions } from "../../src/chat/webview/render";
import type { ApprovalRequested, InvincatEvent } from "../../src/common/protocol";
import type { ApprovalEntry, AssistantEntry, ToolEntry } from "../../src/chat/viewState";

const T = "t_1";
const TURN = "turn_1";

function feed(model: ChatModel, events: InvincatEvent[], threadId = T, turnId = TURN): void {
  for (const event of events) {
    model.applyEvent({ threadId, turnId, event });
  }
}

function started(prompt = "hi", mode: "agent" | "plan" = "agent"): ChatModel {
  const model = new ChatModel();
  model.beginSend(prompt, mode);
  model.sendAccepted(T, TURN);
  feed(model, [{ type: "turn_start", thread_id: T, turn_id: TURN }]);
  return model;
}

const editRequest: ApprovalRequested = {
  type: "approval_requested",
  approval_id: "ap_1",
  kind: "tool",
  thread_id: T,
  tool_call_id: "call_1",
  tool_name: "edit_file",
  args: { path: "a.txt", old_string: "x", new_string: "y" },
  description: "Edit file a.txt",
  path: "a.txt",
  diff: "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-x\n+y\n",
  proposed_text: "y\n",
  always_options: [{ scope: "session", label: "Allow all file writes for this session", tool: "file_writes" }],
};

test("the prompt shows at once and the new thread takes the server's id", () => {
  const model = new ChatModel();
  model.beginSend("explain main.py", "agent");
  let state = model.snapshot();
  assert.equal(state.threadId, undefined);
  assert.equal(state.busy, true);
  assert.deepEqual(state.entries.map((e) => e.kind), ["user"]);
  model.sendAccepted(T, TURN);
  state = model.snapshot();
  assert.equal(state.threadId, T);
  assert.equal(state.turnId, TURN);
  assert.equal(state.entries.length, 1);
});

test("events that arrive before the chat response land on the new thread after the prompt", () => {
  const model = new ChatModel();
  model.beginSend("hello", "agent");
  feed(model, [
    { type: "turn_start", thread_id: T, turn_id: TURN },
    { type: "message_delta", text: "Hi" },
  ]);
  model.sendAccepted(T, TURN);
  const kinds = model.snapshot().entries.map((e) => e.kind);
  assert.deepEqual(kinds, ["user", "assistant"]);
  assert.equal(model.snapshot().threadId, T);
});

test("message deltas stream into one answer that ends with the turn", () => {
  const model = started();
  feed(model, [
    { type: "message_delta", text: "Adding the " },
    { type: "message_delta", text: "flag." },
  ]);
  let answer = model.snapshot().entries[1] as AssistantEntry;
  assert.equal(answer.text, "Adding the flag.");
  assert.equal(answer.streaming, true);
  const rev = answer.rev;
  feed(model, [{ type: "turn_end", status: "completed", thread_id: T, turn_id: TURN }]);
  answer = model.snapshot().entries[1] as AssistantEntry;
  assert.equal(answer.streaming, false);
  assert.ok(answer.rev > rev, "a changed entry gets a new rev so the webview re-renders it");
  assert.equal(model.snapshot().busy, false);
});

test("a tool call without a summary (older server) shows the tool name alone", () => {
  const model = started();
  feed(model, [{ type: "tool_call", id: "c1", name: "read_file", args: { path: "main.py" } }]);
  const card = model.snapshot().entries.find((e) => e.kind === "tool") as ToolEntry;
  assert.equal(card.name, "read_file");
  assert.equal(card.summary, "");
});

test("tool calls become cards whose status follows the result; text after a tool is a new answer", () => {
  const model = started();
  feed(model, [
    { type: "message_delta", text: "Let me look." },
    { type: "tool_call", id: "c1", name: "read_file", args: { path: "main.py" }, summary: "Read main.py" },
    { type: "tool_result", id: "c1", name: "read_file", status: "success", content: "print('hi')" },
    { type: "message_delta", text: "It prints hi." },
  ]);
  const entries = model.snapshot().entries;
  assert.deepEqual(entries.map((e) => e.kind), ["user", "assistant", "tool", "assistant"]);
  const card = entries[2] as ToolEntry;
  assert.equal(card.summary, "Read main.py", "the server's summary is shown as sent");
  assert.equal(card.status, "success");
  assert.equal(card.detail, "print('hi')");
});

test("a read_file result keeps its lines for a preformatted block; one-line results do not need one", () => {
  const model = started();
  const file = "     1\timport os\n     2\t\n     3\tprint(os.getcwd())\n";
  feed(model, [
    { type: "tool_call", id: "c1", name: "read_file", args: { path: "main.py" }, summary: "Read main.py" },
    { type: "tool_result", id: "c1", name: "read_file", status: "success", content: file },
  ]);
  const card = model.snapshot().entries.find((e) => e.kind === "tool") as ToolEntry;
  assert.equal(card.output, "     1\timport os\n     2\t\n     3\tprint(os.getcwd())");
  const html = renderEntry(card);
  assert.match(html, /<div class="tool-output"><pre>     1\timport os\n     2\t\n     3\tprint\(os.getcwd\(\)\)<\/pre><\/div>/);
  const long = renderEntry({ ...card, output: Array.from({ length: 40 }, (_, i) => `line ${i}`).join("\n") });
  assert.match(long, /class="tool-output collapsed"/);
  assert.match(long, /data-action="toggleOutput">Show all 40 lines</);
});

test("write_todos and approve_plan calls are not cards: the plan UI shows them", () => {
  const model = started("plan it", "plan");
  feed(model, [
    { type: "tool_call", id: "c1", name: "write_todos", args: { todos: [] } },
    { type: "todos", items: [{ content: "Step one", status: "pending" }] },
  ]);
  const state = model.snapshot();
  assert.deepEqual(state.entries.map((e) => e.kind), ["user"]);
  assert.deepEqual(state.todos, [{ content: "Step one", status: "pending" }]);
});

test("an approval card resolves when the server says so, whoever decided", () => {
  const model = started();
  feed(model, [
    { type: "tool_call", id: "call_1", name: "edit_file", args: editRequest.args ?? {} },
    editRequest,
  ]);
  model.markDeciding("ap_1", true);
  let card = model.findApproval("ap_1") as ApprovalEntry;
  assert.equal(card.state, "pending");
  assert.equal(card.busy, true);
  feed(model, [{ type: "approval_resolved", approval_id: "ap_1", decision: "approve" }]);
  card = model.findApproval("ap_1") as ApprovalEntry;
  assert.equal(card.state, "resolved");
  assert.equal(card.decision, "approve");
  assert.equal(card.busy, false);
});

test("a refused decision leaves the card pending with the reason", () => {
  const model = started();
  feed(model, [editRequest]);
  model.markDeciding("ap_1", true);
  model.markDeciding("ap_1", false, "Approval ap_1 was already resolved elsewhere.");
  const card = model.findApproval("ap_1") as ApprovalEntry;
  assert.equal(card.state, "pending");
  assert.equal(card.note, "Approval ap_1 was already resolved elsewhere.");
});

test("a cancelled turn closes its pending approvals and running tools", () => {
  const model = started();
  feed(model, [
    { type: "tool_call", id: "call_1", name: "edit_file", args: {} },
    editRequest,
    { type: "turn_end", status: "cancelled", thread_id: T, turn_id: TURN },
  ]);
  const entries = model.snapshot().entries;
  const card = model.findApproval("ap_1") as ApprovalEntry;
  assert.equal(card.state, "closed");
  assert.equal((entries.find((e) => e.kind === "tool") as ToolEntry).status, "error");
  assert.equal(entries[entries.length - 1].kind, "notice");
});

test("context usage, errors and the memory indicator", () => {
  const model = started();
  feed(model, [
    { type: "context_usage", tokens: 412, limit: 128000 },
    { type: "error", message: "The model server at X returned HTTP 500" },
    { type: "turn_end", status: "failed", thread_id: T, turn_id: TURN },
    { type: "memory_updating" },
  ]);
  let state = model.snapshot();
  assert.deepEqual(state.contextUsage, { tokens: 412, limit: 128000 });
  assert.equal(state.memoryUpdating, true);
  assert.ok(state.entries.some((e) => e.kind === "notice" && e.level === "error" && e.text.includes("HTTP 500")));
  feed(model, [{ type: "memory_changed", scope: "project", batch_id: "b_1" }]);
  state = model.snapshot();
  assert.equal(state.memoryUpdating, false);
  // Memory work that changed nothing still ends the indicator.
  feed(model, [{ type: "memory_updating" }, { type: "memory_idle", changed: false }]);
  assert.equal(model.snapshot().memoryUpdating, false);
});

test("events of another thread do not show on the current one", () => {
  const model = started();
  feed(model, [{ type: "message_delta", text: "elsewhere" }], "t_other", "turn_x");
  assert.deepEqual(model.snapshot().entries.map((e) => e.kind), ["user"]);
  model.switchThread("t_other");
  assert.deepEqual(model.snapshot().entries.map((e) => e.kind), ["assistant"]);
});

test("pending approvals from before a restart show on their thread once", () => {
  const model = new ChatModel();
  model.addPendingApprovals([editRequest, editRequest]);
  model.switchThread(T);
  assert.equal(model.snapshot().entries.filter((e) => e.kind === "approval").length, 1);
});

test("a new thread starts empty; switching back keeps the old transcript", () => {
  const model = started();
  model.newThread();
  assert.deepEqual(model.snapshot().entries, []);
  assert.equal(model.snapshot().threadId, undefined);
  model.switchThread(T);
  assert.equal(model.snapshot().entries.length, 1);
  assert.equal(model.needsHistory(), false);
  model.switchThread("t_saved");
  assert.equal(model.needsHistory(), true);
});

test("thread history becomes prompts, answers and tool cards with their results", () => {
  let n = 0;
  const entries = historyToEntries(
    [
      { role: "system", content: "you are" },
      { role: "user", content: "one" },
      { role: "assistant", content: "", tool_calls: [{ id: "c1", name: "execute", args: { command: "npm test" }, summary: "Run `npm test`" }] },
      { role: "tool", tool_call_id: "c1", name: "execute", status: "error", content: "1 failing" },
      { role: "assistant", content: [{ type: "text", text: "first" }] },
    ],
    () => `h${++n}`,
  );
  assert.deepEqual(entries.map((e) => e.kind), ["user", "tool", "assistant"]);
  const card = entries[1] as ToolEntry;
  assert.equal(card.summary, "Run `npm test`");
  assert.equal(card.status, "error");
  assert.equal((entries[2] as AssistantEntry).text, "first");
});

test("when the server stops, its turns end but their approvals stay pending", () => {
  const model = started();
  feed(model, [
    { type: "message_delta", text: "Writing" },
    { type: "tool_call", id: "call_1", name: "edit_file", args: {} },
    editRequest,
  ]);
  model.serverStopped();
  const state = model.snapshot();
  assert.equal(state.busy, false);
  assert.equal(state.turnId, undefined);
  assert.equal((state.entries.find((e) => e.kind === "tool") as ToolEntry).status, "error");
  assert.equal((model.findApproval("ap_1") as ApprovalEntry).state, "pending");
  // The new server offers the same approval again: it is not shown twice.
  model.addPendingApprovals([editRequest]);
  assert.equal(model.snapshot().entries.filter((e) => e.kind === "approval").length, 1);
});

test("a pristine new thread is one nothing was typed in", () => {
  const model = new ChatModel();
  assert.equal(model.isPristine(), true);
  model.beginSend("x", "agent");
  assert.equal(model.isPristine(), false);
});

test("the thread picker names a new thread by its prompt at once, not by its id", () => {
  const model = new ChatModel();
  model.setThreads([{ threadId: "t_old", title: "Earlier", workspace: "/p", createdAt: "", updatedAt: "" }]);
  model.beginSend("Fix the failing\ntest please", "agent");
  model.sendAccepted("t_new", TURN);
  const threads = model.snapshot().threads;
  assert.deepEqual(threads.map((t) => [t.threadId, t.title]), [["t_new", "Fix the failing test please"], ["t_old", "Earlier"]]);
  assert.ok(!renderThreadOptions(threads, "t_new").includes(">t_new<"));
  // Once the server lists it, its own title is used.
  model.setThreads([{ threadId: "t_new", title: "Server title", workspace: "/p", createdAt: "", updatedAt: "" }]);
  assert.deepEqual(model.snapshot().threads.map((t) => t.title), ["Server title"]);
});
