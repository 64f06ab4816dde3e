"""A checkpoint manifest: what one turn (or one rewind) changed, path by path.

Each manifest is `threads/<thread>/<seq>.json` in the project's checkpoint folder: for
every path the turn changed, its state *before* the turn first changed it (blob + mode,
or absent) and after Invincat's last change (to tell a later hand edit). Written before
the change it describes, rewritten (atomically) as the turn changes more files.

Reading is strict and item by item: a manifest that does not parse is named and left
out, a path that could leave the project (absolute, `..`, NUL) is dropped from it.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from invincat_server.runtime import private_files
from invincat_server.runtime.checkpoints.store import CheckpointError, ObjectStore

VERSION = 1
Kind = Literal["turn", "rewind"]
_NAME = re.compile(r"\A(\d{8})\.json\Z")
_DIGEST = re.compile(r"\A[0-9a-f]{64}\Z")


@dataclass(frozen=True)
class FileState:
    """What a path held: a blob and its mode, or nothing (`digest` None: absent)."""

    digest: str | None
    mode: int = 0o644

    @property
    def absent(self) -> bool:
        return self.digest is None

    def to_json(self) -> dict[str, Any] | None:
        return None if self.digest is None else {"blob": self.digest, "mode": self.mode}


ABSENT = FileState(None)


@dataclass
class Change:
    before: FileState
    after: FileState | None = None
    """After Invincat's last change of the path; None: not known (an editor's buffer)."""


@dataclass
class Manifest:
    seq: int
    kind: Kind
    message_id: str | None
    """The id of the user message that started the turn (None: a rewind, or unknown)."""
    turn: int | None
    """The turn's number in the thread when it was recorded (1 = first)."""
    created_at: str
    files: dict[str, Change] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "version": VERSION,
            "seq": self.seq,
            "kind": self.kind,
            "message_id": self.message_id,
            "turn": self.turn,
            "created_at": self.created_at,
            "files": {
                path: {"before": c.before.to_json(), "after": _after_json(c.after)}
                for path, c in sorted(self.files.items())
            },
        }


def _after_json(state: FileState | None) -> dict[str, Any] | str | None:
    if state is None:
        return "unknown"
    return state.to_json()


def safe_relative(path: object) -> str | None:
    """`path` when it is a plain relative path inside the project (no `..`, not
    absolute, no NUL, not in .git/ or .invincat/), else None."""
    # Plain string checks, not PurePosixPath: a snapshot checks thousands of paths.
    if not isinstance(path, str) or not path or "\x00" in path or len(path) > 4096:
        return None
    parts = path.split("/")
    if any(part in ("..", ".", "") for part in parts) or parts[0] in (".git", ".invincat"):
        return None  # an empty first part is an absolute path
    return path


def _state(raw: object, where: str) -> FileState:
    if raw is None:
        return ABSENT
    if not isinstance(raw, dict):
        raise CheckpointError(f"{where}: a file state must be an object or null.")
    digest, mode = raw.get("blob"), raw.get("mode")
    if not isinstance(digest, str) or not _DIGEST.match(digest):
        raise CheckpointError(f"{where}: 'blob' must be 64 hex digits.")
    if not isinstance(mode, int) or isinstance(mode, bool) or not 0 <= mode <= 0o7777:
        raise CheckpointError(f"{where}: 'mode' must be a file mode (0 to 0o7777).")
    return FileState(digest, mode)


def parse(data: bytes, where: str) -> Manifest:
    """A manifest from its JSON; CheckpointError naming `where` and the problem."""
    try:
        raw = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise CheckpointError(f"{where} is not valid JSON ({exc}).") from None
    if not isinstance(raw, dict) or raw.get("version") != VERSION:
        raise CheckpointError(f"{where} is not a version-{VERSION} checkpoint manifest.")
    seq, kind, turn = raw.get("seq"), raw.get("kind"), raw.get("turn")
    message_id, created, files = raw.get("message_id"), raw.get("created_at"), raw.get("files")
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1:
        raise CheckpointError(f"{where}: 'seq' must be a positive integer.")
    if kind not in ("turn", "rewind"):
        raise CheckpointError(f"{where}: 'kind' must be 'turn' or 'rewind'.")
    if turn is not None and (not isinstance(turn, int) or isinstance(turn, bool)):
        raise CheckpointError(f"{where}: 'turn' must be an integer or null.")
    if message_id is not None and not isinstance(message_id, str):
        raise CheckpointError(f"{where}: 'message_id' must be a string or null.")
    if not isinstance(created, str) or not isinstance(files, dict):
        raise CheckpointError(f"{where}: 'created_at' and 'files' are missing.")
    manifest = Manifest(seq, kind, message_id, turn, created)
    for path, entry in files.items():
        name = safe_relative(path)
        if name is None or not isinstance(entry, dict):
            raise CheckpointError(f"{where}: {path!r} is not a path inside the project.")
        after_raw = entry.get("after")
        after = None if after_raw == "unknown" else _state(after_raw, f"{where} {name}")
        manifest.files[name] = Change(_state(entry.get("before"), f"{where} {name}"), after)
    return manifest


def manifest_path(store: ObjectStore, thread_id: str, seq: int) -> Path:
    return store.thread_dir(thread_id) / f"{seq:08d}.json"


def save(store: ObjectStore, thread_id: str, manifest: Manifest) -> None:
    data = json.dumps(manifest.to_json(), indent=1).encode()
    private_files.atomic_write(manifest_path(store, thread_id, manifest.seq), data, root=store.home)


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def seqs(store: ObjectStore, thread_id: str) -> list[int]:
    """The manifest numbers of a thread, oldest first (nothing for an unknown thread)."""
    folder = store.thread_dir(thread_id)
    try:
        names = os.listdir(folder) if not folder.is_symlink() else []
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted(int(m.group(1)) for name in names if (m := _NAME.match(name)))


def load_all(store: ObjectStore, thread_id: str) -> tuple[list[Manifest], list[str]]:
    """(the thread's readable manifests oldest first, a sentence per one left out)."""
    manifests: list[Manifest] = []
    problems: list[str] = []
    for seq in seqs(store, thread_id):
        path = manifest_path(store, thread_id, seq)
        try:
            data = private_files.read_bytes(path, root=store.home)
            if data is None:
                continue
            manifest = parse(data, f"checkpoint {seq} ({path})")
            if manifest.seq != seq:
                raise CheckpointError(
                    f"checkpoint {seq} ({path}) says it is number {manifest.seq}."
                )
        except (CheckpointError, OSError) as exc:
            problems.append(f"{exc} It is left out: the files it recorded cannot be restored.")
            continue
        manifests.append(manifest)
    return manifests, problems


def next_seq(store: ObjectStore, thread_id: str) -> int:
    numbers = seqs(store, thread_id)
    return (numbers[-1] if numbers else 0) + 1
