/**
 * The server's code actions ("Invincat: fix this", "Invincat: ask about this…") run the
 * server command `invincat.startChat` (docs/protocol.md). vscode-languageclient registers it
 * and sends `workspace/executeCommand`; this middleware adds what only the editor can do:
 * ask for the prompt of an "ask" action (arguments without `prompt`; Esc sends nothing),
 * and afterwards show the new thread in the chat, where its turn and approval cards appear.
 */

import type * as vscode from "vscode";
import { START_CHAT_COMMAND } from "../common/constants";
import type { ChatParams, TurnRef } from "../common/protocol";

type Next = (command: string, args: unknown[]) => unknown;

export interface ThreadShower {
  showThread(threadId: string): Promise<void>;
}

/** The params with the prompt to send, or undefined when the user cancelled. */
export async function withPrompt(
  params: Partial<ChatParams>,
  ask: AskPrompt,
): Promise<Partial<ChatParams> | undefined> {
  if (typeof params.prompt === "string" && params.prompt.trim()) {
    return params;
  }
  const prompt = await ask({
    title: "Ask Invincat",
    prompt: "What should Invincat do with this code? (the selection and its diagnostics go with it)",
    placeHolder: "e.g. why does this fail?",
    ignoreFocusOut: true,
  });
  return prompt && prompt.trim() ? { ...params, prompt: prompt.trim() } : undefined;
}

export type AskPrompt = (options: vscode.InputBoxOptions) => Thenable<string | undefined>;

export function startChatMiddleware(chat: ThreadShower, ask: AskPrompt): (command: string, args: unknown[], next: Next) => Promise<unknown> {
  return async (command, args, next) => {
    if (command !== START_CHAT_COMMAND) {
      return next(command, args);
    }
    const first = args[0];
    const params = first && typeof first === "object" ? (first as Partial<ChatParams>) : {};
    const filled = await withPrompt(params, ask);
    if (!filled) {
      return undefined;
    }
    const ref = (await next(command, [filled, ...args.slice(1)])) as TurnRef | undefined;
    if (ref && typeof ref.threadId === "string") {
      await chat.showThread(ref.threadId);
    }
    return ref;
  };
}
