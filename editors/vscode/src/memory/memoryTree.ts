/**
 * The memory sidebar (activity bar "Invincat" → Memory): a tree of the governed memory
 * stores, refreshed on `invincat/memory/didChange`, with archive / restore / delete /
 * show history on each entry, and the project's instruction files, read-only (a click
 * opens one; nothing else is offered on them). Every change goes through `invincat/memory/apply`, so it is
 * validated and journaled like any other batch. With more than one workspace folder, each
 * folder's project memory is its own node (its requests carry `folder`), user memory once.
 */

import * as vscode from "vscode";
import {
  Commands,
  MEMORY_APPLY,
  MEMORY_HISTORY_SCHEME,
  MEMORY_LIST,
  MEMORY_SHOW,
  MEMORY_VIEW_ID,
  SHOWING_ARCHIVED_CONTEXT,
} from "../common/constants";
import { memoryRefreshTargets, mergeTargets, type FolderRef, type MemoryChange, type RefreshTargets } from "../common/folders";
import type { MemoryEntry, MemoryListResult, MemoryReport } from "../common/protocol";
import { describe, type InvincatConnection } from "../server/connection";
import { workspaceFolderRefs } from "../server/workspaceFolders";
import {
  actionParams,
  archivedHintLabel,
  buildMultiRootTree,
  citationDescription,
  citationLabel,
  citationNodes,
  citationOpensInProject,
  citationRange,
  citationTarget,
  entryContext,
  entryDescription,
  entryLabel,
  entryTooltip,
  GROUP_LABELS,
  historyMarkdown,
  instructionNodes,
  nodeKey,
  projectRootOf,
  reportProblem,
  scopeChildren,
  scopeDescription,
  scopeLabel,
  showParams,
  type FolderMemory,
  type MemoryNode,
  type ProjectOwner,
  type ScopeNode,
  type UserAction,
} from "./nodes";
import { folderMemoryOf, scopeAnswer, treeOfAnswer } from "./answers";
import {
  instructionDescription,
  instructionLabel,
  instructionOpensInProject,
  instructionsDescription,
  instructionTooltip,
} from "./instructions";
import { moreSkippedLabel, skippedLabel, skippedTooltip, type SkippedEntry } from "./skipped";

const GROUP_ICONS = { hot: "flame", warm: "circle-filled", cold: "circle-outline", archived: "archive" } as const;

export class MemoryTree implements vscode.TreeDataProvider<MemoryNode>, vscode.Disposable {
  private roots: ScopeNode[] = [];
  /** One-folder window: the project root citations are relative to. */
  private projectRoot: string | undefined;
  /** Multi-root window: the last answers, so one folder's change reloads only that folder. */
  private userItems: MemoryEntry[] = [];
  private userSkipped: SkippedEntry[] = [];
  private userError: string | undefined;
  private readonly folderMemory = new Map<string, FolderMemory>();
  /** What the running refresh still has to reload ("all", or the targets of didChanges). */
  private pending: RefreshTargets | "all" | undefined;
  private showArchived = false;
  private error: string | undefined;
  private readonly changed = new vscode.EventEmitter<MemoryNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly view: vscode.TreeView<MemoryNode>;
  private readonly disposables: vscode.Disposable[] = [];
  private refreshing: Promise<void> | undefined;
  private refreshAgain = false;
  /** Read-only history documents (`invincat-memory:/<id>.md`), by path. */
  private readonly histories = new Map<string, string>();
  private readonly historyChanged = new vscode.EventEmitter<vscode.Uri>();

  constructor(private readonly connection: InvincatConnection) {
    this.view = vscode.window.createTreeView(MEMORY_VIEW_ID, { treeDataProvider: this, showCollapseAll: true });
    this.disposables.push(
      this.view,
      connection.onMemoryDidChange((params) => void this.refresh(params)),
      vscode.workspace.onDidChangeWorkspaceFolders(() => void this.refresh()),
      // Belt and braces: the turn's own event also says memory changed.
      connection.onEvent((params) => {
        if (params.event.type === "memory_changed") {
          void this.refresh();
        }
      }),
      connection.onReady(() => void this.refresh()),
      vscode.commands.registerCommand(Commands.memoryRefresh, () => this.refresh()),
      vscode.commands.registerCommand(Commands.memoryShowArchived, () => this.setShowArchived(true)),
      vscode.commands.registerCommand(Commands.memoryHideArchived, () => this.setShowArchived(false)),
      vscode.commands.registerCommand(Commands.memoryArchive, (node?: MemoryNode) => this.act("archive", node)),
      vscode.commands.registerCommand(Commands.memoryRestore, (node?: MemoryNode) => this.act("restore", node)),
      vscode.commands.registerCommand(Commands.memoryDelete, (node?: MemoryNode) => this.act("delete", node)),
      vscode.commands.registerCommand(Commands.memoryShowHistory, (node?: MemoryNode) => this.showHistory(node)),
      vscode.workspace.registerTextDocumentContentProvider(MEMORY_HISTORY_SCHEME, {
        onDidChange: this.historyChanged.event,
        provideTextDocumentContent: (uri) => this.histories.get(uri.path) ?? "",
      }),
      this.historyChanged,
    );
    void vscode.commands.executeCommand("setContext", SHOWING_ARCHIVED_CONTEXT, false);
  }

  getTreeItem(node: MemoryNode): vscode.TreeItem {
    switch (node.kind) {
      case "scope": {
        const item = new vscode.TreeItem(scopeLabel(node), vscode.TreeItemCollapsibleState.Expanded);
        item.id = nodeKey(node.owner, `scope:${node.scope}`);
        item.description = scopeDescription(node);
        if (node.owner) {
          item.tooltip = node.owner.error ?? node.owner.store ?? node.owner.folder.name;
        }
        item.iconPath = new vscode.ThemeIcon(node.scope === "user" ? "account" : "repo");
        item.contextValue = "memoryScope";
        return item;
      }
      case "group": {
        const state =
          node.group === "archived" ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Expanded;
        const item = new vscode.TreeItem(GROUP_LABELS[node.group], state);
        item.id = nodeKey(node.owner, `group:${node.scope}:${node.group}`);
        item.description = `${node.entries.length}`;
        item.iconPath = new vscode.ThemeIcon(GROUP_ICONS[node.group]);
        item.contextValue = "memoryGroup";
        return item;
      }
      case "entry": {
        const cited = (node.entry.citations ?? []).length > 0;
        const state = cited ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None;
        const item = new vscode.TreeItem(entryLabel(node.entry), state);
        item.id = nodeKey(node.owner, `entry:${node.entry.id}:${node.entry.status}`);
        item.description = entryDescription(node.entry);
        item.tooltip = new vscode.MarkdownString(entryTooltip(node.entry));
        item.contextValue = entryContext(node.entry);
        if (node.entry.stale) {
          item.iconPath = new vscode.ThemeIcon("warning", new vscode.ThemeColor("list.warningForeground"));
        }
        return item;
      }
      case "archivedHint": {
        const item = new vscode.TreeItem(archivedHintLabel(node.count), vscode.TreeItemCollapsibleState.None);
        item.id = nodeKey(node.owner, `archivedHint:${node.scope}`);
        item.iconPath = new vscode.ThemeIcon("archive");
        item.tooltip = "Archived entries are hidden; click to show them";
        item.contextValue = "memoryArchivedHint";
        item.command = { command: Commands.memoryShowArchived, title: "Show Archived Memories" };
        return item;
      }
      case "skipped": {
        // No command and no resourceUri: the entry is invalid, its id or paths may be anything.
        const item = new vscode.TreeItem(skippedLabel(node.skipped), vscode.TreeItemCollapsibleState.None);
        item.id = nodeKey(node.owner, `skipped:${node.skipped.scope}:${node.skipped.index}`);
        item.tooltip = skippedTooltip(node.skipped);
        item.iconPath = new vscode.ThemeIcon("warning", new vscode.ThemeColor("list.warningForeground"));
        item.contextValue = "memorySkipped";
        return item;
      }
      case "moreSkipped": {
        const item = new vscode.TreeItem(moreSkippedLabel(node.count), vscode.TreeItemCollapsibleState.None);
        item.id = nodeKey(node.owner, `moreSkipped:${node.scope}`);
        item.iconPath = new vscode.ThemeIcon("warning", new vscode.ThemeColor("list.warningForeground"));
        item.contextValue = "memorySkipped";
        return item;
      }
      case "citation": {
        const target = citationTarget(node);
        const item = new vscode.TreeItem(citationLabel(target), vscode.TreeItemCollapsibleState.None);
        item.id = nodeKey(node.owner, `citation:${node.entry.id}:${node.index}`);
        item.description = citationDescription(node);
        item.iconPath = new vscode.ThemeIcon("go-to-file");
        item.contextValue = "memoryCitation";
        const root = node.owner ? projectRootOf(node.owner.store) : this.projectRoot;
        if (root && citationOpensInProject(target)) {
          const uri = vscode.Uri.joinPath(vscode.Uri.file(root), target.path);
          const range = citationRange(target);
          item.resourceUri = uri;
          item.command = {
            command: "vscode.open",
            title: "Open cited lines",
            arguments: [uri, { selection: new vscode.Range(range.start, 0, range.end, Number.MAX_SAFE_INTEGER) }],
          };
        }
        return item;
      }
      case "instructions": {
        const item = new vscode.TreeItem("Instruction files", vscode.TreeItemCollapsibleState.Collapsed);
        item.id = nodeKey(node.owner, "instructions");
        item.description = instructionsDescription(node.files);
        item.tooltip =
          "The project's instruction files (AGENTS.md, CLAUDE.md, …), shown to the model before memory. " +
          "Not memory: nothing here changes them; edit them as any file of the repository.";
        item.iconPath = new vscode.ThemeIcon("book");
        item.contextValue = "memoryInstructions";
        return item;
      }
      case "instruction": {
        // contextValue matches no menu: no archive, delete or history on a repository file.
        const file = node.file;
        const item = new vscode.TreeItem(instructionLabel(file), vscode.TreeItemCollapsibleState.None);
        item.id = nodeKey(node.owner, `instruction:${node.index}:${file.path}`);
        item.description = instructionDescription(file);
        item.tooltip = instructionTooltip(file);
        item.contextValue = "memoryInstruction";
        item.iconPath =
          file.skipped !== null
            ? new vscode.ThemeIcon("warning", new vscode.ThemeColor("list.warningForeground"))
            : new vscode.ThemeIcon("file");
        const root = node.owner ? projectRootOf(node.owner.store) : this.projectRoot;
        if (root && instructionOpensInProject(file)) {
          const uri = vscode.Uri.joinPath(vscode.Uri.file(root), file.path);
          item.resourceUri = uri;
          item.command = { command: "vscode.open", title: "Open the instruction file", arguments: [uri] };
        }
        return item;
      }
      default:
        return new vscode.TreeItem("?");
    }
  }

  getChildren(node?: MemoryNode): MemoryNode[] {
    if (!node) {
      return this.roots;
    }
    if (node.kind === "scope") {
      return scopeChildren(node);
    }
    if (node.kind === "group") {
      return node.entries;
    }
    if (node.kind === "entry") {
      return citationNodes(node.entry, node.owner);
    }
    if (node.kind === "instructions") {
      return instructionNodes(node);
    }
    return [];
  }

  /**
   * Re-read the stores; concurrent calls coalesce into one more read. `change`: a
   * `memory/didChange`, which in a multi-root window reloads only the store it names.
   */
  refresh(change?: MemoryChange): Promise<void> {
    this.pending = mergeTargets(this.pending, change ? memoryRefreshTargets(change, workspaceFolderRefs(), this.stores()) : "all");
    if (this.refreshing) {
      this.refreshAgain = true;
      return this.refreshing;
    }
    this.refreshing = (async () => {
      do {
        this.refreshAgain = false;
        const targets = this.pending ?? "all";
        this.pending = undefined;
        await this.load(targets);
      } while (this.refreshAgain);
    })().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  dispose(): void {
    this.changed.dispose();
    for (const disposable of this.disposables) {
      disposable.dispose();
    }
  }

  private async load(targets: RefreshTargets | "all"): Promise<void> {
    const folders = workspaceFolderRefs();
    if (folders.length > 1) {
      await this.loadFolders(folders, targets);
    } else {
      await this.loadOne();
    }
    this.changed.fire(undefined);
  }

  /** A one-folder (or folderless) window: one list, exactly as before multi-root. */
  private async loadOne(): Promise<void> {
    this.folderMemory.clear();
    try {
      // Archived entries are always read, so a hidden one can be hinted at.
      const result = await this.connection.request<MemoryListResult>(MEMORY_LIST, { includeArchived: true });
      this.roots = treeOfAnswer(result, this.showArchived);
      this.projectRoot = projectRootOf(result.stores?.project);
      this.error = undefined;
    } catch (error) {
      this.error = describe(error);
      this.connection.output.warn(`memory/list: ${this.error}`);
    }
    this.view.message = this.error ? `Could not read memory: ${this.error}` : undefined;
  }

  /** A multi-root window: the user store once, each target folder's project store. */
  private async loadFolders(folders: FolderRef[], targets: RefreshTargets | "all"): Promise<void> {
    const known = new Set(folders.map((folder) => folder.uri));
    for (const uri of [...this.folderMemory.keys()]) {
      if (!known.has(uri)) {
        this.folderMemory.delete(uri);
      }
    }
    const reloadUser = targets === "all" || targets.user;
    const reload = folders.filter(
      (folder) => targets === "all" || targets.folders.includes(folder.uri) || !this.folderMemory.has(folder.uri),
    );
    const reads: Promise<void>[] = reload.map(async (folder) => {
      try {
        const result = await this.connection.request<MemoryListResult>(MEMORY_LIST, {
          scope: "project",
          includeArchived: true,
          folder: folder.uri,
        });
        this.folderMemory.set(folder.uri, folderMemoryOf(folder, result));
      } catch (error) {
        const message = describe(error);
        this.connection.output.warn(`memory/list ${folder.name}: ${message}`);
        this.folderMemory.set(folder.uri, { folder, items: [], error: message });
      }
    });
    if (reloadUser) {
      reads.push(
        (async () => {
          try {
            const result = await this.connection.request<MemoryListResult>(MEMORY_LIST, { scope: "user", includeArchived: true });
            ({ items: this.userItems, skipped: this.userSkipped } = scopeAnswer(result, "user"));
            this.userError = undefined;
          } catch (error) {
            this.userError = describe(error);
            this.connection.output.warn(`memory/list user: ${this.userError}`);
          }
        })(),
      );
    }
    await Promise.all(reads);
    const memories = folders.map((folder) => this.folderMemory.get(folder.uri)).filter((m): m is FolderMemory => m !== undefined);
    this.roots = buildMultiRootTree(this.userItems, memories, this.showArchived, this.userSkipped);
    this.projectRoot = undefined;
    const problems = [
      ...(this.userError ? [`user: ${this.userError}`] : []),
      ...memories.filter((m) => m.error).map((m) => `${m.folder.name}: ${m.error}`),
    ];
    this.error = problems.length > 0 ? problems.join("; ") : undefined;
    this.view.message = this.error ? `Could not read memory: ${this.error}` : undefined;
  }

  /** The project store of each folder, by folder uri (folders sharing a project share it). */
  private stores(): Map<string, string | undefined> {
    return new Map([...this.folderMemory].map(([uri, memory]) => [uri, memory.store]));
  }

  private async setShowArchived(show: boolean): Promise<void> {
    this.showArchived = show;
    await vscode.commands.executeCommand("setContext", SHOWING_ARCHIVED_CONTEXT, show);
    await this.refresh();
  }

  private entryOf(node: MemoryNode | undefined): { entry: MemoryEntry; owner?: ProjectOwner } | undefined {
    const chosen = node ?? this.view.selection[0];
    return chosen?.kind === "entry" ? { entry: chosen.entry, owner: chosen.owner } : undefined;
  }

  private async act(action: UserAction, node: MemoryNode | undefined): Promise<void> {
    const chosen = this.entryOf(node);
    if (!chosen) {
      return;
    }
    const { entry, owner } = chosen;
    if (action === "delete") {
      const choice = await vscode.window.showWarningMessage(
        `Delete the memory “${entryLabel(entry)}”?`,
        { modal: true, detail: "The journal keeps it: reverting this batch re-creates it under a new id." },
        "Delete",
      );
      if (choice !== "Delete") {
        return;
      }
    }
    try {
      const report = await this.connection.request<MemoryReport>(MEMORY_APPLY, actionParams(action, entry, owner));
      const problem = reportProblem(report);
      if (problem) {
        void vscode.window.showWarningMessage(`Invincat: could not ${action} the memory: ${problem}`);
      }
    } catch (error) {
      void vscode.window.showErrorMessage(`Invincat: could not ${action} the memory: ${describe(error)}`);
    }
    await this.refresh();
  }

  private async showHistory(node: MemoryNode | undefined): Promise<void> {
    const chosen = this.entryOf(node);
    if (!chosen) {
      return;
    }
    const { entry, owner } = chosen;
    try {
      const result = await this.connection.request<{ entry?: MemoryEntry | null; history?: Record<string, unknown>[] }>(
        MEMORY_SHOW,
        showParams(entry, owner),
      );
      // A read-only virtual document: nothing to save, and it refreshes when shown again.
      // Two projects can both have a mem_p_000001: the project's name keeps them apart.
      const path = owner ? `/${owner.folder.name}/${entry.id}.md` : `/${entry.id}.md`;
      const uri = vscode.Uri.from({ scheme: MEMORY_HISTORY_SCHEME, path });
      this.histories.set(uri.path, historyMarkdown(result.entry ?? null, entry.id, result.history ?? []));
      this.historyChanged.fire(uri);
      const document = await vscode.workspace.openTextDocument(uri);
      await vscode.window.showTextDocument(document, { preview: true });
    } catch (error) {
      void vscode.window.showErrorMessage(`Invincat: could not show the history: ${describe(error)}`);
    }
  }
}
