// The memory sidebar: grouping, labels and the requests its actions send.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  actionParams,
  archivedHintLabel,
  buildMemoryTree,
  buildMultiRootTree,
  citationDescription,
  citationLabel,
  citationNodes,
  citationOpensInProject,
  citationRange,
  citationTarget,
  entryContext,
  entryDescription,
  entryLabel,
  entryTooltip,
  historyMarkdown,
  nodeKey,
  projectRootOf,
  reportProblem,
  scopeChildren,
  scopeLabel,
  showParams,
} from "../../src/memory/nodes";
import type { MemoryEntry } from "../../src/common/protocol";

function entry(id: string, fields: Partial<MemoryEntry> = {}): MemoryEntry {
  return { id, scope: "project", section: "Testing", content: "Run ./scripts/test", status: "active", score: 85, tier: "hot", ...fields };
}

test("entries group by scope then tier; both scopes always show; empty tiers do not", () => {
  const tree = buildMemoryTree(
    [
      entry("mem_p_000001"),
      entry("mem_p_000002", { score: 50, tier: "warm" }),
      entry("mem_p_000003", { score: 90, tier: "hot" }),
      entry("mem_u_000001", { scope: "user", section: "User Preferences", content: "Short answers", score: 20, tier: "cold" }),
      entry("mem_p_000004", { status: "archived" }),
    ],
    false,
  );
  assert.deepEqual(tree.map((s) => s.scope), ["user", "project"]);
  assert.deepEqual(tree[0].groups.map((g) => g.group), ["cold"]);
  assert.deepEqual(tree[1].groups.map((g) => g.group), ["hot", "warm"]);
  assert.deepEqual(tree[1].groups[0].entries.map((e) => e.entry.id), ["mem_p_000003", "mem_p_000001"], "highest score first");
  assert.equal(tree[1].count, 3, "archived entries are hidden unless asked for");
});

test("with the archived toggle on, archived entries get their own group", () => {
  const tree = buildMemoryTree([entry("mem_p_000001"), entry("mem_p_000002", { status: "archived" })], true);
  assert.deepEqual(tree[1].groups.map((g) => g.group), ["hot", "archived"]);
  assert.equal(tree[0].groups.length, 0);
});

test("labels: section: content, the score, and the context value menus use", () => {
  const e = entry("mem_p_000001");
  assert.equal(entryLabel(e), "Testing: Run ./scripts/test");
  assert.equal(entryDescription(e), "hot · 85");
  assert.equal(entryContext(e), "memoryEntry.active");
  assert.equal(entryContext({ ...e, status: "archived" }), "memoryEntry.archived");
});

test("archive, restore and delete are one governed op on the entry's scope", () => {
  assert.deepEqual(actionParams("archive", entry("mem_p_000007")), {
    scope: "project",
    operations: [{ op: "archive", scope: "project", id: "mem_p_000007", reason: "Archived from the VS Code memory sidebar" }],
  });
  const del = actionParams("delete", entry("mem_u_000001", { scope: "user" }));
  assert.equal(del.scope, "user");
  assert.equal(del.operations[0].op, "delete");
});

test("a governance refusal is reported with its reasons", () => {
  assert.equal(reportProblem({ applied: [{ op: "archive", id: "x" }], dropped: [] }), undefined);
  assert.equal(reportProblem({ rejected: true, reason: "more than 20 ops" }), "more than 20 ops");
  assert.equal(reportProblem({ dropped: [{ reason: "archive of an archived entry" }] }), "archive of an archived entry");
});

test("the history document lists each batch that touched the entry", () => {
  const md = historyMarkdown(entry("mem_p_000001"), "mem_p_000001", [
    { batch_id: "b_1", time: "2026-11-30T07:00:00+00:00", actor: "memory_agent", applied: [{ op: "create", id: "mem_p_000001" }] },
    { batch_id: "b_2", time: "2026-11-30T08:00:00+00:00", actor: "user", applied: [{ op: "archive", id: "mem_p_000001" }], reason: null },
  ]);
  assert.match(md, /# Memory mem_p_000001/);
  assert.match(md, /\*\*create\*\* by memory_agent · `b_1`/);
  assert.match(md, /\*\*archive\*\* by user · `b_2`/);
  assert.match(historyMarkdown(null, "mem_p_9", []), /no longer exists/);
});

test("a stale entry gets a badge, the note in its tooltip, and its citations as locations", () => {
  const cited = entry("mem_p_000009", {
    stale: true,
    citations: [
      { path: "scripts/deploy.sh", start_line: 3, end_line: 4 },
      { path: "Makefile", start_line: 7, end_line: 7 },
    ],
    verification: {
      state: "stale",
      stale: true,
      note: "may be stale: scripts/deploy.sh lines 3-4 changed",
      citations: [
        { citation: { path: "scripts/deploy.sh", start_line: 3, end_line: 4 }, state: "changed", change: "scripts/deploy.sh lines 3-4 changed" },
        { citation: { path: "Makefile", start_line: 7, end_line: 7 }, state: "moved", current: { path: "Makefile", start_line: 9, end_line: 9 } },
      ],
    },
  });
  assert.equal(entryDescription(cited), "hot · 85 · may be stale");
  assert.match(entryTooltip(cited), /may be stale: scripts\/deploy.sh lines 3-4 changed/);
  const nodes = citationNodes(cited);
  assert.deepEqual(nodes.map((n) => citationLabel(citationTarget(n))), ["scripts/deploy.sh:3-4", "Makefile:9"], "a moved citation opens where the text is now");
  assert.deepEqual(nodes.map(citationDescription), ["scripts/deploy.sh lines 3-4 changed", "moved"]);
  assert.deepEqual(citationRange(citationTarget(nodes[0])), { start: 2, end: 3 }, "0-based for the editor");
  assert.equal(entryDescription(entry("mem_p_000001")), "hot · 85");
  assert.deepEqual(citationNodes(entry("mem_p_000001")), []);
});

test("citations resolve against the project root the project store lives in", () => {
  assert.equal(projectRootOf("/home/me/project/.invincat/memory_project.json"), "/home/me/project");
  assert.equal(projectRootOf("C:\\work\\app\\.invincat\\memory_project.json"), "C:\\work\\app");
  assert.equal(projectRootOf(undefined), undefined);
  assert.equal(projectRootOf("/elsewhere/memory.json"), undefined);
});

test("a citation leaving the project is not opened", () => {
  const at = (path: string) => ({ path, start_line: 1, end_line: 1 });
  assert.equal(citationOpensInProject(at("scripts/deploy.sh")), true);
  assert.equal(citationOpensInProject(at("../outside/notes.txt")), false);
  assert.equal(citationOpensInProject(at("src/../../x")), false);
  assert.equal(citationOpensInProject(at("/etc/passwd")), false);
  assert.equal(citationOpensInProject(at("C:\\Users\\me\\x")), false);
});

test("an entry that records who proposed it says so: by NAME, the e-mail and branch in the tooltip", () => {
  const e = entry("mem_p_01kbx3v6e9q2w5r7t0y4k1m8nz", {
    source: { actor: "cli", author: { name: "Ada Lovelace", email: "ada@example.com" }, branch: "feature/api" },
  });
  assert.equal(entryDescription(e), "hot · 85 · by Ada Lovelace");
  assert.ok(entryTooltip(e).split("\n").includes("by Ada Lovelace \\<ada@example\\.com\\> on feature/api"), entryTooltip(e));
  assert.equal(entryDescription({ ...e, stale: true }), "hot · 85 · may be stale · by Ada Lovelace");
  const noEmail = entry("mem_p_000001", { source: { author: { name: "os-user", email: null } } });
  assert.equal(entryDescription(noEmail), "hot · 85 · by os-user");
  assert.doesNotMatch(entryTooltip(noEmail), /</);
  // An older entry, or one whose author is not what the protocol says: no "by".
  const odd = entry("mem_p_000002", { source: { author: { name: 5 } } } as unknown as Partial<MemoryEntry>);
  assert.equal(entryDescription(odd), "hot · 85");
  assert.equal(entryDescription(entry("mem_p_000003", { source: { author: null } })), "hot · 85");
});

test("long entries: the full text is in the tooltip (literally), tier and score in the description", () => {
  const content = "Always run ./scripts/test -k memory before pushing a change to the governance module *and* the docs";
  const e = entry("mem_p_000001", { content, tier: "warm", score: 62 });
  assert.equal(entryDescription(e), "warm · 62");
  assert.equal(entryDescription({ ...e, status: "archived" }), "archived · 62");
  const tooltip = entryTooltip(e);
  assert.ok(tooltip.replace(/\\(.)/g, "$1").includes(content), tooltip);
  assert.ok(tooltip.includes("\\*and\\*"), "markdown characters are shown, not interpreted");
});

test("after archiving the last entry a hint says archived entries exist", () => {
  const items = [entry("mem_p_000001", { status: "archived" }), entry("mem_p_000002", { status: "archived" })];
  const hidden = buildMemoryTree(items, false);
  assert.equal(hidden[1].count, 0);
  assert.deepEqual(scopeChildren(hidden[1]), [{ kind: "archivedHint", scope: "project", count: 2 }]);
  assert.equal(archivedHintLabel(2), "2 archived — Show Archived Memories");
  assert.deepEqual(scopeChildren(hidden[0]), [], "no hint where nothing is archived");
  const shown = buildMemoryTree(items, true);
  assert.deepEqual(scopeChildren(shown[1]).map((n) => n.kind), ["group"], "no hint once they are shown");
});

// ---------------------------------------------------------------- multi-root windows

const apiFolder = { uri: "file:///work/api", name: "api" };
const webFolder = { uri: "file:///work/web", name: "web" };

test("one folder: the tree is User and Project, exactly as before multi-root", () => {
  const tree = buildMemoryTree([entry("mem_p_000001"), entry("mem_u_000001", { scope: "user" })], false);
  assert.deepEqual(tree.map(scopeLabel), ["User", "Project"]);
  assert.ok(tree.every((node) => node.owner === undefined));
  assert.equal(nodeKey(tree[1].owner, "scope:project"), "scope:project");
  assert.deepEqual(actionParams("archive", tree[1].groups[0].entries[0].entry, tree[1].owner), {
    scope: "project",
    operations: [{ op: "archive", scope: "project", id: "mem_p_000001", reason: "Archived from the VS Code memory sidebar" }],
  });
});

test("two folders: User once, then one Project memory node per folder, each with its own entries", () => {
  const tree = buildMultiRootTree(
    [entry("mem_u_000001", { scope: "user" })],
    [
      { folder: apiFolder, items: [entry("mem_p_000001", { content: "api tests" })], store: "/work/api/.invincat/memory_project.json" },
      { folder: webFolder, items: [entry("mem_p_000001", { content: "web tests" })], store: "/work/web/.invincat/memory_project.json" },
    ],
    false,
  );
  assert.deepEqual(tree.map(scopeLabel), ["User", "Project memory — api", "Project memory — web"]);
  assert.equal(tree[0].count, 1);
  assert.equal(tree[1].groups[0].entries[0].entry.content, "api tests");
  assert.equal(tree[2].groups[0].entries[0].entry.content, "web tests");
  // The same id in two projects: distinct tree ids, and each action goes to its own folder.
  const webEntry = tree[2].groups[0].entries[0];
  assert.notEqual(nodeKey(tree[1].groups[0].entries[0].owner, "entry:mem_p_000001"), nodeKey(webEntry.owner, "entry:mem_p_000001"));
  assert.equal(actionParams("delete", webEntry.entry, webEntry.owner).folder, "file:///work/web");
  assert.deepEqual(showParams(webEntry.entry, webEntry.owner), { id: "mem_p_000001", folder: "file:///work/web" });
  assert.equal(citationNodes(entry("x", { citations: [{ path: "a", start_line: 1, end_line: 1, sha256: "", anchor: "" }] }), webEntry.owner)[0].owner, webEntry.owner);
  // The user node's actions carry no folder (user memory is one per user).
  assert.equal(tree[0].owner, undefined);
});

test("two folders of one project share one node; a folder that could not be read says so", () => {
  const store = "/repo/.invincat/memory_project.json";
  const tree = buildMultiRootTree(
    [],
    [
      { folder: { uri: "file:///repo/service", name: "service" }, items: [entry("mem_p_000001")], store },
      { folder: apiFolder, items: [], error: "store format version 2 is newer" },
      { folder: { uri: "file:///repo/client", name: "client" }, items: [entry("mem_p_000001")], store },
    ],
    false,
  );
  assert.deepEqual(tree.map(scopeLabel), ["User", "Project memory — service, client", "Project memory — api"]);
  assert.equal(tree[1].count, 1);
  assert.equal(tree[2].owner?.error, "store format version 2 is newer");
});

test("a project node's archived hint keeps its project", () => {
  const tree = buildMultiRootTree([], [{ folder: webFolder, items: [entry("mem_p_000009", { status: "archived" })] }], false);
  const hint = scopeChildren(tree[1]).at(-1);
  assert.equal(hint?.kind, "archivedHint");
  assert.equal(hint?.owner?.folder, webFolder);
});
