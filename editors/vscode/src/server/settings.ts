/**
 * The extension's settings (`invincat.*` in package.json), read into one typed object, and
 * the server process's environment built from them. Invalid values fall back to the
 * defaults with a warning instead of failing activation.
 */

export interface Settings {
  /** The executable: `invincat` on PATH or an absolute path. */
  command: string;
  /** Its arguments (`--stdio`). */
  args: string[];
  /** Extra environment variables for the server, on top of the editor's environment. */
  env: Record<string, string>;
  /** `INVINCAT_MODEL` for the server; empty: its own configuration decides. */
  model: string;
  /** `INVINCAT_LOG_LEVEL` of the server. */
  logLevel: "DEBUG" | "INFO" | "WARNING";
}

export const DEFAULT_SETTINGS: Settings = {
  command: "invincat",
  args: ["--stdio"],
  env: {},
  model: "",
  logLevel: "INFO",
};

/** Settings whose change needs a server restart. */
export const RESTART_KEYS = ["invincat.server", "invincat.model", "invincat.logLevel"];

type Getter = (key: string) => unknown;

/** Read settings through `get` (a WorkspaceConfiguration's `get`); problems are returned
 * as messages and the default is used for that field. */
export function readSettings(get: Getter): { settings: Settings; problems: string[] } {
  const problems: string[] = [];
  const settings: Settings = { ...DEFAULT_SETTINGS, args: [...DEFAULT_SETTINGS.args], env: {} };

  const command = get("server.command");
  if (typeof command === "string" && command.trim()) {
    settings.command = command.trim();
  } else if (command !== undefined && command !== "") {
    problems.push("invincat.server.command must be a non-empty string; using `invincat`.");
  }

  const args = get("server.args");
  if (Array.isArray(args) && args.every((a) => typeof a === "string")) {
    settings.args = [...args];
  } else if (args !== undefined) {
    problems.push('invincat.server.args must be a list of strings; using ["--stdio"].');
  }

  const env = get("server.env");
  if (env && typeof env === "object" && !Array.isArray(env)) {
    for (const [key, value] of Object.entries(env as Record<string, unknown>)) {
      if (typeof value === "string") {
        settings.env[key] = value;
      } else if (typeof value === "number" || typeof value === "boolean") {
        settings.env[key] = String(value);
      } else {
        problems.push(`invincat.server.env.${key} must be a string; it is ignored.`);
      }
    }
  } else if (env !== undefined && env !== null) {
    problems.push("invincat.server.env must be an object of strings; it is ignored.");
  }

  const model = get("model");
  if (typeof model === "string") {
    settings.model = model.trim();
  }

  const level = get("logLevel");
  if (level === "DEBUG" || level === "INFO" || level === "WARNING") {
    settings.logLevel = level;
  } else if (level !== undefined) {
    problems.push("invincat.logLevel must be DEBUG, INFO or WARNING; using INFO.");
  }
  return { settings, problems };
}

/** The server's environment: the editor's own (so `OPENAI_API_KEY` & co. pass through),
 * then `invincat.server.env`, then `invincat.model` and the log level. */
export function serverEnv(settings: Settings, base: NodeJS.ProcessEnv): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(base)) {
    if (value !== undefined) {
      env[key] = value;
    }
  }
  Object.assign(env, settings.env);
  if (settings.model) {
    env.INVINCAT_MODEL = settings.model;
  }
  env.INVINCAT_LOG_LEVEL = settings.logLevel;
  return env;
}
