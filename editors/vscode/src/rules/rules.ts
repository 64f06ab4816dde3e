/**
 * "Invincat: Show Approval Rules": the project's "always" approval rules (the server's
 * session rules and the workspace's remembered ones, `invincat/rules/list`) in a QuickPick;
 * picking one asks, then takes it back (`invincat/rules/revoke`): the next such call asks
 * again. Free of the `vscode` module (only its types): the flow runs against `RulesUi`,
 * which rulesCommand.ts implements with VS Code and the unit tests with fakes.
 */

import { RULES_LIST, RULES_REVOKE } from "../common/constants";

export interface ApprovalRule {
  id: string;
  scope: "session" | "workspace";
  effect: "allow" | "deny";
  tool: string;
  command: string | null;
  /** What it covers: the label the approval offered when it was granted. */
  covers: string;
  createdAt: string;
  workspace: string;
}

export interface RulesListResult {
  items: ApprovalRule[];
  /** Why some rules could not be listed (a damaged approvals.json). */
  problems?: string[];
}

export interface RulesRevokeResult {
  revoked: ApprovalRule;
}

export interface RulePick {
  label: string;
  description: string;
  detail: string;
  rule: ApprovalRule;
}

/** What the flow needs from the editor. */
export interface RulesUi {
  request<R>(method: string, params: object): Promise<R>;
  pick(items: RulePick[], title: string): Promise<RulePick | undefined>;
  /** A modal question; true when the user chose `action`. */
  confirm(message: string, action: string): Promise<boolean>;
  info(message: string): void;
  error(message: string): void;
}

export type RulesOutcome = "revoked" | "kept" | "closed" | "empty" | "failed";

export const REVOKE_ACTION = "Revoke";

/** Control characters (a hand-edited rules file) must not shape the QuickPick's text. */
function printable(text: unknown): string {
  return String(text ?? "").replace(/[\u0000-\u001f\u007f]/g, " ");
}

export function rulePicks(rules: readonly ApprovalRule[]): RulePick[] {
  return rules.map((rule) => ({
    label: printable(rule.covers),
    description: `${rule.scope} · ${rule.id}`,
    detail: rule.createdAt ? `granted ${printable(rule.createdAt).slice(0, 19).replace("T", " ")}` : "",
    rule,
  }));
}

export function revokeParams(rule: ApprovalRule, folder: string | undefined): { id: string; folder?: string } {
  return folder === undefined ? { id: rule.id } : { id: rule.id, folder };
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** List, let the user pick one, ask, revoke. `folder`: the project's folder uri, if known. */
export async function showRules(ui: RulesUi, folder: string | undefined): Promise<RulesOutcome> {
  let listed: RulesListResult;
  try {
    listed = await ui.request<RulesListResult>(RULES_LIST, folder === undefined ? {} : { folder });
  } catch (err) {
    ui.error(message(err));
    return "failed";
  }
  for (const problem of listed.problems ?? []) {
    ui.error(printable(problem));
  }
  const items = Array.isArray(listed.items) ? listed.items : [];
  if (items.length === 0) {
    ui.info("No approval rules: every write, command and other risky call asks first.");
    return "empty";
  }
  const chosen = await ui.pick(rulePicks(items), "Invincat approval rules: pick one to revoke");
  if (chosen === undefined) {
    return "closed";
  }
  const question = `Revoke “${chosen.label}”? Calls it covered will ask again.`;
  if (!(await ui.confirm(question, REVOKE_ACTION))) {
    return "kept";
  }
  try {
    const done = await ui.request<RulesRevokeResult>(RULES_REVOKE, revokeParams(chosen.rule, folder));
    ui.info(`Revoked ${done.revoked.id}: ${printable(done.revoked.covers)}`);
    return "revoked";
  } catch (err) {
    ui.error(message(err));
    return "failed";
  }
}
