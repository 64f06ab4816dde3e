"""An approval request re-described for arguments a person edited at the approval.

Edited arguments are a new call: before it runs, the person sees what it does now (the
new diff of a write or edit, the new command) and decides again. No "always" choice is
offered for it: a rule would be derived from arguments the model never proposed.
"""

from __future__ import annotations

from typing import Any

from invincat_server.runtime.events import ApprovalRequested
from invincat_server.runtime.policy.workspace import Workspace, WorkspaceError
from invincat_server.runtime.tool_phrases import phrase
from invincat_server.runtime.tools.documents import DocumentSource
from invincat_server.runtime.tools.edits import EditError
from invincat_server.runtime.tools.preview import preview_change


def edited_request(
    request: ApprovalRequested,
    args: dict[str, Any],
    workspace: Workspace,
    documents: DocumentSource,
) -> ApprovalRequested:
    """`request` for the call with `args` instead: description, path and diff of the
    edited call (a call that cannot succeed says why; the tool will report it)."""
    name = request.tool_name or "?"
    description = f"Edited call: {phrase(name, args).title}"
    path = diff = proposed = None
    try:
        change = preview_change(workspace, documents, name, args)
    except (WorkspaceError, EditError) as exc:
        change = None
        description += f" (it will fail: {exc})"
    if change is not None:
        path, diff, proposed = change.path, change.diff, change.new_text
    return request.model_copy(
        update={
            "args": args,
            "description": description,
            "path": path,
            "diff": diff,
            "proposed_text": proposed,
            "always_options": [],
            "always_unavailable": "the call was edited",
        }
    )
