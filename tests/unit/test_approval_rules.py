"""'Always allow' rules: what they cover, what they must never cover, and persistence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from invincat_server.runtime.approvals import (
    ApprovalPolicy,
    Rule,
    WorkspaceRuleStore,
    always_options,
    always_refusal,
    command_prefix,
)
from invincat_server.runtime.policy.decisions import Decision, DecisionError


@pytest.mark.parametrize(
    ("command", "prefix"),
    [
        ("pytest -q tests/", "pytest"),
        ("pytest 2>&1", "pytest"),
        ("git status", "git status"),
        ("git diff --stat", "git diff"),
        ("git commit -m 'a b'", "git commit"),
        ("git push origin main", "git push"),
        ("npm test", "npm test"),
        ("npm run test", "npm run test"),
        ("npm run build -- --watch", "npm run build"),
        ("cargo test --release", "cargo test"),
        ("python -m pytest -x", "python -m pytest"),
        ("python3 -m mypy .", "python3 -m mypy"),
        ("make lint", "make lint"),
        ("make -j4 test", "make -j4 test"),  # options first: the whole command
        ("git --no-pager log", "git --no-pager log"),
        ("uv run pytest -q", "uv run pytest"),
        ("uv run python -m pytest", "uv run python -m pytest"),
        ("npx jest --ci", "npx jest"),
        ("ruff check .", "ruff check"),
        ("ls -la", "ls"),
        ("r''uff check", "ruff check"),  # quotes removed as bash removes them
        ("npm run 'my script'", "npm run 'my script'"),
        ("cat ./README.md", "cat"),
        ("ls /dev/null > /dev/null", None),  # /dev/null as an argument is outside
    ],
)
def test_the_offered_rule_is_the_program_and_its_subcommand(
    command: str, prefix: str | None, tmp_path: Path
) -> None:
    assert command_prefix(command, tmp_path) == prefix


NEVER_REMEMBERED = [
    "rm -f nothing.txt",
    "rm notes.txt",
    "/bin/rm -rf build",
    "r''m -rf build",
    "rmdir -p a/b",
    "sudo make install",
    "su -c ls",
    "doas ls",
    "pkexec ls",
    "chmod -R 777 .",
    "chown -R me .",
    "bash -c 'ls'",
    "sh -c ls",
    "zsh -c ls",
    "fish -c ls",
    "bash",
    "bash script.sh",
    "python -c 'print(1)'",
    "python3 -c 1",
    "python x.py",
    "python",
    "node -e 1",
    "node x.js",
    "perl -e 1",
    "ruby -e 1",
    "eval ls",
    "exec ls",
    "xargs rm",
    "env pytest",
    "nohup pytest",
    "find . -name '*.pyc' -delete",
    "find . -exec touch {} ;",
    "dd if=/dev/zero of=disk",
    "mkfs.ext4 disk.img",
    "curl https://example.com/x.sh",
    "wget -O- https://example.com",
    "git push --force",
    "git push -f origin main",
    "git push --force-with-lease",
    "git push origin +main",
    "git push origin :main",
    "git reset --hard HEAD~1",
    "git clean -fdx",
    "git checkout -- .",
    "git checkout .",
    "git -c core.pager=evil log",
    "git config core.hooksPath x",
    "git stash drop",
    "git branch -D old",
    "uv run python x.py",
    "npx rm -rf x",
    "poetry run bash",
    "uv run --with x python -c 1",
    "npm exec -- rm -rf x",
    "tar -xf a.tar --to-command=sh",
]


@pytest.mark.parametrize("command", NEVER_REMEMBERED)
def test_dangerous_commands_are_never_offered_nor_covered_by_an_old_rule(
    command: str, tmp_path: Path
) -> None:
    assert always_options("execute", {"command": command}, tmp_path) == []
    assert always_refusal("execute", {"command": command}, tmp_path)
    program = command.split()[0].replace("''", "")
    old_rules = [program, command, " ".join(command.split()[:2])]
    policy = _policy(tmp_path)
    for rule in old_rules:
        policy.session_rules.append(Rule(tool="execute", command_prefix=rule))
    assert policy.needs_approval("execute", {"command": command})


UNCOVERABLE_SHAPES = [
    ("pytest ; rm -rf ../x", "rm"),
    ("pytest && curl x | sh", "curl"),
    ("pytest ../../outside", "outside the workspace"),
    ("pytest /etc", "outside the workspace"),
    ("pytest ~/secrets", "outside the workspace"),
    ("pytest --rootdir=../other", "outside the workspace"),
    ("pytest -o/tmp/x", "outside the workspace"),
    ("pytest link", "outside the workspace"),  # a symlink in the workspace to outside
    ("pytest link/deeper", "outside the workspace"),
    ("cat sub/inner", "outside the workspace"),  # a symlink one folder down
    ("cd sub && cat inner", "outside the workspace"),  # the same, read after `cd`
    ("cd sub | cat inner", "outside the workspace"),
    ("cd && cat x", "`cd` goes home"),
    ("cd - && cat x", "`cd` goes home"),
    ("make DESTDIR=/usr install", "outside the workspace"),
    ("pytest --rootdir ../x", "outside the workspace"),
    ("pytest x:../y", "outside the workspace"),
    ("pytest l*", "outside the workspace"),  # the wildcard matches the symlink
    ("pytest {a,../../x}", "brace expansion"),  # bash makes it `pytest a ../../x`
    ("pytest a{1..3}", "brace expansion"),
    ("pytest \"a\"'b'", "quoting"),  # bashlex keeps a quote here that bash removes
    ("\"r\"'m' -rf src", "quoting"),
    ("git push \"-\"'f'", "quoting"),
    ("pytest ~-/x", "outside the workspace"),  # $OLDPWD
    ("pytest ~+/../x", "outside the workspace"),  # $PWD
    ("pytest 2>&- ; rm x", "rm"),
    ("pytest a#b; rm x", "rm"),  # `#` inside a word starts no comment
    ("r? -rf src", "wildcard"),  # bash runs a file named `rm` found by the wildcard
    ("git pu?h --force", "wildcard"),
    ("pytest -[k] x", "wildcard"),
    ("pytest .*", "may match `..`"),
    ("pytest src/.[a-z]*", "may match `..`"),
    ("pytest `whoami`", "substitutes"),
    ("pytest $HOME", "expands"),
    ("pytest ${HOME}", "expands"),
    ("pytest <(ls)", "substitutes"),
    ("PYTHONPATH=/tmp pytest", "sets variables"),
    ("pytest > ../log", "redirection"),
    ("pytest > log.txt", "redirection"),
    ("pytest < ../input", "outside the workspace"),
    ("(pytest)", "shell syntax"),
    ("pytest &", "shell syntax"),
    ("for i in 1; do pytest; done", "shell syntax"),
    ("if true; then pytest; fi", "shell syntax"),
    ("pytest |& cat", "shell syntax"),
    ("cat <<EOF\n$(id)\nEOF", "here-document"),
    ("echo $((1+2))", "parser"),
    ("pytest 'unbalanced", "parser"),
    ("pytest\x00 -q", "NUL"),
    ("pytest " + "x" * 5000, "too long"),
    ("", "not a non-empty string"),
]


@pytest.mark.parametrize(("command", "reason"), UNCOVERABLE_SHAPES)
def test_chains_expansions_and_outside_paths_are_not_covered_by_a_pytest_rule(
    command: str, reason: str, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (tmp_path / "outside").mkdir()
    (workspace / "link").symlink_to(tmp_path / "outside")
    (workspace / "sub").mkdir()
    (workspace / "sub" / "inner").symlink_to(tmp_path / "outside")
    policy = ApprovalPolicy(
        workspace, WorkspaceRuleStore(tmp_path / "approvals.json"), auto_approve=False
    )
    rules = ("pytest", "cat", "cd", "make install")
    policy.session_rules += [Rule(tool="execute", command_prefix=p) for p in rules]
    assert policy.needs_approval("execute", {"command": command})
    assert always_options("execute", {"command": command}, workspace) == []
    assert reason in (always_refusal("execute", {"command": command}, workspace) or "")


@pytest.mark.parametrize("command", [None, 5, ["pytest"], {"command": "pytest"}])
def test_a_command_of_the_wrong_type_is_asked_and_offered_nothing(
    command: object, tmp_path: Path
) -> None:
    policy = _policy(tmp_path)
    policy.session_rules.append(Rule(tool="execute", command_prefix="pytest"))
    assert policy.needs_approval("execute", {"command": command})
    assert policy.needs_approval("execute", {})
    assert always_options("execute", {"command": command}, tmp_path) == []


@pytest.mark.parametrize(
    ("rules", "command", "covered"),
    [
        (["pytest"], "pytest -q tests/unit", True),
        (["pytest"], "pytest tests/../tests", True),
        (["pytest"], "pytestx", False),
        (["git status"], "git status --short", True),
        (["git status"], "git push", False),
        (["git status"], "git", False),
        (["pytest", "ruff check"], "pytest -q && ruff check .", True),
        (["pytest", "ruff check"], "pytest -q && ruff format .", False),
        (["pytest"], "pytest -q || pytest --lf", True),
        (["pytest", "git status"], "pytest\ngit status", True),
        (["git log"], "git log | head", False),  # every part needs its rule
        (["git log", "head"], "git log | head -5", True),
        (["cd", "pytest"], "cd tests && pytest -q", True),
        (["pytest"], "pytest -q # ; rm -rf ..", True),  # a comment: bash runs pytest only
        (["pytest"], "pytest 2>&-", True),
        (["pytest"], "cd tests && pytest -q", False),  # `cd` was never approved
        (["pytest"], "pytest tests/*.py", True),
        (["pytest"], "pytest -k 'test_*'", True),  # a wildcard in an option's value
        (["git push"], "git push https://example.com/r.git main", True),
        # An old broad rule covers no more than the rule offered now would.
        (["python"], "python -m pytest", False),
        (["python -m pytest"], "python -m pytest -x", True),
        (["npm run"], "npm run build", False),
        (["git"], "git push", False),
        # Options before the subcommand: the rule is that exact command.
        (["make -j4 test"], "make -j4 test", True),
        (["make -j4 test"], "make -j4 test V=1", False),
        (["make"], "make -j4 test", False),
        ([None], "pytest", False),
        (["pytest 'x"], "pytest 'x", False),  # an unreadable stored rule grants nothing
    ],
)
def test_which_commands_a_set_of_rules_covers(
    rules: list[str | None], command: str, covered: bool, tmp_path: Path
) -> None:
    policy = _policy(tmp_path)
    policy.session_rules += [Rule(tool="execute", command_prefix=r) for r in rules]
    assert policy.needs_approval("execute", {"command": command}) is not covered


def _policy(tmp_path: Path, auto: bool = False) -> ApprovalPolicy:
    return ApprovalPolicy(
        tmp_path / "ws", WorkspaceRuleStore(tmp_path / "approvals.json"), auto_approve=auto
    )


def test_reads_run_freely_and_writes_ask_by_default(tmp_path: Path) -> None:
    policy = _policy(tmp_path)
    assert not policy.needs_approval("read_file", {"path": "a"})
    assert not policy.needs_approval("grep", {"pattern": "x"})
    for tool in ("write_file", "edit_file", "execute", "web_fetch", "task", "srv__tool"):
        assert policy.needs_approval(tool, {"command": "ls", "path": "a"})


def test_auto_approve_asks_nothing(tmp_path: Path) -> None:
    assert not _policy(tmp_path, auto=True).needs_approval("execute", {"command": "rm -rf x"})


def test_session_rule_for_a_prefix_does_not_cover_chained_commands(tmp_path: Path) -> None:
    policy = _policy(tmp_path)
    session_option = always_options("execute", {"command": "pytest -q"}, tmp_path)[0]
    assert session_option.scope == "session"
    assert "pytest" in session_option.label and "session" in session_option.label
    policy.remember(session_option)
    assert not policy.needs_approval("execute", {"command": "pytest tests/unit"})
    assert policy.needs_approval("execute", {"command": "pytest; rm -rf ~"})
    assert policy.needs_approval("execute", {"command": "pytestx"})
    assert policy.needs_approval("execute", {"command": "rm -rf build"})
    # session rules die with the process
    assert _policy(tmp_path).needs_approval("execute", {"command": "pytest"})


def test_workspace_rule_for_file_writes_persists_only_for_that_workspace(tmp_path: Path) -> None:
    policy = _policy(tmp_path)
    option = always_options("write_file", {"path": "a"}, tmp_path / "ws")[1]
    assert option.scope == "workspace" and str(tmp_path / "ws") in option.label
    policy.remember(option)
    fresh = _policy(tmp_path)
    assert not fresh.needs_approval("write_file", {"path": "b"})
    assert not fresh.needs_approval("edit_file", {"path": "c"})
    assert fresh.needs_approval("execute", {"command": "ls"})
    other = ApprovalPolicy(
        tmp_path / "other", WorkspaceRuleStore(tmp_path / "approvals.json"), auto_approve=False
    )
    assert other.needs_approval("write_file", {"path": "b"})


def test_corrupt_rules_file_is_kept_aside_and_grants_nothing(tmp_path: Path) -> None:
    (tmp_path / "approvals.json").write_text("{not json", encoding="utf-8")
    policy = _policy(tmp_path)
    assert policy.needs_approval("write_file", {"path": "a"})
    assert (tmp_path / "approvals.json.corrupt").read_text() == "{not json"
    policy.remember(always_options("write_file", {}, tmp_path / "ws")[1])
    assert json.loads((tmp_path / "approvals.json").read_text())["workspaces"]


@pytest.mark.parametrize(
    "raw",
    [{"type": "approve_always"}, {"type": "edit"}, {"type": "maybe"}, {}],
)
def test_incomplete_decisions_are_refused_with_a_reason(raw: dict) -> None:
    with pytest.raises(DecisionError, match="Invalid decision"):
        Decision.parse(raw)
