/**
 * The language client for `invincat --stdio`: starts, restarts and stops the server, turns
 * its notifications into events, and sends the `invincat/*` requests.
 *
 * A restart builds a new LanguageClient, since the command and environment are fixed when
 * a client is created. Start failures (the command is missing, the server exits) are shown
 * once with what to do; they never throw out of activation.
 */

import * as vscode from "vscode";
import {
  LanguageClient,
  State,
  TransportKind,
  type LanguageClientOptions,
  type ServerOptions,
} from "vscode-languageclient/node";
import { CLIENT_ID, CLIENT_NAME, EVENT, MEMORY_DID_CHANGE, STATUS, STATUS_CHANGED } from "../common/constants";
import type { EventParams, MemoryDidChangeParams, ServerStatus as SessionStatus } from "../common/protocol";
import type { ServerState } from "../chat/viewState";
import { resolveCommand } from "./command";
import { readSettings, serverEnv, type Settings } from "./settings";

export interface ServerStatus {
  state: ServerState;
  message?: string;
}

export type { SessionStatus };

/** What an older server without `invincat/status` is taken to be once it runs. */
const ASSUMED_READY: SessionStatus = {
  state: "ready",
  timings: { initializeMs: null, stackImportMs: null, sessionOpenMs: null },
};

export class ServerNotRunningError extends Error {
  constructor() {
    super("The Invincat server is not running; see the Invincat output channel, or run “Invincat: Restart Server”.");
  }
}

export class InvincatConnection implements vscode.Disposable {
  readonly output: vscode.LogOutputChannel;
  private readonly traceOutput: vscode.OutputChannel;
  private client: LanguageClient | undefined;
  private statusValue: ServerStatus = { state: "stopped" };
  private starting: Promise<void> | undefined;
  private sessionValue: SessionStatus | undefined;
  /** Runs server commands (workspace/executeCommand) for the chat: startChatCommand.ts. */
  executeCommandMiddleware: ((command: string, args: unknown[], next: (command: string, args: unknown[]) => unknown) => Promise<unknown>) | undefined;

  private readonly eventEmitter = new vscode.EventEmitter<EventParams>();
  private readonly memoryEmitter = new vscode.EventEmitter<MemoryDidChangeParams>();
  private readonly statusEmitter = new vscode.EventEmitter<ServerStatus>();
  private readonly readyEmitter = new vscode.EventEmitter<void>();
  private readonly sessionEmitter = new vscode.EventEmitter<SessionStatus | undefined>();
  /** Every `invincat/event` notification. */
  readonly onEvent = this.eventEmitter.event;
  /** `invincat/memory/didChange`. */
  readonly onMemoryDidChange = this.memoryEmitter.event;
  readonly onStatus = this.statusEmitter.event;
  /** The server is running (fired after each start, restarts included). Memory, threads
   * and pending approvals answer from then on; a chat waits for the session. */
  readonly onReady = this.readyEmitter.event;
  /** The server's own readiness (`invincat/status`, `invincat/statusChanged`): undefined
   * until known, `starting` while the session opens, then `ready` or `failed`. */
  readonly onSessionStatus = this.sessionEmitter.event;

  constructor() {
    this.output = vscode.window.createOutputChannel(CLIENT_NAME, { log: true });
    this.traceOutput = vscode.window.createOutputChannel(`${CLIENT_NAME} Trace`);
  }

  get status(): ServerStatus {
    return this.statusValue;
  }

  get sessionStatus(): SessionStatus | undefined {
    return this.sessionValue;
  }

  start(): Promise<void> {
    this.starting ??= this.doStart().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  async restart(): Promise<void> {
    this.output.info("Restarting the server");
    await this.stop();
    await this.start();
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) {
      try {
        await client.stop(5000);
      } catch (error) {
        this.output.warn(`Stopping the server: ${describe(error)}`);
      }
      await client.dispose().catch(() => undefined);
    }
    this.setStatus({ state: "stopped" });
  }

  /** Send an `invincat/*` request; throws ServerNotRunningError when there is no server. */
  async request<R>(method: string, params: object): Promise<R> {
    if (this.starting) {
      await this.starting;
    }
    const client = this.client;
    if (!client || !client.isRunning()) {
      throw new ServerNotRunningError();
    }
    return client.sendRequest<R>(method, params);
  }

  dispose(): void {
    void this.stop();
    this.eventEmitter.dispose();
    this.memoryEmitter.dispose();
    this.statusEmitter.dispose();
    this.readyEmitter.dispose();
    this.sessionEmitter.dispose();
    this.output.dispose();
    this.traceOutput.dispose();
  }

  private async doStart(): Promise<void> {
    const config = vscode.workspace.getConfiguration("invincat");
    const { settings, problems } = readSettings((key) => config.get(key));
    for (const problem of problems) {
      this.output.warn(problem);
      void vscode.window.showWarningMessage(`Invincat: ${problem}`);
    }
    const env = serverEnv(settings, process.env);
    const command = resolveCommand(settings.command, env);
    if (command === undefined) {
      this.client = undefined;
      this.setSession(undefined);
      this.reportStartFailure(settings, new Error(`\`${settings.command}\` is not on PATH (its relative entries are not searched)`));
      return;
    }
    const client = this.createClient(settings, command, env);
    this.client = client;
    this.setSession(undefined);
    this.setStatus({ state: "starting" });
    this.output.info(`Starting ${command} ${settings.args.join(" ")}`);
    try {
      await client.start();
    } catch (error) {
      this.reportStartFailure(settings, error);
      return;
    }
    if (this.client === client) {
      this.readyEmitter.fire();
      void this.askSessionStatus(client);
    }
  }

  /** Shown once, with what to do; never thrown out of activation. */
  private reportStartFailure(settings: Settings, error: unknown): void {
    const message = `Could not start \`${settings.command} ${settings.args.join(" ")}\`: ${describe(error)}. Set “invincat.server.command” to the invincat executable (e.g. a virtualenv's bin/invincat), then run “Invincat: Restart Server”.`;
    this.output.error(message);
    this.setStatus({ state: "error", message: describe(error) });
    void vscode.window.showErrorMessage(`Invincat: ${message}`, "Open Settings", "Show Output").then((choice) => {
      if (choice === "Open Settings") {
        void vscode.commands.executeCommand("workbench.action.openSettings", "invincat.server");
      } else if (choice === "Show Output") {
        this.output.show(true);
      }
    });
  }

  /** The readiness now; `invincat/statusChanged` keeps it current afterwards. */
  private async askSessionStatus(client: LanguageClient): Promise<void> {
    let status: SessionStatus;
    try {
      status = await client.sendRequest<SessionStatus>(STATUS, {});
    } catch (error) {
      this.output.info(`invincat/status unavailable (${describe(error)}); assuming the server is ready`);
      status = ASSUMED_READY;
    }
    // A notification that arrived meanwhile is newer than this answer.
    if (this.client === client && this.sessionValue === undefined) {
      this.setSession(status);
    }
  }

  private setSession(status: SessionStatus | undefined): void {
    this.sessionValue = status;
    if (status?.state === "failed") {
      this.output.error(`The Invincat session could not open: ${status.message ?? "see the log above"}`);
    } else if (status?.state === "ready" && status.timings.sessionOpenMs !== null) {
      const t = status.timings;
      this.output.info(`Session open: initialize ${t.initializeMs} ms, stack import ${t.stackImportMs} ms, session ${t.sessionOpenMs} ms`);
    }
    this.sessionEmitter.fire(status);
  }

  private createClient(settings: Settings, command: string, env: Record<string, string>): LanguageClient {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const serverOptions: ServerOptions = {
      command,
      args: settings.args,
      transport: TransportKind.stdio,
      options: { env, cwd: folder },
    };
    const clientOptions: LanguageClientOptions = {
      // Every file: the agent reads unsaved buffers, and pending edits show as diagnostics.
      documentSelector: [{ scheme: "file" }],
      outputChannel: this.output,
      // The server offers the "ask about this…" code action only to a client that can ask
      // for its prompt (the middleware below).
      initializationOptions: { codeActions: { ask: true } },
      middleware: {
        executeCommand: (command, args, next) =>
          this.executeCommandMiddleware ? this.executeCommandMiddleware(command, args, next) : next(command, args),
      },
      traceOutputChannel: this.traceOutput,
      // A missing model configuration is not a start failure: the server says what to set.
      initializationFailedHandler: (error) => {
        this.output.error(`initialize failed: ${describe(error)}`);
        return false;
      },
    };
    const client = new LanguageClient(CLIENT_ID, CLIENT_NAME, serverOptions, clientOptions);
    client.onNotification(EVENT, (params: EventParams) => this.eventEmitter.fire(params));
    client.onNotification(MEMORY_DID_CHANGE, (params: MemoryDidChangeParams) => this.memoryEmitter.fire(params));
    client.onNotification(STATUS_CHANGED, (params: SessionStatus) => {
      if (this.client === client) {
        this.setSession(params);
      }
    });
    client.onDidChangeState((change) => {
      if (this.client !== client) {
        return;
      }
      if (change.newState === State.Running) {
        this.setStatus({ state: "running" });
      } else if (change.newState === State.Starting) {
        this.setStatus({ state: "starting" });
      } else if (this.statusValue.state !== "error") {
        this.setStatus({ state: "stopped" });
      }
    });
    return client;
  }

  private setStatus(status: ServerStatus): void {
    this.statusValue = status;
    this.statusEmitter.fire(status);
  }
}

export function describe(error: unknown): string {
  if (error instanceof Error) {
    return error.message;
  }
  if (error && typeof error === "object" && "message" in error) {
    return String((error as { message: unknown }).message);
  }
  return String(error);
}
