// The status bar says "starting…" until the server's session is open, and shows a session
// that cannot open as an error with the server's message.
import { test } from "node:test";
import assert from "node:assert/strict";
import { shownStatus, statusText } from "../../src/server/statusText";
import type { SessionStatus } from "../../src/server/connection";

const timings = { initializeMs: 400, stackImportMs: null, sessionOpenMs: null };
const starting: SessionStatus = { state: "starting", timings };
const ready: SessionStatus = { state: "ready", timings: { ...timings, stackImportMs: 900, sessionOpenMs: 1200 } };
const failed: SessionStatus = { state: "failed", message: "OPENAI_API_KEY is not set", timings };

test("a running server is starting… until its session is ready", () => {
  const running = { state: "running" as const };
  assert.equal(statusText(shownStatus(running, undefined), false), "$(sync~spin) Invincat: starting…");
  assert.equal(statusText(shownStatus(running, starting), false), "$(sync~spin) Invincat: starting…");
  assert.equal(statusText(shownStatus(running, ready), false), "$(hubot) Invincat: ready");
  assert.equal(statusText(shownStatus(running, ready), true), "$(loading~spin) Invincat: working");
});

test("a session that cannot open is an error carrying the server's message", () => {
  const shown = shownStatus({ state: "running" }, failed);
  assert.deepEqual(shown, { state: "error", message: "OPENAI_API_KEY is not set" });
  assert.equal(statusText(shown, false), "$(error) Invincat: error");
});

test("the process's own states win over a stale session status", () => {
  assert.equal(statusText(shownStatus({ state: "stopped" }, ready), false), "$(debug-stop) Invincat: stopped");
  assert.equal(statusText(shownStatus({ state: "error", message: "spawn failed" }, ready), false), "$(error) Invincat: error");
});
