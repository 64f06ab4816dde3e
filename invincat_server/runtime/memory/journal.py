"""The append-only journal `memory_<scope>.journal.jsonl`: one JSON line per batch.

Appends happen under the store lock, after the store itself was replaced, and are
fsynced before the batch is acknowledged. A line torn by a crash is skipped by readers,
and the next append starts on a fresh line so it cannot glue onto the fragment. A journal
git left conflicted is refused whole (see conflicts.py).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from pydantic import ValidationError

from invincat_server.runtime import private_files
from invincat_server.runtime.memory.conflicts import conflict_marker_line, journal_conflict
from invincat_server.runtime.memory.errors import unsafe_store
from invincat_server.runtime.memory.report import JournalRecord
from invincat_server.runtime.memory.store import read_bytes

_TAIL_CHUNK = 64 * 1024


def encode(record: JournalRecord) -> bytes:
    line = json.dumps(record.model_dump(mode="json"), ensure_ascii=False, separators=(",", ":"))
    return line.encode("utf-8") + b"\n"


def _open(path: Path, flags: int, root: Path | None) -> int:
    # private_files: 0600, and no link followed below `root` (a journal linked to another
    # project's is neither read nor appended to).
    try:
        return private_files.open_file(path, flags, root=root)
    except private_files.UnsafePathError as exc:
        raise unsafe_store(exc) from None


def append(path: Path, record: JournalRecord, *, root: Path | None = None) -> None:
    """Append one record durably (caller holds the store lock)."""
    data = encode(record)
    fd = _open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, root)
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + data  # a previous writer died mid-line
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)


def parse_line(line: bytes) -> JournalRecord | None:
    line = line.strip()
    if not line:
        return None
    try:
        return JournalRecord.model_validate_json(line)
    except ValidationError:
        return None  # a torn or hand-damaged line: skip it, keep the rest readable


def parse_lines(data: bytes) -> list[JournalRecord]:
    records = []
    for line in data.split(b"\n"):
        record = parse_line(line)
        if record is not None:
            records.append(record)
    return records


def read_all(path: Path, *, root: Path | None = None) -> list[JournalRecord]:
    """Every readable record, oldest first ([] when there is no journal).

    Raises MergeConflictError for a journal git left conflicted: skipping the marker lines
    like torn ones would show one side's history as if it were all of it.
    """
    data = read_bytes(path, root=root)
    if data is None:
        return []
    check_resolved(path, data)
    return parse_lines(data)


def check_resolved(path: Path, data: bytes | None = None, *, root: Path | None = None) -> None:
    """Raise MergeConflictError if the journal holds git conflict markers (UnsafeStoreError
    if it, or its folder, is a link)."""
    if data is None:
        data = read_bytes_or_empty(path, root=root)
    line = conflict_marker_line(data)
    if line is not None:
        raise journal_conflict(path, line)


def read_bytes_or_empty(path: Path, *, root: Path | None = None) -> bytes:
    return read_bytes(path, root=root) or b""


def last_record(path: Path, *, root: Path | None = None) -> JournalRecord | None:
    """The newest readable record, reading the file backwards in chunks."""
    try:
        fh = os.fdopen(_open(path, os.O_RDONLY, root), "rb")
    except FileNotFoundError:
        return None
    with fh:
        end = fh.seek(0, os.SEEK_END)
        buffer = b""
        while end > 0:
            start = max(0, end - _TAIL_CHUNK)
            fh.seek(start)
            buffer = fh.read(end - start) + buffer
            end = start
            lines = buffer.split(b"\n")
            # lines[0] may be partial unless we reached the start of the file.
            complete = lines if start == 0 else lines[1:]
            for line in reversed(complete):
                record = parse_line(line)
                if record is not None:
                    return record
            buffer = lines[0] if start > 0 else b""
    return None
