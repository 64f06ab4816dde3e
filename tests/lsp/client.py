"""A pytest-lsp client that behaves like an editor talking to the real `invincat --stdio`.

It keeps `invincat/*` payloads as plain JSON (pygls would turn them into namedtuples),
records `invincat/event` notifications, and keeps a model of the open documents: it
applies the server's `workspace/applyEdit` to it and reports the change back with
`didChange`, as VS Code and Neovim do.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import sys
import uuid
from asyncio.subprocess import PIPE
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Union

import cattrs
from lsprotocol import types
from pygls.protocol import default_converter
from pygls.protocol.json_rpc import JsonRPCNotification, JsonRPCResponseMessage
from pygls.uris import from_fs_path
from pygls.workspace import TextDocument
from pygls.workspace.position_codec import PositionCodec
from pytest_lsp import LanguageClient, LanguageClientProtocol, client_capabilities
from pytest_lsp.client import register_lsp_features

from tests.deadlines import DEADLINE

INVINCAT = str(Path(sys.executable).with_name("invincat"))
CLIENTS = ["visual-studio-code", "neovim"]

Event = dict[str, Any]


def file_uri(path: Path) -> str:
    uri = from_fs_path(str(path))
    assert uri is not None
    return uri


def _converter() -> cattrs.Converter:
    converter = default_converter()

    # lsprotocol 2025.0.0 reads every code action that has a `command` as a bare Command,
    # dropping its title/kind/diagnostics; editors tell them apart by `command` being a
    # string, and so does this client.
    def code_action_or_command(obj: Any, _: type) -> types.Command | types.CodeAction:
        kind = types.Command if isinstance(obj.get("command"), str) else types.CodeAction
        return converter.structure(obj, kind)

    converter.register_structure_hook(
        Union[types.Command, types.CodeAction],  # noqa: UP007 - the key lsprotocol uses
        code_action_or_command,
    )
    return converter


class InvincatClientProtocol(LanguageClientProtocol):
    """pytest-lsp's protocol (spec checks included), with raw JSON for Invincat methods."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._raw_ids: set[str] = set()

    def structure_message(self, data: dict[str, Any]) -> Any:
        if "jsonrpc" in data:
            method = data.get("method")
            if isinstance(method, str) and method.startswith("invincat/") and "id" not in data:
                return JsonRPCNotification(
                    method=method, jsonrpc=data["jsonrpc"], params=data.get("params")
                )
            if "method" not in data and data.get("id") in self._raw_ids:
                self._raw_ids.discard(data["id"])
                if "error" not in data:
                    return JsonRPCResponseMessage(
                        id=data["id"], jsonrpc=data["jsonrpc"], result=data.get("result")
                    )
        return super().structure_message(data)

    def send_raw(self, method: str, params: Any, msg_id: str | None = None) -> asyncio.Future[Any]:
        """Send a request exactly as given (any JSON params) and get its raw result."""
        msg_id = msg_id or f"raw-{uuid.uuid4().hex[:8]}"
        future: Future[Any] = Future()
        self._request_futures[msg_id] = future
        self._raw_ids.add(msg_id)
        self._send_data({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return asyncio.wrap_future(future)


class InvincatClient(LanguageClient):
    protocol: InvincatClientProtocol

    def __init__(self) -> None:
        super().__init__(protocol_cls=InvincatClientProtocol, converter_factory=_converter)
        self.events: list[Event] = []
        self._new_event = asyncio.Event()
        self.docs: dict[str, TextDocument] = {}
        self.apply_edit_requests: list[types.ApplyWorkspaceEditParams] = []
        self.hold_apply_edit: asyncio.Event | None = None
        """When set, applyEdit requests wait for this event before being applied."""
        self.apply_edit_entered = asyncio.Event()
        self.refuse_apply_edit: str | None = None
        """When set, applyEdit requests are refused with this reason."""
        self.encoding: str = "utf-16"
        self.memory_changes: list[dict[str, Any]] = []
        """`invincat/memory/didChange` params, in arrival order."""
        self.status_changes: list[dict[str, Any]] = []
        """`invincat/statusChanged` params, in arrival order."""
        self.server_capabilities: types.ServerCapabilities | None = None
        """What the server answered to `initialize`."""

    # requests -----------------------------------------------------------------------
    async def request(self, method: str, params: Any = None, *, timeout: float = DEADLINE) -> Any:
        return await asyncio.wait_for(self.protocol.send_raw(method, params), timeout)

    async def chat(self, prompt: str, **extra: Any) -> dict[str, Any]:
        return await self.request("invincat/chat", {"prompt": prompt, **extra})

    async def resolve(self, approval_id: str, decision: str, **extra: Any) -> dict[str, Any]:
        params = {"approvalId": approval_id, "decision": decision, **extra}
        return await self.request("invincat/resolveApproval", params)

    # events ---------------------------------------------------------------------------
    def on_event(self, params: Event) -> None:
        self.events.append(params)
        self._new_event.set()

    async def wait_event(
        self,
        kind: str,
        *,
        timeout: float = DEADLINE,
        where: Callable[[Event], bool] | None = None,
    ) -> Event:
        """The first `invincat/event` (params) of type `kind` matching `where`."""

        async def find() -> Event:
            while True:
                for item in self.events:
                    if item["event"]["type"] == kind and (where is None or where(item)):
                        return item
                self._new_event.clear()
                await self._new_event.wait()

        try:
            return await asyncio.wait_for(find(), timeout)
        except TimeoutError:
            seen = [e["event"]["type"] for e in self.events]
            raise AssertionError(f"no {kind} event within {timeout}s; seen {seen}") from None

    async def turn_end(self, turn_id: str, timeout: float = DEADLINE) -> Event:
        end = await self.wait_event(
            "turn_end", timeout=timeout, where=lambda e: e["turnId"] == turn_id
        )
        return end["event"]

    def turn_events(self, turn_id: str) -> list[Event]:
        return [e["event"] for e in self.events if e["turnId"] == turn_id]

    async def memory_change(self, count: int, timeout: float = DEADLINE) -> dict[str, Any]:
        """The `count`-th `invincat/memory/didChange` (1-based), once it arrived."""
        await wait_until(lambda: len(self.memory_changes) >= count, timeout, f"didChange #{count}")
        return self.memory_changes[count - 1]

    # documents (the editor model) -------------------------------------------------
    def open_document(self, path: Path, text: str) -> str:
        uri = file_uri(path)
        self.docs[uri] = TextDocument(
            uri, source=text, version=1, position_codec=PositionCodec(self.encoding)
        )
        self.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id="plaintext", version=1, text=text
                )
            )
        )
        return uri

    def text(self, uri: str) -> str:
        return self.docs[uri].source

    def apply_text_edits(self, uri: str, edits: list[types.TextEdit]) -> None:
        """Apply like an editor and tell the server with one incremental didChange."""
        doc = self.docs[uri]
        ordered = sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character))
        changes: list[types.TextDocumentContentChangeEvent] = []
        for edit in reversed(ordered):  # back to front: earlier ranges stay valid
            change = types.TextDocumentContentChangePartial(range=edit.range, text=edit.new_text)
            doc.apply_change(change)
            changes.append(change)
        doc.version = (doc.version or 0) + 1
        self.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=doc.version),
                content_changes=changes,
            )
        )

    async def on_apply_edit(
        self, params: types.ApplyWorkspaceEditParams
    ) -> types.ApplyWorkspaceEditResult:
        self.apply_edit_requests.append(params)
        self.apply_edit_entered.set()
        if self.hold_apply_edit is not None:
            await self.hold_apply_edit.wait()
        if self.refuse_apply_edit is not None:
            return types.ApplyWorkspaceEditResult(
                applied=False, failure_reason=self.refuse_apply_edit
            )
        edit = params.edit
        for change in edit.document_changes or []:
            assert isinstance(change, types.TextDocumentEdit)
            doc = self.docs.get(change.text_document.uri)
            if doc is None or change.text_document.version != doc.version:
                return types.ApplyWorkspaceEditResult(applied=False, failure_reason="stale")
            self.apply_text_edits(change.text_document.uri, list(change.edits))  # type: ignore[arg-type]
        for uri, edits in (edit.changes or {}).items():
            self.apply_text_edits(uri, list(edits))
        return types.ApplyWorkspaceEditResult(applied=True)


async def wait_until(
    condition: Callable[[], Any], timeout: float = DEADLINE, what: str = ""
) -> Any:
    """Check `condition` until it is truthy; its value. For state with no event of its own
    (diagnostics, a process): the short poll is the wait, the deadline only fails a stuck test."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not (value := condition()):
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what or condition}")
        await asyncio.sleep(0.02)
    return value


def sent_edits(params: types.ApplyWorkspaceEditParams) -> dict[str, list[types.TextEdit]]:
    """URI → TextEdits of an applyEdit request, whichever form the server chose."""
    out: dict[str, list[types.TextEdit]] = {}
    for change in params.edit.document_changes or []:
        assert isinstance(change, types.TextDocumentEdit)
        out.setdefault(change.text_document.uri, []).extend(change.edits)  # type: ignore[arg-type]
    for uri, edits in (params.edit.changes or {}).items():
        out.setdefault(uri, []).extend(edits)
    return out


def make_client() -> InvincatClient:
    client = InvincatClient()
    register_lsp_features(client)  # pytest-lsp's defaults: diagnostics, progress, messages

    @client.feature("invincat/event")
    def _event(ls: InvincatClient, params: Event) -> None:
        ls.on_event(params)

    @client.feature("invincat/memory/didChange")
    def _memory_changed(ls: InvincatClient, params: dict[str, Any]) -> None:
        ls.memory_changes.append(params)

    @client.feature("invincat/statusChanged")
    def _status_changed(ls: InvincatClient, params: dict[str, Any]) -> None:
        ls.status_changes.append(params)

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    async def _apply(
        ls: InvincatClient, params: types.ApplyWorkspaceEditParams
    ) -> types.ApplyWorkspaceEditResult:
        return await ls.on_apply_edit(params)

    return client


async def start_client(
    env: dict[str, str],
    workspace: Path,
    editor: str,
    *,
    args: tuple[str, ...] = ("--stdio",),
    options: Any = None,
    configuration: dict[str, Any] | None = None,
    more_folders: tuple[Path, ...] = (),
) -> InvincatClient:
    """Spawn `invincat --stdio` and initialize it with the capabilities of `editor`, the
    `initializationOptions` `options`, `configuration` (section → value) as what the
    client answers to `workspace/configuration`, and `more_folders` as workspace folders
    after `workspace`."""
    client = make_client()
    for section, value in (configuration or {}).items():
        client.set_configuration(value, section=section)
    await client.start_io(INVINCAT, *args, env=env, cwd=str(workspace))
    await _initialize(client, workspace, editor, options, more_folders)
    return client


async def start_tcp_server(
    env: dict[str, str], workspace: Path, *args: str
) -> tuple[asyncio.subprocess.Process, int]:
    """Spawn `invincat --tcp --port 0 ARGS`; (the process, the port it logs)."""
    server = await asyncio.create_subprocess_exec(
        INVINCAT, "--tcp", "--port", "0", *args, env=env, cwd=str(workspace), stderr=PIPE
    )
    assert server.stderr is not None
    while True:
        line = (await asyncio.wait_for(server.stderr.readline(), DEADLINE)).decode()
        assert line, "the server exited before listening"
        if match := re.search(r"listening on 127\.0\.0\.1:(\d+)", line):
            return server, int(match.group(1))


def connection_info(env: dict[str, str], pid: int) -> dict[str, Any]:
    """What `invincat --tcp` wrote to its connection-info file (default location)."""
    return json.loads((Path(env["INVINCAT_HOME"]) / "run" / f"lsp-{pid}.json").read_text())


async def start_tcp_client(
    env: dict[str, str], workspace: Path, editor: str
) -> tuple[InvincatClient, asyncio.subprocess.Process]:
    """Spawn `invincat --tcp --port 0`, read its token, connect and initialize with it."""
    server, port = await start_tcp_server(env, workspace)
    token = connection_info(env, server.pid)["token"]
    client = make_client()
    await client.start_tcp("127.0.0.1", port)
    await _initialize(client, workspace, editor, options={"token": token})
    return client, server


async def _initialize(
    client: InvincatClient,
    workspace: Path,
    editor: str,
    options: Any = None,
    more_folders: tuple[Path, ...] = (),
) -> None:
    uri = file_uri(workspace)
    folders = [types.WorkspaceFolder(uri=file_uri(f), name=f.name) for f in more_folders]
    result = await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(editor),
            root_uri=uri,
            workspace_folders=[types.WorkspaceFolder(uri=uri, name=workspace.name), *folders],
            initialization_options=options,
        )
    )
    client.encoding = str(result.capabilities.position_encoding or "utf-16")
    client.server_capabilities = result.capabilities


async def stop_client(client: InvincatClient, timeout: float = DEADLINE) -> None:
    """shutdown + exit; kill the server if it does not comply in time."""
    try:
        await asyncio.wait_for(client.shutdown_session(), timeout)
    except (TimeoutError, RuntimeError):
        if client._server is not None and client._server.returncode is None:
            client._server.kill()
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(client.stop(), timeout)
