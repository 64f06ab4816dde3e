// The `context` an invincat/chat request carries, the chips, and the @ completion helpers.
import { test } from "node:test";
import assert from "node:assert/strict";
import { buildContext, mentionAt, mentionFor, rangeLabel, rankFiles, type Chip, type EditorSnapshot } from "../../src/chat/context";
import { renderChips, renderMentions } from "../../src/chat/webview/render";

const URI = "file:///proj/src/app.py";
const r = (l1: number, c1: number, l2: number, c2: number) => ({ start: { line: l1, character: c1 }, end: { line: l2, character: c2 } });

const editor: EditorSnapshot = {
  uri: URI,
  languageId: "python",
  selections: [r(9, 0, 14, 0), r(20, 3, 20, 3)],
  cursor: { line: 14, character: 0 },
  visibleRange: r(0, 0, 40, 0),
  diagnostics: [
    { range: r(11, 4, 11, 7), message: '"foo" is not defined', severity: 1, source: "Pylance", code: "reportUndefinedVariable" },
    { range: r(30, 0, 30, 5), message: "far away", severity: 2 },
  ],
};

test("context: active document, non-empty selections, cursor, visible range, diagnostics at the selection", () => {
  const chips: Chip[] = [
    { id: "current", kind: "currentFile", uri: URI, label: "app.py", title: "" },
    { id: "sel1", kind: "selection", uri: "file:///proj/src/util.py", range: r(1, 0, 3, 0), label: "util.py:2-3", title: "" },
    { id: "f1", kind: "file", uri: "file:///proj/README.md", label: "README.md", title: "" },
  ];
  assert.deepEqual(buildContext(editor, chips), {
    activeDocument: { uri: URI, languageId: "python" },
    selections: [{ uri: URI, range: r(9, 0, 14, 0) }],
    cursor: { uri: URI, position: { line: 14, character: 0 } },
    visibleRange: { uri: URI, range: r(0, 0, 40, 0) },
    diagnostics: [{ uri: URI, range: r(11, 4, 11, 7), message: '"foo" is not defined', severity: 1, source: "Pylance", code: "reportUndefinedVariable" }],
    attachments: [{ uri: "file:///proj/src/util.py", range: r(1, 0, 3, 0) }, { uri: "file:///proj/README.md" }],
  });
});

test("without a selection the diagnostics on the cursor's line go; nothing at all gives no context", () => {
  const context = buildContext({ ...editor, selections: [r(30, 2, 30, 2)], cursor: { line: 30, character: 2 } }, []);
  assert.equal(context?.selections, undefined, "an empty selection is not sent");
  assert.deepEqual(context?.diagnostics?.map((d) => d.message), ["far away"]);
  assert.equal(buildContext(undefined, []), undefined);
  assert.deepEqual(buildContext(undefined, [{ id: "s", kind: "selection", uri: URI, range: r(0, 0, 1, 0), label: "", title: "" }]), {
    attachments: [{ uri: URI, range: r(0, 0, 1, 0) }],
  });
});

test("chip labels use 1-based lines; a selection ending at column 0 ends on the line before", () => {
  assert.equal(rangeLabel("app.py", r(9, 0, 14, 0)), "app.py:10-14");
  assert.equal(rangeLabel("app.py", r(9, 2, 9, 8)), "app.py:10");
  assert.equal(rangeLabel("app.py", undefined), "app.py");
  const html = renderChips([{ id: "sel1", kind: "selection", label: "a<b>.py:1", title: "Selection" }]);
  assert.match(html, /class="chip chip-selection" data-chip="sel1"/);
  assert.match(html, /a&lt;b&gt;\.py:1/);
  assert.match(html, /data-action="removeChip" data-chip="sel1"/);
});

test("@ completion: the query before the caret, ranked files, and the inserted mention", () => {
  assert.deepEqual(mentionAt("explain @src/ap", 15), { start: 8, query: "src/ap" });
  assert.deepEqual(mentionAt("@", 1), { start: 0, query: "" });
  assert.equal(mentionAt("mail me@example", 15), undefined, "an @ inside a word is not a mention");
  assert.equal(mentionAt("@done now", 9), undefined);
  const files = ["docs/app-notes.md", "src/app.py", "src/mapping.py", "tests/test_app.py", "README.md"];
  assert.deepEqual(rankFiles(files, "app", 3), ["src/app.py", "docs/app-notes.md", "src/mapping.py"]);
  assert.deepEqual(rankFiles(files, "zzz", 5), []);
  assert.equal(rankFiles(files, "", 2).length, 2, "capped");
  assert.equal(mentionFor("src/app.py"), "@src/app.py");
  assert.equal(mentionFor("dir with space/x.md"), '@"dir with space/x.md"');
  assert.match(renderMentions(["src/app.py", "b.md"], 1), /class="mention active"[^>]*data-path="b\.md"/);
});
