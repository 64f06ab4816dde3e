"""Every method the language server registers survives malformed params (issue 27 §4).

For each registered request and notification (and `$/cancelRequest`, `$/progress`, which
pygls handles itself), the real `invincat --stdio` gets its params as the wrong JSON type
(a string, a number, an array, null…), and a valid example with every field in turn
removed, nulled, or replaced by a wrong type, an array, an object, a NUL byte or a huge
string. A request gets exactly one answer (a result, or an error a person can read, never
`-32603` with a traceback); a notification is logged and ignored. After each message the
server still answers a following request, and it never tells the user "Error in server".
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from invincat_server.lsp.server import build_server
from tests.lsp.client import file_uri
from tests.lsp.raw import Peer, initialize, initialized, request

INVINCAT = str(Path(sys.executable).with_name("invincat"))

NOT_FUZZED = {
    "exit": "ends the server by design (test_shutdown.py)",
    "shutdown": "takes no params and stops the server serving (test_shutdown.py)",
}

HUGE = "x" * 2_000_000
LONG = "y" * 4096
"""Long, not huge, in every field: pygls logs the params it could not use."""
BAD_LEAVES: list[Any] = [None, 42, -1, 1e308, True, "a\x00b", LONG, [1], [None], {"x": {}}]
BAD_PARAMS: list[Any] = ["text", 42, True, [], [{}], [None], {"\x00": "\x00"}, HUGE]
"""Params that are not what any method takes (null and {} are valid for some)."""

RANGE = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}


def examples(workspace: Path) -> dict[str, Any]:
    """A valid params object for each method: the fuzzing starts from it."""
    doc = file_uri(workspace / "a.txt")
    folder = file_uri(workspace)
    return {
        "$/cancelRequest": {"id": 999},
        "$/progress": {"token": "t", "value": {"kind": "end"}},
        "$/setTrace": {"value": "off"},
        "initialize": {"processId": None, "rootUri": folder, "capabilities": {}},
        "initialized": {},
        "textDocument/didOpen": {
            "textDocument": {"uri": doc, "languageId": "text", "version": 1, "text": "a\n"}
        },
        "textDocument/didChange": {
            "textDocument": {"uri": doc, "version": 2},
            "contentChanges": [{"range": RANGE, "text": "b"}],
        },
        "textDocument/didClose": {"textDocument": {"uri": doc}},
        "textDocument/codeAction": {
            "textDocument": {"uri": doc},
            "range": RANGE,
            "context": {"diagnostics": [{"range": RANGE, "message": "m"}]},
        },
        "notebookDocument/didOpen": {
            "notebookDocument": {
                "uri": "file:///n.ipynb",
                "notebookType": "jupyter",
                "version": 1,
                "cells": [{"kind": 2, "document": "file:///n.ipynb#c1"}],
            },
            "cellTextDocuments": [
                {"uri": "file:///n.ipynb#c1", "languageId": "py", "version": 1, "text": "1"}
            ],
        },
        "notebookDocument/didChange": {
            "notebookDocument": {"uri": "file:///n.ipynb", "version": 2},
            "change": {"metadata": {}},
        },
        "notebookDocument/didClose": {
            "notebookDocument": {"uri": "file:///n.ipynb"},
            "cellTextDocuments": [{"uri": "file:///n.ipynb#c1"}],
        },
        "window/workDoneProgress/cancel": {"token": "t"},
        "workspace/didChangeConfiguration": {"settings": {"invincat": {"codeActions": {}}}},
        "workspace/didChangeWorkspaceFolders": {
            # Not the workspace: the methods fuzzed after it still have their project.
            "event": {"added": [], "removed": [{"uri": file_uri(workspace / "gone"), "name": "g"}]}
        },
        "workspace/executeCommand": {
            "command": "invincat.resolveApproval",
            "arguments": [{"approvalId": "ap_nope", "decision": "reject"}],
        },
        "invincat/chat": {"prompt": "hi", "threadId": "t_nope", "mode": "plan"},
        "invincat/cancel": {"turnId": "turn_nope"},
        "invincat/resolveApproval": {
            "approvalId": "ap_nope",
            "decision": "reject",
            "scope": "session",
            "message": "m",
            "editedArgs": {},
            "feedback": "f",
            "answers": [],
        },
        "invincat/pendingApprovals": {"threadId": "t_nope", "folder": folder},
        "invincat/threads/list": {"allWorkspaces": False, "folder": folder},
        "invincat/threads/history": {"threadId": "t_nope"},
        "invincat/threads/delete": {"threadId": "t_nope", "discardPending": False},
        "invincat/threads/prune": {"olderThanDays": 30, "discardPending": False, "dryRun": True},
        "invincat/memory/list": {
            "scope": "project",
            "includeArchived": True,
            "tier": "hot",
            "folder": folder,
        },
        "invincat/memory/show": {"id": "mem_p_000001", "folder": folder},
        "invincat/memory/apply": {
            "scope": "project",
            "operations": [{"op": "archive", "id": "mem_p_000001", "reason": "r"}],
            "folder": folder,
        },
        "invincat/memory/log": {"scope": "project", "limit": 5, "folder": folder},
        "invincat/memory/revert": {"batchId": "b_nope", "folder": folder},
        "invincat/memory/verify": {"scope": "project", "includeArchived": False, "folder": folder},
        "invincat/offload": {"threadId": "t_nope", "folder": folder},
        "invincat/checkpoints/list": {"threadId": "t_nope"},
        "invincat/checkpoints/diff": {"threadId": "t_nope", "toTurn": 1, "scope": "both"},
        "invincat/checkpoints/restore": {
            "threadId": "t_nope",
            "toTurn": 1,
            "scope": "code",
            "overwrite": ["a.txt"],
        },
        "invincat/rules/list": {"folder": folder},
        "invincat/rules/revoke": {"id": "rule_nope", "folder": folder},
        "invincat/remote/list": {"deployment": "lab", "folder": folder},
        "invincat/remote/approve": {
            "threadId": "t_nope",
            "reject": True,
            "message": "no",
            "deployment": "lab",
            "folder": folder,
        },
        "invincat/remote/cancel": {"threadId": "t_nope", "deployment": "lab", "folder": folder},
        "invincat/status": {},
        "invincat/debug/status": {},
    }


def registered_methods() -> tuple[set[str], set[str]]:
    """(requests, notifications) the server registers, as lsprotocol/protocol.py type them."""
    from lsprotocol.types import METHOD_TO_TYPES

    from invincat_server.lsp.protocol import REQUESTS

    fm = build_server().protocol.fm
    methods = set(fm.builtin_features) | set(fm.features) | {"$/cancelRequest", "$/progress"}
    requests = {m for m in methods if m in REQUESTS or (METHOD_TO_TYPES.get(m, (0, None))[1])}
    requests |= {"shutdown"}  # lsprotocol types its (absent) result as None
    return requests, methods - requests


def mutations(value: Any) -> Iterator[tuple[str, Any]]:
    """(where, mutated copy): every field of `value` removed or replaced by a bad leaf,
    recursively (arrays: their first item)."""
    if isinstance(value, dict):
        for key, inner in value.items():
            rest = {k: v for k, v in value.items() if k != key}
            yield f"-{key}", rest
            for bad in BAD_LEAVES:
                yield f"{key}={_short(bad)}", {**rest, key: bad}
            for where, mutated in mutations(inner):
                yield f"{key}.{where}", {**value, key: mutated}
    elif isinstance(value, list) and value:
        for where, mutated in mutations(value[0]):
            yield f"[0].{where}", [mutated, *value[1:]]


def _short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) < 20 else f"<{len(text)} chars>"


@pytest.fixture
def server(
    invincat_env: dict[str, str], workspace: Path, tmp_path: Path
) -> Iterator[tuple[Peer, Path]]:
    stderr = tmp_path / "stderr.log"
    with stderr.open("wb") as log:
        process = subprocess.Popen(
            [INVINCAT, "--stdio"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            cwd=workspace,
            env=invincat_env,
        )
    assert process.stdin is not None and process.stdout is not None
    peer = Peer(process.stdout, process.stdin)
    try:
        peer.send(initialize(1, workspace))
        peer.answer(1)
        peer.send(initialized())
        yield peer, stderr
    finally:
        process.kill()
        process.wait()


class Checker:
    """Sends messages, reads every answer, and keeps what the user would have seen."""

    def __init__(self, peer: Peer, stderr: Path) -> None:
        self.peer = peer
        self.stderr = stderr
        self.next_id = 100
        self.failures: list[str] = []

    def _answer(self, msg_id: int, what: str) -> dict[str, Any] | None:
        while True:
            message = self.peer.receive()
            if message is None:
                tail = self.stderr.read_text(errors="replace")[-3000:]
                pytest.fail(f"the server ended after {what}; its log ends:\n{tail}")
            if "method" in message:
                if message["method"] == "window/showMessage":
                    text = message["params"]["message"]
                    if "Error in server" in text or "Traceback" in text:
                        self.failures.append(f"{what}: told the user {text[:200]!r}")
                if "id" in message:  # the server's own request (applyEdit, progress…)
                    self.peer.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
                continue
            if message.get("id") == msg_id:
                return message
            self.failures.append(f"{what}: an unexpected answer {json.dumps(message)[:200]}")

    def request(self, method: str, params: Any, what: str) -> dict[str, Any] | None:
        self.next_id += 1
        self.peer.send(request(self.next_id, method, params))
        answer = self._answer(self.next_id, what)
        if answer is not None and "error" in answer:
            error = answer["error"]
            dumped = json.dumps(error)
            if error.get("code") == -32603 or "traceback" in dumped.lower():
                self.failures.append(f"{what}: an internal error {dumped[:300]}")
        return answer

    def notify(self, method: str, params: Any, what: str) -> None:
        self.peer.send({"jsonrpc": "2.0", "method": method, "params": params})
        self.request("invincat/status", {}, f"invincat/status after {what}")


def test_registered_methods_all_have_an_example(workspace: Path) -> None:
    requests, notifications = registered_methods()
    missing = (requests | notifications) - set(examples(workspace)) - set(NOT_FUZZED)
    assert not missing, f"add a valid example of {sorted(missing)} to this test"


def test_malformed_params_of_every_method_cost_that_message_only(
    server: tuple[Peer, Path], workspace: Path
) -> None:
    peer, stderr = server
    check = Checker(peer, stderr)
    requests, notifications = registered_methods()
    for method, example in examples(workspace).items():
        assert method not in NOT_FUZZED
        cases = [(f"params={_short(bad)}", bad) for bad in BAD_PARAMS]
        cases += [("no params key", ...)]
        cases += list(mutations(example))
        for where, params in cases:
            what = f"{method} {where}"
            if method in requests:
                if params is ...:
                    check.peer.send({"jsonrpc": "2.0", "id": 7_000_000, "method": method})
                    check._answer(7_000_000, what)
                    continue
                check.request(method, params, what)
            else:
                assert method in notifications
                if params is ...:
                    check.peer.send({"jsonrpc": "2.0", "method": method})
                    check.request("invincat/status", {}, f"invincat/status after {what}")
                    continue
                check.notify(method, params, what)
    assert not check.failures, "\n".join(check.failures[:40])
    # Still serving (the chats some cases started are listed).
    last = check.request("invincat/threads/list", {}, "the last request")
    assert last is not None and isinstance(last["result"]["threads"], list)
    log = stderr.read_text(errors="replace")
    assert "Unable to handle message" not in log
    # What the issue saw end the server is in the log, as ignored.
    assert "ignored a $/cancelRequest notification: Invalid params for $/cancelRequest" in log


def test_malformed_replies_cost_that_reply_only(server: tuple[Peer, Path]) -> None:
    peer, stderr = server
    check = Checker(peer, stderr)
    for error in [{"code": "x", "message": 1}, [1], None, "boom", {"code": 1}, {}]:
        peer.send({"jsonrpc": "2.0", "id": 12345, "error": error})
        check.request("invincat/status", {}, f"invincat/status after an error reply {error!r}")
    peer.send({"jsonrpc": "2.0", "id": "nobody-asked", "result": {"\x00": [None]}})
    check.request("invincat/status", {}, "invincat/status after an unsolicited result")
    assert not check.failures, "\n".join(check.failures)
