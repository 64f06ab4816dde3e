/**
 * Where an approval's `path` is on disk. The server reports paths relative to the project
 * root: the nearest ancestor of the workspace folder with `.git` (else the folder itself).
 * Pure apart from the `exists` callback.
 */

import * as path from "path";

export function projectRoot(folder: string, exists: (p: string) => boolean): string {
  let dir = path.resolve(folder);
  for (;;) {
    if (exists(path.join(dir, ".git"))) {
      return dir;
    }
    const parent = path.dirname(dir);
    if (parent === dir) {
      return path.resolve(folder);
    }
    dir = parent;
  }
}

export function resolveApprovalPath(
  file: string,
  folder: string | undefined,
  exists: (p: string) => boolean,
): string | undefined {
  if (path.isAbsolute(file)) {
    return file;
  }
  if (!folder) {
    return undefined;
  }
  return path.join(projectRoot(folder, exists), file);
}
