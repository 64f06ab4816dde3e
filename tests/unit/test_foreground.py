"""lsp/foreground.py: the background import waits for the requests a user is looking at,
never longer than its cap."""

from __future__ import annotations

import threading
import time

from invincat_server.lsp.foreground import Foreground


def test_idle_at_once_when_nothing_is_served() -> None:
    assert Foreground().wait_idle(timeout=0) is True


def test_the_import_waits_until_the_request_is_answered() -> None:
    gate = Foreground()
    order: list[str] = []
    started = threading.Event()

    def import_thread() -> None:
        started.set()
        if gate.wait_idle(timeout=60):
            order.append("import goes on")

    with gate.serving():
        assert gate.wait_idle(timeout=0) is False  # a request in flight: not idle
        waiter = threading.Thread(target=import_thread)
        waiter.start()
        assert started.wait(60)
        order.append("request answered")
    waiter.join(timeout=60)
    assert order == ["request answered", "import goes on"]


def test_the_wait_is_capped() -> None:
    gate = Foreground()
    with gate.serving(), gate.serving():
        began = time.monotonic()
        assert gate.wait_idle(timeout=0.05) is False
        assert time.monotonic() - began < 30
    assert gate.wait_idle(timeout=0) is True  # both requests done
