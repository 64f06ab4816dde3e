"""`invincat threads` from a current directory removed under the shell: listing and
deleting read the one threads file of every project, so they work; only `--here`, which
means the current directory's project, says clearly that it needs one."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

from invincat_server.runtime.records import Records
from tests.deadlines import DEADLINE
from tests.terminal.cli_process import INVINCAT


async def _save(db: Path, workspace: Path) -> None:
    records = await Records.open(db)
    try:
        await records.touch_thread("t_kept", "a question", str(workspace))
        await records.touch_thread("t_gone", "another question", str(workspace))
    finally:
        await records.close()


def _in_removed_dir(folder: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    """invincat started in `folder`, which is removed before it runs (as when a shell
    sits in a folder another program deleted)."""
    folder.mkdir()
    script = 'cd "$1" && rmdir "$1" && shift && exec "$@"'
    return subprocess.run(
        ["sh", "-c", script, "sh", str(folder), INVINCAT, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=DEADLINE,
        check=False,
    )


def test_threads_work_from_a_deleted_current_directory(
    invincat_env: dict[str, str], invincat_home: Path, workspace: Path, tmp_path: Path
) -> None:
    asyncio.run(_save(invincat_home / "threads.sqlite", workspace))

    listed = _in_removed_dir(tmp_path / "gone1", invincat_env, "threads", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert {t["thread_id"] for t in json.loads(listed.stdout)} == {"t_kept", "t_gone"}

    text = _in_removed_dir(tmp_path / "gone2", invincat_env, "threads", "list")
    assert text.returncode == 0, text.stderr
    assert "t_kept" in text.stdout and "Traceback" not in text.stderr

    here = _in_removed_dir(tmp_path / "gone3", invincat_env, "threads", "list", "--here")
    assert here.returncode == 1
    assert "current directory no longer exists" in here.stderr
    assert "Traceback" not in here.stderr and here.stdout == ""

    deleted = _in_removed_dir(
        tmp_path / "gone4", invincat_env, "threads", "delete", "t_gone", "--yes"
    )
    assert deleted.returncode == 0, deleted.stderr
    after = _in_removed_dir(tmp_path / "gone5", invincat_env, "threads", "list", "--json")
    assert [t["thread_id"] for t in json.loads(after.stdout)] == ["t_kept"]
