"""What the memory model is told: instructions, the store, the new slice, evidence.

Everything here is redacted by the caller before it is built into messages, and bounded:
the conversation slice to 12,000 characters (newest kept), the store snapshot to 80 entries
and 6,000 characters.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

SLICE_CHARS = 12_000
SNAPSHOT_ENTRIES = 80
SNAPSHOT_CHARS = 6_000
TOOL_RESULT_CHARS = 300
CALL_ARGS_CHARS = 200
SUBMIT_TOOL = "submit_memory_operations"
STALE_HEADING = "## Entries whose cited evidence changed"

SYSTEM_PROMPT = f"""You maintain the long-term memory of Invincat, a coding assistant.
Memory is a small set of durable, reusable facts: user preferences and habits (scope "user")
and project conventions, architecture, build/test/format commands, module boundaries (scope
"project"). It is not chat history.

Call {SUBMIT_TOOL} exactly once with {{"operations": [...]}}. Operations:
- create: {{"op": "create", "scope", "section", "content", "confidence": "low|medium|high", "score": 0-100, "score_reason", "citations"}}
- update: {{"op": "update", "scope", "id", "content" and/or "confidence" and/or "citations", "score_reason"}}
- rescore: {{"op": "rescore", "scope", "id", "score", "score_reason"}} (optionally "invalid": "wrong|superseded|outdated|misleading")
- archive / restore / delete: {{"op": ..., "scope", "id", "reason"}}
- noop: {{"op": "noop", "reason"}}
Rules:
- One durable fact per entry, at most 500 characters, in a short section ("Testing", "Tooling",
  "User Preferences", ...). Score 70+ for facts that should shape every answer.
- Do not store temporary state, one-off errors, short-term plans, reasoning steps, or secrets.
- A fact that contradicts a stored entry replaces it: delete the old id and create the new fact.
- At most 20 operations, at most one operation per id. Do not recreate what is already stored.
- Citations (project scope only): when a project fact rests on file text you saw in the
  project evidence (read_file output is numbered), add "citations": [{{"path", "start_line",
  "end_line"}}] naming the few lines that show it. The runtime checks and hashes them; a
  wrong path or range drops the operation, so cite only lines you saw.
- When asked about entries whose cited evidence changed: confirm one that still holds
  (update it with citations of the current lines), correct one that changed (update
  content and citations), or archive one that no longer holds (with a reason). Never
  delete it for this.
- The project's instruction files (AGENTS.md, CLAUDE.md, .github/copilot-instructions.md,
  GEMINI.md) are read-only and shown to the assistant as they are on every call. Never copy
  what they say into memory, and never propose to change them: store only facts they do not
  already state.
- When unsure, submit a single noop. Being conservative is correct."""
INSTRUCTIONS_HEADING = "## Project instruction files (read-only, already shown to the assistant)"

NOTHING_TO_CITE = (
    "No project file was read in this conversation: there is nothing to cite, so give no citations."
)
"""Said when the run has no evidence: a small model cited AGENTS.md lines it never saw
(Qwen2.5-Coder-1.5B, bench run 7), and a citation of an unseen file drops the operation,
so the fact the user asked to remember was lost."""

EXPLICIT_NOTE = (
    "The user explicitly asked for something to be remembered in this conversation: store it "
    "with confidence high and a score of at least 80 (hot)."
)


def snapshot_text(entries: Sequence[dict[str, Any]]) -> str:
    ranked = sorted(entries, key=lambda e: (-int(e.get("score", 0)), str(e.get("id"))))
    lines: list[str] = []
    used = 0
    for entry in ranked[:SNAPSHOT_ENTRIES]:
        line = (
            f"{entry.get('id')} [{entry.get('scope')}/{entry.get('section')}] "
            f"score {entry.get('score')}: {entry.get('content')}"
        )
        if used + len(line) > SNAPSHOT_CHARS:
            lines.append(f"… ({len(ranked) - len(lines)} more entries not shown)")
            break
        lines.append(line)
        used += len(line) + 1
    return "\n".join(lines) or "(empty)"


def bounded_slice(text: str) -> str:
    if len(text) <= SLICE_CHARS:
        return text
    return "… (earlier part omitted)\n" + text[-SLICE_CHARS:]


def user_message(
    *,
    conversation: str,
    snapshot: str,
    evidence: Sequence[dict[str, str]],
    explicit: bool,
    last_rejection: str | None,
    stale: Sequence[dict[str, Any]] = (),
    instruction_files: Sequence[str] = (),
) -> str:
    parts = [f"## Stored memory\n{snapshot}"]
    if instruction_files:
        names = ", ".join(instruction_files[:20])
        parts.append(
            f"{INSTRUCTIONS_HEADING}\n{names}\nDo not store what these files say; they are "
            "not memory and memory is never written into them."
        )
    parts.append(f"## New conversation\n{bounded_slice(conversation)}")
    if evidence:
        parts.append("## Project evidence (tool results)\n" + json.dumps(list(evidence), indent=1))
    elif not stale:
        parts.append(NOTHING_TO_CITE)
    if stale:
        parts.append(
            f"{STALE_HEADING}\nThese entries may be stale: the text they cite changed or is "
            "gone. For each, confirm it (update with current citations), update it, or "
            "archive it.\n" + json.dumps(list(stale), indent=1, ensure_ascii=False)
        )
    if explicit:
        parts.append(EXPLICIT_NOTE)
    if last_rejection:
        parts.append(
            "## Your previous proposal was not applied\n"
            f"{last_rejection}\nPropose a corrected batch (or a noop)."
        )
    return "\n\n".join(parts)


def _op(name: str, required: list[str], **fields: dict[str, Any]) -> dict[str, Any]:
    properties = {"op": {"const": name}, **fields}
    return {
        "type": "object",
        "properties": properties,
        "required": ["op", *required],
        "additionalProperties": False,
    }


def operations_schema(*, allow_noop: bool = True) -> dict[str, Any]:
    """The operations as a JSON schema with every op's required fields (the table of
    docs/memory-governance.md §3), for a server that constrains its output to a schema.
    `allow_noop=False`: at least one operation, none a noop (runner.NOTHING_STORED)."""
    text = {"type": "string", "maxLength": 500}
    short = {"type": "string", "maxLength": 200}
    scope = {"type": "string", "enum": ["user", "project"]}
    ident = {"type": "string", "maxLength": 100}
    confidence = {"type": "string", "enum": ["low", "medium", "high"]}
    score = {"type": "integer", "minimum": 0, "maximum": 100}
    invalid = {"type": "string", "enum": ["wrong", "superseded", "outdated", "misleading"]}
    line = {"type": "integer", "minimum": 1}
    citations = {
        "type": "array",
        "maxItems": 5,
        "items": {
            "type": "object",
            "properties": {"path": short, "start_line": line, "end_line": line},
            "required": ["path", "start_line", "end_line"],
            "additionalProperties": False,
        },
    }
    section = {"type": "string", "maxLength": 80}
    ops = [
        _op(
            "create",
            ["scope", "section", "content", "confidence", "score", "score_reason"],
            scope=scope,
            section=section,
            content=text,
            confidence=confidence,
            score=score,
            score_reason=short,
            citations=citations,
        ),
        _op(
            "update",
            ["scope", "id", "content", "score_reason"],
            scope=scope,
            id=ident,
            content=text,
            confidence=confidence,
            score_reason=short,
            citations=citations,
        ),
        _op(
            "rescore",
            ["scope", "id", "score", "score_reason"],
            scope=scope,
            id=ident,
            score=score,
            score_reason=short,
            invalid=invalid,
        ),
        *(
            _op(name, ["scope", "id", "reason"], scope=scope, id=ident, reason=short)
            for name in ("archive", "restore", "delete")
        ),
        *([_op("noop", ["reason"], reason=short)] if allow_noop else []),
    ]
    listed = {"type": "array", "minItems": 0 if allow_noop else 1, "maxItems": 20}
    return {
        "type": "object",
        "properties": {"operations": {**listed, "items": {"anyOf": ops}}},
        "required": ["operations"],
        "additionalProperties": False,
    }


CONSTRAINED_NOTE = (
    f'No tool is offered this time: answer with the JSON object {{"operations": [...]}} '
    f"that you would have sent to {SUBMIT_TOOL}, and nothing else."
)


def constrained_output(*, allow_noop: bool = True) -> dict[str, Any]:
    """`response_format` asking for the operations as JSON that fits `operations_schema`:
    llama.cpp, Ollama and vLLM then decode only text that fits it. Asked for when an
    answer through the tool could not be used (runner.py): Qwen2.5-Coder-1.5B answered in
    prose, broken JSON or without `section` about half the time, and 4 of 4 times with a
    fitting batch under this format (a probe at llama-server)."""
    return {
        "type": "json_schema",
        "json_schema": {
            "name": "memory_operations",
            "schema": operations_schema(allow_noop=allow_noop),
        },
    }


def submit_tool_schema() -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": SUBMIT_TOOL,
            "description": "Submit the memory operations for this conversation (a noop if nothing durable).",
            "parameters": {
                "type": "object",
                "properties": {
                    "operations": {"type": "array", "items": {"type": "object"}, "maxItems": 20}
                },
                "required": ["operations"],
            },
        },
    }
