"""Asking a person (or nobody, with `--yes`) for approval decisions in the terminal.

Answers: y approve, s always (session), w always (workspace), n reject (then a reason),
x reject always (this session), e edit (then the arguments as JSON). A line starting with
`{` is taken as a full decision object (`{"type": "edit", "edited_args": {...}}`), which
scripts find easier to send. Decisions are built with the core's constructors
(runtime/policy/decisions.py), as the language server and ACP build theirs.
"""

from __future__ import annotations

import json
import shutil
import textwrap
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Literal, Protocol

from invincat_server.runtime.events import ApprovalRequested
from invincat_server.runtime.policy import decisions, deny_rules
from invincat_server.runtime.policy.decisions import Decision, DecisionError
from invincat_server.terminal.render import (
    HumanRenderer,
    JsonRenderer,
    describe_approval_for_prompt,
)
from invincat_server.terminal.stdin import PlainPrompter

if TYPE_CHECKING:
    from invincat_server.terminal.line_editor import LineEditor


def _no_always_note(request: ApprovalRequested) -> str | None:
    """The line saying why [s]/[w] are missing, when the runtime offered no rule."""
    if request.always_options or request.tool_name is None:
        return None
    reason = request.always_unavailable or "no rule may cover this call"
    return f"'always' is not offered: {reason}"


def _approve(edited: dict[str, Any] | None) -> Decision:
    """A yes: to the call as asked, or to the arguments the person edited."""
    return decisions.approve() if edited is None else decisions.edit(edited)


class NoAnswer(Exception):
    """Input ended before a decision: the approval stays pending for a later session."""


class Approver(Protocol):
    async def decide(self, request: ApprovalRequested) -> Decision: ...


class AutoApprover:
    """`--yes`: approve everything without asking; questions get no answer."""

    async def decide(self, request: ApprovalRequested) -> Decision:
        return decisions.headless(request)


class PromptApprover:
    def __init__(
        self,
        renderer: HumanRenderer | JsonRenderer,
        reader: PlainPrompter | LineEditor,
        revise: Callable[[ApprovalRequested, dict[str, Any]], ApprovalRequested] | None = None,
    ) -> None:
        self.renderer = renderer
        self.reader = reader
        # The request re-described for edited arguments (Session.edited_request): shown,
        # and asked about again, before an edited call runs.
        self.revise = revise

    def _say(self, text: str, newline: bool = True) -> None:
        stream = self.renderer.prompts
        stream.write(text + ("\n" if newline else ""))
        stream.flush()

    def _fit(self, line: str) -> str:
        """`line` wrapped at a terminal's width, later lines indented under its text: the
        line editor's prompt does not wrap (prompt_toolkit cuts it at the right edge), and
        an option's label holds the workspace path. Left whole for a pipe."""
        stream = self.renderer.prompts
        if not stream.isatty():
            return line
        width = shutil.get_terminal_size().columns - 1  # the last column would wrap early
        indent = " " * (line.find("] ") + 2 if line.lstrip().startswith("[") else 3)
        return textwrap.fill(
            line,
            width=max(width, len(indent) + 20),
            subsequent_indent=indent,
            break_on_hyphens=False,
            drop_whitespace=True,
        )

    async def _ask(self, prompt: str, menu_keys: Iterable[str] = ()) -> str:
        line = await self.reader.answer(prompt, menu_keys)
        if line is None:
            raise NoAnswer
        return line.strip()

    async def _json_decision(self, answer: str) -> Decision | None:
        try:
            data = json.loads(answer)
        except json.JSONDecodeError as exc:
            self._say(f"Not valid JSON ({exc.msg}); try again.")
            return None
        try:
            return Decision.parse(data)
        except DecisionError as exc:
            self._say(f"{exc}; try again.")
            return None

    async def _choose(self, menu: str, keys: Iterable[str] = ()) -> tuple[Decision | None, str]:
        """Ask with `menu`: a typed JSON decision object is returned as is, otherwise the
        answer text (asked again while the JSON is unusable). In a terminal one of `keys`
        answers with a single keystroke."""
        while True:
            answer = await self._ask(menu, keys)
            if not answer.startswith("{"):
                return None, answer
            decision = await self._json_decision(answer)
            if decision is not None:
                return decision, answer

    async def _reject(self, prompt: str) -> Decision:
        return decisions.reject(await self._ask(prompt))

    async def decide(self, request: ApprovalRequested) -> Decision:
        if request.kind == "plan":
            return await self._decide_plan(request)
        if request.kind == "question":
            return await self._decide_question(request)
        return await self._decide_tool(request)

    async def _decide_plan(self, request: ApprovalRequested) -> Decision:
        self._say("Proposed plan:")
        for index, todo in enumerate(request.todos or [], start=1):
            self._say(f"  {index}. {todo.get('content', '')}")
        while True:
            decision, answer = await self._choose(
                "  [y] approve and execute\n  [n] reject\n  [r] refine (say what to change)\n> ",
                "ynr",
            )
            if decision is not None:
                return decision
            key = answer[:1].lower()
            if key == "y":
                return decisions.approve()
            if key == "n":
                return await self._reject("Reason (optional): ")
            if key == "r":
                feedback = await self._ask("What should change? ")
                if feedback:
                    return decisions.refine(feedback)
                self._say("Feedback is needed to refine; asking again.")
                continue
            self._say(f"Unknown answer {answer!r}; choose y, n or r.")

    async def _decide_question(self, request: ApprovalRequested) -> Decision:
        answers = []
        for question in request.questions or []:
            self._say(f"? {question.get('question', '')}")
            options = question.get("options") or []
            for index, option in enumerate(options, start=1):
                self._say(f"  [{index}] {option}")
            answer = await self._ask("> ")
            if answer.startswith("{"):
                decision = await self._json_decision(answer)
                if decision is not None:
                    return decision
            if answer.isdigit() and 1 <= int(answer) <= len(options):
                answer = options[int(answer) - 1]
            answers.append(answer)
        return decisions.answer(answers)

    async def _edited_args(self, request: ApprovalRequested) -> dict[str, Any] | None:
        """The arguments the person typed (Enter keeps them); None to ask again."""
        raw = await self._ask(f"New arguments as JSON [{json.dumps(request.args)}]: ")
        try:
            args = json.loads(raw) if raw else request.args
        except json.JSONDecodeError as exc:
            self._say(f"Not valid JSON ({exc.msg}); nothing changed, asking again.")
            return None
        if not isinstance(args, dict):
            self._say("Arguments must be a JSON object; asking again.")
            return None
        return args

    def _tool_options(self, request: ApprovalRequested) -> dict[str, str]:
        """The answer keys of a tool approval and what each one does."""
        options = {"y": "approve", "n": "reject", "e": "edit arguments"}
        for option in request.always_options:
            key = "s" if option.scope == "session" else "w"
            options[key] = option.label
        deny = deny_rules.offer(request)
        if deny is not None:
            options["x"] = deny.label
        if isinstance(self.renderer, HumanRenderer) and self.renderer.diff_collapsed(request):
            options["d"] = "show the whole diff"
        return options

    async def _edit_and_ask_again(self, request: ApprovalRequested) -> Decision | None:
        """After `e`: the typed arguments, shown as the call they make and asked about
        again (y runs them); None to ask about `request` again."""
        args = await self._edited_args(request)
        if args is None:
            return None
        if self.revise is None:
            return decisions.edit(args)
        return await self._decide_tool(self.revise(request, args), edited=args)

    async def _decide_tool(
        self, request: ApprovalRequested, edited: dict[str, Any] | None = None
    ) -> Decision:
        """`edited`: the arguments a person typed at `e`, which `request` now describes;
        a yes then runs them."""
        if isinstance(self.renderer, HumanRenderer):
            self.renderer.approval(request)
        else:
            describe_approval_for_prompt(request, self.renderer.prompts)
        options = self._tool_options(request)
        lines = [f"  [{k}] {v}" for k, v in options.items()]
        no_always = _no_always_note(request)
        if no_always:
            lines.insert(0, f"  ({no_always}; approve it once or reject it)")
        menu = "\n".join(self._fit(line) for line in lines)
        while True:
            decision, answer = await self._choose(f"{menu}\n> ", list(options))
            if decision is not None:
                return decision
            key = answer[:1].lower()
            chosen = await self._tool_answer(request, key, options, no_always, edited)
            if isinstance(chosen, Decision):
                return chosen
            if chosen == "again":
                continue
            self._say(f"Unknown answer {answer!r}; choose one of {', '.join(options)}.")

    async def _tool_answer(
        self,
        request: ApprovalRequested,
        key: str,
        options: dict[str, str],
        no_always: str | None,
        edited: dict[str, Any] | None,
    ) -> Decision | Literal["again", "unknown"]:
        """What one answer key means: a decision, "again" (handled: ask again) or
        "unknown" (not one of `options`). `edited`: the arguments typed at `e`, which a
        yes then runs."""
        if key == "y":
            return _approve(edited)
        if key == "n":
            return await self._reject("Reason for the agent (optional): ")
        if key in ("s", "w") and key in options:
            return decisions.approve_always("session" if key == "s" else "workspace")
        if key == "x" and key in options:
            return decisions.reject_always()
        if key == "d" and key in options:
            assert isinstance(self.renderer, HumanRenderer)
            self.renderer.full_diff(request)
            return "again"
        if key in ("s", "w") and no_always:
            self._say(f"{no_always}; choose one of {', '.join(options)}.")
            return "again"
        if key == "e":
            decision = await self._edit_and_ask_again(request)
            return decision if decision is not None else "again"
        return "unknown"
