"""A process making governed creates in the memory database: one per batch, printing each
acknowledged id on its own line (flushed), so the test knows exactly what was acknowledged.

    python memory_worker.py URL HOME ROOT TAG COUNT
"""

from __future__ import annotations

import sys
from pathlib import Path

from invincat_server.runtime.memory.backend import open_service


def main() -> None:
    url, home, root, tag, count = sys.argv[1:6]
    service = open_service(Path(home), Path(root), url)
    print("ready", flush=True)
    for i in range(int(count)):
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


if __name__ == "__main__":
    main()
