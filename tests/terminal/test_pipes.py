"""CLI output piped into a reader that stops early (`| head -1`) ends quietly."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

from invincat_server.runtime.records import Records
from tests.terminal.cli_process import INVINCAT

THREADS = 3000  # ~300 KB of listing: far more than a pipe holds, so writing must block


async def _save_threads(db: Path, workspace: Path) -> None:
    records = await Records.open(db)
    try:
        for n in range(THREADS):
            await records.touch_thread(
                f"t_{n:012d}", f"thread number {n} " + "x" * 60, str(workspace)
            )
    finally:
        await records.close()


def test_threads_list_into_head_exits_quietly_without_a_traceback(
    invincat_env: dict[str, str], invincat_home: Path, workspace: Path
) -> None:
    asyncio.run(_save_threads(invincat_home / "threads.sqlite", workspace))
    # `invincat threads list | head -1` with a real pipe: read one line, then close our end
    # while invincat still has most of the listing to write.
    proc = subprocess.Popen(
        [INVINCAT, "threads", "list"],
        env=invincat_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()
    stderr = proc.stderr.read().decode()
    code = proc.wait(timeout=60)
    assert first.startswith(b"THREAD")
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr, stderr
    assert stderr == ""
    assert code == 141  # like any Unix tool whose reader went away (128 + SIGPIPE)
