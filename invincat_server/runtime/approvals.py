"""Approval decisions, 'always allow' rules and the default policy.

Decisions themselves: `policy/decisions.py`; 'reject always' rules: `policy/deny_rules.py`.
Default policy (docs/protocol.md): reads and searches inside the workspace run freely;
writes, `execute`, `web_fetch`, MCP tools and `task` ask first. An `approve_always`
decision adds a rule scoped to the session (this process) or the workspace (persisted in
`$INVINCAT_HOME/approvals.json`, outside the project so the agent cannot grant itself
permissions by writing a project file; when the project is `$HOME` the file tools refuse
`$INVINCAT_HOME` explicitly). Rules never cover writes to the project's permission-bearing
settings (`.mcp.json`, `.invincat/` settings): those ask every time. What an `execute`
rule is offered as and which commands it covers: `policy/command_rules.py`.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, ValidationError

from invincat_server.runtime.events import AlwaysOption
from invincat_server.runtime.policy import (
    command_rules,
    deny_rules,
    file_lock,
    rule_files,
    rule_listing,
    sanctioned,
)
from invincat_server.runtime.policy.settings_grants import project_settings_name
from invincat_server.runtime.tool_traits import FREE_TOOLS, WRITES_FILES

if TYPE_CHECKING:
    from invincat_server.runtime.events import ApprovalRequested
    from invincat_server.runtime.sandbox import ExecuteSandbox


class Rule(BaseModel):
    """Allow `tool` without asking; for `execute`, only commands starting with a prefix
    (and only as `command_rules.covered` allows: `ApprovalPolicy` matches those)."""

    tool: str
    command_prefix: str | None = None
    created_at: str = Field(default_factory=lambda: datetime.now(UTC).isoformat())

    def matches(self, tool: str, args: dict[str, Any]) -> bool:
        if tool != self.tool and not (self.tool == "file_writes" and tool in WRITES_FILES):
            return False
        # A shell command needs the workspace and every rule at once (each part of a
        # chained command must be covered): `ApprovalPolicy.needs_approval` decides those.
        return tool != "execute" and self.command_prefix is None


def command_prefix(command: object, workspace: Path) -> str | None:
    """The part of a shell command an 'always allow' rule remembers (None: none may)."""
    return command_rules.offer(command, workspace).prefix


def always_refusal(tool: str, args: dict[str, Any], workspace: Path) -> str | None:
    """Why a call is offered no 'approve always' choice (None when it is offered some)."""
    if tool != "execute":
        return None
    return command_rules.offer(args.get("command"), workspace).reason


def always_options(tool: str, args: dict[str, Any], workspace: Path) -> list[AlwaysOption]:
    """The 'approve always' choices for one call, each labelled with what is remembered."""
    if tool in WRITES_FILES:
        what, rule_tool, prefix = (
            "all file writes and edits (write_file, edit_file)",
            "file_writes",
            None,
        )
    elif tool == "execute":
        prefix = command_prefix(args.get("command"), workspace)
        if prefix is None:
            return []  # once only: why is in always_refusal
        what, rule_tool = f"shell commands starting with `{prefix}`", "execute"
    else:
        what, rule_tool, prefix = f"every `{tool}` call", tool, None
    return [
        AlwaysOption(
            scope="session",
            label=f"Allow {what} for the rest of this session",
            tool=rule_tool,
            command_prefix=prefix,
        ),
        AlwaysOption(
            scope="workspace",
            label=f"Allow {what} in {workspace}, remembered across sessions",
            tool=rule_tool,
            command_prefix=prefix,
        ),
    ]


class WorkspaceRuleStore:
    """Persisted workspace rules: `{"version": 1, "workspaces": {root: [rule, ...]}}`."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _load(self) -> dict[str, Any]:
        return rule_files.load(self.path, "workspaces", on_damaged=self._set_aside)

    def _set_aside(self) -> None:
        # A damaged rules file must not silently grant or lose permissions: keep a copy
        # for the user and start over with nothing pre-approved.
        backup = self.path.with_suffix(".json.corrupt")
        before = rule_files.read_bytes(self.path)
        os.replace(self.path, backup)
        sanctioned.record(self.path, before, None)

    def rules_for(self, workspace: Path) -> list[Rule]:
        raw = self._load()["workspaces"].get(str(workspace), [])
        rules = []
        for item in raw if isinstance(raw, list) else []:
            try:
                rules.append(Rule.model_validate(item))
            except ValidationError:
                continue
        return rules

    def add(self, workspace: Path, rule: Rule) -> None:
        # Read, modify and write under one cross-process lock: two processes adding a
        # rule at the same moment must both find their rule in the file afterwards.
        with file_lock.exclusive(self.path):
            data = self._load()
            rules = data["workspaces"].setdefault(str(workspace), [])
            key = (rule.tool, rule.command_prefix)
            if any((r.get("tool"), r.get("command_prefix")) == key for r in rules):
                return
            rules.append(rule.model_dump())
            rule_files.save(self.path, data, temp_prefix=".approvals.")

    def listed(self, workspace: Path | None) -> list[rule_listing.ListedRule]:
        """`workspace`'s rules (None: every workspace's) with ids; never changes the file
        (a damaged one raises `rule_listing.RulesFileDamaged`)."""
        return rule_listing.workspace_rules(self.path, workspace)

    def revoke(self, workspace: Path, rule_id: str) -> rule_listing.ListedRule:
        """Remove one rule by id, under the file lock; `UnknownRule` when there is none."""
        return rule_listing.revoke_workspace_rule(self.path, workspace, rule_id)


class ApprovalPolicy:
    """Decides which tool calls need a person, and remembers 'always' answers."""

    def __init__(self, workspace: Path, store: WorkspaceRuleStore, *, auto_approve: bool) -> None:
        self.workspace = workspace
        self.store = store
        self.auto_approve = auto_approve
        self.session_rules: list[Rule] = []
        self.deny_rules: list[deny_rules.DenyRule] = []
        """'Reject always' answers of this session (never persisted)."""
        self.execute_sandbox: ExecuteSandbox | None = None

    def needs_approval(self, tool: str, args: dict[str, Any]) -> bool:
        if tool in FREE_TOOLS or self.auto_approve:
            return False
        if tool == "execute" and self.execute_sandbox and self.execute_sandbox.asks_always(args):
            return True  # would run unconfined though a sandbox is configured: no rule covers it
        if tool in WRITES_FILES and project_settings_name(self.workspace, args.get("path")):
            # Files that start programs or grant tools: asked every time, with what the
            # change grants; no "always" rule covers them (`--yes` does: the user's
            # explicit blanket consent, and project MCP configs still need trusting).
            return True
        rules = [*self.session_rules, *self.store.rules_for(self.workspace)]
        if tool == "execute":
            prefixes = [rule.command_prefix for rule in rules if rule.tool == "execute"]
            return not command_rules.covered(args.get("command"), prefixes, self.workspace)
        return not any(rule.matches(tool, args) for rule in rules)

    def remember(self, option: AlwaysOption) -> str:
        """Store the rule; returns the sentence shown to the user."""
        rule = Rule(tool=option.tool, command_prefix=option.command_prefix)
        if option.scope == "workspace":
            self.store.add(self.workspace, rule)
        elif not any(
            (r.tool, r.command_prefix) == (rule.tool, rule.command_prefix)
            for r in self.session_rules
        ):
            self.session_rules.append(rule)
        return option.label

    def deny(self, request: ApprovalRequested) -> str | None:
        """Remember the 'reject always' rule of `request`; returns its label (None when the
        request offers none: a plan or a question)."""
        rule = deny_rules.rule_for(request)
        if rule is None:
            return None
        if rule not in self.deny_rules:
            self.deny_rules.append(rule)
        option = deny_rules.offer(request)
        return option.label if option is not None else None

    def denied(
        self, request: ApprovalRequested, answered_in: frozenset[str] = frozenset()
    ) -> deny_rules.DenyRule | None:
        """The session deny rule that rejects `request` without asking, if any; rules made
        by answering one of the approvals `answered_in` do not count."""
        return next(
            (r for r in self.deny_rules if r.origin not in answered_in and r.covers(request)),
            None,
        )

    def listed_session_rules(self) -> list[rule_listing.ListedRule]:
        """This session's rules (kept in memory by this process): deny rules, then allow
        rules, oldest first."""
        return [deny_rules.listed(r, self.workspace) for r in self.deny_rules] + [
            rule_listing.listed_session_rule(r, self.workspace) for r in self.session_rules
        ]

    def list_rules(self) -> list[rule_listing.ListedRule]:
        """This session's rules, then this workspace's persisted ones (a damaged rules
        file raises `rule_listing.RulesFileDamaged`; `listed_session_rules` still works)."""
        return self.listed_session_rules() + self.store.listed(self.workspace)

    def revoke_rule(self, rule_id: str) -> rule_listing.ListedRule:
        """Take back one of `list_rules()` by id; the next matching call asks again."""
        rule_id = rule_listing.check_id(rule_id)
        for index, deny in enumerate(self.deny_rules):
            listed = deny_rules.listed(deny, self.workspace)
            if listed.id == rule_id:
                del self.deny_rules[index]
                return listed
        found = rule_listing.revoke_session_rule(self.session_rules, self.workspace, rule_id)
        return found if found is not None else self.store.revoke(self.workspace, rule_id)
