"""The `/rules` slash command of ACP sessions: see and take back approval rules.

ACP clients have no custom methods in common use, so the rules are a slash command
(announced in `available_commands`): `/rules` lists this ACP session's "reject always"
rules, the runtime session's allow rules and the workspace's remembered ones, each with its
id; `/rules revoke ID` takes one back (typing the id is the decision). Only translation:
ids, labels and revoke are the core's (runtime/policy/rule_listing.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from invincat_server.acp.permissions import DenyRule
from invincat_server.runtime.policy import rule_listing
from invincat_server.runtime.policy.file_lock import FileLockTimeout
from invincat_server.runtime.policy.rule_listing import ListedRule, RuleError

if TYPE_CHECKING:
    from invincat_server.runtime.approvals import ApprovalPolicy

USAGE = "Usage: `/rules` (list) or `/rules revoke ID`."
DESCRIPTION = "List the approval rules (allow and reject always) or take one back"
HINT = "revoke ID"


def _listed_deny(rule: DenyRule, workspace: Path) -> ListedRule:
    return rule_listing.listed_deny_rule(rule.tool, rule.command_prefix, rule.created_at, workspace)


def _line(rule: ListedRule) -> str:
    return f"- `{rule.id}` ({rule.scope}, {rule.effect}): {rule.covers}"


def rules_text(policy: ApprovalPolicy, deny_rules: list[DenyRule], arg: str) -> str:
    """The answer to `/rules ARG`, as Markdown text for the agent message."""
    words = arg.split()
    if not words or words == ["list"]:
        return _listing(policy, deny_rules)
    if words[0] != "revoke" or len(words) != 2:
        return USAGE
    try:
        revoked = _revoke(policy, deny_rules, words[1])
    except (RuleError, FileLockTimeout) as exc:
        return str(exc)
    except OSError as exc:  # the rules file could not be replaced: unchanged
        return f"{policy.store.path}: {exc.strerror or exc}; nothing was changed."
    return f"Revoked `{revoked.id}`: {revoked.covers}. Matching calls ask again."


def _listing(policy: ApprovalPolicy, deny_rules: list[DenyRule]) -> str:
    lines = [_line(_listed_deny(rule, policy.workspace)) for rule in deny_rules]
    lines += [_line(rule) for rule in policy.listed_session_rules()]
    try:  # a damaged rules file costs its rules only
        lines += [_line(rule) for rule in policy.store.listed(policy.workspace)]
    except RuleError as exc:
        lines.append(str(exc))
    if not lines:
        return "No approval rules: risky calls ask every time."
    return "Approval rules (`/rules revoke ID` takes one back):\n" + "\n".join(lines)


def _revoke(policy: ApprovalPolicy, deny_rules: list[DenyRule], wanted: str) -> ListedRule:
    wanted = rule_listing.check_id(wanted)
    for index, rule in enumerate(deny_rules):
        listed = _listed_deny(rule, policy.workspace)
        if listed.id == wanted:
            del deny_rules[index]
            return listed
    return policy.revoke_rule(wanted)
