"""Locking, threads in one process, configuration errors, atomic-write leftovers."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from invincat_server.runtime.memory import (
    LockTimeoutError,
    MemoryConfigError,
    MemoryService,
    load_limits,
)

from .helpers import create


def test_threads_sharing_one_service_serialise_their_batches(service: MemoryService) -> None:
    def worker(n: int) -> list[str]:
        ids: list[str] = []
        for _ in range(25):
            ids += service.apply("project", [create()], actor=f"thread{n}").created_ids()
        return ids

    with ThreadPoolExecutor(4) as pool:
        results = [i for ids in pool.map(worker, range(4)) for i in ids]
    assert len(set(results)) == 100
    assert len(service.list("project")) == 100
    assert len(service.log("project")) == 100


def test_a_held_lock_times_out_with_a_clear_message(
    make_service: Callable[..., MemoryService],
) -> None:
    service = make_service(lock_timeout=0.2)
    service.apply("project", [create()])
    fd = os.open(service.files["project"].lock, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with pytest.raises(LockTimeoutError, match="retry"):
            service.apply("project", [create()])
    finally:
        os.close(fd)
    assert service.apply("project", [create()]).created_ids()


@pytest.mark.parametrize(
    "text",
    ["[memory]\nmax_active = 0\n", "[memory]\nmax_archived = 'x'\n", "memory = 3\n", "[memory\n"],
)
def test_bad_memory_config_is_a_one_line_error(tmp_path: Path, text: str) -> None:
    (tmp_path / "config.toml").write_text(text)
    with pytest.raises(MemoryConfigError) as info:
        load_limits(tmp_path)
    assert "config.toml" in str(info.value)


def test_stale_temp_files_of_dead_writers_are_removed(service: MemoryService) -> None:
    service.apply("project", [create()])
    directory = service.files["project"].directory
    stale = directory / ".memory_project.json.abc123.tmp"
    stale.write_text("half a store")
    service.apply("project", [create()])
    assert not stale.exists()
