/**
 * "Rewind to here" on a turn of the chat (docs/rewind.md): which turn of the thread the
 * clicked prompt is (`invincat/checkpoints/list`), what going back to before it changes
 * (`invincat/checkpoints/diff`, shown to the user), files / conversation / both, a question
 * by name per file changed since Invincat wrote it, then `invincat/checkpoints/restore`.
 * Open files are restored in their buffers by the server (`workspace/applyEdit`: Undo
 * takes it back, Save writes it). Free of the `vscode` module (only its types): the flow
 * runs against `RewindUi`, which rewindCommand.ts implements with VS Code and the unit
 * tests with fakes.
 */

import { CHECKPOINTS_DIFF, CHECKPOINTS_LIST, CHECKPOINTS_RESTORE } from "../common/constants";

export interface CheckpointTurn {
  turn: number;
  /** Its first 80 characters on one line. */
  prompt: string;
  files: string[];
}

export interface CheckpointsList {
  thread_id: string;
  turns: CheckpointTurn[];
  rewinds: number[];
  problems: string[];
}

export interface PlannedFile {
  path: string;
  action: "modify" | "create" | "delete" | "chmod";
  changed_by_hand: boolean;
  mode: string | null;
  diff: string;
  problem: string | null;
  /** Its editor buffer takes the change (the file is open). */
  in_editor: boolean;
}

export interface RewindPlan {
  thread_id: string;
  to_turn: number | null;
  undo: boolean;
  scope: RewindScope;
  files: PlannedFile[];
  conflicts: string[];
  problems: string[];
}

export interface RewindDone {
  restored: string[];
  skipped: string[];
  failed: Record<string, string>;
  checkpoint: number | null;
  conversation_removed: number | null;
}

export type RewindScope = "code" | "conversation" | "both";

export interface ScopePick {
  label: string;
  description: string;
  scope: RewindScope;
}

export const SCOPE_PICKS: ScopePick[] = [
  { label: "Files and conversation", description: "restore the files; the thread forgets this turn and later ones", scope: "both" },
  { label: "Files only", description: "restore the files; the conversation stays", scope: "code" },
  { label: "Conversation only", description: "the thread forgets this turn and later ones; files stay", scope: "conversation" },
];

export const OVERWRITE_ACTION = "Overwrite";

/** What the flow needs from the editor. */
export interface RewindUi {
  request<R>(method: string, params: object): Promise<R>;
  /** Show the plan (its text: per file the action, then the diffs). */
  showPlan(text: string): Promise<void>;
  pickScope(items: ScopePick[], title: string): Promise<ScopePick | undefined>;
  /** A modal question; true when the user chose `action`. */
  confirm(message: string, action: string): Promise<boolean>;
  info(message: string): void;
  error(message: string): void;
}

export type RewindOutcome =
  | { kind: "rewound"; done: RewindDone; conversationChanged: boolean }
  | { kind: "closed" | "failed" | "unknownTurn" };

/** Control characters (a prompt, a path) must not shape the UI's text. */
function printable(text: unknown): string {
  return String(text ?? "").replace(/[\u0000-\u001f\u007f]/g, " ");
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The prompt as the server previews it: one line, at most 80 characters. */
export function promptPreview(prompt: string): string {
  const line = prompt.split(/\s+/).filter(Boolean).join(" ");
  const chars = Array.from(line); // code points, as the server counts them
  return chars.length <= 80 ? line : `${chars.slice(0, 79).join("")}…`;
}

/**
 * The thread's turn that the chat's `index`-th prompt (0 = the first shown) is: that
 * number when its prompt matches, else the only turn with that prompt (the chat may show
 * fewer prompts than the thread holds), else undefined.
 */
export function matchTurn(turns: readonly CheckpointTurn[], index: number, prompt: string): number | undefined {
  const preview = promptPreview(prompt);
  const same = (turn: CheckpointTurn) => turn.prompt === preview;
  const byIndex = turns[index];
  if (byIndex !== undefined && same(byIndex)) {
    return byIndex.turn;
  }
  const matching = turns.filter(same);
  return matching.length === 1 ? matching[0].turn : undefined;
}

/** The plan as text for a `diff` document: the files, then each diff. */
export function planText(plan: RewindPlan): string {
  const lines = [plan.undo ? "# Undo the last rewind" : `# Back to before turn ${plan.to_turn}`];
  if (plan.files.length === 0) {
    lines.push("# No file differs from that point: nothing to restore.");
  }
  for (const file of plan.files) {
    const notes = [file.in_editor ? "in its editor" : "", file.changed_by_hand ? "changed since Invincat wrote it" : ""].filter(Boolean);
    lines.push(`# ${file.action.padEnd(6)} ${printable(file.path)}${notes.length ? `  (${notes.join("; ")})` : ""}`);
  }
  for (const file of plan.files) {
    if (file.problem) {
      lines.push(`# ! ${printable(file.path)}: ${printable(file.problem)}`);
    } else if (file.diff) {
      lines.push(file.diff.replace(/\n$/, ""));
    }
  }
  for (const problem of plan.problems ?? []) {
    lines.push(`# ! ${printable(problem)}`);
  }
  return `${lines.join("\n")}\n`;
}

/** One sentence for the outcome. */
export function doneText(done: RewindDone): string {
  const parts = [`Restored ${done.restored.length} file(s)`];
  if (done.skipped.length) {
    parts.push(`kept ${done.skipped.map(printable).join(", ")} (changed since Invincat wrote them)`);
  }
  if (done.conversation_removed !== null) {
    parts.push(`the thread forgot ${done.conversation_removed} message(s)`);
  }
  for (const [path, why] of Object.entries(done.failed ?? {})) {
    parts.push(`could not restore ${printable(path)}: ${printable(why)}`);
  }
  return `${parts.join("; ")}.`;
}

/**
 * Rewind `threadId` to before the turn of the chat's `index`-th prompt (`prompt`: its
 * text): plan, show, ask, restore.
 */
export async function rewindToHere(ui: RewindUi, threadId: string, index: number, prompt: string): Promise<RewindOutcome> {
  let toTurn: number | undefined;
  let plan: RewindPlan;
  try {
    const listed = await ui.request<CheckpointsList>(CHECKPOINTS_LIST, { threadId });
    toTurn = matchTurn(listed.turns ?? [], index, prompt);
    if (toTurn === undefined) {
      ui.error("This prompt is not one of the thread's turns any more (it was rewound or offloaded); reload the thread.");
      return { kind: "unknownTurn" };
    }
    plan = await ui.request<RewindPlan>(CHECKPOINTS_DIFF, { threadId, toTurn });
  } catch (err) {
    ui.error(message(err));
    return { kind: "failed" };
  }
  await ui.showPlan(planText(plan));
  const files = plan.files.length;
  const chosen = await ui.pickScope(SCOPE_PICKS, `Rewind to before turn ${toTurn} (${files} file(s) would change)`);
  if (chosen === undefined) {
    return { kind: "closed" };
  }
  const overwrite: string[] = [];
  if (chosen.scope !== "conversation") {
    for (const path of plan.conflicts ?? []) {
      const question = `${printable(path)} changed since Invincat wrote it. Overwrite it? (Otherwise it is kept.)`;
      if (await ui.confirm(question, OVERWRITE_ACTION)) {
        overwrite.push(path);
      }
    }
  }
  try {
    const done = await ui.request<RewindDone>(CHECKPOINTS_RESTORE, { threadId, toTurn, scope: chosen.scope, overwrite });
    const text = doneText(done);
    if (Object.keys(done.failed ?? {}).length) {
      ui.error(text);
    } else {
      ui.info(text);
    }
    return { kind: "rewound", done, conversationChanged: done.conversation_removed !== null };
  } catch (err) {
    ui.error(message(err));
    return { kind: "failed" };
  }
}
