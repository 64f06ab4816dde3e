"""Approval decisions, 'always allow' rules and the default policy.

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
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field, ValidationError, model_validator

from invincat_server.runtime.events import AlwaysOption
from invincat_server.runtime.policy import (
    command_rules,
    file_lock,
    rule_files,
    rule_listing,
    sanctioned,
)
from invincat_server.runtime.policy.settings_grants import project_settings_name
from invincat_server.runtime.tool_traits import FREE_TOOLS, WRITES_FILES

if TYPE_CHECKING:
    from invincat_server.runtime.sandbox import ExecuteSandbox


class DecisionError(ValueError):
    """A decision that cannot be applied; the message says what is wrong."""


DECISIONS_BY_KIND = {
    "tool": frozenset({"approve", "approve_always", "reject", "edit"}),
    "plan": frozenset({"approve", "reject", "refine"}),
    # reject cancels the question: the agent is told "(cancelled)".
    "question": frozenset({"answer", "reject"}),
}


class Decision(BaseModel):
    """A person's answer to one approval request."""

    type: Literal["approve", "approve_always", "reject", "edit", "refine", "answer"]
    scope: Literal["session", "workspace"] | None = None
    message: str | None = None
    edited_args: dict[str, Any] | None = None
    feedback: str | None = None
    """For `refine` of a plan: what to change."""
    answers: list[str] | None = None
    """For `answer` of a question request: one answer per question, in order."""

    @model_validator(mode="after")
    def _check_fields(self) -> Decision:
        if self.type == "approve_always" and self.scope is None:
            raise ValueError("approve_always needs scope: 'session' or 'workspace'")
        if self.type == "edit" and self.edited_args is None:
            raise ValueError("edit needs edited_args: the full argument object to run instead")
        if self.type == "refine" and not (self.feedback or "").strip():
            raise ValueError("refine needs feedback: what the planner should change")
        if self.type == "answer" and self.answers is None:
            raise ValueError("answer needs answers: a list with one answer per question")
        return self

    @classmethod
    def parse(cls, data: dict[str, Any]) -> Decision:
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            problems = "; ".join(err["msg"] for err in exc.errors())
            raise DecisionError(f"Invalid decision: {problems}") from exc

    def allowed_for(self, kind: str) -> str | None:
        """None if this decision fits a request of `kind`, else why not."""
        allowed = DECISIONS_BY_KIND.get(kind, DECISIONS_BY_KIND["tool"])
        if self.type in allowed:
            return None
        return f"Decision {self.type!r} does not apply to a {kind} request; use one of: " + (
            ", ".join(sorted(allowed))
        )

    def describe(self) -> str:
        if self.type == "approve_always":
            return f"approve_always ({self.scope})"
        return self.type


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

    def listed_session_rules(self) -> list[rule_listing.ListedRule]:
        """This session's rules (kept in memory by this process), oldest first."""
        return [rule_listing.listed_session_rule(r, self.workspace) for r in self.session_rules]

    def list_rules(self) -> list[rule_listing.ListedRule]:
        """This session's rules, then this workspace's persisted ones (a damaged rules
        file raises `rule_listing.RulesFileDamaged`; `listed_session_rules` still works)."""
        return self.listed_session_rules() + self.store.listed(self.workspace)

    def revoke_rule(self, rule_id: str) -> rule_listing.ListedRule:
        """Take back one of `list_rules()` by id; the next matching call asks again."""
        rule_id = rule_listing.check_id(rule_id)
        found = rule_listing.revoke_session_rule(self.session_rules, self.workspace, rule_id)
        return found if found is not None else self.store.revoke(self.workspace, rule_id)
