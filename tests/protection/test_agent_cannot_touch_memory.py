"""An agent trying every way it has to read or change a memory store gets nowhere:
reads are refused or see nothing, writes are refused or reverted and reported."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from invincat_server.runtime.events import Error, ToolResult
from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.sessions import SessionFactory, run_turn

MARKER = "ZEBRA-MEMORY-MARKER-42"
STORE = ".invincat/memory_project.json"


def _call(name: str, **args: object) -> dict:
    return {"tool_calls": [{"name": name, "arguments": args}]}


ATTEMPTS = [
    _call("read_file", path=STORE),
    _call("read_file", path="../project/" + STORE),
    _call("read_file", path="store-link.json"),
    _call("read_file", path="store-hardlink.json"),
    _call("read_file", path=".INVINCAT/MEMORY_PROJECT.JSON"),
    _call("write_file", path=STORE, content="{}"),
    _call("edit_file", path=STORE, old_string=MARKER, new_string="gone"),
    _call("ls", path=".invincat"),
    _call("grep", pattern="MEMORY-MARKER", path="."),
    _call("glob", pattern="**/*.json"),
    _call("execute", command="cat .invincat/*"),
    _call("execute", command="sed -i 's/ZEBRA/HORSE/' .invincat/memory_project.json"),
    _call(
        "execute", command="python3 -c \"open('.invincat/memory_project.json','w').write('{}')\""
    ),
    _call("execute", command="find . -name '*.json' -exec cat {} \\;"),
    _call("execute", command="cp /etc/hostname .invincat/memory_project.json"),
    _call("execute", command="mv .invincat/memory_project.json /tmp/stolen.json"),
    _call("execute", command="rm -f .invincat/memory_project.json"),
    _call("execute", command="echo '{}' > .invincat/memory_project.json"),
    _call("execute", command="grep -r ZEBRA ."),
    # Spelled so no guard can recognise the path: only the tamper check can catch this.
    _call(
        "execute",
        command="python3 -c \"import os; p=os.path.join('.inv'+'incat','memory_pro'+'ject.json'); "
        "open(p,'a').write('tampered')\"",
    ),
]


async def test_every_attempt_is_refused_or_reverted(
    fake_openai: FakeOpenAIServer,
    make_session: SessionFactory,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The revert layer under the sandbox: with the sandbox on, these writes fail outright
    # (read-only or hidden; tests/protection/test_shell_sandbox.py), so it is off here.
    monkeypatch.setenv("INVINCAT_SANDBOX", "off")
    session = await make_session()
    report = session.memory.apply(
        "project",
        {
            "operations": [
                {
                    "op": "create",
                    "scope": "project",
                    "section": "Secrets of the trade",
                    "content": f"The marker is {MARKER}",
                    "score": 80,
                }
            ]
        },
        actor="user",
    )
    assert not report.rejected
    store = workspace / STORE
    original = store.read_bytes()
    (workspace / "store-link.json").symlink_to(store)
    os.link(store, workspace / "store-hardlink.json")

    fake_openai.add_steps([*ATTEMPTS, {"content": "I could not touch it."}])
    _, events = await run_turn(session, "read and change your memory store")

    results = [e for e in events if isinstance(e, ToolResult)]
    assert len(results) == len(ATTEMPTS)
    for result in results:
        assert MARKER not in result.content, (result.name, result.content)
        assert "Refused: Refused" not in result.content
    tamper_reports = [e for e in events if isinstance(e, Error)]
    assert tamper_reports, "the obfuscated write was not reported"
    assert results[-1].status == "error"  # it ran (and was undone): a failure
    # Commands the guard refused did not run: declined, not failed.
    guarded = [r for r in results if r.name == "execute" and r.content.startswith("Refused")]
    assert guarded and all(r.status == "rejected" for r in guarded)
    # So did the file tools the path protection refused (the store, its copies by name).
    denied = [r for r in results if r.name in ("write_file", "edit_file", "ls")]
    assert denied and all(r.status == "rejected" for r in denied), denied
    assert store.read_bytes() == original
    [entry] = session.memory.list()
    assert MARKER in entry.content
    actors = {record.actor for record in session.memory.log("project")}
    assert actors <= {"user", "tamper_revert"}, actors
    assert (
        not (Path("/tmp") / "stolen.json").exists()
        or MARKER not in (Path("/tmp") / "stolen.json").read_text()
    )
