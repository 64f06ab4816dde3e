/**
 * Driving VS Code's workbench (code-server in Chromium) the way a person does: the command
 * palette, the explorer, editor tabs, the chat webview, the memory tree's context menu.
 * Selectors are VS Code's own DOM classes; each helper waits with a timeout.
 */

import type { FrameLocator, Locator, Page } from "playwright-core";
import { until } from "./harness";

export async function waitForWorkbench(page: Page): Promise<void> {
  await page.locator(".monaco-workbench").waitFor({ timeout: 90_000 });
  // The extension's status bar item says the server is up.
  await page.locator(".statusbar").getByText("Invincat: ready").waitFor({ timeout: 90_000 });
}

/** Run a command by its palette title, e.g. "Invincat: Open Chat". `keepSelection`: skip
 * the Escape that closes leftovers (in an editor it also clears the selection). */
export async function runCommand(page: Page, title: string, keepSelection = false): Promise<void> {
  if (!keepSelection) {
    await page.keyboard.press("Escape");
  }
  await page.keyboard.press("F1");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor();
  await input.fill(`>${title}`);
  const row = page.locator(".quick-input-list .monaco-list-row", { hasText: title }).first();
  await row.waitFor();
  await row.click();
}

/** The chat panel's document (inside the webview's two iframes). */
export function chatFrame(page: Page): FrameLocator {
  return page.frameLocator('iframe.webview[src*="extensionId=invincat.invincat"]').frameLocator("#active-frame");
}

export async function sendPrompt(chat: FrameLocator, text: string): Promise<void> {
  const prompt = chat.locator("#prompt");
  await prompt.click();
  await prompt.fill(text);
  await prompt.press("Enter");
}

/** Open a file from the explorer, pinned (not a preview tab). The explorer and the chat
 * share the side bar, so the chat is shown again afterwards (the file stays the active
 * editor; the chat's prompt has the keyboard focus). In a multi-root window `folder` names
 * the root the file is in; it is expanded first if the explorer shows it collapsed. */
export async function openFromExplorer(page: Page, name: string, folder?: string): Promise<void> {
  await runCommand(page, "View: Show Explorer");
  if (folder) {
    const root = page.locator('.explorer-folders-view .monaco-list-row[aria-level="1"]', { hasText: folder }).first();
    await root.waitFor({ timeout: 60_000 });
    if ((await root.getAttribute("aria-expanded")) === "false") {
      await root.click();
      await page.locator('.explorer-folders-view .monaco-list-row[aria-level="1"][aria-expanded="true"]', { hasText: folder }).waitFor({ timeout: 60_000 });
    }
  }
  const row = page.locator(".explorer-folders-view .monaco-list-row", { hasText: name }).first();
  await row.dblclick();
  await page.locator(".tabs-container .tab.active", { hasText: name }).waitFor();
  await runCommand(page, "Invincat: Open Chat");
  await page.locator('iframe.webview[src*="extensionId=invincat.invincat"]').waitFor();
}

export function tab(page: Page, title: string): Locator {
  return page.locator(".tabs-container .tab", { hasText: title }).first();
}

/** The text of the active editor's visible lines (Monaco renders lines as divs). */
export async function activeEditorText(page: Page): Promise<string> {
  const lines = page.locator(".editor-group-container.active .monaco-editor .view-lines .view-line");
  const texts = await lines.allInnerTexts();
  // Monaco uses non-breaking spaces for rendering.
  return texts.map((t) => t.replace(/\u00a0/g, " ")).join("\n");
}

export async function waitForEditorText(page: Page, needle: string, ms = 30_000): Promise<string> {
  return until(
    async () => {
      const text = await activeEditorText(page);
      return text.includes(needle) ? text : undefined;
    },
    ms,
    `the active editor to show ${JSON.stringify(needle)}`,
  );
}

/** Make the side bar (the Invincat container: chat above, memory below) wider by dragging
 * its sash, so the chat and the memory tree are readable in screenshots. */
export async function arrangeLayout(page: Page): Promise<void> {
  const sidebar = await page.locator(".part.sidebar").boundingBox();
  if (sidebar) {
    const y = sidebar.y + sidebar.height / 2;
    await page.mouse.move(sidebar.x + sidebar.width + 1, y);
    await page.mouse.down();
    await page.mouse.move(sidebar.x + sidebar.width + 260, y, { steps: 5 });
    await page.mouse.up();
  }
}

/** Put the cursor on a line of the active editor (1-based) and open the quick fixes. */
export async function quickFixAt(page: Page, line: number): Promise<Locator> {
  const row = page.locator(".editor-group-container.active .monaco-editor .view-lines .view-line").nth(line - 1);
  await row.click();
  await page.keyboard.press("Control+.");
  const menu = page.locator(".context-view > .action-widget");
  await menu.waitFor();
  return menu;
}

/** Right-click `row` and choose `item` from VS Code's context menu. */
export async function chooseFromContextMenu(page: Page, row: Locator, item: string, beforeClick?: () => Promise<void>): Promise<void> {
  await row.click({ button: "right" });
  const entry = page.locator(".context-view .monaco-menu .action-item", { hasText: item }).first();
  await entry.waitFor();
  // VS Code's menus ignore a click that lands right after they open (it guards against the
  // release of the right button choosing an item).
  await page.waitForTimeout(400);
  await beforeClick?.();
  await entry.hover();
  await entry.click();
  await entry.waitFor({ state: "detached" });
}

/**
 * Wait until the explorer shows every root folder of a multi-root window. VS Code in the
 * browser now and then opens a `.code-workspace` as an empty workspace ("No Folder Opened",
 * the extension gets no folders) on this loaded machine; the file is fine and a reload
 * reads it, so an empty explorer is reloaded (at most twice) instead of waited on.
 */
export async function waitForFolders(page: Page, names: string[], describe: () => string): Promise<void> {
  const roots = page.locator('.explorer-folders-view .monaco-list-row[aria-level="1"]');
  const empty = page.locator(".part.sidebar", { hasText: "You have not yet added a folder to the workspace" });
  for (let attempt = 0; ; attempt += 1) {
    await runCommand(page, "View: Show Explorer");
    const shown = await until(
      async () => ((await empty.count()) > 0 ? "empty" : (await roots.count()) >= names.length ? "roots" : undefined),
      60_000,
      `the explorer to show the folders ${names.join(", ")} (${describe()})`,
    );
    if (shown === "roots") {
      break;
    }
    // The empty text may be what the explorer shows while the workspace's folders are
    // still being resolved: give the roots time to come before reloading.
    const late = await until(
      async () => ((await roots.count()) >= names.length ? true : undefined),
      30_000,
      "the folders to replace the empty explorer",
    ).catch(() => false);
    if (late) {
      break;
    }
    if (attempt >= 4) {
      throw new Error(`the window opened no folder ${attempt + 1} times (${describe()})`);
    }
    console.log(`# the window opened no folder; reloading it (${describe()})`);
    await page.reload({ timeout: 60_000 });
    await waitForWorkbench(page);
  }
  for (const name of names) {
    await roots.filter({ hasText: name }).first().waitFor({ timeout: 60_000 });
  }
}
