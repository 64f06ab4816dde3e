"""In-process sessions against the fake model server (faster than spawning the CLI for
long scripted conversations). The `make_session` fixture is registered in tests/conftest.py."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from invincat_server.runtime.config import load_settings
from invincat_server.runtime.policy.workspace import Workspace
from invincat_server.runtime.session import Session

SessionFactory = Callable[..., Awaitable[Session]]


@pytest.fixture
async def make_session(
    invincat_monkeyenv: dict[str, str], workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[SessionFactory]:
    opened: list[Session] = []

    async def make(auto_approve: bool = True, **env: str) -> Session:
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        session = Session(load_settings(), Workspace(workspace), auto_approve=auto_approve)
        await session.open()
        opened.append(session)
        return session

    yield make
    for session in opened:
        await session.close()


async def run_turn(
    session: Session, prompt: str, thread_id: str | None = None, *, follow: bool = False
) -> tuple[str, list]:
    """Run one turn to its end (with `follow`, also its background memory work)."""
    turn = await session.start_turn(prompt, thread_id)
    events = [event async for event in turn.events(follow=follow)]
    return turn.thread_id, events
