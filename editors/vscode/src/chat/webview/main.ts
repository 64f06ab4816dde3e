/**
 * The chat webview's script: renders host snapshots (only entries whose `rev` changed) and
 * posts user actions. All state lives in the extension host.
 */

import type { ChatViewState, DecisionAction, HostMessage, WebviewMessage } from "../viewState";
import { mentionAt, mentionFor } from "../context";
import { renderChips, renderEntry, renderMentions, renderStatusLine, renderThreadOptions, renderTodosPanel } from "./render";

interface VsCodeApi {
  postMessage(message: WebviewMessage): void;
  getState(): { draft?: string } | undefined;
  setState(state: { draft?: string }): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();

function byId<T extends HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (!element) {
    throw new Error(`#${id} is missing from the chat page`);
  }
  return element as T;
}

const transcript = byId<HTMLDivElement>("transcript");
const threadSelect = byId<HTMLSelectElement>("thread-select");
const statusLine = byId<HTMLDivElement>("status-line");
const todosPanel = byId<HTMLDivElement>("todos");
const prompt = byId<HTMLTextAreaElement>("prompt");
const sendButton = byId<HTMLButtonElement>("send");
const cancelButton = byId<HTMLButtonElement>("cancel");
const planToggle = byId<HTMLInputElement>("plan-mode");
const newThreadButton = byId<HTMLButtonElement>("new-thread");
const empty = byId<HTMLDivElement>("empty");
const chipsRow = byId<HTMLDivElement>("chips");
const mentions = byId<HTMLDivElement>("mentions");

const rendered = new Map<string, { rev: number; element: HTMLElement }>();
let current: ChatViewState | undefined;

function post(message: WebviewMessage): void {
  vscode.postMessage(message);
}

function elementFrom(html: string): HTMLElement {
  const template = document.createElement("template");
  template.innerHTML = html.trim();
  return (template.content.firstElementChild as HTMLElement | null) ?? document.createElement("div");
}

function nearBottom(): boolean {
  return transcript.scrollHeight - transcript.scrollTop - transcript.clientHeight < 60;
}

function render(state: ChatViewState): void {
  const stick = nearBottom();
  current = state;
  threadSelect.innerHTML = renderThreadOptions(state.threads, state.threadId);
  statusLine.innerHTML = renderStatusLine(state);
  todosPanel.innerHTML = renderTodosPanel(state.todos);
  todosPanel.hidden = state.todos.length === 0;
  planToggle.checked = state.planMode;
  cancelButton.hidden = !state.turnId;
  sendButton.disabled = state.busy;
  empty.hidden = state.entries.length > 0;
  chipsRow.innerHTML = renderChips(state.chips ?? []);

  const seen = new Set<string>();
  let previous: HTMLElement | null = null;
  let newApproval: HTMLElement | undefined;
  for (const entry of state.entries) {
    seen.add(entry.id);
    let slot = rendered.get(entry.id);
    if (!slot || slot.rev !== entry.rev) {
      const element = elementFrom(renderEntry(entry));
      element.dataset.entry = entry.id;
      if (!slot && entry.kind === "approval" && entry.state === "pending") {
        newApproval = element;
      }
      if (slot) {
        slot.element.replaceWith(element);
      }
      slot = { rev: entry.rev, element };
      rendered.set(entry.id, slot);
    }
    const expectedNext: ChildNode | null = previous ? previous.nextSibling : transcript.firstChild;
    if (expectedNext !== slot.element) {
      transcript.insertBefore(slot.element, expectedNext);
    }
    previous = slot.element;
  }
  for (const [id, slot] of rendered) {
    if (!seen.has(id)) {
      slot.element.remove();
      rendered.delete(id);
    }
  }
  if (newApproval && newApproval.offsetHeight > transcript.clientHeight) {
    // Taller than the view: show its title and diff, not only its buttons.
    transcript.scrollTop = newApproval.offsetTop - transcript.offsetTop;
  } else if (stick || newApproval) {
    transcript.scrollTop = transcript.scrollHeight;
  }
}

function send(): void {
  const text = prompt.value.trim();
  if (!text || current?.busy) {
    return;
  }
  post({ type: "send", prompt: text });
  prompt.value = "";
  vscode.setState({ draft: "" });
}

function cardOf(target: HTMLElement): HTMLElement | null {
  return target.closest<HTMLElement>(".card");
}

function decide(target: HTMLElement, decision: DecisionAction["decision"]): void {
  const approvalId = target.dataset.approval;
  const card = cardOf(target);
  if (!approvalId || !card) {
    return;
  }
  const action: DecisionAction = { approvalId, decision };
  if (decision === "approve_always") {
    action.scope = target.dataset.scope === "workspace" ? "workspace" : "session";
  } else if (decision === "reject" || decision === "reject_always") {
    action.message = card.querySelector<HTMLInputElement>(".reject-message")?.value ?? "";
  } else if (decision === "refine") {
    action.feedback = card.querySelector<HTMLTextAreaElement>(".feedback")?.value ?? "";
  } else if (decision === "answer") {
    action.answers = Array.from(card.querySelectorAll<HTMLInputElement>(".answer")).map((input) => input.value);
  }
  post({ type: "resolve", action });
}

document.addEventListener("click", (event) => {
  const target = (event.target as HTMLElement).closest<HTMLElement>("[data-action]");
  if (!target) {
    return;
  }
  const action = target.dataset.action;
  switch (action) {
    case "approve":
    case "approve_always":
    case "reject":
    case "reject_always":
    case "refine":
    case "answer":
      decide(target, action);
      break;
    case "rewind":
      if (target.dataset.entry) {
        post({ type: "rewind", entryId: target.dataset.entry });
      }
      break;
    case "showDiff":
      if (target.dataset.approval) {
        post({ type: "showDiff", approvalId: target.dataset.approval });
      }
      break;
    case "openFile":
      event.preventDefault();
      if (target.dataset.path) {
        post({ type: "openFile", path: target.dataset.path });
      }
      break;
    case "openWorkspaceFile":
      event.preventDefault();
      if (target.dataset.path) {
        const line = Number(target.dataset.line);
        post({ type: "openWorkspaceFile", path: target.dataset.path, ...(line > 0 ? { line } : {}) });
      }
      break;
    case "toggleOutput": {
      const output = target.closest(".tool-output");
      if (output) {
        const label = target.dataset.label ?? target.textContent ?? "";
        target.dataset.label = label;
        target.textContent = output.classList.toggle("collapsed") ? label : "Show less";
      }
      break;
    }
    case "removeChip":
      if (target.dataset.chip) {
        post({ type: "removeChip", id: target.dataset.chip });
      }
      break;
    case "pickMention":
      if (target.dataset.path) {
        pickMention(target.dataset.path);
      }
      break;
    case "pickOption": {
      const card = cardOf(target);
      const input = card?.querySelector<HTMLInputElement>(`.answer[data-index="${target.dataset.index ?? ""}"]`);
      if (input) {
        input.value = target.dataset.value ?? "";
      }
      break;
    }
    case "copyCode": {
      const code = target.closest(".code-block")?.querySelector("code")?.textContent ?? "";
      void navigator.clipboard?.writeText(code);
      break;
    }
    default:
      break;
  }
});

// ------------------------------------------------------------------ @ completion

let mentionSeq = 0;
let mentionPaths: string[] = [];
let mentionActive = 0;

function closeMentions(): void {
  mentionPaths = [];
  mentions.hidden = true;
  mentions.innerHTML = "";
}

function showMentions(paths: string[]): void {
  mentionPaths = paths;
  mentionActive = 0;
  mentions.innerHTML = renderMentions(paths, mentionActive);
  mentions.hidden = paths.length === 0;
}

/** Replace the `@query` before the caret by `@path ` (the server attaches that file). */
function pickMention(path: string): void {
  const caret = prompt.selectionStart ?? prompt.value.length;
  const at = mentionAt(prompt.value, caret);
  if (!at) {
    closeMentions();
    return;
  }
  const insert = `${mentionFor(path)} `;
  prompt.value = prompt.value.slice(0, at.start) + insert + prompt.value.slice(caret);
  const position = at.start + insert.length;
  prompt.setSelectionRange(position, position);
  vscode.setState({ draft: prompt.value });
  closeMentions();
  prompt.focus();
}

function updateMentions(): void {
  const at = mentionAt(prompt.value, prompt.selectionStart ?? prompt.value.length);
  if (!at) {
    closeMentions();
    return;
  }
  mentionSeq += 1;
  post({ type: "findFiles", seq: mentionSeq, query: at.query });
}

prompt.addEventListener("keydown", (event) => {
  if (!mentions.hidden && mentionPaths.length > 0) {
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      const step = event.key === "ArrowDown" ? 1 : -1;
      mentionActive = (mentionActive + step + mentionPaths.length) % mentionPaths.length;
      mentions.innerHTML = renderMentions(mentionPaths, mentionActive);
      return;
    }
    if ((event.key === "Enter" || event.key === "Tab") && !event.isComposing) {
      event.preventDefault();
      pickMention(mentionPaths[mentionActive]);
      return;
    }
    if (event.key === "Escape") {
      event.preventDefault();
      closeMentions();
      return;
    }
  }
  // Backspace at the start of the prompt removes the last chip.
  if (event.key === "Backspace" && prompt.selectionStart === 0 && prompt.selectionEnd === 0) {
    const chips = current?.chips ?? [];
    if (chips.length > 0) {
      event.preventDefault();
      post({ type: "removeChip", id: chips[chips.length - 1].id });
    }
    return;
  }
  // Enter sends, Shift+Enter is a newline; never while an IME composes.
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    send();
  }
});
prompt.addEventListener("input", () => {
  vscode.setState({ draft: prompt.value });
  updateMentions();
});
prompt.addEventListener("blur", () => setTimeout(closeMentions, 200));
sendButton.addEventListener("click", send);
cancelButton.addEventListener("click", () => post({ type: "cancel" }));
newThreadButton.addEventListener("click", () => post({ type: "newThread" }));
planToggle.addEventListener("change", () => post({ type: "setPlanMode", on: planToggle.checked }));
threadSelect.addEventListener("change", () => {
  if (threadSelect.value) {
    post({ type: "switchThread", threadId: threadSelect.value });
  } else {
    post({ type: "newThread" });
  }
});

window.addEventListener("message", (event: MessageEvent<HostMessage>) => {
  const message = event.data;
  if (message.type === "state") {
    render(message.state);
  } else if (message.type === "focusPrompt") {
    prompt.focus();
  } else if (message.type === "fileMatches") {
    // Only the answer to the latest query (typing fast sends several).
    if (message.seq === mentionSeq && mentionAt(prompt.value, prompt.selectionStart ?? prompt.value.length)) {
      showMentions(message.paths);
    }
  }
});

prompt.value = vscode.getState()?.draft ?? "";
post({ type: "ready" });
