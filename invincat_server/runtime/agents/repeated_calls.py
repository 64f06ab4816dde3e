"""The repeated-call guard: a model stuck in a loop is told so, then stopped.

Small models often make the same tool call again and again — the same write, the same
test run — until the recursion limit ends the turn minutes later (bench/README.md). This
after-model hook counts, within the current turn (the messages since the last user
message), how often each call was made: same tool name, same arguments as canonical JSON.

- The `limit`-th identical call does not run and nobody is asked: it gets an error result
  saying how often it was already made, what it last returned, and to do something
  different or answer.
- A call that repeats `limit + 2` times or more ends the turn with a ModelOutputError
  (one `error` event naming the call, `turn_end` failed) instead of looping on.
- One exception: `write_todos` made a second time with the same list, every item
  completed, is the model saying it is done: it is answered and the turn ends completed.

Counting restarts whenever the model makes a call it has not made before in the turn:
edit, test, another edit, the same test again is work, not a loop. A loop makes nothing
new, so its counts only grow.

Copies of one call in one answer are that call once: the first counts and runs, each copy
after it is answered "the same call is earlier in this answer" without running or asking.
Qwen2.5-Coder-1.5B wrote one answer of 32 calls, three calls over and over, and was
stopped as if told five times (bench run 19); told nothing yet, it is not a loop.

It runs before approvals (listed after them: LangChain runs after-model hooks last to
first), on the structured calls of the answer, which include those written as text
(text_tool_call_middleware.py turns them into structured calls inside the model node).
Calls already answered by then (a text call that cannot run) are counted, never answered
twice.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain.agents.middleware import AgentMiddleware, AgentState, hook_config
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.runtime import Runtime

from invincat_server.runtime.errors import ModelOutputError
from invincat_server.runtime.tool_traits import READS_FILES, RUNS_COMMANDS, WRITES_FILES
from invincat_server.runtime.wording import plural

GUARD_KEY = "invincat_repeated_call"
"""In the artifact of the guard's own results: they are not a call's real result."""
RESULT_HEAD = 150
RESULT_TAIL = 250


def canonical_args(args: Any) -> str:
    """Arguments as canonical JSON: the same call written with its keys in another order
    or other spacing is the same call."""
    try:
        return json.dumps(
            args, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str
        )
    except (TypeError, ValueError, RecursionError):  # a cycle, keys of mixed types
        return repr(args)


def call_key(name: str, args: Any) -> str:
    """The identity of a call: its tool and its arguments."""
    return f"{name}\x00{canonical_args(args)}"


@dataclass(frozen=True)
class Repeat:
    """How often a call of the latest answer was made this turn, counting it."""

    call_id: str
    name: str
    args: Any
    count: int
    last_result: str | None
    copy_of: str | None = None
    """The id of the same call earlier in the same answer: this one is a copy of it."""
    last_failed: bool = False
    """It never succeeded this turn, only errors (what to do next is then not what follows
    a success: the file does not have that change)."""


def repeats(turn: Sequence[BaseMessage], last: AIMessage) -> list[Repeat]:
    """Each call of `last` with its count in `turn` (the turn's messages before `last`)
    since the turn last made a call it had not made before."""
    results = {m.tool_call_id: m for m in turn if isinstance(m, ToolMessage)}
    seen: set[str] = set()
    counts: dict[str, int] = {}
    last_result: dict[str, str] = {}
    succeeded: set[str] = set()

    def count(calls: Iterable[Any]) -> list[Repeat]:
        found = []
        in_answer: dict[str, Repeat] = {}
        for call in calls:
            key = call_key(call["name"], call["args"])
            first = in_answer.get(key)
            if first is not None:  # a copy in the same answer: that call, made once
                found.append(
                    Repeat(
                        str(call["id"]),
                        call["name"],
                        call["args"],
                        first.count,
                        first.last_result,
                        copy_of=first.call_id,
                        last_failed=first.last_failed,
                    )
                )
                continue
            if key not in seen:
                seen.add(key)
                counts.clear()  # something new: what came before is not a loop
            counts[key] = counts.get(key, 0) + 1
            repeat = Repeat(
                str(call["id"]),
                call["name"],
                call["args"],
                counts[key],
                last_result.get(key),
                last_failed=key in last_result and key not in succeeded,
            )
            in_answer[key] = repeat
            found.append(repeat)
            result = results.get(call["id"])
            if result is not None and not _from_guard(result):
                last_result[key] = result.text
                if result.status != "error":
                    succeeded.add(key)
        return found

    for message in turn:
        if isinstance(message, AIMessage):
            count(message.tool_calls)
    return count(last.tool_calls)


def _from_guard(message: ToolMessage) -> bool:
    artifact = message.artifact
    return isinstance(artifact, dict) and bool(artifact.get(GUARD_KEY))


def current_turn(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """The messages since the last user message (the turn so far, resumed or not)."""
    for index in range(len(messages) - 1, -1, -1):
        if isinstance(messages[index], HumanMessage):
            return list(messages[index + 1 :])
    return list(messages)


def short(text: str) -> str:
    """A result cut to its start and its end (where a test run says what failed)."""
    text = text.strip()
    if len(text) <= RESULT_HEAD + RESULT_TAIL:
        return text
    return f"{text[:RESULT_HEAD]} … {text[-RESULT_TAIL:]}"


def describe_call(name: str, args: Any) -> str:
    """The call as the turn's error names it: redacted before it is cut (the arguments
    may hold a secret the model wrote, and half a token escapes redaction)."""
    from invincat_server.runtime.memory.redaction import redact_and_cut

    return f"`{name}` {redact_and_cut(canonical_args(args), 200)}"


def advice(name: str, failed: bool = False) -> str:
    """What to do instead, fitting the call repeated and how it last ended: a small model
    told to "read the file" after reading it five times reads it a sixth, and one told its
    failed edit was already made answered that it was done (bench run 28)."""
    if failed and name in READS_FILES | WRITES_FILES:
        return (
            "It failed each time with the error above: change what that error names (the "
            "path, or the exact text to replace) before sending it again, or answer the user."
        )
    if name in READS_FILES:
        return (
            "You already have its result above: use it. Answer the user now, or change a "
            "file if that is what they asked."
        )
    if name in WRITES_FILES:
        return (
            "The file already has that change. Check it (run the test or read the file) "
            "or answer the user with what you changed."
        )
    if name in RUNS_COMMANDS:
        return (
            "Read the file or the error the command shows and change the code before "
            "running it again, or answer the user with what you found."
        )
    if name == "write_todos":
        return (
            "The list is recorded. Now do its first step with the other tools, or answer the user."
        )
    return "Do something different (change your approach) or answer the user with what you found."


def refusal(repeat: Repeat) -> ToolMessage:
    before = repeat.count - 1
    said = (
        f"Its last result was: {short(repeat.last_result)}"
        if repeat.last_result is not None
        else "It did not run then either."
    )
    return ToolMessage(
        content=(
            f"Not run: you already made this exact call {plural(before, 'time')} this turn "
            f"and making it again gives the same result. {said}\n"
            f"{advice(repeat.name, repeat.last_failed)}"
        ),
        tool_call_id=repeat.call_id,
        name=repeat.name,
        status="error",
        artifact={GUARD_KEY: repeat.count},
    )


def copy_answer(repeat: Repeat) -> ToolMessage:
    """The result of a copy of a call made earlier in the same answer."""
    return ToolMessage(
        content=(
            f"Not run: this answer already makes the same call (id {repeat.copy_of}); a call "
            "runs once. Its result is that call's."
        ),
        tool_call_id=repeat.call_id,
        name=repeat.name,
        status="error",
        artifact={GUARD_KEY: repeat.count},
    )


FINISHED_NOTE = "The list was already recorded with every item completed; the turn ends here."


def _finished_list_again(repeat: Repeat) -> bool:
    """`write_todos` made again with the same list, every item completed: the model says
    it is done and repeats itself instead of answering (Qwen2.5-Coder-1.5B fixed calc.py,
    then sent this call five times and the turn ended failed, bench run 9)."""
    todos = repeat.args.get("todos") if isinstance(repeat.args, dict) else None
    return (
        repeat.name == "write_todos"
        and repeat.count >= 2
        and isinstance(todos, list)
        and bool(todos)
        and all(isinstance(t, dict) and t.get("status") == "completed" for t in todos)
    )


def _end_finished(found: Sequence[Repeat]) -> dict[str, Any]:
    """Each call answered (none runs again) and the turn ended as completed."""
    answers = [
        ToolMessage(
            content=FINISHED_NOTE,
            tool_call_id=r.call_id,
            name=r.name,
            artifact={GUARD_KEY: r.count},
        )
        for r in found
    ]
    return {"messages": answers, "jump_to": "end"}


class RepeatedCallGuard(AgentMiddleware):
    """Answers the `limit`-th identical call of a turn with an error, and ends the turn
    at `limit + 2` (see the module docstring)."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    @hook_config(can_jump_to=["end"])
    async def aafter_model(self, state: AgentState, runtime: Runtime) -> dict[str, Any] | None:
        turn = current_turn(state["messages"])
        answered: set[str] = set()
        while turn and isinstance(tail := turn[-1], ToolMessage):  # answered already
            answered.add(tail.tool_call_id)
            turn.pop()
        last = turn.pop() if turn else None
        if not isinstance(last, AIMessage) or not last.tool_calls:
            return None
        made = repeats(turn, last)
        copies = [r for r in made if r.copy_of is not None]
        found = [r for r in made if r.copy_of is None]
        if found and all(_finished_list_again(r) for r in found):
            return _end_finished([r for r in made if r.call_id not in answered])
        for repeat in found:
            if repeat.count >= self.limit + 2:
                raise ModelOutputError(
                    f"Stopped the turn: the model made the same call "
                    f"{describe_call(repeat.name, repeat.args)} {repeat.count} times this "
                    "turn, still after being told it repeats itself. Say more precisely what "
                    "to do, or try a larger model (max_repeated_calls in config.toml, "
                    "INVINCAT_MAX_REPEATED_CALLS)."
                )
        refused = [copy_answer(r) for r in copies if r.call_id not in answered]
        refused += [
            refusal(r) for r in found if r.count >= self.limit and r.call_id not in answered
        ]
        # Appended after the answer's other results: the tool node runs only the calls
        # still unanswered, and approvals skip the answered ones.
        return {"messages": refused} if refused else None
