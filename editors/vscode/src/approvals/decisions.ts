/**
 * From a button on an approval card to `invincat/resolveApproval` params, and the facts the
 * card needs about an approval (which buttons, what the diff compares). Pure.
 */

import type { ApprovalRequested, ResolveApprovalParams } from "../common/protocol";
import type { DecisionAction } from "../chat/viewState";

/** Decisions each kind of approval accepts (docs/protocol.md, "Decisions"). */
export const ACCEPTED_DECISIONS: Record<ApprovalRequested["kind"], readonly DecisionAction["decision"][]> = {
  tool: ["approve", "approve_always", "reject", "reject_always"],
  plan: ["approve", "reject", "refine"],
  question: ["answer", "reject"],
};

export class DecisionError extends Error {}

/** The request params for a card action; throws DecisionError for one the user must fix. */
export function resolveParams(action: DecisionAction, kind: ApprovalRequested["kind"] = "tool"): ResolveApprovalParams {
  if (!ACCEPTED_DECISIONS[kind].includes(action.decision)) {
    throw new DecisionError(`A ${kind} approval cannot be decided with "${action.decision}".`);
  }
  const params: ResolveApprovalParams = { approvalId: action.approvalId, decision: action.decision };
  switch (action.decision) {
    case "approve_always":
      if (action.scope !== "session" && action.scope !== "workspace") {
        throw new DecisionError("Choose whether to allow this for the session or the workspace.");
      }
      params.scope = action.scope;
      break;
    case "reject":
    case "reject_always": {
      const message = action.message?.trim();
      if (message) {
        params.message = message;
      }
      break;
    }
    case "refine": {
      const feedback = action.feedback?.trim();
      if (!feedback) {
        throw new DecisionError("Say what to change in the plan, then press Refine.");
      }
      params.feedback = feedback;
      break;
    }
    case "answer": {
      const answers = (action.answers ?? []).map((a) => a.trim());
      if (answers.length === 0 || answers.some((a) => a === "")) {
        throw new DecisionError("Answer every question, then press Answer.");
      }
      params.answers = answers;
      break;
    }
    default:
      break;
  }
  return params;
}

/** File-edit approvals can show a diff: they carry a path and the full proposed text. */
export function hasDiff(request: ApprovalRequested): boolean {
  return (
    request.kind === "tool" &&
    typeof request.path === "string" &&
    request.path.length > 0 &&
    typeof request.proposed_text === "string"
  );
}

/** The label of the approve-always button of one scope (its rule is in the tooltip). */
export function alwaysButtonLabel(scope: string): string {
  return scope === "workspace" ? "Always in project" : "Always this session";
}

/** An always-option's rule without the absolute project path the server puts in it
 * ("… in /home/me/project, remembered across sessions" → "… in this project, …"). */
export function alwaysRuleText(label: string): string {
  return label.replace(/ in (?:\/|[A-Za-z]:[\\/]|~\/)\S.*?, remembered/, " in this project, remembered");
}
