"""Redaction of secrets and private paths in text that leaves the conversation
(offload files, memory evidence). Patterns follow the memory spec (section 7)."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

_SECRET_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.S),
    re.compile(r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{16,}"),
    re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}"),
    re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}"),
    re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),
    re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{16,}"),
)
_ASSIGNMENT = re.compile(
    r"(?i)\b((?:password|passwd|secret|token|api[_-]?key)\s*[=:]\s*)(\"[^\"]*\"|'[^']*'|\S+)"
)
REDACTED = "[REDACTED]"


def _home_and_temp() -> list[tuple[str, str]]:
    pairs = []
    home = os.environ.get("HOME")
    if home and len(home) > 1:
        pairs.append((str(Path(home)), "~"))
    for tmp in {tempfile.gettempdir(), "/tmp", "/var/tmp"}:
        pairs.append((tmp, "<tmp>"))
    # Longest first so /tmp/x under a home in /tmp maps sensibly.
    return sorted(pairs, key=lambda p: len(p[0]), reverse=True)


def redact_text(text: str) -> str:
    """Replace secrets with [REDACTED] and home/temp absolute paths with ~ / <tmp>."""
    for pattern in _SECRET_PATTERNS:
        text = pattern.sub(REDACTED, text)
    text = _ASSIGNMENT.sub(lambda m: m.group(1) + REDACTED, text)
    for prefix, replacement in _home_and_temp():
        text = re.sub(re.escape(prefix) + r"(?=/|\b)", replacement, text)
    return text
