"""Shared pytest configuration."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest_plugins = ["invincat_server.testing.fixtures", "tests.sessions", "tests.postgres"]


@pytest.fixture(autouse=True, scope="session")
def _warm_servers_of_this_session(warm_runtime_dir: Path) -> Iterator[None]:
    """Every process the tests start, also those given an environment of their own, puts
    its warm chat server in this session's runtime directory (stopped at the end), never in
    the developer's, and none outlives the test run."""
    before = os.environ.get("XDG_RUNTIME_DIR")
    os.environ["XDG_RUNTIME_DIR"] = str(warm_runtime_dir)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("XDG_RUNTIME_DIR", None)
        else:
            os.environ["XDG_RUNTIME_DIR"] = before
