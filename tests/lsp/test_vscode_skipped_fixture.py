"""The VS Code memory view's unit tests build the tree from a recorded
`invincat/memory/list` answer over a store with a bad entry
(editors/vscode/test/unit/fixtures/memory-list-invalid.json, read by memorySkipped.test.ts).
This asks the real language server the same question, so the recording stays what the
server answers: the skipped entry's `invalid_entries` item and the valid items around it
(issue #23 item 4). INVINCAT_WRITE_FIXTURE=1 rewrites the recording from the server."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.lsp.client import InvincatClient
from tests.memory.bad_stores import INVALID, write_stores

FIXTURE = Path(__file__).parents[2] / "editors/vscode/test/unit/fixtures/memory-list-invalid.json"
# The fields of an entry the memory view reads to place and label it.
SHOWN_FIELDS = ("id", "scope", "section", "content", "status", "score", "tier")
KINDS = ("cite_nul_byte", "a_string")


def recorded(answer: dict[str, Any]) -> dict[str, Any]:
    items = [{name: item[name] for name in SHOWN_FIELDS} for item in answer["items"]]
    return {"items": items, "invalid_entries": answer["invalid_entries"]}


@pytest.mark.parametrize("kind", KINDS)
async def test_the_vscode_recording_is_what_the_language_server_answers(
    lsp: InvincatClient, invincat_home: Path, workspace: Path, kind: str
) -> None:
    write_stores(invincat_home, workspace, INVALID[kind])
    answer = recorded(await lsp.request("invincat/memory/list", {"includeArchived": True}))
    if os.environ.get("INVINCAT_WRITE_FIXTURE") == "1":
        fixture = json.loads(FIXTURE.read_text()) if FIXTURE.exists() else {}
        fixture[kind] = answer
        FIXTURE.write_text(json.dumps(fixture, indent=2, ensure_ascii=False) + "\n")
    assert json.loads(FIXTURE.read_text())[kind] == answer
