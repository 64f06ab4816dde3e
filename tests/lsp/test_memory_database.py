"""The memory sidebar on PostgreSQL: `invincat/memory/list` reads the database, and a
write made on another machine (another checkout of the repository, another
INVINCAT_HOME) reaches the editor as `invincat/memory/didChange` with its batch id."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

from tests.lsp.client import INVINCAT, start_client, stop_client
from tests.lsp.test_memory import create_op

ORIGIN = "git@github.com:acme/widgets.git"


def checkout(path: Path, origin: str) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    subprocess.run(["git", "-C", str(path), "remote", "add", "origin", origin], check=True)
    return path


async def test_the_sidebar_hears_another_machines_write(
    invincat_env: dict[str, str], workspace: Path, editor: str, pg_url: str, tmp_path: Path
) -> None:
    checkout(workspace, ORIGIN)
    env = {**invincat_env, "INVINCAT_DATABASE_URL": pg_url}
    client = await start_client(env, workspace, editor)
    try:
        listed = await client.request("invincat/memory/list", {})
        assert listed["items"] == []
        # Listening has begun once the "maybe missed" refresh of the project arrives.
        first = await client.memory_change(1)
        assert first["scope"] in ("project", "user") and first["batchId"] is None

        other_home = tmp_path / "machine2-home"
        other_home.mkdir()
        there = checkout(tmp_path / "machine2" / "widgets", "https://github.com/acme/widgets")
        batch = json.dumps({"operations": [create_op("Release from the main branch only")]})
        done = await asyncio.to_thread(
            subprocess.run,
            [INVINCAT, "memory", "apply", "--scope", "project", "-"],
            input=batch,
            env={**env, "INVINCAT_HOME": str(other_home)},
            cwd=there,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        count = len(client.memory_changes)
        while True:
            change = await client.memory_change(count)
            if change["batchId"] is not None:
                break
            count += 1
        assert change["scope"] == "project" and change["batchId"] == report["batch_id"]
        [entry] = (await client.request("invincat/memory/list", {}))["items"]
        assert entry["content"] == "Release from the main branch only"
    finally:
        await stop_client(client)
