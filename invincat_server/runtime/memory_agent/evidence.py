"""Project-scope evidence: small excerpts of tool results that back a convention.

Only results of read_file, edit_file, write_file and execute count (what the agent actually
saw or did), at most 3 items of 600 characters and 1,200 in total, preferring build, test,
format, architecture and stack signals. Redacted before anything leaves the process.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from invincat_server.runtime.memory.citations import read_lines
from invincat_server.runtime.memory.redaction import cut_redacted

EVIDENCE_TOOLS = frozenset({"read_file", "edit_file", "write_file", "execute"})
FILE_TOOLS = frozenset({"read_file", "edit_file", "write_file"})
MAX_STALE_ITEMS, STALE_TEXT_CHARS = 5, 400
MAX_ITEMS, MAX_ITEM_CHARS, MAX_TOTAL_CHARS = 3, 600, 1_200
MAX_LABEL_CHARS = 120

_SIGNALS = re.compile(
    r"(?i)\b(pytest|unittest|jest|vitest|mocha|cargo test|go test|npm (?:run|test)|pnpm|yarn|"
    r"make|cmake|gradle|maven|tox|nox|ruff|black|isort|flake8|mypy|pyright|eslint|prettier|"
    r"rustfmt|gofmt|clippy|pyproject|setup\.cfg|package\.json|tsconfig|cargo\.toml|go\.mod|"
    r"dockerfile|docker-compose|\.github/workflows|ci|build|test|lint|format|architecture|"
    r"module|layer|convention)\b"
)


@dataclass(frozen=True)
class EvidenceItem:
    tool: str
    label: str
    text: str

    def to_dict(self) -> dict[str, str]:
        data = {"tool": self.tool, "source": self.label, "excerpt": self.text}
        if self.tool in FILE_TOOLS:
            data["path"] = self.label  # what a citation names (read_file lines are numbered)
        return data


def _score(text: str) -> int:
    return len(_SIGNALS.findall(text))


def collect_evidence(
    results: Sequence[tuple[str, dict[str, Any], str]], redact: Callable[[str], str]
) -> list[EvidenceItem]:
    """`results` are (tool name, args, output) of the new slice, oldest first."""
    candidates: list[tuple[int, int, EvidenceItem]] = []
    for order, (tool, args, output) in enumerate(results):
        if tool not in EVIDENCE_TOOLS or not output.strip():
            continue
        raw_label = str(args.get("path") or args.get("command") or "")
        score = _score(raw_label[:120]) * 2 + _score(output[:4_000])  # ranking only
        if score == 0:
            continue
        # Redacted whole, then cut: a cut first would leave half a secret unrecognised.
        label = cut_redacted(redact(raw_label), MAX_LABEL_CHARS)
        text = cut_redacted(redact(output.strip()), MAX_ITEM_CHARS)
        candidates.append((score, order, EvidenceItem(tool, label, text)))
    candidates.sort(key=lambda c: (-c[0], -c[1]))
    chosen: list[EvidenceItem] = []
    total = 0
    for _, _, item in candidates:
        if len(chosen) == MAX_ITEMS:
            break
        room = MAX_TOTAL_CHARS - total
        if room <= 0:
            break
        if len(item.text) > room:
            item = EvidenceItem(item.tool, item.label, cut_redacted(item.text, room))
        chosen.append(item)
        total += len(item.text)
    return chosen


def stale_evidence(
    stale: Sequence[tuple[Any, Any]], root: Path, redact: Callable[[str], str]
) -> list[dict[str, Any]]:
    """What the memory model is asked about: stale entries, what changed, the text now.

    `stale` are (Entry, EntryCheck) pairs; at most 5, each cited range's current text
    numbered like read_file and cut to 400 characters, redacted.
    """
    items: list[dict[str, Any]] = []
    for entry, verdict in stale[:MAX_STALE_ITEMS]:
        citations = []
        for check in verdict.checks:
            cited = check.citation
            item: dict[str, Any] = {"path": cited.path, "lines": [cited.start_line, cited.end_line]}
            if check.change:
                item["change"] = redact(check.change)
            lines = read_lines(root / cited.path) if check.state == "changed" else None
            if lines:
                window = range(cited.start_line - 1, min(cited.end_line, len(lines)))
                now = "\n".join(f"{i + 1:>6}\t{lines[i]}" for i in window)
                item["text_now"] = cut_redacted(redact(now), STALE_TEXT_CHARS)
            citations.append(item)
        items.append({"id": entry.id, "content": redact(entry.content), "citations": citations})
    return items
