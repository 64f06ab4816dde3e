/**
 * Processes of the end-to-end test: the fake OpenAI server, code-server with the built
 * .vsix installed, and headless Chromium. Everything comes from what
 * scripts/setup-vscode-e2e installed (nothing is downloaded here); every wait has a
 * timeout and every process is killed (its whole process group) in `stop()`.
 */

import { spawn } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { chromium, type Browser, type Page } from "playwright-core";
import { Child, freePort, spawnChild, until, withTimeout } from "./processes";

export { runToEnd, until, withTimeout } from "./processes";

export const EXTENSION_ROOT = path.resolve(__dirname, "../../..");
export const REPO_ROOT = path.resolve(EXTENSION_ROOT, "../..");
const CACHE = path.join(EXTENSION_ROOT, ".e2e");

export interface Tools {
  node24: string;
  codeServer: string;
  chromium: string;
  python: string;
  invincat: string;
  vsix: string;
}

/** Paths from `.e2e/env` (written by scripts/setup-vscode-e2e) and the repo's venv. */
export function tools(): Tools {
  const envFile = path.join(CACHE, "env");
  if (!fs.existsSync(envFile)) {
    throw new Error(`${envFile} is missing: run scripts/setup-vscode-e2e first.`);
  }
  const values: Record<string, string> = {};
  for (const line of fs.readFileSync(envFile, "utf8").split("\n")) {
    const match = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (match) {
      values[match[1]] = match[2];
    }
  }
  const venv = process.env.INVINCAT_VENV ?? path.join(REPO_ROOT, ".venv");
  const found: Tools = {
    node24: values.NODE24,
    codeServer: values.CODE_SERVER_ENTRY,
    chromium: values.CHROMIUM,
    python: path.join(venv, "bin", "python"),
    invincat: path.join(venv, "bin", "invincat"),
    vsix: path.join(EXTENSION_ROOT, "dist", "invincat.vsix"),
  };
  for (const [name, file] of Object.entries(found)) {
    if (!file || !fs.existsSync(file)) {
      throw new Error(`${name} not found at ${file}: run scripts/setup-vscode-e2e and npm run package.`);
    }
  }
  return found;
}

export interface FakeModel {
  baseUrl: string;
  addSteps(steps: object[]): Promise<void>;
  requests(): Promise<{ body: { model?: string }; outcome: string }[]>;
}

export interface Session {
  dir: string;
  workspace: string;
  artifacts: string;
  fake: FakeModel;
  /** The window the steps drive (openWindow replaces it). */
  page: Page;
  /** Open `target` (a folder or a `.code-workspace` file) in a new window of the same
   * code-server, as File > Open Workspace does, and close the current one (its unsaved
   * buffers are dropped without the "leave page?" prompt). `page` is the new window. */
  openWindow(target: string): Promise<Page>;
  /** Take a screenshot named `NN-name.png` into the artifacts folder. */
  screenshot(name: string): Promise<string>;
  /** Print what the server and the model saw (the tail of the Invincat output channel, the
   * fake model's requests): CI shows only the console, not the artifacts folder. */
  diagnose(): Promise<void>;
  stop(): Promise<void>;
}

/** The environment the editor (and so the language server) runs in: isolated dirs, the
 * fake model, memory extraction by the `memory-model` scripted in the fake server. */
function sessionEnv(dir: string, baseUrl: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (key.startsWith("INVINCAT_") || key.startsWith("OPENAI_") || key.startsWith("VSCODE_") || key.startsWith("ELECTRON_")) {
      continue;
    }
    env[key] = value;
  }
  const home = path.join(dir, "home");
  Object.assign(env, {
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, ".config"),
    XDG_DATA_HOME: path.join(home, ".local", "share"),
    XDG_CACHE_HOME: path.join(home, ".cache"),
    XDG_STATE_HOME: path.join(home, ".local", "state"),
    INVINCAT_HOME: path.join(dir, "invincat-home"),
    OPENAI_BASE_URL: baseUrl,
    OPENAI_API_KEY: "test-key",
    INVINCAT_MODEL: "fake-model",
    INVINCAT_MEMORY_EXTRACTION: "on",
    INVINCAT_MEMORY_MODEL: "memory-model",
    // The warm server (docs/warm-server.md) that `invincat --stdio` and one-shot chats use by
    // default lives here, and is stopped with the session (stopWarmServers).
    XDG_RUNTIME_DIR: path.join(dir, "xdg"),
    // No extension gallery: code-server would query open-vsx.org at start-up.
    EXTENSIONS_GALLERY: JSON.stringify({ serviceUrl: "http://127.0.0.1:9/gallery", itemUrl: "http://127.0.0.1:9/items" }),
    NO_PROXY: "127.0.0.1,localhost",
    no_proxy: "127.0.0.1,localhost",
  });
  for (const key of ["HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "INVINCAT_HOME"]) {
    fs.mkdirSync(env[key] as string, { recursive: true });
  }
  fs.mkdirSync(env.XDG_RUNTIME_DIR as string, { recursive: true, mode: 0o700 });
  return env;
}

/** SIGTERM the warm servers started under the session's runtime directory (their logs name
 * their pids), and keep their logs with the artifacts. */
function stopWarmServers(dir: string, artifacts: string): void {
  const runtime = path.join(dir, "xdg", "invincat");
  let logs: string[] = [];
  try {
    logs = fs.readdirSync(runtime).filter((name) => name.endsWith(".log"));
  } catch {
    return; // none was started
  }
  for (const name of logs) {
    const text = fs.readFileSync(path.join(runtime, name), "utf8");
    for (const match of text.matchAll(/serving \S+ \(version \w+, pid (\d+)\)/g)) {
      try {
        process.kill(Number(match[1]), "SIGTERM");
      } catch {
        // already gone
      }
    }
    try {
      fs.copyFileSync(path.join(runtime, name), path.join(artifacts, `warm-${name}`));
    } catch {
      // best effort
    }
  }
}

async function startFakeModel(t: Tools, logDir: string): Promise<{ child: Child; fake: FakeModel }> {
  const proc = spawn(t.python, ["-m", "invincat_server.testing.fake_openai", "--port", "0"], {
    cwd: REPO_ROOT,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const child = new Child("fake-openai", proc, path.join(logDir, "fake-openai.log"));
  const baseUrl = await withTimeout(
    new Promise<string>((resolve, reject) => {
      let buffer = "";
      proc.stdout?.on("data", (chunk: Buffer) => {
        buffer += chunk.toString();
        const match = /READY (\S+)/.exec(buffer);
        if (match) {
          resolve(match[1]);
        }
      });
      proc.on("exit", (code) => reject(new Error(`fake_openai exited with ${code}; see ${logDir}/fake-openai.log`)));
    }),
    30_000,
    "the fake OpenAI server to print READY",
  );
  const root = baseUrl.replace(/\/v1$/, "");
  const fake: FakeModel = {
    baseUrl,
    async addSteps(steps) {
      const response = await fetch(`${root}/_fake/steps`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ steps }),
        signal: AbortSignal.timeout(10_000),
      });
      if (!response.ok) {
        throw new Error(`POST /_fake/steps: ${response.status} ${await response.text()}`);
      }
    },
    async requests() {
      const response = await fetch(`${root}/_fake/requests`, { signal: AbortSignal.timeout(10_000) });
      return (await response.json()) as { body: { model?: string }; outcome: string }[];
    },
  };
  return { child, fake };
}

export interface StartOptions {
  /** Files to create in the workspace (relative path → content). */
  files: Record<string, string>;
  /** Steps the fake model starts with. */
  steps: object[];
  /** Runs before the editor starts, with the editor's environment (e.g. to save a thread
   * from the terminal that the editor then lists). */
  prepare?: (env: NodeJS.ProcessEnv, workspace: string, t: Tools, artifacts: string) => Promise<void>;
}

/** Start everything and open the workspace in VS Code in the browser. */
export async function startSession(options: StartOptions): Promise<Session> {
  const t = tools();
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const artifacts = process.env.INVINCAT_E2E_ARTIFACTS ?? path.join(CACHE, "artifacts", stamp);
  fs.mkdirSync(artifacts, { recursive: true });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "invincat-vscode-e2e-"));
  const workspace = path.join(dir, "project");
  fs.mkdirSync(path.join(workspace, ".git"), { recursive: true });
  for (const [file, content] of Object.entries(options.files)) {
    fs.mkdirSync(path.dirname(path.join(workspace, file)), { recursive: true });
    fs.writeFileSync(path.join(workspace, file), content);
  }
  const children: Child[] = [];
  let browser: Browser | undefined;
  const stop = async (): Promise<void> => {
    await browser?.close().catch(() => undefined);
    copyServerLogs(dir, artifacts);
    for (const child of children.reverse()) {
      await child.kill();
    }
    stopWarmServers(dir, artifacts);
    if (!process.env.INVINCAT_E2E_KEEP) {
      fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    }
  };
  try {
    const started = await startFakeModel(t, artifacts);
    children.push(started.child);
    await started.fake.addSteps(options.steps);
    const env = sessionEnv(dir, started.fake.baseUrl);
    await options.prepare?.(env, workspace, t, artifacts);

    const userData = path.join(dir, "code-user-data");
    const extensions = path.join(dir, "code-extensions");
    // The extension host runs on the code-server side, a "remote" for VS Code: settings of
    // machine scope (the server command) are read from Machine/, the rest from User/.
    for (const where of ["User", "Machine"]) {
      fs.mkdirSync(path.join(userData, where), { recursive: true });
      fs.writeFileSync(path.join(userData, where, "settings.json"), JSON.stringify(editorSettings(t), null, 2));
    }
    const base = [t.codeServer, "--user-data-dir", userData, "--extensions-dir", extensions];

    const install = spawnChild("code-server-install", t.node24, [...base, "--install-extension", t.vsix], env, artifacts);
    children.push(install);
    const code = await withTimeout(install.exited, 120_000, "code-server --install-extension");
    if (code !== 0) {
      throw new Error(`code-server --install-extension exited with ${code}; see ${artifacts}/code-server-install.log`);
    }

    const port = await freePort();
    const server = spawnChild(
      "code-server",
      t.node24,
      [
        ...base,
        "--auth",
        "none",
        "--bind-addr",
        `127.0.0.1:${port}`,
        "--disable-telemetry",
        "--disable-update-check",
        "--disable-workspace-trust",
        "--disable-getting-started-override",
        "--ignore-last-opened",
        workspace,
      ],
      env,
      artifacts,
    );
    children.push(server);
    const url = `http://127.0.0.1:${port}`;
    await until(
      async () => (await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) })).ok || undefined,
      60_000,
      "code-server /healthz",
      300,
    );

    browser = await chromium.launch({
      executablePath: t.chromium,
      headless: true,
      timeout: 60_000,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-quic",
      ],
    });
    const context = await browser.newContext({ viewport: { width: 1600, height: 1100 } });
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: url });
    const consoleLog = fs.createWriteStream(path.join(artifacts, "browser-console.log"));
    const open = async (query: string): Promise<Page> => {
      const opened = await context.newPage();
      opened.setDefaultTimeout(30_000);
      opened.on("console", (message) => consoleLog.write(`[${message.type()}] ${message.text()}\n`));
      await opened.goto(`${url}/?${query}`, { timeout: 60_000 });
      return opened;
    };

    let shots = 0;
    const session: Session = {
      dir,
      workspace,
      artifacts,
      fake: started.fake,
      page: await open(`folder=${encodeURIComponent(workspace)}`),
      async openWindow(target: string) {
        // One window at a time, as File > Open Workspace replaces the window.
        await session.page.close({ runBeforeUnload: false });
        const kind = target.endsWith(".code-workspace") ? "workspace" : "folder";
        session.page = await open(`${kind}=${encodeURIComponent(target)}`);
        return session.page;
      },
      async screenshot(name: string) {
        shots += 1;
        const file = path.join(artifacts, `${String(shots).padStart(2, "0")}-${name}.png`);
        await session.page.screenshot({ path: file, timeout: 15_000 });
        return file;
      },
      async diagnose() {
        await printDiagnosis(dir, artifacts, started.fake);
      },
      stop,
    };
    return session;
  } catch (error) {
    await stop();
    throw error;
  }
}

/** User settings of the test editor: no distractions, the server from the repo's venv. */
function editorSettings(t: Tools): Record<string, unknown> {
  return {
    "invincat.server.command": t.invincat,
    "invincat.logLevel": "DEBUG",
    "invincat.trace.server": "messages",
    "security.workspace.trust.enabled": false,
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": false,
    "workbench.welcomePage.walkthroughs.openOnInstall": false,
    "workbench.enableExperiments": false,
    "workbench.secondarySideBar.defaultVisibility": "hidden",
    "chat.disableAIFeatures": true,
    "chat.commandCenter.enabled": false,
    "telemetry.telemetryLevel": "off",
    "update.mode": "none",
    "extensions.autoUpdate": false,
    "extensions.autoCheckUpdates": false,
    "extensions.ignoreRecommendations": true,
    "git.enabled": false,
    "editor.minimap.enabled": false,
    "files.autoSave": "off",
    "window.commandCenter": false,
    "remote.autoForwardPorts": false,
  };
}

/** The Invincat output channel logs code-server wrote under the user data folder. */
function serverLogs(dir: string): string[] {
  const found: string[] = [];
  const walk = (folder: string, depth: number): void => {
    if (depth > 8 || !fs.existsSync(folder)) {
      return;
    }
    for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
      const full = path.join(folder, entry.name);
      if (entry.isDirectory()) {
        walk(full, depth + 1);
      } else if (/invincat/i.test(entry.name) && entry.name.endsWith(".log")) {
        found.push(full);
      }
    }
  };
  walk(path.join(dir, "code-user-data", "logs"), 0);
  return found;
}

/** Keep the server's logs with the screenshots (the session folder is deleted). */
function copyServerLogs(dir: string, artifacts: string): void {
  const taken = new Set<string>();
  for (const file of serverLogs(dir)) {
    // Each window (openWindow) has its own logs under the same names.
    let name = `server-${path.basename(file)}`;
    for (let n = 2; taken.has(name); n += 1) {
      name = `server-${n}-${path.basename(file)}`;
    }
    taken.add(name);
    try {
      fs.copyFileSync(file, path.join(artifacts, name));
    } catch {
      // best effort: a missing log must not hide the test's own failure
    }
  }
}

function tail(file: string, lines: number): string {
  try {
    return fs.readFileSync(file, "utf8").split("\n").slice(-lines).join("\n");
  } catch (error) {
    return `(cannot read ${file}: ${error})`;
  }
}

async function printDiagnosis(dir: string, artifacts: string, fake: FakeModel): Promise<void> {
  const out: string[] = ["# diagnosis: what the server and the fake model saw"];
  for (const file of serverLogs(dir)) {
    // Server stderr and LSP trace lines; the invincat/event notifications are the
    // interesting part, so keep a generous tail but cut very long lines.
    const text = tail(file, 120)
      .split("\n")
      .map((line) => (line.length > 400 ? `${line.slice(0, 400)}…` : line))
      .join("\n");
    out.push(`## ${path.basename(file)} (last 120 lines)`, text);
  }
  out.push("## fake-openai.log (last 30 lines)", tail(path.join(artifacts, "fake-openai.log"), 30));
  try {
    const requests = await fake.requests();
    out.push(`## fake model requests: ${requests.length}`);
    for (const [i, r] of requests.slice(-10).entries()) {
      const body = r.body as { model?: string; messages?: { role?: string; content?: unknown }[] };
      const last = body.messages?.[body.messages.length - 1];
      const content = typeof last?.content === "string" ? last.content.slice(0, 160) : JSON.stringify(last?.content ?? null).slice(0, 160);
      out.push(`${requests.length - Math.min(10, requests.length) + i}: model=${body.model} outcome=${r.outcome} last=${last?.role}: ${content}`);
    }
  } catch (error) {
    out.push(`(fake model requests unavailable: ${error})`);
  }
  console.log(out.join("\n"));
}
