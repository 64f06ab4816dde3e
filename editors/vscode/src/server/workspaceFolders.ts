/** The window's workspace folders in the plain shape of common/folders.ts. */

import * as vscode from "vscode";
import type { FolderRef } from "../common/folders";

/** The window's file:// workspace folders, in order (the server serves no other scheme). */
export function workspaceFolderRefs(): FolderRef[] {
  return (vscode.workspace.workspaceFolders ?? [])
    .filter((folder) => folder.uri.scheme === "file")
    .map((folder) => ({ uri: folder.uri.toString(), name: folder.name }));
}
