"""Simple commands that no 'always allow' rule may cover: each one is asked every time.

These delete, escalate privileges, run code given as an argument or on stdin, reach the
network, or rewrite git history. An approval for one of them is for that call only; the
rule files written before this check existed may still hold broad rules such as `rm` or
`python`, so the check runs when a rule is matched as well as when one is offered.

`why_never_remembered(words)` gets the words of one simple command (quotes removed) and
returns why it is never covered, or None.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence

_DELETES = "it deletes files"
_AS_ANOTHER_USER = "it runs commands as another user"
_RUNS_CODE = "it runs code given as an argument or on stdin"
_RUNS_ANOTHER = "it runs another command given in its arguments"
_DISKS = "it writes to disks or file systems directly"
_NETWORK = "it sends or fetches data over the network"
_SYSTEM = "it stops processes or changes the system"

# Every use of these programs is asked: there is no narrow, harmless form to remember.
_ALWAYS_ASKED: dict[str, str] = {
    **dict.fromkeys(("rm", "shred", "unlink", "srm", "truncate"), _DELETES),
    **dict.fromkeys(("sudo", "su", "doas", "pkexec", "runuser", "chroot"), _AS_ANOTHER_USER),
    **dict.fromkeys(
        ("sh", "bash", "zsh", "fish", "dash", "ksh", "csh", "tcsh", "ash", "mksh", "pwsh"),
        "a shell runs whatever script it is given",
    ),
    **dict.fromkeys(
        ("eval", "exec", "source", ".", "node", "nodejs", "perl", "ruby", "php", "lua", "awk"),
        _RUNS_CODE,
    ),
    **dict.fromkeys(
        ("gawk", "mawk", "nawk", "sed", "Rscript", "osascript", "tclsh", "deno", "bun"),
        _RUNS_CODE,
    ),
    **dict.fromkeys(
        ("xargs", "env", "nohup", "nice", "timeout", "time", "command", "builtin", "setsid"),
        _RUNS_ANOTHER,
    ),
    **dict.fromkeys(
        ("stdbuf", "watch", "parallel", "ionice", "strace", "ltrace", "script", "flock"),
        _RUNS_ANOTHER,
    ),
    **dict.fromkeys(
        ("dd", "fdisk", "sfdisk", "parted", "wipefs", "mount", "umount", "losetup"), _DISKS
    ),
    **dict.fromkeys(
        ("curl", "wget", "ssh", "scp", "sftp", "rsync", "nc", "ncat", "netcat", "socat"),
        _NETWORK,
    ),
    **dict.fromkeys(("telnet", "ftp"), _NETWORK),
    **dict.fromkeys(
        ("kill", "pkill", "killall", "reboot", "shutdown", "halt", "poweroff", "systemctl"),
        _SYSTEM,
    ),
    **dict.fromkeys(("crontab", "at", "launchctl"), _SYSTEM),
}
# python, python3, python3.12, pypy3 ...: only `python -m MODULE` can be remembered.
_PYTHON = re.compile(r"^(python|pypy)(\d+(\.\d+)*)?$")
_MKFS = re.compile(r"^mkfs(\..+)?$|^mke2fs$|^mkswap$")


def _flags(words: Sequence[str]) -> set[str]:
    """Every option in `words`, with short clusters split (`-rf` gives -r and -f)."""
    found: set[str] = set()
    for word in words:
        if word.startswith("--"):
            found.add(word.split("=", 1)[0])
        elif word.startswith("-") and len(word) > 1:
            found.update(f"-{letter}" for letter in word[1:])
    return found


def _python(args: Sequence[str]) -> str | None:
    if len(args) >= 2 and args[0] == "-m":
        return None
    return (
        "a rule for the interpreter would let any Python code run "
        "(only `python -m MODULE` can be remembered)"
    )


def _recursive(args: Sequence[str]) -> str | None:
    if _flags(args) & {"-R", "--recursive"}:
        return "it changes the permissions or owner of a whole tree"
    return None


def _rmdir(args: Sequence[str]) -> str | None:
    return _DELETES if _flags(args) & {"-p", "--parents"} else None


def _find(args: Sequence[str]) -> str | None:
    acting = {"-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0"}
    if acting & set(args) or {"-fprintf", "-fls"} & set(args):
        return "it deletes files, writes files or runs a command for each file found"
    return None


def _tar(args: Sequence[str]) -> str | None:
    runs = {"--to-command", "--use-compress-program", "--checkpoint-action", "--info-script"}
    flags = _flags(args)
    if runs & flags or "--new-volume-script" in flags or "--rsh-command" in flags:
        return _RUNS_ANOTHER
    if any(word in ("-I", "-F") for word in args):
        return _RUNS_ANOTHER
    return None


# git: the subcommand and the options that make it destroy work or run code.
_GIT_GLOBAL_WITH_VALUE = frozenset({"-C", "--git-dir", "--work-tree", "--namespace"})
_GIT_ALWAYS_ASKED = {
    "config": "it can make later git commands run programs",
    "filter-branch": "it rewrites history",
    "filter-repo": "it rewrites history",
    "update-ref": "it moves or deletes references",
    "restore": "it discards uncommitted changes",
    "submodule": "`git submodule foreach` runs a command in every submodule",
    "bisect": "`git bisect run` runs a command",
}
_GIT_DANGEROUS_FLAGS: dict[str, tuple[set[str], str]] = {
    "push": (
        {"-f", "--force", "--force-with-lease", "--force-if-includes", "--delete", "-d"},
        "it overwrites or deletes remote history",
    ),
    "reset": ({"--hard", "--merge", "--keep"}, "it discards uncommitted changes"),
    "clean": ({"-f", "--force"}, _DELETES),
    "checkout": ({"-f", "--force", "-B", "--"}, "it discards uncommitted changes"),
    "switch": ({"-f", "--force", "--discard-changes", "-C"}, "it discards uncommitted changes"),
    "branch": ({"-D", "-d", "--delete", "-f", "--force", "-M"}, "it deletes or moves branches"),
    "tag": ({"-d", "--delete", "-f", "--force"}, "it deletes or moves tags"),
    "stash": (set(), ""),
    "rm": ({"-f", "--force"}, "it deletes uncommitted changes"),
    "rebase": ({"-x", "--exec"}, _RUNS_ANOTHER),
    "reflog": (set(), ""),
    "gc": ({"--prune"}, "it deletes unreachable commits"),
    "difftool": ({"-x", "--extcmd"}, _RUNS_ANOTHER),
    "worktree": ({"-f", "--force"}, _DELETES),
}


def _git_subcommand(args: Sequence[str]) -> tuple[str | None, list[str]]:
    """git's subcommand and the words after it, skipping global options."""
    index = 0
    while index < len(args) and args[index].startswith("-"):
        index += 2 if args[index] in _GIT_GLOBAL_WITH_VALUE else 1
    if index >= len(args):
        return None, []
    return args[index], list(args[index + 1 :])


def _git(args: Sequence[str]) -> str | None:
    if any(word == "-c" or word.startswith(("--config-env", "--exec-path")) for word in args):
        return "it sets configuration that can make git run programs"
    sub, rest = _git_subcommand(args)
    if sub is None:
        return None
    if sub in _GIT_ALWAYS_ASKED:
        return _GIT_ALWAYS_ASKED[sub]
    if sub == "push" and any(word.startswith((":", "+")) for word in rest):
        return "it overwrites or deletes remote history"
    if sub == "stash" and rest[:1] and rest[0] in ("drop", "clear"):
        return "it deletes stashed changes"
    if sub == "reflog" and rest[:1] and rest[0] in ("expire", "delete"):
        return "it deletes history that recovers lost work"
    if sub == "checkout" and "." in rest:
        return "it discards uncommitted changes"
    flags, reason = _GIT_DANGEROUS_FLAGS.get(sub, (set(), ""))
    return reason if flags & (_flags(rest) | set(rest)) else None


_BY_ARGUMENTS: dict[str, Callable[[Sequence[str]], str | None]] = {
    "chmod": _recursive,
    "chown": _recursive,
    "chgrp": _recursive,
    "rmdir": _rmdir,
    "find": _find,
    "tar": _tar,
    "git": _git,
}


def why_never_remembered(words: Sequence[str]) -> str | None:
    """Why no rule may cover this simple command, or None when a rule may."""
    if not words:
        return "it is empty"
    program = os.path.basename(words[0])
    args = words[1:]
    if program in _ALWAYS_ASKED:
        return _ALWAYS_ASKED[program]
    if _MKFS.match(program):
        return _DISKS
    if _PYTHON.match(program):
        return _python(args)
    check = _BY_ARGUMENTS.get(program)
    return check(args) if check is not None else None
