/**
 * HTML for the chat webview: transcript entries, approval and plan cards, the todo list.
 * Pure string functions (no DOM), so Node tests check exactly what the panel shows.
 * Everything from the model or the server is escaped; markdown is rendered with raw HTML
 * disabled, so an answer cannot inject markup or script into the panel.
 */

import hljs from "highlight.js/lib/common";
import MarkdownIt from "markdown-it";
import type Token from "markdown-it/lib/token.mjs";
import type { ApprovalRequested, ThreadInfo, TodoItem } from "../../common/protocol";
import { alwaysButtonLabel, alwaysRuleText, hasDiff } from "../../approvals/decisions";
import { contextUsageLabel, decisionLabel, decisionTone } from "../summaries";
import { fileReference, splitFileReferences, type FileReference } from "./workspacePaths";
import type { ApprovalEntry, ChatViewState, ChipView, Entry, ToolEntry } from "../viewState";

const markdown = new MarkdownIt({ html: false, linkify: true, breaks: false });
// Only real URLs (with a scheme, or www.) become web links: with fuzzy links on, linkify
// turned file names into sites (`app.py` → http://app.py, `README.md`, `main.rs`).
markdown.linkify.set({ fuzzyLink: false, fuzzyEmail: false, fuzzyIP: false });

/** Attributes of a link that asks the extension host to open a workspace file. */
function fileLinkAttrs(file: FileReference): [string, string][] {
  const attrs: [string, string][] = [
    ["href", "#"],
    ["class", "file-link"],
    ["data-action", "openWorkspaceFile"],
    ["data-path", file.path],
  ];
  if (file.line !== undefined) {
    attrs.push(["data-line", String(file.line)]);
  }
  return attrs;
}

// File names in prose become links that open the file (the host checks it is in the
// workspace). Text already inside a link is left alone.
markdown.core.ruler.after("linkify", "workspace_paths", (state) => {
  for (const block of state.tokens) {
    if (block.type !== "inline" || !block.children) {
      continue;
    }
    const out: Token[] = [];
    let inLink = 0;
    for (const token of block.children) {
      if (token.type === "link_open") {
        inLink++;
      } else if (token.type === "link_close") {
        inLink--;
      }
      if (token.type !== "text" || inLink > 0) {
        out.push(token);
        continue;
      }
      const pieces = splitFileReferences(token.content);
      if (pieces.length === 1 && !pieces[0].file) {
        out.push(token);
        continue;
      }
      for (const piece of pieces) {
        if (piece.file) {
          const open = new state.Token("link_open", "a", 1);
          open.attrs = fileLinkAttrs(piece.file);
          const text = new state.Token("text", "", 0);
          text.content = piece.text;
          out.push(open, text, new state.Token("link_close", "a", -1));
        } else {
          const text = new state.Token("text", "", 0);
          text.content = piece.text;
          out.push(text);
        }
      }
    }
    block.children = out;
  }
});

// A code span that is a path (`src/app.py:12`) opens the file too.
markdown.renderer.rules.code_inline = (tokens, idx) => {
  const content = tokens[idx].content;
  const code = `<code>${escapeHtml(content)}</code>`;
  const file = fileReference(content);
  if (!file) {
    return code;
  }
  const attrs = fileLinkAttrs(file)
    .map(([name, value]) => ` ${name}="${escapeAttr(value)}"`)
    .join("");
  return `<a${attrs}>${code}</a>`;
};

// Fenced code gets a header with its language and a copy button.
markdown.renderer.rules.fence = (tokens, idx) => {
  const token = tokens[idx];
  const lang = token.info.trim().split(/\s+/)[0] ?? "";
  const langClass = lang ? ` class="hljs language-${escapeAttr(lang)}"` : "";
  return (
    `<div class="code-block"><div class="code-header"><span class="code-lang">${escapeHtml(lang || "text")}</span>` +
    `<button class="code-copy" data-action="copyCode" title="Copy">Copy</button></div>` +
    `<pre><code${langClass}>${highlightCode(token.content, lang)}</code></pre></div>\n`
  );
};

/** Code as highlighted HTML (highlight.js escapes the text; its classes are coloured from
 * the VS Code theme in chat.css); an unknown or missing language is plain escaped text. */
export function highlightCode(code: string, lang: string): string {
  const language = lang ? hljs.getLanguage(lang) : undefined;
  if (!language) {
    return escapeHtml(code);
  }
  try {
    return hljs.highlight(code, { language: lang, ignoreIllegals: true }).value;
  } catch {
    return escapeHtml(code);
  }
}

export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

const escapeAttr = escapeHtml;

/** Markdown as HTML; a stream cut inside a code fence still renders as code. */
export function renderMarkdown(text: string): string {
  return markdown.render(text);
}

/** Lines of a tool's output shown before "Show all". */
export const OUTPUT_PREVIEW_LINES = 6;

const TOOL_ICONS: Record<ToolEntry["status"], string> = {
  running: "⋯",
  success: "✓",
  error: "✗",
  rejected: "⊘",
};

export function renderEntry(entry: Entry): string {
  switch (entry.kind) {
    case "user":
      return (
        `<div class="entry user"><div class="role">You${entry.mode === "plan" ? " · plan mode" : ""}` +
        `<button class="rewind" data-action="rewind" data-entry="${escapeAttr(entry.id)}" ` +
        `title="Undo this turn and the later ones: files, conversation or both (shows the diff first)">Rewind to here</button></div>` +
        `<div class="text">${escapeHtml(entry.text).replace(/\n/g, "<br>")}</div></div>`
      );
    case "assistant":
      return (
        `<div class="entry assistant${entry.streaming ? " streaming" : ""}"><div class="role">Invincat</div>` +
        `<div class="markdown">${renderMarkdown(entry.text)}</div></div>`
      );
    case "tool":
      return renderToolCard(entry);
    case "approval":
      return renderApproval(entry);
    case "notice":
      return `<div class="entry notice ${entry.level}">${escapeHtml(entry.text)}</div>`;
    default:
      return "";
  }
}

export function renderToolCard(entry: ToolEntry): string {
  const indent = entry.depth > 0 ? ` style="margin-left:${Math.min(entry.depth, 3) * 16}px"` : "";
  let detail = entry.detail ? `<div class="tool-detail">${escapeHtml(entry.detail)}</div>` : "";
  if (entry.output) {
    // A file or a command's output keeps its lines; long ones are collapsed to a few.
    const lines = entry.output.split("\n").length;
    const toggle = lines > OUTPUT_PREVIEW_LINES ? `<button class="output-toggle" data-action="toggleOutput">Show all ${lines} lines</button>` : "";
    detail = `<div class="tool-output${toggle ? " collapsed" : ""}"><pre>${escapeHtml(entry.output)}</pre>${toggle}</div>`;
  }
  return (
    `<div class="entry tool-card status-${entry.status}" data-call="${escapeAttr(entry.callId)}"${indent}>` +
    `<span class="tool-icon" title="${entry.status}">${TOOL_ICONS[entry.status]}</span>` +
    `<span class="tool-name">${escapeHtml(entry.name)}</span> ` +
    `<span class="tool-summary">${escapeHtml(entry.summary)}</span>${detail}</div>`
  );
}

/** A unified diff with one class per line kind. */
export function renderDiff(diff: string): string {
  const lines = diff.replace(/\n$/, "").split("\n");
  const html = lines.map((line) => {
    let cls = "ctx";
    if (line.startsWith("+++") || line.startsWith("---")) {
      cls = "file";
    } else if (line.startsWith("@@")) {
      cls = "hunk";
    } else if (line.startsWith("+")) {
      cls = "add";
    } else if (line.startsWith("-")) {
      cls = "del";
    }
    return `<span class="diff-${cls}">${escapeHtml(line)}</span>`;
  });
  return `<pre class="diff">${html.join("\n")}</pre>`;
}

export function renderTodoList(todos: TodoItem[]): string {
  const items = todos.map((todo) => {
    const status = todo.status ?? "pending";
    const icon = status === "completed" ? "✓" : status === "in_progress" ? "◐" : "○";
    return `<li class="todo todo-${escapeAttr(status)}"><span class="todo-icon">${icon}</span>${escapeHtml(todo.content)}</li>`;
  });
  return `<ol class="todo-list">${items.join("")}</ol>`;
}

function button(label: string, attrs: Record<string, string>, cls = "", disabled = false, tooltip = ""): string {
  const data = Object.entries(attrs)
    .map(([key, value]) => ` data-${key}="${escapeAttr(value)}"`)
    .join("");
  const title = tooltip ? ` title="${escapeAttr(tooltip)}" aria-label="${escapeAttr(`${label}: ${tooltip}`)}"` : "";
  return `<button class="${cls}"${data}${title}${disabled ? " disabled" : ""}>${escapeHtml(label)}</button>`;
}

function approvalTitle(request: ApprovalRequested, pending: boolean): string {
  if (request.kind === "plan") {
    return pending ? "Plan proposed" : "Plan";
  }
  if (request.kind === "question") {
    return "Question";
  }
  const what = request.description || request.tool_name || "tool call";
  return pending ? `Approval needed: ${what}` : what;
}

function approvalBody(request: ApprovalRequested): string {
  if (request.kind === "plan") {
    return renderTodoList(request.todos ?? []);
  }
  if (request.kind === "question") {
    return (request.questions ?? [])
      .map((q, index) => {
        const options = (q.options ?? [])
          .map((option) => button(option, { action: "pickOption", index: String(index), value: option }, "option"))
          .join("");
        return (
          `<div class="question"><div class="question-text">${escapeHtml(q.question)}</div>` +
          (options ? `<div class="options">${options}</div>` : "") +
          `<input class="answer" data-index="${index}" type="text" placeholder="Your answer"></div>`
        );
      })
      .join("");
  }
  const args = request.args ?? {};
  if (request.diff) {
    return renderDiff(request.diff);
  }
  if (request.tool_name === "execute" && typeof args.command === "string") {
    return `<pre class="command">$ ${escapeHtml(args.command)}</pre>`;
  }
  return `<pre class="args">${escapeHtml(JSON.stringify(args, null, 2))}</pre>`;
}

function approvalActions(entry: ApprovalEntry): string {
  const request = entry.request;
  const id = request.approval_id;
  const busy = entry.busy === true;
  if (request.kind === "plan") {
    return (
      `<div class="actions">${button("Approve", { action: "approve", approval: id }, "primary", busy)}` +
      `${button("Reject", { action: "reject", approval: id }, "secondary", busy)}</div>` +
      `<div class="refine-row"><textarea class="feedback" rows="2" placeholder="What should change in the plan?"></textarea>` +
      `${button("Refine", { action: "refine", approval: id }, "secondary", busy)}</div>`
    );
  }
  if (request.kind === "question") {
    return (
      `<div class="actions">${button("Answer", { action: "answer", approval: id }, "primary", busy)}` +
      `${button("Dismiss", { action: "reject", approval: id }, "secondary", busy)}</div>`
    );
  }
  // Two rows at most, so the title and the diff stay in view: the decisions, then the
  // rejection with its optional message. Each "always" rule is the button's tooltip.
  const always = (request.always_options ?? [])
    .map((option) =>
      button(alwaysButtonLabel(option.scope), { action: "approve_always", approval: id, scope: option.scope }, "secondary", busy, alwaysRuleText(option.label)),
    )
    .join("");
  // Offered when the server names the rule (`deny_option`); the label says what it covers.
  const deny = request.deny_option
    ? button("Reject always (this session)", { action: "reject_always", approval: id }, "secondary", busy, request.deny_option.label)
    : "";
  const diff = hasDiff(request) ? button("Show diff", { action: "showDiff", approval: id }, "secondary") : "";
  return (
    `<div class="actions">${button("Approve", { action: "approve", approval: id }, "primary", busy)}${always}${diff}</div>` +
    `<div class="reject-row"><input class="reject-message" type="text" placeholder="Optional message for the agent">` +
    `${button("Reject", { action: "reject", approval: id }, "danger", busy)}${deny}</div>`
  );
}

export function renderApproval(entry: ApprovalEntry): string {
  const request = entry.request;
  let outcome = "";
  if (entry.state !== "pending") {
    // The mark comes from the decision, not the card's state: a rejection is decided
    // ("resolved") but must never read as a green tick.
    const { tone, icon } = entry.state === "closed" ? { tone: "neutral", icon: "–" } : decisionTone(entry.decision ?? "");
    const label = entry.state === "closed" ? `Closed: ${entry.decision ?? ""}` : decisionLabel(entry.decision ?? "");
    outcome =
      `<div class="outcome outcome-${tone}"><span class="outcome-icon">${icon}</span> ${escapeHtml(label)}` +
      (entry.remembered ? ` — ${escapeHtml(entry.remembered)}` : "") +
      `</div>`;
  }
  const note = entry.note ? `<div class="note">${escapeHtml(entry.note)}</div>` : "";
  // One header line: the title, then the file (project-relative, opens it) or the tool.
  const toolName = request.kind === "tool" ? request.tool_name ?? "" : "";
  const where = request.path && request.kind === "tool"
    ? `<a class="card-path" href="#" data-action="openFile" data-path="${escapeAttr(request.path)}" title="${escapeAttr(`${toolName} · open ${request.path}`)}">${escapeHtml(request.path)}</a>`
    : toolName
      ? `<span class="card-path">${escapeHtml(toolName)}</span>`
      : "";
  return (
    `<div class="entry card approval kind-${request.kind} state-${entry.state}" data-approval="${escapeAttr(request.approval_id)}">` +
    `<div class="card-header"><div class="card-title">${escapeHtml(approvalTitle(request, entry.state === "pending"))}</div>${where}</div>` +
    `<div class="card-body">${approvalBody(request)}</div>` +
    (entry.state === "pending" ? approvalActions(entry) : outcome) +
    note +
    `</div>`
  );
}

export function renderThreadOptions(threads: ThreadInfo[], threadId: string | undefined): string {
  const options = [`<option value=""${threadId ? "" : " selected"}>New thread</option>`];
  const known = new Set<string>();
  for (const thread of threads) {
    known.add(thread.threadId);
    const selected = thread.threadId === threadId ? " selected" : "";
    const title = thread.title || thread.threadId;
    options.push(`<option value="${escapeAttr(thread.threadId)}"${selected}>${escapeHtml(title)}</option>`);
  }
  if (threadId && !known.has(threadId)) {
    options.push(`<option value="${escapeAttr(threadId)}" selected>${escapeHtml(threadId)}</option>`);
  }
  return options.join("");
}

/** The todo panel above the prompt: the plan's live statuses. */
export function renderTodosPanel(todos: TodoItem[]): string {
  if (todos.length === 0) {
    return "";
  }
  const done = todos.filter((t) => t.status === "completed").length;
  return `<div class="todos-title">Plan · ${done}/${todos.length} done</div>${renderTodoList(todos)}`;
}

export function renderStatusLine(state: ChatViewState): string {
  const parts: string[] = [];
  if (state.project) {
    // Multi-root: each folder is its own project; a thread stays in the one it started in.
    parts.push(`<span class="project" title="This chat is in the project of the workspace folder ${escapeAttr(state.project)}">${escapeHtml(state.project)}</span>`);
  }
  if (state.server.state !== "running") {
    parts.push(`<span class="server-state ${state.server.state}">Server ${escapeHtml(state.server.state)}${state.server.message ? `: ${escapeHtml(state.server.message)}` : ""}</span>`);
  }
  if (state.contextUsage) {
    parts.push(`<span class="context-usage" title="Context used by this thread">${escapeHtml(contextUsageLabel(state.contextUsage.tokens, state.contextUsage.limit))}</span>`);
  }
  if (state.memoryUpdating) {
    parts.push(`<span class="memory-updating">Memory updating…</span>`);
  }
  return parts.join("");
}

/** The context chips above the prompt: each removable with its ×. */
export function renderChips(chips: ChipView[]): string {
  return chips
    .map(
      (chip) =>
        `<span class="chip chip-${chip.kind}" data-chip="${escapeAttr(chip.id)}" title="${escapeAttr(chip.title)}">` +
        `<span class="chip-label">${escapeHtml(chip.label)}</span>` +
        `<button class="chip-remove" data-action="removeChip" data-chip="${escapeAttr(chip.id)}" title="Remove" aria-label="Remove ${escapeAttr(chip.label)}">×</button></span>`,
    )
    .join("");
}

/** The `@` completion list; `active` is the highlighted row. */
export function renderMentions(paths: string[], active: number): string {
  return paths
    .map(
      (path, index) =>
        `<div class="mention${index === active ? " active" : ""}" role="option" data-action="pickMention" data-path="${escapeAttr(path)}"${index === active ? ' aria-selected="true"' : ""}>${escapeHtml(path)}</div>`,
    )
    .join("");
}
