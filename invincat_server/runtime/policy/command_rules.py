"""What an 'always allow' rule for `execute` is offered as, and which commands it covers.

A rule is a command prefix of whole words, as narrow as is still useful: the program and
its subcommand (`git status`, `pytest`, `npm run test`, `python -m pytest`, `uv run
pytest`). It covers a command only when all of these hold:

- bash's own grammar (bashlex, a port of bash's parser) reads the command as simple
  commands joined by `&&`, `||`, `;`, `|` or newlines; anything else (substitution,
  `$VAR`, assignments, subshells, loops, here-documents, background jobs, what the parser
  cannot read) is never covered;
- no simple command is one of `dangerous_commands` (deleting, escalating, running code
  given as an argument, network, rewriting git history);
- no argument or redirection names a path that resolves (symlinks too) outside the
  workspace, and no redirection writes a file;
- EVERY simple command is covered by a rule at least as narrow as the one that would be
  offered for it now, so an old broad rule (`python`, `npm run`) covers no more than a
  new one would. A chained command is offered no rule of its own: each part is shown and
  remembered alone.

The same checks run when a rule is offered and when it is matched: a rules file written
before them (`approvals.json` may hold `rm` or `python`) grants no more than they allow.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from invincat_server.runtime.policy import command_paths
from invincat_server.runtime.policy.dangerous_commands import why_never_remembered

MAX_COMMAND_CHARS = 4000
"""Longer commands are asked every time (and never handed to the parser)."""
# Options before the subcommand make the whole command the rule (`make -j4 test`).
_SUBCOMMAND_TOOLS = frozenset(
    {
        *("git", "npm", "pnpm", "yarn", "cargo", "go", "uv", "pip", "pip3", "poetry", "pdm"),
        *("hatch", "make", "docker", "podman", "ruff", "gh", "dotnet", "gradle", "mvn"),
        *("bundle", "rake", "mix", "rustup", "conda", "tox", "nox", "just", "pre-commit"),
        *("terraform", "helm", "kubectl", "composer", "cmake", "ninja", "meson"),
    }
)
# `npm run test`: the script name is part of the rule.
_SCRIPT_RUNNERS = {("npm", "run"), ("npm", "run-script"), ("pnpm", "run"), ("yarn", "run")}
# These run the command that follows them, which gets its own narrow rule (`uv run pytest`).
_COMMAND_RUNNERS = {
    ("uv", "run"): 2,
    ("poetry", "run"): 2,
    ("pdm", "run"): 2,
    ("hatch", "run"): 2,
    ("pipx", "run"): 2,
    ("npm", "exec"): 2,
    ("pnpm", "exec"): 2,
    ("pnpm", "dlx"): 2,
    ("yarn", "dlx"): 2,
    ("uvx",): 1,
    ("npx",): 1,
    ("bunx",): 1,
}


@dataclass(frozen=True)
class Offer:
    """The rule offered for one command: `prefix`, or None and `reason` why not."""

    prefix: str | None
    reason: str | None = None


class NotCoverable(Exception):
    """The command cannot be covered by a rule; the message says why."""


def _runner(words: Sequence[str]) -> int | None:
    """How many words of `words` are a runner of the command that follows them."""
    for key, length in _COMMAND_RUNNERS.items():
        if tuple(words[:length]) == key:
            return length
    return None


def rule_words(words: Sequence[str]) -> list[str]:
    """The narrowest useful rule for one simple command; raises NotCoverable."""
    reason = why_never_remembered(words)
    if reason is not None:
        raise NotCoverable(f"`{os.path.basename(words[0])}`: {reason}")
    length = _runner(words)
    if length is not None:
        inner = words[length:]
        if not inner or inner[0].startswith("-"):
            # `uv run --with x python -c ...`: which words are the program is the runner's
            # business, so the dangerous-program check could not be sure to see it.
            raise NotCoverable(f"`{' '.join(words[:length])}` with options first")
        return [*words[:length], *rule_words(inner)]
    if len(words) == 1:
        return list(words)
    if words[1].startswith("-") and os.path.basename(words[0]) in _SUBCOMMAND_TOOLS:
        return list(words)
    if (words[0], words[1]) in _SCRIPT_RUNNERS and len(words) > 2:
        return list(words[:3]) if not words[2].startswith("-") else list(words)
    if os.path.basename(words[0]) in _SUBCOMMAND_TOOLS or words[1] == "-m":
        return list(words[: 3 if words[1] == "-m" else 2])
    return list(words[:1])


# --- reading the command -------------------------------------------------------------

# `{a,b}` and `{1..3}`: bash expands them into several words (bashlex does not).
_GLOB_CHARS = frozenset("*?[")
_BRACES = re.compile(r"\{[^{}]*(,|\.\.)[^{}]*\}")


def _word_text(node: Any, command: str) -> str:
    """A word with its quotes removed; expansions make the command uncoverable, and so
    does quoting that bashlex and shlex read differently (`"r"'m'`: bashlex keeps a
    quote, bash runs `rm`)."""
    for part in getattr(node, "parts", None) or []:
        if part.kind != "tilde":
            raise NotCoverable("it expands variables or substitutes commands")
    word = str(node.word)
    try:
        agreed = shlex.split(command[node.pos[0] : node.pos[1]]) == [word]
    except ValueError:
        agreed = False
    if not agreed:
        raise NotCoverable("its quoting can be read more than one way")
    if _BRACES.search(word):
        raise NotCoverable("it has a brace expansion (`{a,b}`, `{1..3}`)")
    return word


@dataclass
class Segment:
    """One simple command: its words, and the files its `<` redirections read."""

    words: list[str] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)


def _redirect(node: Any, segment: Segment, command: str) -> None:
    if node.type in ("<<", "<<-"):
        raise NotCoverable("it has a here-document (its text is expanded by the shell)")
    target = node.output
    if isinstance(target, int) or target == "-":
        return  # `2>&1`, `2>&-`: one descriptor onto another, or closed
    path = _word_text(target, command)
    if node.type == "<<<":
        return  # a here-string: text on stdin, not a path
    if node.type == "<":
        segment.reads.append(path)
    elif path != "/dev/null":
        raise NotCoverable("it writes a file through a redirection")


def _simple_command(node: Any, command: str) -> Segment:
    segment = Segment()
    for part in node.parts:
        if part.kind == "word":
            segment.words.append(_word_text(part, command))
        elif part.kind == "redirect":
            _redirect(part, segment, command)
        else:  # assignment (`PATH=... pytest`), reserved words, anything else
            raise NotCoverable("it sets variables or uses shell syntax beyond plain commands")
    if not segment.words:
        raise NotCoverable("it has a redirection but no command")
    return segment


def _segments(node: Any, command: str, into: list[Segment]) -> None:
    if node.kind == "command":
        into.append(_simple_command(node, command))
    elif node.kind in ("list", "pipeline"):
        for part in node.parts:
            _segments(part, command, into)
    elif node.kind == "operator" and node.op in ("&&", "||", ";", "\n"):
        return
    elif node.kind == "pipe" and node.pipe == "|":
        return
    else:  # `&`, `|&`, subshells, loops, conditionals, functions
        raise NotCoverable("it uses shell syntax beyond plain commands joined by && || ; |")


def simple_commands(command: object) -> list[Segment]:
    """Each simple command in `command`; raises NotCoverable."""
    if not isinstance(command, str) or not command.strip():
        raise NotCoverable("the command is not a non-empty string")
    if "\x00" in command or len(command) > MAX_COMMAND_CHARS:
        raise NotCoverable("the command is too long or holds a NUL byte")
    # Imported here: loading its parser tables takes a few tenths of a second, which only
    # a session that checks a shell command should pay.
    import bashlex

    found: list[Segment] = []
    try:
        for tree in bashlex.parse(command):
            _segments(tree, command, found)
    except NotCoverable:
        raise
    except Exception as exc:  # any failure reading the parser's tree means: ask
        raise NotCoverable("the shell parser cannot read it") from exc
    return found


# --- offering and matching -----------------------------------------------------------


def _narrowest_rules(segments: Sequence[Segment], workspace: Path) -> list[list[str]]:
    """`rule_words` of each simple command, once all their paths are known to stay inside
    the workspace; raises NotCoverable."""
    narrowest = [rule_words(s.words) for s in segments]  # what it does: the telling reason
    for segment, rule in zip(segments, narrowest, strict=True):
        # bash would replace a wildcard here by file names (`r? -rf x` runs a file `rm`):
        # the checks above would not have seen the real program, subcommand or option.
        named = [*rule, *(word for word in segment.words if word.startswith("-"))]
        if any(_GLOB_CHARS & set(word) for word in named):
            raise NotCoverable("a wildcard stands for the program, subcommand or an option")
    try:
        command_paths.check([[*s.words, *s.reads] for s in segments], workspace)
    except command_paths.OutsideWorkspace as exc:
        raise NotCoverable(str(exc)) from exc
    return narrowest


def offer(command: object, workspace: Path) -> Offer:
    """The rule to offer for `command`, or why none is offered."""
    try:
        segments = simple_commands(command)
        narrowest = _narrowest_rules(segments, workspace)
        if len(segments) > 1:
            raise NotCoverable(
                "it chains several commands; 'always' is offered for each one run alone"
            )
        return Offer(shlex.join(narrowest[0]))
    except NotCoverable as exc:
        return Offer(None, str(exc))


def _rule_covers(rule: str, words: Sequence[str], narrowest: Sequence[str]) -> bool:
    try:
        stored = shlex.split(rule)
    except ValueError:
        return False  # an old exact-command rule with unbalanced quotes
    return (
        len(narrowest) <= len(stored) <= len(words)
        and list(words[: len(stored)]) == stored
        and list(stored[: len(narrowest)]) == list(narrowest)
    )


def covered(command: object, rules: Iterable[str | None], workspace: Path) -> bool:
    """True when the stored rule prefixes `rules` cover every part of `command`."""
    prefixes = [rule for rule in rules if isinstance(rule, str)]
    if not prefixes:
        return False
    try:
        segments = simple_commands(command)
        narrowest = _narrowest_rules(segments, workspace)
        return all(
            any(_rule_covers(rule, segment.words, narrow) for rule in prefixes)
            for segment, narrow in zip(segments, narrowest, strict=True)
        )
    except NotCoverable:
        return False
