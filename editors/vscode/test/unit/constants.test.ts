// The TypeScript constants mirror invincat_server/lsp/protocol.py, and package.json
// contributes exactly the commands and views the code names.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "fs";
import * as path from "path";
import * as constants from "../../src/common/constants";

const root = path.resolve(__dirname, "../../..");
const protocolPy = path.resolve(root, "../../invincat_server/lsp/protocol.py");

function pythonStringConstants(source: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const match of source.matchAll(/^([A-Z][A-Z0-9_]*) = "([^"]*)"$/gm)) {
    found.set(match[1], match[2]);
  }
  return found;
}

test("every method, notification and command name of protocol.py is mirrored", () => {
  const names = pythonStringConstants(fs.readFileSync(protocolPy, "utf8"));
  assert.ok(names.size >= 15, `parsed only ${names.size} names from protocol.py`);
  const ts = constants as unknown as Record<string, unknown>;
  for (const [name, value] of names) {
    assert.equal(ts[name], value, `constants.ts ${name} should be ${JSON.stringify(value)}`);
  }
});

test("every error code of protocol.py is mirrored", () => {
  const source = fs.readFileSync(protocolPy, "utf8");
  const block = source.slice(source.indexOf("class ErrorCode"));
  const codes = [...block.matchAll(/^\s{4}([A-Z_]+) = (-\d+)$/gm)].map((m) => Number(m[2]));
  assert.ok(codes.length >= 5);
  const mirrored = new Set<number>(Object.values(constants.ErrorCode));
  for (const code of codes) {
    assert.ok(mirrored.has(code), `ErrorCode ${code} is not in constants.ts`);
  }
});

test("the decisions match protocol.py's DECISIONS", () => {
  const source = fs.readFileSync(protocolPy, "utf8");
  const tuple = /^DECISIONS = \(([^)]*)\)/m.exec(source)?.[1] ?? "";
  const names = [...tuple.matchAll(/"(\w+)"/g)].map((m) => m[1]);
  assert.deepEqual(names, [...constants.DECISIONS]);
});

test("package.json declares every command the code registers and the views it uses", () => {
  const manifest = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"));
  const declared = new Set<string>(manifest.contributes.commands.map((c: { command: string }) => c.command));
  for (const command of Object.values(constants.Commands)) {
    assert.ok(declared.has(command), `${command} is not declared in package.json`);
  }
  // The server's command is registered by vscode-languageclient; declaring it would clash.
  assert.ok(!declared.has(constants.RESOLVE_APPROVAL_COMMAND));
  const views = Object.values(manifest.contributes.views as Record<string, { id: string }[]>).flat().map((v) => v.id);
  assert.deepEqual(views.sort(), [constants.CHAT_VIEW_ID, constants.MEMORY_VIEW_ID].sort());
  for (const menu of Object.values(manifest.contributes.menus as Record<string, { command: string }[]>)) {
    for (const item of menu) {
      assert.ok(declared.has(item.command), `menu item ${item.command} is not a declared command`);
    }
  }
});
