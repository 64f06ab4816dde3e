"""Pending file-edit approvals shown where they apply: diagnostics + code actions.

Each pending `write_file` / `edit_file` approval becomes Information diagnostics (source
`invincat`) on the ranges of the current buffer (or disk text) that the edit would
change. The ranges are recomputed when the document changes: for `edit_file` by applying
the same `old_string → new_string` replacement the tool will apply to the current text
(falling back to the event's `proposed_text` if it no longer applies), for `write_file`
against its `content`. Diagnostics are cleared as soon as the approval is decided,
cancelled or superseded.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.capabilities import get_capability

from invincat_server.lsp.documents import path_to_uri
from invincat_server.lsp.protocol import DIAGNOSTIC_SOURCE
from invincat_server.lsp.textedits import LineIndex, diff_hunks
from invincat_server.runtime.tool_traits import WRITES_FILES

if TYPE_CHECKING:
    from invincat_server.lsp.server import InvincatLanguageServer

log = logging.getLogger("invincat.lsp.proposals")


@dataclass(frozen=True)
class Proposal:
    """One pending file change, from an `approval_requested` event."""

    approval_id: str
    root: Path
    """The project root the tool runs in (its `path` is relative to it)."""
    thread_id: str
    turn_id: str | None
    tool_call_id: str | None
    tool_name: str
    args: dict[str, Any]
    description: str
    path: Path
    uri: str
    proposed_text: str

    def proposed_for(self, current: str) -> str:
        """What the tool would write if it ran against `current` now."""
        if self.tool_name == "write_file":
            content = self.args.get("content")
            return content if isinstance(content, str) else self.proposed_text
        # Imported here: runtime.tools pulls in LangChain, which is loaded by the time an
        # approval exists but must not be imported before `initialize` is answered.
        from invincat_server.runtime.tools.edits import EditError, apply_edit

        try:
            text, _count = apply_edit(
                current,
                str(self.args.get("old_string", "")),
                str(self.args.get("new_string", "")),
                bool(self.args.get("replace_all", False)),
            )
        except EditError:
            return self.proposed_text
        return text


class ProposedEdits:
    """The pending file-edit approvals of every open project, by document URI."""

    def __init__(self, ls: InvincatLanguageServer) -> None:
        self._ls = ls
        self._by_id: dict[str, Proposal] = {}
        # URI → published diagnostics with the proposal each belongs to (code actions
        # answer from this cache, so a request costs a lookup, not a diff).
        self._published: dict[str, list[tuple[Proposal, types.Diagnostic]]] = {}

    # tracking -------------------------------------------------------------------
    def add(self, request: dict[str, Any], turn_id: str | None = None, *, root: Path) -> None:
        """Track an `approval_requested` event (as JSON) of the project at `root`; ignores
        non-file approvals."""
        tool = request.get("tool_name")
        rel, proposed = request.get("path"), request.get("proposed_text")
        if tool not in WRITES_FILES or not isinstance(rel, str) or proposed is None:
            return
        if request["approval_id"] in self._by_id:
            return
        path = Path(os.path.realpath(root / rel))
        proposal = Proposal(
            approval_id=request["approval_id"],
            root=root,
            thread_id=str(request.get("thread_id", "")),
            turn_id=turn_id,
            tool_call_id=request.get("tool_call_id"),
            tool_name=str(tool),
            args=dict(request.get("args") or {}),
            description=str(request.get("description") or f"{tool} {rel}"),
            path=path,
            uri=self._ls.documents.uri_for(path) or path_to_uri(path),
            proposed_text=str(proposed),
        )
        self._by_id[proposal.approval_id] = proposal
        self.refresh(proposal.uri)

    def remove(self, approval_id: str) -> None:
        proposal = self._by_id.pop(approval_id, None)
        if proposal is not None:
            self.refresh(proposal.uri)

    def remove_where(
        self,
        *,
        thread_id: str | None = None,
        turn_id: str | None = None,
        root: Path | None = None,
    ) -> None:
        """Drop proposals of a thread (a new prompt supersedes them), of an ended turn, or
        of a closed project (they stay pending, saved, and come back when it reopens)."""
        for proposal in list(self._by_id.values()):
            if (
                (thread_id is not None and proposal.thread_id == thread_id)
                or (turn_id is not None and proposal.turn_id == turn_id)
                or (root is not None and proposal.root == root)
            ):
                self.remove(proposal.approval_id)

    def get(self, approval_id: str) -> Proposal | None:
        return self._by_id.get(approval_id)

    def pending_ids(self) -> list[str]:
        return list(self._by_id)

    # diagnostics ------------------------------------------------------------------
    def document_changed(self, uri: str) -> None:
        if any(p.uri == uri for p in self._by_id.values()) or uri in self._published:
            self.refresh(uri)

    def refresh(self, uri: str) -> None:
        """Recompute and publish the diagnostics of one document."""
        entries: list[tuple[Proposal, types.Diagnostic]] = []
        for proposal in [p for p in self._by_id.values() if p.uri == uri]:
            current = self._ls.documents.current_text(proposal.path)
            if current is None and not self._ls.documents.is_open(proposal.path):
                continue  # a file that does not exist yet has no place to show it
            entries += [(proposal, d) for d in self._diagnostics(proposal, current or "")]
        if not entries and uri not in self._published:
            return
        if entries:
            self._published[uri] = entries
        else:
            self._published.pop(uri, None)
        self._ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=[d for _p, d in entries])
        )

    def _diagnostics(self, proposal: Proposal, current: str) -> list[types.Diagnostic]:
        hunks = diff_hunks(current, proposal.proposed_for(current))
        index = LineIndex(current, self._ls.workspace.position_codec.client_num_units)
        with_data = get_capability(
            self._ls.client_capabilities, "text_document.publish_diagnostics.data_support", False
        )
        message = (
            f"Invincat proposes a change here ({proposal.description}); accept or reject it "
            "with the code actions or in the Invincat panel."
        )
        return [
            types.Diagnostic(
                range=index.range(start, end),
                message=message,
                severity=types.DiagnosticSeverity.Information,
                source=DIAGNOSTIC_SOURCE,
                code="proposed-edit",
                data={"approvalId": proposal.approval_id} if with_data else None,
            )
            for start, end, _text in hunks
        ]

    # code actions -----------------------------------------------------------------
    def at(self, uri: str, where: types.Range) -> list[tuple[Proposal, list[types.Diagnostic]]]:
        """Proposals with a diagnostic on a line of `where`, each with those diagnostics.

        Whole lines, not characters: an editor asks for the code actions at its cursor
        (Neovim's `gra`, a lightbulb on the line), and a cursor anywhere on a changed
        line means that change, not only on the changed characters."""
        found: dict[str, tuple[Proposal, list[types.Diagnostic]]] = {}
        for proposal, diagnostic in self._published.get(uri, []):
            if _shares_a_line(diagnostic.range, where):
                found.setdefault(proposal.approval_id, (proposal, []))[1].append(diagnostic)
        return list(found.values())


def _lines(where: types.Range) -> tuple[int, int]:
    """First and last line `where` covers; a range that ends at the start of a line (a
    whole-line deletion) does not cover that line."""
    last = where.end.line
    if where.end.character == 0 and last > where.start.line:
        last -= 1
    return where.start.line, max(last, where.start.line)


def _shares_a_line(a: types.Range, b: types.Range) -> bool:
    a_first, a_last = _lines(a)
    b_first, b_last = _lines(b)
    return a_first <= b_last and b_first <= a_last
