// The memory view's instruction files: `instructions` of invincat/memory/list shown under
// the project as a read-only "Instruction files" row, one child per file, read defensively.
import { test } from "node:test";
import assert from "node:assert/strict";
import { folderMemoryOf, treeOfAnswer } from "../../src/memory/answers";
import {
  instructionDescription,
  instructionLabel,
  instructionOpensInProject,
  instructionsDescription,
  instructionTooltip,
  parseInstructions,
} from "../../src/memory/instructions";
import { buildMultiRootTree, instructionNodes, scopeChildren, type InstructionsNode } from "../../src/memory/nodes";
import type { MemoryEntry, MemoryListResult } from "../../src/common/protocol";

const STORES = { user: "/home/me/.invincat/memory_user.json", project: "/home/me/proj/.invincat/memory_project.json" };
const ENTRY: MemoryEntry = { id: "mem_p_000001", scope: "project", section: "Testing", content: "Run ./scripts/test", status: "active", score: 85, tier: "hot" };

/** As the language server answers (tests/lsp/test_memory_instructions.py, plus a Cursor rule
 * scoped by globs and an import refused as outside the project). */
const INSTRUCTIONS = [
  { source: "AGENTS.md", path: "AGENTS.md", size: 35, included: 35, truncated: false, skipped: null, imported_by: null },
  { source: "CLAUDE.md", path: "CLAUDE.md", size: 19, included: 19, truncated: false, skipped: null, imported_by: null },
  { source: "CLAUDE.md", path: "docs/style.md", size: 1048576, included: 32760, truncated: true, skipped: null, imported_by: "CLAUDE.md" },
  {
    source: "CLAUDE.md",
    path: "<outside project>",
    size: null,
    included: 0,
    truncated: false,
    skipped: "refused: it leads outside the project (a link or a path out of it)",
    imported_by: "CLAUDE.md",
  },
  {
    source: "GEMINI.md",
    path: "GEMINI.md",
    size: null,
    included: 0,
    truncated: false,
    skipped: "refused: it leads outside the project (a link or a path out of it)",
    imported_by: null,
  },
  {
    source: ".cursor/rules/api.mdc",
    path: ".cursor/rules/api.mdc",
    size: 80,
    included: 20,
    truncated: false,
    skipped: null,
    imported_by: null,
    applies_to: "src/api/**/*.py",
  },
];
const ANSWER = { items: [ENTRY], stores: STORES, instructions: INSTRUCTIONS } as MemoryListResult;

function instructionsRow(answer: MemoryListResult): InstructionsNode {
  const project = treeOfAnswer(answer, false)[1];
  const last = scopeChildren(project).at(-1);
  assert.ok(last && last.kind === "instructions", "the instruction files come last under Project");
  return last;
}

test("the project's instruction files: one read-only row under Project, a child per file in reading order", () => {
  const [user, project] = treeOfAnswer(ANSWER, false);
  assert.deepEqual(scopeChildren(user).map((c) => c.kind), [], "the user scope has none");
  assert.deepEqual(scopeChildren(project).map((c) => c.kind), ["group", "instructions"], "apart from the memory groups");
  assert.equal(project.count, 1, "instruction files are not counted as memories");
  const row = instructionsRow(ANSWER);
  assert.equal(instructionsDescription(row.files), "6 · read-only");
  const children = instructionNodes(row);
  assert.deepEqual(children.map((c) => instructionLabel(c.file)), [
    "AGENTS.md",
    "CLAUDE.md",
    "docs/style.md",
    "<outside project>",
    "GEMINI.md",
    ".cursor/rules/api.mdc",
  ]);
  assert.deepEqual(children.map((c) => instructionDescription(c.file)), [
    "AGENTS.md · 35 bytes",
    "CLAUDE.md · 19 bytes",
    "CLAUDE.md · 32,760 bytes of 1,048,576 bytes, truncated · imported by CLAUDE.md",
    "CLAUDE.md · refused: it leads outside the project (a link or a path out of it) · imported by CLAUDE.md",
    "GEMINI.md · refused: it leads outside the project (a link or a path out of it)",
    ".cursor/rules/api.mdc · 20 bytes · applies to src/api/**/*.py",
  ]);
});

test("a click opens a file of the project; a refused one (a link or an import out of it) is not opened", () => {
  const files = instructionNodes(instructionsRow(ANSWER)).map((c) => c.file);
  assert.deepEqual(files.map(instructionOpensInProject), [true, true, true, false, false, true]);
  const named = (path: string, skipped: string | null = null) => ({ ...files[0], path, skipped });
  assert.equal(instructionOpensInProject(named("../x.md")), false);
  assert.equal(instructionOpensInProject(named("/etc/passwd")), false);
  assert.equal(instructionOpensInProject(named("C:\\x.md")), false);
  assert.equal(instructionOpensInProject(named("big.md", "not read: the instruction files' cap is reached")), true, "a file past the cap is still the project's");
});

test("the tooltip says what the model is shown and that the file is read-only here", () => {
  const files = instructionNodes(instructionsRow(ANSWER)).map((c) => c.file);
  assert.match(instructionTooltip(files[0]), /Shown to the model before memory: 35 bytes\./);
  assert.match(instructionTooltip(files[2]), /the first 32,760 bytes of 1,048,576 bytes/);
  assert.match(instructionTooltip(files[2]), /Imported by CLAUDE\.md\./);
  assert.match(instructionTooltip(files[4]), /Not shown to the model: refused: it leads outside/);
  assert.match(instructionTooltip(files[5]), /Cursor rule for the files matching src\/api\/\*\*\/\*\.py/);
  for (const file of files) {
    assert.match(instructionTooltip(file), /Read-only here/);
  }
});

test("an answer without instructions (an older server, a user-scope list) shows no row", () => {
  const project = treeOfAnswer({ items: [ENTRY], stores: STORES }, false)[1];
  assert.deepEqual(scopeChildren(project).map((c) => c.kind), ["group"]);
  assert.deepEqual(parseInstructions(undefined), []);
  assert.deepEqual(parseInstructions({ source: "AGENTS.md" }), []);
});

test("a malformed item costs that item only, and names from the repository are made displayable", () => {
  const files = parseInstructions([
    null,
    "AGENTS.md",
    { source: 1, path: "x.md" },
    { source: "AGENTS.md", path: "" },
    { source: "CLAUDE.md", path: "evil\u001b]0;pwned\u0007.md\u202e", size: "big", included: -3, truncated: "yes", skipped: 5, imported_by: ["x"] },
    INSTRUCTIONS[0],
  ]);
  assert.equal(files.length, 2);
  assert.equal(files[0].path, "evil\uFFFD]0;pwned\uFFFD.md\uFFFD");
  assert.deepEqual([files[0].size, files[0].included, files[0].truncated, files[0].skipped, files[0].importedBy], [null, 0, false, null, null]);
  assert.equal(instructionOpensInProject(files[0]), false, "a name with a control character is not opened");
  assert.equal(files[1].path, "AGENTS.md");
  assert.equal(parseInstructions(Array.from({ length: 500 }, () => INSTRUCTIONS[0])).length, 100);
});

test("a multi-root window: each project's own instruction files, under its own node", () => {
  const api = { uri: "file:///w/api", name: "api" };
  const web = { uri: "file:///w/web", name: "web" };
  const tree = buildMultiRootTree(
    [],
    [
      folderMemoryOf(api, { ...ANSWER, stores: { project: "/w/api/.invincat/memory_project.json" } } as MemoryListResult),
      folderMemoryOf(web, { items: [], stores: { project: "/w/web/.invincat/memory_project.json" } }),
    ],
    false,
  );
  const apiRow = scopeChildren(tree[1]).at(-1);
  assert.ok(apiRow && apiRow.kind === "instructions");
  assert.equal(apiRow.owner?.folder.uri, api.uri, "opened relative to that project's root");
  assert.equal(instructionNodes(apiRow)[0].owner?.folder.uri, api.uri);
  assert.deepEqual(scopeChildren(tree[2]).map((c) => c.kind), [], "a project without instruction files has no row");
});
