// Multi-root: which folder a chat goes to, and which memory nodes a didChange reloads.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  chatFolder,
  editorFitsChat,
  folderOfUri,
  folderOfWorkspace,
  memoryRefreshTargets,
  mergeTargets,
  projectLabel,
  uriPath,
  type FolderRef,
} from "../../src/common/folders";

const api: FolderRef = { uri: "file:///work/api", name: "api" };
const web: FolderRef = { uri: "file:///work/web", name: "web" };
const nested: FolderRef = { uri: "file:///work/api/plugins/auth", name: "auth" };
const two = [api, web];

test("uriPath makes VS Code's and Python's spellings of one folder equal", () => {
  assert.equal(uriPath("file:///c%3A/Work/My%20Api/"), "c:/Work/My Api");
  assert.equal(uriPath("file:///C:/Work/My%20Api"), "c:/Work/My Api");
  assert.equal(uriPath("file:///work/api"), "/work/api");
  assert.equal(uriPath("file://server/share/x"), "//server/share/x");
  assert.equal(uriPath("untitled:Untitled-1"), undefined);
});

test("a uri belongs to the innermost folder holding it; a sibling with a common prefix does not match", () => {
  assert.equal(folderOfUri("file:///work/api/src/app.py", [api, nested, web]), api);
  assert.equal(folderOfUri("file:///work/api/plugins/auth/x.py", [api, nested, web]), nested);
  assert.equal(folderOfUri("file:///work/api", two), api);
  assert.equal(folderOfUri("file:///work/api-old/x.py", two), undefined);
  assert.equal(folderOfUri("file:///elsewhere/x.py", two), undefined);
  assert.equal(folderOfUri(undefined, two), undefined);
});

test("a thread's workspace (its project root) names its folder: the folder itself, or a folder inside the root", () => {
  assert.equal(folderOfWorkspace("/work/web", two), web);
  assert.equal(folderOfWorkspace("/work/web/", two), web);
  // A folder inside a git repository: the repository is the project root.
  assert.equal(folderOfWorkspace("/repo", [{ uri: "file:///repo/service", name: "service" }])?.name, "service");
  assert.equal(folderOfWorkspace("/other", two), undefined);
  assert.equal(folderOfWorkspace("", two), undefined);
});

test("a new chat goes to the active editor's folder, else the first attachment's, else the first folder", () => {
  assert.equal(chatFolder({ folders: two, editorUri: "file:///work/web/index.ts" }), web);
  assert.equal(chatFolder({ folders: two, chipUris: ["file:///elsewhere/a", "file:///work/web/b.ts"] }), web);
  assert.equal(chatFolder({ folders: two }), api);
  assert.equal(chatFolder({ folders: two, editorUri: "file:///elsewhere/x.py" }), api);
  assert.equal(chatFolder({ folders: [] }), undefined);
});

test("a thread continues in its project even when the active editor is in another folder", () => {
  assert.equal(chatFolder({ folders: two, threadFolder: api, editorUri: "file:///work/web/index.ts" }), api);
  // ...and the other folder's file does not go with the prompt (the server would refuse it).
  assert.equal(editorFitsChat("file:///work/web/index.ts", api, two), false);
  assert.equal(editorFitsChat("file:///work/api/app.py", api, two), true);
});

test("a one-folder window: the current file always goes with the prompt and no project label shows", () => {
  assert.equal(editorFitsChat("file:///work/api/app.py", api, [api]), true);
  assert.equal(projectLabel(api, [api]), undefined);
  assert.equal(projectLabel(web, two), "web");
  assert.equal(projectLabel(undefined, two), undefined);
});

test("memory/didChange with a folder reloads only that folder's project node", () => {
  assert.deepEqual(memoryRefreshTargets({ scope: "project", folder: "file:///work/web" }, two), { user: false, folders: [web.uri] });
  // The server may spell the uri its own way.
  assert.deepEqual(memoryRefreshTargets({ scope: "project", folder: "file:///work/web/" }, two), { user: false, folders: [web.uri] });
});

test("memory/didChange of the user store reloads the user node only", () => {
  assert.deepEqual(memoryRefreshTargets({ scope: "user" }, two), { user: true, folders: [] });
});

test("memory/didChange without a known folder (an older server) reloads every project node", () => {
  assert.deepEqual(memoryRefreshTargets({ scope: "project" }, two), { user: false, folders: [api.uri, web.uri] });
  assert.deepEqual(memoryRefreshTargets({ scope: "project", folder: "file:///gone" }, two), { user: false, folders: [api.uri, web.uri] });
});

test("folders sharing one project store reload together", () => {
  const service = { uri: "file:///repo/service", name: "service" };
  const client = { uri: "file:///repo/client", name: "client" };
  const stores = new Map([
    [service.uri, "/repo/.invincat/memory_project.json"],
    [client.uri, "/repo/.invincat/memory_project.json"],
    [api.uri, "/work/api/.invincat/memory_project.json"],
  ]);
  assert.deepEqual(memoryRefreshTargets({ scope: "project", folder: client.uri }, [service, client, api], stores), {
    user: false,
    folders: [service.uri, client.uri],
  });
});

test("refreshes that arrive while one runs merge: all wins, else the union", () => {
  assert.equal(mergeTargets(undefined, "all"), "all");
  assert.equal(mergeTargets({ user: true, folders: [] }, "all"), "all");
  assert.deepEqual(mergeTargets({ user: false, folders: ["a"] }, { user: true, folders: ["a", "b"] }), { user: true, folders: ["a", "b"] });
});
