"""Redaction and admission of secrets and private paths (spec section 7).

Two layers:
- `redact()` replaces what it recognises: known token formats, `password=`-style values,
  private key blocks, credentials in URLs, and absolute paths under the home or a temp
  dir (`~/...`, `<tmp>/...`).
- `residual_secrets()` flags what still *looks* like a secret afterwards (a long random
  token of no known format, a key-block marker): the governance drops a create or update
  whose text still trips it, and `redact_deep()` masks such tokens as well, because the
  journal records proposals as proposed and must never hold a secret either.
"""

from __future__ import annotations

import math
import os
import re
import tempfile
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

PLACEHOLDER = "[REDACTED:{kind}]"

# (kind, pattern). Patterns with a group 1 keep that prefix and redact the rest.
_TOKEN_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "private_key",
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?:.*?-----END [A-Z0-9 ]*PRIVATE KEY-----|.*)",
            re.S,
        ),
    ),
    ("openai_key", re.compile(r"(?<![A-Za-z0-9])sk-(?:proj-|ant-|svcacct-)?[A-Za-z0-9_-]{16,}")),
    ("github_token", re.compile(r"(?<![A-Za-z0-9])gh[pousr]_[A-Za-z0-9]{20,}")),
    ("github_token", re.compile(r"(?<![A-Za-z0-9])github_pat_[A-Za-z0-9_]{20,}")),
    ("aws_key", re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}(?![A-Z0-9])")),
    ("slack_token", re.compile(r"(?<![A-Za-z0-9])xox[abposr]-[A-Za-z0-9-]{10,}")),
    ("slack_webhook", re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/]+")),
    (
        "jwt",
        re.compile(r"(?<![A-Za-z0-9])eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}"),
    ),
    ("bearer_token", re.compile(r"(?i)(\bbearer\s+)[A-Za-z0-9._~+/=-]{8,}")),
    ("url_password", re.compile(r"(?i)(\b[a-z][a-z0-9+.-]*://[^\s:/@]+:)[^\s@/]+(?=@)")),
)
_SECRET_KEYS = (
    r"password|passwd|pass|secret|client[_-]?secret|token|access[_-]?token|auth[_-]?token"
    r"|api[_-]?key|apikey|access[_-]?key|secret[_-]?key|private[_-]?key"
)
# `password=hunter2`, `SECRET_KEY = "x"`, `"token": "x"`, `--password=x`.
_ASSIGNMENT = re.compile(
    r"(?i)((?:\b|_)(?:" + _SECRET_KEYS + r")[\"']?\s*(?:=|:(?=\s*[\"']))\s*)"
    r"(\"[^\"]*\"|'[^']*'|[^\s,;&]+)"
)
_KEY_MARKER = re.compile(r"(?i)PRIVATE KEY|BEGIN (?:RSA|EC|DSA|OPENSSH|PGP)")
# A long run of token characters: candidates for the entropy check.
_TOKENISH = re.compile(r"[A-Za-z0-9+/_=-]{24,}")
_ENTROPY_BITS = 4.0
_PLACEHOLDER_RE = re.compile(r"\[REDACTED:[a-z_]+\]")


@dataclass(frozen=True)
class Redaction:
    text: str
    kinds: tuple[str, ...]

    @property
    def changed(self) -> bool:
        return bool(self.kinds)


def _entropy(token: str) -> float:
    counts = Counter(token)
    n = len(token)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _looks_random(token: str) -> bool:
    """A mixed-case, digit-bearing, high-entropy run: how unknown API keys look.

    Hex digests and snake/camel identifiers stay below the bar (one case, or letters
    that repeat), so git SHAs and long test names are not flagged.
    """
    if not (any(c.isdigit() for c in token) and any(c.islower() for c in token)):
        return False
    if not any(c.isupper() for c in token):
        return False
    return _entropy(token) >= _ENTROPY_BITS


def _path_prefixes() -> list[tuple[re.Pattern[str], str]]:
    home = os.environ.get("HOME") or str(Path.home())
    return _compiled_prefixes(home, tempfile.gettempdir())


@lru_cache(maxsize=8)
def _compiled_prefixes(home: str, tmpdir: str) -> list[tuple[re.Pattern[str], str]]:
    """Home and temp dirs to abbreviate, longest first (a home inside /tmp maps to `~`)."""
    pairs: dict[str, str] = {}
    for tmp in (tmpdir, "/tmp", "/var/tmp", "/private/tmp", "/private/var/tmp"):
        for variant in {tmp, os.path.realpath(tmp)}:
            if len(variant) > 1:
                pairs[variant.rstrip("/")] = "<tmp>"
    for variant in {home, os.path.realpath(home)}:
        if len(variant.rstrip("/")) > 1:
            pairs[variant.rstrip("/")] = "~"
    ordered = sorted(pairs.items(), key=lambda item: len(item[0]), reverse=True)
    compiled = [
        (re.compile(r"(?<![\w.~/-])" + re.escape(prefix) + r"(?=[/\s'\"`),;:\]]|$)"), repl)
        for prefix, repl in ordered
    ]
    # Other people's homes and macOS per-user temp dirs are private paths too.
    compiled += [
        (re.compile(r"(?<![\w.~/-])/(?:home|Users)/[^/\s'\"`]+(?=[/\s'\"`),;:\]]|$)"), "~"),
        (re.compile(r"(?<![\w.~/-])/root(?=[/\s'\"`),;:\]]|$)"), "~"),
        (
            re.compile(r"(?<![\w.~/-])(?:/private)?/var/folders/[^/\s]+/[^/\s]+/T(?=[/\s]|$)"),
            "<tmp>",
        ),
    ]
    return compiled


def redact(text: str) -> Redaction:
    """Replace recognised secrets and private absolute paths in `text`."""
    kinds: list[str] = []

    def sub(kind: str, pattern: re.Pattern[str], value: str) -> str:
        def replace(match: re.Match[str]) -> str:
            kinds.append(kind)
            keep = match.group(1) if pattern.groups and match.group(1) else ""
            return keep + PLACEHOLDER.format(kind=kind)

        return pattern.sub(replace, value)

    for kind, pattern in _TOKEN_PATTERNS:
        text = sub(kind, pattern, text)

    def assignment(match: re.Match[str]) -> str:
        value = match.group(2)
        if _PLACEHOLDER_RE.fullmatch(value.strip("\"'")):
            return match.group(0)
        kinds.append("credential")
        return match.group(1) + PLACEHOLDER.format(kind="credential")

    text = _ASSIGNMENT.sub(assignment, text)
    for pattern, repl in _path_prefixes():
        new = pattern.sub(repl, text)
        if new != text:
            kinds.append("path")
            text = new
    return Redaction(text=text, kinds=tuple(dict.fromkeys(kinds)))


def residual_secrets(text: str) -> list[str]:
    """What still looks like a secret in already-redacted text (empty when clean)."""
    found: list[str] = []
    text = _PLACEHOLDER_RE.sub(" ", text)
    for kind, pattern in _TOKEN_PATTERNS:
        if pattern.search(text):
            found.append(kind)
    if _KEY_MARKER.search(text):
        found.append("private_key")
    if any(_looks_random(m.group(0)) for m in _TOKENISH.finditer(text)):
        found.append("high_entropy_token")
    return found


def mask_residual(text: str) -> str:
    """`redact()` plus masking of unrecognised random-looking tokens (journal safety net)."""
    text = redact(text).text
    text = _TOKENISH.sub(
        lambda m: (
            PLACEHOLDER.format(kind="high_entropy") if _looks_random(m.group(0)) else m.group(0)
        ),
        text,
    )
    return _KEY_MARKER.sub(PLACEHOLDER.format(kind="private_key"), text)


def redact_deep(value: object) -> object:
    """A copy of a JSON-like value with every string (keys too) masked by `mask_residual`."""
    if isinstance(value, str):
        return mask_residual(value)
    if isinstance(value, dict):
        return {mask_residual(str(k)): redact_deep(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_deep(v) for v in value]
    return value


def redact_text(text: str) -> str:
    """`redact(text).text`: for text that leaves the process (offload files, the memory
    model's input)."""
    return redact(text).text
