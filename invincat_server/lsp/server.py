"""`invincat --stdio` / `invincat --tcp`: the Invincat language server (pygls 2.1).

Every feature is registered in `build_server`, in one place; each lives in
`invincat_server/lsp/features/` as one small function named after its LSP method.
`InvincatProtocol` adapts pygls where its defaults would hurt a long-running editor
session: custom params stay plain JSON (validated in `protocol.py`), a request whose params
do not even parse still gets an error answer instead of silence, and an editor reply to a
request the server gave up on is dropped instead of raising.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
from collections.abc import Coroutine
from pathlib import Path
from typing import IO, Any

import attrs
import cattrs
from lsprotocol import types
from pygls.exceptions import (
    FeatureNotificationError,
    JsonRpcException,
    JsonRpcInternalError,
    JsonRpcMethodNotFound,
)
from pygls.io_ import StdinAsyncReader, StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import JsonRPCNotification, JsonRPCRequestMessage, MsgId

from invincat_server import __version__
from invincat_server.lsp.code_action_settings import CodeActionSettings
from invincat_server.lsp.documents import EditorDocuments
from invincat_server.lsp.envelope import InvalidMessage, check_envelope, check_top_level
from invincat_server.lsp.foreground import Foreground
from invincat_server.lsp.listener import OneEditor
from invincat_server.lsp.log import configure_logging
from invincat_server.lsp.memory_sync import MemorySync
from invincat_server.lsp.progress import TurnProgress
from invincat_server.lsp.projects import Projects
from invincat_server.lsp.proposals import ProposedEdits
from invincat_server.lsp.protocol import (
    INVINCAT_ACTION_KIND,
    REQUESTS,
    RESOLVE_APPROVAL_COMMAND,
    START_CHAT_COMMAND,
    ErrorCode,
)
from invincat_server.lsp.transport import (
    TOKEN_ENV,
    TransportError,
    bind_private_socket,
    default_info_file,
    make_token,
    peer_uid,
    read_authenticated_initialize,
    remove_file,
    run_messages,
    write_connection_info,
)

log = logging.getLogger("invincat.lsp")


@attrs.define
class _UnparseableRequest:
    """A request whose params failed to structure; answered with InvalidParams."""

    id: MsgId
    method: str
    message: str


@attrs.define
class _UnparseableNotification:
    """A notification whose params failed to structure: logged and ignored."""

    method: str
    message: str


@attrs.define
class _UnparseableResponse:
    """A reply to one of our requests that does not match its result type: the waiting
    request fails with that error instead of the whole server."""

    id: MsgId | None
    message: str


class InvincatProtocol(LanguageServerProtocol):
    """pygls' LSP protocol with Invincat's robustness fixes."""

    def structure_message(self, data: dict[str, Any]) -> Any:
        # json.loads calls this for every object, innermost first: only messages count.
        if "jsonrpc" not in data:
            return data
        invalid = check_envelope(data)
        if invalid is not None:
            return invalid
        method = data.get("method")
        if method in REQUESTS:
            # Keep custom params as JSON: pygls would turn them into namedtuples.
            if "id" in data:
                return JsonRPCRequestMessage(
                    id=data["id"], method=method, jsonrpc=data["jsonrpc"], params=data.get("params")
                )
            return JsonRPCNotification(method=method, jsonrpc=data["jsonrpc"], params=None)
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            # pygls raises here, out of the read loop, which ends the server (issue 27:
            # `$/cancelRequest` with `{}`). Every kind of message gets a verdict instead:
            # the request is answered, the notification ignored, the reply fails its
            # request; one bad message costs that message only.
            msg_id = data.get("id")
            if not isinstance(method, str):
                return _UnparseableResponse(
                    msg_id,
                    f"The editor's reply to request {msg_id!r} does not fit its result type: "
                    f"{_problems(exc)}.",
                )
            if msg_id is not None:  # check_envelope vouched for it
                return _UnparseableRequest(msg_id, method, _describe(method, exc))
            return _UnparseableNotification(method, _describe(method, exc))

    def handle_message(self, message: Any) -> None:
        if isinstance(message, dict | list | str | int | float) or message is None:
            message = check_top_level(message)  # not a JSON-RPC object at all
        if isinstance(message, InvalidMessage):
            self.answer_invalid(message)
            return
        if isinstance(message, _UnparseableRequest):
            error = types.ResponseError(code=ErrorCode.INVALID_PARAMS, message=message.message)
            self._send_response(message.id, error=error)
            return
        if isinstance(message, _UnparseableNotification):
            log.warning("ignored a %s notification: %s", message.method, message.message)
            return
        if isinstance(message, _UnparseableResponse):
            log.warning("%s", message.message)
            if message.id is not None:
                error = types.ResponseError(code=ErrorCode.INVALID_PARAMS, message=message.message)
                self._handle_response(message.id, error=error)
            return
        if isinstance(message, JsonRPCNotification) and message.method in REQUESTS:
            log.warning("%s was sent as a notification; send it as a request", message.method)
            return
        if _is_notification(message):
            try:
                super().handle_message(message)
            except SystemExit:  # `exit`: pygls' way to end the server
                raise
            except Exception as exc:
                # Params that structured but that pygls' own dispatch cannot use
                # (`$/cancelRequest` with an array for `id`): nobody waits for an answer.
                log.warning("ignored a %s notification: %s", message.method, exc)
            return
        super().handle_message(message)

    def answer_invalid(self, invalid: InvalidMessage) -> None:
        """Answer a message that is not valid JSON-RPC (or drop it if it was a response)."""
        log.warning("ignored an invalid message from the editor: %s", invalid.message)
        if invalid.answer:
            self._send_data(invalid.response())

    def _send_response(
        self, msg_id: MsgId, result: Any | None = None, error: Any | None = None
    ) -> None:
        # pygls puts the Python traceback of an unexpected failure into `error.data`: it
        # reveals the server's internals to whoever is connected and helps no user. The
        # log (stderr) keeps it.
        if isinstance(error, types.ResponseError) and isinstance(error.data, dict):
            if "traceback" in error.data:
                error = types.ResponseError(code=error.code, message=error.message)
        super()._send_response(msg_id, result, error)
        # The first response after `initialize` configured the host is its answer: the
        # background start-up begins only once it is written (lsp/projects.py).
        if isinstance(self._server, InvincatLanguageServer):
            self._server.projects.initialize_answered()

    def _get_handler(self, feature_name: str) -> Any:
        try:
            return super()._get_handler(feature_name)
        except JsonRpcMethodNotFound:
            raise JsonRpcMethodNotFound(
                f"Unknown method {feature_name!r}: invincat {__version__} does not implement "
                "it (docs/protocol.md lists the methods it does)."
            ) from None

    def _handle_response(
        self, msg_id: MsgId, result: Any | None = None, error: Any | None = None
    ) -> None:
        future = self._request_futures.get(msg_id)
        if future is not None and future.done():
            # We stopped waiting (turn cancelled, timeout, shutdown): pygls 2.1.1 would
            # raise InvalidStateError setting the result of a cancelled future.
            del self._request_futures[msg_id]
            log.debug("dropped the client's late reply to %s", msg_id)
            return
        super()._handle_response(msg_id, result, error)

    def notify_json(self, method: str, params: dict[str, Any]) -> None:
        """Send a notification whose params are plain JSON (skips cattrs: the hot path
        of streamed events)."""
        self._send_data({"jsonrpc": self.VERSION, "method": method, "params": params})


def _is_notification(message: Any) -> bool:
    return isinstance(getattr(message, "method", None), str) and not hasattr(message, "id")


def _describe(method: str, exc: JsonRpcException) -> str:
    return f"Invalid params for {method}: {_problems(exc)}."


def _problems(exc: JsonRpcException) -> str:
    cause = exc.__cause__
    if isinstance(cause, cattrs.ClassValidationError):
        return "; ".join(p.replace("$.params.", "") for p in cattrs.transform_error(cause))
    return str(exc.message)


class InvincatLanguageServer(LanguageServer):
    """The server and the per-connection state its features share."""

    protocol: InvincatProtocol

    def __init__(self) -> None:
        super().__init__(
            "invincat",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=InvincatProtocol,
        )
        self.projects = Projects(self)
        self.documents = EditorDocuments(self)
        self.proposals = ProposedEdits(self)
        # Not `progress`: that is pygls' own $/progress method on LanguageServer.
        self.turn_progress = TurnProgress(self)
        self.memory_sync = MemorySync(self)
        self.foreground = Foreground()
        self.code_action_settings = CodeActionSettings(self)

    def report_server_error(self, error: Exception, source: Any) -> None:
        # pygls reports a failed send (the editor closed the stream) by sending a message
        # about it, which fails the same way, recursively: log those instead.
        if source is JsonRpcInternalError:
            log.error("sending to the editor failed: %s", error)
            return
        if source is FeatureNotificationError:
            # A notification handler failed: our own features log their failures
            # (errors.notification_handler), so this is pygls' built-in handling of
            # params it cannot use. Nobody waits for an answer, and "Error in server" would
            # blame the user's server for the editor's message.
            log.warning("ignored a notification the server could not handle: %s", error)
            return
        super().report_server_error(error, source)

    def tell_user(self, message: str, *, error: bool = False) -> None:
        """A message the user must see (window/showMessage), also logged."""
        (log.error if error else log.warning)("%s", message)
        kind = types.MessageType.Error if error else types.MessageType.Warning
        self.window_show_message(types.ShowMessageParams(type=kind, message=f"Invincat: {message}"))

    def warn_user(self, message: str) -> None:
        self.tell_user(message)

    # transports -----------------------------------------------------------------
    def serve_stdio(self, stdin: IO[bytes], stdout: IO[bytes]) -> None:
        self._stop_event = threading.Event()
        # pygls annotates BinaryIO and a Reader of coroutines; the pipes are binary files and
        # run_messages only awaits what the reader returns (futures here).
        self.protocol.set_writer(StdoutWriter(stdout))  # type: ignore[arg-type]
        reader = StdinAsyncReader(stdin, self.thread_pool)  # type: ignore[arg-type]
        self._run(
            run_messages(
                reader,  # type: ignore[arg-type]
                self.protocol,
                self._stop_event,
                self._on_read_error,
            )
        )

    def serve_tcp(self, host: str, port: int, *, token: str, info_file: Path) -> int:
        """Serve the one editor that presents `token` on host:port; the exit code."""

        written = False

        async def listen(on_connection: Any) -> asyncio.Server:
            nonlocal written
            server = await asyncio.start_server(on_connection, host, port)
            bound = server.sockets[0].getsockname()
            info = {"host": bound[0], "port": bound[1], "token": token, "pid": os.getpid()}
            write_connection_info(info_file, info)
            written = True
            where = ", ".join("{}:{}".format(*sock.getsockname()[:2]) for sock in server.sockets)
            log.info("Invincat language server listening on %s (token in %s)", where, info_file)
            return server

        async def admit(reader: asyncio.StreamReader, writer: Any) -> tuple[bytes | None, str]:
            return await read_authenticated_initialize(reader, token)

        try:
            return self._serve_one_editor(listen, admit)
        finally:
            if written:  # never a file that was there before and we did not replace
                remove_file(info_file)

    def serve_socket(self, path: Path) -> int:
        """Serve the one editor that connects to the 0600 unix socket `path`; the exit code."""

        bound = False

        async def listen(on_connection: Any) -> asyncio.Server:
            nonlocal bound
            sock = bind_private_socket(path)
            bound = True
            server = await asyncio.start_unix_server(on_connection, sock=sock)
            log.info("Invincat language server listening on %s", path)
            return server

        async def admit(reader: Any, writer: asyncio.StreamWriter) -> tuple[bytes | None, str]:
            uid = peer_uid(writer)
            if uid is not None and uid not in (os.getuid(), 0):
                return None, f"it runs as uid {uid}, not as this server's user"
            return b"", ""

        try:
            return self._serve_one_editor(listen, admit)
        finally:
            if bound:  # never the socket of another server that made us refuse to start
                remove_file(path)

    def _serve_one_editor(self, listen: Any, admit: Any) -> int:
        self._stop_event = threading.Event()
        editor = OneEditor(self.protocol, self._stop_event, admit, self._on_read_error)
        failed: list[str] = []

        async def serve() -> None:
            try:
                await editor.serve(listen)
            except TransportError as exc:
                failed.append(str(exc))
            await self._let_handlers_finish()

        self._run(serve())
        if failed:
            log.error("Cannot listen: %s", failed[0])
            return 1
        return 0

    async def _let_handlers_finish(self, timeout: float = 5.0) -> None:
        """After the editor left: let request handlers still running (a `shutdown` that
        is closing the session) end, instead of being cancelled by asyncio.run, which
        would log their cancellation as tracebacks; whatever remains is stopped quietly."""
        await self.projects.close()
        current = asyncio.current_task()
        others = [task for task in asyncio.all_tasks() if task is not current]
        if others:
            await asyncio.wait(others, timeout=timeout)
        asyncio.get_running_loop().set_exception_handler(_quiet_after_stop)

    def _on_read_error(self, error: Exception) -> None:
        self.report_server_error(error, JsonRpcException)

    def _run(self, main: Coroutine[Any, Any, None]) -> None:
        async def until_closed() -> None:
            try:
                await main
            finally:
                # Close the session while the loop still runs: otherwise asyncio.run
                # cancels the turns as if the user had, which abandons their approvals
                # instead of keeping them pending for the next start.
                await self.projects.close()

        try:
            asyncio.run(until_closed())
        except BrokenPipeError:
            log.error("The editor closed the connection; shutting down.")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()


def _quiet_after_stop(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    log.debug("after stop: %s", context.get("message"))


def build_server() -> InvincatLanguageServer:
    """The server with every feature registered (the one place that lists them)."""
    from invincat_server.lsp.features import (
        approvals,
        chat,
        checkpoints,
        code_actions,
        context,
        documents,
        lifecycle,
        memory,
        remote,
        rules,
        threads,
    )
    from invincat_server.lsp.protocol import (
        CANCEL,
        CHAT,
        CHECKPOINTS_DIFF,
        CHECKPOINTS_LIST,
        CHECKPOINTS_RESTORE,
        DEBUG_STATUS,
        MEMORY_APPLY,
        MEMORY_LIST,
        MEMORY_LOG,
        MEMORY_REVERT,
        MEMORY_SHOW,
        MEMORY_VERIFY,
        OFFLOAD,
        PENDING_APPROVALS,
        REMOTE_APPROVE,
        REMOTE_CANCEL,
        REMOTE_LIST,
        RESOLVE_APPROVAL,
        RULES_LIST,
        RULES_REVOKE,
        STATUS,
        THREADS_DELETE,
        THREADS_HISTORY,
        THREADS_LIST,
        THREADS_PRUNE,
    )

    ls = InvincatLanguageServer()
    features: list[tuple[str, Any, Any]] = [
        (types.INITIALIZE, lifecycle.initialize, None),
        (types.INITIALIZED, lifecycle.initialized, None),
        (types.SHUTDOWN, lifecycle.shutdown, None),
        (STATUS, lifecycle.invincat_status, None),
        (DEBUG_STATUS, lifecycle.invincat_debug_status, None),
        (types.TEXT_DOCUMENT_DID_OPEN, documents.text_document_did_open, None),
        (types.TEXT_DOCUMENT_DID_CHANGE, documents.text_document_did_change, None),
        (types.TEXT_DOCUMENT_DID_CLOSE, documents.text_document_did_close, None),
        (
            types.WORKSPACE_DID_CHANGE_CONFIGURATION,
            lifecycle.workspace_did_change_configuration,
            None,
        ),
        (
            types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS,
            lifecycle.workspace_did_change_workspace_folders,
            None,
        ),
        (
            types.TEXT_DOCUMENT_CODE_ACTION,
            code_actions.text_document_code_action,
            types.CodeActionOptions(
                code_action_kinds=[types.CodeActionKind.QuickFix, INVINCAT_ACTION_KIND]
            ),
        ),
        (CHAT, chat.invincat_chat, None),
        (CANCEL, chat.invincat_cancel, None),
        (RESOLVE_APPROVAL, approvals.invincat_resolve_approval, None),
        (PENDING_APPROVALS, approvals.invincat_pending_approvals, None),
        (THREADS_LIST, threads.invincat_threads_list, None),
        (THREADS_HISTORY, threads.invincat_threads_history, None),
        (THREADS_DELETE, threads.invincat_threads_delete, None),
        (THREADS_PRUNE, threads.invincat_threads_prune, None),
        (OFFLOAD, context.invincat_offload, None),
        (CHECKPOINTS_LIST, checkpoints.invincat_checkpoints_list, None),
        (CHECKPOINTS_DIFF, checkpoints.invincat_checkpoints_diff, None),
        (CHECKPOINTS_RESTORE, checkpoints.invincat_checkpoints_restore, None),
        (MEMORY_LIST, memory.invincat_memory_list, None),
        (MEMORY_SHOW, memory.invincat_memory_show, None),
        (MEMORY_APPLY, memory.invincat_memory_apply, None),
        (MEMORY_LOG, memory.invincat_memory_log, None),
        (MEMORY_REVERT, memory.invincat_memory_revert, None),
        (MEMORY_VERIFY, memory.invincat_memory_verify, None),
        (RULES_LIST, rules.invincat_rules_list, None),
        (RULES_REVOKE, rules.invincat_rules_revoke, None),
        (REMOTE_LIST, remote.invincat_remote_list, None),
        (REMOTE_APPROVE, remote.invincat_remote_approve, None),
        (REMOTE_CANCEL, remote.invincat_remote_cancel, None),
    ]
    for method, handler, options in features:
        ls.feature(method, options)(handler)
    ls.command(RESOLVE_APPROVAL_COMMAND)(approvals.invincat_resolve_approval_command)
    ls.command(START_CHAT_COMMAND)(chat.invincat_start_chat_command)
    return ls


def _claim_stdio() -> tuple[IO[bytes], IO[bytes]]:
    """Reserve the real stdin/stdout for protocol frames.

    Anything else that writes to fd 1 (a stray print, a library, a child process) would
    corrupt the stream, and a child reading fd 0 would steal the editor's messages: fd 1
    becomes stderr and fd 0 /dev/null for everyone but the protocol.
    """
    sys.stdout.flush()
    protocol_in = os.fdopen(os.dup(sys.stdin.fileno()), "rb")
    protocol_out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, sys.stdin.fileno())
    os.close(devnull)
    sys.stdout = sys.stderr
    return protocol_in, protocol_out


def serve(
    *,
    tcp: bool = False,
    host: str = "127.0.0.1",
    port: int | None = None,
    socket_path: Path | None = None,
    info_file: Path | None = None,
) -> int:
    """Run the server until the editor disconnects; the CLI's exit code."""
    ls = build_server()
    configure_logging(ls)
    if socket_path is not None:
        return ls.serve_socket(socket_path)
    if tcp:
        assert port is not None
        try:
            token = make_token(os.environ)
        except TransportError as exc:
            log.error("%s", exc)
            return 2
        # Commands the agent runs inherit the environment: they must not see the token.
        os.environ.pop(TOKEN_ENV, None)
        return ls.serve_tcp(
            host, port, token=token, info_file=info_file or default_info_file(os.environ)
        )
    ls.serve_stdio(*_claim_stdio())
    return 0
