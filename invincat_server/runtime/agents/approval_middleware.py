"""Tool approval as a LangGraph interrupt, raised after the model proposes tool calls.

All calls of one model response that need a person are asked in one interrupt (a batch);
each has its own approval id, so front ends can resolve them one by one. The interrupt is
checkpointed, so a pending approval survives a restart and can be resolved later.

The resume value is `{"decisions": {tool_call_id: Decision}}`. Rejected calls get a
ToolMessage carrying the user's message instead of running, marked as declined (so the
turn reports it `rejected`); edited calls run with the
edited arguments (the AI message is rewritten so the model sees what actually ran).
'Always' rules are stored here, after the decision, so the re-executed node computes the
same set of requests it interrupted with.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain_core.messages import AIMessage, ToolCall, ToolMessage
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from invincat_server.runtime.agents.interaction import user_thread_id
from invincat_server.runtime.approvals import ApprovalPolicy, always_options, always_refusal
from invincat_server.runtime.errors import ModelOutputError
from invincat_server.runtime.events import ApprovalRequested
from invincat_server.runtime.policy import deny_rules
from invincat_server.runtime.policy.decisions import Decision
from invincat_server.runtime.policy.settings_grants import describe_grants, project_settings_name
from invincat_server.runtime.policy.workspace import Workspace, WorkspaceError
from invincat_server.runtime.tool_outcome import declined
from invincat_server.runtime.tools.documents import DocumentSource
from invincat_server.runtime.tools.edits import EditError
from invincat_server.runtime.tools.preview import preview_change

_APPROVAL_NS = uuid.UUID("6f1c2a9e-5b1d-4c59-9a53-2f0e7b8f4d11")
INTERRUPT_KIND = "tool_approval"


def approval_id_for(thread_id: str, message_id: str, tool_call_id: str) -> str:
    """Stable across the node's re-execution on resume, unique per thread and call."""
    return "ap_" + uuid.uuid5(_APPROVAL_NS, f"{thread_id}/{message_id}/{tool_call_id}").hex[:16]


def _describe(tool: str, args: dict[str, Any]) -> str:
    if tool == "execute":
        return f"Run shell command: {args.get('command', '')}"
    if tool == "write_file":
        return f"Write file {args.get('path', '')}"
    if tool == "edit_file":
        return f"Edit file {args.get('path', '')}"
    if tool == "task":
        what = str(args.get("description", ""))[:200]
        return f"Start a {args.get('subagent_type', '?')} subagent: {what}"
    return f"Call {tool} with {json.dumps(args, ensure_ascii=False)[:200]}"


def _last_response(messages: list[Any]) -> tuple[AIMessage | None, set[str]]:
    """The model's latest message and the ids of its calls already answered.

    A guard middleware that runs before this one (a subagent's tool allow-list) answers
    the calls it refuses with ToolMessages, so the model's message is no longer last; the
    calls it let through must still be asked about.
    """
    answered: set[str] = set()
    for message in reversed(messages):
        if isinstance(message, ToolMessage):
            answered.add(message.tool_call_id)
            continue
        return (message if isinstance(message, AIMessage) else None), answered
    return None, answered


UNDECIDED = Decision(type="reject", message=None)


def _decisions(answer: object) -> dict[str, Decision]:
    """The resume value's decisions by tool call id; anything else in it (a wrong type, a
    decision that does not validate) decides nothing, so those calls are rejected."""
    raw = answer.get("decisions") if isinstance(answer, dict) else None
    if not isinstance(raw, dict):
        return {}
    decisions: dict[str, Decision] = {}
    for call_id, value in raw.items():
        try:
            decisions[str(call_id)] = Decision.model_validate(value)
        except ValueError:
            continue
    return decisions


class ApprovalMiddleware(AgentMiddleware):
    """Asks a person before risky tool calls run, per `ApprovalPolicy`."""

    def __init__(self, policy: ApprovalPolicy, workspace: Workspace, documents: DocumentSource):
        super().__init__()
        self.policy = policy
        self.workspace = workspace
        self.documents = documents

    def _request(
        self, thread_id: str, message_id: str, call: dict[str, Any]
    ) -> ApprovalRequested | None:
        name, args = call["name"], call["args"]
        path = diff = proposed = None
        try:
            change = preview_change(self.workspace, self.documents, name, args)
        except (WorkspaceError, EditError):
            # The call cannot succeed (outside the workspace, edit text not found): let the
            # tool report the error to the model instead of asking the user to approve it.
            return None
        description = _describe(name, args)
        sandbox = self.policy.execute_sandbox if name == "execute" else None
        if sandbox is not None:
            description = sandbox.describe(args)  # names how it runs: sandboxed or not
        unconfined = sandbox is not None and sandbox.asks_always(args)
        if change is not None:
            path, diff, proposed = change.path, change.diff, change.new_text
            # Name the file that changes (the path the model wrote may be spelled with the
            # project root's own path): the user approves what happens, not what was typed.
            description = _describe(name, {**args, "path": change.path})
            settings = project_settings_name(self.workspace.root, args.get("path"))
            if settings is not None:
                # The diff alone does not say "this starts a program": spell it out.
                description += ". " + describe_grants(settings, change.old_text, change.new_text)
        # An unconfined command is asked every time: offer no "always" choice.
        options = [] if unconfined else always_options(name, args, self.workspace.root)
        return ApprovalRequested(
            approval_id=approval_id_for(thread_id, message_id, call["id"]),
            thread_id=thread_id,
            tool_call_id=call["id"],
            tool_name=name,
            args=args,
            description=description,
            path=path,
            diff=diff,
            proposed_text=proposed,
            always_options=options,
            always_unavailable=(
                "it would run outside the sandbox: such a command asks every time"
                if unconfined
                else always_refusal(name, args, self.workspace.root)
            ),
            deny_option=deny_rules.option_for(name, options),
        )

    async def aafter_model(self, state: AgentState, runtime: Runtime) -> dict[str, Any] | None:
        last, answered = _last_response(state["messages"])
        if last is None:
            return None
        if last.invalid_tool_calls:
            bad = last.invalid_tool_calls[0]
            raise ModelOutputError(
                f"The model sent malformed arguments for tool `{bad.get('name') or '?'}` "
                f"({bad.get('error') or 'not valid JSON'}): {str(bad.get('args'))[:200]}"
            )
        if not last.tool_calls:
            return None
        requests, denied = self._requests(last, answered)
        if not requests:
            return {"messages": [last, *denied]} if denied else None

        batch_id = requests[0].approval_id
        answer = interrupt(
            {
                "kind": INTERRUPT_KIND,
                "batch_id": batch_id,
                "requests": [r.to_json_dict() for r in requests],
            }
        )
        decisions = _decisions(answer)
        by_call = {r.tool_call_id: r for r in requests}
        new_calls = []
        rejections: list[ToolMessage] = list(denied)
        refused = {message.tool_call_id for message in denied}
        for call in last.tool_calls:
            if call["id"] in refused:
                new_calls.append(call)
                continue
            request = by_call.get(call["id"])
            if request is None:  # the policy let it through: nothing to decide
                new_calls.append(call)
                continue
            # A call the answer has no decision for does not run: whoever resumes the
            # graph (a LangGraph Server's API included) must decide each one.
            decision = decisions.get(str(call["id"])) or UNDECIDED
            new_calls.append(self._apply_decision(call, decision, request, rejections))
        updated = last.model_copy(update={"tool_calls": new_calls})
        return {"messages": [updated, *rejections]}

    def _requests(
        self, last: AIMessage, answered: set[str]
    ) -> tuple[list[ApprovalRequested], list[ToolMessage]]:
        """The approval requests for the calls of `last` the policy sends to a person, and
        the rejections of those a session deny rule answers without asking."""
        thread_id = user_thread_id()
        requests: list[ApprovalRequested] = []
        denied: list[ToolMessage] = []
        # A rule answered for one of this message's own calls applies from the next
        # message on: the node re-executed on resume must ask what it asked before.
        own = frozenset(
            approval_id_for(thread_id, last.id or "", str(c["id"])) for c in last.tool_calls
        )
        for call in last.tool_calls:
            if call["id"] in answered:
                continue  # already refused by a guard that ran first; it will not run
            if self.policy.needs_approval(call["name"], call["args"]):
                request = self._request(thread_id, last.id or "", dict(call))
                if request is None:
                    continue
                if self.policy.denied(request, answered_in=own) is not None:
                    note = (
                        f"The user rejected such {call['name']} calls for this session; "
                        "this one did not run."
                    )
                    denied.append(declined(note, tool_call_id=call["id"], name=call["name"]))
                else:
                    requests.append(request)
        return requests, denied

    def _apply_decision(
        self,
        call: ToolCall,
        decision: Decision,
        request: ApprovalRequested,
        rejections: list[ToolMessage],
    ) -> ToolCall:
        """The call as decided (a rejection also adds its result to `rejections`)."""
        if decision.rejects:  # a 'reject always' rule is kept by `Session.resolve`
            note = f"The user rejected this {call['name']} call; it did not run."
            if decision.message:
                note += f" The user said: {decision.message}"
            rejections.append(declined(note, tool_call_id=call["id"], name=call["name"]))
            return call
        if decision.type == "edit":
            return {**call, "args": dict(decision.edited_args or {})}
        if decision.type == "approve_always":
            for option in request.always_options:
                if option.scope == decision.scope:
                    self.policy.remember(option)
        return call
