// The server's invincat.startChat code actions: an "ask" action asks for its prompt first,
// a cancelled prompt sends nothing, and the chat switches to the thread the server started.
import { test } from "node:test";
import assert from "node:assert/strict";
import { startChatMiddleware } from "../../src/chat/startChatCommand";

function harness(answer: string | undefined) {
  const sent: unknown[][] = [];
  const shown: string[] = [];
  let asked = 0;
  const middleware = startChatMiddleware(
    { showThread: async (id) => void shown.push(id) },
    async () => {
      asked++;
      return answer;
    },
  );
  const next = (command: string, args: unknown[]) => {
    sent.push([command, ...args]);
    return command === "invincat.startChat" ? { threadId: "t_9", turnId: "turn_9" } : "other";
  };
  return { middleware, next, sent, shown, asked: () => asked };
}

const context = { activeDocument: { uri: "file:///p/bad.json" } };

test("a fix action with its prompt runs as is and shows its thread", async () => {
  const h = harness("unused");
  const ref = await h.middleware("invincat.startChat", [{ prompt: "Fix this", context }], h.next);
  assert.deepEqual(ref, { threadId: "t_9", turnId: "turn_9" });
  assert.deepEqual(h.sent, [["invincat.startChat", { prompt: "Fix this", context }]]);
  assert.equal(h.asked(), 0);
  assert.deepEqual(h.shown, ["t_9"]);
});

test("an ask action gets the typed prompt; Esc sends nothing", async () => {
  const h = harness("  why is this invalid? ");
  await h.middleware("invincat.startChat", [{ context }], h.next);
  assert.deepEqual(h.sent, [["invincat.startChat", { context, prompt: "why is this invalid?" }]]);
  const cancelled = harness(undefined);
  assert.equal(await cancelled.middleware("invincat.startChat", [{ context }], cancelled.next), undefined);
  assert.deepEqual(cancelled.sent, []);
  assert.deepEqual(cancelled.shown, []);
});

test("other server commands pass through untouched", async () => {
  const h = harness(undefined);
  assert.equal(await h.middleware("invincat.resolveApproval", [{ approvalId: "a" }], h.next), "other");
  assert.deepEqual(h.shown, []);
});
