/**
 * The chat panel (a webview view): connects the webview, the chat model and the server.
 * Events update the model; the model's snapshot is posted to the webview (throttled, so a
 * fast stream costs one render per frame); the webview's actions become requests.
 */

import * as vscode from "vscode";
import {
  CANCEL,
  CHAT,
  CHAT_VIEW_ID,
  PENDING_APPROVALS,
  RESOLVE_APPROVAL,
  THREADS_HISTORY,
  THREADS_LIST,
} from "../common/constants";
import type {
  ApprovalRequested,
  CancelResult,
  ChatParams,
  EventParams,
  HistoryMessage,
  ResolveResult,
  ThreadInfo,
  TurnRef,
} from "../common/protocol";
import { DecisionError, resolveParams } from "../approvals/decisions";
import type { ProposedContent } from "../approvals/diffView";
import { resolveAnswerPath, resolveApprovalPath } from "../approvals/paths";
import { chatFolder, editorFitsChat, folderOfWorkspace, projectLabel, type FolderRef } from "../common/folders";
import { describe, type InvincatConnection } from "../server/connection";
import { workspaceFolderRefs } from "../server/workspaceFolders";
import { buildContext, rankFiles, type Chip } from "./context";
import { currentFileChip, inWorkspace, selectionChip, snapshotEditor, workspaceEditor } from "./editorContext";
import { chatHtml } from "./html";
import { ChatModel } from "./model";
import { rewindToHere } from "../rewind/rewind";
import { vscodeRewindUi } from "../rewind/rewindUi";
import type { ChatViewState, DecisionAction, HostMessage, WebviewMessage } from "./viewState";
import * as fs from "fs";

/** How long "Memory updating…" shows when no memory_changed follows (the memory agent
 * found nothing to change, and the protocol has no event for that). */
const MEMORY_IDLE_MS = 30_000;
const POST_THROTTLE_MS = 30;
/** The `@` completion lists at most this many files, from at most FILE_SCAN_LIMIT scanned. */
const FILE_MATCHES = 20;
const FILE_SCAN_LIMIT = 5000;
const FILE_CACHE_MS = 10_000;

export class ChatView implements vscode.WebviewViewProvider, vscode.Disposable {
  readonly model = new ChatModel();
  private view: vscode.WebviewView | undefined;
  private postTimer: NodeJS.Timeout | undefined;
  private memoryTimer: NodeJS.Timeout | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly workingEmitter = new vscode.EventEmitter<boolean>();
  /** Selections and files added to the next prompt (sent as attachments, then cleared). */
  private chips: Chip[] = [];
  /** The user removed the current-file chip; it comes back when another file is active. */
  private currentFileHidden = false;
  private fileCache: { at: number; paths: string[] } | undefined;
  /** The folder (uri) each thread started here was sent to: a thread continues there. */
  private readonly threadFolders = new Map<string, string>();
  /** A turn of the shown thread runs (for the status bar). */
  readonly onWorking = this.workingEmitter.event;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly connection: InvincatConnection,
    private readonly diffs: ProposedContent,
  ) {
    this.disposables.push(
      connection.onEvent((params) => this.onEvent(params)),
      connection.onStatus((status) => {
        if (status.state !== "running" && this.model.server.state === "running") {
          this.model.serverStopped();
          this.workingEmitter.fire(false);
        }
        this.model.server = { state: status.state, message: status.message };
        this.schedulePost();
      }),
      connection.onReady(() => void this.onServerReady()),
      vscode.window.onDidChangeActiveTextEditor((editor) => {
        // The webview taking focus leaves the last editor active; a real switch shows the
        // new file's chip again.
        if (editor) {
          this.currentFileHidden = false;
        }
        this.schedulePost();
      }),
      // A multi-root window names the chat's project; adding a folder can make it one.
      vscode.workspace.onDidChangeWorkspaceFolders(() => this.schedulePost()),
      vscode.window.registerWebviewViewProvider(CHAT_VIEW_ID, this, {
        webviewOptions: { retainContextWhenHidden: true },
      }),
    );
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    view.webview.options = {
      enableScripts: true,
      localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, "dist"), vscode.Uri.joinPath(this.extensionUri, "media")],
    };
    view.webview.html = chatHtml(view.webview, this.extensionUri);
    view.webview.onDidReceiveMessage((message: WebviewMessage) => void this.onMessage(message), undefined, this.disposables);
    view.onDidDispose(() => {
      if (this.view === view) {
        this.view = undefined;
      }
    });
  }

  /** Reveal the panel and put the cursor in the prompt box. */
  async focus(): Promise<void> {
    await vscode.commands.executeCommand(`${CHAT_VIEW_ID}.focus`);
    this.postNow({ type: "focusPrompt" });
  }

  /** Add the editor's selection (or, with none, its file) to the next prompt as a chip.
   * `focus`: also reveal the chat and put the cursor in the prompt ("Ask Invincat"). */
  async addSelection(editor: vscode.TextEditor | undefined, focus: boolean): Promise<void> {
    if (editor && !inWorkspace(editor.document.uri)) {
      // The server accepts only workspace files (an untitled buffer, a file elsewhere).
      void vscode.window.showWarningMessage("Invincat: only files inside the workspace can be added to the chat.");
      editor = undefined;
    }
    if (editor) {
      this.currentFileHidden = false;
      for (const selection of editor.selections) {
        if (!selection.isEmpty) {
          const chip = selectionChip(editor.document.uri, selection);
          if (!this.chips.some((c) => c.uri === chip.uri && JSON.stringify(c.range) === JSON.stringify(chip.range))) {
            this.chips.push(chip);
          }
        }
      }
    }
    this.schedulePost();
    if (focus) {
      await this.focus();
    } else if (this.view) {
      this.view.show(true);
    } else {
      await vscode.commands.executeCommand(`${CHAT_VIEW_ID}.focus`);
      if (editor) {
        await vscode.window.showTextDocument(editor.document, { viewColumn: editor.viewColumn, preserveFocus: false });
      }
    }
  }

  /** Show a thread the server started (a code action's chat): its turn and approvals. */
  async showThread(threadId: string): Promise<void> {
    await vscode.commands.executeCommand(`${CHAT_VIEW_ID}.focus`);
    // Its events (turn_start, the approval card) arrive as notifications like any turn's.
    await this.switchThread(threadId);
    void this.refreshThreads();
  }

  newThread(): void {
    this.model.newThread();
    this.schedulePost();
  }

  togglePlanMode(): void {
    this.model.planMode = !this.model.planMode;
    this.schedulePost();
  }

  dispose(): void {
    clearTimeout(this.postTimer);
    clearTimeout(this.memoryTimer);
    this.workingEmitter.dispose();
    for (const disposable of this.disposables) {
      disposable.dispose();
    }
  }

  // ------------------------------------------------------------------ server side

  private onEvent(params: EventParams): void {
    this.model.applyEvent(params);
    const type = params.event.type;
    if (type === "memory_updating") {
      clearTimeout(this.memoryTimer);
      this.memoryTimer = setTimeout(() => {
        this.model.memoryIdle();
        this.schedulePost();
      }, MEMORY_IDLE_MS);
    } else if (type === "memory_changed" || type === "memory_idle") {
      clearTimeout(this.memoryTimer);
    } else if (type === "turn_end") {
      void this.refreshThreads();
    }
    this.workingEmitter.fire(this.model.turnId !== undefined);
    this.schedulePost();
  }

  private async onServerReady(): Promise<void> {
    await this.refreshThreads();
    try {
      const { approvals } = await this.connection.request<{ approvals: ApprovalRequested[] }>(PENDING_APPROVALS, {});
      this.model.addPendingApprovals(approvals);
      // Something still waits for a decision (from before a restart): show its thread.
      if (approvals.length > 0 && this.model.isPristine()) {
        await this.switchThread(approvals[0].thread_id);
      }
    } catch (error) {
      this.connection.output.warn(`pendingApprovals: ${describe(error)}`);
    }
    this.schedulePost();
  }

  private async refreshThreads(): Promise<void> {
    try {
      const { threads } = await this.connection.request<{ threads: ThreadInfo[] }>(THREADS_LIST, {});
      this.model.setThreads(threads);
      this.schedulePost();
    } catch (error) {
      this.connection.output.warn(`threads/list: ${describe(error)}`);
    }
  }

  // ------------------------------------------------------------------ webview side

  private async onMessage(message: WebviewMessage): Promise<void> {
    switch (message.type) {
      case "ready":
        this.postNow({ type: "state", state: this.state() });
        break;
      case "send":
        await this.send(message.prompt);
        break;
      case "cancel":
        await this.cancel();
        break;
      case "newThread":
        this.newThread();
        break;
      case "switchThread":
        await this.switchThread(message.threadId);
        break;
      case "setPlanMode":
        this.model.planMode = message.on;
        this.schedulePost();
        break;
      case "resolve":
        await this.resolve(message.action);
        break;
      case "rewind":
        await this.rewind(message.entryId);
        break;
      case "showDiff": {
        const entry = this.model.findApproval(message.approvalId);
        if (entry) {
          await this.diffs.show(entry.request, this.folderPath(entry.request.thread_id));
        }
        break;
      }
      case "openFile":
        await this.openFile(message.path);
        break;
      case "removeChip":
        if (message.id === "current") {
          this.currentFileHidden = true;
        }
        this.chips = this.chips.filter((chip) => chip.id !== message.id);
        this.schedulePost();
        break;
      case "findFiles":
        this.postNow({ type: "fileMatches", seq: message.seq, paths: rankFiles(await this.workspaceFiles(), message.query, FILE_MATCHES) });
        break;
      case "openWorkspaceFile":
        await this.openWorkspaceFile(message.path, message.line);
        break;
      default:
        break;
    }
  }

  /**
   * The workspace folder the shown chat is in: its thread's (a thread continues in its
   * project), else the active editor's, else the first attachment's, else the first folder.
   */
  private chatFolder(folders: FolderRef[]): FolderRef | undefined {
    const threadId = this.model.threadId;
    return chatFolder({
      folders,
      threadFolder: threadId ? this.threadFolder(threadId, folders) : undefined,
      editorUri: workspaceEditor()?.document.uri.toString(),
      chipUris: this.chips.map((chip) => chip.uri),
    });
  }

  /** The folder a thread was sent to, else the one its recorded workspace names. */
  private threadFolder(threadId: string, folders: FolderRef[]): FolderRef | undefined {
    const sentTo = this.threadFolders.get(threadId);
    return (
      folders.find((folder) => folder.uri === sentTo) ??
      folderOfWorkspace(this.model.threads.find((thread) => thread.threadId === threadId)?.workspace, folders)
    );
  }

  /** The folder (a path) a thread's file paths are relative to: its project's, else the
   * first folder (one-folder windows: always the folder). */
  private folderPath(threadId: string | undefined): string | undefined {
    const folders = workspaceFolderRefs();
    const folder = (threadId ? this.threadFolder(threadId, folders) : undefined) ?? folders[0];
    return folder ? vscode.Uri.parse(folder.uri).fsPath : vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  }

  /** The active editor when it goes with the prompt: shown, and in the chat's project. */
  private contextEditor(folders: FolderRef[], folder: FolderRef | undefined): vscode.TextEditor | undefined {
    const editor = this.currentFileHidden ? undefined : workspaceEditor();
    return editor && editorFitsChat(editor.document.uri.toString(), folder, folders) ? editor : undefined;
  }

  private async send(prompt: string): Promise<void> {
    const mode = this.model.planMode ? "plan" : "agent";
    const threadId = this.model.threadId;
    const folders = workspaceFolderRefs();
    const folder = this.chatFolder(folders);
    const editor = this.contextEditor(folders, folder);
    const context = buildContext(editor ? snapshotEditor(editor) : undefined, this.chips);
    this.chips = [];
    this.model.beginSend(prompt, mode);
    this.schedulePost();
    try {
      const params: ChatParams = threadId ? { prompt, threadId, mode } : { prompt, mode };
      if (context) {
        params.context = context;
      }
      if (folder) {
        params.folder = folder.uri;
      }
      const ref = await this.connection.request<TurnRef>(CHAT, params);
      if (folder) {
        this.threadFolders.set(ref.threadId, folder.uri);
      }
      this.model.sendAccepted(ref.threadId, ref.turnId);
    } catch (error) {
      this.model.sendFailed(describe(error));
    }
    this.workingEmitter.fire(this.model.turnId !== undefined);
    this.schedulePost();
  }

  private async cancel(): Promise<void> {
    const turnId = this.model.turnId;
    if (!turnId) {
      return;
    }
    try {
      await this.connection.request<CancelResult>(CANCEL, { turnId });
    } catch (error) {
      this.model.notice(undefined, "error", `Cancel failed: ${describe(error)}`);
      this.schedulePost();
    }
  }

  /** "Rewind to here": the flow of rewind.ts; a conversation rewind reloads the thread. */
  private async rewind(entryId: string): Promise<void> {
    const threadId = this.model.threadId;
    const prompt = this.model.findPrompt(entryId);
    if (threadId === undefined || prompt === undefined) {
      return;
    }
    if (this.model.busy) {
      void vscode.window.showWarningMessage("A turn is still running; wait for it or cancel it before rewinding.");
      return;
    }
    const outcome = await rewindToHere(vscodeRewindUi(this.connection), threadId, prompt.index, prompt.text);
    if (outcome.kind === "rewound" && outcome.conversationChanged) {
      this.model.forgetHistory(threadId);
      await this.switchThread(threadId);
      void this.refreshThreads();
    }
  }

  private async switchThread(threadId: string): Promise<void> {
    this.model.switchThread(threadId);
    this.schedulePost();
    if (!this.model.needsHistory()) {
      return;
    }
    try {
      const { messages } = await this.connection.request<{ messages: HistoryMessage[] }>(THREADS_HISTORY, { threadId });
      this.model.loadHistory(threadId, messages);
    } catch (error) {
      this.model.notice(threadId, "error", `Could not load the thread: ${describe(error)}`);
    }
    this.schedulePost();
  }

  private async resolve(action: DecisionAction): Promise<void> {
    const entry = this.model.findApproval(action.approvalId);
    let params;
    try {
      params = resolveParams(action, entry?.request.kind ?? "tool");
    } catch (error) {
      if (error instanceof DecisionError) {
        this.model.markDeciding(action.approvalId, false, error.message);
        this.schedulePost();
        return;
      }
      throw error;
    }
    this.model.markDeciding(action.approvalId, true);
    this.schedulePost();
    try {
      const result = await this.connection.request<ResolveResult>(RESOLVE_APPROVAL, params);
      if (!result.resolved) {
        // Decided elsewhere first (a code action, another window): the card says so; the
        // approval_resolved event, if any, closes it.
        this.model.markDeciding(action.approvalId, false, result.reason ?? "The server did not accept the decision.");
      } else if (entry?.busy) {
        // Resolved; after a restart no event may follow, so close the card here too.
        entry.busy = false;
        if (entry.state === "pending") {
          entry.state = "resolved";
          entry.decision = params.scope ? `${params.decision} (${params.scope})` : params.decision;
        }
        entry.rev++;
      }
    } catch (error) {
      this.model.markDeciding(action.approvalId, false, describe(error));
    }
    this.schedulePost();
  }

  private async openFile(file: string): Promise<void> {
    const folder = this.folderPath(this.model.threadId);
    const resolved = resolveApprovalPath(file, folder, (p) => fs.existsSync(p));
    if (resolved && fs.existsSync(resolved)) {
      await vscode.window.showTextDocument(vscode.Uri.file(resolved), { preview: false });
    }
  }

  /** A file an answer names: a workspace file by its path, else the only workspace file with
   * that name (answers often say `app.py` for `src/app.py`); nothing outside the workspace. */
  private async openWorkspaceFile(file: string, line: number | undefined): Promise<void> {
    const folder = this.folderPath(this.model.threadId);
    const isFile = (p: string) => {
      try {
        return fs.statSync(p).isFile();
      } catch {
        return false;
      }
    };
    let uri: vscode.Uri | undefined;
    const resolved = resolveAnswerPath(file, folder, isFile);
    if (resolved) {
      uri = vscode.Uri.file(resolved);
    } else if (folder && !file.includes("/") && !file.includes("\\")) {
      const matches = await vscode.workspace.findFiles(new vscode.RelativePattern(folder, `**/${file}`), undefined, 2);
      uri = matches.length === 1 ? matches[0] : undefined;
    }
    if (!uri) {
      void vscode.window.showInformationMessage(`Invincat: no file “${file}” in this workspace.`);
      return;
    }
    const position = line !== undefined ? new vscode.Position(Math.max(0, line - 1), 0) : undefined;
    await vscode.window.showTextDocument(uri, {
      preview: false,
      ...(position ? { selection: new vscode.Range(position, position) } : {}),
    });
  }

  /** Workspace files as relative paths (files.exclude applies), cached for a few seconds
   * so typing after `@` does not rescan the workspace on every key. */
  private async workspaceFiles(): Promise<string[]> {
    if (this.fileCache && Date.now() - this.fileCache.at < FILE_CACHE_MS) {
      return this.fileCache.paths;
    }
    const uris = await vscode.workspace.findFiles("**/*", undefined, FILE_SCAN_LIMIT);
    const paths = uris.map((uri) => vscode.workspace.asRelativePath(uri, false));
    this.fileCache = { at: Date.now(), paths };
    return paths;
  }

  private state(): ChatViewState {
    const folders = workspaceFolderRefs();
    const folder = this.chatFolder(folders);
    const editor = this.contextEditor(folders, folder);
    const chips = [...(editor ? [currentFileChip(editor)] : []), ...this.chips];
    const state: ChatViewState = { ...this.model.snapshot(), chips: chips.map(({ id, kind, label, title }) => ({ id, kind, label, title })) };
    const project = projectLabel(folder, folders);
    if (project) {
      state.project = project;
    }
    return state;
  }

  private schedulePost(): void {
    if (this.postTimer) {
      return;
    }
    this.postTimer = setTimeout(() => {
      this.postTimer = undefined;
      this.postNow({ type: "state", state: this.state() });
    }, POST_THROTTLE_MS);
  }

  private postNow(message: HostMessage): void {
    void this.view?.webview.postMessage(message);
  }
}
