// Settings → the server command and its environment.
import { test } from "node:test";
import assert from "node:assert/strict";
import { DEFAULT_SETTINGS, readSettings, serverEnv } from "../../src/server/settings";
import { resolveCommand } from "../../src/server/command";

function getter(values: Record<string, unknown>) {
  return (key: string) => values[key];
}

test("defaults when nothing is set", () => {
  const { settings, problems } = readSettings(getter({}));
  assert.deepEqual(settings, DEFAULT_SETTINGS);
  assert.deepEqual(problems, []);
});

test("command, args, env and model are read", () => {
  const { settings, problems } = readSettings(
    getter({
      "server.command": " /venv/bin/invincat ",
      "server.args": ["--stdio"],
      "server.env": { OPENAI_BASE_URL: "http://127.0.0.1:9/v1", RETRIES: 3 },
      model: "qwen",
      logLevel: "DEBUG",
    }),
  );
  assert.deepEqual(problems, []);
  assert.equal(settings.command, "/venv/bin/invincat");
  assert.deepEqual(settings.env, { OPENAI_BASE_URL: "http://127.0.0.1:9/v1", RETRIES: "3" });
  assert.equal(settings.model, "qwen");
  assert.equal(settings.logLevel, "DEBUG");
});

test("invalid values fall back to defaults with a message each", () => {
  const { settings, problems } = readSettings(
    getter({ "server.command": 42, "server.args": "--stdio", "server.env": { A: { nested: 1 } }, logLevel: "LOUD" }),
  );
  assert.equal(settings.command, "invincat");
  assert.deepEqual(settings.args, ["--stdio"]);
  assert.deepEqual(settings.env, {});
  assert.equal(settings.logLevel, "INFO");
  assert.equal(problems.length, 4);
  assert.match(problems.join("\n"), /invincat\.server\.env\.A/);
});

test("the editor's environment passes through; settings win over it", () => {
  const { settings } = readSettings(getter({ "server.env": { OPENAI_BASE_URL: "http://local/v1" }, model: "m2" }));
  const env = serverEnv(settings, { OPENAI_API_KEY: "k", OPENAI_BASE_URL: "http://other/v1", INVINCAT_MODEL: "m1", UNSET: undefined });
  assert.equal(env.OPENAI_API_KEY, "k");
  assert.equal(env.OPENAI_BASE_URL, "http://local/v1");
  assert.equal(env.INVINCAT_MODEL, "m2");
  assert.equal(env.INVINCAT_LOG_LEVEL, "INFO");
  assert.ok(!("UNSET" in env));
});

test("a bare command is found on PATH's absolute entries only, never in the workspace", () => {
  const installed = new Set(["/usr/local/bin/invincat", "/opt/venv/bin/invincat"]);
  const isExecutable = (file: string) => installed.has(file) || file === "invincat" || file.startsWith(".");
  const resolve = (command: string, PATH: string | undefined) => resolveCommand(command, { PATH }, isExecutable, "linux");
  assert.equal(resolve("invincat", ".:/usr/local/bin"), "/usr/local/bin/invincat");
  assert.equal(resolve("invincat", ":bin:/opt/venv/bin:/usr/local/bin"), "/opt/venv/bin/invincat");
  assert.equal(resolve("invincat", ".:bin:"), undefined);
  assert.equal(resolve("invincat", undefined), undefined);
  // A path is the user's own setting: used as written.
  assert.equal(resolve("/venv/bin/invincat", "."), "/venv/bin/invincat");
  assert.equal(resolve("./tools/invincat", "."), "./tools/invincat");
});
