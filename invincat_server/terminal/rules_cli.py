"""`invincat rules list [--json] [--all]` and `invincat rules revoke ID [--yes] [--json]`.

The 'always allow' rules persisted in `$INVINCAT_HOME/approvals.json`, for this project
(the root found from `--cwd` / the current directory, as `invincat chat` finds it) or,
with `--all`, for every workspace. Session rules live only inside the process that
granted them: the REPL's `/rules` (`repl_rules`, below) and the editors show those. No
agent stack, no model: this translates to `runtime/policy/rule_listing.py` and prints.

Exit codes: 0 done (also "nothing revoked" after a no at the question), 1 unknown id or a
damaged / locked / unwritable rules file (nothing changed), 2 usage errors (also `revoke
--json` without `--yes`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from invincat_server.terminal.confirm import confirm
from invincat_server.terminal.printable import printable

if TYPE_CHECKING:
    from invincat_server.runtime.approvals import ApprovalPolicy
    from invincat_server.runtime.config import Settings
    from invincat_server.runtime.policy.rule_listing import ListedRule

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def add_rules_parser(subparsers: Any) -> None:
    rules = subparsers.add_parser("rules", help="'always allow' approval rules: list, revoke")
    rules_sub = rules.add_subparsers(dest="rules_command", metavar="COMMAND")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--cwd", metavar="DIR", help="project directory (default: current)")
    common.add_argument("--json", action="store_true", help="machine-readable output")
    listing = rules_sub.add_parser(
        "list", parents=[common], help="this workspace's remembered rules, with their ids"
    )
    listing.add_argument("--all", action="store_true", help="the rules of every workspace")
    revoke = rules_sub.add_parser(
        "revoke", parents=[common], help="take back one rule (asks first); the call asks again"
    )
    revoke.add_argument("rule_id", metavar="ID", help="the rule's id (see `rules list`)")
    revoke.add_argument("--yes", action="store_true", help="do not ask (for scripts)")


def run_rules_command(settings: Settings, args: argparse.Namespace) -> int:
    from invincat_server.runtime.policy.file_lock import FileLockTimeout
    from invincat_server.runtime.policy.rule_listing import RuleError
    from invincat_server.runtime.project.root import project_root

    cwd = Path(args.cwd) if args.cwd else Path(os.getcwd())
    if not cwd.is_dir():
        return _fail(f"--cwd {cwd} is not a directory.")
    # The root every front end opens (a chat's policy stores its rules under it).
    root = project_root(cwd)
    try:
        if args.rules_command == "list":
            return _list(settings.approvals_file, None if args.all else root, args.json)
        return _revoke(settings.approvals_file, root, args)
    except (RuleError, FileLockTimeout) as exc:
        return _fail(str(exc))
    except OSError as exc:  # the rules file could not be read or replaced: unchanged
        return _fail(f"{settings.approvals_file}: {exc.strerror or exc}; nothing was changed.")


def _list(path: Path, root: Path | None, as_json: bool) -> int:
    from invincat_server.runtime.policy.rule_listing import workspace_rules

    rules = workspace_rules(path, root)
    if as_json:
        print(json.dumps({"items": [rule.to_json() for rule in rules]}))
        return EXIT_OK
    if not rules:
        where = "any workspace" if root is None else str(root)
        print(f"No remembered approval rules for {where}.")
        return EXIT_OK
    print(f"{'ID':<14}  {'CREATED':<25}  COVERS")
    for rule in rules:
        print(f"{rule.id:<14}  {printable(rule.created_at):<25}  {printable(rule.covers)}")
    return EXIT_OK


def _revoke(path: Path, root: Path, args: argparse.Namespace) -> int:
    from invincat_server.runtime.policy.rule_listing import (
        check_id,
        revoke_workspace_rule,
        unknown,
        workspace_rules,
    )

    if args.json and not args.yes:
        print("invincat: --json needs --yes: there is no one to ask.", file=sys.stderr)
        return EXIT_USAGE
    wanted = check_id(args.rule_id)
    rule = next((r for r in workspace_rules(path, root) if r.id == wanted), None)
    if rule is None:
        raise unknown(wanted)
    if not args.yes:
        print(f"Rule {rule.id}: {printable(rule.covers)}")
        if not confirm("Revoke it? Matching calls will ask again."):
            print("Nothing revoked.")
            return EXIT_OK
    revoked = revoke_workspace_rule(path, root, wanted)
    if args.json:
        print(json.dumps({"revoked": revoked.to_json()}))
    else:
        print(f"Revoked {revoked.id}: {printable(revoked.covers)}")
    return EXIT_OK


def _fail(message: str) -> int:
    print(f"invincat: {message}", file=sys.stderr)
    return EXIT_FAILED


def rule_line(rule: ListedRule) -> str:
    """One rule as the terminal front ends print it."""
    return f"{rule.id}  [{rule.scope}]  {printable(rule.covers)}"


REPL_USAGE = "Usage: /rules (list) or /rules revoke ID"


def repl_rules(policy: ApprovalPolicy, arg: str) -> list[str]:
    """`/rules` and `/rules revoke ID` in the REPL: the lines to show. Typing the id is the
    decision, so the REPL does not ask again."""
    from invincat_server.runtime.policy.file_lock import FileLockTimeout
    from invincat_server.runtime.policy.rule_listing import RuleError

    words = arg.split()
    if not words or words == ["list"]:
        lines = [rule_line(rule) for rule in policy.listed_session_rules()]
        try:  # a damaged rules file costs its rules only, not the session's
            lines += [rule_line(rule) for rule in policy.store.listed(policy.workspace)]
        except RuleError as exc:
            lines.append(str(exc))
        return lines or [
            "No approval rules: every write, command and other risky call asks first. "
            "Answer an approval with 'always' (s: this session, w: this workspace) to add one."
        ]
    if words[0] != "revoke" or len(words) != 2:
        return [REPL_USAGE]
    try:
        revoked = policy.revoke_rule(words[1])
    except (RuleError, FileLockTimeout) as exc:
        return [printable(str(exc))]
    except OSError as exc:  # the rules file could not be replaced: unchanged
        return [f"{policy.store.path}: {exc.strerror or exc}; nothing was changed."]
    return [f"Revoked {revoked.id}: {printable(revoked.covers)}. Matching calls ask again."]
