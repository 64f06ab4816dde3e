"""Governed memory on the real PostgreSQL server: the same pipeline behind the row-locked
seam, shared by repository, refused to read-only roles, notified, and transferred."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from invincat_server.runtime.memory import journal
from invincat_server.runtime.memory.backend import open_service
from invincat_server.runtime.memory.errors import ReadOnlyMemoryError, StoreUnavailableError
from invincat_server.runtime.memory.pg_changes import ChangeNotice, watch_changes
from invincat_server.runtime.memory.pg_writer import PgStoreWriter
from invincat_server.runtime.memory.service import MemoryService
from invincat_server.runtime.memory.store import sha256_hex
from invincat_server.runtime.memory.transfer import TransferError, transfer
from tests.deadlines import DEADLINE, eventually

psycopg = pytest.importorskip("psycopg")

WORKER = Path(__file__).with_name("memory_worker.py")


def create(content: str, scope: str = "project") -> dict[str, object]:
    return {"op": "create", "scope": scope, "section": "Facts", "content": content}


def git_checkout(path: Path, origin: str) -> Path:
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    subprocess.run(["git", "-C", str(path), "remote", "add", "origin", origin], check=True)
    return path


def service_at(pg_url: str, home: Path, root: Path) -> MemoryService:
    home.mkdir(parents=True, exist_ok=True)
    root.mkdir(parents=True, exist_ok=True)
    return open_service(home, root, pg_url)


def created_ids(records: list[journal.JournalRecord]) -> list[str]:
    return [op.id for r in records for op in r.applied if op.op == "create" and op.id]


def assert_consistent(service: MemoryService) -> None:
    """Journal and state agree: the last record's hash is the row's, and the entries are
    exactly those the journal created."""
    writer = service.writer
    data = writer.read("project")
    assert data is not None
    records = writer.records("project")
    assert records[-1].hash_after == sha256_hex(data)
    state = writer.parse("project", data)
    made = created_ids(records)
    assert len(made) == len(set(made)), "an id was made twice"
    assert set(state.entries) == set(made)


def test_governed_writes_reads_and_revert_on_the_database(pg_url: str, tmp_path: Path) -> None:
    service = service_at(pg_url, tmp_path / "home", tmp_path / "proj")
    assert isinstance(service.writer, PgStoreWriter)
    report = service.apply("project", [create("Run the tests with ./scripts/test")])
    (made,) = [op.id for op in report.applied if op.op == "create"]
    dupe = service.apply("project", [create("run the tests with ./scripts/test!")])
    assert [op.op for op in dupe.applied] == ["noop"]  # de-duplication, same code
    secret = "ghp_" + "a1B2" * 9
    service.apply("project", [create(f"The deploy token={secret} is used by CI")])
    rows = psycopg.connect(pg_url).execute("SELECT doc FROM invincat_memory_stores").fetchall()
    journal_rows = psycopg.connect(pg_url).execute("SELECT record FROM invincat_memory_journal")
    assert secret not in repr(rows) + repr(journal_rows.fetchall())  # redaction, same code
    service.delete(service.list("project")[-1].id, "not durable")
    assert [e.id for e in service.list("project")] == [made]
    assert not (tmp_path / "proj" / ".invincat").exists()  # nothing in the files
    service.revert(report.batch_id)
    assert service.list("project") == []
    assert [r.actor for r in service.log("project")][:2] == ["user", "user"]
    assert_consistent_or_empty(service)


def assert_consistent_or_empty(service: MemoryService) -> None:
    data = service.writer.read("project")
    assert data is not None
    assert service.writer.records("project")[-1].hash_after == sha256_hex(data)


def test_two_checkouts_of_one_repository_share_project_memory(pg_url: str, tmp_path: Path) -> None:
    one = git_checkout(tmp_path / "a" / "widgets", "git@github.com:acme/widgets.git")
    two = git_checkout(tmp_path / "b" / "w2", "https://someone:tok3n@github.com/acme/widgets/")
    other = git_checkout(tmp_path / "c" / "other", "https://github.com/acme/other")
    first = service_at(pg_url, tmp_path / "home1", one)
    second = service_at(pg_url, tmp_path / "home2", two)
    third = service_at(pg_url, tmp_path / "home3", other)
    first.apply("project", [create("Machine one says lint with ruff")])
    second.apply("project", [create("Machine two says format with black never")])
    seen = {e.content for e in first.list("project")}
    assert seen == {e.content for e in second.list("project")}
    assert len(seen) == 2
    assert third.list("project") == []
    assert isinstance(first.writer, PgStoreWriter)
    assert first.writer.namespaces["project"] == "project:github.com/acme/widgets"
    rows = psycopg.connect(pg_url).execute("SELECT namespace FROM invincat_memory_stores")
    assert "tok3n" not in json.dumps([r[0] for r in rows.fetchall()])
    assert_consistent(first)


def test_concurrent_processes_and_one_killed_mid_batch_lose_nothing(
    pg_url: str, tmp_path: Path
) -> None:
    home, root = tmp_path / "home", tmp_path / "proj"
    service = service_at(pg_url, home, root)  # creates the tables once
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}

    def start(tag: str, count: int, *more: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, str(WORKER), pg_url, str(home), str(root), tag, str(count), *more],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )

    workers = [start(tag, 25) for tag in ("a", "b", "c", "d")]
    victim = start("v", 25, "5")  # its 6th batch stops inside its transaction
    acked: list[str] = []
    assert victim.stdout is not None
    for line in victim.stdout:
        if line.startswith("ack "):
            acked.append(line.split()[1])
        if line.startswith("mid-batch"):
            break
    assert len(acked) == 5
    victim.send_signal(signal.SIGKILL)  # mid-batch: written and journaled, not committed
    victim.wait(DEADLINE)
    for proc in workers:
        out, err = proc.communicate(timeout=DEADLINE * 4)
        assert proc.returncode == 0, err
        ids = [line.split()[1] for line in out.splitlines() if line.startswith("ack ")]
        assert len(ids) == 25, out + err
        acked.extend(ids)
    present = {e.id for e in service.list("project")}
    assert len(acked) == len(set(acked)) == 105
    assert present == set(acked)  # every acknowledged create, nothing of the killed batch
    assert_consistent(service)


def test_a_read_only_role_is_refused_and_nothing_is_half_applied(
    pg_url: str, tmp_path: Path
) -> None:
    writer = service_at(pg_url, tmp_path / "home", tmp_path / "proj")
    writer.apply("project", [create("Deploys go through the release branch")])
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE ROLE memory_reader LOGIN PASSWORD 'r3ad0nly'")
        database = conn.execute("SELECT current_database()").fetchone()[0]
        conn.execute(f'GRANT CONNECT ON DATABASE "{database}" TO memory_reader')
        conn.execute("GRANT USAGE ON SCHEMA public TO memory_reader")
        conn.execute("GRANT SELECT ON ALL TABLES IN SCHEMA public TO memory_reader")
    parts = pg_url.split("//", 1)[1].split("@", 1)
    ro_url = pg_url.replace(parts[0], "memory_reader:r3ad0nly")
    try:
        reader = service_at(ro_url, tmp_path / "home", tmp_path / "proj")
        assert [e.content for e in reader.list("project")] == [
            "Deploys go through the release branch"
        ]
        before = (writer.writer.read("project"), len(writer.writer.records("project")))
        with pytest.raises(ReadOnlyMemoryError) as err:
            reader.apply("project", [create("A reader tries to add this")])
        assert "read-only: not allowed to write project memory" in str(err.value)
        assert "r3ad0nly" not in str(err.value)
        assert reader.cleanup() == []  # housekeeping does not fail for a reader
        assert (writer.writer.read("project"), len(writer.writer.records("project"))) == before
    finally:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute("DROP OWNED BY memory_reader")
            conn.execute("DROP ROLE memory_reader")


def test_writers_allow_list_refuses_other_authors(pg_url: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text('[memory]\nwriters = ["Somebody Else"]\n')
    service = service_at(pg_url, home, tmp_path / "proj")
    with pytest.raises(ReadOnlyMemoryError, match="not listed in \\[memory\\] writers"):
        service.apply("project", [create("Not allowed to land here")])
    assert service.writer.read("project") is None
    service.apply("user", [create("User memory is mine to write", "user")])  # only project


def test_bad_credentials_are_a_clear_error_without_the_password(
    pg_url: str, tmp_path: Path
) -> None:
    user_and_secret = pg_url.split("//", 1)[1].split("@", 1)[0]
    wrong = pg_url.replace(user_and_secret, user_and_secret.split(":")[0] + ":Wr0ngPassw0rd")
    with pytest.raises(StoreUnavailableError) as err:
        service_at(wrong, tmp_path / "home", tmp_path / "proj")
    assert "Wr0ngPassw0rd" not in str(err.value)
    assert "Cannot use the database postgresql://" in str(err.value)


def test_a_write_from_another_process_is_notified(pg_url: str, tmp_path: Path) -> None:
    home, root = tmp_path / "home", tmp_path / "proj"
    service = service_at(pg_url, home, root)
    heard: list[ChangeNotice] = []
    got = threading.Event()

    def hear(notice: ChangeNotice) -> None:
        if notice.batch_id is not None:  # not the "maybe missed" once listening
            heard.append(notice)
            got.set()

    watcher = watch_changes(pg_url, hear)
    try:
        assert watcher.listening.wait(DEADLINE)
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
        done = subprocess.run(
            [sys.executable, str(WORKER), pg_url, str(home), str(root), "n", "1"],
            capture_output=True,
            text=True,
            env=env,
            timeout=DEADLINE,
        )
        assert done.returncode == 0, done.stderr
        assert got.wait(DEADLINE)
    finally:
        watcher.stop()
    assert isinstance(service.writer, PgStoreWriter)
    assert heard[0].namespace == service.writer.namespaces["project"]
    assert heard[0].batch_id == service.log("project")[0].batch_id


def test_export_then_import_round_trip_is_lossless(pg_url: str, tmp_path: Path) -> None:
    # Memory made in the JSON files first (the embedded default) ...
    home, root = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    root.mkdir()
    files = MemoryService(home, root)
    report = files.apply("project", [create("Build with make all"), create("Ship on fridays")])
    files.archive(report.applied[0].id or "", "old habit")
    store = files.files["project"].store
    original, original_journal = store.read_bytes(), files.log("project")
    # ... imported into the database, exported into a fresh checkout's files.
    db = open_service(home, root, pg_url)
    (imported,) = transfer(db, "import", "project")
    assert imported.entries == 2 and imported.records == len(original_journal)
    assert db.writer.read("project") == original
    assert [e.model_dump() for e in db.list("project", include_archived=True)] == [
        e.model_dump() for e in files.list("project", include_archived=True)
    ]
    with pytest.raises(TransferError, match="already holds project memory"):
        transfer(db, "import", "project")
    store.rename(store.with_name("moved.json"))
    files.files["project"].journal.rename(store.with_name("moved.jsonl"))
    (exported,) = transfer(db, "export", "project")
    assert exported.entries == 2
    assert store.read_bytes() == original
    back = MemoryService(home, root).log("project")
    assert [r.actor for r in back[:2]] == ["export", "import"]
    assert [r.model_dump() for r in back[2:]] == [r.model_dump() for r in original_journal]
    again = MemoryService(home, root)
    again.apply("project", [create("A later write sees no external change")])
    assert "external" not in [r.actor for r in again.log("project")]


@pytest.mark.parametrize(
    "damage",
    [
        b"\x00\x00not json",
        b'{"version": 2, "scope": "project", "items": [{"id": 5}]}',
        b'{"version": 2, "scope": "project", "items": "nope"}',
        b'{"version": 2, "scope": "project", "items": []' + b" " * 10,
    ],
)
def test_import_refuses_a_damaged_store_and_writes_nothing(
    pg_url: str, tmp_path: Path, damage: bytes
) -> None:
    home, root = tmp_path / "home", tmp_path / "proj"
    (root / ".invincat").mkdir(parents=True)
    home.mkdir()
    (root / ".invincat" / "memory_project.json").write_bytes(damage)
    db = open_service(home, root, pg_url)
    with pytest.raises(TransferError):
        transfer(db, "import", "project")
    assert isinstance(db.writer, PgStoreWriter)
    assert db.writer.is_empty("project")
    assert (root / ".invincat" / "memory_project.json").read_bytes() == damage


def test_import_refuses_a_damaged_journal_line(pg_url: str, tmp_path: Path) -> None:
    home, root = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    root.mkdir()
    MemoryService(home, root).apply("project", [create("Kept only if the journal is whole")])
    path = root / ".invincat" / "memory_project.journal.jsonl"
    path.write_bytes(path.read_bytes() + b'{"batch_id": 7, "nul": "\x00"}\n')
    db = open_service(home, root, pg_url)
    with pytest.raises(TransferError, match="line 2 of"):
        transfer(db, "import", "project")
    assert isinstance(db.writer, PgStoreWriter)
    assert db.writer.is_empty("project")


def test_the_cli_imports_and_refuses_without_a_database(tmp_path: Path, pg_url: str) -> None:
    home, root = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    root.mkdir()
    MemoryService(home, root).apply("user", [create("Prefers short answers", "user")])
    env = {**os.environ, "INVINCAT_HOME": str(home)}
    env.pop("INVINCAT_DATABASE_URL", None)
    invincat = str(Path(sys.executable).with_name("invincat"))
    argv = [invincat, "memory", "--cwd", str(root), "import"]
    plain = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=DEADLINE)
    assert plain.returncode == 3 and "needs the database" in plain.stderr
    env["INVINCAT_DATABASE_URL"] = pg_url
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=DEADLINE)
    assert done.returncode == 0, done.stderr
    assert "imported user memory: 1 entries" in done.stdout
    listed = subprocess.run(
        [*argv[:-1], "list", "--json"], capture_output=True, text=True, env=env, timeout=DEADLINE
    )
    assert "Prefers short answers" in listed.stdout, listed.stderr
    assert eventually(lambda: True)


async def test_the_store_watch_announces_another_machines_write(
    pg_url: str, tmp_path: Path
) -> None:
    import asyncio

    from invincat_server.runtime.project.store_watch import StoreChange, StoreWatch

    root = git_checkout(tmp_path / "here" / "widgets", "git@github.com:acme/widgets.git")
    there = git_checkout(tmp_path / "there" / "w", "https://github.com/acme/widgets.git")
    service = service_at(pg_url, tmp_path / "home", root)
    feed = service.writer.change_feed()
    assert feed is not None
    watch = StoreWatch()
    heard: asyncio.Queue[StoreChange] = asyncio.Queue()
    watch.changes.add(heard.put_nowait)
    watcher = watch.follow_database(*feed, root)
    assert watcher is not None
    try:
        assert await asyncio.to_thread(watcher.listening.wait, DEADLINE)
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
        other_home = tmp_path / "home2"
        other_home.mkdir()
        proc = await asyncio.create_subprocess_exec(
            sys.executable, str(WORKER), pg_url, str(other_home), str(there), "m", "1", env=env
        )
        assert await asyncio.wait_for(proc.wait(), DEADLINE) == 0
        change = await asyncio.wait_for(heard.get(), DEADLINE)
        while change.batch_id is None:  # the "maybe missed" once listening
            change = await asyncio.wait_for(heard.get(), DEADLINE)
    finally:
        await watch.close()
    assert change.scope == "project" and change.root == root
    assert change.batch_id == service.log("project")[0].batch_id


def test_a_damaged_row_is_kept_as_a_backup_before_a_fresh_store(
    pg_url: str, tmp_path: Path
) -> None:
    service = service_at(pg_url, tmp_path / "home", tmp_path / "proj")
    service.apply("project", [create("Soon to be damaged by hand")])
    garbage = b'{"version": 2, "scope": "project", "items": [{"id": 5}]\x00'
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("UPDATE invincat_memory_stores SET doc = %s", (garbage,))
        # A hand-damaged journal row is skipped like a torn line, the rest still reads.
        conn.execute(
            "INSERT INTO invincat_memory_journal (namespace, batch_id, record)"
            " SELECT namespace, 'x', '{not a record' FROM invincat_memory_stores"
            " WHERE scope = 'project'"
        )
    fresh = service_at(pg_url, tmp_path / "home", tmp_path / "proj")
    fresh.apply("project", [create("Written after the recovery")])
    assert [e.content for e in fresh.list("project")] == ["Written after the recovery"]
    assert "recovery" in [r.actor for r in fresh.log("project")]
    with psycopg.connect(pg_url) as conn:
        kept = conn.execute("SELECT kind, data FROM invincat_memory_backups").fetchall()
    assert [(kind, bytes(data)) for kind, data in kept] == [("corrupt", garbage)]


def test_bad_items_in_a_batch_cost_only_themselves(pg_url: str, tmp_path: Path) -> None:
    service = service_at(pg_url, tmp_path / "home", tmp_path / "proj")
    report = service.apply(
        "project",
        [
            create("x" * 100_000),
            {"op": "create", "scope": "project", "section": 7, "content": ["wrong"]},
            {"op": "create", "scope": "project", "section": "Facts"},
            create("Has a NUL \x00 inside"),
            create("The one good fact survives"),
        ],
    )
    contents = [e.content for e in service.list("project")]
    assert "The one good fact survives" in contents
    assert len(report.dropped) >= 3
    # Governance admits a NUL in content (as with files); the rows carry it unharmed.
    assert "Has a NUL \x00 inside" in contents
    assert "Has a NUL \x00 inside" in [
        e.content for e in service_at(pg_url, tmp_path / "home", tmp_path / "proj").list("project")
    ]
    assert_consistent(service)


def test_a_row_held_too_long_is_a_clear_timeout_and_changes_nothing(
    pg_url: str, tmp_path: Path
) -> None:
    from invincat_server.runtime.memory.errors import LockTimeoutError
    from invincat_server.runtime.memory.limits import MemoryLimits

    home, root = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    root.mkdir()
    service = open_service(home, root, pg_url, limits=MemoryLimits(lock_timeout=1.0))
    service.apply("project", [create("Present before the lock is held")])
    holder = psycopg.connect(pg_url)
    try:
        holder.execute("SELECT * FROM invincat_memory_stores FOR UPDATE")
        with pytest.raises(LockTimeoutError, match="nothing was changed"):
            service.apply("project", [create("Waits for the row in vain")])
    finally:
        holder.close()
    assert len(service.list("project")) == 1
    service.apply("project", [create("Lands once the row is free")])  # and the seam recovers
    assert len(service.list("project")) == 2


def test_a_lost_connection_is_reopened(pg_url: str, tmp_path: Path) -> None:
    service = service_at(pg_url, tmp_path / "home", tmp_path / "proj")
    service.apply("project", [create("Before the connection drops")])
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
    with pytest.raises(StoreUnavailableError):
        service.list("project")  # the call that finds it broken says so ...
    service.apply("project", [create("After the connection came back")])  # ... then it reopens
    assert len(service.list("project")) == 2


def test_the_cli_refuses_a_read_only_role_end_to_end(pg_url: str, tmp_path: Path) -> None:
    home, root = tmp_path / "home", tmp_path / "proj"
    service_at(pg_url, home, root).apply("project", [create("Only writers may add to this")])
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE ROLE cli_reader LOGIN PASSWORD 'cl1Reader'")
        database = conn.execute("SELECT current_database()").fetchone()[0]
        conn.execute(f'GRANT CONNECT ON DATABASE "{database}" TO cli_reader')
        conn.execute("GRANT SELECT ON ALL TABLES IN SCHEMA public TO cli_reader")
    user_and_secret = pg_url.split("//", 1)[1].split("@", 1)[0]
    env = {
        **os.environ,
        "INVINCAT_HOME": str(home),
        "INVINCAT_DATABASE_URL": pg_url.replace(user_and_secret, "cli_reader:cl1Reader"),
    }
    invincat = str(Path(sys.executable).with_name("invincat"))
    batch = json.dumps({"operations": [create("A reader's attempt to write")]})
    try:
        done = subprocess.run(
            [invincat, "memory", "--cwd", str(root), "apply", "--scope", "project", "-"],
            input=batch,
            capture_output=True,
            text=True,
            env=env,
            timeout=DEADLINE,
        )
        listed = subprocess.run(
            [invincat, "memory", "--cwd", str(root), "list", "--json"],
            capture_output=True,
            text=True,
            env=env,
            timeout=DEADLINE,
        )
    finally:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute("DROP OWNED BY cli_reader")
            conn.execute("DROP ROLE cli_reader")
    assert done.returncode == 2
    assert "read-only: not allowed to write project memory" in done.stderr
    assert "cl1Reader" not in done.stderr + done.stdout
    items = json.loads(listed.stdout)["items"]
    assert [i["content"] for i in items] == ["Only writers may add to this"]


def test_a_role_that_may_not_create_the_tables_gets_a_clear_error(
    pg_url: str, tmp_path: Path
) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE ROLE no_tables LOGIN PASSWORD 'n0Tables'")
        database = conn.execute("SELECT current_database()").fetchone()[0]
        conn.execute(f'GRANT CONNECT ON DATABASE "{database}" TO no_tables')
        conn.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
    user_and_secret = pg_url.split("//", 1)[1].split("@", 1)[0]
    try:
        with pytest.raises(StoreUnavailableError) as err:
            service_at(
                pg_url.replace(user_and_secret, "no_tables:n0Tables"),
                tmp_path / "home",
                tmp_path / "proj",
            )
    finally:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute("DROP OWNED BY no_tables")
            conn.execute("DROP ROLE no_tables")
    assert "n0Tables" not in str(err.value)
    assert "memory tables are missing" in str(err.value)
