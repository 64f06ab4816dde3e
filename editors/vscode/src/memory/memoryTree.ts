/**
 * The memory sidebar (activity bar "Invincat" → Memory): a tree of the governed memory
 * stores, refreshed on `invincat/memory/didChange`, with archive / restore / delete /
 * show history on each entry. Every change goes through `invincat/memory/apply`, so it is
 * validated and journaled like any other batch.
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
import type { MemoryEntry, MemoryListResult, MemoryReport } from "../common/protocol";
import { describe, type InvincatConnection } from "../server/connection";
import {
  actionParams,
  archivedHintLabel,
  buildMemoryTree,
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
  projectRootOf,
  reportProblem,
  SCOPE_LABELS,
  scopeChildren,
  type MemoryNode,
  type ScopeNode,
  type UserAction,
} from "./nodes";

const GROUP_ICONS = { hot: "flame", warm: "circle-filled", cold: "circle-outline", archived: "archive" } as const;

export class MemoryTree implements vscode.TreeDataProvider<MemoryNode>, vscode.Disposable {
  private roots: ScopeNode[] = [];
  private projectRoot: string | undefined;
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
      connection.onMemoryDidChange(() => void this.refresh()),
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
        const item = new vscode.TreeItem(SCOPE_LABELS[node.scope], vscode.TreeItemCollapsibleState.Expanded);
        item.id = `scope:${node.scope}`;
        item.description = node.count === 0 ? (node.archivedHidden > 0 ? "none active" : "no memories") : `${node.count}`;
        item.iconPath = new vscode.ThemeIcon(node.scope === "user" ? "account" : "repo");
        item.contextValue = "memoryScope";
        return item;
      }
      case "group": {
        const state =
          node.group === "archived" ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Expanded;
        const item = new vscode.TreeItem(GROUP_LABELS[node.group], state);
        item.id = `group:${node.scope}:${node.group}`;
        item.description = `${node.entries.length}`;
        item.iconPath = new vscode.ThemeIcon(GROUP_ICONS[node.group]);
        item.contextValue = "memoryGroup";
        return item;
      }
      case "entry": {
        const cited = (node.entry.citations ?? []).length > 0;
        const state = cited ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None;
        const item = new vscode.TreeItem(entryLabel(node.entry), state);
        item.id = `entry:${node.entry.id}:${node.entry.status}`;
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
        item.id = `archivedHint:${node.scope}`;
        item.iconPath = new vscode.ThemeIcon("archive");
        item.tooltip = "Archived entries are hidden; click to show them";
        item.contextValue = "memoryArchivedHint";
        item.command = { command: Commands.memoryShowArchived, title: "Show Archived Memories" };
        return item;
      }
      case "citation": {
        const target = citationTarget(node);
        const item = new vscode.TreeItem(citationLabel(target), vscode.TreeItemCollapsibleState.None);
        item.id = `citation:${node.entry.id}:${node.index}`;
        item.description = citationDescription(node);
        item.iconPath = new vscode.ThemeIcon("go-to-file");
        item.contextValue = "memoryCitation";
        if (this.projectRoot && citationOpensInProject(target)) {
          const uri = vscode.Uri.joinPath(vscode.Uri.file(this.projectRoot), target.path);
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
      return citationNodes(node.entry);
    }
    return [];
  }

  /** Re-read the stores; concurrent calls coalesce into one more read. */
  refresh(): Promise<void> {
    if (this.refreshing) {
      this.refreshAgain = true;
      return this.refreshing;
    }
    this.refreshing = (async () => {
      do {
        this.refreshAgain = false;
        await this.load();
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

  private async load(): Promise<void> {
    try {
      // Archived entries are always read, so a hidden one can be hinted at.
      const result = await this.connection.request<MemoryListResult>(MEMORY_LIST, { includeArchived: true });
      this.roots = buildMemoryTree(result.items ?? [], this.showArchived);
      this.projectRoot = projectRootOf(result.stores?.project);
      this.error = undefined;
    } catch (error) {
      this.error = describe(error);
      this.connection.output.warn(`memory/list: ${this.error}`);
    }
    this.view.message = this.error ? `Could not read memory: ${this.error}` : undefined;
    this.changed.fire(undefined);
  }

  private async setShowArchived(show: boolean): Promise<void> {
    this.showArchived = show;
    await vscode.commands.executeCommand("setContext", SHOWING_ARCHIVED_CONTEXT, show);
    await this.refresh();
  }

  private entryOf(node: MemoryNode | undefined): MemoryEntry | undefined {
    if (node?.kind === "entry") {
      return node.entry;
    }
    const selected = this.view.selection[0];
    return selected?.kind === "entry" ? selected.entry : undefined;
  }

  private async act(action: UserAction, node: MemoryNode | undefined): Promise<void> {
    const entry = this.entryOf(node);
    if (!entry) {
      return;
    }
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
      const report = await this.connection.request<MemoryReport>(MEMORY_APPLY, actionParams(action, entry));
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
    const entry = this.entryOf(node);
    if (!entry) {
      return;
    }
    try {
      const result = await this.connection.request<{ entry?: MemoryEntry | null; history?: Record<string, unknown>[] }>(
        MEMORY_SHOW,
        { id: entry.id },
      );
      // A read-only virtual document: nothing to save, and it refreshes when shown again.
      const uri = vscode.Uri.from({ scheme: MEMORY_HISTORY_SCHEME, path: `/${entry.id}.md` });
      this.histories.set(uri.path, historyMarkdown(result.entry ?? null, entry.id, result.history ?? []));
      this.historyChanged.fire(uri);
      const document = await vscode.workspace.openTextDocument(uri);
      await vscode.window.showTextDocument(document, { preview: true });
    } catch (error) {
      void vscode.window.showErrorMessage(`Invincat: could not show the history: ${describe(error)}`);
    }
  }
}
