/**
 * End to end in real VS Code: code-server 4.139 in headless Chromium with the built .vsix,
 * the real `invincat --stdio`, and the scripted fake OpenAI server. One session walks
 * through what a person does — chat, approve an edit with its diff, plan mode with a
 * refinement, the memory sidebar — and saves a screenshot after each step into the
 * artifacts folder printed at the start.
 */

import { after, before, test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import * as fs from "fs";
import * as path from "path";
import { REPO_ROOT, runToEnd, startSession, until, type Session } from "./harness";
import {
  arrangeLayout,
  chatFrame,
  chooseFromContextMenu,
  openFromExplorer,
  quickFixAt,
  runCommand,
  sendPrompt,
  tab,
  waitForEditorText,
  waitForFolders,
  waitForWorkbench,
} from "./workbench";

const MAIN = { model: "fake-model" };
const MEMORY = { model: "memory-model" };
const MEMORY_CONTENT = "Run ./scripts/test before pushing";

const PLAN_A = [{ content: "Create hello.txt with a greeting" }, { content: "Report back" }];
const PLAN_B = [{ content: "Create greeting.md instead" }, { content: "Report back" }];

function call(name: string, args: object): object {
  return { match: MAIN, tool_calls: [{ name, arguments: args }] };
}

function todos(statuses: string[]): object {
  return call("write_todos", { todos: PLAN_B.map((item, i) => ({ ...item, status: statuses[i] })) });
}

/** The memory model: the first extraction creates one project entry; later ones propose nothing. */
const memorySteps = [
  {
    match: MEMORY,
    tool_calls: [
      {
        name: "submit_memory_operations",
        arguments: {
          operations: [
            {
              op: "create",
              scope: "project",
              section: "Testing",
              content: MEMORY_CONTENT,
              confidence: "high",
              score: 85,
              score_reason: "the user asked for it",
            },
          ],
        },
      },
    ],
  },
  { match: MEMORY, times: 50, tool_calls: [{ name: "submit_memory_operations", arguments: { operations: [] } }] },
];

let session: Session;

/** A subtest that leaves a screenshot of what the editor showed when it failed. */
async function step(t: TestContext, name: string, body: (st: TestContext) => Promise<void>): Promise<void> {
  await t.test(name, async (st) => {
    try {
      await body(st);
    } catch (error) {
      await session.screenshot(`FAILED-${name.split(":")[0].replace(/\W+/g, "-")}`).catch(() => undefined);
      await session.diagnose().catch(() => undefined);
      throw error;
    }
  });
}

const APP_PY = "def greet(name):\n    return 'hi ' + name\n\nprint(greet('x'))\n";
const BAD_JSON = '{"name": "demo",}\n';

/** The server offers the lightbulb's "Invincat: fix this" (invincat.startChat) code action. */
const SERVER_HAS_CHAT_ACTIONS = fs
  .readFileSync(path.join(REPO_ROOT, "invincat_server", "lsp", "protocol.py"), "utf8")
  .includes('"invincat.startChat"');

const EARLIER_PROMPT = "What is in notes.txt?";
const EARLIER_ANSWER = "It says hello to the world.";

before(async () => {
  session = await startSession({
    files: { "notes.txt": "hello\nworld\n", "app.py": APP_PY, "bad.json": BAD_JSON },
    // A thread saved by the terminal before the editor starts (no memory run: the memory
    // steps are for the editor's turns).
    steps: [{ match: MAIN, content: EARLIER_ANSWER }],
    prepare: async (env, workspace, t, artifacts) => {
      const code = await runToEnd(
        "invincat-chat",
        t.invincat,
        ["chat", EARLIER_PROMPT, "--cwd", workspace],
        { ...env, INVINCAT_MEMORY_EXTRACTION: "off" },
        artifacts,
        90_000,
      );
      assert.equal(code, 0, "invincat chat (the earlier thread) failed; see invincat-chat.log");
    },
  });
  await session.fake.addSteps(memorySteps);
  console.log(`# screenshots and logs: ${session.artifacts}`);
  try {
    await waitForWorkbench(session.page);
  } catch (error) {
    await session.screenshot("FAILED-startup").catch(() => undefined);
    throw error;
  }
}, { timeout: 300_000 });

after(async () => {
  console.log(`# screenshots and logs: ${session?.artifacts}`);
  await session?.stop();
}, { timeout: 60_000 });

test("VS Code extension end to end", { timeout: 480_000 }, async (t) => {
  const page = session.page;
  const chat = chatFrame(page);

  await step(t, "threads: a thread saved in the terminal is listed and opens with its history", async () => {
    await runCommand(page, "Invincat: Open Chat");
    await chat.locator("#prompt").waitFor();
    await arrangeLayout(page);
    const select = chat.locator("#thread-select");
    await select.locator("option", { hasText: EARLIER_PROMPT }).waitFor({ state: "attached", timeout: 30_000 });
    await select.selectOption({ label: EARLIER_PROMPT });
    await chat.locator(".entry.user", { hasText: EARLIER_PROMPT }).waitFor({ timeout: 30_000 });
    await chat.locator(".entry.assistant", { hasText: EARLIER_ANSWER }).waitFor();
    await session.screenshot("thread-history");
    await chat.locator("#new-thread").click();
    await chat.locator("#empty").waitFor();
    assert.equal(await chat.locator(".entry").count(), 0);
  });

  await step(t, "chat: a prompt streams a markdown answer", async () => {
    await session.fake.addSteps([
      {
        match: MAIN,
        content: "Hello! Here is how to run the tests:\n\n```sh\n./scripts/test\n```\n\nRemember to run them before pushing.",
        chunk_size: 6,
        chunk_delay: 0.12,
      },
    ]);
    await sendPrompt(chat, "How do I run the tests? Remember that for later.");
    // Caught mid-stream: a partial answer with the streaming cursor.
    await chat.locator(".entry.assistant.streaming").waitFor({ timeout: 30_000 });
    await session.screenshot("chat-streaming");
    const answer = chat.locator(".entry.assistant:not(.streaming)").last();
    await answer.waitFor({ timeout: 30_000 });
    await chat.locator(".entry.assistant .code-block code.language-sh", { hasText: "./scripts/test" }).waitFor();
    assert.match(await answer.innerText(), /Remember to run them before pushing/);
    await chat.locator("#send:not([disabled])").waitFor();
    await chat.locator(".context-usage").waitFor();
    await session.screenshot("chat-answer");
  });

  await step(t, "chat: Cancel stops a running turn and the thread stays usable", async () => {
    await session.fake.addSteps([{ match: MAIN, content: "word ".repeat(200), chunk_size: 5, chunk_delay: 0.2 }]);
    await sendPrompt(chat, "Write a very long essay.");
    await chat.locator(".entry.assistant.streaming").waitFor({ timeout: 30_000 });
    await chat.locator("#cancel").click();
    await chat.locator(".entry.notice", { hasText: "Turn cancelled." }).waitFor({ timeout: 30_000 });
    await chat.locator("#cancel").waitFor({ state: "hidden" });
    await chat.locator("#send:not([disabled])").waitFor();
  });

  await step(t, "approval: an edit of an open file shows a card and a diff; approving changes the buffer", async () => {
    await openFromExplorer(page, "notes.txt");
    await session.fake.addSteps([
      call("edit_file", { path: "notes.txt", old_string: "world", new_string: "brave new world" }),
      { match: { ...MAIN, has_tool_result: true }, content: "I changed `world` to `brave new world` in notes.txt." },
    ]);
    await sendPrompt(chat, "Make the world in notes.txt brave and new.");
    const card = chat.locator(".card.approval.kind-tool.state-pending");
    await card.waitFor({ timeout: 30_000 });
    assert.match(await card.locator(".card-title").innerText(), /Edit file notes\.txt/);
    await card.locator(".diff-add", { hasText: "+brave new world" }).waitFor();
    assert.ok(await card.locator('[data-action="approve_always"][data-scope="session"]').count(), "approve always (session) is offered");
    assert.match((await card.locator('[data-action="approve_always"][data-scope="session"]').getAttribute("title")) ?? "", /for the rest of this session/);
    // Compact: the title and the diff are in view, not only the buttons.
    await card.locator(".card-title").scrollIntoViewIfNeeded();
    assert.ok(await card.locator(".card-title").isVisible() && await card.locator(".diff").isVisible());
    await session.screenshot("approval-card");

    await card.locator('[data-action="showDiff"]').click();
    const diffTab = tab(page, "current ↔ proposed");
    await diffTab.waitFor({ timeout: 20_000 });
    await page.locator(".monaco-diff-editor").first().waitFor();
    await page.locator(".monaco-diff-editor .view-line", { hasText: "brave new world" }).first().waitFor();
    await session.screenshot("diff-editor");

    // Closing the diff decides nothing: the card stays pending.
    await diffTab.hover();
    await diffTab.locator(".tab-actions .action-label").click();
    await diffTab.waitFor({ state: "detached" });
    await page.waitForTimeout(500);
    assert.equal(await chat.locator(".card.approval.kind-tool.state-pending").count(), 1, "closing the diff is not a rejection");
    assert.equal(fs.readFileSync(path.join(session.workspace, "notes.txt"), "utf8"), "hello\nworld\n");

    await card.locator('[data-action="approve"]').click();
    const decided = chat.locator(".card.approval.kind-tool.state-resolved");
    await decided.waitFor({ timeout: 30_000 });
    assert.match(await decided.locator(".outcome").innerText(), /Approved/);
    await chat.locator(".tool-card.status-success", { hasText: "edit_file" }).waitFor({ timeout: 30_000 });
    await chat.locator(".entry.assistant", { hasText: "brave new world" }).last().waitFor({ timeout: 30_000 });
    await tab(page, "notes.txt").click();
    const text = await waitForEditorText(page, "brave new world");
    assert.match(text, /hello\s*\nbrave new world/);
    // Through workspace/applyEdit: the buffer changed (dirty), the disk file not yet.
    await page.locator(".tabs-container .tab.active.dirty", { hasText: "notes.txt" }).waitFor({ timeout: 10_000 });
    assert.equal(fs.readFileSync(path.join(session.workspace, "notes.txt"), "utf8"), "hello\nworld\n");
    await session.screenshot("edit-approved-buffer");
  });

  await step(t, "approval: accepting from the editor's quick fix decides it and the card follows", async () => {
    await session.fake.addSteps([
      call("edit_file", { path: "notes.txt", old_string: "hello", new_string: "hello there" }),
      { match: { ...MAIN, has_tool_result: true }, content: "Greeting extended." },
    ]);
    await sendPrompt(chat, "Extend the greeting in notes.txt.");
    const card = chat.locator(".card.approval.kind-tool.state-pending");
    await card.waitFor({ timeout: 30_000 });
    // The server marks the lines the edit would change (diagnostic, severity Information).
    await page.locator(".editor-group-container.active .squiggly-info").first().waitFor({ timeout: 20_000 });
    const menu = await quickFixAt(page, 1);
    const accept = menu.locator(".monaco-list-row", { hasText: "Invincat: accept proposed edit" });
    await accept.waitFor();
    assert.equal(await menu.locator(".monaco-list-row", { hasText: "Invincat: reject proposed edit" }).count(), 1);
    await session.screenshot("quick-fix-menu");
    await accept.click();
    // Decided in the editor: the card updates by itself, the buffer changes.
    const decided = chat.locator(".card.approval.kind-tool.state-resolved", { hasText: "Edit file notes.txt" }).last();
    await chat.locator(".card.approval.kind-tool.state-pending").waitFor({ state: "detached", timeout: 30_000 });
    assert.match(await decided.locator(".outcome").innerText(), /Approved/);
    await waitForEditorText(page, "hello there");
    await chat.locator(".entry.assistant", { hasText: "Greeting extended." }).waitFor({ timeout: 30_000 });
    await session.screenshot("quick-fix-approved");
  });

  await step(t, "plan mode: proposed plan → refine → approve → todos complete", async () => {
    await session.fake.addSteps([
      call("write_todos", { todos: PLAN_A }),
      call("approve_plan", { todos: PLAN_A }),
      call("write_todos", { todos: PLAN_B }),
      call("approve_plan", { todos: PLAN_B }),
      todos(["in_progress", "pending"]),
      todos(["completed", "in_progress"]),
      todos(["completed", "completed"]),
      { match: MAIN, content: "Both steps are done." },
    ]);
    await chat.locator("#plan-mode").check();
    await sendPrompt(chat, "Add a greeting file.");
    const plan = chat.locator(".card.approval.kind-plan.state-pending");
    await plan.waitFor({ timeout: 30_000 });
    assert.match(await plan.innerText(), /Create hello\.txt with a greeting/);
    await session.screenshot("plan-proposed");

    await plan.locator("textarea.feedback").fill("Use a markdown file called greeting.md");
    await plan.locator('[data-action="refine"]').click();
    const refined = chat.locator(".card.approval.kind-plan.state-pending", { hasText: "Create greeting.md instead" });
    await refined.waitFor({ timeout: 30_000 });
    assert.match(await chat.locator(".card.approval.kind-plan.state-resolved").first().innerText(), /Changes requested/);
    await session.screenshot("plan-refined");

    await refined.locator('[data-action="approve"]').click();
    await chat.locator("#todos .todos-title", { hasText: "2/2 done" }).waitFor({ timeout: 30_000 });
    await chat.locator(".entry.assistant", { hasText: "Both steps are done." }).waitFor({ timeout: 30_000 });
    assert.equal(await chat.locator("#todos .todo-completed").count(), 2);
    await chat.locator("#send:not([disabled])").waitFor();
    await session.screenshot("plan-complete");

    const requests = await session.fake.requests();
    const feedback = requests.find((r) => JSON.stringify(r.body).includes("Use a markdown file called greeting.md"));
    assert.ok(feedback, "the planner received the refinement");
  });

  await step(t, "memory sidebar: the turn's entry shows; archiving moves it to Archived", async () => {
    await runCommand(page, "Invincat: Focus on Memory View");
    const view = page.locator(".pane", { has: page.locator(".pane-header", { hasText: "Memory" }) }).first();
    const entryRow = view.locator(".monaco-list-row", { hasText: `Testing: ${MEMORY_CONTENT}` });
    await entryRow.waitFor({ timeout: 60_000 });
    await view.locator(".monaco-list-row", { hasText: /^Hot/ }).waitFor();
    assert.match(await entryRow.innerText(), /85/);
    await session.screenshot("memory-entry");

    await runCommand(page, "Invincat: Show Archived Memories");
    await chooseFromContextMenu(page, entryRow, "Archive", async () => {
      await session.screenshot("memory-context-menu");
    });

    await view.locator(".monaco-list-row", { hasText: /^Archived/ }).waitFor({ timeout: 30_000 });
    await until(async () => (await view.locator(".monaco-list-row", { hasText: /^Hot/ }).count()) === 0 || undefined, 30_000, "the Hot group to empty");
    const rows = await view.locator(".monaco-list-row").allInnerTexts();
    const archivedAt = rows.findIndex((r) => r.startsWith("Archived"));
    const entryAt = rows.findIndex((r) => r.includes(MEMORY_CONTENT));
    assert.ok(archivedAt >= 0 && entryAt > archivedAt, `the entry is under Archived: ${JSON.stringify(rows)}`);
    await session.screenshot("memory-archived");

    const store = JSON.parse(fs.readFileSync(path.join(session.workspace, ".invincat", "memory_project.json"), "utf8"));
    assert.equal(store.items[0].status, "archived");

    // Its history: created by the memory agent, archived by the user.
    await chooseFromContextMenu(page, entryRow, "Show History");
    const history = await waitForEditorText(page, "archive");
    assert.match(history, /create\*\* by memory_agent/);
    assert.match(history, /archive\*\* by user/);
    await session.screenshot("memory-history");
  });

  await step(t, "Restart Server: a pending approval survives it and resumes the turn", async () => {
    await session.fake.addSteps([
      call("write_file", { path: "after.txt", content: "written after the restart\n" }),
      { match: { ...MAIN, has_tool_result: true }, content: "Wrote after.txt once you approved." },
    ]);
    await chat.locator("#plan-mode").uncheck();
    await sendPrompt(chat, "Create after.txt.");
    const pending = chat.locator(".card.approval.kind-tool.state-pending", { hasText: "after.txt" });
    await pending.waitFor({ timeout: 30_000 });

    await runCommand(page, "Invincat: Restart Server");
    await page.locator(".statusbar").getByText("Invincat: ready").waitFor({ timeout: 60_000 });
    // The old server's turn is gone; the approval is still there to decide.
    await chat.locator("#cancel").waitFor({ state: "hidden", timeout: 30_000 });
    await pending.waitFor();
    assert.equal(fs.existsSync(path.join(session.workspace, "after.txt")), false);
    await pending.locator('[data-action="approve"]').click();
    await chat.locator(".entry.assistant", { hasText: "Wrote after.txt once you approved." }).waitFor({ timeout: 60_000 });
    await chat.locator(".card.approval.kind-tool.state-resolved", { hasText: "after.txt" }).waitFor();
    assert.equal(fs.readFileSync(path.join(session.workspace, "after.txt"), "utf8"), "written after the restart\n");
    await session.screenshot("approved-after-restart");
  });

  await step(t, "context: select lines → Ask Invincat → the selection is a chip and its text reaches the model", async () => {
    await openFromExplorer(page, "app.py");
    // Select the function (lines 1-2) the way a person does, with the keyboard.
    const first = page.locator(".editor-group-container.active .monaco-editor .view-lines .view-line").first();
    await first.click();
    await page.keyboard.press("Control+Home");
    await page.keyboard.press("Shift+ArrowDown");
    await page.keyboard.press("Shift+ArrowDown");
    await runCommand(page, "Invincat: Ask Invincat", true);
    const chip = chat.locator(".chip.chip-selection", { hasText: "app.py:1-2" });
    await chip.waitFor({ timeout: 30_000 });
    await chat.locator(".chip.chip-currentFile", { hasText: "app.py" }).waitFor();
    await chat.locator("#prompt:focus").waitFor({ timeout: 10_000 });
    await session.screenshot("ask-invincat-chip");

    await session.fake.addSteps([{ match: MAIN, content: "It returns a greeting for the name." }]);
    // @ completes workspace files; Tab inserts the mention.
    await page.keyboard.type("@app");
    await chat.locator("#mentions .mention.active", { hasText: "app.py" }).waitFor({ timeout: 30_000 });
    await session.screenshot("at-completion");
    await page.keyboard.press("Tab");
    await chat.locator("#mentions").waitFor({ state: "hidden" });
    assert.equal(await chat.locator("#prompt").inputValue(), "@app.py ");
    await page.keyboard.type("What does this function do?");
    await page.keyboard.press("Enter");
    await chat.locator(".entry.assistant", { hasText: "It returns a greeting for the name." }).waitFor({ timeout: 60_000 });
    await chip.waitFor({ state: "detached" });
    const requests = await session.fake.requests();
    const asked = requests.filter((r) => JSON.stringify(r.body).includes("What does this function do?"));
    assert.ok(asked.length > 0, "the model received the prompt");
    assert.ok(
      asked.some((r) => JSON.stringify(r.body).includes("return 'hi ' + name")),
      "the selected text went with the prompt",
    );
    await session.screenshot("ask-invincat-answer");
  });

  await step(t, "lightbulb: invalid JSON → quick fix \"Invincat: fix this\" → accept → buffer fixed", async (st) => {
    if (!SERVER_HAS_CHAT_ACTIONS) {
      st.skip("needs server code actions (invincat.startChat, branch context)");
      return;
    }
    await openFromExplorer(page, "bad.json");
    // VS Code's own JSON language service reports the trailing comma.
    await page.locator(".editor-group-container.active .squiggly-error").first().waitFor({ timeout: 30_000 });
    await session.fake.addSteps([
      call("edit_file", { path: "bad.json", old_string: '"demo",}', new_string: '"demo"}' }),
      { match: { ...MAIN, has_tool_result: true }, content: "Removed the trailing comma." },
    ]);
    const menu = await quickFixAt(page, 1);
    const fix = menu.locator(".monaco-list-row", { hasText: "Invincat: fix this" });
    await fix.waitFor({ timeout: 20_000 });
    await session.screenshot("lightbulb-menu");
    await fix.click();
    // The chat switches to the started thread and shows its approval card.
    const card = chat.locator(".card.approval.kind-tool.state-pending", { hasText: "bad.json" });
    await card.waitFor({ timeout: 60_000 });
    await card.locator('[data-action="approve"]').click();
    await chat.locator(".entry.assistant", { hasText: "Removed the trailing comma." }).waitFor({ timeout: 60_000 });
    await tab(page, "bad.json").click();
    const text = await waitForEditorText(page, '"demo"}');
    assert.ok(!text.includes(",}"), text);
    const requests = await session.fake.requests();
    assert.ok(requests.some((r) => JSON.stringify(r.body).includes("Trailing comma")), "the diagnostic went with the request");
    await session.screenshot("lightbulb-fixed");
  });

});

/**
 * A multi-root window: a `.code-workspace` with two folders, each its own git repository
 * and so its own project on the server. Last, because it replaces the window (the one-folder
 * window above is closed).
 */
test("VS Code multi-root window end to end", { timeout: 360_000 }, async (t) => {
  const root = path.join(session.dir, "multi");
  const alpha = path.join(root, "alpha");
  const beta = path.join(root, "beta");
  for (const [folder, file, text] of [
    [alpha, "alpha_notes.txt", "alpha: the first project\n"],
    [beta, "beta_todo.txt", "beta: ship the release notes\n"],
  ]) {
    fs.mkdirSync(path.join(folder, ".git"), { recursive: true });
    fs.writeFileSync(path.join(folder, file), text);
  }
  const workspaceFile = path.join(root, "multi.code-workspace");
  fs.writeFileSync(workspaceFile, JSON.stringify({ folders: [{ path: "alpha" }, { path: "beta" }] }, null, 2));
  const SUMMARY = "Release notes: to be written.\n";

  await step(t, "multi-root: a chat about the second folder's file writes in the second folder and names it", async () => {
    const page = await session.openWindow(workspaceFile);
    await waitForWorkbench(page);
    // Both folders are in the explorer (the workspace file was read).
    await waitForFolders(page, ["alpha", "beta"], () => `the workspace file: ${fs.readFileSync(workspaceFile, "utf8").replace(/\s+/g, " ")}`);
    const chat = chatFrame(page);
    await runCommand(page, "Invincat: Open Chat");
    await chat.locator("#prompt").waitFor({ timeout: 60_000 });
    await arrangeLayout(page);

    await openFromExplorer(page, "beta_todo.txt", "beta");
    await chat.locator(".chip.chip-currentFile", { hasText: "beta_todo.txt" }).waitFor({ timeout: 60_000 });
    // The chat goes to the active editor's folder and says so.
    await chat.locator(".project", { hasText: "beta" }).waitFor({ timeout: 60_000 });
    await session.fake.addSteps([
      call("write_file", { path: "summary.md", content: SUMMARY }),
      { match: { ...MAIN, has_tool_result: true }, content: "Wrote summary.md next to beta_todo.txt." },
    ]);
    await sendPrompt(chat, "Summarise the todo in this file into summary.md.");
    const card = chat.locator(".card.approval.kind-tool.state-pending", { hasText: "summary.md" });
    await card.waitFor({ timeout: 60_000 });
    await session.screenshot("multiroot-approval");
    assert.equal(fs.existsSync(path.join(beta, "summary.md")), false, "nothing is written before the approval");
    await card.locator('[data-action="approve"]').click();
    await chat.locator(".entry.assistant", { hasText: "Wrote summary.md next to beta_todo.txt." }).waitFor({ timeout: 60_000 });
    await chat.locator(".card.approval.kind-tool.state-resolved", { hasText: "summary.md" }).waitFor({ timeout: 60_000 });
    const written = await until(
      async () => (fs.existsSync(path.join(beta, "summary.md")) ? fs.readFileSync(path.join(beta, "summary.md"), "utf8") : undefined),
      60_000,
      "summary.md in the second folder",
    );
    assert.equal(written, SUMMARY);
    assert.equal(fs.existsSync(path.join(alpha, "summary.md")), false, "the first folder got no file");
    assert.equal(fs.existsSync(path.join(session.workspace, "summary.md")), false, "the earlier window's folder got no file");
    // The model saw the second folder's file as the context.
    const requests = await session.fake.requests();
    const asked = requests.filter((r) => JSON.stringify(r.body).includes("Summarise the todo in this file"));
    assert.ok(asked.some((r) => JSON.stringify(r.body).includes("beta_todo.txt")), "the active file went with the prompt");
    assert.equal(await chat.locator(".project").innerText(), "beta");
    await session.screenshot("multiroot-written");
  });

  await step(t, "multi-root: the memory view shows each folder's project memory and user memory once", async () => {
    const page = session.page;
    await runCommand(page, "Invincat: Focus on Memory View");
    const view = page.locator(".pane", { has: page.locator(".pane-header", { hasText: "Memory" }) }).first();
    // The rows' labels (without the descriptions: "no memories", a count).
    const rows = view.locator(".monaco-list-row .label-name");
    await view.locator(".monaco-list-row", { hasText: "Project memory — alpha" }).waitFor({ timeout: 60_000 });
    await view.locator(".monaco-list-row", { hasText: "Project memory — beta" }).waitFor({ timeout: 60_000 });
    const isUser = (text: string): boolean => text === "User";
    const labels = await until(
      async () => {
        const texts = (await rows.allInnerTexts()).map((text) => text.trim());
        return texts.some(isUser) ? texts : undefined;
      },
      60_000,
      "the User memory node",
    ).catch(async (error: Error) => {
      throw new Error(`${error.message}; the rows: ${JSON.stringify(await rows.allInnerTexts())}`);
    });
    assert.equal(labels.filter(isUser).length, 1, `user memory once: ${JSON.stringify(labels)}`);
    assert.equal(labels.filter((text) => text.startsWith("Project memory — ")).length, 2, JSON.stringify(labels));
    assert.ok(!labels.includes("Project"), `no one-folder "Project" node: ${JSON.stringify(labels)}`);
    await session.screenshot("multiroot-memory");
  });
});
