"""glob and grep over the workspace.

Both run ripgrep (runtime/tools/ripgrep.py) when its binary is there: fast on large trees
and it respects `.gitignore`. Without it they walk the tree themselves (rather than
Path.glob / Path.rglob) so they can prune bulky directories like node_modules before
descending into them. Either way they never follow symlinks out of the workspace, never
show protected files (each result goes through the workspace's deny hook), cap their
output, skip binary files, and stop when the caller is cancelled.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any, TypeVar

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, InjectedToolCallId, ToolException
from pydantic import BaseModel, Field

from invincat_server.runtime.policy.workspace import ProtectedPathError, Workspace
from invincat_server.runtime.tool_outcome import declined
from invincat_server.runtime.tools import ripgrep
from invincat_server.runtime.tools.documents import DiskOnly, DocumentSource, is_binary
from invincat_server.runtime.tools.files import (
    capped_listing,
    make_tool,
    split_lines,
    tool_errors,
)

__all__ = ["SKIP_DIRS", "GlobMatcher", "build_search_tools"]

# Directories that are never useful to search and can be enormous.
# `.invincat/` holds the memory stores, journals and locks: never searched (spec §9).
SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "__pycache__", ".invincat"})
GLOB_MAX_RESULTS = 500
GREP_MAX_MATCHES = 200
GREP_MAX_FILE_BYTES = 2 * 1024 * 1024
GREP_MAX_LINE_CHARS = 500

T = TypeVar("T")

log = logging.getLogger("invincat.tools.search")


# --------------------------------------------------------------------------- glob patterns


def _expand_braces(pattern: str) -> list[str]:
    # Not pathlib syntax, but models write `*.{ts,tsx}` constantly; expanding it is
    # friendlier than matching nothing.
    depth = 0
    start = -1
    for i, char in enumerate(pattern):
        if char == "{":
            if depth == 0:
                start = i
            depth += 1
        elif char == "}" and depth:
            depth -= 1
            if depth == 0:
                options = _split_top_level_commas(pattern[start + 1 : i])
                if len(options) < 2:
                    continue
                head, tail = pattern[:start], pattern[i + 1 :]
                return [
                    expanded
                    for option in options
                    for expanded in _expand_braces(head + option + tail)
                ]
    return [pattern]


def _split_top_level_commas(text: str) -> list[str]:
    parts: list[str] = []
    depth = 0
    current = ""
    for char in text:
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        current += char
    parts.append(current)
    return parts


def _translate_segment(segment: str) -> str:
    """One path segment of a glob to a regex; wildcards never cross '/'."""
    out: list[str] = []
    i = 0
    while i < len(segment):
        char = segment[i]
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = segment.find("]", i + 2 if segment[i + 1 : i + 2] in ("!", "^") else i + 1)
            if end == -1:
                out.append(re.escape(char))
            else:
                body = segment[i + 1 : end]
                if body.startswith(("!", "^")):
                    body = "^/" + body[1:]  # a negated class must not match the separator
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


class GlobMatcher:
    """pathlib-style glob (with ``**``) matched against '/'-separated relative paths.

    ``*``, ``?`` and ``[...]`` match within one path segment (dotfiles included, as in
    pathlib); ``**`` matches any number of whole segments, including none; a trailing
    ``**`` matches everything below. ``{a,b}`` alternatives are expanded.
    """

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        regexes: list[str] = []
        depths: list[int | None] = []
        for expanded in _expand_braces(pattern):
            parts = [part for part in expanded.split("/") if part not in ("", ".")]
            if not parts:
                raise ToolException(f"Glob pattern {pattern!r} matches nothing.")
            if ".." in parts:
                raise ToolException(
                    f"Glob pattern {pattern!r} may not contain '..'; pass a different "
                    "`path` to search elsewhere in the workspace."
                )
            pieces: list[str] = []
            for index, part in enumerate(parts):
                last = index == len(parts) - 1
                if part == "**":
                    pieces.append("(?:[^/]+/)*[^/]+" if last else "(?:[^/]+/)*")
                else:
                    pieces.append(_translate_segment(part) + ("" if last else "/"))
            regexes.append("".join(pieces))
            depths.append(None if "**" in parts else len(parts))
        try:
            self._regex = re.compile("|".join(f"(?:{r})" for r in regexes), re.DOTALL)
        except re.error as exc:
            raise ToolException(f"Invalid glob pattern {pattern!r}: {exc}.") from exc
        # Without '**' nothing deeper than the pattern can match; lets the walk stop early.
        self.max_depth: int | None = (
            None if any(depth is None for depth in depths) else max(d for d in depths if d)
        )
        self.has_slash = any("/" in expanded for expanded in _expand_braces(pattern))

    def match(self, relpath: str) -> bool:
        return self._regex.fullmatch(relpath) is not None


# --------------------------------------------------------------------------- walking


def _walk(base: Path, max_depth: int | None = None) -> Iterator[tuple[str, Path, bool]]:
    """Yield (relative posix path, path, is_dir) below ``base``, sorted, pruned.

    Symlinked directories are yielded but never descended into (os.walk with
    followlinks=False), so a link cannot lead the walk out of the workspace or loop.
    """
    for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
        current = Path(dirpath)
        rel_dir = current.relative_to(base).as_posix()
        prefix = "" if rel_dir == "." else rel_dir + "/"
        depth = 0 if rel_dir == "." else rel_dir.count("/") + 1
        dirnames[:] = sorted(name for name in dirnames if name not in SKIP_DIRS)
        for name in dirnames:
            yield prefix + name, current / name, True
        for name in sorted(filenames):
            yield prefix + name, current / name, False
        if max_depth is not None and depth + 1 >= max_depth:
            dirnames[:] = []


def _inside(workspace: Workspace, path: Path) -> bool:
    # Protected files (a hard link to a memory store elsewhere in the tree) never show up.
    if workspace.deny is not None and not path.is_dir() and workspace.denied(path):
        return False
    # Only symlinks need the (slower) realpath check: everything else under a resolved
    # base is inside by construction.
    if not path.is_symlink():
        return True
    return workspace.contains(Path(os.path.realpath(path)))


def _glob(workspace: Workspace, base: Path, matcher: GlobMatcher, stop: threading.Event) -> str:
    matches: list[str] = []
    for rel, path, is_dir in _walk(base, matcher.max_depth):
        if stop.is_set():
            break
        if matcher.match(rel) and _inside(workspace, path):
            display = workspace.relative(path)
            matches.append(display + "/" if is_dir else display)
    return _format_glob(workspace, base, matcher, matches)


def _grep_candidates(
    workspace: Workspace, base: Path, name_filter: GlobMatcher | None, stop: threading.Event
) -> list[Path]:
    files: list[Path] = []
    for rel, path, is_dir in _walk(base):
        if stop.is_set():
            break
        if is_dir:
            continue
        if name_filter is not None:
            subject = rel if name_filter.has_slash else path.name
            if not name_filter.match(subject):
                continue
        if _inside(workspace, path):
            files.append(path)
    # Path order (directory by directory, names sorted), as `rg --sort path` gives it.
    files.sort(key=lambda p: p.parts)
    return files


def _grep(
    workspace: Workspace,
    regex: re.Pattern[str],
    files: list[Path],
    overlays: dict[Path, str],
    stop: threading.Event,
) -> tuple[list[str], bool]:
    """Matching lines as ``relpath:lineno: text``; the flag says the cap was hit."""
    results: list[str] = []
    for path in files:
        if stop.is_set():
            break
        text = overlays.get(path)
        if text is None:
            try:
                if path.stat().st_size > GREP_MAX_FILE_BYTES:
                    continue
                data = path.read_bytes()
            except OSError:
                continue  # vanished or unreadable mid-walk: not worth failing the search
            if is_binary(data):
                continue
            text = data.decode("utf-8", errors="replace")
        display = workspace.relative(path)
        for number, line in enumerate(split_lines(text), start=1):
            if regex.search(line):
                if len(results) == GREP_MAX_MATCHES:
                    return results, True
                if len(line) > GREP_MAX_LINE_CHARS:
                    line = line[:GREP_MAX_LINE_CHARS] + "... [line truncated]"
                results.append(f"{display}:{number}: {line}")
    return results, False


def _check_single_file(path: Path, display: str) -> None:
    # An explicitly named file that would be skipped in a tree walk deserves an
    # explanation rather than a misleading "No matches".
    if path.stat().st_size > GREP_MAX_FILE_BYTES:
        raise ToolException(f"{display} is larger than 2 MB; grep skips files that large.")
    with path.open("rb") as handle:
        if is_binary(handle.read()):
            raise ToolException(f"{display} is a binary file; grep only searches text files.")


# --------------------------------------------------------------------------- tools


class GlobArgs(BaseModel):
    pattern: str = Field(
        description="Glob pattern relative to `path`, e.g. '**/*.py' (any depth), "
        "'src/*.ts', '*.{js,jsx}'."
    )
    path: str = Field(default=".", description="Directory to search from (workspace-relative).")
    tool_call_id: Annotated[str, InjectedToolCallId]


class GrepArgs(BaseModel):
    pattern: str = Field(
        description="Python regular expression, matched against each line "
        "(use (?i) for case-insensitive)."
    )
    path: str = Field(default=".", description="File or directory to search (workspace-relative).")
    glob: str | None = Field(
        default=None,
        description="Only search files whose name matches this glob, e.g. '*.py' or "
        "'*.{ts,tsx}'; a pattern with '/' is matched against the path below `path`.",
    )
    tool_call_id: Annotated[str, InjectedToolCallId]


def _glob_entries(base: str, files: list[str]) -> list[tuple[str, bool]]:
    """(path relative to `base`, is_dir) for ripgrep's file list and the directories holding
    those files (ripgrep lists no directories; empty or wholly ignored ones are left out)."""
    cut = len(base.rstrip("/")) + 1
    entries: dict[str, bool] = {}
    for path in files:
        rel = path[cut:]
        entries[rel] = False
        parent = rel.rpartition("/")[0]
        while parent and parent not in entries:
            entries[parent] = True
            parent = parent.rpartition("/")[0]
    return list(entries.items())


def _glob_with_rg(workspace: Workspace, base: Path, matcher: GlobMatcher, files: list[str]) -> str:
    shown_base = workspace.relative(base)
    prefix = "" if shown_base == "." else shown_base + "/"
    matches: list[str] = []
    for rel, is_dir in _glob_entries(str(base), files):
        if matcher.max_depth is not None and rel.count("/") >= matcher.max_depth:
            continue
        if not matcher.match(rel):
            continue
        path = base / rel
        # ripgrep lists no symlinks and enters no symlinked directory (no --follow); the
        # check stays, cheap for real paths, in case a path changed since it was listed.
        if not is_dir and workspace.denied(path):
            continue
        if os.path.islink(path) and not workspace.contains(Path(os.path.realpath(path))):
            continue
        matches.append(prefix + rel + ("/" if is_dir else ""))
    return _format_glob(workspace, base, matcher, matches)


def _format_glob(workspace: Workspace, base: Path, matcher: GlobMatcher, matches: list[str]) -> str:
    if not matches:
        return f"No files match {matcher.pattern!r} under {workspace.relative(base)}."
    return capped_listing(
        matches,
        GLOB_MAX_RESULTS,
        lambda total: (
            f"... showing the first {GLOB_MAX_RESULTS} of {total} matches; "
            "use a narrower pattern or path."
        ),
    )


class _RgGrep:
    """grep over a directory with ripgrep; open editor buffers are searched in Python."""

    def __init__(
        self,
        rg: str,
        workspace: Workspace,
        documents: DocumentSource,
        base: Path,
        regex: re.Pattern[str],
        name_filter: GlobMatcher | None,
    ) -> None:
        self.rg = rg
        self.workspace = workspace
        self.documents = documents
        self.base = base
        self.regex = regex
        self.name_filter = name_filter
        # A glob with '/' is matched against the path below `base`, which ripgrep's
        # name-only type filter cannot express: those are filtered here only.
        self.rg_glob = name_filter.pattern if name_filter and not name_filter.has_slash else None
        self._binary: dict[Path, bool] = {}
        self._verdicts: dict[Path, bool] = {}

    def _wanted(self, path: Path) -> bool:
        verdict = self._verdicts.get(path)
        if verdict is None:
            verdict = self._name_ok(path) and _inside(self.workspace, path)
            self._verdicts[path] = verdict
        return verdict

    def _name_ok(self, path: Path) -> bool:
        if self.name_filter is None:
            return True
        rel = path.relative_to(self.base).as_posix()
        return self.name_filter.match(rel if self.name_filter.has_slash else path.name)

    def _is_binary(self, path: Path) -> bool:
        # ripgrep drops a file when a NUL shows up, but lines before it may already have
        # been printed; the Python walk skips such a file whole, and so do we.
        known = self._binary.get(path)
        if known is None:
            try:
                known = is_binary(path.read_bytes())
            except OSError:
                known = True
            self._binary[path] = known
        return known

    async def run(self) -> tuple[list[str], bool]:
        overlays: dict[Path, str] = {}
        if not isinstance(self.documents, DiskOnly):
            files = await ripgrep.list_files(
                self.rg, self.base, skip_dirs=SKIP_DIRS, name_glob=self.rg_glob
            )
            overlays = {
                p: text
                for p in map(Path, files)
                # The buffer lookup first: it is cheap, the protection check is not.
                if (text := self.documents.read_text(p)) is not None and self._wanted(p)
            }
        found, capped = await ripgrep.search(
            self.rg,
            self.base,
            self.regex.pattern,
            skip_dirs=SKIP_DIRS,
            max_file_bytes=GREP_MAX_FILE_BYTES,
            name_glob=self.rg_glob,
            accept=lambda m: (
                m.path not in overlays and self._wanted(m.path) and not self._is_binary(m.path)
            ),
            limit=GREP_MAX_MATCHES,
        )
        hits = [(m.path.parts, m.line_number, m.path, m.text) for m in found]
        for path, text in overlays.items():
            for number, line in enumerate(split_lines(text), start=1):
                if self.regex.search(line):
                    hits.append((path.parts, number, path, line))
        hits.sort(key=lambda hit: (hit[0], hit[1]))
        capped = capped or len(hits) > GREP_MAX_MATCHES
        results = []
        for _, number, path, line in hits[:GREP_MAX_MATCHES]:
            if len(line) > GREP_MAX_LINE_CHARS:
                line = line[:GREP_MAX_LINE_CHARS] + "... [line truncated]"
            results.append(f"{self.workspace.relative(path)}:{number}: {line}")
        return results, capped


_AUTO = "auto"


async def _python_grep(
    workspace: Workspace,
    documents: DocumentSource,
    base: Path,
    display: str,
    regex: re.Pattern[str],
    name_filter: GlobMatcher | None,
) -> tuple[list[str], bool]:
    """grep by walking the tree in Python (no rg, or a single file)."""
    single_file = not base.is_dir()
    if single_file:
        files = [base]
    else:
        files = await _run_in_thread(_grep_candidates, workspace, base, name_filter)
    # Open editor buffers win over disk, as in read_file, so line numbers match
    # what the user sees. read_text is called here on the event loop, where the
    # editor integration lives, not from the worker thread.
    overlays = {p: text for p in files if (text := documents.read_text(p)) is not None}
    if single_file and base not in overlays:
        await asyncio.to_thread(_check_single_file, base, display)
    return await _run_in_thread(_grep, workspace, regex, files, overlays)


async def _run_in_thread(func: Callable[..., T], *args: Any) -> T:
    """Run blocking search work off the event loop; on cancellation tell it to stop."""
    stop = threading.Event()
    try:
        return await asyncio.to_thread(func, *args, stop)
    except asyncio.CancelledError:
        stop.set()
        raise


async def _run_glob(
    workspace: Workspace, rg_path: str | None, pattern: str, tool_call_id: str, path: str
) -> str | ToolMessage:
    if pattern.startswith("/"):
        raise ToolException(
            f"Glob pattern {pattern!r} must be relative; use `path` to choose the "
            "directory to search from."
        )
    matcher = GlobMatcher(pattern)
    try:
        base = workspace.resolve(path)
    except ProtectedPathError as exc:
        # The protection refused the path: declined, like the file tools do.
        return declined(str(exc), tool_call_id=tool_call_id, name="glob")
    if not base.is_dir():
        what = "is a file, not a directory" if base.exists() else "does not exist"
        raise ToolException(f"{workspace.relative(base)} {what}; glob needs a directory.")
    if rg_path is not None:
        try:
            files = await ripgrep.list_files(rg_path, base, skip_dirs=SKIP_DIRS)
            return await asyncio.to_thread(_glob_with_rg, workspace, base, matcher, files)
        except ripgrep.RipgrepFailed as exc:
            log.info("rg failed (%s); glob falls back to the Python walk", exc)
    return await _run_in_thread(_glob, workspace, base, matcher)


async def _run_grep(
    workspace: Workspace,
    documents: DocumentSource,
    rg_path: str | None,
    pattern: str,
    tool_call_id: str,
    path: str,
    glob: str | None,
) -> str | ToolMessage:
    try:
        regex = re.compile(pattern)
    except re.error as exc:
        raise ToolException(
            f"Invalid regular expression {pattern!r}: {exc}. Patterns use Python "
            "`re` syntax; escape special characters such as ( [ . * with a backslash."
        ) from exc
    name_filter = GlobMatcher(glob) if glob else None
    try:
        base = workspace.resolve(path)
    except ProtectedPathError as exc:
        return declined(str(exc), tool_call_id=tool_call_id, name="grep")
    display = workspace.relative(base)
    if not base.exists():
        raise ToolException(f"Path not found: {display}.")
    results: list[str] | None = None
    capped = False
    # A NUL cannot travel in ripgrep's argv; the Python walk takes such a pattern or glob
    # (it matches nothing, since files with a NUL are binary and skipped).
    argv_safe = "\0" not in pattern and "\0" not in (glob or "")
    if rg_path is not None and base.is_dir() and argv_safe:
        searcher = _RgGrep(rg_path, workspace, documents, base, regex, name_filter)
        try:
            results, capped = await searcher.run()
        except ripgrep.RipgrepFailed as exc:
            log.info("rg failed (%s); grep falls back to the Python walk", exc)
    if results is None:
        results, capped = await _python_grep(
            workspace, documents, base, display, regex, name_filter
        )
    if not results:
        scope = f" in files matching {glob!r}" if glob else ""
        return f"No matches for {pattern!r} in {display}{scope}."
    if capped:
        results.append(
            f"... stopped after {GREP_MAX_MATCHES} matches; narrow the pattern, path or glob."
        )
    return "\n".join(results)


def build_search_tools(
    workspace: Workspace, documents: DocumentSource, *, rg: str | None = _AUTO
) -> list[BaseTool]:
    """glob and grep bound to one workspace and buffer source. `rg`: the ripgrep binary
    to use; found automatically by default, None for the Python walk (tests)."""
    rg_path = ripgrep.find_rg() if rg == _AUTO else rg

    async def glob_tool(pattern: str, tool_call_id: str, path: str = ".") -> str | ToolMessage:
        with tool_errors():
            return await _run_glob(workspace, rg_path, pattern, tool_call_id, path)

    async def grep(
        pattern: str, tool_call_id: str, path: str = ".", glob: str | None = None
    ) -> str | ToolMessage:
        with tool_errors():
            return await _run_grep(workspace, documents, rg_path, pattern, tool_call_id, path, glob)

    return [
        make_tool(
            "glob",
            "Find files and directories by name pattern (pathlib-style glob, `**` = any "
            "depth). Returns workspace-relative paths, sorted, directories ending in `/`; "
            "at most 500. Skips .git, node_modules, .venv, __pycache__ and files .gitignore "
            "excludes.",
            GlobArgs,
            glob_tool,
        ),
        make_tool(
            "grep",
            "Search file contents with a Python regular expression, line by line. Output "
            "lines are `path:line: text`, at most 200. Searches a file or a directory tree "
            "(skipping .git, node_modules, .venv, __pycache__, files .gitignore excludes, "
            "binary files and files over 2 MB); `glob` filters file names, e.g. '*.py'.",
            GrepArgs,
            grep,
        ),
    ]
