/**
 * The chat webview's script: renders host snapshots (only entries whose `rev` changed) and
 * posts user actions. All state lives in the extension host.
 */

import type { ChatViewState, DecisionAction, HostMessage, WebviewMessage } from "../viewState";
import { renderEntry, renderStatusLine, renderThreadOptions, renderTodosPanel } from "./render";

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
  } else if (decision === "reject") {
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
    case "refine":
    case "answer":
      decide(target, action);
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

prompt.addEventListener("keydown", (event) => {
  // Enter sends, Shift+Enter is a newline; never while an IME composes.
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    send();
  }
});
prompt.addEventListener("input", () => vscode.setState({ draft: prompt.value }));
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
  }
});

prompt.value = vscode.getState()?.draft ?? "";
post({ type: "ready" });
