// The memory view's skipped entries: `invalid_entries` of invincat/memory/list shown as
// warnings under their scope, read defensively (old servers, wrong types, hostile ids).
import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "fs";
import * as path from "path";
import { folderMemoryOf, scopeAnswer, treeOfAnswer } from "../../src/memory/answers";
import { buildMemoryTree, buildMultiRootTree, scopeChildren, scopeDescription, type MemoryNode } from "../../src/memory/nodes";
import { MAX_SKIPPED_SHOWN, moreSkippedLabel, parseSkipped, skippedLabel, skippedTooltip } from "../../src/memory/skipped";
import type { MemoryEntry, MemoryListResult } from "../../src/common/protocol";

function entry(id: string, fields: Partial<MemoryEntry> = {}): MemoryEntry {
  return { id, scope: "project", section: "Testing", content: "Run ./scripts/test", status: "active", score: 85, tier: "hot", ...fields };
}

/**
 * invincat/memory/list over the stores of tests/memory/bad_stores.py with one bad project
 * entry at items[1] (`cite_nul_byte`: a citation path with a NUL byte; `a_string`: a string
 * instead of an object, so no id), recorded from the real language server;
 * tests/lsp/test_vscode_skipped_fixture.py checks the recording against it.
 */
const RECORDED: Record<string, MemoryListResult> = JSON.parse(
  fs.readFileSync(path.resolve(__dirname, "../../../test/unit/fixtures/memory-list-invalid.json"), "utf8"),
);
const STORES = { user: "/home/me/.invincat/memory_user.json", project: "/home/me/proj/.invincat/memory_project.json" };
const LIST_ANSWER: MemoryListResult = { ...RECORDED.cite_nul_byte, stores: STORES };
const NO_ID_ANSWER: MemoryListResult = { ...RECORDED.a_string, stores: STORES };
const SERVER_ANSWER: unknown = LIST_ANSWER.invalid_entries;

function kinds(nodes: MemoryNode[]): string[] {
  return nodes.map((node) => node.kind);
}

test("a server's answer with a skipped entry: a warning row under its scope, worded like the Neovim sidebar", () => {
  const tree = treeOfAnswer(LIST_ANSWER, false);
  assert.deepEqual(tree[0].skipped, [], "the user scope has none");
  const children = scopeChildren(tree[1]);
  assert.deepEqual(kinds(children), ["skipped", "group"], "the warning comes before the list");
  const row = children[0];
  assert.ok(row.kind === "skipped");
  assert.equal(skippedLabel(row.skipped), "project items[1] (mem_p_000003) skipped: citations.0.path: the path contains a NUL byte");
  assert.match(skippedTooltip(row.skipped), /Reason: citations\.0\.path: the path contains a NUL byte/);
  assert.match(skippedTooltip(row.skipped), /items\[1\], id mem_p_000003/);
  assert.equal(scopeDescription(tree[1]), "2 · 1 skipped", "the valid entries are listed as usual");
  assert.equal(scopeDescription(tree[0]), "1");
});

test("multi-root answers: a scope-only list keeps that scope's skipped entries", () => {
  const folder = { uri: "file:///home/me/proj", name: "proj" };
  const memory = folderMemoryOf(folder, LIST_ANSWER);
  assert.equal(memory.store, "/home/me/proj/.invincat/memory_project.json");
  assert.deepEqual(memory.skipped?.map((s) => s.index), [1]);
  assert.deepEqual(scopeAnswer(LIST_ANSWER, "user").skipped, [], "a project entry is not shown under User");
  const tree = buildMultiRootTree(scopeAnswer(LIST_ANSWER, "user").items, [memory], false);
  assert.deepEqual(kinds(scopeChildren(tree[1])), ["skipped", "group"]);
  const oldServer = { items: LIST_ANSWER.items, stores: LIST_ANSWER.stores };
  assert.deepEqual(folderMemoryOf(folder, oldServer).skipped, [], "an older server sends no invalid_entries");
  assert.deepEqual(kinds(scopeChildren(treeOfAnswer(oldServer, false)[1])), ["group"]);
});

test("a recorded entry with no id (a string in items): its index names it", () => {
  const tree = treeOfAnswer(NO_ID_ANSWER, false);
  const row = scopeChildren(tree[1])[0];
  assert.ok(row.kind === "skipped");
  assert.equal(skippedLabel(row.skipped), "project items[1] skipped: entry: Input should be a valid dictionary or instance of Entry");
});

test("an entry without a printable id is named by its index only", () => {
  const [skipped] = parseSkipped([{ scope: "user", index: 0, id: null, reason: "not an object" }]);
  assert.equal(skippedLabel(skipped), "user items[0] skipped: not an object");
  assert.doesNotMatch(skippedTooltip(skipped), /id /);
  const tree = buildMemoryTree([], false, [skipped]);
  assert.deepEqual(kinds(scopeChildren(tree[0])), ["skipped"]);
  assert.equal(scopeDescription(tree[0]), "no memories · 1 skipped");
});

test("an old server (no invalid_entries) and a malformed field show no skipped rows and do not throw", () => {
  for (const raw of [undefined, null, 0, "project items[1]", { scope: "project", index: 1, reason: "x" }, true]) {
    assert.deepEqual(parseSkipped(raw), [], JSON.stringify(raw));
  }
  const tree = buildMemoryTree([entry("mem_p_000001")], false, parseSkipped(undefined));
  assert.deepEqual(kinds(scopeChildren(tree[1])), ["group"]);
  assert.equal(scopeDescription(tree[1]), "1");
});

test("one bad item costs that item only", () => {
  const good = { scope: "project", index: 4, id: "mem_p_000009", reason: "content: too long" };
  const parsed = parseSkipped([
    null,
    "a string",
    [good],
    { ...good, scope: "team" },
    { ...good, scope: 1 },
    { ...good, index: -1 },
    { ...good, index: 1.5 },
    { ...good, index: "4" },
    { ...good, index: 1e300 },
    { ...good, index: Number.NaN },
    { ...good, reason: 42 },
    { scope: "project", index: 5, id: "mem_p_000010" },
    good,
    { ...good, index: 6, id: { nested: "mem_p_000001" } },
    { ...good, index: 7, id: 12 },
  ]);
  assert.deepEqual(parsed, [
    { scope: "project", index: 4, id: "mem_p_000009", reason: "content: too long" },
    { scope: "project", index: 6, id: null, reason: "content: too long" },
    { scope: "project", index: 7, id: null, reason: "content: too long" },
  ]);
});

test("a repeated scope and index is shown once (tree ids must be unique or VS Code throws)", () => {
  const row = { scope: "project", index: 2, id: "mem_p_000002", reason: "tier: contradicts the score" };
  assert.equal(parseSkipped([row, row, { ...row, reason: "again" }]).length, 1);
  assert.equal(parseSkipped([row, { ...row, scope: "user" }]).length, 2, "the same index in the other store is another entry");
});

test("control characters, NUL bytes and bidi overrides in an id or reason are shown as U+FFFD, not obeyed", () => {
  const [skipped] = parseSkipped([
    { scope: "project", index: 3, id: "mem\u0000_p\n\u202e1", reason: "bad\r\nreason \u001b[31mred\u2066" },
  ]);
  assert.equal(skipped.id, "mem\uFFFD_p\uFFFD\uFFFD1");
  assert.equal(skipped.reason, "bad\uFFFD\uFFFDreason \uFFFD[31mred\uFFFD");
  assert.doesNotMatch(skippedLabel(skipped), /[\u0000-\u001f\u202e]/);
  assert.doesNotMatch(skippedTooltip(skipped).replace(/\n/g, ""), /[\u0000-\u001f\u202e]/, "only the tooltip's own line breaks");
});

test("huge values are cut, and past the cap one row stands for the rest", () => {
  const [skipped] = parseSkipped([{ scope: "project", index: 0, id: "m".repeat(100_000), reason: "r".repeat(1_000_000) }]);
  assert.ok(skipped.id !== null && skipped.id.length <= 81 && skipped.id.endsWith("…"));
  assert.ok(skipped.reason.length <= 1001 && skipped.reason.endsWith("…"));
  assert.equal(parseSkipped([{ scope: "project", index: 0, id: "", reason: "" }])[0].reason, "invalid", "an empty reason still says why");

  const many = Array.from({ length: MAX_SKIPPED_SHOWN + 5 }, (_, index) => ({ scope: "project", index, id: null, reason: "not an object" }));
  const tree = buildMemoryTree([], false, parseSkipped(many));
  const children = scopeChildren(tree[1]);
  assert.equal(children.filter((c) => c.kind === "skipped").length, MAX_SKIPPED_SHOWN);
  const more = children[children.length - 1];
  assert.ok(more.kind === "moreSkipped");
  assert.equal(moreSkippedLabel(more.count), "5 more skipped entries — run invincat memory verify");
  assert.equal(scopeDescription(tree[1]), `no memories · ${MAX_SKIPPED_SHOWN + 5} skipped`);
});

test("a scope's skipped rows come first, then its tiers, then the archived hint", () => {
  const tree = buildMemoryTree([entry("mem_p_000001"), entry("mem_p_000002", { status: "archived" })], false, parseSkipped(SERVER_ANSWER));
  assert.deepEqual(kinds(scopeChildren(tree[1])), ["skipped", "group", "archivedHint"]);
});

test("multi-root: the user store's and each project's skipped entries stay under their own node", () => {
  const api = { uri: "file:///work/api", name: "api" };
  const web = { uri: "file:///work/web", name: "web" };
  const tree = buildMultiRootTree(
    [],
    [
      { folder: api, items: [], store: "/work/api/.invincat/memory_project.json", skipped: parseSkipped(SERVER_ANSWER, "project") },
      { folder: web, items: [entry("mem_p_000001")], store: "/work/web/.invincat/memory_project.json" },
    ],
    false,
    parseSkipped([{ scope: "user", index: 0, id: "mem_u_000001", reason: "section: missing" }, ...(SERVER_ANSWER as unknown[])], "user"),
  );
  assert.deepEqual(
    tree.map((node) => node.skipped.map(skippedLabel)),
    [["user items[0] (mem_u_000001) skipped: section: missing"], [skippedLabel(parseSkipped(SERVER_ANSWER)[0])], []],
  );
  const apiRow = scopeChildren(tree[1])[0];
  assert.ok(apiRow.kind === "skipped");
  assert.equal(apiRow.owner?.folder.uri, api.uri, "the row keeps its project, so its tree id is unique across projects");
});
