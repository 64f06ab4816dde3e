/**
 * The memory sidebar's shape: User / Project → tier (hot, warm, cold; archived when shown)
 * → entries, from `invincat/memory/list` items; the project's instruction files in a
 * read-only "Instruction files" row of their own, last under Project. In a window with more than one workspace
 * folder: User once, then one "Project memory — NAME" per project. Pure, so the grouping and
 * the labels are tested without VS Code.
 */

/** The project a node belongs to in a multi-root tree (absent in a one-folder window). */
export interface ProjectOwner {
  /** The folder whose uri the node's requests send as `folder`. */
  folder: FolderRef;
  /** Every folder sharing this project (usually one), for the label. */
  names: string[];
  /** `stores.project` of the project's memory/list answer. */
  store?: string;
  /** Why the project's store could not be read. */
  error?: string;
}

import type { FolderRef } from "../common/folders";
import type { MemoryCitation, MemoryEntry, MemoryReport, MemoryScope, Tier } from "../common/protocol";
import type { InstructionFile } from "./instructions";
import { MAX_SKIPPED_SHOWN, type SkippedEntry } from "./skipped";

export type Group = Tier | "archived";

export interface ScopeNode {
  kind: "scope";
  scope: MemoryScope;
  groups: GroupNode[];
  count: number;
  /** Archived entries of the scope that are hidden (the archived toggle is off). */
  archivedHidden: number;
  /** Stored entries of the scope the server skipped (they do not validate). */
  skipped: SkippedEntry[];
  /** The project's instruction files (none for the user scope). */
  instructions: InstructionFile[];
  owner?: ProjectOwner;
}

/** "Instruction files — 3 · read-only": the project's AGENTS.md and the like, apart from memory. */
export interface InstructionsNode {
  kind: "instructions";
  files: InstructionFile[];
  owner?: ProjectOwner;
}

/** One instruction file: opens the file; no edit, archive or delete (it is not memory). */
export interface InstructionNode {
  kind: "instruction";
  file: InstructionFile;
  /** Its place in the listing (two rows may share a path: `<outside project>`). */
  index: number;
  owner?: ProjectOwner;
}

export interface GroupNode {
  kind: "group";
  scope: MemoryScope;
  group: Group;
  entries: EntryNode[];
  owner?: ProjectOwner;
}

export interface EntryNode {
  kind: "entry";
  entry: MemoryEntry;
  owner?: ProjectOwner;
}

/** One citation of an entry: a location that opens the file at the range. */
export interface CitationNode {
  kind: "citation";
  entry: MemoryEntry;
  index: number;
  owner?: ProjectOwner;
}

/** "2 archived — Show Archived Memories": archived entries exist but are hidden. */
export interface ArchivedHintNode {
  kind: "archivedHint";
  scope: MemoryScope;
  count: number;
  owner?: ProjectOwner;
}

/** A stored entry the server skipped: a warning row with no action (its id or path may be anything). */
export interface SkippedNode {
  kind: "skipped";
  skipped: SkippedEntry;
  owner?: ProjectOwner;
}

/** "N more skipped entries": the skipped entries past MAX_SKIPPED_SHOWN, in one row. */
export interface MoreSkippedNode {
  kind: "moreSkipped";
  scope: MemoryScope;
  count: number;
  owner?: ProjectOwner;
}

export type MemoryNode =
  | ScopeNode
  | GroupNode
  | EntryNode
  | CitationNode
  | ArchivedHintNode
  | SkippedNode
  | MoreSkippedNode
  | InstructionsNode
  | InstructionNode;

export const SCOPES: readonly MemoryScope[] = ["user", "project"];
const GROUPS: readonly Group[] = ["hot", "warm", "cold", "archived"];

export const SCOPE_LABELS: Record<MemoryScope, string> = { user: "User", project: "Project" };
export const GROUP_LABELS: Record<Group, string> = { hot: "Hot", warm: "Warm", cold: "Cold", archived: "Archived" };

function groupOf(entry: MemoryEntry): Group {
  if (entry.status === "archived") {
    return "archived";
  }
  return entry.tier === "hot" || entry.tier === "warm" || entry.tier === "cold" ? entry.tier : "cold";
}

function scopeNode(
  scope: MemoryScope,
  items: MemoryEntry[],
  showArchived: boolean,
  skipped: SkippedEntry[],
  owner?: ProjectOwner,
  instructions: InstructionFile[] = [],
): ScopeNode {
  const mine = items.filter((entry) => entry.scope === scope);
  const groups: GroupNode[] = [];
  for (const group of GROUPS) {
    if (group === "archived" && !showArchived) {
      continue;
    }
    const entries = mine
      .filter((entry) => groupOf(entry) === group)
      .sort((a, b) => b.score - a.score || a.id.localeCompare(b.id))
      .map((entry): EntryNode => (owner ? { kind: "entry", entry, owner } : { kind: "entry", entry }));
    if (entries.length > 0) {
      groups.push(owner ? { kind: "group", scope, group, entries, owner } : { kind: "group", scope, group, entries });
    }
  }
  const count = groups.reduce((n, g) => n + g.entries.length, 0);
  const archivedHidden = showArchived ? 0 : mine.filter((entry) => groupOf(entry) === "archived").length;
  const mySkipped = skipped.filter((entry) => entry.scope === scope);
  const files = scope === "project" ? instructions : [];
  const node: ScopeNode = { kind: "scope", scope, groups, count, archivedHidden, skipped: mySkipped, instructions: files };
  return owner ? { ...node, owner } : node;
}

/** Scopes always show (so the tree says where memories would go); empty groups do not. */
export function buildMemoryTree(
  items: MemoryEntry[],
  showArchived: boolean,
  skipped: SkippedEntry[] = [],
  instructions: InstructionFile[] = [],
): ScopeNode[] {
  return SCOPES.map((scope) => scopeNode(scope, items, showArchived, skipped, undefined, instructions));
}

/** One folder's `memory/list` (scope project) answer in a multi-root window. */
export interface FolderMemory {
  folder: FolderRef;
  items: MemoryEntry[];
  store?: string;
  error?: string;
  /** The project store's skipped entries. */
  skipped?: SkippedEntry[];
  /** The folder's project instruction files. */
  instructions?: InstructionFile[];
}

/**
 * The multi-root tree: User once, then a project node per folder, in folder order. Folders
 * that share a project (the same `stores.project`, e.g. two folders of one git repository)
 * share one node, so the same store never shows twice.
 */
export function buildMultiRootTree(
  userItems: MemoryEntry[],
  folders: FolderMemory[],
  showArchived: boolean,
  userSkipped: SkippedEntry[] = [],
): ScopeNode[] {
  const projects: { owner: ProjectOwner; items: MemoryEntry[]; skipped: SkippedEntry[]; instructions: InstructionFile[] }[] = [];
  for (const memory of folders) {
    const shared = memory.store !== undefined ? projects.find((p) => p.owner.store === memory.store) : undefined;
    if (shared) {
      shared.owner.names.push(memory.folder.name);
      continue;
    }
    const owner: ProjectOwner = { folder: memory.folder, names: [memory.folder.name] };
    if (memory.store !== undefined) {
      owner.store = memory.store;
    }
    if (memory.error !== undefined) {
      owner.error = memory.error;
    }
    projects.push({ owner, items: memory.items, skipped: memory.skipped ?? [], instructions: memory.instructions ?? [] });
  }
  return [
    scopeNode("user", userItems, showArchived, userSkipped),
    ...projects.map((p) => scopeNode("project", p.items, showArchived, p.skipped, p.owner, p.instructions)),
  ];
}

/** "User", "Project" — or "Project memory — api" in a multi-root tree. */
export function scopeLabel(node: ScopeNode): string {
  return node.owner ? `Project memory — ${node.owner.names.join(", ")}` : SCOPE_LABELS[node.scope];
}

/** A tree item id unique across projects (two projects both have a `mem_p_000001`). */
export function nodeKey(owner: ProjectOwner | undefined, key: string): string {
  return owner ? `${owner.folder.uri}|${key}` : key;
}

type ScopeChild = SkippedNode | MoreSkippedNode | GroupNode | ArchivedHintNode | InstructionsNode;

/**
 * The children of a scope: the entries the server skipped first (a warning is read before
 * the list), then its groups, then the hint that archived entries are hidden, then (for
 * a project) its instruction files, apart from the memory above them.
 */
export function scopeChildren(node: ScopeNode): ScopeChild[] {
  const owned = <T extends MemoryNode>(child: T): T => (node.owner ? { ...child, owner: node.owner } : child);
  const children: ScopeChild[] = node.skipped
    .slice(0, MAX_SKIPPED_SHOWN)
    .map((skipped) => owned<SkippedNode>({ kind: "skipped", skipped }));
  if (node.skipped.length > MAX_SKIPPED_SHOWN) {
    children.push(owned<MoreSkippedNode>({ kind: "moreSkipped", scope: node.scope, count: node.skipped.length - MAX_SKIPPED_SHOWN }));
  }
  children.push(...node.groups);
  if (node.archivedHidden > 0) {
    children.push(owned<ArchivedHintNode>({ kind: "archivedHint", scope: node.scope, count: node.archivedHidden }));
  }
  if (node.instructions.length > 0) {
    children.push(owned<InstructionsNode>({ kind: "instructions", files: node.instructions }));
  }
  return children;
}

/** One row per instruction file, in reading order. */
export function instructionNodes(node: InstructionsNode): InstructionNode[] {
  return node.files.map((file, index): InstructionNode =>
    node.owner ? { kind: "instruction", file, index, owner: node.owner } : { kind: "instruction", file, index },
  );
}

/** The grey text after a scope: how many entries, and how many were skipped as invalid. */
export function scopeDescription(node: ScopeNode): string {
  if (node.owner?.error) {
    return "could not read";
  }
  const listed = node.count === 0 ? (node.archivedHidden > 0 ? "none active" : "no memories") : `${node.count}`;
  return node.skipped.length > 0 ? `${listed} · ${node.skipped.length} skipped` : listed;
}

export function archivedHintLabel(count: number): string {
  return `${count} archived — Show Archived Memories`;
}

/** "Testing: Run ./scripts/test before pushing" */
export function entryLabel(entry: MemoryEntry): string {
  return `${entry.section}: ${entry.content}`;
}

/** Who proposed the entry (`source.author.name`), when it says; the store travels through
 * git, so anything else in its place is ignored. */
export function entryAuthor(entry: MemoryEntry): string | undefined {
  const name = entry.source?.author?.name;
  return typeof name === "string" && name !== "" ? name : undefined;
}

/** The grey text after the label: tier and score, the stale badge, and "by NAME". */
export function entryDescription(entry: MemoryEntry): string {
  const base = `${entry.status === "archived" ? "archived" : entry.tier} · ${entry.score}`;
  const badged = entry.stale ? `${base} · may be stale` : base;
  const author = entryAuthor(entry);
  return author ? `${badged} · by ${author}` : badged;
}

/** Text shown literally in a markdown tooltip (memory content is not markdown). */
function markdownText(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|<>~]/g, "\\$&");
}

export function citationNodes(entry: MemoryEntry, owner?: ProjectOwner): CitationNode[] {
  return (entry.citations ?? []).map((_, index): CitationNode => (owner ? { kind: "citation", entry, index, owner } : { kind: "citation", entry, index }));
}

/** Where a citation points now: its new place when the text moved, else as recorded. */
export function citationTarget(node: CitationNode): MemoryCitation {
  const recorded = (node.entry.citations ?? [])[node.index];
  const check = node.entry.verification?.citations?.[node.index];
  return check?.state === "moved" && check.current ? check.current : recorded;
}

/** "scripts/deploy.sh:3-4" */
export function citationLabel(citation: MemoryCitation): string {
  const lines = citation.start_line === citation.end_line ? `${citation.start_line}` : `${citation.start_line}-${citation.end_line}`;
  return `${citation.path}:${lines}`;
}

/** The grey text after a citation: what changed, when something did. */
export function citationDescription(node: CitationNode): string {
  const check = node.entry.verification?.citations?.[node.index];
  if (!check || check.state === "fresh") {
    return "";
  }
  return check.state === "moved" ? "moved" : check.change ?? check.state;
}

/**
 * Only project-relative paths are opened: the project store travels through git, so a
 * citation could name `../../.ssh/…` or an absolute path (the server marks those stale).
 */
export function citationOpensInProject(citation: MemoryCitation): boolean {
  const path = citation.path;
  return !/^([\\/]|[A-Za-z]:)/.test(path) && !path.split(/[\\/]/).includes("..");
}

/** 0-based line range for the editor selection. */
export function citationRange(citation: MemoryCitation): { start: number; end: number } {
  return { start: Math.max(0, citation.start_line - 1), end: Math.max(0, citation.end_line - 1) };
}

/** The project root the citations are relative to: the project store is `<root>/.invincat/memory_project.json`. */
export function projectRootOf(projectStore: string | undefined): string | undefined {
  if (!projectStore) {
    return undefined;
  }
  const root = projectStore.replace(/[\\/]\.invincat[\\/][^\\/]+$/, "");
  return root === projectStore ? undefined : root;
}

export function entryTooltip(entry: MemoryEntry): string {
  const lines = [
    `**${markdownText(entry.section)}**`,
    "",
    markdownText(entry.content),
    "",
    `score ${entry.score} (${entry.tier})${entry.confidence ? ` · confidence ${entry.confidence}` : ""} · ${entry.status}`,
  ];
  if (entry.score_reason) {
    lines.push(`reason: ${entry.score_reason}`);
  }
  if (entry.stale) {
    lines.push("", `⚠ ${entry.verification?.note ?? "may be stale: its cited evidence changed"}`);
  }
  const author = entryAuthor(entry);
  if (author) {
    const email = entry.source?.author?.email;
    const branch = entry.source?.branch;
    const who = `${author}${typeof email === "string" && email ? ` <${email}>` : ""}`;
    lines.push(`by ${markdownText(who)}${typeof branch === "string" && branch ? ` on ${markdownText(branch)}` : ""}`);
  }
  lines.push(`\`${entry.id}\`${entry.updated_at ? ` · updated ${entry.updated_at}` : ""}`);
  return lines.join("\n");
}

/** The context value menus key on (package.json `viewItem`). */
export function entryContext(entry: MemoryEntry): string {
  return entry.status === "archived" ? "memoryEntry.archived" : "memoryEntry.active";
}

export type UserAction = "archive" | "restore" | "delete";

const REASONS: Record<UserAction, string> = {
  archive: "Archived from the VS Code memory sidebar",
  restore: "Restored from the VS Code memory sidebar",
  delete: "Deleted from the VS Code memory sidebar",
};

/** The `invincat/memory/apply` params of a sidebar action on one entry; `owner`: the
 * project node it is in (multi-root), whose folder routes the request. */
export function actionParams(
  action: UserAction,
  entry: MemoryEntry,
  owner?: ProjectOwner,
): {
  scope: MemoryScope;
  operations: { op: UserAction; scope: MemoryScope; id: string; reason: string }[];
  folder?: string;
} {
  const params = {
    scope: entry.scope,
    operations: [{ op: action, scope: entry.scope, id: entry.id, reason: REASONS[action] }],
  };
  return owner ? { ...params, folder: owner.folder.uri } : params;
}

/** The `invincat/memory/show` params of an entry's history. */
export function showParams(entry: MemoryEntry, owner?: ProjectOwner): { id: string; folder?: string } {
  return owner ? { id: entry.id, folder: owner.folder.uri } : { id: entry.id };
}

/** Why governance refused a sidebar action, or undefined when it was applied. */
export function reportProblem(report: MemoryReport): string | undefined {
  if (report.rejected) {
    return report.reason ?? "the batch was rejected";
  }
  const dropped = report.dropped ?? [];
  if (dropped.length > 0) {
    return dropped.map((d) => d.reason).join("; ");
  }
  return undefined;
}

/** A readable history of one entry (`invincat/memory/show`), as markdown. */
export function historyMarkdown(entry: MemoryEntry | null | undefined, id: string, history: Record<string, unknown>[]): string {
  const lines = [`# Memory ${id}`, ""];
  if (entry) {
    lines.push(`**${entry.section}**: ${entry.content}`, "", `score ${entry.score} (${entry.tier}) · ${entry.status}`, "");
  } else {
    lines.push("_This entry no longer exists (deleted)._", "");
  }
  lines.push("## History", "");
  if (history.length === 0) {
    lines.push("_No journal records._");
  }
  for (const record of history) {
    const applied = Array.isArray(record.applied) ? (record.applied as { op?: string; id?: string }[]) : [];
    const ops = applied
      .filter((a) => a.id === id)
      .map((a) => a.op)
      .join(", ");
    const what = ops || (record.rejected ? "rejected batch" : "changed");
    const reason = typeof record.reason === "string" && record.reason ? ` — ${record.reason}` : "";
    lines.push(`- ${String(record.time ?? "")} · **${what}** by ${String(record.actor ?? "?")} · \`${String(record.batch_id ?? "")}\`${reason}`);
  }
  return lines.join("\n") + "\n";
}
