"""Running the real `invincat` console script as a subprocess, as a user would."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.deadlines import DEADLINE

INVINCAT = str(Path(sys.executable).with_name("invincat"))


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str

    @property
    def events(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.stdout.splitlines() if line.strip()]

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == kind]


def run_invincat(
    args: list[str],
    env: dict[str, str],
    *,
    input: str = "",
    timeout: float = DEADLINE,
    umask: int = -1,
) -> Result:
    """`umask`: the process's file mode creation mask (-1: this process's)."""
    proc = subprocess.run(
        [INVINCAT, *args],
        env=env,
        input=input,
        umask=umask,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


class LiveInvincat:
    """An `invincat` process we talk to while it runs (REPL, kill at an approval)."""

    def __init__(
        self, args: list[str], env: dict[str, str], *, wrapper: tuple[str, ...] = ()
    ) -> None:
        """`wrapper`: a command that runs `invincat` (`("nohup",)`)."""
        self.proc = subprocess.Popen(
            [*wrapper, INVINCAT, *args],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        self.stderr_chunks: list[str] = []
        threading.Thread(target=self._pump, daemon=True).start()
        self._err_reader = threading.Thread(target=self._pump_err, daemon=True)
        self._err_reader.start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _pump_err(self) -> None:
        assert self.proc.stderr is not None
        for chunk in self.proc.stderr:
            self.stderr_chunks.append(chunk)

    def send(self, text: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(text)
        self.proc.stdin.flush()

    def wait_for(self, event_type: str, timeout: float = DEADLINE, **fields: Any) -> dict[str, Any]:
        """Read JSON events until one of `event_type` (matching `fields`) arrives."""
        kind = event_type
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                break
            if line is None:
                raise AssertionError(f"process ended before {kind}; stderr: {self.stderr}")
            if not line.strip():
                continue
            event = json.loads(line)
            self.seen.append(event)
            if event["type"] == kind and all(event.get(k) == v for k, v in fields.items()):
                return event
        raise AssertionError(f"no {kind} event within {timeout}s; seen: {self.seen}")

    def interrupt(self) -> None:
        self.proc.send_signal(2)

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=DEADLINE)

    def finish(self, timeout: float = DEADLINE) -> int:
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            self.proc.stdin.close()
        code = self.proc.wait(timeout=timeout)
        # The reader thread ends the queue with None at EOF, which the exit just caused.
        while True:
            try:
                line = self.lines.get(timeout=DEADLINE)
            except queue.Empty:
                break
            if line is None:
                break
            if line.strip():
                self.seen.append(json.loads(line))
        # stderr has its own reader: on a loaded machine it may still be reading what the
        # process wrote last (the warm client's "worker ended ..." line) after stdout's EOF.
        self._err_reader.join(timeout=DEADLINE)
        return code

    @property
    def stderr(self) -> str:
        return "".join(self.stderr_chunks)


def process_running(marker: str) -> bool:
    """True if any process's command line contains `marker` (reads /proc)."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if marker.encode() in cmdline:
            return True
    return False
