"""Tool calls a model wrote as text instead of sending them as structured `tool_calls`.

Small open models served by llama.cpp, Ollama or vLLM often answer a tool call as text:
a JSON object in a ```json fence, Hermes/Qwen `<tool_call>{...}</tool_call>`, Mistral
`[TOOL_CALLS] [...]`, Llama 3 `<|python_tag|>{...}`, `<function=name>{...}</function>`.
The server's own parser missed it, so the answer arrives as plain content. This module
finds such calls in the text of the assistant's own message (never in tool results: the
caller passes only that text) and checks each against the tools that were offered.

Pure: no LangChain, no I/O. `find_text_tool_calls` returns what it found; the caller
decides what runs (agents/text_tool_call_middleware.py, memory_agent/runner.py), and
every call it makes structured goes through the same approvals as any other.

What counts, per candidate (one bad candidate costs that candidate only):
- a name that is not an offered tool: a call in tool-call markup (`<tool_call>`, ...) is
  reported with an error to feed back; plain JSON naming no offered tool is left as text
  (it is likely an example in prose);
- arguments that are not a JSON object (or a string holding one), or do not fit the
  offered tool's JSON schema: reported with an error to feed back, never run;
- a string written as Python's triple-quoted string (three double quotes each side) is
  read as the string Python would make of it, one newline just after the opening quotes
  left out, dedented as a docstring is, and a last line of blanks before the closing
  quotes left out: no valid JSON holds three double quotes in a row, so nothing valid
  changes;
- a call in a JSON fence or tool-call markup that names an offered tool but is not valid
  JSON (a trailing comma): reported with the decoder's error to feed back, never run —
  left as text, it would end the turn as the answer;
- text inside `<think>` blocks and code fences of other languages (```python, ```text: a
  file quoted back) is never parsed.
"""

from __future__ import annotations

import ast
import html
import json
import re
import textwrap
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["MAX_TEXT_CHARS", "TextCall", "TextToolCalls", "find_text_tool_calls"]

MAX_TEXT_CHARS = 1_000_000
"""Longer answers are not searched (treated as text): parsing stays bounded."""
_MAX_ATTEMPTS = 64
"""JSON decodes tried per answer: text full of `{"` cannot make the search quadratic."""
_MAX_CALLS = 32
"""Calls taken from one answer; more are ignored (and said so)."""

# Keys open models use for the tool's name and its arguments, in order of preference.
_NAME_KEYS = ("name", "tool_name", "tool", "action", "function")
_ARG_KEYS = ("arguments", "parameters", "args", "tool_input", "action_input", "input")
# Wrappers around one call or a list of them (llama.cpp's generic format, OpenAI's legacy
# `function_call`, a `{"type": "function", "function": {...}}` entry).
_WRAPPER_KEYS = ("tool_calls", "tool_call", "function_call", "function")

_THINK = re.compile(r"\s*<think>.*?(?:</think>|\Z)", re.DOTALL)
_FENCE = re.compile(r"```([^\n`]*)\n(.*?)(?:```|\Z)", re.DOTALL)
_FENCE_OPEN = re.compile(r"```([^\n`]*)\n")
_JSON_FENCES = ("", "json", "json5", "tool_call", "tool_calls", "tool", "function_call")
_QUOTING_FENCES = ("text", "txt", "plain", "plaintext", "markdown", "md", "xml", "html", "log")
_MARKUP_TAGS = ("tool_call", "function_call", "tools")
_TAG_OPEN = re.compile(r"<(" + "|".join(_MARKUP_TAGS) + r")>")
_FUNCTION_TAG = re.compile(
    r"<function(?:=([^>\s]+)|\s+name=\"([^\"]+)\")>(.*?)(?:</function>|\Z)", re.DOTALL
)
_PARAMETER_TAG = re.compile(r"<parameter=([^>\s]+)>\n?(.*?)\n?</parameter>", re.DOTALL)
_FUNCTION_ATTRS = re.compile(
    r"<function\s+name\s*=\s*[\"']([A-Za-z_][A-Za-z0-9_.-]{0,63})[\"']\s+arguments\s*=\s*([\"'])"
)
"""`<function name="write_todos" arguments='{"todos": [...]}'/>`: the arguments' JSON as an
attribute (Qwen2.5-Coder-1.5B, bench run 21), in either quotes or with `&quot;`."""
_ATTRIBUTE_LIST = r"((?:\s+[A-Za-z_][A-Za-z0-9_-]{0,63}\s*=\s*(?:\"[^\"]*\"|'[^']*'))+)\s*/?>"
"""One or more `key="value"` attributes to the end of a tag (the list is `_attributes`')."""
_FUNCTION_ATTR_LIST = re.compile(
    r"<function\s+name\s*=\s*[\"']([A-Za-z_][A-Za-z0-9_.-]{0,63})[\"']" + _ATTRIBUTE_LIST
)
"""`<function name="edit_file" path="calc.py" old_string="…" new_string="…"/>`: each
argument an attribute (Qwen2.5-Coder-1.5B, bench run 23), its value text typed by the
tool's schema as `<parameter=…>` values are."""
_ATTRIBUTE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]{0,63})\s*=\s*(?:\"([^\"]*)\"|'([^']*)')")
_MISTRAL = "[TOOL_CALLS]"
_MISTRAL_ARGS = re.compile(r"\s*([A-Za-z0-9_.-]+)(?:\[CALL_ID\][A-Za-z0-9]+)?\[ARGS\]")
_PYTHON_TAG = "<|python_tag|>"
_API_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_JSON_START = re.compile(r"[\[{]\s*[\"{]")
# The start of a call whose JSON does not decode: its tool's name is still plain.
_NAMED_CALL = re.compile(
    r"\s*\{\s*\"(?:" + "|".join(_NAME_KEYS) + r")\"\s*:\s*\"([A-Za-z0-9_.-]{1,64})\""
)


@dataclass(frozen=True)
class TextCall:
    """One call found in the text. `error` set: it must not run; the error is fed back."""

    name: str
    args: dict[str, Any]
    format: str
    error: str | None = None


@dataclass(frozen=True)
class TextToolCalls:
    calls: list[TextCall] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    """Why candidates were left as text (for the audit note), e.g. an unknown name."""

    @property
    def formats(self) -> list[str]:
        return sorted({c.format for c in self.calls})


@dataclass(frozen=True)
class _Candidate:
    value: Any
    format: str
    explicit: bool
    """In tool-call markup: an unknown name is a mistaken call, not an example."""
    text_values: bool = False
    """Every argument written as text (`<parameter=…>`): typed by the schema."""
    broken: str | None = None
    """A call that names its tool but is not valid JSON: the decoder's complaint."""


def find_text_tool_calls(
    text: str, tools: Mapping[str, Mapping[str, Any] | None], *, any_name_as: str | None = None
) -> TextToolCalls:
    """The calls written in `text` (the assistant's own content), checked against `tools`
    (offered name → its JSON schema for the arguments; None: no schema to check).

    `any_name_as`: a call of a name not offered is taken as a call of this tool, its
    arguments checked against that tool's schema: for a caller that offers one tool only,
    where a small model misnaming it (`write_memory` for `submit_memory_operations`)
    can only have meant that one."""
    if not isinstance(text, str) or not text.strip() or not tools:
        return TextToolCalls()
    if len(text) > MAX_TEXT_CHARS:
        return TextToolCalls(ignored=[f"the answer is over {MAX_TEXT_CHARS:,} characters"])
    # A reasoning model's deliberation (before its answer) is not its answer.
    text = _THINK.sub("", text, count=1) if _THINK.match(text) else text
    if '"""' in text:
        text = _TRIPLE_QUOTED.sub(_as_json_string, text)
    candidates = _markup_candidates(text)
    if not any(_call_shaped(c.value) or c.broken for c in candidates):
        # Markup that holds no call (Qwen2.5-Coder-1.5B echoed its prompt's tool
        # definitions, `<tools><function><name>read_file</name>…`, then wrote the call in a
        # JSON fence, bench run 20) does not hide a JSON call after it.
        candidates = list(_json_candidates(text)) or candidates
    if not any(_call_shaped(c.value) for c in candidates):
        candidates = _tool_tags(text, tools) or candidates
    calls: list[TextCall] = []
    ignored: list[str] = []
    for candidate in candidates:
        for raw in _flatten(candidate.value):
            if len(calls) >= _MAX_CALLS:
                ignored.append(f"more than {_MAX_CALLS} calls in one answer")
                return TextToolCalls(calls, ignored)
            call = _checked(raw, candidate, tools, ignored, any_name_as)
            if call is not None:
                calls.append(call)
    return TextToolCalls(calls, ignored)


# Python's triple-quoted string, as small models write a file's content in a JSON call
# ("content": """def add(a, b):…""", Qwen2.5-Coder-1.5B in most bench runs): told it is not
# JSON, they wrote it so again, or wrote `write_file {}` instead (bench runs 23, 26).
_TRIPLE_QUOTED = re.compile(r'"""(.*?)"""', re.DOTALL)


def _as_json_string(match: re.Match[str]) -> str:
    """The JSON string of Python's value of this literal; the literal itself where Python
    would not accept it (a lone backslash before the closing quotes)."""
    try:
        value = ast.literal_eval(match.group(0))
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return match.group(0)
    if not isinstance(value, str):
        return match.group(0)
    value = value[1:] if value.startswith("\n") else value
    # Indented to line up with the JSON around it, as a docstring is with its code: the
    # file's own lines start where the least indented one does (bench run 30 wrote a whole
    # calc.py eight spaces in), and a last line of blanks only closes the quotes.
    value = textwrap.dedent(value)
    head, newline, last = value.rpartition("\n")
    return json.dumps(head + newline if newline and not last.strip() else value)


def _markup_candidates(text: str) -> list[_Candidate]:
    """Calls in the markup open models are trained to emit, outside other code fences."""
    text = _without_foreign_fences(text)
    found: list[_Candidate] = []
    attempts = _Budget()
    consumed = 0
    for match in _TAG_OPEN.finditer(text):
        if match.start() < consumed:
            continue  # inside the call before it (a tag written in an argument)
        tag, body_start = match.group(1), match.end()
        # Decoded from the text itself, not a body cut at the first closing tag: an
        # argument may contain `</tool_call>` or braces.
        decoded = _decode_at(text, body_start, attempts)
        if decoded is not None:
            # One tag may hold several calls, one JSON object a line (Qwen2.5-Coder writes
            # `<tools>` with a call per line): each is taken, up to the first non-JSON.
            while decoded is not None:
                value, consumed = decoded
                found.append(_Candidate(value, tag, True))
                decoded = _decode_at(text, _after_separator(text, consumed), attempts)
            continue
        close = text.find(f"</{tag}>", body_start)
        body = text[body_start : close if close >= 0 else len(text)]
        consumed = body_start + len(body)
        if not body.strip():
            # `<tools></tools>`: a small model echoing its prompt's markup, not a call;
            # a candidate here would hide the fenced or bare JSON call after it.
            continue
        inner = _function_tags(body)
        found += inner or [_broken_call(body, tag, True, attempts) or _Candidate(body, tag, True)]
    if not found:
        found = _function_tags(text)
    if not found and _MISTRAL in text:
        found = _mistral(text.split(_MISTRAL, 1)[1], attempts)
    if not found and _PYTHON_TAG in text:
        rest = text.split(_PYTHON_TAG, 1)[1]
        found = [_Candidate(v, "python_tag", True) for v in _json_values(rest, attempts)]
    return found


def _after_separator(text: str, position: int) -> int:
    """Past the blanks and at most one `,` that may stand between two calls of a tag."""
    while position < len(text) and text[position].isspace():
        position += 1
    if position < len(text) and text[position] == ",":
        position += 1
    return position


def _call_shaped(value: Any) -> bool:
    """A value that names a tool, itself or in the arrays and wrappers `_flatten` opens."""
    return any(isinstance(item, dict) and _has_name(item) for item in _flatten(value))


_TOOL_TAG = re.compile(r"<([A-Za-z_][A-Za-z0-9_.-]{0,63})>")
_TOOL_ATTR_TAG = re.compile(r"<([A-Za-z_][A-Za-z0-9_.-]{0,63})" + _ATTRIBUTE_LIST)
"""`<task description="…" subagent_type="worker"/>`: a tag named after an offered tool,
each argument an attribute (Qwen2.5-Coder-1.5B handing its fix to a subagent, bench run
27)."""


def _tool_tags(text: str, tools: Mapping[str, Any]) -> list[_Candidate]:
    """`<grep>{"pattern": …}</grep>`: a tag named after an offered tool around its
    arguments, as Qwen2.5-Coder-1.5B wrote when it had seen `<tools>` in its prompt (bench
    run 7). Only a tag that is an offered tool's name and opens a JSON object counts."""
    text = _without_foreign_fences(text)
    found: list[_Candidate] = []
    attempts = _Budget()
    for match in _TOOL_TAG.finditer(text):
        name = match.group(1)
        if name not in tools:
            continue
        decoded = _decode_at(text, match.end(), attempts)
        if decoded is not None and isinstance(decoded[0], dict):
            found.append(_Candidate({"name": name, "arguments": decoded[0]}, "tool_tag", True))
    if found:
        return found
    for match in _TOOL_ATTR_TAG.finditer(text):
        if match.group(1) in tools:
            call = {"name": match.group(1), "arguments": _attributes(match.group(2))}
            found.append(_Candidate(call, "tool_tag_attributes", True, text_values=True))
    return found


def _attributes(text: str) -> dict[str, str]:
    """`key="value" other='value'` as a dict, HTML entities decoded."""
    return {
        key: html.unescape(double if double is not None else single)
        for key, double, single in (m.groups() for m in _ATTRIBUTE.finditer(text))
    }


def _decode_at(text: str, start: int, attempts: _Budget) -> tuple[Any, int] | None:
    """The JSON value starting at `start` (after blanks) and where it ends, or None."""
    position = start
    while position < len(text) and text[position].isspace():
        position += 1
    if position >= len(text) or text[position] not in "{[" or not attempts.take():
        return None
    try:
        return _DECODER.raw_decode(text, position)
    except (ValueError, RecursionError):
        return None


def _function_tags(text: str) -> list[_Candidate]:
    """`<function=name>{json}</function>` (Llama 3.1, Functionary), Qwen3-Coder's
    `<function=name><parameter=key>value</parameter></function>`, and the arguments as an
    attribute, `<function name="name" arguments='{json}'/>`."""
    found = _attribute_calls(text)
    if found:
        return found
    for match in _FUNCTION_TAG.finditer(text):
        name = match.group(1) or match.group(2)
        body = match.group(3).strip()
        params = _PARAMETER_TAG.findall(body)
        args: Any = dict(params) if params else (body or "{}")
        call = {"name": name, "arguments": args}
        found.append(_Candidate(call, "function_tag", True, text_values=bool(params)))
    return found


def _attribute_calls(text: str) -> list[_Candidate]:
    found: list[_Candidate] = []
    attempts = _Budget()
    for match in _FUNCTION_ATTRS.finditer(text):
        name, quote = match.group(1), match.group(2)
        decoded = _decode_at(text, match.end(), attempts)  # raw JSON, inner quotes and all
        if decoded is not None:
            args: Any = decoded[0]
        else:  # HTML-escaped in the attribute (`&quot;`), or not JSON: checked as ever
            end = text.find(quote, match.end())
            args = html.unescape(text[match.end() : end if end >= 0 else len(text)])
        found.append(_Candidate({"name": name, "arguments": args}, "function_attributes", True))
    if found:
        return found
    for match in _FUNCTION_ATTR_LIST.finditer(text):
        call = {"name": match.group(1), "arguments": _attributes(match.group(2))}
        found.append(_Candidate(call, "function_attributes", True, text_values=True))
    return found


def _typed(args: dict[str, Any], schema: Mapping[str, Any] | None) -> dict[str, Any]:
    """Qwen3-Coder writes every parameter as text: a value the schema does not let be a
    string is read as JSON when it is JSON (`3`, `[1, 2]`), as its parsers do."""
    properties = (schema or {}).get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    typed: dict[str, Any] = {}
    for key, value in args.items():
        if not isinstance(value, str) or _takes_string(properties.get(key)):
            typed[key] = value
            continue
        try:
            typed[key] = json.loads(value)
        except (ValueError, RecursionError):
            typed[key] = value
    return typed


def _takes_string(spec: Any, depth: int = 0) -> bool:
    """Whether a parameter's schema lets its value be a string: `type: "string"`, a type
    list holding it (`["string", "null"]`, as Pydantic writes an optional string), or an
    `anyOf`/`oneOf` branch that does. Such a value stays as written: `null` or `123` is
    then that text, not JSON."""
    if not isinstance(spec, Mapping) or depth > 8:  # depth: a schema nested on purpose
        return False
    kind = spec.get("type")
    if kind == "string" or (isinstance(kind, list) and "string" in kind):
        return True
    branches = [b for key in ("anyOf", "oneOf") for b in _as_list(spec.get(key))]
    return any(_takes_string(branch, depth + 1) for branch in branches)


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _mistral(rest: str, attempts: _Budget) -> list[_Candidate]:
    """`[TOOL_CALLS] [{...}]` (v3) or `[TOOL_CALLS]name[ARGS]{...}` (v11 and later)."""
    named = _MISTRAL_ARGS.match(rest)
    if named is None:
        value = _first_json(rest, attempts)
        return [] if value is None else [_Candidate(value, "mistral", True)]
    found: list[_Candidate] = []
    for part in rest.split(_MISTRAL):
        match = _MISTRAL_ARGS.match(part)
        if match is None:
            continue
        args = _first_json(part[match.end() :], attempts)
        found.append(_Candidate({"name": match.group(1), "arguments": args}, "mistral", True))
    return found


def _json_candidates(text: str) -> Iterator[_Candidate]:
    """JSON in ```json / ``` / ```tool_call fences first; else bare JSON in the prose.

    A call that is the whole answer (alone in its fence, or bare) is a call attempt, not
    an example: it counts as markup does, so a name that is not offered is fed back."""
    attempts = _Budget()
    fenced = False
    position = 0
    while (match := _FENCE_OPEN.search(text, position)) is not None:
        language = match.group(1).strip().lower()
        close = text.find("```", match.end())
        position = close + 3 if close >= 0 else len(text)
        if language not in _JSON_FENCES:
            continue
        explicit = language not in ("", "json", "json5")
        first = not text[: match.start()].strip()
        # Decoded from the text itself: an argument may hold a ``` of its own, and the
        # fence then ends after the value.
        decoded = _decode_at(text, match.end(), attempts)
        if decoded is None:
            body = text[match.end() : close if close >= 0 else len(text)]
            alone = first and not text[position:].strip()
            form = f"fenced {language or 'block'}"
            broken = _broken_call(body, form, explicit or alone, attempts)
            if broken is not None:
                fenced = True
                yield broken
            # A fence of no JSON (a quoted result, code in a bare ```) leaves the prose
            # to be searched: Qwen2.5-Coder-1.5B wrote its call bare, then such a fence.
            continue
        fenced = True
        value, end = decoded
        close = text.find("```", end)
        position = max(position, close + 3 if close >= 0 else len(text))
        alone = first and not text[end:].replace("```", "", 1).strip()
        yield _Candidate(value, f"fenced {language or 'block'}", explicit or alone)
    if not fenced:
        whole = _whole_answer(text.strip(), attempts)
        if whole is not None:
            yield whole
            return
        for value in _json_values(_without_foreign_fences(text), attempts):
            yield _Candidate(value, "json", False)


def _whole_answer(text: str, attempts: _Budget) -> _Candidate | None:
    """The answer when it is nothing but one JSON value (or a broken call), else None."""
    if not text.startswith(("{", "[")):
        return None
    decoded = _decode_at(text, 0, attempts)
    if decoded is None:
        return _broken_call(text, "json", True, attempts)
    value, end = decoded
    return _Candidate(value, "json", True) if end == len(text) else None


def _broken_call(body: str, form: str, explicit: bool, attempts: _Budget) -> _Candidate | None:
    """A call that names its tool (`{"name": "write_file", …`) but does not decode, with
    what the decoder said; None for anything else (prose, ordinary broken JSON). As for
    a call that decodes, only markup makes a name that is not offered a mistaken call."""
    match = _NAMED_CALL.match(body)
    if match is None or not attempts.take():
        return None
    try:
        json.loads(body)
    except json.JSONDecodeError as exc:
        reason = f"{exc.msg} at line {exc.lineno} column {exc.colno}"
    except (ValueError, RecursionError):
        reason = "it is nested too deeply"
    else:
        return None  # it decodes: not broken (the caller's search stopped early)
    call: dict[str, Any] = {"name": match.group(1), "arguments": {}}
    return _Candidate(call, form, explicit, broken=reason)


def _without_foreign_fences(text: str) -> str:
    """The text with fences of other languages blanked out (a file quoted back), but for
    a fence of a programming language that holds nothing but tool-call markup: no source
    file starts with `<tool_call>`, and Qwen2.5-Coder-1.5B put its `<tools>{call}</tools>`
    in a ```python fence (bench run 22). A text, Markdown or markup fence stays blank:
    such a file may well hold nothing but a call, quoted."""

    def blank(match: re.Match[str]) -> str:
        language = match.group(1).strip().lower()
        if language in _JSON_FENCES:
            return match.group(0)
        if language not in _QUOTING_FENCES and _TAG_OPEN.match(match.group(2).strip()):
            return match.group(0)
        return ""

    return _FENCE.sub(blank, text)


class _Budget:
    def __init__(self) -> None:
        self.left = _MAX_ATTEMPTS

    def take(self) -> bool:
        self.left -= 1
        return self.left >= 0


_DECODER = json.JSONDecoder()


def _json_values(text: str, attempts: _Budget) -> Iterator[Any]:
    """Every JSON object or array in `text` that looks like the start of a call, left to
    right, skipping past each one decoded (nested braces in strings are the decoder's;
    Llama 3's `;` between calls is just text between them)."""
    position = 0
    while True:
        match = _JSON_START.search(text, position)
        if match is None or not attempts.take():
            return
        try:
            value, end = _DECODER.raw_decode(text, match.start())
        except (ValueError, RecursionError):
            position = match.start() + 1
            continue
        yield value
        position = end


def _first_json(text: str, attempts: _Budget) -> Any:
    return next(_json_values(text, attempts), None)


def _flatten(value: Any, depth: int = 0) -> Iterator[Any]:
    """Single calls out of arrays and wrappers (`{"tool_calls": [...]}`, ...)."""
    if depth > 3:
        return
    if isinstance(value, list):
        for item in value:
            yield from _flatten(item, depth + 1)
        return
    if isinstance(value, dict) and not _has_name(value):
        for key in _WRAPPER_KEYS:
            if isinstance(value.get(key), dict | list):
                yield from _flatten(value[key], depth + 1)
                return
    yield value


def _has_name(value: dict[str, Any]) -> bool:
    return any(isinstance(value.get(key), str) for key in _NAME_KEYS)


def _checked(
    raw: Any,
    candidate: _Candidate,
    tools: Mapping[str, Mapping[str, Any] | None],
    ignored: list[str],
    any_name_as: str | None = None,
) -> TextCall | None:
    if not isinstance(raw, dict):
        if candidate.explicit:
            ignored.append(f"{candidate.format}: not a JSON object with a tool name")
        return None
    name = next((raw[k] for k in _NAME_KEYS if isinstance(raw.get(k), str)), None)
    arg_key = next((k for k in _ARG_KEYS if k in raw), None)
    if name is None or (arg_key is None and not candidate.explicit):
        return None  # not shaped like a call: ordinary JSON in the answer
    if name not in tools and any_name_as is not None and any_name_as in tools:
        name = any_name_as
    shown = _shown(name)
    if name not in tools:
        if not candidate.explicit:
            ignored.append(f"{candidate.format}: `{shown}` is not an offered tool")
            return None
        offered = ", ".join(sorted(tools))
        # The call goes back to the server in the history: a name the API refuses
        # (spaces, a NUL) would fail every later request, so it is replaced.
        kept = name if _API_NAME.fullmatch(name) else "unknown_tool"
        return TextCall(
            kept, {}, candidate.format, f"`{shown}` is not an available tool; use one of: {offered}"
        )
    if candidate.broken is not None:
        return TextCall(
            name,
            {},
            candidate.format,
            f"this {name} call is not valid JSON ({candidate.broken}), so it was not used: "
            "write it again as one JSON object, each string in double quotes with its "
            "newlines written \\n, no comma before a closing brace or bracket",
        )
    args, error = _arguments(raw.get(arg_key) if arg_key else {}, tools[name])
    if error is None and candidate.text_values:
        args = _typed(args, tools[name])
    if error is None:
        error = _schema_error(args, tools[name])
    if error is not None:
        error = f"the arguments of this {name} call were not used: {error}"
    return TextCall(name, args if error is None else {}, candidate.format, error)


def _arguments(raw: Any, schema: Mapping[str, Any] | None) -> tuple[dict[str, Any], str | None]:
    if isinstance(raw, str):
        try:
            raw = json.loads(raw) if raw.strip() else {}
        except (ValueError, RecursionError) as exc:
            return {}, f"they are not valid JSON ({exc})"
    if raw is None:
        raw = {}
    only = _only_array_parameter(schema)
    if only is not None and isinstance(raw, list):
        # `"arguments": [...]` for a tool whose one parameter is a list (write_todos'
        # todos, the memory agent's operations): small models leave out the one key.
        raw = {only: raw}
    elif only is not None and isinstance(raw, dict) and raw and only not in raw:
        # `"arguments": {"op": "create", …}`: the one item of that list, written alone.
        raw = {only: [raw]}
    if not isinstance(raw, dict):
        return {}, f"they must be a JSON object, not {type(raw).__name__}"
    return raw, None


def _only_array_parameter(schema: Mapping[str, Any] | None) -> str | None:
    """The name of the tool's one parameter when it is its only one and an array."""
    properties = (schema or {}).get("properties")
    if not isinstance(properties, Mapping) or len(properties) != 1:
        return None
    [(name, spec)] = properties.items()
    kind = spec.get("type") if isinstance(spec, Mapping) else None
    return name if kind == "array" or (isinstance(kind, list) and "array" in kind) else None


def _schema_error(args: dict[str, Any], schema: Mapping[str, Any] | None) -> str | None:
    """What is wrong with `args` under the offered tool's JSON schema, or None."""
    if not schema:
        return None
    import jsonschema  # only when a call was written as text: it costs an import

    try:
        validator_type = jsonschema.validators.validator_for(schema)
        validator_type.check_schema(schema)
        error = jsonschema.exceptions.best_match(validator_type(schema).iter_errors(args))
    except jsonschema.exceptions.SchemaError:
        return None  # a schema we cannot use is checked where the tool runs, as ever
    except RecursionError:
        return "they are nested too deeply"
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path)
    return _shown(f"{where + ': ' if where else ''}{error.message}", 300)


def _shown(text: str, limit: int = 80) -> str:
    """`text` safe to quote back: control characters escaped, cut to `limit`."""
    escaped = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text[: limit * 2])
    return escaped if len(escaped) <= limit else escaped[: limit - 1] + "…"
