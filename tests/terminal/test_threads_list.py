"""`invincat threads list` reads saved threads through the core's light reader: newest
first, and without loading LangChain (it is a bookkeeping command that must stay quick)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

from invincat_server.runtime.records import Records

# Runs the real CLI entry point in a fresh interpreter and reports what it imported.
_PROBE = """
import sys
from invincat_server.cli import main
code = main(["threads", "list", "--json"])
loaded = sorted(m for m in sys.modules if m.split(".")[0].startswith("langchain"))
print("LOADED=" + ",".join(loaded), file=sys.stderr)
sys.exit(code)
"""


async def _save(db: Path, workspace: Path) -> None:
    records = await Records.open(db)
    try:
        await records.touch_thread("t_older", "first question", str(workspace))
        await records.touch_thread("t_newer", "second question", str(workspace))
    finally:
        await records.close()


def test_threads_list_shows_saved_threads_newest_first_without_loading_langchain(
    invincat_env: dict[str, str], invincat_home: Path, workspace: Path
) -> None:
    asyncio.run(_save(invincat_home / "threads.sqlite", workspace))
    done = subprocess.run(
        [sys.executable, "-c", _PROBE],
        env=invincat_env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)
    assert [t["thread_id"] for t in listed] == ["t_newer", "t_older"]
    assert [t["title"] for t in listed] == ["second question", "first question"]
    assert "LOADED=\n" in done.stderr, done.stderr


def test_threads_list_without_a_records_file_creates_none(
    invincat_env: dict[str, str], invincat_home: Path
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "invincat_server.cli", "threads", "list"],
        env=invincat_env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "No saved threads.\n"
    assert not (invincat_home / "threads.sqlite").exists()
