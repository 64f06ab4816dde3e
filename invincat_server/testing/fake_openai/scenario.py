"""Scenario steps: validation, request matching, and the thread-safe script queue.

A scenario is an ordered list of steps. Each chat request consumes the first step that
still has uses left and whose optional `match` fits the request. Steps are validated
eagerly (when added) so a typo in a test script fails loudly at set-up time instead of
surfacing later as a confusing model answer.
"""

from __future__ import annotations

import copy
import json
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

Step = dict[str, Any]

STEP_KEYS = frozenset(
    {
        "match",
        "content",
        "tool_calls",
        "chunk_size",
        "delay",
        "chunk_delay",
        "first_chunk_delay",
        "fault",
        "times",
        "retry_after",
        "usage",
        "finish_reason",
        "message",
        "param",
        "cut_after_chunks",
        "comment",
        "body",
        "status",
        "content_type",
    }
)
MATCH_KEYS = frozenset(
    {
        "model",
        "last_user_contains",
        "any_message_contains",
        "system_contains",
        "has_tool_result",
        "has_tools",
        "stream",
    }
)
TOOL_CALL_KEYS = frozenset({"name", "arguments", "arguments_raw", "id"})
USAGE_KEYS = frozenset({"prompt_tokens", "completion_tokens", "total_tokens"})
HTTP_FAULT = re.compile(r"^http_(\d{3})$")
# `cut` breaks the connection mid-answer; `truncate` ends the answer cleanly but early (no
# finish_reason, no [DONE]), which no transport layer notices; `hang` never answers;
# `raw` sends the step's `body` as it is (an HTML page, JSON that is not OpenAI's, an SSE
# stream with a bad line): what a proxy or a wrong base URL answers.
NAMED_FAULTS = frozenset({"cut", "truncate", "hang", "raw"})
RAW_ONLY_KEYS = ("body", "status", "content_type")


class ScenarioError(ValueError):
    """A scenario step or file is malformed; the message names the offending part."""


def http_fault_status(fault: str | None) -> int | None:
    """Status code of an `http_NNN` fault, or None for other faults."""
    if not fault:
        return None
    found = HTTP_FAULT.match(fault)
    return int(found.group(1)) if found else None


def _is_number(value: object) -> bool:
    # bool is an int subclass; `"delay": true` is a typo, not one second.
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_count(value: object, minimum: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= minimum


def _validate_tool_call(call: object, where: str) -> dict[str, Any]:
    if not isinstance(call, dict):
        raise ScenarioError(f"{where}: a tool call must be an object, got {call!r}")
    unknown = set(call) - TOOL_CALL_KEYS
    if unknown:
        raise ScenarioError(f"{where}: unknown tool call keys {sorted(unknown)}")
    if not isinstance(call.get("name"), str) or not call["name"]:
        raise ScenarioError(f"{where}: a tool call needs a non-empty string `name`")
    if "arguments" in call and "arguments_raw" in call:
        raise ScenarioError(f"{where}: give either `arguments` or `arguments_raw`, not both")
    if "arguments_raw" in call and not isinstance(call["arguments_raw"], str):
        raise ScenarioError(f"{where}: `arguments_raw` must be a string")
    if "arguments" in call:
        try:
            json.dumps(call["arguments"])
        except (TypeError, ValueError) as exc:
            raise ScenarioError(f"{where}: `arguments` is not JSON-serializable: {exc}") from exc
    if "id" in call and (not isinstance(call["id"], str) or not call["id"]):
        raise ScenarioError(f"{where}: a tool call `id` must be a non-empty string")
    return dict(call)


def _validate_match(match: object, where: str) -> None:
    if not isinstance(match, dict):
        raise ScenarioError(f"{where}: `match` must be an object, got {match!r}")
    unknown = set(match) - MATCH_KEYS
    if unknown:
        raise ScenarioError(
            f"{where}: unknown match keys {sorted(unknown)} (known: {sorted(MATCH_KEYS)})"
        )
    for key in ("model", "last_user_contains", "any_message_contains", "system_contains"):
        if key in match and not isinstance(match[key], str):
            raise ScenarioError(f"{where}: match `{key}` must be a string")
    for key in ("has_tool_result", "has_tools", "stream"):
        if key in match and not isinstance(match[key], bool):
            raise ScenarioError(f"{where}: match `{key}` must be true or false")


def validate_step(step: object, index: int | None = None) -> Step:
    """Check one step and return a private deep copy of it.

    Copying means later mutation of the caller's dict cannot change what the server does.
    """
    where = f"step {index}" if index is not None else "step"
    if not isinstance(step, dict):
        raise ScenarioError(f"{where}: must be an object, got {step!r}")
    unknown = set(step) - STEP_KEYS
    if unknown:
        raise ScenarioError(f"{where}: unknown keys {sorted(unknown)} (known: {sorted(STEP_KEYS)})")
    step = copy.deepcopy(step)

    _validate_reply(step, where)
    if "match" in step:
        _validate_match(step["match"], where)
    _validate_numbers(step, where)
    for key in ("finish_reason", "message", "param", "comment"):
        if key in step and not isinstance(step[key], str):
            raise ScenarioError(f"{where}: `{key}` must be a string")
    return step


def _validate_reply(step: dict[str, Any], where: str) -> None:
    """What the step answers: a fault, content or tool calls (normalised in place)."""
    fault = step.get("fault")
    if fault is not None:
        status = http_fault_status(fault) if isinstance(fault, str) else None
        if fault not in NAMED_FAULTS and (status is None or not 400 <= status <= 599):
            raise ScenarioError(
                f"{where}: unknown fault {fault!r} (use http_500, http_429, http_<4xx|5xx>, "
                "cut, truncate, hang or raw)"
            )
    if fault == "raw":
        _validate_raw(step, where)
        return
    for key in RAW_ONLY_KEYS:
        if key in step:
            raise ScenarioError(f"{where}: `{key}` is only for `fault: raw`")
    if fault is None and "content" not in step and "tool_calls" not in step:
        raise ScenarioError(f"{where}: needs `content`, `tool_calls` or `fault`")
    if "content" in step and not isinstance(step["content"], str):
        raise ScenarioError(f"{where}: `content` must be a string")
    if "tool_calls" in step:
        calls = step["tool_calls"]
        if not isinstance(calls, list) or not calls:
            raise ScenarioError(f"{where}: `tool_calls` must be a non-empty list")
        step["tool_calls"] = [
            _validate_tool_call(call, f"{where} tool_calls[{i}]") for i, call in enumerate(calls)
        ]


def _validate_raw(step: dict[str, Any], where: str) -> None:
    """`fault: raw`: a `body` string sent as it is, with an HTTP `status` and a
    `content_type`."""
    if not isinstance(step.get("body"), str):
        raise ScenarioError(f"{where}: `fault: raw` needs a string `body` (may be empty)")
    status = step.get("status", 200)
    if not _is_count(status, 100) or status > 599:
        raise ScenarioError(f"{where}: `status` must be an HTTP status code (100-599)")
    if "content_type" in step and not isinstance(step["content_type"], str):
        raise ScenarioError(f"{where}: `content_type` must be a string")
    if "content" in step or "tool_calls" in step:
        raise ScenarioError(f"{where}: `fault: raw` sends `body`, not `content`/`tool_calls`")


def _validate_numbers(step: dict[str, Any], where: str) -> None:
    """Delays, counts and usage."""
    for key in ("delay", "chunk_delay", "first_chunk_delay", "retry_after"):
        if key in step and (not _is_number(step[key]) or step[key] < 0):
            raise ScenarioError(f"{where}: `{key}` must be a number >= 0")
    if "chunk_size" in step and not _is_count(step["chunk_size"], 1):
        raise ScenarioError(f"{where}: `chunk_size` must be an integer >= 1")
    if "times" in step and not _is_count(step["times"], 1):
        raise ScenarioError(f"{where}: `times` must be an integer >= 1")
    if "cut_after_chunks" in step and not _is_count(step["cut_after_chunks"], 0):
        raise ScenarioError(f"{where}: `cut_after_chunks` must be an integer >= 0")
    if "usage" in step:
        usage = step["usage"]
        if not isinstance(usage, dict) or set(usage) - USAGE_KEYS:
            raise ScenarioError(f"{where}: `usage` may only hold {sorted(USAGE_KEYS)}")
        if not all(_is_count(v, 0) for v in usage.values()):
            raise ScenarioError(f"{where}: `usage` values must be integers >= 0")


def validate_steps(steps: object) -> list[Step]:
    if not isinstance(steps, list):
        raise ScenarioError(f"steps must be a list, got {type(steps).__name__}")
    return [validate_step(step, i) for i, step in enumerate(steps)]


def load_script(path: str | Path) -> list[Step]:
    """Read a scenario file: JSON (`.json`) or YAML (`.yaml`/`.yml`), `{"steps": [...]}`.

    A bare top-level list of steps is accepted too, since that is what people write first.
    """
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    suffix = path.suffix.lower()
    data: Any
    if suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ScenarioError(f"{path}: cannot parse JSON: {exc}") from exc
    elif suffix in (".yaml", ".yml"):
        import yaml  # local import: only YAML scenarios pay for it

        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ScenarioError(f"{path}: cannot parse YAML: {exc}") from exc
    else:
        raise ScenarioError(f"{path}: unknown scenario extension {suffix!r} (.json/.yaml)")
    if isinstance(data, dict):
        if set(data) - {"steps", "comment"}:
            raise ScenarioError(f"{path}: top level may only hold `steps` (and `comment`)")
        data = data.get("steps", [])
    try:
        return validate_steps(data)
    except ScenarioError as exc:
        raise ScenarioError(f"{path}: {exc}") from exc


# --- matching --------------------------------------------------------------------------


def message_text(message: object) -> str:
    """Plain text of a chat message; list content (text parts) is joined."""
    if not isinstance(message, dict):
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif isinstance(part, str):
                parts.append(part)
        return "".join(parts)
    return ""


def _messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    messages = body.get("messages")
    if not isinstance(messages, list):
        return []
    return [m for m in messages if isinstance(m, dict)]


def step_matches(step: Step, body: dict[str, Any]) -> bool:
    """Does `step`'s optional `match` fit this request body? All given keys must hold."""
    match: dict[str, Any] = step.get("match") or {}
    messages = _messages(body)
    if "model" in match and body.get("model") != match["model"]:
        return False
    if "last_user_contains" in match:
        users = [m for m in messages if m.get("role") == "user"]
        if not users or match["last_user_contains"] not in message_text(users[-1]):
            return False
    if "any_message_contains" in match and not any(
        match["any_message_contains"] in message_text(m) for m in messages
    ):
        return False
    if "system_contains" in match and not any(
        match["system_contains"] in message_text(m)
        for m in messages
        if m.get("role") in ("system", "developer")
    ):
        return False
    if "has_tool_result" in match:
        last_is_tool = bool(messages) and messages[-1].get("role") == "tool"
        if last_is_tool != match["has_tool_result"]:
            return False
    if "has_tools" in match and bool(body.get("tools")) != match["has_tools"]:
        return False
    return not ("stream" in match and bool(body.get("stream")) != match["stream"])


# --- the queue -------------------------------------------------------------------------


@dataclass
class _Entry:
    step: Step
    remaining: int


class Script:
    """Ordered steps with use counts. All methods are thread-safe.

    A lock (not asyncio primitives) because tests add steps from their own thread while
    the server consumes them on its event-loop thread.
    """

    def __init__(self, steps: list[Step] | None = None) -> None:
        self._lock = threading.Lock()
        self._entries: list[_Entry] = []
        if steps:
            self.add(steps)

    def add(self, steps: list[Step]) -> None:
        # Validate everything first so a bad step never leaves the script half-extended.
        checked = validate_steps(steps)
        with self._lock:
            self._entries.extend(_Entry(s, s.get("times", 1)) for s in checked)

    def take(self, body: dict[str, Any]) -> Step | None:
        """Consume one use of the first fitting step; None when nothing fits."""
        with self._lock:
            for i, entry in enumerate(self._entries):
                if step_matches(entry.step, body):
                    entry.remaining -= 1
                    if entry.remaining <= 0:
                        del self._entries[i]
                    return copy.deepcopy(entry.step)
        return None

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def pending(self) -> list[Step]:
        """Unconsumed steps, each repeated as many times as it has uses left."""
        with self._lock:
            return [copy.deepcopy(e.step) for e in self._entries for _ in range(e.remaining)]

    def __len__(self) -> int:
        with self._lock:
            return sum(e.remaining for e in self._entries)
