"""The bookkeeping commands start at once: `invincat --help`, `--version`, `threads list`,
`rules list` and `memory list|show|log` never load LangChain, LangGraph, the OpenAI SDK or the front
ends' stacks, and the memory reads not even pydantic (issue 15). Checked on the real
console script with Python's own import log (`PYTHONPROFILEIMPORTTIME=1` is `-X importtime`
for a process we do not launch ourselves), together with the commands' output. Their wall
time is measured in bench/bench_cli.py."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from invincat_server import __version__
from invincat_server.runtime.records import Records
from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.deadlines import DEADLINE
from tests.gc_watch import rescans_of_the_stack, watched
from tests.terminal.cli_process import INVINCAT

# Top-level packages a quick command must not import.
HEAVY = frozenset(
    {
        "langchain",
        "langchain_core",
        "langchain_openai",
        "langgraph",
        "langsmith",
        "openai",
        "httpx",
        "tiktoken",
        "mcp",
        "pygls",
        "lsprotocol",
        "prompt_toolkit",
        "rich",
    }
)
# Memory writes validate entries with pydantic (governance models); nothing else may. The
# reads use the quick reader (runtime/memory/reader.py) unless a store is not simple.
NOT_BEFORE_MEMORY = HEAVY | {"pydantic", "pydantic_core"}

_IMPORT_LINE = re.compile(r"^import time:\s+\d+ \|\s+\d+ \| (\s*)(\S+)$")


def run_logged(
    args: list[str], env: dict[str, str]
) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """Run the real `invincat`; return it and the top-level packages it imported."""
    done = subprocess.run(
        [INVINCAT, *args],
        env={**env, "PYTHONPROFILEIMPORTTIME": "1"},
        capture_output=True,
        text=True,
        timeout=DEADLINE,
        check=False,
    )
    loaded = {
        m.group(2).split(".")[0]
        for line in done.stderr.splitlines()
        if (m := _IMPORT_LINE.match(line))
    }
    assert "invincat_server" in loaded, "no import log: PYTHONPROFILEIMPORTTIME was ignored"
    return done, loaded


def plain_stderr(done: subprocess.CompletedProcess[str]) -> str:
    return "\n".join(
        line for line in done.stderr.splitlines() if not line.startswith("import time:")
    )


@pytest.fixture
def saved(invincat_env: dict[str, str], invincat_home: Path, workspace: Path) -> str:
    """One saved thread and two project memory entries, the second citing a file that has
    changed since (so its reads need the staleness check); returns the first entry's id."""

    async def save() -> None:
        records = await Records.open(invincat_home / "threads.sqlite")
        try:
            await records.touch_thread("t_quick", "how fast is it", str(workspace))
        finally:
            await records.close()

    asyncio.run(save())
    batch = {
        "operations": [
            {
                "op": "create",
                "scope": "project",
                "section": "Testing",
                "content": "Run ./scripts/test",
            },
            {
                "op": "create",
                "scope": "project",
                "section": "Docs",
                "content": "Timeouts are 30 seconds",
                "citations": [{"path": "TIMEOUTS.md", "start_line": 1, "end_line": 1}],
            },
        ]
    }
    (workspace / "TIMEOUTS.md").write_text("timeouts are 30 seconds\n")
    applied = subprocess.run(
        [INVINCAT, "memory", "apply", "--scope", "project", "-", "--cwd", str(workspace)],
        input=json.dumps(batch),
        env=invincat_env,
        capture_output=True,
        text=True,
        timeout=DEADLINE,
        check=False,
    )
    assert applied.returncode == 0, applied.stderr
    (workspace / "TIMEOUTS.md").write_text("timeouts are 60 seconds\n")
    return str(json.loads(applied.stdout)["applied"][0]["id"])


def test_help_and_version_load_nothing_heavy(invincat_env: dict[str, str]) -> None:
    done, loaded = run_logged(["--version"], invincat_env)
    assert (done.returncode, done.stdout) == (0, f"invincat {__version__}\n")
    assert not loaded & NOT_BEFORE_MEMORY, sorted(loaded & NOT_BEFORE_MEMORY)
    assert "aiosqlite" not in loaded and "asyncio" not in loaded

    done, loaded = run_logged(["--help"], invincat_env)
    assert done.returncode == 0 and "usage: invincat" in done.stdout and "threads" in done.stdout
    assert not loaded & NOT_BEFORE_MEMORY, sorted(loaded & NOT_BEFORE_MEMORY)


def test_threads_list_loads_nothing_heavy(invincat_env: dict[str, str], saved: str) -> None:
    done, loaded = run_logged(["threads", "list", "--json"], invincat_env)
    assert done.returncode == 0, plain_stderr(done)
    assert [t["title"] for t in json.loads(done.stdout)] == ["how fast is it"]
    assert not loaded & NOT_BEFORE_MEMORY, sorted(loaded & NOT_BEFORE_MEMORY)
    here, loaded = run_logged(["threads", "list", "--here"], invincat_env)
    assert here.returncode == 0, plain_stderr(here)
    assert not loaded & NOT_BEFORE_MEMORY, sorted(loaded & NOT_BEFORE_MEMORY)


def test_memory_list_show_log_load_no_langchain_nor_pydantic(
    invincat_env: dict[str, str], workspace: Path, saved: str
) -> None:
    cwd = ["--cwd", str(workspace)]
    listed, _ = run_logged(["memory", "list", "--json", *cwd], invincat_env)
    [cited] = [e["id"] for e in json.loads(listed.stdout)["items"] if e["id"] != saved]
    for text in ([], ["--json"]):
        done, loaded = run_logged(["memory", "list", *text, *cwd], invincat_env)
        assert done.returncode == 0, plain_stderr(done)
        if text:
            items = json.loads(done.stdout)["items"]
            assert [e["id"] for e in items] == [saved, cited]
            assert [e["stale"] for e in items] == [False, True]
            assert items[1]["verification"]["citations"][0]["state"] == "changed"
        else:
            assert saved in done.stdout and "Run ./scripts/test" in done.stdout
            assert "Timeouts are 30 seconds" in done.stdout
        assert not loaded & NOT_BEFORE_MEMORY, sorted(loaded & NOT_BEFORE_MEMORY)

        for entry_id, content in ((saved, "Run ./scripts/test"), (cited, "TIMEOUTS.md line 1")):
            done, loaded = run_logged(["memory", "show", entry_id, *text, *cwd], invincat_env)
            assert done.returncode == 0, plain_stderr(done)
            assert content in done.stdout
            assert not loaded & NOT_BEFORE_MEMORY, sorted(loaded & NOT_BEFORE_MEMORY)

        done, loaded = run_logged(["memory", "log", *text, *cwd], invincat_env)
        assert done.returncode == 0, plain_stderr(done)
        assert "create" in done.stdout
        assert not loaded & NOT_BEFORE_MEMORY, sorted(loaded & NOT_BEFORE_MEMORY)


def test_memory_writes_still_validate_with_pydantic(
    invincat_env: dict[str, str], workspace: Path, saved: str
) -> None:
    """The quick path is for reads only: a change goes through governance's models."""
    reason = ["--reason", "done with it", "--cwd", str(workspace)]
    done, loaded = run_logged(["memory", "archive", saved, *reason], invincat_env)
    assert done.returncode == 0, plain_stderr(done)
    assert "pydantic" in loaded and not loaded & HEAVY, sorted(loaded & HEAVY)


def test_one_shot_chat_skips_the_terminal_ui_and_absent_extensions(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    """A one-shot (here --json) turn loads neither our rich renderer nor prompt_toolkit (the
    REPL's; rich itself still comes in through httpx's own CLI module, which langgraph_sdk
    imports), and a project without an MCP config never loads the MCP SDK."""
    fake_openai.add_steps([{"content": "hello"}])
    cold = {**invincat_env, "INVINCAT_WARM": "0"}  # the imports of this process itself
    done, loaded = run_logged(["chat", "hi", "--json", "--cwd", str(workspace)], cold)
    assert done.returncode == 0, plain_stderr(done)
    assert '"status": "completed"' in done.stdout.splitlines()[-1]
    assert not loaded & {"prompt_toolkit", "mcp"}, sorted(loaded & {"prompt_toolkit", "mcp"})
    modules = {m.group(2) for line in done.stderr.splitlines() if (m := _IMPORT_LINE.match(line))}
    assert "invincat_server.terminal.app" in modules
    assert not modules & {
        "invincat_server.terminal.rich_render",
        "invincat_server.terminal.line_editor",
    }


CLIENT_MODULES = """
import json, sys
from invincat_server.cli import main
code = main(sys.argv[2:])
with open(sys.argv[1], "w") as out:  # what this process, the one the user started, loaded
    json.dump(sorted(sys.modules), out)
sys.exit(code)
"""


def test_a_default_one_shot_chat_hands_the_turn_on_without_importing_the_stack(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    """By default `invincat chat PROMPT` is a small client of the warm chat server
    (docs/warm-server.md): the process the user started imports no LangChain, LangGraph,
    OpenAI SDK or pydantic, and the answer still arrives."""
    listing = tmp_path / "modules.json"
    command = [sys.executable, "-c", CLIENT_MODULES, str(listing)]
    for _ in range(2):  # the first run starts the server; both are served by it
        fake_openai.add_steps([{"content": "hello"}])
        done = subprocess.run(
            [*command, "chat", "hi", "--json", "--cwd", str(workspace)],
            env=invincat_env,
            capture_output=True,
            text=True,
            timeout=DEADLINE,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert '"status": "completed"' in done.stdout.splitlines()[-1]
        loaded = {name.split(".")[0] for name in json.loads(listing.read_text())}
        assert not loaded & NOT_BEFORE_MEMORY, sorted(loaded & NOT_BEFORE_MEMORY)


def test_one_shot_chat_never_rescans_the_agent_stack(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    """The stack loads in bulk_import() (cli.py, runtime/agent_stack.py): no full garbage
    collection rescans its objects, neither during the turn nor at exit, where Python's
    last collection used to cost ~0.2 s after the answer was out."""
    fake_openai.add_steps([{"content": "hello"}])
    done = subprocess.run(
        watched("chat", "hi", "--json", "--cwd", str(workspace)),
        env={**invincat_env, "INVINCAT_WARM": "0"},  # this process imports the stack
        capture_output=True,
        text=True,
        timeout=DEADLINE,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert '"status": "completed"' in done.stdout.splitlines()[-1]
    assert not rescans_of_the_stack(done.stderr), done.stderr


def test_rules_list_loads_nothing_heavy(invincat_env: dict[str, str], workspace: Path) -> None:
    done, loaded = run_logged(["rules", "list", "--json", "--cwd", str(workspace)], invincat_env)
    assert done.returncode == 0, plain_stderr(done)
    assert json.loads(done.stdout) == {"items": []}
    assert not loaded & NOT_BEFORE_MEMORY, sorted(loaded & NOT_BEFORE_MEMORY)
    assert "pydantic" not in loaded
