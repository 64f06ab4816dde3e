"""Invincat creates and opens its state files only through runtime/private_files.py.

A new module that writes a file with `write_text`, `mkdir`, `os.open`, `mkstemp` or a
`sqlite3.connect` of its own would create it under the caller's umask (0644, readable by
every local user) and follow whatever symlink a repository planted on the way. This scan
makes that a decision: every such call outside the helper is listed below with the reason
it is not state, or how it is made private anyway. A new one fails here until it uses
private_files or is added with its reason; an entry whose call is gone fails too.
"""

from __future__ import annotations

import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "invincat_server"

RAW_CALLS = {
    "write_text": re.compile(r"\.write_text\("),
    "write_bytes": re.compile(r"\.write_bytes\("),
    "mkdir": re.compile(r"\.mkdir\(|os\.mkdir\(|os\.makedirs\("),
    "os.open": re.compile(r"\bos\.open\("),
    "replace/rename": re.compile(r"os\.replace\(|os\.rename\(|\.rename\(|shutil\.(copy|move)"),
    "tempfile": re.compile(r"mkstemp\(|NamedTemporaryFile\(|mkdtemp\("),
    "sqlite connect": re.compile(r"sqlite3?\.connect\("),
    "open for writing": re.compile(r"""open\([^)]*["'](w|a|x|r\+)b?["']"""),
    "touch": re.compile(r"\.touch\("),
}

ALLOWED: dict[tuple[str, str], str] = {
    ("cli.py", "os.open"): "opens /dev/null",
    ("lsp/server.py", "os.open"): "opens /dev/null",
    ("runtime/records.py", "sqlite connect"): (
        "prepare_sqlite creates threads.sqlite 0600 first (SQLite gives -wal/-shm its mode); "
        "the others are read-only (mode=ro) or on the file Records.open prepared"
    ),
    ("runtime/thread_store.py", "sqlite connect"): "after private_files.prepare_sqlite",
    ("runtime/checkpoint_reader.py", "sqlite connect"): "read-only (mode=ro), creates nothing",
    ("runtime/policy/settings_watch.py", "mkdir"): (
        "restores the user's own settings file through their symlink, keeping its mode"
    ),
    ("runtime/policy/settings_watch.py", "tempfile"): "the same restore (mkstemp: 0600)",
    ("runtime/policy/settings_watch.py", "open for writing"): "the same restore",
    ("runtime/policy/settings_watch.py", "replace/rename"): "the same restore",
    ("runtime/approvals.py", "replace/rename"): (
        "sets a damaged approvals.json aside under $INVINCAT_HOME (renamed, mode kept)"
    ),
    ("runtime/checkpoints/restore.py", "mkdir"): (
        "a rewind recreates the user's project folders (no link followed, mode as any folder)"
    ),
    ("runtime/checkpoints/restore.py", "os.open"): (
        "a rewind's project files and folders: O_NOFOLLOW from the root, the file's own mode"
    ),
    ("runtime/checkpoints/restore.py", "replace/rename"): "the same restore, by rename",
    ("runtime/checkpoints/tree.py", "os.open"): "reads project files (O_RDONLY | O_NOFOLLOW)",
    ("runtime/memory/sharing.py", "os.open"): (
        "the repository's committed .gitattributes: O_NOFOLLOW under the work tree's top, "
        "keeping its mode (a new one 0666 less the umask, as git makes it), not 0600"
    ),
    ("runtime/tools/documents.py", "mkdir"): "the user's project files, after approval",
    ("runtime/tools/documents.py", "write_bytes"): "the user's project files, after approval",
    ("runtime/tools/documents.py", "write_text"): "calls the documents seam",
    ("runtime/tools/turn_documents.py", "write_text"): "forwards to the turn's documents seam",
    ("lsp/features/checkpoints.py", "write_text"): (
        "a rewind puts an open file's text in its editor buffer (EditorDocuments seam)"
    ),
    ("runtime/extensions/mcp/client.py", "open for writing"): (
        "os.fdopen of the fd private_files.open_file gave"
    ),
    ("runtime/context/offload.py", "open for writing"): (
        "os.fdopen of the fd private_files.open_file gave"
    ),
    ("runtime/sandbox/landlock.py", "os.open"): (
        "O_PATH | O_NOFOLLOW handles of the folders a Landlock rule names; opens no file"
    ),
    ("runtime/sandbox/gate.py", "tempfile"): (
        "mkdtemp (0700): a sandboxed command's private /tmp, removed after the command"
    ),
    ("lsp/transport.py", "tempfile"): "the token file: mkstemp (0600), replaced, never followed",
    ("lsp/transport.py", "open for writing"): "os.fdopen of that mkstemp fd",
    ("lsp/transport.py", "replace/rename"): "the token file's atomic replace",
    ("warm/common.py", "mkdir"): "the warm server's runtime dir: 0700, owner and mode checked",
    ("warm/client.py", "os.open"): "the warm server's log, 0600, in that 0700 dir",
    ("warm/server.py", "os.open"): "the warm server's lock and log, 0600, in that 0700 dir",
    ("warm/server.py", "open for writing"): "fd 2 and the log fd opened 0600 above",
    ("warm/worker_records.py", "mkdir"): "workers' records folder, 0700, in the 0700 runtime dir",
    ("warm/worker_records.py", "os.open"): "a worker's record, 0600, O_NOFOLLOW, in that folder",
    ("warm/worker_records.py", "open for writing"): "the record's fd opened 0600 above",
}


def raw_calls() -> set[tuple[str, str]]:
    found = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith("testing/") or rel == "runtime/private_files.py":
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            code = line.split("#", 1)[0]
            for kind, pattern in RAW_CALLS.items():
                if pattern.search(code):
                    found.add((rel, kind))
    return found


def test_state_files_are_created_and_opened_only_through_private_files() -> None:
    found = raw_calls()
    new = sorted(found - set(ALLOWED))
    assert new == [], (
        "create or open Invincat's files through runtime/private_files.py (0600/0700, no "
        f"link followed), or add the call to ALLOWED with its reason: {new}"
    )
    gone = sorted(set(ALLOWED) - found)
    assert gone == [], f"no longer there: remove from ALLOWED: {gone}"
