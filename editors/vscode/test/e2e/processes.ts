/**
 * Child processes of the end-to-end test, each in its own process group so a kill takes
 * its children too, with timeouts on every wait. A process group still alive when this
 * process exits or is signalled is killed then, so nothing outlives the test run.
 */

import { spawn, type ChildProcess } from "child_process";
import * as fs from "fs";
import * as net from "net";
import * as path from "path";

export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export async function until<T>(check: () => Promise<T | undefined> | T | undefined, ms: number, what: string, every = 200): Promise<T> {
  const deadline = Date.now() + ms;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) {
        return value;
      }
    } catch (error) {
      lastError = error;
    }
    await new Promise((resolve) => setTimeout(resolve, every));
  }
  throw new Error(`timed out after ${ms} ms waiting for ${what}${lastError ? ` (last error: ${String(lastError)})` : ""}`);
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

/** Process groups still running: killed if this process exits or is signalled before
 * `stop()` ran (a hard timeout of the test runner, Ctrl-C), so nothing outlives the test. */
const liveGroups = new Set<number>();

function killLiveGroups(): void {
  for (const pid of liveGroups) {
    killGroup(pid, "SIGKILL");
  }
  liveGroups.clear();
}

process.on("exit", killLiveGroups);
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.once(signal, () => {
    killLiveGroups();
    process.exit(128 + (signal === "SIGINT" ? 2 : signal === "SIGTERM" ? 15 : 1));
  });
}

/** A child in its own process group, its output appended to a log file. */
export class Child {
  readonly exited: Promise<number | null>;

  constructor(
    readonly name: string,
    readonly proc: ChildProcess,
    logFile: string,
  ) {
    const log = fs.createWriteStream(logFile, { flags: "a" });
    proc.stdout?.pipe(log, { end: false });
    proc.stderr?.pipe(log, { end: false });
    if (proc.pid !== undefined) {
      liveGroups.add(proc.pid);
    }
    this.exited = new Promise((resolve) => proc.on("exit", (code) => resolve(code)));
  }

  /** SIGTERM the group, then SIGKILL what is left after `graceMs`. */
  async kill(graceMs = 3000): Promise<void> {
    const pid = this.proc.pid;
    if (pid !== undefined) {
      liveGroups.delete(pid);
    }
    if (pid === undefined || this.proc.exitCode !== null || this.proc.signalCode !== null) {
      killGroup(pid, "SIGKILL");
      return;
    }
    killGroup(pid, "SIGTERM");
    const exited = await Promise.race([this.exited.then(() => true), sleep(graceMs).then(() => false)]);
    killGroup(pid, "SIGKILL");
    if (!exited) {
      await Promise.race([this.exited, sleep(1000)]);
    }
  }
}

function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) {
    return;
  }
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Run a command to completion (its group killed after `ms`); its output goes to a log. */
export async function runToEnd(name: string, command: string, args: string[], env: NodeJS.ProcessEnv, logDir: string, ms: number): Promise<number | null> {
  const child = spawnChild(name, command, args, env, logDir);
  try {
    return await withTimeout(child.exited, ms, `${name} to finish`);
  } finally {
    await child.kill();
  }
}

export function spawnChild(name: string, command: string, args: string[], env: NodeJS.ProcessEnv, logDir: string, cwd?: string): Child {
  const proc = spawn(command, args, { env, cwd, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  return new Child(name, proc, path.join(logDir, `${name}.log`));
}
