// Approval paths are relative to the project root (the nearest ancestor with .git).
import { test } from "node:test";
import assert from "node:assert/strict";
import { projectRoot, resolveApprovalPath } from "../../src/approvals/paths";

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
