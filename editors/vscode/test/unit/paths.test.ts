// Approval paths are relative to the project root (the nearest ancestor with .git).
import { test } from "node:test";
import assert from "node:assert/strict";
import { projectRoot, resolveAnswerPath, resolveApprovalPath } from "../../src/approvals/paths";

const gitAt = (dir: string) => (p: string) => p === `${dir}/.git`;

test("the project root is the nearest ancestor with .git", () => {
  assert.equal(projectRoot("/repo/sub/dir", gitAt("/repo")), "/repo");
  assert.equal(projectRoot("/plain/folder", () => false), "/plain/folder");
});

test("relative paths resolve against the project root, absolute ones stay", () => {
  assert.equal(resolveApprovalPath("src/a.ts", "/repo/sub", gitAt("/repo")), "/repo/src/a.ts");
  assert.equal(resolveApprovalPath("/etc/hosts", "/repo", gitAt("/repo")), "/etc/hosts");
  assert.equal(resolveApprovalPath("a.ts", undefined, () => false), undefined);
});

test("a file named in an answer opens only when it exists inside the workspace", () => {
  const files = new Set(["/repo/.git", "/repo/sub/app.py", "/repo/README.md", "/etc/passwd"]);
  const exists = (p: string) => files.has(p);
  assert.equal(resolveAnswerPath("app.py", "/repo/sub", exists), "/repo/sub/app.py");
  assert.equal(resolveAnswerPath("README.md", "/repo/sub", exists), "/repo/README.md", "project-root relative");
  assert.equal(resolveAnswerPath("/repo/sub/app.py", "/repo/sub", exists), "/repo/sub/app.py");
  assert.equal(resolveAnswerPath("missing.py", "/repo/sub", exists), undefined);
  assert.equal(resolveAnswerPath("/etc/passwd", "/repo/sub", exists), undefined, "absolute outside");
  assert.equal(resolveAnswerPath("../../etc/passwd", "/repo/sub", exists), undefined, "escapes by ..");
  assert.equal(resolveAnswerPath("~/x.py", "/repo/sub", exists), undefined);
  assert.equal(resolveAnswerPath("app.py", undefined, exists), undefined);
});
