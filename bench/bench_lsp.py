"""Benchmark: the language server's start-up and its responsiveness while a turn streams.

1. spawn → `initialize` answered: `invincat --stdio` next to `bench/minimal_lsp_server.py`
   (a bare pygls server that only answers initialize), interleaved runs, medians, ratio.
2. While a turn streams 200 chunks (fake model, small chunk_delay): latency of
   `textDocument/codeAction` (a selection on a document with a pending edit and another
   server's diagnostic, so accept/reject and fix/explain are all computed)
   and `invincat/threads/list`, as the client sees it; p50 / p99.
3. Per streamed chunk: fake server writes the chunk → the client has its `invincat/event`,
   median / p90; next to the same chunk path through a bare `ChatOpenAI.astream` in this
   process (HTTP + SDK only), so the difference is what the agent graph and LSP add.
4. Start-up (issue 15): on a workspace with saved data (a thread with a tool call, a
   pending approval, memory entries), `invincat/memory/list`, `threads/list`,
   `threads/history` and `pendingApprovals` sent right after `initialize` is answered:
   time from that answer to each answer, p50 / p95 over fresh servers, against the bare
   pygls server's answer to a trivial request (`shutdown`) sent the same way; and
   `memory/list` alone on a second workspace whose 20 entries each cite a file (one since
   changed: a stale entry), as real stores do. Then spawn →
   first `message_delta` of a chat sent right after `initialized`, against the bare
   server's spawn → `initialize` and against `python -c "import langchain_openai"`.

Run: .venv/bin/python bench/bench_lsp.py [--runs N] [--requests N] [--server CMD]
(`--server` runs another build, e.g. an older checkout:
`--server "env PYTHONPATH=/tmp/old .venv/bin/python -m invincat_server.cli"`; the
streaming part 2-3 always runs `invincat` of this checkout.)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the LSP test client lives in tests/lsp

from cited_memory import CITED_ENTRIES, cited_operations, make_first_stale  # noqa: E402
from lsprotocol import types  # noqa: E402

from invincat_server.testing.fake_openai import FakeOpenAIServer, responses  # noqa: E402
from invincat_server.testing.fixtures import (  # noqa: E402
    invincat_env_overrides,
    stop_warm_servers,
)
from tests.lsp.client import INVINCAT, InvincatClient, start_client, stop_client  # noqa: E402

MINIMAL = [sys.executable, str(Path(__file__).with_name("minimal_lsp_server.py"))]
CHUNKS = 200
CHUNK_DELAY = 0.01


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))]


def row(name: str, values: list[float], pct: int, note: str = "") -> str:
    """One figure line: count, median and a high percentile, in milliseconds."""
    median, high = statistics.median(values) * 1000, percentile(values, pct) * 1000
    return f"  {name:24} n={len(values):4}  p50 {median:6.2f} ms  p{pct} {high:6.2f} ms{note}"


def frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return f"Content-Length: {len(body)}\r\n\r\n".encode() + body


async def read_frame(stream: asyncio.StreamReader) -> dict[str, Any]:
    length = 0
    while (line := await stream.readline()) not in (b"\r\n", b""):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return json.loads(await stream.readexactly(length))


# --------------------------------------------------------------------------- 1. initialize


async def time_initialize(cmd: list[str], env: dict[str, str], cwd: Path) -> float:
    """Seconds from spawning `cmd` to reading its initialize response."""
    start = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(
        *cmd,
        env=env,
        cwd=str(cwd),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None
    params = {"processId": os.getpid(), "rootUri": cwd.as_uri(), "capabilities": {}}
    proc.stdin.write(frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}))
    while (await read_frame(proc.stdout)).get("id") != 1:
        pass
    elapsed = time.perf_counter() - start
    proc.kill()
    await proc.wait()
    return elapsed


async def bench_initialize(cmd: list[str], runs: int, env: dict[str, str], cwd: Path) -> None:
    ours, floor = [], []
    for _ in range(runs):  # interleaved, so machine noise hits both alike
        ours.append(await time_initialize(cmd, env, cwd))
        floor.append(await time_initialize(MINIMAL, env, cwd))
    mine, base = statistics.median(ours), statistics.median(floor)
    print(f"spawn → initialize answered (median of {runs})")
    print(f"  invincat --stdio      {mine * 1000:7.1f} ms")
    print(f"  minimal pygls server  {base * 1000:7.1f} ms")
    print(f"  ratio                 {mine / base:7.2f}x   (target ≤ 1.2x)")


# --------------------------------------------------------------------------- 2 + 3. streaming


def streamed_text() -> str:
    # Six-character chunks, each unique, so every write can be matched to its event.
    return "".join(f"c{i:04d} " for i in range(CHUNKS))


def stream_step(prompt: str) -> dict[str, Any]:
    return {
        "match": {"last_user_contains": prompt},
        "content": streamed_text(),
        "chunk_size": 6,
        "chunk_delay": CHUNK_DELAY,
        "times": 1000,
    }


class WriteClock:
    """Records when the fake server writes each SSE event (patched into its writer)."""

    def __init__(self) -> None:
        self.written: dict[str, float] = {}
        self._encode = responses.encode_chunk

    def __enter__(self) -> WriteClock:
        def encode(data: bytes) -> bytes:
            now = time.perf_counter()
            text = data.decode(errors="replace")
            if text.startswith("data: {"):
                choices = json.loads(text[6:]).get("choices") or [{}]
                content = (choices[0].get("delta") or {}).get("content")
                if content:
                    self.written.setdefault(content, now)
            return self._encode(data)

        responses.encode_chunk = encode  # type: ignore[assignment]
        return self

    def __exit__(self, *exc: object) -> None:
        responses.encode_chunk = self._encode  # type: ignore[assignment]


async def open_pending_edit(client: InvincatClient, workspace: Path) -> str:
    """A document with a pending edit approval, so codeAction computes real actions."""
    path = workspace / "notes.txt"
    path.write_text("alpha\nbeta\n")
    uri = client.open_document(path, "alpha\nbeta\n")
    await client.chat("please edit")
    await client.wait_event("approval_requested")
    while not client.diagnostics.get(uri):
        await asyncio.sleep(0.01)
    return uri


async def bench_streaming(
    server: FakeOpenAIServer, env: dict[str, str], workspace: Path, wanted: int
) -> None:
    edit = {"path": "notes.txt", "old_string": "beta", "new_string": "BETA"}
    server.add_steps(
        [
            {
                "match": {"last_user_contains": "edit"},
                "tool_calls": [{"name": "edit_file", "arguments": edit}],
            },
            stream_step("stream"),
        ]
    )
    client = await start_client(env, workspace, "visual-studio-code")
    received: dict[str, float] = {}
    forward = client.on_event

    def on_event(params: dict[str, Any]) -> None:
        if params["event"]["type"] == "message_delta":
            received.setdefault(params["event"]["text"], time.perf_counter())
        forward(params)

    client.on_event = on_event  # type: ignore[method-assign]
    try:
        uri = await open_pending_edit(client, workspace)
        # A selection over the pending edit plus another server's diagnostic: the answer
        # holds accept + reject + "Invincat: fix …" + "Invincat: explain".
        selected = types.Range(
            start=types.Position(line=1, character=0), end=types.Position(line=1, character=3)
        )
        foreign = types.Diagnostic(range=selected, message="Unknown word", source="cSpell")
        action_params = types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=selected,
            context=types.CodeActionContext(diagnostics=[*client.diagnostics[uri], foreign]),
        )
        actions: list[float] = []
        listing: list[float] = []
        per_chunk: list[float] = []
        thread: str | None = None
        while min(len(actions), len(listing)) < wanted:
            received.clear()
            with WriteClock() as clock:
                ref = await client.chat("stream please", **({"threadId": thread} if thread else {}))
                thread = ref["threadId"]
                while not received:  # measure only while chunks are flowing
                    await asyncio.sleep(0.001)
                ended = asyncio.ensure_future(client.turn_end(ref["turnId"], timeout=60))
                while not ended.done():
                    start = time.perf_counter()
                    result = await client.text_document_code_action_async(action_params)
                    actions.append(time.perf_counter() - start)
                    assert result and len(result) == 4
                    start = time.perf_counter()
                    await client.request("invincat/threads/list", {})
                    listing.append(time.perf_counter() - start)
                await ended
            per_chunk += [received[text] - clock.written[text] for text in received]
        print(f"while a turn streams {CHUNKS} chunks {CHUNK_DELAY * 1000:g} ms apart (client side)")
        target = "   (target p99 ≤ 20 ms)"
        print(row("textDocument/codeAction", actions, 99, target))
        print(row("invincat/threads/list", listing, 99, target))
        print("fake server writes a chunk → the client has it")
        print(row("invincat/event", per_chunk, 90))
    finally:
        await stop_client(client)


async def bench_bare_stream(server: FakeOpenAIServer) -> None:
    """The same chunks through ChatOpenAI.astream alone: the HTTP + SDK floor."""
    from langchain_openai import ChatOpenAI

    server.add_steps([stream_step("bare")])
    model = ChatOpenAI(
        model="fake-model", base_url=server.base_url, api_key="test", streaming=True, max_retries=0
    )
    received: dict[str, float] = {}
    with WriteClock() as clock:
        async for chunk in model.astream("bare"):
            if chunk.text:
                received.setdefault(chunk.text, time.perf_counter())
    gaps = [received[text] - clock.written[text] for text in received]
    print(row("bare ChatOpenAI.astream", gaps, 90))


# --------------------------------------------------------------------------- 4. start-up


class RawServer:
    """A spawned server spoken to in raw frames: nothing but the pipes between the clock
    and the process."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.answers: dict[int, tuple[float, dict[str, Any]]] = {}
        self.first_delta: float | None = None
        self._next = 1

    @classmethod
    async def spawn(cls, cmd: list[str], env: dict[str, str], cwd: Path) -> RawServer:
        proc = await asyncio.create_subprocess_exec(
            *cmd,
            env=env,
            cwd=str(cwd),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        return cls(proc)

    def send(self, method: str, params: Any, *, notify: bool = False) -> int:
        assert self.proc.stdin is not None
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
        msg_id = 0
        if not notify:
            msg_id, self._next = self._next, self._next + 1
            message["id"] = msg_id
        self.proc.stdin.write(frame(message))
        return msg_id

    async def until(self, done: Any) -> None:
        """Read frames (recording answers and the first message_delta) until `done()`."""
        assert self.proc.stdout is not None
        while not done():
            message = await read_frame(self.proc.stdout)
            now = time.perf_counter()
            if "id" in message and "method" not in message:
                self.answers[message["id"]] = (now, message)
            elif message.get("method") == "invincat/event" and self.first_delta is None:
                if message["params"]["event"]["type"] == "message_delta":
                    self.first_delta = now

    async def initialize(self, cwd: Path) -> float:
        params = {"processId": os.getpid(), "rootUri": cwd.as_uri(), "capabilities": {}}
        msg_id = self.send("initialize", params)
        await self.until(lambda: msg_id in self.answers)
        return self.answers[msg_id][0]

    async def kill(self) -> None:
        self.proc.kill()
        await self.proc.wait()


STARTUP_REQUESTS = ("memory/list", "threads/list", "threads/history", "pendingApprovals")


async def seed_workspace(server: FakeOpenAIServer, env: dict[str, str], workspace: Path) -> str:
    """A finished thread with a tool call, a pending approval and memory entries; the
    finished thread's id."""
    (workspace / "notes.txt").write_text("alpha\n")
    edit = {"path": "notes.txt", "old_string": "alpha", "new_string": "beta"}
    server.add_steps(
        [
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
            {"content": "The notes say alpha."},
            {"tool_calls": [{"name": "edit_file", "arguments": edit}]},
        ]
    )
    client = await start_client(env, workspace, "visual-studio-code")
    try:
        done = await client.chat("what do the notes say?", wait=True)
        await client.chat("change alpha to beta")
        await client.wait_event("approval_requested")
        operations = [
            {
                "op": "create",
                "scope": "project",
                "section": "Bench",
                "content": f"Fact number {i} about this project",
                "confidence": "high",
                "score": 80,
                "score_reason": "bench",
            }
            for i in range(20)
        ]
        await client.request(
            "invincat/memory/apply", {"scope": "project", "operations": operations}
        )
        return str(done["threadId"])
    finally:
        await stop_client(client)


async def seed_cited_workspace(env: dict[str, str], workspace: Path) -> None:
    """CITED_ENTRIES project entries, each citing two lines of its own file; the first
    file is then edited, so its entry is stale."""
    operations = cited_operations(workspace)
    client = await start_client(env, workspace, "visual-studio-code")
    try:
        applied = await client.request(
            "invincat/memory/apply", {"scope": "project", "operations": operations}
        )
        assert len(applied["applied"]) == CITED_ENTRIES, applied
    finally:
        await stop_client(client)
    make_first_stale(workspace)


async def memory_list_answer(cmd: list[str], env: dict[str, str], cwd: Path) -> float:
    """Seconds from `initialize` answered to the `invincat/memory/list` answer."""
    raw = await RawServer.spawn(cmd, env, cwd)
    try:
        answered = await raw.initialize(cwd)
        raw.send("initialized", {}, notify=True)
        msg_id = raw.send("invincat/memory/list", {})
        await raw.until(lambda: msg_id in raw.answers)
        result = raw.answers[msg_id][1]["result"]
        assert sum(item["stale"] for item in result["items"]) == 1, result
        return raw.answers[msg_id][0] - answered
    finally:
        await raw.kill()


async def startup_answers(
    cmd: list[str], env: dict[str, str], cwd: Path, thread_id: str
) -> dict[str, float]:
    """Seconds from `initialize` answered to each project-data answer, one fresh server."""
    raw = await RawServer.spawn(cmd, env, cwd)
    try:
        answered = await raw.initialize(cwd)
        raw.send("initialized", {}, notify=True)
        ids = {
            raw.send("invincat/memory/list", {}): "memory/list",
            raw.send("invincat/threads/list", {}): "threads/list",
            raw.send("invincat/threads/history", {"threadId": thread_id}): "threads/history",
            raw.send("invincat/pendingApprovals", {}): "pendingApprovals",
        }
        await raw.until(lambda: all(i in raw.answers for i in ids))
        for msg_id in ids:
            assert "result" in raw.answers[msg_id][1], raw.answers[msg_id][1]
        return {name: raw.answers[msg_id][0] - answered for msg_id, name in ids.items()}
    finally:
        await raw.kill()


async def trivial_answer(env: dict[str, str], cwd: Path) -> float:
    """The bare pygls server: `initialize` answered → its answer to `shutdown`."""
    raw = await RawServer.spawn(MINIMAL, env, cwd)
    try:
        answered = await raw.initialize(cwd)
        raw.send("initialized", {}, notify=True)
        msg_id = raw.send("shutdown", None)
        await raw.until(lambda: msg_id in raw.answers)
        return raw.answers[msg_id][0] - answered
    finally:
        await raw.kill()


async def first_delta(
    cmd: list[str], server: FakeOpenAIServer, env: dict[str, str], cwd: Path
) -> float:
    """Seconds from spawn to the first `message_delta` of a chat sent at once."""
    server.add_steps([{"match": {"last_user_contains": "first"}, "content": "Hello there."}])
    start = time.perf_counter()
    raw = await RawServer.spawn(cmd, env, cwd)
    try:
        await raw.initialize(cwd)
        raw.send("initialized", {}, notify=True)
        raw.send("invincat/chat", {"prompt": "first chat"})
        await raw.until(lambda: raw.first_delta is not None)
        assert raw.first_delta is not None
        return raw.first_delta - start
    finally:
        await raw.kill()


def import_langchain_openai(env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import langchain_openai"], env=env, check=True)
    return time.perf_counter() - start


async def bench_startup(
    cmd: list[str], runs: int, server: FakeOpenAIServer, env: dict[str, str], workspace: Path
) -> None:
    thread_id = await seed_workspace(server, env, workspace)
    cited_workspace = workspace.parent / "cited"
    (cited_workspace / ".git").mkdir(parents=True)
    await seed_cited_workspace(env, cited_workspace)
    answers: dict[str, list[float]] = {name: [] for name in STARTUP_REQUESTS}
    trivial: list[float] = []
    cited: list[float] = []
    for _ in range(runs):  # interleaved, so machine noise hits both alike
        for name, seconds in (await startup_answers(cmd, env, workspace, thread_id)).items():
            answers[name].append(seconds)
        trivial.append(await trivial_answer(env, workspace))
        cited.append(await memory_list_answer(cmd, env, cited_workspace))
    base = statistics.median(trivial)
    print(f"initialize answered → answer, requests sent at once (fresh server each, {runs} runs)")
    print(row("bare pygls: shutdown", trivial, 95))
    for name in STARTUP_REQUESTS:
        ratio = f"   {statistics.median(answers[name]) / base:6.1f}x   (target p95 ≤ 150 ms)"
        print(row(f"invincat/{name}", answers[name], 95, ratio))
    ratio = f"   {statistics.median(cited) / base:6.1f}x   (target p95 ≤ 150 ms)"
    print(row(f"memory/list, {CITED_ENTRIES} cited", cited, 95, ratio))

    deltas, inits, imports = [], [], []
    for _ in range(runs):
        deltas.append(await first_delta(cmd, server, env, workspace))
        inits.append(await time_initialize(MINIMAL, env, workspace))
        imports.append(import_langchain_openai(env))
    delta, init, imp = (statistics.median(v) for v in (deltas, inits, imports))
    print(f"spawn → first message_delta of a first chat (median of {runs})")
    print(f"  invincat --stdio, first window    {delta * 1000:7.1f} ms   (target ≤ 2000 ms)")
    print(f"  bare pygls spawn → initialize     {init * 1000:7.1f} ms   ratio {delta / init:5.2f}x")
    print(f"  python -c 'import langchain_openai' {imp * 1000:5.1f} ms   ratio {delta / imp:5.2f}x")
    await bench_warm_windows(cmd, runs, server, env, workspace, init)


async def bench_warm_windows(
    cmd: list[str],
    runs: int,
    server: FakeOpenAIServer,
    env: dict[str, str],
    workspace: Path,
    bare_initialize: float,
) -> None:
    """The same with the default environment: every window after the first is forked by
    the warm server (docs/warm-server.md), started here by one uncounted window."""
    runtime = Path(tempfile.mkdtemp(prefix="invincat-bench-xdg-"))  # short: a socket path
    warm = {k: v for k, v in env.items() if k != "INVINCAT_WARM"} | {
        "XDG_RUNTIME_DIR": str(runtime)
    }
    try:
        await first_delta(cmd, server, warm, workspace)  # starts the server; not counted
        deadline = time.monotonic() + 120
        while not list((runtime / "invincat").glob("*.sock")):
            if time.monotonic() > deadline:
                print("  (the warm server did not start: see its log in", runtime, ")")
                return
            await asyncio.sleep(0.05)
        deltas = [await first_delta(cmd, server, warm, workspace) for _ in range(runs)]
        inits = [await time_initialize(cmd, warm, workspace) for _ in range(runs)]
    finally:
        stop_warm_servers(runtime)
        shutil.rmtree(runtime, ignore_errors=True)
    delta, init = statistics.median(deltas), statistics.median(inits)
    print(
        f"  invincat --stdio, next windows    {delta * 1000:7.1f} ms   (served by the warm server)"
    )
    print(
        f"  their spawn → initialize          {init * 1000:7.1f} ms   ratio to bare pygls "
        f"{init / bare_initialize:5.2f}x"
    )


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15, help="initialize runs per server")
    parser.add_argument("--requests", type=int, default=200, help="requests per method")
    parser.add_argument("--server", help="command that runs the server (default: invincat)")
    parser.add_argument(
        "--only", choices=("initialize", "streaming", "startup"), help="run one part only"
    )
    args = parser.parse_args()
    cmd = shlex.split(args.server) if args.server else [INVINCAT]
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer() as server:
        home, user_home, workspace = (Path(tmp) / name for name in ("home", "user", "project"))
        for directory in (home, user_home, workspace / ".git"):
            directory.mkdir(parents=True)
        env = dict(os.environ)
        overrides, remove = invincat_env_overrides(home, user_home, server.base_url, env)
        for name in remove:
            env.pop(name, None)
        env.update(overrides)
        env["INVINCAT_LOG_LEVEL"] = "WARNING"
        # Each spawn measured is the process of a first editor window (its own imports);
        # bench_warm_windows measures the windows the warm server serves.
        env["INVINCAT_WARM"] = "0"
        if args.only in (None, "initialize"):
            await bench_initialize([*cmd, "--stdio"], args.runs, env, workspace)
            print()
        if args.only in (None, "streaming"):
            await bench_streaming(server, env, workspace, args.requests)
            await bench_bare_stream(server)
            print()
        if args.only in (None, "startup"):
            await bench_startup([*cmd, "--stdio"], args.runs, server, env, workspace)


if __name__ == "__main__":
    asyncio.run(main())
