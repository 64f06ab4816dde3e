"""`bench/real_model.py --server URL` runs its tasks with the real `invincat chat` and
reports each task's outcome check, tool-call validity and turns (here against the fake
server; the real model needs a llama.cpp build: bench/README.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.deadlines import DEADLINE

BENCH = Path(__file__).resolve().parents[2] / "bench" / "real_model.py"


def test_the_bench_checks_outcomes_and_counts_tool_calls_and_turns(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], tmp_path: Path
) -> None:
    hello = {"path": "hello.txt", "content": "Hello, world\n"}
    fake_openai.add_steps(
        [
            {
                "match": {"last_user_contains": "hello.txt", "has_tool_result": False},
                "tool_calls": [{"name": "write_file", "arguments": hello}],
            },
            {"match": {"last_user_contains": "hello.txt"}, "content": "Created hello.txt."},
            {
                "match": {"last_user_contains": "`Invoice`"},
                # A tool call written as text, which Invincat runs as a grep ...
                "content": '{"name": "grep", "arguments": {"pattern": "x"}}',
            },
            {  # ... then the wrong file: not done, the text call valid.
                "match": {"last_user_contains": "`Invoice`"},
                "content": "shop/models.py",
            },
        ]
    )
    done = subprocess.run(
        [
            sys.executable,
            str(BENCH),
            "--server",
            fake_openai.base_url,
            "--model",
            "fake-model",
            "--tasks",
            "create_file,find_definition",
            "--keep",
            str(tmp_path / "kept"),
        ],
        env=invincat_env,
        capture_output=True,
        text=True,
        timeout=DEADLINE * 3,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {line.split()[0]: line.split() for line in done.stdout.splitlines() if line}
    assert rows["create_file"][1:4] == ["yes", "1/1", "2"], done.stdout
    assert rows["find_definition"][1:4] == ["no", "1/1", "2"], done.stdout
    assert "done 1/2; tool calls valid 2/2 (1 written as text)" in done.stdout
    kept = (tmp_path / "kept" / "find_definition.jsonl").read_text(encoding="utf-8")
    assert "message_delta" in kept and kept.rstrip().endswith("}")


def test_the_bench_refuses_to_start_when_a_check_cannot_run(tmp_path: Path) -> None:
    """Made with `pip install -e .`, the bench's venv had no pytest, so fix_failing_test was
    counted not done whatever the model did (runs 5-13). `-S`: this Python without its
    site-packages, where pytest is."""
    done = subprocess.run(
        [sys.executable, "-S", str(BENCH), "--server", "http://127.0.0.1:9/v1",
         "--tasks", "explain_file,fix_failing_test"],
        capture_output=True, text=True, timeout=DEADLINE, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2
    assert "the outcome checks need pytest" in done.stderr and "pip install pytest" in done.stderr
    assert done.stdout == ""  # no task ran
