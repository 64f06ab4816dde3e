"""Several Invincat processes remembering 'always' answers at the same moment lose nothing
(issue 13 §7): each process adds its own rule / trusts its own project, all are kept."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

PROCESSES = 8
ROUNDS = 5

ADD_RULES = """
import sys, time
from pathlib import Path
from invincat_server.runtime.approvals import Rule, WorkspaceRuleStore
path, go, index, rounds = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])
while not go.exists():
    time.sleep(0.001)
store = WorkspaceRuleStore(path)
for n in range(rounds):
    store.add(Path("/ws"), Rule(tool="execute", command_prefix=f"tool{index}-{n}"))
"""

TRUST = """
import sys, time
from pathlib import Path
from invincat_server.runtime.extensions.mcp.trust import TrustStore
path, go, index, rounds = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])
root = Path(sys.argv[5])
while not go.exists():
    time.sleep(0.001)
store = TrustStore(path)
for n in range(rounds):
    project = root / f"p{index}-{n}"
    project.mkdir()
    (project / ".mcp.json").write_text("{}")
    store.trust(project, [project / ".mcp.json"])
"""


def _race(script: str, target: Path, tmp_path: Path, *extra: str) -> None:
    go = tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(target), str(go), str(i), str(ROUNDS), *extra]
        )
        for i in range(PROCESSES)
    ]
    time.sleep(1.0)  # let every interpreter start and wait on the flag (not a correctness wait)
    go.touch()
    for proc in procs:
        assert proc.wait(timeout=120) == 0


def test_concurrent_workspace_rules_are_all_kept(tmp_path: Path) -> None:
    target = tmp_path / "approvals.json"
    _race(ADD_RULES, target, tmp_path)
    rules = json.loads(target.read_text())["workspaces"]["/ws"]
    prefixes = {r["command_prefix"] for r in rules}
    expected = {f"tool{i}-{n}" for i in range(PROCESSES) for n in range(ROUNDS)}
    assert prefixes == expected, f"lost: {sorted(expected - prefixes)}"


def test_concurrent_project_trust_is_all_kept(tmp_path: Path) -> None:
    target = tmp_path / "trusted_projects.json"
    projects = tmp_path / "projects"
    projects.mkdir()
    _race(TRUST, target, tmp_path, str(projects))
    trusted = set(json.loads(target.read_text())["projects"])
    expected = {str(projects / f"p{i}-{n}") for i in range(PROCESSES) for n in range(ROUNDS)}
    assert trusted == expected, f"lost: {sorted(expected - trusted)}"
