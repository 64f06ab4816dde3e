"""Fixtures for the memory tests: a MemoryService on temp user and project dirs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from invincat_server.runtime.memory import MemoryLimits, MemoryService


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    home = tmp_path / "home"
    project = tmp_path / "project"
    home.mkdir()
    (project / ".git").mkdir(parents=True)
    return home, project


@pytest.fixture
def make_service(dirs: tuple[Path, Path]) -> Callable[..., MemoryService]:
    def make(**limits: Any) -> MemoryService:
        home, project = dirs
        return MemoryService(home, project, limits=MemoryLimits(**limits) if limits else None)

    return make


@pytest.fixture
def service(make_service: Callable[..., MemoryService]) -> MemoryService:
    return make_service()
