"""The `context` param of `invincat/chat` (and `invincat.startChat`): validation and
conversion into the runtime's `EditorContext`.

Validation is strict like every other param (protocol.py): a wrong type or a missing
required field is a `ParamsError` (-32602) naming the field by its JSON path
(`context.selections[0].range.start.line`); unknown fields are ignored. Every uri must be a
`file:` URI inside the session's workspace and not protected (else -32602 naming the uri).
Positions arrive in the negotiated position encoding and are converted to code-point
columns here, against the text the core will show (buffer first, then disk).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from invincat_server.lsp.documents import uri_to_path
from invincat_server.lsp.protocol import ParamsError, json_kind

if TYPE_CHECKING:
    from invincat_server.lsp.server import InvincatLanguageServer
    from invincat_server.runtime.editor_context import EditorContext, LineRange
    from invincat_server.runtime.policy.workspace import Workspace

MAX_CONVERT_BYTES = 2_000_000
MAX_ITEMS = 200
"""Per list (selections, diagnostics, attachments): more is a client bug, not context."""


class _Checker:
    """Walks the raw JSON, collecting every problem with its JSON path."""

    def __init__(self) -> None:
        self.problems: list[str] = []

    def obj(self, value: Any, where: str, *, required: bool = False) -> dict[str, Any] | None:
        if value is None:
            if required:
                self.problems.append(f"`{where}` is required")
            return None
        if not isinstance(value, dict):
            self.problems.append(f"`{where}` must be an object, got {json_kind(value)}")
            return None
        return value

    def array(self, value: Any, where: str) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, list):
            self.problems.append(f"`{where}` must be an array, got {json_kind(value)}")
            return []
        if len(value) > MAX_ITEMS:
            self.problems.append(f"`{where}` has {len(value)} items; at most {MAX_ITEMS}")
            return []
        return value

    def string(self, value: Any, where: str, *, required: bool = False) -> str | None:
        if value is None:
            if required:
                self.problems.append(f"`{where}` is required")
            return None
        if not isinstance(value, str):
            self.problems.append(f"`{where}` must be a string, got {json_kind(value)}")
            return None
        return value

    def uint(self, value: Any, where: str, *, required: bool = True) -> int | None:
        if value is None:
            if required:
                self.problems.append(f"`{where}` is required")
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            self.problems.append(f"`{where}` must be a non-negative integer, got {_show(value)}")
            return None
        return value

    def position(self, value: Any, where: str) -> tuple[int, int] | None:
        raw = self.obj(value, where, required=True)
        if raw is None:
            return None
        line = self.uint(raw.get("line"), f"{where}.line")
        character = self.uint(raw.get("character"), f"{where}.character")
        return None if line is None or character is None else (line, character)

    def range(self, value: Any, where: str) -> tuple[tuple[int, int], tuple[int, int]] | None:
        raw = self.obj(value, where, required=True)
        if raw is None:
            return None
        start = self.position(raw.get("start"), f"{where}.start")
        end = self.position(raw.get("end"), f"{where}.end")
        if start is None or end is None:
            return None
        if end < start:
            self.problems.append(f"`{where}` ends before it starts")
            return None
        return start, end


def _show(value: Any) -> str:
    return (
        repr(value)
        if isinstance(value, int | float) and not isinstance(value, bool)
        else json_kind(value)
    )


Span = tuple[tuple[int, int], tuple[int, int]]


class _Parsed:
    """The validated context, uris still as sent."""

    def __init__(self) -> None:
        self.active_uri: str | None = None
        self.language_id: str | None = None
        self.selections: list[tuple[str, Span]] = []
        self.cursor: tuple[str, tuple[int, int]] | None = None
        self.visible: tuple[str, Span] | None = None
        self.diagnostics: list[tuple[str, Span, str, int | None, str | None, str | None]] = []
        self.attachments: list[tuple[str, Span | None]] = []


class _ContextParser(_Checker):
    """One `_Parsed` from the raw JSON, a section at a time."""

    def __init__(self) -> None:
        super().__init__()
        self.parsed = _Parsed()

    def uri_of(self, item: dict[str, Any], where: str) -> str | None:
        """The item's uri; a missing one means the active document's."""
        if item.get("uri") is not None:
            return self.string(item.get("uri"), f"{where}.uri")
        if self.parsed.active_uri is None:
            self.problems.append(
                f"`{where}.uri` is required when there is no `context.activeDocument`"
            )
        return self.parsed.active_uri

    def active(self, context: dict[str, Any]) -> None:
        active = self.obj(context.get("activeDocument"), "context.activeDocument")
        if active is not None:
            where = "context.activeDocument"
            self.parsed.active_uri = self.string(active.get("uri"), f"{where}.uri", required=True)
            self.parsed.language_id = self.string(active.get("languageId"), f"{where}.languageId")

    def ranged(self, item: Any, where: str) -> tuple[str, Span] | None:
        """An object with `uri?` and `range` (a selection, the visible range)."""
        entry = self.obj(item, where, required=True)
        if entry is None:
            return None
        uri, span = self.uri_of(entry, where), self.range(entry.get("range"), f"{where}.range")
        return None if uri is None or span is None else (uri, span)

    def cursor(self, context: dict[str, Any]) -> None:
        cursor = self.obj(context.get("cursor"), "context.cursor")
        if cursor is not None:
            uri = self.uri_of(cursor, "context.cursor")
            position = self.position(cursor.get("position"), "context.cursor.position")
            if uri is not None and position is not None:
                self.parsed.cursor = (uri, position)

    def diagnostic(self, item: Any, where: str) -> None:
        entry = self.obj(item, where, required=True)
        if entry is None:
            return
        uri, span = self.uri_of(entry, where), self.range(entry.get("range"), f"{where}.range")
        message = self.string(entry.get("message"), f"{where}.message", required=True)
        severity = entry.get("severity")
        if severity is not None and (
            isinstance(severity, bool) or not isinstance(severity, int) or not 1 <= severity <= 4
        ):
            self.problems.append(f"`{where}.severity` must be 1, 2, 3 or 4, got {_show(severity)}")
            severity = None
        source = self.string(entry.get("source"), f"{where}.source")
        code = entry.get("code")
        if code is not None and (isinstance(code, bool) or not isinstance(code, str | int)):
            got = json_kind(code)
            self.problems.append(f"`{where}.code` must be a string or a number, got {got}")
            code = None
        if uri is not None and span is not None and message is not None:
            self.parsed.diagnostics.append(
                (uri, span, message, severity, source, None if code is None else str(code))
            )

    def attachment(self, item: Any, where: str) -> None:
        entry = self.obj(item, where, required=True)
        if entry is None:
            return
        uri = self.string(entry.get("uri"), f"{where}.uri", required=True)
        span = self.range(entry["range"], f"{where}.range") if "range" in entry else None
        if uri is not None and ("range" not in entry or span is not None):
            self.parsed.attachments.append((uri, span))


def parse_context(raw: Any, method: str) -> _Parsed:
    """Validate the JSON `context`; ParamsError naming every problem."""
    parser = _ContextParser()
    context = parser.obj(raw, "context") or {}
    parser.active(context)
    for index, item in enumerate(parser.array(context.get("selections"), "context.selections")):
        if (selection := parser.ranged(item, f"context.selections[{index}]")) is not None:
            parser.parsed.selections.append(selection)
    parser.cursor(context)
    if context.get("visibleRange") is not None:
        parser.parsed.visible = parser.ranged(context["visibleRange"], "context.visibleRange")
    for index, item in enumerate(parser.array(context.get("diagnostics"), "context.diagnostics")):
        parser.diagnostic(item, f"context.diagnostics[{index}]")
    for index, item in enumerate(parser.array(context.get("attachments"), "context.attachments")):
        parser.attachment(item, f"context.attachments[{index}]")
    if parser.problems:
        raise ParamsError(f"Invalid params for {method}: " + "; ".join(parser.problems) + ".")
    return parser.parsed


class _Converter:
    """uris → confined real paths, client positions → code-point columns."""

    def __init__(self, ls: InvincatLanguageServer, workspace: Workspace, method: str) -> None:
        self.ls, self.workspace, self.method = ls, workspace, method
        self.paths: dict[str, Path] = {}
        self.texts: dict[Path, list[str] | None] = {}

    def path(self, uri: str) -> Path:
        from invincat_server.runtime.policy.workspace import WorkspaceError

        if uri not in self.paths:
            path = uri_to_path(uri)
            if path is None:
                raise ParamsError(f"Invalid params for {self.method}: {uri} is not a file:// URI.")
            try:
                self.paths[uri] = self.workspace.resolve(str(path))
            except WorkspaceError as exc:
                raise ParamsError(
                    f"Invalid params for {self.method}: {uri} cannot be used as context: {exc}"
                ) from None
        return self.paths[uri]

    def column(self, path: Path, line: int, character: int) -> int:
        # Positions count the negotiated encoding's code units; the core counts code points.
        if path not in self.texts:
            text = self.ls.documents.read_text(path)  # the open buffer
            if text is None and _small_file(path):
                text = self.ls.documents.current_text(path)
            self.texts[path] = None if text is None else text.split("\n")
        lines = self.texts[path]
        if lines is None or line >= len(lines):
            return character
        count = self.ls.workspace.position_codec.client_num_units
        return _code_points(lines[line], character, count)

    def span(self, path: Path, span: Span) -> LineRange:
        from invincat_server.runtime.editor_context import LineRange

        (start_line, start_char), (end_line, end_char) = span
        return LineRange(
            start_line,
            self.column(path, start_line, start_char),
            end_line,
            self.column(path, end_line, end_char),
        )


def editor_context(
    ls: InvincatLanguageServer, workspace: Workspace, raw: Any, method: str
) -> EditorContext:
    """The runtime's EditorContext for a validated `context`; ParamsError for a bad shape
    or a uri that is not a workspace file the agent may read."""
    from invincat_server.runtime.editor_context import (
        Attachment,
        ContextDiagnostic,
        EditorContext,
    )

    parsed = parse_context(raw, method)
    to = _Converter(ls, workspace, method)
    context = EditorContext(language_id=parsed.language_id)
    if parsed.active_uri is not None:
        context.active_path = to.path(parsed.active_uri)
    for uri, span in parsed.selections:
        path = to.path(uri)
        context.selections.append(Attachment(path, to.span(path, span), "selection"))
    if parsed.cursor is not None:
        uri, (line, character) = parsed.cursor
        path = to.path(uri)
        context.cursor = (path, line, to.column(path, line, character))
    if parsed.visible is not None:
        path = to.path(parsed.visible[0])
        context.visible = (path, to.span(path, parsed.visible[1]))
    for uri, span, message, severity, source, code in parsed.diagnostics:
        path = to.path(uri)
        context.diagnostics.append(
            ContextDiagnostic(path, to.span(path, span), message, severity, source, code)
        )
    for uri, maybe_span in parsed.attachments:
        path = to.path(uri)
        line_range = to.span(path, maybe_span) if maybe_span is not None else None
        context.attachments.append(Attachment(path, line_range, "attachment"))
    return context


def _small_file(path: Path) -> bool:
    """Worth reading to convert a position: the core does not attach bigger files anyway."""
    try:
        return path.stat().st_size <= MAX_CONVERT_BYTES
    except OSError:
        return False


def _code_points(line: str, units: int, count: Callable[[str], int]) -> int:
    """The code-point column of `units` code units into `line` (clamped to its end)."""
    used = 0
    for index, char in enumerate(line.rstrip("\r")):
        if used >= units:
            return index
        used += count(char)
    return len(line.rstrip("\r"))
