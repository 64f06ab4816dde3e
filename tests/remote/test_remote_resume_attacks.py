"""Attack: whoever reaches the deployment's API resumes an Invincat thread with a value
that decides nothing (no decision for the call, a wrong type, a decision that does not
validate, a bare string). The server-side agent must reject the call, never run it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.deadlines import DEADLINE
from tests.remote.conftest import GRAPH_ID, RemoteServer

RESUMES: dict[str, Any] = {
    "empty": {"decisions": {}},
    "wrong-type": {"decisions": "approve"},
    "bad-decision": {"decisions": {"call_1": {"type": "yes please"}}},
    "bare-string": "approve",
    "nul": {"decisions": {"\x00": {"type": "approve"}}},
}


@pytest.mark.parametrize("case", sorted(RESUMES))
async def test_a_resume_that_decides_nothing_runs_nothing(
    remote_server: RemoteServer, case: str
) -> None:
    from langgraph_sdk import get_client

    prompt = f"attack {case}"
    name = f"attack-{case}.txt"
    remote_server.fake.add_steps(
        [
            {
                "match": {"last_user_contains": prompt, "has_tool_result": True},
                "content": "ok",
            },
            {
                "match": {"last_user_contains": prompt},
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": name, "content": "pwned"}}
                ],
            },
        ]
    )
    client = get_client(url=remote_server.url, api_key=None)
    try:
        thread = await client.threads.create()
        run = await client.runs.create(
            thread["thread_id"], GRAPH_ID, input={"messages": [{"role": "user", "content": prompt}]}
        )
        await asyncio.wait_for(client.runs.join(thread["thread_id"], run["run_id"]), DEADLINE)
        state = await client.threads.get_state(thread["thread_id"])
        assert state["interrupts"], remote_server.log_text()[-3000:]
        resumed = await client.runs.create(
            thread["thread_id"], GRAPH_ID, command={"resume": RESUMES[case]}
        )
        await asyncio.wait_for(client.runs.join(thread["thread_id"], resumed["run_id"]), DEADLINE)
        final = await client.threads.get_state(thread["thread_id"])
    finally:
        await client.aclose()
    assert not (Path(remote_server.workspace) / name).exists()
    results = [m for m in final["values"]["messages"] if m.get("type") == "tool"]
    assert results and "did not run" in str(results[-1]["content"]), final["values"]


async def test_the_servers_tools_stay_in_its_workspace(remote_server: RemoteServer) -> None:
    """The model on the server names a path outside the workspace: no approval is even
    asked (the call cannot succeed), the tool refuses it, nothing is written there."""
    from langgraph_sdk import get_client

    prompt = "attack escape"
    outside = remote_server.workspace.parent / "escaped.txt"
    remote_server.fake.add_steps(
        [
            {"match": {"last_user_contains": prompt, "has_tool_result": True}, "content": "ok"},
            {
                "match": {"last_user_contains": prompt},
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": str(outside), "content": "x"}}
                ],
            },
        ]
    )
    client = get_client(url=remote_server.url, api_key=None)
    try:
        thread = await client.threads.create()
        run = await client.runs.create(
            thread["thread_id"], GRAPH_ID, input={"messages": [{"role": "user", "content": prompt}]}
        )
        await asyncio.wait_for(client.runs.join(thread["thread_id"], run["run_id"]), DEADLINE)
        state = await client.threads.get_state(thread["thread_id"])
    finally:
        await client.aclose()
    assert not state["interrupts"]
    assert not outside.exists()
    results = [m for m in state["values"]["messages"] if m.get("type") == "tool"]
    assert results and "outside the workspace" in str(results[-1]["content"]), results
