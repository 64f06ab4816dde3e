"""`invincat/remote/list|approve|cancel` on the real language server (`invincat --stdio`)
against a real `langgraph dev` running Invincat's worker agent."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from tests.deadlines import DEADLINE
from tests.lsp.client import (
    CLIENTS,
    InvincatClient,
    file_uri,
    start_client,
    stop_client,
    wait_until,
)
from tests.remote.conftest import RemoteServer, configure_deployment
from tests.remote.test_remote_cli import _start, _write_script

REMOTE_UNAVAILABLE, UNKNOWN_THREAD, INVALID_PARAMS, REFUSED = -32016, -32011, -32602, -32013


async def _refused(lsp: InvincatClient, method: str, params: Any) -> tuple[int, str]:
    with pytest.raises(JsonRpcException) as caught:
        await lsp.request(method, params)
    return caught.value.code, str(caught.value.message)


async def test_list_approve_and_cancel_through_the_language_server(
    remote_server: RemoteServer,
    invincat_env: dict[str, str],
    invincat_home: Path,
    workspace: Path,
) -> None:
    configure_deployment(invincat_home, remote_server.url)
    _write_script(remote_server, "lsp approve", "from-lsp.txt", "via the editor\n")
    started = _start(invincat_env, "lsp approve")
    thread = started["thread_id"]
    lsp = await start_client(invincat_env, workspace, CLIENTS[0])
    try:
        folder = file_uri(workspace)

        async def waiting() -> dict[str, Any] | None:
            listed = await lsp.request("invincat/remote/list", {"folder": folder})
            return next((p for p in listed["pending"] if p["thread_id"] == thread), None)

        item = None
        deadline = time.monotonic() + DEADLINE
        while item is None and time.monotonic() < deadline:
            item = await waiting()  # each list is a round trip to the deployment
        assert item is not None, remote_server.log_text()[-3000:]
        assert [c["summary"] for c in item["calls"]] == ["Write from-lsp.txt"]
        assert not (remote_server.workspace / "from-lsp.txt").exists()

        done = await lsp.request("invincat/remote/approve", {"threadId": thread})
        assert done["decision"] == "approve" and done["deployment"] == "lab"
        target = remote_server.workspace / "from-lsp.txt"
        await wait_until(target.exists, what="the approved write on the server")
        assert target.read_text() == "via the editor\n"

        code, message = await _refused(lsp, "invincat/remote/approve", {"threadId": thread})
        assert code == REFUSED and "waits for no approval" in message

        remote_server.fake.add_steps(
            [{"match": {"last_user_contains": "lsp hang"}, "fault": "hang"}]
        )
        hanging = _start(invincat_env, "lsp hang")
        await wait_until(
            lambda: any(
                "lsp hang" in json.dumps(r["messages"]) for r in remote_server.fake.chat_requests()
            ),
            what="the hanging model call",
        )
        cancelled = await lsp.request(
            "invincat/remote/cancel", {"threadId": hanging["thread_id"], "deployment": "lab"}
        )
        assert cancelled["cancelled"] == [hanging["run_id"]]

        code, message = await _refused(lsp, "invincat/remote/list", {"deployment": "nowhere"})
        assert code == INVALID_PARAMS and "nowhere" in message
        code, _ = await _refused(lsp, "invincat/remote/approve", {"threadId": str(uuid.uuid4())})
        assert code == UNKNOWN_THREAD
        code, _ = await _refused(lsp, "invincat/remote/approve", {"threadId": "a\x00b"})
        assert code == INVALID_PARAMS
        code, _ = await _refused(
            lsp, "invincat/remote/approve", {"threadId": thread, "message": "no reject"}
        )
        assert code == INVALID_PARAMS

        configure_deployment(invincat_home, "http://127.0.0.1:9")
        code, message = await _refused(lsp, "invincat/remote/list", {})
        assert code == REMOTE_UNAVAILABLE and "Cannot reach" in message
    finally:
        await stop_client(lsp)
