"""Change notifications of the memory database: every commit of a batch `pg_notify`s
(pg_writer.py), and `watch_changes` hears them, from any process on any machine.

A watcher is a daemon thread with its own connection in `LISTEN`; it calls back in that
thread, so a caller on an event loop hands the notice over (`call_soon_threadsafe`, as
runtime/project/store_watch.py does). Notifications are delivered only while listening,
so each time `LISTEN` takes effect (the first time, and after a lost connection) the
watcher announces a change of each scope with `batch_id` None and namespace "": what
was committed before it listened (after the caller's first read) would otherwise be
missed for good.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from invincat_server.runtime.database import DatabaseUnavailableError, connect
from invincat_server.runtime.memory.pg_writer import CHANNEL

log = logging.getLogger("invincat.memory.pg_changes")

RETRY_SECONDS = 5.0


@dataclass(frozen=True)
class ChangeNotice:
    """`namespace` (a `scope`'s) changed in batch `batch_id` (None: unknown, see above)."""

    namespace: str
    scope: str
    batch_id: str | None


def encode_notice(namespace: str, scope: str, batch_id: str) -> str:
    return json.dumps({"namespace": namespace, "scope": scope, "batch_id": batch_id})


def decode_notice(payload: str) -> ChangeNotice | None:
    """The notice, None for a payload that is not one (anyone may NOTIFY the channel)."""
    try:
        raw = json.loads(payload)
    except ValueError:
        return None
    if not isinstance(raw, dict):
        return None
    namespace, scope, batch_id = raw.get("namespace"), raw.get("scope"), raw.get("batch_id")
    if not isinstance(namespace, str) or scope not in ("user", "project"):
        return None
    return ChangeNotice(namespace, scope, batch_id if isinstance(batch_id, str) else None)


class ChangeWatcher:
    """A running watch; `stop()` ends it (and waits for its thread)."""

    def __init__(self, url: str, callback: Callable[[ChangeNotice], None]) -> None:
        self._url = url
        self._callback = callback
        self._stopped = threading.Event()
        self.listening = threading.Event()
        """Set once LISTEN is in effect (tests wait on it before writing)."""
        self._thread = threading.Thread(
            target=self._run, name="invincat-memory-listen", daemon=True
        )
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        self._stopped.set()
        self._thread.join(timeout)

    def _run(self) -> None:
        while not self._stopped.is_set():
            try:
                conn = connect(self._url)
            except DatabaseUnavailableError as exc:
                log.warning("memory change watch: %s; retrying", exc)
                self._stopped.wait(RETRY_SECONDS)
                continue
            try:
                self._listen(conn)
            except Exception as exc:  # a lost connection: listen again
                log.warning("memory change watch lost its connection (%s)", type(exc).__name__)
            finally:
                conn.close()

    def _listen(self, conn: Any) -> None:
        conn.execute(f"LISTEN {CHANNEL}")
        self.listening.set()
        self._deliver(ChangeNotice("", "project", None))  # maybe missed: see above
        self._deliver(ChangeNotice("", "user", None))
        while not self._stopped.is_set():
            for notify in conn.notifies(timeout=1.0):
                notice = decode_notice(notify.payload)
                if notice is not None:
                    self._deliver(notice)

    def _deliver(self, notice: ChangeNotice) -> None:
        try:
            self._callback(notice)
        except Exception:
            log.exception("a memory change listener failed")


def watch_changes(url: str, callback: Callable[[ChangeNotice], None]) -> ChangeWatcher:
    """Call `callback` (in the watcher's thread) for each batch committed to the memory
    database at `url`, by any process."""
    return ChangeWatcher(url, callback)
