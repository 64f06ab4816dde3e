"""The Invincat LSP extension: custom method names, error codes and payload types.

This module is the single source of the names editors depend on: the editor clients
(`editors/vscode`, `editors/nvim`) mirror it in their own protocol constants module, and
docs/protocol.md ("LSP") documents every method with examples.

Params arrive as camelCase JSON and are validated here, strictly: cattrs (which pygls uses
for standard LSP types) would turn `{"prompt": 42}` into `"42"` and `"false"` into `True`,
which hides client bugs. Results are plain JSON objects described by TypedDicts. Only
attrs and the standard library are imported so the server answers `initialize` fast.
"""

from __future__ import annotations

from enum import IntEnum
from typing import TYPE_CHECKING, Any, Literal, NotRequired, TypedDict, TypeVar

import attrs

# Longer prompts are refused, by every front end alike: the core's limit, named here too.
from invincat_server.runtime.project.limits import MAX_PROMPT_CHARS as MAX_PROMPT_CHARS

if TYPE_CHECKING:
    from invincat_server.runtime.policy.decisions import Decision

# Client → server requests.
CHAT = "invincat/chat"
CANCEL = "invincat/cancel"
RESOLVE_APPROVAL = "invincat/resolveApproval"
PENDING_APPROVALS = "invincat/pendingApprovals"
THREADS_LIST = "invincat/threads/list"
THREADS_HISTORY = "invincat/threads/history"
THREADS_DELETE = "invincat/threads/delete"
THREADS_PRUNE = "invincat/threads/prune"
MEMORY_LIST = "invincat/memory/list"
MEMORY_SHOW = "invincat/memory/show"
MEMORY_APPLY = "invincat/memory/apply"
MEMORY_LOG = "invincat/memory/log"
MEMORY_REVERT = "invincat/memory/revert"
MEMORY_VERIFY = "invincat/memory/verify"
OFFLOAD = "invincat/offload"
RULES_LIST = "invincat/rules/list"
RULES_REVOKE = "invincat/rules/revoke"
CHECKPOINTS_LIST = "invincat/checkpoints/list"
REMOTE_LIST = "invincat/remote/list"
REMOTE_APPROVE = "invincat/remote/approve"
REMOTE_CANCEL = "invincat/remote/cancel"
CHECKPOINTS_DIFF = "invincat/checkpoints/diff"
CHECKPOINTS_RESTORE = "invincat/checkpoints/restore"
STATUS = "invincat/status"
"""Whether the server is ready for chats (`StatusResult`); answered at once, any time."""
DEBUG_STATUS = "invincat/debug/status"
"""Server internals for tests and bug reports; not a stable API."""

REQUESTS = frozenset(
    {
        CHAT,
        CANCEL,
        RESOLVE_APPROVAL,
        PENDING_APPROVALS,
        THREADS_LIST,
        THREADS_HISTORY,
        THREADS_DELETE,
        THREADS_PRUNE,
        MEMORY_LIST,
        MEMORY_SHOW,
        MEMORY_APPLY,
        MEMORY_LOG,
        MEMORY_REVERT,
        MEMORY_VERIFY,
        OFFLOAD,
        RULES_LIST,
        RULES_REVOKE,
        CHECKPOINTS_LIST,
        REMOTE_LIST,
        REMOTE_APPROVE,
        REMOTE_CANCEL,
        CHECKPOINTS_DIFF,
        CHECKPOINTS_RESTORE,
        STATUS,
        DEBUG_STATUS,
    }
)

# Server → client notifications.
EVENT = "invincat/event"
MEMORY_DID_CHANGE = "invincat/memory/didChange"
STATUS_CHANGED = "invincat/statusChanged"
"""The `invincat/status` object, sent whenever its `state` changes."""

SERVER_STATES = ("starting", "ready", "failed")

# workspace/executeCommand command behind the "accept/reject proposed edit" code actions.
RESOLVE_APPROVAL_COMMAND = "invincat.resolveApproval"
# workspace/executeCommand command behind "Invincat: fix / explain / ask": one argument, the
# params of `invincat/chat`. Not `invincat.chat`, so it never collides with an editor
# extension's own command ids.
START_CHAT_COMMAND = "invincat.startChat"
FIX_TITLE = "Invincat: fix this"
"""Followed by `: "MESSAGE"` (the diagnostic's message, cut to 60 characters)."""
EXPLAIN_TITLE = "Invincat: explain"
ASK_TITLE = "Invincat: ask about selection"
# Code action kinds: fixes are `quickfix`; explain/ask are under `refactor`, which VS Code
# shows in the lightbulb too (and in its Refactor… menu).
INVINCAT_ACTION_KIND = "refactor.invincat"
EXPLAIN_ACTION_KIND = "refactor.invincat.explain"
ASK_ACTION_KIND = "refactor.invincat.ask"

DIAGNOSTIC_SOURCE = "invincat"
ACCEPT_EDIT_TITLE = "Invincat: accept proposed edit"
REJECT_EDIT_TITLE = "Invincat: reject proposed edit"

MEMORY_SCOPES = ("user", "project")
REWIND_SCOPES = ("code", "conversation", "both")
MAX_THREAD_ID = 512
"""Longer thread ids are refused before any lookup (Invincat's are 36 characters)."""
MAX_OVERWRITE = 10_000
"""The most paths `invincat/checkpoints/restore` takes in `overwrite`."""
MAX_PATH = 4096

MEMORY_LOG_DEFAULT_LIMIT = 100
"""`invincat/memory/log` without `limit`: the journal keeps every batch forever, and a
sidebar shows the recent ones; ask for more explicitly."""


class ErrorCode(IntEnum):
    """JSON-RPC error codes of Invincat requests (server range -32099..-32000)."""

    INVALID_PARAMS = -32602
    MODEL_NOT_CONFIGURED = -32010
    """The model is not configured (or config.toml is broken); the message says what to set."""
    UNKNOWN_THREAD = -32011
    THREAD_BUSY = -32012
    REFUSED = -32013
    """Any other request the session refuses (empty prompt, unsupported mode)."""
    MEMORY_UNAVAILABLE = -32014
    """A memory store cannot be read or written (damaged and not backed up, locked by
    another process for too long, I/O error, broken `[memory]` config)."""
    UNKNOWN_MEMORY = -32015
    """No memory entry or journal batch with that id."""
    REMOTE_UNAVAILABLE = -32016
    """A remote deployment could not be reached or refused the request
    (`invincat/remote/*`); the message names it and why."""


class ParamsError(ValueError):
    """Params that do not match the method's schema; the message names each problem."""


DECISIONS = ("approve", "approve_always", "reject", "reject_always", "edit", "refine", "answer")
"""The core's decision types (runtime/policy/decisions.py, which imports pydantic: this
module must not; a unit test keeps the two alike): tool approvals take approve /
approve_always / reject / reject_always / edit; plans approve / reject / refine; questions
answer / reject. The Session refuses a mismatch with a reason."""

# --------------------------------------------------------------------------- params


MAX_AUTHOR_FILTER = 400
"""The longest `author` filter of `invincat/memory/log` (a name and an e-mail fit)."""


def _json(key: str, kinds: tuple[type, ...], choices: tuple[str, ...] | None = None) -> Any:
    """attrs field metadata: the JSON key, the accepted JSON types, the allowed values."""
    return {"key": key, "kinds": kinds, "choices": choices}


@attrs.frozen
class ChatParams:
    """`invincat/chat`: start a turn."""

    prompt: str = attrs.field(metadata=_json("prompt", (str,)))
    thread_id: str | None = attrs.field(default=None, metadata=_json("threadId", (str,)))
    """Continue this thread; omit to start a new one."""
    mode: str = attrs.field(default="agent", metadata=_json("mode", (str,), ("agent", "plan")))
    wait: bool = attrs.field(default=False, metadata=_json("wait", (bool,)))
    """Keep the request open until the turn ends; `$/cancelRequest` on it cancels the turn."""
    work_done_token: int | str | None = attrs.field(
        default=None, metadata=_json("workDoneToken", (int, str))
    )
    """Client-created progress token (LSP WorkDoneProgressParams); else the server creates one."""
    context: dict[str, Any] | None = attrs.field(default=None, metadata=_json("context", (dict,)))
    """What the editor shows (validated by lsp/chat_context.py; docs/protocol.md)."""
    folder: str | None = attrs.field(default=None, metadata=_json("folder", (str,)))
    """A `file://` uri of a workspace folder or of anything inside one: its project
    (docs/protocol.md, "Multi-root workspaces"); omit for the default routing."""


@attrs.frozen
class CancelParams:
    """`invincat/cancel`: cancel a running turn."""

    turn_id: str = attrs.field(metadata=_json("turnId", (str,)))


@attrs.frozen
class ResolveApprovalParams:
    """`invincat/resolveApproval` and the `invincat.resolveApproval` command."""

    approval_id: str = attrs.field(metadata=_json("approvalId", (str,)))
    decision: str = attrs.field(metadata=_json("decision", (str,), DECISIONS))
    scope: str | None = attrs.field(
        default=None, metadata=_json("scope", (str,), ("session", "workspace"))
    )
    message: str | None = attrs.field(default=None, metadata=_json("message", (str,)))
    edited_args: dict[str, Any] | None = attrs.field(
        default=None, metadata=_json("editedArgs", (dict,))
    )
    feedback: str | None = attrs.field(default=None, metadata=_json("feedback", (str,)))
    answers: list[Any] | None = attrs.field(default=None, metadata=_json("answers", (list,)))

    def runtime_decision(self) -> Decision:
        """The core's decision (`DecisionError` says what is missing or wrong)."""
        from invincat_server.runtime.policy.decisions import Decision  # pydantic: on use

        fields = {
            "type": self.decision,
            "scope": self.scope,
            "message": self.message,
            "edited_args": self.edited_args,
            "feedback": self.feedback,
            "answers": self.answers,
        }
        return Decision.parse({key: value for key, value in fields.items() if value is not None})


@attrs.frozen
class PendingApprovalsParams:
    """`invincat/pendingApprovals`: approvals waiting for a decision."""

    thread_id: str | None = attrs.field(default=None, metadata=_json("threadId", (str,)))
    folder: str | None = attrs.field(default=None, metadata=_json("folder", (str,)))
    """Which project (docs/protocol.md, "Multi-root workspaces")."""


@attrs.frozen
class ThreadsListParams:
    """`invincat/threads/list`."""

    all_workspaces: bool = attrs.field(default=False, metadata=_json("allWorkspaces", (bool,)))
    """Also list threads started in other workspaces (default: this workspace only)."""
    folder: str | None = attrs.field(default=None, metadata=_json("folder", (str,)))
    """Which project (docs/protocol.md, "Multi-root workspaces")."""


@attrs.frozen
class ThreadsHistoryParams:
    """`invincat/threads/history`."""

    thread_id: str = attrs.field(metadata=_json("threadId", (str,)))


@attrs.frozen
class ThreadsDeleteParams:
    """`invincat/threads/delete`: delete one saved thread (the editor asks the user first)."""

    thread_id: str = attrs.field(metadata=_json("threadId", (str,)))
    discard_pending: bool = attrs.field(default=False, metadata=_json("discardPending", (bool,)))
    """Also delete it when approvals still wait for a decision (after asking the user)."""


@attrs.frozen
class ThreadsPruneParams:
    """`invincat/threads/prune`: delete threads not used for `olderThanDays` days."""

    older_than_days: int | float = attrs.field(metadata=_json("olderThanDays", (int, float)))
    discard_pending: bool = attrs.field(default=False, metadata=_json("discardPending", (bool,)))
    dry_run: bool = attrs.field(default=False, metadata=_json("dryRun", (bool,)))
    """Only report what would be deleted (to show the user before asking)."""


@attrs.frozen
class MemoryListParams:
    """`invincat/memory/list`."""

    scope: str | None = attrs.field(default=None, metadata=_json("scope", (str,), MEMORY_SCOPES))
    """Only this scope; omit for both (user first)."""
    include_archived: bool = attrs.field(default=False, metadata=_json("includeArchived", (bool,)))
    tier: str | None = attrs.field(
        default=None, metadata=_json("tier", (str,), ("hot", "warm", "cold"))
    )
    folder: str | None = attrs.field(default=None, metadata=_json("folder", (str,)))
    """Which project (docs/protocol.md, "Multi-root workspaces")."""


@attrs.frozen
class MemoryShowParams:
    """`invincat/memory/show`: one entry and its journal history."""

    id: str = attrs.field(metadata=_json("id", (str,)))
    folder: str | None = attrs.field(default=None, metadata=_json("folder", (str,)))
    """Which project (docs/protocol.md, "Multi-root workspaces")."""


@attrs.frozen
class MemoryApplyParams:
    """`invincat/memory/apply`: a batch through governance, journaled with actor `user`."""

    scope: str = attrs.field(metadata=_json("scope", (str,), MEMORY_SCOPES))
    operations: list[Any] = attrs.field(metadata=_json("operations", (list,)))
    folder: str | None = attrs.field(default=None, metadata=_json("folder", (str,)))
    """Which project (docs/protocol.md, "Multi-root workspaces")."""

    def check(self, method: str) -> None:
        """Shape problems a client must fix (ParamsError). What is inside each op (its
        name, fields, target) is governance's to judge: those are dropped with a reason
        in the report, exactly as for every other proposer."""
        if not self.operations:
            raise ParamsError(f"Invalid params for {method}: `operations` is empty.")
        bad = [
            str(index)
            for index, op in enumerate(self.operations)
            if not isinstance(op, dict) or not isinstance(op.get("op"), str)
        ]
        if bad:
            raise ParamsError(
                f"Invalid params for {method}: every operation must be an object with an "
                f'`op` string (e.g. {{"op": "archive", "id": "mem_p_000001", "reason": '
                f'"..."}}); operations {", ".join(bad)} are not.'
            )


@attrs.frozen
class MemoryLogParams:
    """`invincat/memory/log`: journal records, newest first."""

    scope: str | None = attrs.field(default=None, metadata=_json("scope", (str,), MEMORY_SCOPES))
    limit: int = attrs.field(default=MEMORY_LOG_DEFAULT_LIMIT, metadata=_json("limit", (int,)))
    author: str | None = attrs.field(default=None, metadata=_json("author", (str,)))
    """Only batches of this author: a case-insensitive part of `Name <email>`."""

    folder: str | None = attrs.field(default=None, metadata=_json("folder", (str,)))
    """Which project (docs/protocol.md, "Multi-root workspaces")."""

    def check(self, method: str) -> None:
        if self.author is not None and not 1 <= len(self.author) <= MAX_AUTHOR_FILTER:
            raise ParamsError(
                f"Invalid params for {method}: `author` must be 1-{MAX_AUTHOR_FILTER} "
                "characters (a part of a name or e-mail)."
            )
        if self.limit < 1:
            raise ParamsError(
                f"Invalid params for {method}: `limit` must be at least 1, got {self.limit}."
            )


@attrs.frozen
class MemoryRevertParams:
    """`invincat/memory/revert`: undo a batch as a new batch."""

    batch_id: str = attrs.field(metadata=_json("batchId", (str,)))
    folder: str | None = attrs.field(default=None, metadata=_json("folder", (str,)))
    """Which project (docs/protocol.md, "Multi-root workspaces")."""


@attrs.frozen
class MemoryVerifyParams:
    """`invincat/memory/verify`: check cited entries against the files as they are now."""

    scope: str | None = attrs.field(default=None, metadata=_json("scope", (str,), MEMORY_SCOPES))
    include_archived: bool = attrs.field(default=False, metadata=_json("includeArchived", (bool,)))
    folder: str | None = attrs.field(default=None, metadata=_json("folder", (str,)))
    """Which project (docs/protocol.md, "Multi-root workspaces")."""


@attrs.frozen
class OffloadParams:
    """`invincat/offload`: move all but the latest turn out of the model's context."""

    thread_id: str = attrs.field(metadata=_json("threadId", (str,)))
    folder: str | None = attrs.field(default=None, metadata=_json("folder", (str,)))
    """Which project (docs/protocol.md, "Multi-root workspaces")."""


P = TypeVar("P")


@attrs.frozen
class RulesListParams:
    """`invincat/rules/list`: the project's 'always' approval rules (session + workspace)."""

    folder: str | None = attrs.field(default=None, metadata=_json("folder", (str,)))
    """Which project (docs/protocol.md, "Multi-root workspaces")."""


@attrs.frozen
class RulesRevokeParams:
    """`invincat/rules/revoke`: take back one rule by id (the editor asks the user first)."""

    id: str = attrs.field(metadata=_json("id", (str,)))
    folder: str | None = attrs.field(default=None, metadata=_json("folder", (str,)))
    """Which project (docs/protocol.md, "Multi-root workspaces")."""


@attrs.frozen
class RemoteListParams:
    """`invincat/remote/list`: threads whose run on a deployment waits for an approval."""

    deployment: str | None = attrs.field(default=None, metadata=_json("deployment", (str,)))
    """One configured deployment's name; omit for all."""
    folder: str | None = attrs.field(default=None, metadata=_json("folder", (str,)))
    """Which project's `.invincat/subagents.json` counts too ("Multi-root workspaces")."""


@attrs.frozen
class RemoteApproveParams:
    """`invincat/remote/approve`: decide every call a remote thread waits on."""

    thread_id: str = attrs.field(metadata=_json("threadId", (str,)))
    reject: bool = attrs.field(default=False, metadata=_json("reject", (bool,)))
    message: str | None = attrs.field(default=None, metadata=_json("message", (str,)))
    """With `reject`: told to the model."""
    deployment: str | None = attrs.field(default=None, metadata=_json("deployment", (str,)))
    folder: str | None = attrs.field(default=None, metadata=_json("folder", (str,)))

    def check(self, method: str) -> None:
        _check_thread_id(self.thread_id, method)
        if self.message is not None and not self.reject:
            raise ParamsError(f"Invalid params for {method}: `message` goes with `reject`.")


@attrs.frozen
class RemoteCancelParams:
    """`invincat/remote/cancel`: cancel a remote thread's running run."""

    thread_id: str = attrs.field(metadata=_json("threadId", (str,)))
    deployment: str | None = attrs.field(default=None, metadata=_json("deployment", (str,)))
    folder: str | None = attrs.field(default=None, metadata=_json("folder", (str,)))

    def check(self, method: str) -> None:
        _check_thread_id(self.thread_id, method)


def _check_thread_id(thread_id: str, method: str) -> None:
    if not 1 <= len(thread_id) <= MAX_THREAD_ID or "\x00" in thread_id:
        raise ParamsError(
            f"Invalid params for {method}: `threadId` must be 1-{MAX_THREAD_ID} characters "
            "without NUL (an id from `invincat/threads/list`)."
        )


@attrs.frozen
class CheckpointsListParams:
    """`invincat/checkpoints/list`: a thread's turns and what each changed."""

    thread_id: str = attrs.field(metadata=_json("threadId", (str,)))

    def check(self, method: str) -> None:
        _check_thread_id(self.thread_id, method)


@attrs.frozen
class CheckpointsDiffParams:
    """`invincat/checkpoints/diff`: what a rewind would change (nothing changes)."""

    thread_id: str = attrs.field(metadata=_json("threadId", (str,)))
    to_turn: int | None = attrs.field(default=None, metadata=_json("toTurn", (int,)))
    """Back to before this turn (1 = the first); or `undo`."""
    undo: bool = attrs.field(default=False, metadata=_json("undo", (bool,)))
    """Put the files back as they were before the thread's last rewind."""
    scope: str = attrs.field(default="code", metadata=_json("scope", (str,), REWIND_SCOPES))

    def check(self, method: str) -> None:
        _check_thread_id(self.thread_id, method)
        if (self.to_turn is None) == (not self.undo):
            raise ParamsError(
                f"Invalid params for {method}: give either `toTurn` (a turn number) or "
                "`undo: true`."
            )
        if self.to_turn is not None and self.to_turn < 1:
            raise ParamsError(
                f"Invalid params for {method}: `toTurn` counts from 1, got {self.to_turn}."
            )
        if self.undo and self.scope != "code":
            raise ParamsError(
                f"Invalid params for {method}: `undo` restores files only (scope `code`); "
                "a conversation rewind is not kept, so it cannot be undone."
            )


@attrs.frozen
class CheckpointsRestoreParams(CheckpointsDiffParams):
    """`invincat/checkpoints/restore`: do the rewind the same params' diff showed."""

    overwrite: list[Any] = attrs.field(factory=list, metadata=_json("overwrite", (list,)))
    """Paths (as the diff names them) to restore though they changed since Invincat
    wrote them; the others such are kept."""

    def check(self, method: str) -> None:
        super().check(method)
        if len(self.overwrite) > MAX_OVERWRITE:
            raise ParamsError(
                f"Invalid params for {method}: `overwrite` takes at most {MAX_OVERWRITE} paths."
            )
        bad = [
            str(index)
            for index, path in enumerate(self.overwrite)
            if not isinstance(path, str) or not 0 < len(path) <= MAX_PATH or "\x00" in path
        ]
        if bad:
            raise ParamsError(
                f"Invalid params for {method}: `overwrite` holds project-relative paths "
                f"(strings of 1-{MAX_PATH} characters without NUL); items {', '.join(bad[:10])} "
                "are not."
            )


def json_kind(value: Any) -> str:
    """The JSON type of a decoded value, as error messages name it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


_KIND_NAMES = {
    str: "a string",
    bool: "true or false",
    int: "a number",
    float: "a number",
    dict: "an object",
}


def parse_params(cls: type[P], raw: Any, method: str) -> P:
    """Validate JSON params against `cls`; raises ParamsError naming every problem."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ParamsError(f"Invalid params for {method}: expected an object, got {json_kind(raw)}.")
    values: dict[str, Any] = {}
    problems: list[str] = []
    for field in attrs.fields(cls):  # type: ignore[arg-type]  # P is an attrs class
        key, kinds, choices = (
            field.metadata["key"],
            field.metadata["kinds"],
            field.metadata["choices"],
        )
        value = raw.get(key)
        if value is None:
            if field.default is attrs.NOTHING:
                problems.append(f"`{key}` is required")
            continue
        # bool is an int in Python, but `"wait": 1` or `"threadId": true` is a client bug.
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            wanted = " or ".join(dict.fromkeys(_KIND_NAMES.get(k, "an array") for k in kinds))
            problems.append(f"`{key}` must be {wanted}, got {json_kind(value)}")
            continue
        if choices is not None and value not in choices:
            allowed = ", ".join(repr(choice) for choice in choices)
            problems.append(f"`{key}` must be one of {allowed}, got {value!r}")
            continue
        values[field.name] = value
    if problems:
        raise ParamsError(f"Invalid params for {method}: " + "; ".join(problems) + ".")
    return cls(**values)


# --------------------------------------------------------------------------- results


class TurnRef(TypedDict):
    """`invincat/chat` result (with `status` when `wait` was set)."""

    threadId: str
    turnId: str
    status: NotRequired[Literal["completed", "cancelled", "failed"]]


class CancelResult(TypedDict):
    cancelled: bool


class ResolveResult(TypedDict):
    """`resolved: false` carries a `reason`; a resolution that resumed a turn after a
    restart carries that turn's `threadId` and `turnId` (its events stream as usual)."""

    resolved: bool
    reason: NotRequired[str]
    threadId: NotRequired[str]
    turnId: NotRequired[str]


class PendingApprovalsResult(TypedDict):
    approvals: list[dict[str, Any]]
    """`approval_requested` event objects (snake_case, as in `invincat/event`)."""


class ThreadInfo(TypedDict):
    threadId: str
    title: str
    workspace: str
    createdAt: str
    updatedAt: str


class ThreadsListResult(TypedDict):
    threads: list[ThreadInfo]


class ThreadsHistoryResult(TypedDict):
    threadId: str
    messages: list[dict[str, Any]]


class ThreadsDeleteResult(TypedDict):
    threadId: str
    deleted: bool


class KeptThread(TypedDict):
    thread: ThreadInfo
    reason: str


class ThreadsPruneResult(TypedDict):
    deleted: list[ThreadInfo]
    """Deleted (with `dryRun`: would be deleted)."""
    kept: list[KeptThread]
    """Old enough but kept: a turn is running, or approvals wait (without `discardPending`)."""


class MemoryListResult(TypedDict):
    items: list[dict[str, Any]]
    """Entries as stored (snake_case, as `invincat memory list --json` prints them), plus
    `stale` and, for cited entries, `verification`."""
    stores: dict[str, str]
    """Scope → store file path."""
    problems: NotRequired[dict[str, str]]
    """Scope → why its store could not be read (what was salvaged is still listed)."""
    invalid_entries: NotRequired[list[dict[str, Any]]]
    """Entries skipped because they do not validate: `{scope, index, id, reason}` each
    (`id` null unless it is a printable id); the valid entries are in `items`."""
    instructions: NotRequired[list[dict[str, Any]]]
    """The project's instruction files, a read-only tier apart from memory (absent for
    `scope: "user"`): `{source, path, size, included, truncated, skipped, imported_by,
    applies_to?}` each, never their text (runtime/instructions)."""


class MemoryShowResult(TypedDict):
    entry: dict[str, Any] | None
    """None once deleted."""
    history: list[dict[str, Any]]
    """Journal records that touched the entry, oldest first."""
    invalid_entry: NotRequired[dict[str, Any]]
    """When the stored entry of that id does not validate: `{scope, index, id, reason}`."""


class MemoryLogResult(TypedDict):
    records: list[dict[str, Any]]


class MemoryVerifyResult(TypedDict):
    entries: list[dict[str, Any]]
    """Cited entries: id, scope, status, section, content, state (`fresh`/`moved`/`stale`),
    stale, note (when stale) and citations (each: citation, state, current, change)."""
    checked: int
    stale: int
    moved: int
    invalid: int
    invalid_entries: list[dict[str, Any]]
    """As in `MemoryListResult`: entries skipped because they do not validate."""


class OffloadResult(TypedDict):
    threadId: str
    offloadedMessages: int
    file: str | None
    tokensBefore: int
    tokensAfter: int


class RulesListResult(TypedDict):
    items: list[dict[str, Any]]
    """`{id, scope, effect, tool, command, covers, createdAt, workspace}` each."""
    problems: list[str]
    """Why some rules could not be listed (a damaged approvals.json); usually empty."""


class RulesRevokeResult(TypedDict):
    revoked: dict[str, Any]


class RemoteListResult(TypedDict):
    pending: list[dict[str, Any]]
    """`{deployment, thread_id, kind, calls: [{tool_name, summary, tool_call_id,
    approval_id}]}` each, as `invincat remote list --json`."""
    skipped: int


class RemoteApproveResult(TypedDict):
    deployment: str
    thread_id: str
    run_id: str
    decision: str
    calls: list[str]


class RemoteCancelResult(TypedDict):
    deployment: str
    thread_id: str
    cancelled: list[str]


class CheckpointsListResult(TypedDict):
    """The `rewind_turns` object of `invincat rewind --json` (runtime/checkpoints/wire.py)."""

    thread_id: str
    turns: list[dict[str, Any]]
    """`{turn, prompt, files}` each, numbered from 1."""
    rewinds: list[int]
    problems: list[str]


class CheckpointsDiffResult(TypedDict):
    """The `rewind_plan` object; each file also says whether its buffer takes the change."""

    thread_id: str
    to_turn: int | None
    undo: bool
    scope: str
    files: list[dict[str, Any]]
    """`{path, action, changed_by_hand, mode, diff, problem, in_editor}` each."""
    conflicts: list[str]
    problems: list[str]


class CheckpointsRestoreResult(TypedDict):
    """The `rewind_done` object; `restored` includes the buffers the editor took, and
    `failed` those it refused (path → why)."""

    restored: list[str]
    skipped: list[str]
    failed: dict[str, str]
    checkpoint: int | None
    conversation_removed: int | None


class MemoryDidChangeParams(TypedDict):
    """`invincat/memory/didChange` notification params."""

    scope: str
    batchId: str | None
    """The journal batch behind the change; None for a store edited outside governance."""
    folder: NotRequired[str]
    """For `project`: the uri of the (first) workspace folder of the project that changed."""


class EventParams(TypedDict):
    """`invincat/event` notification params; `event` is a core event object."""

    threadId: str
    turnId: str
    event: dict[str, Any]


class StatusTimings(TypedDict):
    """Milliseconds; null until that step has happened."""

    initializeMs: float | None
    """Server process start → `initialize` answered."""
    stackImportMs: float | None
    """Importing the agent stack (LangChain, LangGraph, the model client), in the background."""
    sessionOpenMs: float | None
    """`initialize` answered → the session open (includes the stack import)."""


class ProjectStatus(TypedDict):
    """One open project in `StatusResult.projects`."""

    folder: str
    """The uri of its (first) workspace folder."""
    root: str
    """Its project root, a path."""
    state: Literal["starting", "ready", "failed"]
    message: NotRequired[str]


class StatusResult(TypedDict):
    """`invincat/status` result and `invincat/statusChanged` params."""

    state: Literal["starting", "ready", "failed"]
    message: NotRequired[str]
    """For `failed`: why, and what to do (the same text as the window message)."""
    timings: StatusTimings
    projects: list[ProjectStatus]
    """One per open project, in workspace-folder order."""
