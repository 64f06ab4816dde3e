/**
 * Where the server command is found. A bare name (`invincat`, the default) is looked up
 * here, on the absolute entries of PATH only: the server starts in the workspace folder,
 * where an empty or relative entry (`PATH=.:$PATH`, a trailing `:`) would run a program
 * the repository planted under that name (docs/security.md, "Repository content never
 * runs as Invincat's code"). A command with a directory part is the user's own setting
 * (their user settings only: the setting is machine-scoped) and is used as written.
 */

import * as fs from "node:fs";
import * as path from "node:path";

export type IsExecutable = (file: string) => boolean;

function executableFile(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** The command to spawn, or undefined when a bare name is on no absolute PATH entry. */
export function resolveCommand(
  command: string,
  env: Record<string, string | undefined>,
  isExecutable: IsExecutable = executableFile,
  platform: NodeJS.Platform = process.platform,
): string | undefined {
  if (platform === "win32" || command.includes("/")) {
    return command; // Windows: PATHEXT lookups are Node's; Invincat is POSIX-only anyway
  }
  for (const dir of (env.PATH ?? "").split(path.delimiter)) {
    if (path.isAbsolute(dir)) {
      const candidate = path.join(dir, command);
      if (isExecutable(candidate)) {
        return candidate;
      }
    }
  }
  return undefined;
}
