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

/**
 * A file named in an answer (`src/app.py`, `./x.ts`, an absolute path), as an existing file
 * inside the workspace folder or its project root; undefined for anything else, so a link
 * in an answer can never open a file outside the project (`../../.ssh/id_rsa`, `/etc/x`).
 */
export function resolveAnswerPath(
  file: string,
  folder: string | undefined,
  exists: (p: string) => boolean,
): string | undefined {
  if (!folder || file.startsWith("~")) {
    return undefined;
  }
  const root = projectRoot(folder, exists);
  const inside = (candidate: string) => [folder, root].some((base) => {
    const rel = path.relative(path.resolve(base), candidate);
    return rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel);
  });
  const candidates = path.isAbsolute(file) ? [path.resolve(file)] : [path.resolve(folder, file), path.resolve(root, file)];
  return candidates.find((candidate) => inside(candidate) && exists(candidate));
}
