"""A process making governed creates in the memory database: one per batch, printing each
acknowledged id on its own line (flushed), so the test knows exactly what was acknowledged.

    python memory_worker.py URL HOME ROOT TAG COUNT [HANG_AFTER]

With HANG_AFTER, the batch after that many acknowledged ones stops inside its
transaction, after its store write and journal append and before the commit, and prints
`mid-batch`: the test kills it there.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from invincat_server.runtime.memory.backend import open_service


def main() -> None:
    url, home, root, tag, count = sys.argv[1:6]
    hang_after = int(sys.argv[6]) if len(sys.argv) > 6 else None
    service = open_service(Path(home), Path(root), url)
    print("ready", flush=True)
    for i in range(int(count)):
        if i == hang_after:
            hang_inside(service)
        content = f"Worker {tag} fact {i} says module {tag}x{i} keeps rule r{tag}{i}"
        report = service.apply(
            "project",
            {
                "operations": [
                    {"op": "create", "scope": "project", "section": "Facts", "content": content}
                ]
            },
            actor="cli",
        )
        created = [op.id for op in report.applied if op.op == "create"]
        if len(created) != 1:
            print(f"not-created {report.model_dump_json()}", flush=True)
            continue
        print(f"ack {created[0]}", flush=True)


def hang_inside(service: object) -> None:
    writer = service.writer  # type: ignore[attr-defined]
    commit = writer.commit

    def commit_then_hang(*args: object, **kwargs: object) -> object:
        commit(*args, **kwargs)  # written and journaled, in the open transaction
        print("mid-batch", flush=True)
        threading.Event().wait()  # until SIGKILL
        raise AssertionError("unreachable")

    writer.commit = commit_then_hang


if __name__ == "__main__":
    main()
