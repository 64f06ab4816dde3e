/**
 * Multi-root windows (docs/protocol.md, "Workspace folders"): every workspace folder is its
 * own project on the server, and requests name theirs with a `folder` uri. The editor stays
 * thin — it only says which folder a chat or a memory view is about; the server routes.
 * Pure (no `vscode`): the chat, the memory tree and the tests share it.
 */

/** A workspace folder as the extension passes it around. */
export interface FolderRef {
  /** `file://` uri, as VS Code spells it (and sends it in `workspaceFolders`). */
  uri: string;
  /** The folder's name in the explorer. */
  name: string;
}

/**
 * The path of a `file://` uri, decoded and comparable: VS Code writes `file:///c%3A/x`, Python
 * `file:///C:/x`; both become `c:/x`. Not a file uri → undefined.
 */
export function uriPath(uri: string): string | undefined {
  const match = /^file:\/\/([^/]*)(\/.*)?$/i.exec(uri);
  if (!match) {
    return undefined;
  }
  let path: string;
  try {
    path = decodeURIComponent(match[2] ?? "/");
  } catch {
    return undefined;
  }
  if (match[1] && match[1].toLowerCase() !== "localhost") {
    path = `//${match[1]}${path}`; // a UNC share
  }
  path = path.replace(/\\/g, "/").replace(/^\/([A-Za-z]):/, (_, drive: string) => `${drive.toLowerCase()}:`);
  return path.length > 1 ? path.replace(/\/+$/, "") : path;
}

/** A local path (`/home/me/api`, `C:\work\api`) in the same comparable form as uriPath. */
export function comparablePath(path: string): string {
  const slashed = path.replace(/\\/g, "/").replace(/^([A-Za-z]):/, (_, drive: string) => `${drive.toLowerCase()}:`);
  return slashed.length > 1 ? slashed.replace(/\/+$/, "") : slashed;
}

function contains(outer: string, inner: string): boolean {
  return inner === outer || inner.startsWith(outer.endsWith("/") ? outer : `${outer}/`);
}

/** The innermost folder holding a uri (a file, a dir, a folder itself), as the server matches. */
export function folderOfUri(uri: string | undefined, folders: readonly FolderRef[]): FolderRef | undefined {
  const path = uri ? uriPath(uri) : undefined;
  if (path === undefined) {
    return undefined;
  }
  let best: { folder: FolderRef; length: number } | undefined;
  for (const folder of folders) {
    const root = uriPath(folder.uri);
    if (root !== undefined && contains(root, path) && (!best || root.length > best.length)) {
      best = { folder, length: root.length };
    }
  }
  return best?.folder;
}

/**
 * The folder of a thread from its `workspace` (threads/list: the project root the thread ran
 * in). The root is the folder itself, or above it (a folder inside a git repository has the
 * repository as its project root), or — rarely — below it.
 */
export function folderOfWorkspace(workspace: string | undefined, folders: readonly FolderRef[]): FolderRef | undefined {
  if (!workspace) {
    return undefined;
  }
  const root = comparablePath(workspace);
  const paths = folders.map((folder) => ({ folder, path: uriPath(folder.uri) }));
  return (
    paths.find((f) => f.path === root)?.folder ??
    paths.find((f) => f.path !== undefined && contains(root, f.path))?.folder ??
    folderOfUri(`file://${root.startsWith("/") ? "" : "/"}${encodeURI(root)}`, folders)
  );
}

export interface ChatRouting {
  folders: readonly FolderRef[];
  /** The folder of the thread being continued, when it is known. */
  threadFolder?: FolderRef;
  /** The active editor's document, when it is a workspace file. */
  editorUri?: string;
  /** Selections and files attached to the prompt. */
  chipUris?: readonly string[];
}

/**
 * The folder a chat goes to: a thread continues in its project; a new one goes to the active
 * editor's folder, else the folder of the first attachment, else the first folder. Undefined
 * when the window has no folder (the server then uses its own root, as before).
 */
export function chatFolder(routing: ChatRouting): FolderRef | undefined {
  const { folders } = routing;
  return (
    routing.threadFolder ??
    folderOfUri(routing.editorUri, folders) ??
    (routing.chipUris ?? []).map((uri) => folderOfUri(uri, folders)).find((folder) => folder !== undefined) ??
    folders[0]
  );
}

/**
 * Whether the active editor goes with a prompt as its context: always in a one-folder window;
 * in a multi-root one only when it is in the chat's folder (a thread of project A does not
 * get project B's file; the server would refuse it).
 */
export function editorFitsChat(editorUri: string | undefined, chat: FolderRef | undefined, folders: readonly FolderRef[]): boolean {
  if (!editorUri) {
    return false;
  }
  if (folders.length <= 1 || !chat) {
    return true;
  }
  return folderOfUri(editorUri, folders)?.uri === chat.uri;
}

/** The label naming the chat's project: only in a window with more than one folder. */
export function projectLabel(folder: FolderRef | undefined, folders: readonly FolderRef[]): string | undefined {
  return folders.length > 1 && folder ? folder.name : undefined;
}

/** `invincat/memory/didChange` params (docs/protocol.md). */
export interface MemoryChange {
  scope: string;
  folder?: string | null;
}

/** What a memory view reloads: the user store, and which folders' project stores. */
export interface RefreshTargets {
  user: boolean;
  folders: string[];
}

/**
 * Which nodes a `memory/didChange` refreshes in a multi-root tree: a user change the user
 * node only; a project change with `folder` that folder's node (and every folder sharing its
 * project store, `stores` by folder uri); a project change without a known folder (an older
 * server) every project node.
 */
export function memoryRefreshTargets(
  change: MemoryChange,
  folders: readonly FolderRef[],
  stores: ReadonlyMap<string, string | undefined> = new Map(),
): RefreshTargets {
  if (change.scope === "user") {
    return { user: true, folders: [] };
  }
  const all = folders.map((folder) => folder.uri);
  const target = typeof change.folder === "string" ? folderOfUri(change.folder, folders) : undefined;
  if (!target) {
    return { user: false, folders: all };
  }
  const store = stores.get(target.uri);
  return {
    user: false,
    folders: all.filter((uri) => uri === target.uri || (store !== undefined && stores.get(uri) === store)),
  };
}

/** Two refresh requests as one: "all" wins, else the union of what each reloads. */
export function mergeTargets(a: RefreshTargets | "all" | undefined, b: RefreshTargets | "all"): RefreshTargets | "all" {
  if (a === undefined) {
    return b;
  }
  if (a === "all" || b === "all") {
    return "all";
  }
  return { user: a.user || b.user, folders: [...new Set([...a.folders, ...b.folders])] };
}
