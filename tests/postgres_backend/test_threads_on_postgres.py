"""Threads, checkpoints and pending approvals in PostgreSQL (`INVINCAT_DATABASE_URL`),
through the real `invincat` process and the scripted model server: the same behaviour
as threads.sqlite, visible from a second "machine" (another INVINCAT_HOME on the same
database), and a database that refuses us is one clear line without the password."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.terminal.cli_process import LiveInvincat, run_invincat

psycopg = pytest.importorskip("psycopg")


@pytest.fixture
def pg_env(invincat_env: dict[str, str], pg_url: str) -> dict[str, str]:
    # No warm server: its workers were started with another environment.
    return {**invincat_env, "INVINCAT_DATABASE_URL": pg_url, "INVINCAT_WARM": "0"}


def _other_home(env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """The same user's second machine: its own INVINCAT_HOME, the same database."""
    home = tmp_path / "second-machine-home"
    home.mkdir()
    return {**env, "INVINCAT_HOME": str(home)}


def _thread_ids(env: dict[str, str]) -> list[str]:
    listed = run_invincat(["threads", "list", "--json"], env)
    assert listed.code == 0, listed.stderr
    return [t["thread_id"] for t in json.loads(listed.stdout)]


def _checkpoint_counts(url: str) -> dict[str, int]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT thread_id, COUNT(*) FROM checkpoints WHERE checkpoint_ns = '' GROUP BY 1"
        ).fetchall()
    return {thread: count for thread, count in rows}


def _files_holding(secret: str, *folders: Path) -> list[Path]:
    """Files under `folders` (homes, the warm server's log) whose bytes hold `secret`."""
    return [
        path
        for folder in folders
        for path in folder.rglob("*")
        if path.is_file() and secret.encode() in path.read_bytes()
    ]


def _chat(env: dict[str, str], workspace: Path, prompt: str, *extra: str) -> dict[str, str]:
    result = run_invincat(["chat", prompt, "--yes", "--json", "--cwd", str(workspace), *extra], env)
    assert result.code == 0, result.stderr
    return result.of_type("turn_end")[-1]


def test_turns_titles_resume_pruning_list_delete_and_prune(
    fake_openai: FakeOpenAIServer,
    pg_env: dict[str, str],
    pg_url: str,
    workspace: Path,
    invincat_home: Path,
) -> None:
    (workspace / "notes.txt").write_text("marker-one\n")
    fake_openai.add_steps(
        [
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
            {"content": "Read it."},
        ]
    )
    first = _chat(pg_env, workspace, "read the notes please")["thread_id"]
    fake_openai.add_steps([{"content": "Still here."}])
    assert _chat(pg_env, workspace, "what did you read?", "--resume")["thread_id"] == first
    # --resume sent the whole thread, read back from PostgreSQL.
    assert "marker-one" in str(fake_openai.chat_requests()[-1]["messages"])
    # Nothing went to the SQLite file.
    assert not (invincat_home / "threads.sqlite").exists()

    listed = run_invincat(["threads", "list", "--json"], pg_env)
    assert listed.code == 0, listed.stderr
    [info] = json.loads(listed.stdout)
    assert info["thread_id"] == first and info["title"] == "read the notes please"
    assert info["workspace"] == str(workspace.resolve())
    # Pruned after each turn: one checkpoint left (unpruned: several per turn).
    assert _checkpoint_counts(pg_url) == {first: 1}

    fake_openai.add_steps([{"content": "Second thread."}])
    second = _chat(pg_env, workspace, "another topic")["thread_id"]
    assert sorted(_thread_ids(pg_env)) == sorted([first, second])

    declined = run_invincat(["threads", "delete", second], pg_env, input="n\n")
    assert declined.code == 0 and "Nothing deleted" in declined.stdout
    deleted = run_invincat(["threads", "delete", second], pg_env, input="y\n")
    assert deleted.code == 0, deleted.stderr
    assert _thread_ids(pg_env) == [first]
    assert set(_checkpoint_counts(pg_url)) == {first}
    again = run_invincat(["threads", "delete", second, "--yes"], pg_env)
    assert again.code == 1 and "unknown thread" in again.stderr

    pruned = run_invincat(["threads", "prune", "--older-than", "0", "--yes"], pg_env)
    assert pruned.code == 0, pruned.stderr
    assert _thread_ids(pg_env) == []
    with psycopg.connect(pg_url) as conn:
        for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes"):
            assert conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone() == (0,), table


def test_a_pending_approval_survives_kill_9_and_is_answered_on_another_machine(
    fake_openai: FakeOpenAIServer,
    pg_env: dict[str, str],
    workspace: Path,
    tmp_path: Path,
) -> None:
    write = {"name": "write_file", "arguments": {"path": "r.txt", "content": "R"}}
    fake_openai.add_steps([{"tool_calls": [write]}, {"content": "Wrote it after the restart."}])
    live = LiveInvincat(["chat", "write r", "--json", "--cwd", str(workspace)], pg_env)
    asked = live.wait_for("approval_requested")
    thread = asked["thread_id"]
    live.kill()  # SIGKILL: nothing of it gets to clean up
    assert not (workspace / "r.txt").exists()

    # Kept by prune (it waits for a decision), seen from the second machine too.
    elsewhere = _other_home(pg_env, tmp_path)
    pruned = run_invincat(["threads", "prune", "--older-than", "0", "--yes"], elsewhere)
    assert pruned.code == 0, pruned.stderr
    assert "still waits for a decision" in pruned.stdout
    assert _thread_ids(elsewhere) == [thread]

    resumed = run_invincat(
        ["chat", "--thread", thread, "--json", "--cwd", str(workspace)], elsewhere, input="y\n"
    )
    assert resumed.code == 0, resumed.stderr
    [resolved] = resumed.of_type("approval_resolved")
    assert resolved["approval_id"] == asked["approval_id"]
    assert (workspace / "r.txt").read_text() == "R"
    # Answered once: neither machine offers it again.
    gone = run_invincat(["threads", "delete", thread, "--yes"], pg_env)
    assert gone.code == 0, gone.stderr


def test_a_thread_started_on_one_machine_is_listed_and_resumed_on_another(
    fake_openai: FakeOpenAIServer,
    pg_env: dict[str, str],
    workspace: Path,
    tmp_path: Path,
) -> None:
    fake_openai.add_steps([{"content": "Noted: the password of the day is swordfish."}])
    thread = _chat(pg_env, workspace, "remember the word swordfish")["thread_id"]

    elsewhere = _other_home(pg_env, tmp_path)
    listed = run_invincat(["threads", "list"], elsewhere)
    assert listed.code == 0, listed.stderr
    assert thread in listed.stdout and "remember the word swordfish" in listed.stdout

    fake_openai.add_steps([{"content": "You said swordfish."}])
    assert _chat(elsewhere, workspace, "which word?", "--thread", thread)["thread_id"] == thread
    sent = str(fake_openai.chat_requests()[-1]["messages"])
    assert "remember the word swordfish" in sent and "which word?" in sent
    # And back on the first machine, the newest turn is there as well.
    fake_openai.add_steps([{"content": "Both turns."}])
    _chat(pg_env, workspace, "and now?", "--resume")
    assert "which word?" in str(fake_openai.chat_requests()[-1]["messages"])


@pytest.mark.parametrize(
    "argv",
    [["threads", "list"], ["threads", "prune", "--older-than", "1", "--yes"], ["chat", "hi"]],
)
def test_a_wrong_password_is_one_line_without_the_password(
    pg_env: dict[str, str], pg_url: str, workspace: Path, invincat_home: Path, argv: list[str]
) -> None:
    user_and_secret = pg_url.split("//", 1)[1].split("@", 1)[0]
    user, real = user_and_secret.split(":", 1)
    secret = "Wr0ngPassw0rdNeverShown"
    env = {**pg_env, "INVINCAT_DATABASE_URL": pg_url.replace(user_and_secret, f"{user}:{secret}")}
    result = run_invincat([*argv, *(["--cwd", str(workspace)] if argv[0] == "chat" else [])], env)
    assert result.code == 1, (result.stdout, result.stderr)
    output = result.stdout + result.stderr
    assert secret not in output and real not in output
    assert "Traceback" not in output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("invincat: Cannot use the database postgresql://")
    assert f"{user}:***@" in lines[0]
    assert _files_holding(secret, invincat_home) == []


def test_a_database_that_is_down_is_a_clear_error(pg_env: dict[str, str], workspace: Path) -> None:
    import socket

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**pg_env, "INVINCAT_DATABASE_URL": f"postgresql://ann:S3cretDown@127.0.0.1:{port}/inv"}
    for argv in (["threads", "list"], ["chat", "hi", "--cwd", str(workspace)]):
        result = run_invincat(argv, env)
        assert result.code == 1, (result.stdout, result.stderr)
        assert "S3cretDown" not in result.stdout + result.stderr
        assert "Traceback" not in result.stderr
        assert result.stderr.startswith(
            f"invincat: Cannot use the database postgresql://ann:***@127.0.0.1:{port}/inv"
        ), result.stderr


def test_a_chat_run_by_the_warm_server_uses_the_callers_database(
    fake_openai: FakeOpenAIServer,
    pg_env: dict[str, str],
    pg_url: str,
    workspace: Path,
    invincat_home: Path,
    warm_runtime_dir: Path,
) -> None:
    # The warm server's worker gets the caller's environment, INVINCAT_DATABASE_URL
    # included: the thread is in PostgreSQL, not in a threads.sqlite of the worker's.
    warm = {k: v for k, v in pg_env.items() if k != "INVINCAT_WARM"}
    fake_openai.add_steps([{"content": "Warm answer."}])
    thread = _chat(warm, workspace, "hello from a warm chat")["thread_id"]
    assert _thread_ids(pg_env) == [thread]
    assert _checkpoint_counts(pg_url) == {thread: 1}
    assert not (invincat_home / "threads.sqlite").exists()

    user_and_secret = pg_url.split("//", 1)[1].split("@", 1)[0]
    user = user_and_secret.split(":", 1)[0]
    wrong = pg_url.replace(user_and_secret, f"{user}:WarmWr0ng")
    failed = run_invincat(
        ["chat", "hi", "--cwd", str(workspace)], {**warm, "INVINCAT_DATABASE_URL": wrong}
    )
    assert failed.code == 1, (failed.stdout, failed.stderr)
    assert "WarmWr0ng" not in failed.stdout + failed.stderr
    assert _files_holding("WarmWr0ng", invincat_home, warm_runtime_dir) == []
    assert "Traceback" not in failed.stderr
    assert f"Cannot use the database postgresql://{user}:***@" in failed.stderr


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
def test_memory_that_cannot_be_opened_is_one_line_not_a_traceback(
    pg_env: dict[str, str],
    pg_url: str,
    workspace: Path,
    invincat_home: Path,
    warm_runtime_dir: Path,
    warm: bool,
) -> None:
    # Memory opens the database before the threads' store does: its errors at opening
    # are told in its own words by `invincat chat`, cold or by the warm server's worker
    # (which used to end without an exit status on them).
    env = {k: v for k, v in pg_env.items() if k != "INVINCAT_WARM"} if warm else pg_env
    config = invincat_home / "config.toml"
    before = config.read_text() if config.exists() else ""
    config.write_text(before + "\n[memory]\nwriters = 5\n")
    bad_option = run_invincat(["chat", "hi", "--cwd", str(workspace)], env)
    config.write_text(before)
    assert bad_option.code == 2, (bad_option.stdout, bad_option.stderr)
    assert "Traceback" not in bad_option.stderr
    assert "[memory] writers must be a list" in bad_option.stderr

    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE ROLE chat_no_tables LOGIN PASSWORD 'n0TablesChat'")
        database = conn.execute("SELECT current_database()").fetchone()[0]
        conn.execute(f'GRANT CONNECT ON DATABASE "{database}" TO chat_no_tables')
        conn.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
    user_and_secret = pg_url.split("//", 1)[1].split("@", 1)[0]
    role_url = pg_url.replace(user_and_secret, "chat_no_tables:n0TablesChat")
    try:
        no_tables = run_invincat(
            ["chat", "hi", "--cwd", str(workspace)], {**env, "INVINCAT_DATABASE_URL": role_url}
        )
    finally:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute("DROP OWNED BY chat_no_tables")
            conn.execute("DROP ROLE chat_no_tables")
    assert no_tables.code == 1, (no_tables.stdout, no_tables.stderr)
    assert "Traceback" not in no_tables.stderr
    assert "memory tables are missing" in no_tables.stderr
    assert "n0TablesChat" not in no_tables.stdout + no_tables.stderr
    assert _files_holding("n0TablesChat", invincat_home, warm_runtime_dir) == []


def _call(name: str, **args: object) -> dict[str, object]:
    return {"tool_calls": [{"name": name, "arguments": args}]}


def test_a_plan_left_waiting_is_approved_on_another_machine_and_deleted_with_its_planner(
    fake_openai: FakeOpenAIServer,
    pg_env: dict[str, str],
    pg_url: str,
    workspace: Path,
    tmp_path: Path,
) -> None:
    plan = [{"content": "Create hello.txt"}, {"content": "Report back"}]
    done = [{**item, "status": "completed"} for item in plan]
    fake_openai.add_steps(
        [
            _call("write_todos", todos=plan),
            _call("approve_plan", todos=plan),
            _call("write_file", path="hello.txt", content="hello\n"),
            _call("write_todos", todos=done),
            {"content": "Created hello.txt."},
        ]
    )
    live = LiveInvincat(
        ["chat", "--plan", "add a greeting", "--json", "--cwd", str(workspace)], pg_env
    )
    asked = live.wait_for("approval_requested", kind="plan")
    live.kill()
    thread = asked["thread_id"]
    # The planner keeps its own checkpoint key, in the same database.
    assert f"{thread}/planner" in _checkpoint_counts(pg_url)

    elsewhere = _other_home(pg_env, tmp_path)
    resumed = run_invincat(
        ["chat", "--thread", thread, "--json", "--cwd", str(workspace)],
        elsewhere,
        input="y\ny\n",
    )
    assert resumed.code == 0, resumed.stderr
    assert (workspace / "hello.txt").read_text() == "hello\n"

    deleted = run_invincat(["threads", "delete", thread, "--yes"], pg_env)
    assert deleted.code == 0, deleted.stderr
    assert _checkpoint_counts(pg_url) == {}
