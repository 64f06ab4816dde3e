"""Seeing and taking back 'always' approval rules (issue #23): ids, listings, revoke.

A rule's id is derived, not stored: a short hash of where it lives (scope, workspace root)
and what it is (tool, command prefix, created_at). Files written before ids existed need
no migration, and the same rule has the same id in every process that reads the file.

A listing says in words what a rule covers, in the same sentence the approval prompt
offered when it was granted (`approvals.always_options`; a unit test keeps the two
alike). Reading for a listing never changes the file: a damaged `approvals.json` is a
clear error (`RulesFileDamaged`) here, and is set aside only by a chat that loads it.

Revoking a workspace rule is a read-modify-write under the file's lock, through
`rule_files.save`, which records the write as Invincat's own so the settings tamper
watch does not put the rule back. It removes exactly the one entry with that id; entries
that do not parse stay as they are.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from invincat_server.runtime.policy import file_lock, rule_files

if TYPE_CHECKING:
    from invincat_server.runtime.approvals import Rule

Scope = Literal["session", "workspace"]
Effect = Literal["allow", "deny"]
ID_PREFIX = "r_"
MAX_ID_CHARS = 64
"""Longer ids are refused before any lookup (ours are 14 characters)."""


class RuleError(ValueError):
    """A rule request that cannot be done; the message says what is wrong."""


class UnknownRule(RuleError):
    """No rule with that id (in this session or this workspace)."""


class RulesFileDamaged(RuleError):
    """`approvals.json` cannot be read as rules; nothing was changed."""


@dataclass(frozen=True)
class ListedRule:
    """One rule as front ends show it."""

    id: str
    scope: Scope
    tool: str
    command: str | None
    """The command prefix of an `execute` rule; None: every call of `tool`."""
    covers: str
    """What it covers, in the words the approval prompt used when it was granted."""
    created_at: str
    workspace: str
    effect: Effect = "allow"
    """`deny`: an ACP 'reject always' rule (rejects without asking)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "scope": self.scope,
            "effect": self.effect,
            "tool": self.tool,
            "command": self.command,
            "covers": self.covers,
            "createdAt": self.created_at,
            "workspace": self.workspace,
        }


def rule_id(scope: str, workspace: str, tool: str, prefix: str | None, created_at: str) -> str:
    key = json.dumps([scope, workspace, tool, prefix, created_at])
    return ID_PREFIX + hashlib.sha256(key.encode("utf-8")).hexdigest()[:12]


def check_id(value: object) -> str:
    """`value` as a rule id, or RuleError saying why it cannot be one."""
    if not isinstance(value, str):
        raise RuleError(f"A rule id must be a string, got {type(value).__name__}.")
    if not value or len(value) > MAX_ID_CHARS or "\x00" in value:
        raise UnknownRule(_unknown_message(value[:MAX_ID_CHARS].replace("\x00", "\\0")))
    return value


def _unknown_message(value: str) -> str:
    return f"No approval rule with id {value!r}; list the rules to see their ids."


def rule_words(tool: str, prefix: str | None) -> str:
    """What a rule covers; the same words as `approvals.always_options`."""
    if tool == "file_writes":
        return "all file writes and edits (write_file, edit_file)"
    if tool == "execute" and prefix is not None:
        return f"shell commands starting with `{prefix}`"
    return f"every `{tool}` call"


def label(scope: str, tool: str, prefix: str | None, workspace: str) -> str:
    """The sentence the approval prompt showed for this rule."""
    what = rule_words(tool, prefix)
    if scope == "workspace":
        return f"Allow {what} in {workspace}, remembered across sessions"
    return f"Allow {what} for the rest of this session"


def listed_session_rule(rule: Rule, workspace: Path) -> ListedRule:
    root = str(workspace)
    return ListedRule(
        id=rule_id("session", root, rule.tool, rule.command_prefix, rule.created_at),
        scope="session",
        tool=rule.tool,
        command=rule.command_prefix,
        covers=label("session", rule.tool, rule.command_prefix, root),
        created_at=rule.created_at,
        workspace=root,
    )


def _listed_workspace_item(item: Any, root: str) -> ListedRule | None:
    """A stored rule entry, or None for one that is not a rule (skipped, kept as is)."""
    if not isinstance(item, dict):
        return None
    tool, prefix, created = item.get("tool"), item.get("command_prefix"), item.get("created_at")
    if not isinstance(tool, str) or not (prefix is None or isinstance(prefix, str)):
        return None
    # An entry without a date still gets a stable id (the model would invent a new date
    # on every load).
    created_at = created if isinstance(created, str) else ""
    return ListedRule(
        id=rule_id("workspace", root, tool, prefix, created_at),
        scope="workspace",
        tool=tool,
        command=prefix,
        covers=label("workspace", tool, prefix, root),
        created_at=created_at,
        workspace=root,
    )


def _load(path: Path) -> dict[str, Any]:
    def damaged() -> None:
        raise RulesFileDamaged(
            f"{path} is damaged (not readable as JSON); none of its rules apply. Nothing "
            f"was changed. The next chat moves it to {path.name}.corrupt and starts with no "
            "rules; fix or delete it by hand to keep its rules."
        )

    return rule_files.load(path, "workspaces", on_damaged=damaged)


def workspace_rules(path: Path, workspace: Path | None) -> list[ListedRule]:
    """The persisted rules of `workspace` (None: of every workspace), in file order."""
    table = _load(path)["workspaces"]
    roots = [str(workspace)] if workspace is not None else sorted(table)
    listed: list[ListedRule] = []
    for root in roots:
        items = table.get(root)
        for item in items if isinstance(items, list) else []:
            rule = _listed_workspace_item(item, root)
            if rule is not None:
                listed.append(rule)
    return listed


def revoke_workspace_rule(path: Path, workspace: Path, wanted: str) -> ListedRule:
    """Remove the rule with id `wanted` from `workspace`'s rules; UnknownRule if none."""
    wanted = check_id(wanted)
    root = str(workspace)
    with file_lock.exclusive(path):
        data = _load(path)
        items = data["workspaces"].get(root)
        items = items if isinstance(items, list) else []
        found = [_listed_workspace_item(item, root) for item in items]
        kept = [item for item, rule in zip(items, found, strict=True) if not _is(rule, wanted)]
        if len(kept) < len(items):
            # Identical entries (same id) are one rule: all of them go.
            if kept:
                data["workspaces"][root] = kept
            else:
                del data["workspaces"][root]
            rule_files.save(path, data, temp_prefix=".approvals.")
            return next(rule for rule in found if rule is not None and rule.id == wanted)
    raise UnknownRule(_unknown_message(wanted))


def _is(rule: ListedRule | None, wanted: str) -> bool:
    return rule is not None and rule.id == wanted


def revoke_session_rule(rules: list[Rule], workspace: Path, wanted: str) -> ListedRule | None:
    """Remove the session rule with id `wanted` from `rules`; None if there is none."""
    for index, rule in enumerate(rules):
        listed = listed_session_rule(rule, workspace)
        if listed.id == wanted:
            del rules[index]
            return listed
    return None


def unknown(wanted: str) -> UnknownRule:
    return UnknownRule(_unknown_message(wanted))


def listed_deny_rule(tool: str, prefix: str | None, created_at: str, workspace: Path) -> ListedRule:
    """An ACP 'reject always' rule (kept by one ACP session)."""
    root = str(workspace)
    # A shell command with no 'always' option (`rm`, a chain, a path outside) leaves a
    # deny rule without a prefix: it rejects only such commands, as its option said.
    words = (
        f"`{tool}` calls offered no 'always' rule"
        if tool == "execute" and prefix is None
        else rule_words(tool, prefix)
    )
    return ListedRule(
        id=rule_id("session-deny", root, tool, prefix, created_at),
        scope="session",
        tool=tool,
        command=prefix,
        covers=f"Reject {words} for the rest of this session",
        created_at=created_at,
        workspace=root,
        effect="deny",
    )
