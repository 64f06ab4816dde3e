"""Redaction and admission of secrets and private paths (spec section 7).

Two layers:
- `redact()` replaces what it recognises: the credential formats of `secret_formats.py`
  (detect-secrets' rules plus our own), values assigned to secret-sounding names
  (`DB_PASSWORD=…`, `"api_key": "…"`, `SOME_KEY=…`), long random-looking tokens of no
  known format, and absolute paths under the home or a temp dir (`~/...`, `<tmp>/...`).
- `residual_secrets()` flags what still *looks* like a secret afterwards (a key-block
  marker, a format or random token that slipped through): the governance drops a create or
  update whose text still trips it, and `redact_deep()` masks such text as well, because
  the journal records proposals as proposed and must never hold a secret either.

Text that is shortened is redacted first and cut afterwards (`redact_and_cut`,
`cut_redacted`, `keep_end`): a cut through a secret leaves half a token that no rule
recognises and that is still half the secret. Text the main model sees unredacted is cut
between tokens only (`cut_whole_tokens`).

Applied to everything Invincat writes to disk or sends anywhere but the main model:
memory-model requests, memory stores and journals, offload files, compaction summaries,
thread titles, the memory agent's failure records (docs/security.md lists them, and what
is not redacted: the main model sees the conversation as given).
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

from invincat_server.runtime.memory.secret_formats import find_formats

PLACEHOLDER = "[REDACTED:{kind}]"

# Names whose value is a secret whatever it looks like.
_STRONG_NAMES = (
    r"password|passwd|passphrase|pwd|pass|secret|token|credentials?|api[_-]?key|apikey"
    r"|access[_-]?key|secret[_-]?key|private[_-]?key|client[_-]?secret|cookie"
    r"|connection[_-]?string|conn[_-]?str"
)
# `DB_PASSWORD=x`, `stripeSecretKey: "x"`, `"api_key": "x"`, `--token=x`, `SOME_KEY=x`:
# a name ending in a secret word (or `key`), then `=`, `:`, `:=` or `=>`, then the value.
# The regex starts at the word (fast to scan for); the whole name is read backwards.
# It runs on the lowercased text (a case-insensitive regex cannot scan for its words
# quickly; 10x slower), so its spans index the original text when lowercasing keeps the
# length, which it does except for a few non-ASCII letters (then `_ASSIGNMENT_ANY_CASE`).
# Quotes may be escaped (`\"api_key\": \"…\"`: JSON inside a JSON string, at any depth).
_ASSIGNMENT_SOURCE = (
    r"(?:" + _STRONG_NAMES + r"|key|dsn)(?:\\*[\"'])?"
    r"([ \t]*(?::=|=>|=(?!=)|:(?!:))[ \t]*)"
    r"(\\+\"[^\"\n]*?\\+\"|\"[^\"\n]*\"|'[^'\n]*'|[^\s,;&()\[\]{}\"'`<>]+)"
)
_QUOTED = re.compile(r"(\\*([\"']))(.*?)\\*\2", re.S)
_ASSIGNMENT = re.compile(_ASSIGNMENT_SOURCE)
_ASSIGNMENT_ANY_CASE = re.compile(_ASSIGNMENT_SOURCE, re.I)
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_STRONG_NAME = re.compile(r"(?i)(?:" + _STRONG_NAMES + r")$")
# Bare values that are code or templating, not a secret: `password=password`,
# `token=self.token`, `key=None`, `secret=${SECRET}`, `password: str`.
_CODE_VALUE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_CALL_VALUE = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*\(")
_TEMPLATE_VALUE = re.compile(r"^[$%{<*]|^\[REDACTED|^x{4,}$|^\.{3}$", re.I)
_PLACEHOLDERS = frozenset(
    "none null nil true false undefined empty changeme redacted example xxx todo".split()
)
_KEY_MARKER = re.compile(r"(?i)PRIVATE KEY|BEGIN (?:RSA|EC|DSA|OPENSSH|PGP)")
# A long run of token characters: candidates for the entropy check.
# (`=` only as base64 padding, so `NAME=value` is two candidates, and the name survives.)
_TOKENISH = re.compile(r"[A-Za-z0-9+/_-]{24,}={0,2}")
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


_WORD_RUNS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_SEQUENCES = ("abcdefgh", "ABCDEFGH", "01234567")


def _looks_random(token: str) -> bool:
    """A mixed-case, digit-bearing, high-entropy run that is not made of words: how
    unknown API keys look.

    Hex digests stay below the bar (one case), identifiers such as
    `_V1ValidatorWithValuesKwOnly` or `TestMemoryGovernance2Integration` are made of
    word-long runs, and a path or URL is judged part by part.
    """
    if "/" in token:
        # A path or URL has word parts (`com/Microsoft/vscode-uri/blob/<sha>`); base64
        # (an AWS secret key) has none.
        if any(_wordy(part) for part in token.split("/") if len(part) >= 4):
            return False
        token = token.replace("/", "")
    if not (any(c.isdigit() for c in token) and any(c.islower() for c in token)):
        return False
    if not any(c.isupper() for c in token) or any(s in token for s in _SEQUENCES):
        return False
    if _wordy(token):
        return False  # camelCase / snake_case words: an identifier
    return _entropy(token) >= _ENTROPY_BITS


def _wordy(token: str) -> bool:
    """Made of word-long runs (`Validator`, `With`, `2`), as identifiers and paths are;
    random text switches case and digits every 1-2 characters."""
    runs = _WORD_RUNS.findall(token)
    return bool(runs) and sum(map(len, runs)) / len(runs) >= 3.0


def _secret_value(name: str, value: str, following: str, annotation: bool) -> bool:
    """Whether an assigned value is a secret worth redacting (see `_ASSIGNMENT`);
    `annotation`: the separator was a colon (`password: str`, `password: hunter2`)."""
    start, end = _unquote(value)
    inner = value[start:end]
    quoted = inner != value
    if not inner.strip() or inner.lower() in _PLACEHOLDERS or _TEMPLATE_VALUE.search(inner):
        return False
    if not quoted and _code_value(inner, following, annotation):
        return False
    if not _STRONG_NAME.search(name):
        # `key=...`, `cache_key=...`: only values shaped like a credential.
        return (
            len(inner) >= 16
            and not any(c.isspace() for c in inner)
            and (any(c.isdigit() for c in inner) or _looks_random(inner))
        )
    return True


def _unquote(value: str) -> tuple[int, int]:
    """Where the value is inside its quotes (`"x"`, `'x'`, `\\"x\\"`): (start, end)
    offsets into `value`; the whole of an unquoted value."""
    found = _QUOTED.fullmatch(value)
    return found.span(3) if found else (0, len(value))


def _code_value(value: str, following: str, annotation: bool) -> bool:
    """A bare value that is code: a call (`get_password(...)`), an attribute or index
    (`self.token`, `tokens[i]`), a type (`password: str`, `password: SecretStr`), or a
    lowercase name (`f(password=password)`). A name with a digit or a capital stays a
    possible secret, the way typed ones look (`hunter2`, `zMxNqhvwkizYgc`); the cost is
    that `token = userToken` is redacted."""
    if _CALL_VALUE.match(value):
        return True
    if not _CODE_VALUE.fullmatch(value):
        return False
    if "." in value or following in ("(", "["):
        return True
    if any(c.isdigit() for c in value):
        return False
    return value.islower() or (annotation and value[0].isupper() and _wordy(value))


def _secret_spans(text: str) -> list[tuple[int, int, str]]:
    spans = find_formats(text)
    lowered = text.lower()
    if len(lowered) == len(text):
        pattern, haystack = _ASSIGNMENT, lowered
    else:
        pattern, haystack = _ASSIGNMENT_ANY_CASE, text
    pos = 0
    while match := pattern.search(haystack, pos):
        start = match.start()
        while start > 0 and text[start - 1] in _NAME_CHARS:
            start -= 1
        name = text[start : match.start(1)].rstrip("\"'\\")
        value_start, value_end = match.span(2)
        value = text[value_start:value_end]
        following = text[value_end : value_end + 1]
        if _secret_value(name, value, following, ":" in match.group(1).replace(":=", "")):
            start, end = _unquote(value)
            spans.append((value_start + start, value_start + end, "credential"))
            pos = match.end()
        else:
            # A value that is code may itself start the real assignment
            # (`key: aws_secret_access_key = ...`): search again from inside it.
            pos = value_start if value_start > match.start() else match.end()
    for match in _TOKENISH.finditer(text):
        if _looks_random(match.group(0)):
            spans.append((*match.span(), "high_entropy"))
    return spans


def _replace_spans(text: str, spans: list[tuple[int, int, str]]) -> tuple[str, list[str]]:
    """Replace each (merged) span by its placeholder; the earliest, longest span names it."""
    out: list[str] = []
    kinds: list[str] = []
    pos = 0
    for start, end, kind in sorted(spans, key=lambda s: (s[0], -s[1])):
        if end <= pos:
            continue
        if start < pos:  # overlaps the previous span: that placeholder covers it all
            pos = end
            continue
        out.append(text[pos:start])
        out.append(PLACEHOLDER.format(kind=kind))
        kinds.append(kind)
        pos = end
    out.append(text[pos:])
    return "".join(out), kinds


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
    # Each starts with its literal (fast to scan for); `_abbreviate` checks that it starts
    # a path (not `/x/tmp` or `a.tmp`).
    compiled = [
        (re.compile(re.escape(prefix) + r"(?=[/\s'\"`),;:\]]|$)"), repl) for prefix, repl in ordered
    ]
    # Other people's homes and macOS per-user temp dirs are private paths too.
    compiled += [
        (re.compile(r"/home/[^/\s'\"`]+(?=[/\s'\"`),;:\]]|$)"), "~"),
        (re.compile(r"/Users/[^/\s'\"`]+(?=[/\s'\"`),;:\]]|$)"), "~"),
        (re.compile(r"/root(?=[/\s'\"`),;:\]]|$)"), "~"),
        (re.compile(r"(?:/private)?/var/folders/[^/\s]+/[^/\s]+/T(?=[/\s]|$)"), "<tmp>"),
    ]
    return compiled


def _abbreviate(text: str, pattern: re.Pattern[str], repl: str) -> str:
    def replace(match: re.Match[str]) -> str:
        before = text[match.start() - 1] if match.start() else " "
        if before.isalnum() or before in "_.~/-":
            return match.group(0)
        return repl

    return pattern.sub(replace, text)


def redact(text: str) -> Redaction:
    """Replace recognised secrets and private absolute paths in `text`."""
    text, kinds = _replace_spans(text, _secret_spans(text))
    for pattern, repl in _path_prefixes():
        new = _abbreviate(text, pattern, repl)
        if new != text:
            kinds.append("path")
            text = new
    return Redaction(text=text, kinds=tuple(dict.fromkeys(kinds)))


def residual_secrets(text: str) -> list[str]:
    """What still looks like a secret in already-redacted text (empty when clean)."""
    text = _PLACEHOLDER_RE.sub(" ", text)
    found = [kind for _, _, kind in _secret_spans(text)]
    if _KEY_MARKER.search(text):
        found.append("private_key")
    return list(dict.fromkeys(found))


def mask_residual(text: str) -> str:
    """`redact()` plus masking of key-block markers (journal safety net)."""
    return _KEY_MARKER.sub(PLACEHOLDER.format(kind="private_key"), redact(text).text)


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


def redact_and_cut(text: str, limit: int, *, marker: str = "…") -> str:
    """`text` redacted, then cut to at most `limit` characters (the marker included).

    Redaction always comes first: a cut through a secret leaves half a token, which no
    format rule recognises any more and which is still half the secret.
    """
    window = window_for_cut(text, limit)
    clean = redact(window).text
    if len(window) < len(text) and len(clean) + len(marker) <= limit:
        return clean + marker  # the window was short after redaction: still a cut
    return cut_redacted(clean, limit, marker=marker)


_WINDOW_FACTOR, _MIN_WINDOW, _MAX_WINDOW = 8, 4_096, 65_536
_SPACE = re.compile(r"\s")


def window_for_cut(text: str, limit: int) -> str:
    """The part of a long `text` worth redacting before it is cut to `limit`: up to the
    first whitespace past 8x the limit (at least 4 KiB), so no token is split and a
    1 MB line costs what its start costs. With no whitespace in the next 64 KiB the
    window ends there: a run that long is no credential, and a rule that matches at its
    start still matches the first 64 KiB of it, so what the cut keeps is the same."""
    start = max(limit * _WINDOW_FACTOR, _MIN_WINDOW)
    if len(text) <= start:
        return text
    space = _SPACE.search(text, start, start + _MAX_WINDOW)
    return text[: start + _MAX_WINDOW] if space is None else text[: space.start()]


def cut_redacted(text: str, limit: int, *, marker: str = "…") -> str:
    """Already-redacted `text` cut to at most `limit` characters (the marker included),
    never through a placeholder (`[REDACTED:stri` would read as text)."""
    if len(text) <= limit:
        return text
    if limit <= len(marker):
        return text[: max(0, limit)]
    end = limit - len(marker)
    for placeholder in _PLACEHOLDER_RE.finditer(text, max(0, end - 64), end + 64):
        if placeholder.start() < end < placeholder.end():
            end = placeholder.start()
            break
    return text[:end] + marker


def keep_end(text: str, limit: int) -> str:
    """The last `limit` characters of already-redacted `text`, never starting inside a
    placeholder."""
    if len(text) <= limit:
        return text
    start = len(text) - limit
    for placeholder in _PLACEHOLDER_RE.finditer(text, max(0, start - 64), start + 64):
        if placeholder.start() < start < placeholder.end():
            start = placeholder.end()
            break
    return text[start:]


_RUN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_.=:~-")


def cut_whole_tokens(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters, backing off to the start of the run of
    token characters the cut falls in: for text that is not redacted (what the main model
    sees of its own conversation), so a secret is kept whole or left out, never halved
    (half a token echoed by the model would escape every later redaction)."""
    if len(text) <= limit:
        return text
    end = max(0, limit)
    if end and text[end - 1] in _RUN_CHARS and text[end] in _RUN_CHARS:
        while end > 0 and text[end - 1] in _RUN_CHARS:
            end -= 1
    return text[:end]
