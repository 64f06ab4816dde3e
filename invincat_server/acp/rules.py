"""The `/rules` slash command of ACP sessions: see and take back approval rules.

ACP clients have no custom methods in common use, so the rules are a slash command
(announced in `available_commands`): `/rules` lists the session's "reject always"
and allow rules and the workspace's remembered ones, each with its
id; `/rules revoke ID` takes one back (typing the id is the decision). Only translation:
ids, labels and revoke are the core's (runtime/policy/rule_listing.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from invincat_server.runtime.policy.file_lock import FileLockTimeout
from invincat_server.runtime.policy.rule_listing import ListedRule, RuleError

if TYPE_CHECKING:
    from invincat_server.runtime.approvals import ApprovalPolicy

USAGE = "Usage: `/rules` (list) or `/rules revoke ID`."
DESCRIPTION = "List the approval rules (allow and reject always) or take one back"
HINT = "revoke ID"


def _line(rule: ListedRule) -> str:
    return f"- `{rule.id}` ({rule.scope}, {rule.effect}): {rule.covers}"


def rules_text(policy: ApprovalPolicy, arg: str) -> str:
    """The answer to `/rules ARG`, as Markdown text for the agent message."""
    words = arg.split()
    if not words or words == ["list"]:
        return _listing(policy)
    if words[0] != "revoke" or len(words) != 2:
        return USAGE
    try:
        revoked = policy.revoke_rule(words[1])
    except (RuleError, FileLockTimeout) as exc:
        return str(exc)
    except OSError as exc:  # the rules file could not be replaced: unchanged
        return f"{policy.store.path}: {exc.strerror or exc}; nothing was changed."
    return f"Revoked `{revoked.id}`: {revoked.covers}. Matching calls ask again."


def _listing(policy: ApprovalPolicy) -> str:
    lines = [_line(rule) for rule in policy.listed_session_rules()]
    try:  # a damaged rules file costs its rules only
        lines += [_line(rule) for rule in policy.store.listed(policy.workspace)]
    except RuleError as exc:
        lines.append(str(exc))
    if not lines:
        return "No approval rules: risky calls ask every time."
    return "Approval rules (`/rules revoke ID` takes one back):\n" + "\n".join(lines)
