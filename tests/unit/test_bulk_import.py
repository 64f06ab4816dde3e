"""`bulk_import()`: no full collections while a big import runs, the imported objects
frozen afterwards, and the collector back to normal for everything created later. Each
check runs in a fresh interpreter: freezing the test runner's own heap would outlive the
test."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from tests.deadlines import DEADLINE


def run_python(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=DEADLINE,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_full_collections_wait_and_the_loaded_objects_are_frozen() -> None:
    out = run_python(
        """
        import gc
        from invincat_server.runtime.bulk_import import bulk_import

        before = gc.get_threshold()
        full = gc.get_stats()[2]["collections"]
        young = gc.get_stats()[0]["collections"]
        with bulk_import():
            # Like an import: many long-lived objects, some short-lived cycles.
            kept = [[i] for i in range(300_000)]  # lists: tracked by the collector
            for i in range(20_000):
                cycle = []
                cycle.append(cycle)
            assert gc.get_stats()[2]["collections"] == full, "a full collection ran"
            assert gc.get_stats()[0]["collections"] > young, "young garbage not collected"
        assert gc.get_threshold() == before
        assert gc.get_freeze_count() >= len(kept)

        # Garbage made afterwards is still found by the collector.
        cycle = []
        cycle.append(cycle)
        del cycle
        assert gc.collect() >= 1
        print("ok")
        """
    )
    assert out.strip() == "ok"


def test_nested_and_concurrent_blocks_restore_the_thresholds_once() -> None:
    out = run_python(
        """
        import gc, threading
        from invincat_server.runtime.bulk_import import bulk_import

        before = gc.get_threshold()
        inside = threading.Event()
        release = threading.Event()

        def other():
            with bulk_import():
                inside.set()
                release.wait(60)

        worker = threading.Thread(target=other)
        with bulk_import():
            worker.start()
            assert inside.wait(60)
            with bulk_import():
                pass
            assert gc.get_threshold()[2] > before[2]  # the outer blocks still run
        assert gc.get_threshold()[2] > before[2]  # the other thread's block still runs
        release.set()
        worker.join(60)
        assert gc.get_threshold() == before
        print("ok")
        """
    )
    assert out.strip() == "ok"
