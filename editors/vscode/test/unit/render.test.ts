// What the chat webview shows: markdown, cards and the plan, as HTML.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  escapeHtml,
  renderApproval,
  renderDiff,
  renderEntry,
  renderMarkdown,
  renderStatusLine,
  renderThreadOptions,
  renderTodosPanel,
} from "../../src/chat/webview/render";
import { contextUsageLabel, decisionLabel } from "../../src/chat/summaries";
import type { ApprovalEntry, ChatViewState } from "../../src/chat/viewState";

const edit: ApprovalEntry = {
  id: "approval:ap_1",
  rev: 0,
  kind: "approval",
  state: "pending",
  request: {
    type: "approval_requested",
    approval_id: "ap_1",
    kind: "tool",
    thread_id: "t",
    tool_name: "edit_file",
    description: "Edit file config.ini",
    path: "config.ini",
    diff: "--- a/config.ini\n+++ b/config.ini\n@@ -1,2 +1,2 @@\n [main]\n-mode = slow\n+mode = fast\n",
    proposed_text: "[main]\nmode = fast\n",
    always_options: [
      { scope: "session", label: "Allow all file writes and edits for the rest of this session", tool: "file_writes" },
      { scope: "workspace", label: "Allow all file writes and edits in /p, remembered", tool: "file_writes" },
    ],
  },
};

test("markdown renders code blocks with their language and escapes raw HTML", () => {
  const html = renderMarkdown("Run this:\n\n```python\nprint('<b>')\n```\n\n<script>alert(1)</script>");
  assert.match(html, /<pre><code class="hljs language-python"><span class="hljs-built_in">print<\/span>\(<span class="hljs-string">&#x27;&lt;b&gt;&#x27;<\/span>\)\n<\/code><\/pre>/);
  assert.match(html, /class="code-lang">python</);
  assert.ok(!html.includes("<script>"), html);
  assert.match(html, /&lt;script&gt;/);
});

test("code blocks are syntax highlighted; unknown languages are plain escaped text", () => {
  const html = renderMarkdown("```rust\nfn main() { let s = \"<x>\"; }\n```\n\n```nosuchlang\n<b>fn</b>\n```");
  assert.match(html, /<span class="hljs-keyword">fn<\/span>/);
  assert.match(html, /<span class="hljs-string">&quot;&lt;x&gt;&quot;<\/span>/);
  assert.match(html, /<code class="hljs language-nosuchlang">&lt;b&gt;fn&lt;\/b&gt;/);
  assert.ok(!html.includes("<x>") && !html.includes("<b>"), html);
});

test("a stream cut inside a fence still renders the partial code as code", () => {
  const html = renderMarkdown("```ts\nconst a = 1;");
  assert.match(html, /<code class="hljs language-ts"><span class="hljs-keyword">const<\/span> a = <span class="hljs-number">1<\/span>;/);
});

test("user text is escaped and keeps its line breaks", () => {
  const html = renderEntry({ id: "u", rev: 0, kind: "user", text: "a <b>\nsecond" });
  assert.match(html, /a &lt;b&gt;<br>second/);
});

test("tool cards show name, target and status", () => {
  const html = renderEntry({ id: "t", rev: 0, kind: "tool", callId: "c", name: "execute", summary: "npm test", status: "rejected", depth: 1 });
  assert.match(html, /status-rejected/);
  assert.match(html, /tool-name">execute</);
  assert.match(html, /npm test/);
  assert.match(html, /margin-left:16px/);
});

test("a pending edit card offers approve, approve always per scope with its label, reject with a message, and the diff", () => {
  const html = renderApproval(edit);
  assert.match(html, /Approval needed: Edit file config.ini/);
  assert.match(html, /data-action="approve" data-approval="ap_1"/);
  assert.match(html, /data-action="approve_always" data-approval="ap_1" data-scope="session"/);
  assert.match(html, /data-scope="workspace"/);
  assert.match(html, /title="Allow all file writes and edits for the rest of this session"/);
  assert.match(html, /class="reject-message"/);
  assert.match(html, /data-action="showDiff"/);
  assert.match(html, /<span class="diff-add">\+mode = fast<\/span>/);
  assert.match(html, /<span class="diff-del">-mode = slow<\/span>/);
});

test("a pending edit card is compact: title and relative path on one line, controls in two rows, no absolute path", () => {
  const html = renderApproval(edit);
  assert.match(html, /<div class="card-header"><div class="card-title">Approval needed: Edit file config.ini<\/div><a class="card-path"[^>]*data-path="config.ini"/);
  const controlRows = html.match(/<div class="(actions|reject-row|refine-row|always)"/g) ?? [];
  assert.equal(controlRows.length, 2, html);
  assert.ok(!html.includes("/p,"), "the workspace rule does not repeat the absolute project path");
  assert.match(html, /title="Allow all file writes and edits in this project, remembered"/);
  assert.ok(html.indexOf("card-body") < html.indexOf('data-action="approve"'), "the diff comes before the buttons");
});

test("a card whose request carries deny_option offers Reject always (this session), its rule as the tooltip", () => {
  const label = "Reject, and reject shell commands starting with `touch` for the rest of this session";
  const html = renderApproval({
    ...edit,
    request: {
      ...edit.request,
      tool_name: "execute",
      description: "Run touch a",
      path: null,
      diff: null,
      proposed_text: null,
      args: { command: "touch a" },
      deny_option: { scope: "session", label, tool: "execute", command_prefix: "touch" },
    },
  });
  assert.match(html, /<button class="secondary" data-action="reject_always" data-approval="ap_1" title="[^"]*touch[^"]*"[^>]*>Reject always \(this session\)<\/button>/);
  const rows = html.match(/<div class="(actions|reject-row|refine-row|always)"/g) ?? [];
  assert.equal(rows.length, 2, "still two rows of controls");
  // Without deny_option (an older server, a plan, a question) there is no such button.
  assert.ok(!renderApproval(edit).includes("reject_always"));
});

test("a card rejected always reads as a rejection with the rule it left", () => {
  const html = renderApproval({ ...edit, state: "resolved", decision: "reject_always (session)", remembered: "Reject, and reject file writes and edits for the rest of this session" });
  assert.match(html, /Rejected always \(this session\) — Reject, and reject file writes/);
  assert.ok(!html.includes("✓"), html);
});

test("a command approval shows the command and has no diff button", () => {
  const html = renderApproval({
    ...edit,
    request: { ...edit.request, tool_name: "execute", description: "Run npm test", path: null, diff: null, proposed_text: null, args: { command: "npm test" } },
  });
  assert.match(html, /\$ npm test/);
  assert.ok(!html.includes("showDiff"));
});

test("a decided card shows the outcome and no buttons", () => {
  const html = renderApproval({ ...edit, state: "resolved", decision: "approve_always (workspace)", remembered: "file writes in /p" });
  assert.match(html, /Approved always \(workspace\) — file writes in \/p/);
  assert.match(html, /card-title">Edit file config.ini</);
  assert.ok(!html.includes("<button"));
});

test("a rejected card reads as a rejection (red ✗), never as a green tick", () => {
  const html = renderApproval({ ...edit, state: "resolved", decision: "reject" });
  assert.match(html, /<div class="outcome outcome-rejected"><span class="outcome-icon">✗<\/span> Rejected/);
  assert.ok(!html.includes("✓"), html);
  assert.match(renderApproval({ ...edit, state: "resolved", decision: "approve" }), /outcome-approved"><span class="outcome-icon">✓<\/span> Approved/);
  assert.match(renderApproval({ ...edit, state: "closed", decision: "turn ended" }), /outcome-neutral/);
  assert.match(renderApproval({ ...edit, state: "resolved", decision: "refine" }), /outcome-neutral/);
});

test("buttons are disabled while a decision is on its way", () => {
  assert.match(renderApproval({ ...edit, busy: true }), /data-action="approve" data-approval="ap_1" disabled/);
});

test("a plan card lists the todos with approve, reject and refine with a feedback box", () => {
  const html = renderApproval({
    id: "p",
    rev: 0,
    kind: "approval",
    state: "pending",
    request: {
      type: "approval_requested",
      approval_id: "ap_p",
      kind: "plan",
      thread_id: "t",
      todos: [{ content: "Create hello.txt", status: "pending" }, { content: "Report back", status: "pending" }],
    },
  });
  assert.match(html, /Plan proposed/);
  assert.match(html, /<li class="todo todo-pending"><span class="todo-icon">○<\/span>Create hello.txt<\/li>/);
  for (const action of ["approve", "reject", "refine"]) {
    assert.match(html, new RegExp(`data-action="${action}" data-approval="ap_p"`));
  }
  assert.match(html, /<textarea class="feedback"/);
  assert.ok(!html.includes("approve_always"));
});

test("a question card has one answer box per question and option buttons", () => {
  const html = renderApproval({
    id: "q",
    rev: 0,
    kind: "approval",
    state: "pending",
    request: { type: "approval_requested", approval_id: "ap_q", kind: "question", thread_id: "t", questions: [{ question: "Which DB?", options: ["sqlite", "postgres"] }] },
  });
  assert.match(html, /Which DB\?/);
  assert.match(html, /data-action="pickOption" data-index="0" data-value="postgres"/);
  assert.match(html, /class="answer" data-index="0"/);
});

test("no approval card takes focus or decides on a key: no autofocus, no form that Enter submits", () => {
  // Cards are appended while the user types in the prompt box (issue 13 §4): they must not
  // move the focus, and Enter in a card's text field (reject message, feedback, answer)
  // must not submit a decision — only a click (or Space/Enter on a button the user
  // focused) decides.
  const plan: ApprovalEntry = {
    ...edit,
    id: "p",
    request: { type: "approval_requested", approval_id: "ap_p", kind: "plan", thread_id: "t", todos: [{ content: "a", status: "pending" }] },
  };
  const question: ApprovalEntry = {
    ...edit,
    id: "q",
    request: { type: "approval_requested", approval_id: "ap_q", kind: "question", thread_id: "t", questions: [{ question: "Which?", options: ["x"] }] },
  };
  for (const entry of [edit, plan, question]) {
    const html = renderApproval(entry);
    assert.ok(!/autofocus|tabindex|<form|type="submit"|accesskey/i.test(html), html);
  }
});

test("the todo panel counts completed items and marks statuses", () => {
  const html = renderTodosPanel([
    { content: "a", status: "completed" },
    { content: "b", status: "in_progress" },
    { content: "c", status: "pending" },
  ]);
  assert.match(html, /Plan · 1\/3 done/);
  assert.match(html, /todo-completed"><span class="todo-icon">✓/);
  assert.match(html, /todo-in_progress"><span class="todo-icon">◐/);
  assert.equal(renderTodosPanel([]), "");
});

test("diff lines get a class per kind", () => {
  assert.equal(
    renderDiff("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n c\n"),
    '<pre class="diff"><span class="diff-file">--- a/x</span>\n<span class="diff-file">+++ b/x</span>\n<span class="diff-hunk">@@ -1 +1 @@</span>\n<span class="diff-del">-a</span>\n<span class="diff-add">+b</span>\n<span class="diff-ctx"> c</span></pre>',
  );
});

test("the thread picker lists threads and selects the current one", () => {
  const html = renderThreadOptions(
    [{ threadId: "t_1", title: "add a <flag>", workspace: "/p", createdAt: "", updatedAt: "" }],
    "t_1",
  );
  assert.match(html, /<option value="">New thread<\/option>/);
  assert.match(html, /<option value="t_1" selected>add a &lt;flag&gt;<\/option>/);
  assert.match(renderThreadOptions([], "t_new"), /value="t_new" selected/);
});

test("the status line shows context usage, memory updating and a server problem", () => {
  const state: ChatViewState = {
    server: { state: "error", message: "spawn invincat ENOENT" },
    threads: [],
    planMode: false,
    busy: false,
    entries: [],
    todos: [],
    contextUsage: { tokens: 12_345, limit: 128_000 },
    memoryUpdating: true,
  };
  const html = renderStatusLine(state);
  assert.match(html, /Server error: spawn invincat ENOENT/);
  assert.match(html, /12\.3k \/ 128\.0k tokens \(10%\)/);
  assert.match(html, /Memory updating/);
  assert.ok(!html.includes('class="project"'), "a one-folder window names no project");
});

test("in a multi-root window the status line names the chat's project (escaped)", () => {
  const state: ChatViewState = {
    server: { state: "running" },
    threads: [],
    planMode: false,
    busy: false,
    entries: [],
    todos: [],
    memoryUpdating: false,
    project: "web<1>",
  };
  assert.match(renderStatusLine(state), /<span class="project" title="[^"]*web&lt;1&gt;">web&lt;1&gt;<\/span>/);
});

test("summaries and labels", () => {
  assert.equal(decisionLabel("approve_always (session)"), "Approved always (session)");
  assert.equal(decisionLabel("reject"), "Rejected");
  assert.equal(contextUsageLabel(500, 1000), "500 / 1.0k tokens (50%)");
  assert.equal(escapeHtml(`"'<>&`), "&quot;&#39;&lt;&gt;&amp;");
});

test("file names in answers are never web links; workspace paths become open-file links", () => {
  const html = renderMarkdown("Edit app.py, then README.md and src/main.rs:12. See `lib/util.ts` and https://example.com/x.");
  assert.ok(!html.includes("http://app.py"), html);
  assert.ok(!/href="http:\/\/(README\.md|main\.rs|src)/.test(html), html);
  assert.match(html, /<a href="#" class="file-link" data-action="openWorkspaceFile" data-path="app\.py">app\.py<\/a>/);
  assert.match(html, /data-path="README\.md">README\.md</);
  assert.match(html, /data-path="src\/main\.rs" data-line="12">src\/main\.rs:12</);
  assert.match(html, /data-path="lib\/util\.ts"><code>lib\/util\.ts<\/code><\/a>/);
  assert.match(html, /<a href="https:\/\/example\.com\/x">/, "real URLs stay links");
});

test("words that are not files stay words, and a URL's host is not a file", () => {
  const html = renderMarkdown("Node.js, e.g. version 1.2, mail me@example.com, or www-ish example.com and api.example.org");
  assert.ok(!html.includes("file-link"), html);
  assert.ok(!html.includes('href="http://example.com"'), html);
  assert.ok(!html.includes("mailto:"), html);
});
