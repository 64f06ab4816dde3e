"""`invincat threads list` reads saved threads through the core's light reader: newest
first, and without loading LangChain (it is a bookkeeping command that must stay quick)."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from pathlib import Path

from invincat_server.runtime.records import Records
from tests.deadlines import DEADLINE
from tests.terminal.cli_process import INVINCAT

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


async def _save_in(db: Path, threads: list[tuple[str, str, Path]]) -> None:
    records = await Records.open(db)
    try:
        for thread_id, title, workspace in threads:
            await records.touch_thread(thread_id, title, str(workspace))
    finally:
        await records.close()


def _threads_list(
    args: list[str], cwd: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [INVINCAT, "threads", "list", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=DEADLINE,
        check=False,
    )


def _projects(tmp_path: Path) -> tuple[Path, Path]:
    here, other = tmp_path / "alpha", tmp_path / "beta\x1b[31m"
    for project in (here, other):
        (project / ".git").mkdir(parents=True)
        (project / "src").mkdir()
    return here, other


def test_threads_list_names_each_threads_project_and_here_keeps_this_ones(
    invincat_env: dict[str, str], invincat_home: Path, tmp_path: Path
) -> None:
    here, other = _projects(tmp_path)
    asyncio.run(
        _save_in(
            invincat_home / "threads.sqlite",
            [("t_alpha", "in alpha", here), ("t_beta", "in beta", other)],
        )
    )
    # Started in a subfolder: --here means the project (its root), as `chat` finds it.
    everything = _threads_list([], here / "src", invincat_env)
    assert everything.returncode == 0, everything.stderr
    header, *rows = everything.stdout.splitlines()
    assert header.split() == ["THREAD", "UPDATED", "PROJECT", "TITLE"]
    assert len(rows) == 2
    by_id = {row.split()[0]: row for row in rows}
    assert re.search(f"  {re.escape(str(here))} +in alpha$", by_id["t_alpha"])
    # A control character of a folder name is shown escaped, not sent to the terminal.
    assert "\x1b" not in everything.stdout
    assert re.search(r"beta\\x1b\[31m +in beta$", by_id["t_beta"])

    mine = _threads_list(["--here"], here / "src", invincat_env)
    assert mine.returncode == 0, mine.stderr
    assert [row.split()[0] for row in mine.stdout.splitlines()[1:]] == ["t_alpha"]

    as_json = _threads_list(["--here", "--json"], here / "src", invincat_env)
    listed = json.loads(as_json.stdout)
    assert [(t["thread_id"], t["workspace"]) for t in listed] == [("t_alpha", str(here))]


def test_threads_list_here_in_a_project_without_threads_says_so(
    invincat_env: dict[str, str], invincat_home: Path, tmp_path: Path
) -> None:
    here, other = _projects(tmp_path)
    asyncio.run(_save_in(invincat_home / "threads.sqlite", [("t_beta", "in beta", other)]))
    done = _threads_list(["--here"], here, invincat_env)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"No saved threads in {here}.\n"


def test_threads_here_through_a_symlink_is_the_projects_threads(
    invincat_env: dict[str, str], invincat_home: Path, tmp_path: Path
) -> None:
    # The project is opened as `chat` opens it (runtime/project): a link to its folder is
    # the same project, whose threads are recorded under the real root.
    here, other = _projects(tmp_path)
    link = tmp_path / "link-to-alpha"
    link.symlink_to(here, target_is_directory=True)
    asyncio.run(
        _save_in(
            invincat_home / "threads.sqlite",
            [("t_alpha", "in alpha", here.resolve()), ("t_beta", "in beta", other)],
        )
    )
    done = _threads_list(["--here", "--json"], link / "src", invincat_env)
    assert done.returncode == 0, done.stderr
    assert [t["thread_id"] for t in json.loads(done.stdout)] == ["t_alpha"]


def test_threads_delete_and_prune_without_a_records_file_create_none(
    invincat_env: dict[str, str], invincat_home: Path, tmp_path: Path
) -> None:
    def threads(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [INVINCAT, "threads", *args],
            cwd=tmp_path,
            env=invincat_env,
            capture_output=True,
            text=True,
            timeout=DEADLINE,
            check=False,
        )

    for bad in ("t_nope", "x" * 100_000, "t_\u202e"):
        deleted = threads("delete", bad, "--yes")
        assert deleted.returncode == 1
        assert "unknown thread" in deleted.stderr
    pruned = threads("prune", "--older-than", "0", "--yes")
    assert pruned.returncode == 0, pruned.stderr
    assert pruned.stdout == "No saved threads.\n"
    assert not (invincat_home / "threads.sqlite").exists()
