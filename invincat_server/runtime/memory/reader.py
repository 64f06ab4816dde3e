"""The quick read path: `memory list|show|log` without pydantic or the write machinery.

Hand-written on purpose, for speed: importing the pydantic models (models.py, report.py,
citations) and the service with its governance costs 170-270 ms, more than the whole
command may take (issue 15: an editor's memory views answer within 150 ms of
`initialize`, `invincat memory list` starts in under 0.3 s). pydantic stays the
validator of record. This reader accepts only documents it can show the models would
accept unchanged, and builds from them exactly the dicts `Entry.to_json()` and
`JournalRecord.model_dump(mode="json")` give (field order and defaults included). For
everything else it raises `NotSimple`, and the caller takes the full path
(MemoryService and views.py), which reports, repairs or refuses as it always did:

- a store that is missing its fields, has a value the models would coerce or refuse,
  belongs to another scope, repeats an id, is of a newer version, is not UTF-8 JSON or
  holds git conflict markers; a journal with conflict markers or a line that is torn or
  does not match the record schema (the full path skips or refuses those);

An entry with citations is shown with the same `stale` and `verification` as views.py
gives: both paths run the one staleness rule (staleness.py, on plain citation data here:
citation_text.PlainCitation), with the same refusal of paths outside the project or in
protected memory data (citation_text.CitationPaths with protection.PathGuard). The checker
is kept per reader, so a language server re-reads a cited file only when its stat changed.

So the quick path is never less strict than the full one; at worst it is not quick.
Like the full path it reads without the store lock: writers replace the store
atomically (store.py), so the bytes read once are one whole version, and the journal is
append-only. Nothing is redacted here because nothing is redacted on the full read
path either: redaction happens before anything is written (governance).
tests/memory/test_reader.py compares both paths over a varied store, and checks that
the limits below are the models' own; tests/memory/test_reader_agrees.py generates
many valid and broken stores and journal lines and checks that whatever this reader
vouches for, the models accept and serialise byte for byte alike.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from invincat_server.runtime import private_files
from invincat_server.runtime.memory.citation_text import (
    MAX_CITATIONS,
    PlainCitation,
    citation_label,
)
from invincat_server.runtime.memory.conflicts import conflict_marker_line
from invincat_server.runtime.memory.ids import ID_BODY
from invincat_server.runtime.memory.paths import StoreFiles, store_files
from invincat_server.runtime.memory.schema import (
    ID_PREFIX,
    MAX_AUTHOR_EMAIL,
    MAX_AUTHOR_NAME,
    MAX_BRANCH,
    MAX_CONTENT,
    MAX_SCORE_REASON,
    MAX_SECTION,
    READABLE_VERSIONS,
    SCOPES,
    nesting_depth_exceeds,
    path_is_nameable,
    plain_label,
    tier_for,
)

if TYPE_CHECKING:
    from invincat_server.runtime.memory.staleness import StalenessChecker

# The models' own id pattern (ids.py), always matched whole.
_ID = re.compile(ID_BODY)
_INT_LIMIT = 2**63  # pydantic reads larger JSON ints too; not worth trusting here

__all__ = ["MemoryReader", "NotSimple", "citation_label", "entry", "read_journal", "read_store"]

Check = Callable[[Any], Any]
Fields = tuple[tuple[str, Any, Check], ...]
"""(name, default or _REQUIRED, check), in the model's declaration order."""
_REQUIRED = object()


FULL_READ_ENV = "INVINCAT_TEST_MEMORY_FULL_READ"
"""Test-only: `1` makes the front ends skip this reader, so tests can compare its output
with the full path's through the real CLI and language server."""


class NotSimple(Exception):
    """The quick path cannot vouch for this input: take the full path (MemoryService)."""


def _need(condition: bool) -> None:
    if not condition:
        raise NotSimple


def _text(low: int = 0, high: int | None = None, *, optional: bool = False) -> Check:
    def check(value: Any) -> Any:
        if value is None and optional:
            return None
        _need(type(value) is str and len(value) >= low and (high is None or len(value) <= high))
        return value

    return check


def _integer(low: int | None = None, high: int | None = None, *, optional: bool = False) -> Check:
    def check(value: Any) -> Any:
        if value is None and optional:
            return None
        _need(type(value) is int and -_INT_LIMIT < value < _INT_LIMIT)
        _need((low is None or value >= low) and (high is None or value <= high))
        return value

    return check


def _choice(*options: str, optional: bool = False) -> Check:
    def check(value: Any) -> Any:
        if value is None and optional:
            return None
        _need(type(value) is str and value in options)
        return value

    return check


def _label(limit: int, *, optional: bool = False) -> Check:
    """An attribution value (`schema.plain_label`, the models' own rule)."""

    def check(value: Any) -> Any:
        if value is None and optional:
            return None
        _need(type(value) is str and plain_label(value, limit))
        return value

    return check


def _optional(check: Check) -> Check:
    def optional(value: Any) -> Any:
        return None if value is None else check(value)

    return optional


def _cited_path(value: Any) -> Any:
    """`Citation.path`: 1-500 characters, and a path the OS can name (no NUL byte)."""
    _need(type(value) is str and 1 <= len(value) <= 500 and path_is_nameable(value))
    return value


def _boolean(value: Any) -> Any:
    _need(type(value) is bool)
    return value


def _any_list(value: Any) -> Any:
    _need(type(value) is list)
    return value


def _list_of(item: Check, high: int | None = None) -> Check:
    def check(value: Any) -> Any:
        _need(type(value) is list and (high is None or len(value) <= high))
        return [item(element) for element in value]

    return check


def _model(fields: Fields) -> Check:
    """A pydantic model with `extra="allow"`: declared fields in declaration order (a
    missing one takes its default), then the unknown keys in the order they came."""
    names = {name for name, _, _ in fields}

    def check(value: Any) -> dict[str, Any]:
        _need(type(value) is dict)
        out: dict[str, Any] = {}
        for name, default, field_check in fields:
            if name in value:
                out[name] = field_check(value[name])
            else:
                _need(default is not _REQUIRED)
                out[name] = default() if callable(default) else default
        for key, extra in value.items():
            if key not in names:
                _need(not key.startswith("_"))  # pydantic's private names: not ours to guess
                out[key] = extra
        return out

    return check


def _dict(value: Any) -> Any:
    _need(type(value) is dict)
    return value


def _optional_dicts(value: Any) -> Any:
    """`dict[str, dict[str, Any] | None]` (a journal record's before/after)."""
    _need(type(value) is dict)
    _need(all(item is None or type(item) is dict for item in value.values()))
    return value


EVIDENCE_FIELDS: Fields = (
    ("tool", _REQUIRED, _text(0, 64)),
    ("path", _REQUIRED, _text(0, 500)),
    ("sha256", None, _text(0, 64, optional=True)),
)
_EVIDENCE = _model(EVIDENCE_FIELDS)
AUTHOR_FIELDS: Fields = (
    ("name", _REQUIRED, _label(MAX_AUTHOR_NAME)),
    ("email", None, _label(MAX_AUTHOR_EMAIL, optional=True)),
)
_AUTHOR = _model(AUTHOR_FIELDS)
SOURCE_FIELDS: Fields = (
    ("thread_id", None, _text(optional=True)),
    ("anchor", None, _text(optional=True)),
    ("actor", None, _text(optional=True)),
    ("evidence", list, _list_of(_EVIDENCE)),
    ("author", None, _optional(_AUTHOR)),
    ("branch", None, _label(MAX_BRANCH, optional=True)),
)
_OMITTED_WHEN_NONE = ("author", "branch")
"""Source fields its serializer leaves out when unset (entries without attribution)."""
_SOURCE = _model(SOURCE_FIELDS)
CITATION_FIELDS: Fields = (
    ("path", _REQUIRED, _cited_path),
    ("start_line", _REQUIRED, _integer(1)),
    ("end_line", _REQUIRED, _integer(1)),
    ("sha256", _REQUIRED, _text(0, 128)),
    ("anchor", "", _text(0, 1000)),
)
_CITATION = _model(CITATION_FIELDS)
ENTRY_FIELDS: Fields = (
    ("id", _REQUIRED, _text()),
    ("scope", _REQUIRED, _choice(*SCOPES)),
    ("section", _REQUIRED, _text(1, MAX_SECTION)),
    ("content", _REQUIRED, _text(1, MAX_CONTENT)),
    ("status", "active", _choice("active", "archived")),
    ("confidence", "medium", _choice("low", "medium", "high")),
    ("score", _REQUIRED, _integer(0, 100)),
    ("tier", _REQUIRED, _choice("hot", "warm", "cold")),
    ("score_reason", "", _text(0, MAX_SCORE_REASON)),
    (
        "invalid",
        None,
        _choice("wrong", "superseded", "outdated", "misleading", optional=True),
    ),
    ("created_at", _REQUIRED, _text()),
    ("updated_at", _REQUIRED, _text()),
    ("last_scored_at", None, _text(optional=True)),
    ("archived_at", None, _text(optional=True)),
    ("source", lambda: _SOURCE({}), _SOURCE),
    ("citations", list, _list_of(_CITATION, MAX_CITATIONS)),
)
_ENTRY = _model(ENTRY_FIELDS)
APPLIED_FIELDS: Fields = (
    ("op", _REQUIRED, _text()),
    ("id", None, _text(optional=True)),
    ("index", None, _integer(optional=True)),
)
_APPLIED = _model(APPLIED_FIELDS)
DROPPED_FIELDS: Fields = (
    ("index", _REQUIRED, _integer(optional=True)),
    ("op", _REQUIRED, _text()),
    ("reason", _REQUIRED, _text()),
    ("id", None, _text(optional=True)),
)
_DROPPED = _model(DROPPED_FIELDS)
RECORD_FIELDS: Fields = (
    ("batch_id", _REQUIRED, _text()),
    ("time", _REQUIRED, _text()),
    ("scope", _REQUIRED, _choice(*SCOPES)),
    ("actor", _REQUIRED, _text()),
    ("thread_id", None, _text(optional=True)),
    ("rejected", False, _boolean),
    ("reason", None, _text(optional=True)),
    ("proposed", list, _any_list),
    ("applied", list, _list_of(_APPLIED)),
    ("dropped", list, _list_of(_DROPPED)),
    ("before", dict, _optional_dicts),
    ("after", dict, _optional_dicts),
    ("hash_before", None, _text(optional=True)),
    ("hash_after", None, _text(optional=True)),
    ("next_seq", None, _integer(optional=True)),
    ("reverts", None, _text(optional=True)),
    ("follows", None, _text(optional=True)),
    ("author", None, _optional(_dict)),
    ("branch", None, _text(optional=True)),
)
_RECORD = _model(RECORD_FIELDS)


def _finite(text: str) -> float:
    value = float(text)
    _need(math.isfinite(value))  # pydantic's parser and json differ on these
    return value


def _reject_constant(_: str) -> Any:
    raise NotSimple  # NaN, Infinity: not JSON, and the two parsers disagree on them


def _json(data: bytes) -> Any:
    try:
        text = data.decode("utf-8")
        return json.loads(text, parse_float=_finite, parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise NotSimple from None


def _read(path: Path, root: Path) -> bytes | None:
    # No link followed below `root` (private_files.py): the full path reports a refused one.
    try:
        return private_files.read_bytes(path, root=root)
    except private_files.UnsafePathError:
        raise NotSimple from None


def entry(raw: Any, scope: str) -> dict[str, Any]:
    """One stored entry as `Entry.to_json()` gives it."""
    _need(not nesting_depth_exceeds(raw))  # Entry refuses it (schema.MAX_ENTRY_DEPTH)
    data = _ENTRY(raw)
    match = _ID.fullmatch(data["id"])
    if match is None:
        raise NotSimple
    _need(match.group(1) == ID_PREFIX[scope] and data["scope"] == scope)
    _need(tier_for(data["score"]) == data["tier"])
    if not data["citations"]:
        del data["citations"]  # as Entry's serializer: an uncited entry has no key
    source = data["source"]
    for key in _OMITTED_WHEN_NONE:  # as Source's serializer
        if source[key] is None:
            del source[key]
    return data


def read_store(files: StoreFiles) -> list[dict[str, Any]]:
    """The entries of one store, in store order ([] when there is no store)."""
    data = _read(files.store, files.root)
    if data is None:
        return []
    doc = _json(data)
    _need(type(doc) is dict)
    version, next_seq, items = doc.get("version"), doc.get("next_seq"), doc.get("items")
    _need(type(version) is int and version in READABLE_VERSIONS)
    _need(doc.get("scope") == files.scope and type(items) is list)
    # Version 1's id counter, unused now; the models still refuse a damaged one.
    _need(next_seq is None or (type(next_seq) is int and 1 <= next_seq < _INT_LIMIT))
    entries = [entry(item, files.scope) for item in items]
    _need(len({e["id"] for e in entries}) == len(entries))  # a duplicate: a merge conflict
    return entries


def read_journal(path: Path, root: Path) -> list[dict[str, Any]]:
    """Every record of a journal, oldest first, as `JournalRecord.model_dump(mode="json")`."""
    data = _read(path, root)
    if data is None:
        return []
    _need(conflict_marker_line(data) is None)
    records = []
    for line in data.split(b"\n"):
        line = line.strip()
        if line:  # a torn line is skipped by the full path; it decides that, not us
            records.append(_RECORD(_json(line)))
    return records


def touches(record: dict[str, Any], entry_id: str) -> bool:
    """`JournalRecord.touches` on a record dict."""
    return (
        entry_id in record["before"]
        or entry_id in record["after"]
        or any(
            a["id"] == entry_id or any(v == entry_id for k, v in a.items() if k not in _OP_KEYS)
            for a in record["applied"]
        )
        or any(d["id"] == entry_id for d in record["dropped"])
    )


_OP_KEYS = frozenset({"op", "id", "index"})


def _scopes(scope: str | None) -> tuple[str, ...]:
    if scope is None:
        return SCOPES
    _need(scope in SCOPES)  # the full path says what is wrong with it
    return (scope,)


class MemoryReader:
    """Read-only views of one user dir and one project, as views.py builds them."""

    def __init__(self, home: Path, project_root: Path) -> None:
        self.files: dict[str, StoreFiles] = {
            str(scope): files
            for scope, files in store_files(Path(home), Path(project_root)).items()
        }
        self._home, self._root = Path(home), Path(project_root)
        self._staleness: StalenessChecker | None = None

    def checker(self) -> StalenessChecker:
        """The staleness checker, built on the first cited entry (uncited stores never pay
        for the path guard) and kept, so its stat cache serves later reads."""
        if self._staleness is None:
            # Pydantic-free, but not free to import (shlex, glob, dataclasses: ~10 ms), so
            # only when a store has cited entries.
            from invincat_server.runtime.memory.citation_text import CitationPaths
            from invincat_server.runtime.memory.protection import PathGuard
            from invincat_server.runtime.memory.staleness import StalenessChecker

            guard = PathGuard(self._home, self._root)
            paths = CitationPaths(self._root, guard.is_protected)
            self._staleness = StalenessChecker(self._root, paths.refusal)
        return self._staleness

    def _shown(self, data: dict[str, Any]) -> dict[str, Any]:
        """`views.entry_view`: as stored, plus `stale` and, when cited, `verification`."""
        citations = data.get("citations")
        verdict = None
        if citations:
            cited = [PlainCitation(dict(c)) for c in citations]
            verdict = self.checker().check(data["id"], cited)
        data["stale"] = bool(verdict is not None and verdict.stale)
        if verdict is not None:
            data["verification"] = verdict.to_json()
        return data

    def store_paths(self) -> dict[str, str]:
        return {scope: str(files.store) for scope, files in self.files.items()}

    def entries(
        self, scope: str | None = None, *, include_archived: bool = False, tier: str | None = None
    ) -> list[dict[str, Any]]:
        """`MemoryService.list`, as `views.entry_view` dicts."""
        found = []
        for name in _scopes(scope):
            for data in read_store(self.files[name]):
                if data["status"] == "archived" and not include_archived:
                    continue
                if tier is not None and data["tier"] != tier:
                    continue
                found.append(self._shown(data))
        return found

    def list_view(
        self, scope: str | None = None, *, include_archived: bool = False, tier: str | None = None
    ) -> dict[str, Any]:
        """`views.list_view` when no store has a problem (a problem is not simple)."""
        items = self.entries(scope, include_archived=include_archived, tier=tier)
        return {"items": items, "stores": self.store_paths()}

    def show_view(self, entry_id: str) -> dict[str, Any] | None:
        """`views.show_view`: `{"entry", "history"}`, None when the id never existed."""
        match = _ID.fullmatch(entry_id)
        if match is None:
            raise NotSimple  # the full path explains what a memory id looks like
        files = self.files["user" if match.group(1) == "u" else "project"]
        found = next((e for e in read_store(files) if e["id"] == entry_id), None)
        history = [r for r in read_journal(files.journal, files.root) if touches(r, entry_id)]
        if found is None and not history:
            return None
        return {"entry": self._shown(found) if found is not None else None, "history": history}

    def log_view(
        self, scope: str | None = None, limit: int | None = None, author: str | None = None
    ) -> list[dict[str, Any]]:
        """`views.log_view`: journal records, newest first (of `author`, when given)."""
        records = [
            r
            for s in _scopes(scope)
            for r in read_journal(self.files[s].journal, self.files[s].root)
        ]
        records.sort(key=lambda r: r["time"], reverse=True)
        if author is not None:
            from invincat_server.runtime.memory.attribution import record_matches

            records = [r for r in records if record_matches(r, author)]
        return records if limit is None else records[:limit]

    def check_conflicts(self, scope: str | None = None) -> None:
        """What `MemoryService.check_conflicts` refuses (conflict markers, a duplicate id)
        is not simple: raise NotSimple so the full path reports it."""
        for name in _scopes(scope):
            files = self.files[name]
            journal = _read(files.journal, files.root)
            _need(journal is None or conflict_marker_line(journal) is None)
            read_store(files)
