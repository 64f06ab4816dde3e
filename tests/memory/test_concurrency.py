"""Real processes on one store: concurrent writers, and writers killed with SIGKILL.

Writers are `python -c` processes that import only the memory package, so these tests
also check that it stays cheap to start.
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from invincat_server.runtime.memory.ids import is_entry_id
from invincat_server.runtime.memory.journal import read_all
from invincat_server.runtime.memory.store import parse_store
from tests.deadlines import DEADLINE

WRITER = r"""
import os, sys, secrets
from pathlib import Path
from invincat_server.runtime.memory import MemoryService
home, project, tag, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
service = MemoryService(Path(home), Path(project))
os.write(1, b"READY\n")
i = 0
while count < 0 or i < count:
    content = f"{tag} item {i} {secrets.token_hex(6)} z{i}q"
    op = {"op": "create", "scope": "project", "section": "Stress", "content": content}
    report = service.apply("project", {"operations": [op]}, actor="stress")
    os.write(1, f"ACK {report.batch_id} {content}\n".encode())
    i += 1
"""


def _spawn(home: Path, project: Path, tag: str, count: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(home), str(project), tag, str(count)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _acks(output: str) -> list[tuple[str, str]]:
    acks = []
    for line in output.splitlines():
        if line.startswith("ACK ") and line.endswith("q"):  # a complete ack line
            _, batch_id, content = line.split(" ", 2)
            acks.append((batch_id, content))
    return acks


def test_four_processes_fifty_creates_each(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    home.mkdir()
    writers = [_spawn(home, project, f"w{n}", 50) for n in range(4)]
    try:
        outputs = [w.communicate(timeout=120) for w in writers]
    finally:
        for w in writers:
            if w.poll() is None:
                w.kill()
    assert [w.returncode for w in writers] == [0, 0, 0, 0], [o[1][-2000:] for o in outputs]
    store = project / ".invincat" / "memory_project.json"
    doc = json.loads(store.read_text(encoding="utf-8"))
    assert len(doc["items"]) == 200
    ids = [item["id"] for item in doc["items"]]
    assert len(set(ids)) == 200 and all(is_entry_id(i) and i.startswith("mem_p_") for i in ids)
    journal = store.with_name("memory_project.journal.jsonl").read_text().splitlines()
    assert len(journal) == 200
    records = [json.loads(line) for line in journal]
    # The journal is a hash chain: each batch starts from the state the previous one left.
    for prev, cur in itertools.pairwise(records):
        assert cur["hash_before"] == prev["hash_after"]
    acked = {content for out, _ in outputs for _, content in _acks(out)}
    assert acked == {item["content"] for item in doc["items"]}
    assert not list(store.parent.glob("*.tmp"))


ZYGOTE = r"""
import os, sys, secrets
from pathlib import Path
from invincat_server.runtime.memory import MemoryService
from invincat_server.runtime.memory.redaction import redact

# The first redaction loads detect-secrets' rules (0.1-0.5 s); load them before forking,
# like the imports, so the kills land in a stream of applies, not in that one-time load.
redact("warm up")
home, project = Path(sys.argv[1]), Path(sys.argv[2])

def say(text):
    # One write() per line: several processes share this pipe, and lines shorter than
    # PIPE_BUF written in one call never interleave (print() may split them).
    os.write(1, (text + "\n").encode())

def write_forever(tag):
    service = MemoryService(home, project)
    say(f"READY {tag}")
    i = 0
    while True:
        content = f"{tag} item {i} {secrets.token_hex(6)} z{i}q"
        op = {"op": "create", "scope": "project", "section": "Stress", "content": content}
        report = service.apply("project", {"operations": [op]}, actor="stress")
        say(f"ACK {report.batch_id} {content}")
        i += 1

for line in sys.stdin:
    tag = line.strip()
    pid = os.fork()
    if pid == 0:
        try:
            write_forever(tag)
        finally:
            os._exit(1)
    say(f"PID {tag} {pid}")
    while True:  # reap the writers the test has killed meanwhile
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                break
        except ChildProcessError:
            break
"""


def _kill_trials(home: Path, project: Path, rounds: int, rng: random.Random) -> list[str]:
    """Fork pairs of writers from a pre-imported zygote and SIGKILL each mid-stream."""
    zygote = subprocess.Popen(
        [sys.executable, "-c", ZYGOTE, str(home), str(project)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert zygote.stdin is not None and zygote.stdout is not None
    lines: queue.Queue[str] = queue.Queue()
    reader = threading.Thread(target=lambda: [lines.put(x) for x in zygote.stdout], daemon=True)
    reader.start()
    seen: list[str] = []
    store = project / ".invincat" / "memory_project.json"
    try:
        for trial in range(rounds):
            tags = [f"k{trial}w{n}" for n in range(2)]
            zygote.stdin.write("".join(tag + "\n" for tag in tags))
            zygote.stdin.flush()
            pids: dict[str, int] = {}
            ready: set[str] = set()
            while len(pids) < 2 or len(ready) < 2:
                line = lines.get(timeout=DEADLINE).rstrip("\n")  # a hang fails, never blocks
                seen.append(line)
                words = line.split()
                if len(words) == 3 and words[0] == "PID" and words[1] in tags:
                    pids[words[1]] = int(words[2])
                elif len(words) == 2 and words[0] == "READY" and words[1] in tags:
                    ready.add(words[1])
            for pid in pids.values():
                # Somewhere in a stream of applies: the re-read under the lock, the temp
                # file write, the rename or the journal append.
                time.sleep(rng.uniform(0.0, 0.08))
                os.kill(pid, signal.SIGKILL)
            if store.exists():
                parse_store(store.read_bytes(), "project")  # loads as is, no repair needed
    finally:
        zygote.stdin.close()
        try:
            zygote.wait(timeout=DEADLINE)
        finally:
            if zygote.poll() is None:
                zygote.kill()
    reader.join(timeout=DEADLINE)
    while not lines.empty():
        seen.append(lines.get().rstrip("\n"))
    return seen


def _spawned_kill_trials(home: Path, project: Path, trials: int, rng: random.Random) -> list[str]:
    """Fresh interpreters, killed from start-up on: covers a death during import or load."""
    lines: list[str] = []
    for trial in range(trials):
        proc = _spawn(home, project, f"s{trial}", -1)
        time.sleep(rng.uniform(0.05, 0.4))
        proc.kill()  # SIGKILL
        out, _ = proc.communicate(timeout=DEADLINE)
        lines += out.splitlines()
    return lines


def test_sigkill_at_random_points_never_corrupts_or_loses_acked_batches(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    home.mkdir()
    # Raised bounds: this test accumulates thousands of entries across kills.
    (home / "config.toml").write_text("[memory]\nmax_active = 100000\n")
    store = project / ".invincat" / "memory_project.json"
    rng = random.Random(20250101)
    started = time.monotonic()
    output = _kill_trials(home, project, 100, rng)  # 200 kills
    output += _spawned_kill_trials(home, project, 10, rng)
    elapsed = time.monotonic() - started

    acked = _acks("\n".join(output))
    state = parse_store(store.read_bytes(), "project")
    contents = {e.content for e in state.entries.values()}
    journaled = {r.batch_id for r in read_all(store.with_name("memory_project.journal.jsonl"))}
    lost = [(b, c) for b, c in acked if c not in contents or b not in journaled]
    assert lost == []
    assert len(acked) >= 100, "the writers should have acknowledged many batches"
    assert not list(store.parent.glob("memory_project.corrupt-*"))
    print(f"210 kills, {len(acked)} acked batches, {len(contents)} entries in {elapsed:.1f}s")
