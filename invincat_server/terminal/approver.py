"""Asking a person (or nobody, with `--yes`) for approval decisions in the terminal.

Answers: y approve, s always (session), w always (workspace), n reject (then a reason),
e edit (then the arguments as JSON). A line starting with `{` is taken as a full decision
object (`{"type": "edit", "edited_args": {...}}`), which scripts find easier to send.
"""

from __future__ import annotations

import json
from typing import Any, Protocol

from invincat_server.runtime.events import ApprovalRequested
from invincat_server.terminal.render import (
    HumanRenderer,
    JsonRenderer,
    describe_approval_for_prompt,
)
from invincat_server.terminal.stdin import LineReader


class NoAnswer(Exception):
    """Input ended before a decision: the approval stays pending for a later session."""


class Approver(Protocol):
    async def decide(self, request: ApprovalRequested) -> dict[str, Any]: ...


class AutoApprover:
    """`--yes`: approve everything without asking."""

    async def decide(self, request: ApprovalRequested) -> dict[str, Any]:
        return {"type": "approve"}


class PromptApprover:
    def __init__(self, renderer: HumanRenderer | JsonRenderer, reader: LineReader) -> None:
        self.renderer = renderer
        self.reader = reader

    def _say(self, text: str, newline: bool = True) -> None:
        stream = self.renderer.prompts
        stream.write(text + ("\n" if newline else ""))
        stream.flush()

    async def _ask(self, prompt: str) -> str:
        self._say(prompt, newline=False)
        line = await self.reader.readline()
        if line is None:
            raise NoAnswer
        return line.strip()

    async def decide(self, request: ApprovalRequested) -> dict[str, Any]:
        if isinstance(self.renderer, HumanRenderer):
            self.renderer.approval(request)
        else:
            describe_approval_for_prompt(request, self.renderer.prompts)
        options = {"y": "approve", "n": "reject", "e": "edit arguments"}
        for option in request.always_options:
            key = "s" if option.scope == "session" else "w"
            options[key] = option.label
        menu = "\n".join(f"  [{k}] {v}" for k, v in options.items())
        while True:
            answer = await self._ask(f"{menu}\n> ")
            if answer.startswith("{"):
                try:
                    decision = json.loads(answer)
                except json.JSONDecodeError as exc:
                    self._say(f"Not valid JSON ({exc.msg}); try again.")
                    continue
                if isinstance(decision, dict):
                    return decision
                self._say("A decision must be a JSON object; try again.")
                continue
            key = answer[:1].lower()
            if key == "y":
                return {"type": "approve"}
            if key in ("s", "w") and key in options:
                scope = "session" if key == "s" else "workspace"
                return {"type": "approve_always", "scope": scope}
            if key == "n":
                reason = await self._ask("Reason for the agent (optional): ")
                return {"type": "reject", "message": reason or None}
            if key == "e":
                raw = await self._ask(f"New arguments as JSON [{json.dumps(request.args)}]: ")
                try:
                    args = json.loads(raw) if raw else request.args
                except json.JSONDecodeError as exc:
                    self._say(f"Not valid JSON ({exc.msg}); nothing changed, asking again.")
                    continue
                if not isinstance(args, dict):
                    self._say("Arguments must be a JSON object; asking again.")
                    continue
                return {"type": "edit", "edited_args": args}
            self._say(f"Unknown answer {answer!r}; choose one of {', '.join(options)}.")
