"""Benchmark: how fast the `invincat` command line starts, and a one-shot turn vs Codex CLI.

1. Wall time of `invincat --help`, `--version`, `threads list`, `memory list|show|log`
   (one saved thread, one memory entry), next to `python -c pass` in the same run; then
   `memory list|show` on a store whose 20 entries each cite a file (one of them changed
   since, so its entry is stale), as real stores do.
2. `invincat chat --yes --json` one-shot, five tool calls and an answer against the fake
   server: as a user runs it (the default: the warm chat server, docs/warm-server.md; its
   first run, which starts the server, is printed apart), and cold (INVINCAT_WARM=0), each
   run in a fresh $INVINCAT_HOME, next to OpenAI's Codex CLI (`codex exec`,
   from npm) doing the same five steps as shell commands against the fake server's
   Responses API (`/v1/responses`). Codex runs with approvals off (`approval_policy =
   "never"`), its workspace-write sandbox with network off, no web search, no analytics,
   no update check. Both must leave the same notes.md behind. Prints the ratios.

Codex is installed with npm into bench/.codex-cache (gitignored) on the first run:
`npm install --prefix bench/.codex-cache @openai/codex@CODEX_VERSION`. Without npm, or
when the install fails, part 2 prints why and compares against nothing.

Run: .venv/bin/python bench/bench_cli.py [--runs N] [--skip-codex]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_chat import steps as invincat_steps
from cited_memory import CITED_ENTRIES, cited_operations, make_first_stale

from invincat_server.runtime.records import Records
from invincat_server.testing.fake_openai import FakeOpenAIServer

CODEX_VERSION = "0.171.0"
CACHE = Path(__file__).with_name(".codex-cache")
CODEX = CACHE / "node_modules" / ".bin" / "codex"
INVINCAT = str(Path(sys.executable).with_name("invincat"))
NOTES_AFTER = "# Notes\nLINE\n"

# Codex's shell tool is `exec_command` ({"cmd": ...}); `login: false` spares it a login
# shell's profile scripts, its fastest way to run a command.
CODEX_COMMANDS = [
    "printf '# Notes\\nline\\n' > notes.md",
    "cat notes.md",
    "sed -i 's/line/LINE/' notes.md",
    "grep -rn LINE .",
    "wc -l notes.md",
]


def codex_steps() -> list[dict]:
    out: list[dict] = [
        {"tool_calls": [{"name": "exec_command", "arguments": {"cmd": cmd, "login": False}}]}
        for cmd in CODEX_COMMANDS
    ]
    out.append({"content": "All five done: notes.md written, read, edited, searched and counted."})
    return out


def timed(cmd: list[str], env: dict[str, str], cwd: Path | None = None) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(
        cmd, env=env, cwd=cwd, capture_output=True, text=True, stdin=subprocess.DEVNULL
    )
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"command failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr}")
    return wall, done.stdout


def seed(home: Path, project: Path, env: dict[str, str]) -> str:
    """One saved thread and one project memory entry; returns the entry's id."""

    async def save() -> None:
        records = await Records.open(home / "threads.sqlite")
        try:
            await records.touch_thread("t_bench", "how fast is it", str(project))
        finally:
            await records.close()

    asyncio.run(save())
    batch = {
        "operations": [
            {"op": "create", "scope": "project", "section": "Testing", "content": "Run tests"}
        ]
    }
    done = subprocess.run(
        [INVINCAT, "memory", "apply", "--scope", "project", "-", "--cwd", str(project)],
        input=json.dumps(batch),
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return str(json.loads(done.stdout)["applied"][0]["id"])


def seed_cited(project: Path, env: dict[str, str]) -> str:
    """A project store of CITED_ENTRIES entries, each citing two lines of its own file; the
    first file is then edited (a stale entry). Returns the first entry's id."""
    operations = cited_operations(project)
    done = subprocess.run(
        [INVINCAT, "memory", "apply", "--scope", "project", "-", "--cwd", str(project)],
        input=json.dumps({"operations": operations}),
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    applied = json.loads(done.stdout)["applied"]
    assert len(applied) == CITED_ENTRIES, done.stdout
    make_first_stale(project)
    return str(applied[0]["id"])


def bench_commands(runs: int, tmp: Path) -> None:
    home, project = tmp / "cli-home", tmp / "cli-project"
    home.mkdir()
    (project / ".git").mkdir(parents=True)
    env = {**os.environ, "INVINCAT_HOME": str(home)}
    entry = seed(home, project, env)
    cited_project = tmp / "cli-cited"
    (cited_project / ".git").mkdir(parents=True)
    cited = seed_cited(cited_project, env)
    at = ["--cwd", str(project)]
    cited_at = ["--cwd", str(cited_project)]
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "invincat --help": [INVINCAT, "--help"],
        "invincat --version": [INVINCAT, "--version"],
        "invincat threads list": [INVINCAT, "threads", "list"],
        "invincat memory list": [INVINCAT, "memory", "list", *at],
        "invincat memory show ID": [INVINCAT, "memory", "show", entry, *at],
        "invincat memory log": [INVINCAT, "memory", "log", *at],
        f"memory list ({CITED_ENTRIES} cited)": [INVINCAT, "memory", "list", *cited_at],
        "memory show ID (cited)": [INVINCAT, "memory", "show", cited, *cited_at],
    }
    walls: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):  # interleaved, so load changes hit every command alike
        for name, cmd in commands.items():
            walls[name].append(timed(cmd, env)[0])
    floor = statistics.median(walls["python -c pass"])
    print(f"command start-up, wall time, median of {runs} (target <= 300 ms each)")
    for name, values in walls.items():
        median = statistics.median(values)
        extra = "" if name.startswith("python") else f"   {median / floor:4.1f}x python -c pass"
        print(f"  {name:<26} {median * 1000:6.0f} ms  max {max(values) * 1000:5.0f} ms{extra}")


def install_codex() -> str | None:
    """Path to Codex CLI, installing it on first use; None (with the reason printed)."""
    if CODEX.exists():
        return str(CODEX)
    npm = shutil.which("npm")
    if npm is None:
        print("  Codex CLI: not measured, npm is not installed")
        return None
    print(f"  installing @openai/codex@{CODEX_VERSION} into {CACHE} ...", flush=True)
    done = subprocess.run(
        [
            npm,
            "install",
            "--no-audit",
            "--no-fund",
            "--prefix",
            str(CACHE),
            f"@openai/codex@{CODEX_VERSION}",
        ],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0 or not CODEX.exists():
        print(f"  Codex CLI: not measured, npm install failed:\n{done.stderr[-2000:]}")
        return None
    return str(CODEX)


def codex_config(base_url: str) -> str:
    return f"""model = "fake-model"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "workspace-write"
check_for_update_on_startup = false
web_search = "disabled"

[analytics]
enabled = false

[sandbox_workspace_write]
network_access = false

[model_providers.fake]
name = "fake"
base_url = "{base_url}"
wire_api = "responses"
env_key = "OPENAI_API_KEY"
"""


def run_invincat_turn(server: FakeOpenAIServer, env: dict[str, str], ws: Path) -> float:
    server.add_steps(invincat_steps())
    wall, out = timed(
        [INVINCAT, "chat", "do the five things", "--yes", "--json", "--cwd", str(ws)], env
    )
    events = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert events[-1]["status"] == "completed", events[-1]
    assert (ws / "notes.md").read_text() == NOTES_AFTER
    return wall


def stop_warm_servers(runtime: Path) -> None:
    for log in (runtime / "invincat").glob("chat-*.log"):
        for pid in re.findall(r"serving \S+ \(version \w+, pid (\d+)\)", log.read_text()):
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), signal.SIGTERM)


def bench_turn(runs: int, tmp: Path, codex: str | None) -> None:
    inv: list[float] = []
    warm: list[float] = []
    cdx: list[float] = []
    # A runtime directory of our own (short: a socket path must fit in 107 bytes), so the
    # server measured is the one this run starts, and it is stopped at the end.
    runtime = Path(tempfile.mkdtemp(prefix="invincat-bench-xdg-"))
    first = 0.0
    with FakeOpenAIServer() as server:
        codex_home = CACHE / "home"  # Codex refuses helper binaries under /tmp
        if codex:
            codex_home.mkdir(parents=True, exist_ok=True)
            (codex_home / "config.toml").write_text(codex_config(server.base_url))
        for run in range(runs):
            home, ws_a, ws_b = (tmp / f"{name}{run}" for name in ("home", "wsa", "wsb"))
            for d in (home, ws_a / ".git", ws_b / ".git"):
                d.mkdir(parents=True)
            env = {
                **os.environ,
                "INVINCAT_HOME": str(home),
                "OPENAI_BASE_URL": server.base_url,
                "OPENAI_API_KEY": "k",
                "INVINCAT_MODEL": "fake-model",
                "INVINCAT_MEMORY_EXTRACTION": "off",
            }
            inv.append(run_invincat_turn(server, {**env, "INVINCAT_WARM": "0"}, ws_a))
            warm_env = {**env, "XDG_RUNTIME_DIR": str(runtime)}
            warm_env.pop("INVINCAT_WARM", None)  # the default
            ws_w = tmp / f"wsw{run}"
            (ws_w / ".git").mkdir(parents=True)
            if run == 0:  # starts the server (imports once); printed apart
                first = run_invincat_turn(server, warm_env, ws_w)
                (ws_w / "notes.md").unlink()
            warm.append(run_invincat_turn(server, warm_env, ws_w))
            if codex:
                server.add_steps(codex_steps())
                codex_env = {**env, "CODEX_HOME": str(codex_home)}
                wall, _ = timed(
                    [codex, "exec", "--skip-git-repo-check", "-C", str(ws_b), "do the five things"],
                    codex_env,
                )
                assert (ws_b / "notes.md").read_text() == NOTES_AFTER, "Codex did not do the steps"
                assert not server.pending_steps(), "Codex did not make all six model calls"
                cdx.append(wall)
    stop_warm_servers(runtime)
    shutil.rmtree(runtime, ignore_errors=True)
    iw, ww = statistics.median(inv), statistics.median(warm)
    print(f"one-shot turn, 5 tool calls + answer (6 model calls), median of {runs}")
    print(f"  invincat chat (default, warm)  {ww * 1000:6.0f} ms  (runs: {_ms(warm)})")
    print(f"  its first run, starts server   {first * 1000:6.0f} ms")
    print(f"  invincat chat, INVINCAT_WARM=0 {iw * 1000:6.0f} ms  (runs: {_ms(inv)})")
    if cdx:
        cw = statistics.median(cdx)
        print(f"  codex exec {CODEX_VERSION}              {cw * 1000:6.0f} ms  (runs: {_ms(cdx)})")
        print(f"  ratio cold / codex             {iw / cw:5.2f}x")
        print(f"  ratio warm / codex             {ww / cw:5.2f}x   (target <= 0.8x)")


def _ms(values: list[float]) -> str:
    return " ".join(f"{v * 1000:.0f}" for v in values)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--skip-codex", action="store_true", help="measure invincat alone")
    parser.add_argument("--only", choices=("commands", "turn"), help="run one part")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.only != "turn":
            bench_commands(args.runs, Path(tmp))
        if args.only != "commands":
            codex = None if args.skip_codex else install_codex()
            bench_turn(args.runs, Path(tmp), codex)


if __name__ == "__main__":
    main()
