"""Whether the words of a shell command name only paths inside the workspace.

A word is checked as a path when it looks like one (`/`, `~`, `.`, a slash inside) or
names an existing entry of the folder it is read in (a symlink there may point out). Also
checked: the value of `--opt=path`, `-opath` and `KEY=path`, each part of `a:b`, and each
match of a wildcard. Symlinks are followed (`realpath`). After `cd DIR` later words are
read in DIR as well as in the workspace root (in a pipeline `cd` changes nothing, so both
are checked).
"""

from __future__ import annotations

import glob
import itertools
import os
import re
from collections.abc import Sequence
from pathlib import Path

MAX_GLOB_MATCHES = 500
_URL_SCHEME = ("http://", "https://", "ssh://", "git://", "file://", "git+")
_GLOB_CHARS = frozenset("*?[")
_DOT_WILDCARD = re.compile(r"(^|/)\.[*?\[]")
_DIRECTORY_STACK = re.compile(r"^~([+-]|\d)")


class OutsideWorkspace(Exception):
    """A word names a path outside the workspace (or one that cannot be checked)."""


def _candidates(word: str) -> list[str]:
    """The parts of one word that may name a path (`--out=../x` gives `../x`)."""
    if word.startswith("-"):
        value = word.split("=", 1)[1] if "=" in word else word[2:]
        return [value] if value.startswith(("/", "~", ".")) or "/" in value else []
    if word.startswith(_URL_SCHEME):
        return []
    parts = [word]
    if "=" in word:
        parts.append(word.split("=", 1)[1])
    return [*parts, *(piece for part in parts for piece in part.split(":"))]


def _inside(path: str, base: str, root: str) -> bool:
    if _DIRECTORY_STACK.match(path):
        return False  # `~+`, `~-`, `~2`: bash's $PWD, $OLDPWD, the directory stack
    real = os.path.realpath(os.path.join(base, os.path.expanduser(path)))
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


def _expanded(candidate: str, base: str) -> list[str]:
    if not _GLOB_CHARS & set(candidate):
        return [candidate]
    if _DOT_WILDCARD.search(candidate):
        raise OutsideWorkspace(f"`{candidate}` may match `..` (bash before 5.2 does)")
    pattern = os.path.expanduser(candidate)
    matches = list(itertools.islice(glob.iglob(pattern, root_dir=base), MAX_GLOB_MATCHES + 1))
    if len(matches) > MAX_GLOB_MATCHES:
        raise OutsideWorkspace("its wildcard matches too many files to check")
    return [candidate, *matches]


def _check_word(word: str, bases: Sequence[str], root: str) -> None:
    for candidate, base in itertools.product(_candidates(word), bases):
        if not candidate:
            continue
        for path in _expanded(candidate, base):
            looks_like_path = path.startswith(("/", "~", ".")) or "/" in path
            if not looks_like_path and not os.path.lexists(os.path.join(base, path)):
                continue
            if not _inside(path, base, root):
                raise OutsideWorkspace(f"`{word}` is outside the workspace")


def check(commands: Sequence[Sequence[str]], workspace: Path) -> None:
    """Raise OutsideWorkspace unless every word of every command stays inside."""
    root = os.path.realpath(workspace)
    bases = [root]
    for words in commands:
        for word in words:
            _check_word(word, bases, root)
        if words and words[0] == "cd":
            if len(words) != 2 or words[1] == "-":
                raise OutsideWorkspace("`cd` goes home or back to a folder not shown")
            bases += [os.path.realpath(os.path.join(base, words[1])) for base in bases]
