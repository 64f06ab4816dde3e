// "Invincat: Show Approval Rules": list → pick → confirm → revoke, against a fake editor UI
// and a fake server; a closed pick or a "no" sends nothing, errors are shown.
import { test } from "node:test";
import assert from "node:assert/strict";
import { RULES_LIST, RULES_REVOKE } from "../../src/common/constants";
import { REVOKE_ACTION, rulePicks, showRules, type ApprovalRule, type RulePick, type RulesUi } from "../../src/rules/rules";

const RULE: ApprovalRule = {
  id: "r_3f9a1c0d2e4b",
  scope: "workspace",
  effect: "allow",
  tool: "execute",
  command: "pytest",
  covers: "Allow shell commands starting with `pytest` in /p, remembered across sessions",
  createdAt: "2026-12-01T22:10:04.512311+00:00",
  workspace: "/p",
};

interface Script {
  listed?: unknown;
  listFails?: string;
  revokeFails?: string;
  pick?: (items: RulePick[]) => RulePick | undefined;
  confirm?: boolean;
}

function harness(script: Script) {
  const sent: [string, object][] = [];
  const infos: string[] = [];
  const errors: string[] = [];
  const questions: [string, string][] = [];
  const picked: RulePick[][] = [];
  const ui: RulesUi = {
    request: async <R>(method: string, params: object): Promise<R> => {
      sent.push([method, params]);
      if (method === RULES_LIST) {
        if (script.listFails) throw new Error(script.listFails);
        return (script.listed ?? { items: [RULE], problems: [] }) as R;
      }
      if (script.revokeFails) throw new Error(script.revokeFails);
      return { revoked: RULE } as R;
    },
    pick: async (items) => {
      picked.push(items);
      return (script.pick ?? ((all) => all[0]))(items);
    },
    confirm: async (message, action) => {
      questions.push([message, action]);
      return script.confirm ?? true;
    },
    info: (message) => void infos.push(message),
    error: (message) => void errors.push(message),
  };
  return { ui, sent, infos, errors, questions, picked };
}

test("a picked rule is revoked after the user confirms, for the folder it was listed in", async () => {
  const h = harness({});
  assert.equal(await showRules(h.ui, "file:///p"), "revoked");
  assert.deepEqual(h.sent, [
    [RULES_LIST, { folder: "file:///p" }],
    [RULES_REVOKE, { id: RULE.id, folder: "file:///p" }],
  ]);
  assert.equal(h.picked[0][0].label, RULE.covers);
  assert.match(h.picked[0][0].description, /workspace · r_3f9a1c0d2e4b/);
  assert.equal(h.questions[0][1], REVOKE_ACTION);
  assert.ok(h.questions[0][0].includes(RULE.covers));
  assert.deepEqual(h.infos, [`Revoked ${RULE.id}: ${RULE.covers}`]);
});

test("without a folder the params carry none", async () => {
  const h = harness({});
  await showRules(h.ui, undefined);
  assert.deepEqual(h.sent, [
    [RULES_LIST, {}],
    [RULES_REVOKE, { id: RULE.id }],
  ]);
});

test("closing the pick or answering no sends no revoke", async () => {
  const closed = harness({ pick: () => undefined });
  assert.equal(await showRules(closed.ui, undefined), "closed");
  const kept = harness({ confirm: false });
  assert.equal(await showRules(kept.ui, undefined), "kept");
  for (const h of [closed, kept]) {
    assert.deepEqual(
      h.sent.map(([method]) => method),
      [RULES_LIST],
    );
  }
});

test("no rules: said, nothing to pick", async () => {
  const h = harness({ listed: { items: [], problems: [] } });
  assert.equal(await showRules(h.ui, undefined), "empty");
  assert.equal(h.picked.length, 0);
  assert.match(h.infos[0], /No approval rules/);
});

test("a damaged rules file is shown and the rules that could be read are still offered", async () => {
  const h = harness({ listed: { items: [{ ...RULE, scope: "session" }], problems: ["/h/approvals.json is damaged"] } });
  assert.equal(await showRules(h.ui, undefined), "revoked");
  assert.deepEqual(h.errors, ["/h/approvals.json is damaged"]);
});

test("server errors are shown, not thrown", async () => {
  const listing = harness({ listFails: "The Invincat server is not running" });
  assert.equal(await showRules(listing.ui, undefined), "failed");
  assert.deepEqual(listing.errors, ["The Invincat server is not running"]);
  const revoking = harness({ revokeFails: "Invalid params for invincat/rules/revoke: No approval rule with id 'r_1'" });
  assert.equal(await showRules(revoking.ui, undefined), "failed");
  assert.match(revoking.errors[0], /No approval rule with id/);
});

test("an answer of the wrong shape lists nothing instead of failing", async () => {
  const h = harness({ listed: { items: "nope" } });
  assert.equal(await showRules(h.ui, undefined), "empty");
});

test("control characters of a hand-edited file do not reach the pick's text", () => {
  const [pick] = rulePicks([{ ...RULE, covers: "Allow\nevery `x\u001b[2J` call" }]);
  assert.equal(pick.label, "Allow every `x [2J` call");
});
