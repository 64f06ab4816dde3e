// "Rewind to here": the clicked prompt's turn is found, its plan shown, the scope and each
// conflicting file asked, then the restore is sent with exactly the confirmed names;
// against a fake editor UI and a fake server. A closed pick sends no restore.
import { test } from "node:test";
import assert from "node:assert/strict";
import { CHECKPOINTS_DIFF, CHECKPOINTS_LIST, CHECKPOINTS_RESTORE } from "../../src/common/constants";
import { renderEntry } from "../../src/chat/webview/render";
import { ChatModel } from "../../src/chat/model";
import {
  OVERWRITE_ACTION,
  matchTurn,
  planText,
  promptPreview,
  rewindToHere,
  type CheckpointsList,
  type RewindDone,
  type RewindPlan,
  type RewindUi,
  type ScopePick,
} from "../../src/rewind/rewind";

const LISTED: CheckpointsList = {
  thread_id: "t_1",
  turns: [
    { turn: 1, prompt: "first question", files: [] },
    { turn: 2, prompt: "change three files", files: ["created.txt", "open.txt", "written.txt"] },
  ],
  rewinds: [],
  problems: [],
};

const PLAN: RewindPlan = {
  thread_id: "t_1",
  to_turn: 2,
  undo: false,
  scope: "code",
  files: [
    { path: "created.txt", action: "delete", changed_by_hand: true, mode: null, diff: "--- a/created.txt\n+++ /dev/null\n-by hand\n", problem: null, in_editor: false },
    { path: "open.txt", action: "modify", changed_by_hand: true, mode: "0o644", diff: "--- a/open.txt\n+++ b/open.txt\n-BETA\n+beta\n", problem: null, in_editor: true },
    { path: "written.txt", action: "modify", changed_by_hand: false, mode: "0o644", diff: "-rewritten\n", problem: null, in_editor: false },
  ],
  conflicts: ["created.txt", "open.txt"],
  problems: [],
};

const DONE: RewindDone = { restored: ["open.txt", "written.txt"], skipped: ["created.txt"], failed: {}, checkpoint: 3, conversation_removed: 8 };

interface Script {
  scope?: (items: ScopePick[]) => ScopePick | undefined;
  overwrite?: string[];
  done?: RewindDone;
  listFails?: string;
}

function harness(script: Script = {}) {
  const sent: [string, object][] = [];
  const shown: string[] = [];
  const questions: string[] = [];
  const infos: string[] = [];
  const errors: string[] = [];
  const ui: RewindUi = {
    request: async <R>(method: string, params: object): Promise<R> => {
      sent.push([method, params]);
      if (method === CHECKPOINTS_LIST) {
        if (script.listFails) throw new Error(script.listFails);
        return LISTED as R;
      }
      return (method === CHECKPOINTS_DIFF ? PLAN : (script.done ?? DONE)) as R;
    },
    showPlan: async (text) => void shown.push(text),
    pickScope: async (items) => (script.scope ?? ((all) => all[0]))(items),
    confirm: async (question, action) => {
      questions.push(question);
      assert.equal(action, OVERWRITE_ACTION);
      return (script.overwrite ?? []).some((path) => question.startsWith(path));
    },
    info: (message) => void infos.push(message),
    error: (message) => void errors.push(message),
  };
  return { ui, sent, shown, questions, infos, errors };
}

test("the clicked prompt's turn is rewound with the files the user confirmed by name", async () => {
  const h = harness({ overwrite: ["open.txt"] });
  const outcome = await rewindToHere(h.ui, "t_1", 1, "change three files");
  assert.deepEqual(h.sent, [
    [CHECKPOINTS_LIST, { threadId: "t_1" }],
    [CHECKPOINTS_DIFF, { threadId: "t_1", toTurn: 2 }],
    [CHECKPOINTS_RESTORE, { threadId: "t_1", toTurn: 2, scope: "both", overwrite: ["open.txt"] }],
  ]);
  assert.equal(h.questions.length, 2);
  assert.match(h.questions[0], /^created\.txt changed since Invincat wrote it/);
  assert.deepEqual(outcome, { kind: "rewound", done: DONE, conversationChanged: true });
  assert.deepEqual(h.infos, ["Restored 2 file(s); kept created.txt (changed since Invincat wrote them); the thread forgot 8 message(s)."]);
  // The plan was shown before anything was asked: files, then the diffs.
  const [plan] = h.shown;
  assert.match(plan, /^# Back to before turn 2\n# delete created\.txt  \(changed since Invincat wrote it\)\n/);
  assert.match(plan, /# modify open\.txt  \(in its editor; changed since Invincat wrote it\)/);
  assert.match(plan, /-BETA\n\+beta/);
});

test("conversation only asks about no file; a closed scope pick restores nothing", async () => {
  const conversation = harness({ scope: (all) => all.find((p) => p.scope === "conversation") });
  await rewindToHere(conversation.ui, "t_1", 1, "change three files");
  assert.deepEqual(conversation.questions, []);
  assert.deepEqual(conversation.sent[2], [CHECKPOINTS_RESTORE, { threadId: "t_1", toTurn: 2, scope: "conversation", overwrite: [] }]);

  const closed = harness({ scope: () => undefined });
  assert.deepEqual(await rewindToHere(closed.ui, "t_1", 1, "change three files"), { kind: "closed" });
  assert.equal(closed.sent.some(([method]) => method === CHECKPOINTS_RESTORE), false);
});

test("a refused restore or list is shown, and a prompt that is no turn any more is said", async () => {
  const failed = harness({ done: { ...DONE, failed: { "open.txt": "The editor did not take the change: no" } } });
  await rewindToHere(failed.ui, "t_1", 1, "change three files");
  assert.match(failed.errors[0], /could not restore open\.txt: The editor did not take the change: no/);

  const down = harness({ listFails: "Unknown thread 't_1'" });
  assert.deepEqual(await rewindToHere(down.ui, "t_1", 0, "first question"), { kind: "failed" });
  assert.deepEqual(down.errors, ["Unknown thread 't_1'"]);

  const gone = harness();
  assert.deepEqual(await rewindToHere(gone.ui, "t_1", 0, "not asked here"), { kind: "unknownTurn" });
  assert.equal(gone.sent.length, 1);
});

test("a prompt is matched by position, else by its preview when that is unique", () => {
  const turns = [
    { turn: 1, prompt: "same", files: [] },
    { turn: 2, prompt: "other", files: [] },
    { turn: 3, prompt: "same", files: [] },
  ];
  assert.equal(matchTurn(turns, 2, "same"), 3);
  assert.equal(matchTurn(turns, 0, "other"), 2); // the chat shows fewer prompts than the thread
  assert.equal(matchTurn(turns, 5, "same"), undefined); // ambiguous
  const long = "🐈".repeat(100);
  assert.equal(promptPreview(`  a\n\tb  ${long}`), `a b ${"🐈".repeat(75)}…`);
});

test("control characters in paths do not shape the plan", () => {
  const plan = planText({ ...PLAN, files: [{ ...PLAN.files[2], path: "a\nb.txt", diff: "" }], conflicts: [] });
  assert.match(plan, /# modify a b\.txt\n/);
});

test("each prompt of the transcript has a Rewind to here action naming its entry", () => {
  const html = renderEntry({ id: "u7", rev: 0, kind: "user", text: "change three files" });
  assert.match(html, /<button class="rewind" data-action="rewind" data-entry="u7"[^>]*>Rewind to here<\/button>/);
  const model = new ChatModel();
  model.beginSend("first question", "agent");
  model.beginSend("second question", "agent");
  const ids = model.snapshot().entries.map((e) => e.id);
  assert.deepEqual(model.findPrompt(ids[1]), { index: 1, text: "second question" });
  assert.equal(model.findPrompt("nope"), undefined);
});
