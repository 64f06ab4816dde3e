"""Session deny rules: a 'reject always' answer, remembered by this process only.

A deny rule covers what the request's *workspace* 'always' option would have allowed
(the same tool and command prefix), so "reject always" and "allow always" speak of the
same set of calls; a call offered no 'always' rule (`rm`, a chain, a path outside) leaves
a rule for that tool's calls offered none. Deny rules are never persisted: the label
says "for the rest of this session". `ApprovalPolicy` keeps them; every front end offers
them (the event's `deny_option`, the decision `reject_always`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from invincat_server.runtime.events import AlwaysOption, DenyOption
from invincat_server.runtime.policy import rule_listing

if TYPE_CHECKING:
    from invincat_server.runtime.events import ApprovalRequested


@dataclass(frozen=True)
class DenyRule:
    """Reject `tool` calls (for `execute`: starting with `command_prefix`) without asking."""

    tool: str
    command_prefix: str | None
    created_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat(), compare=False)
    """When it was answered: part of its id in the rule listings."""
    origin: str | None = field(default=None, compare=False)
    """The approval whose answer made it: it does not apply to that model message's own
    calls, so the node re-executed on resume asks what it asked before (approval_middleware)."""

    def covers(self, request: ApprovalRequested) -> bool:
        option = offer(request)
        return option is not None and (option.tool, option.command_prefix) == (
            self.tool,
            self.command_prefix,
        )


def _rule_words(tool: str, workspace_option: AlwaysOption | None) -> str:
    if workspace_option is None:
        return f"`{tool}` calls offered no 'always' rule"
    if workspace_option.command_prefix is not None:
        return f"shell commands starting with `{workspace_option.command_prefix}`"
    if workspace_option.tool == "file_writes":
        return "file writes and edits"
    return f"`{workspace_option.tool}` calls"


def option_for(tool: str, always: list[AlwaysOption]) -> DenyOption:
    """The 'reject always' choice of a tool call whose 'always' options are `always`."""
    workspace = next((o for o in always if o.scope == "workspace"), None)
    return DenyOption(
        label=f"Reject, and reject {_rule_words(tool, workspace)} for the rest of this session",
        tool=workspace.tool if workspace is not None else tool,
        command_prefix=workspace.command_prefix if workspace is not None else None,
    )


def offer(request: ApprovalRequested) -> DenyOption | None:
    """The request's 'reject always' choice (None for a plan or a question). Computed for
    a request recorded before the event carried one."""
    if request.kind != "tool" or request.tool_name is None:
        return None
    return request.deny_option or option_for(request.tool_name, request.always_options)


def rule_for(request: ApprovalRequested) -> DenyRule | None:
    """The rule a `reject_always` answer to `request` leaves (None: not a tool call)."""
    option = offer(request)
    if option is None:
        return None
    return DenyRule(option.tool, option.command_prefix, origin=request.approval_id)


def listed(rule: DenyRule, workspace: Path) -> rule_listing.ListedRule:
    return rule_listing.listed_deny_rule(rule.tool, rule.command_prefix, rule.created_at, workspace)
