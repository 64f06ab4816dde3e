"""Issue 23 item 3 over LSP: an editor's memory requests on a project whose `.invincat` is
a link to a folder elsewhere fail with the path and what to do, and write nothing there."""

from __future__ import annotations

from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from invincat_server.lsp.protocol import ErrorCode
from tests.lsp.client import InvincatClient


async def test_memory_requests_on_a_linked_data_dir_fail_with_the_path(
    lsp: InvincatClient, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / ".invincat").symlink_to(outside)
    op = {
        "op": "create",
        "scope": "project",
        "section": "Testing",
        "content": "Run the tests with pytest -q",
        "confidence": "high",
        "score": 85,
        "score_reason": "test",
    }
    for method, params in (
        ("invincat/memory/list", {}),
        ("invincat/memory/apply", {"scope": "project", "operations": [op]}),
    ):
        with pytest.raises(JsonRpcException) as caught:
            await lsp.request(method, params)
        assert caught.value.code == ErrorCode.MEMORY_UNAVAILABLE, method
        assert "/.invincat is a symbolic link" in caught.value.message, method
    assert list(outside.iterdir()) == []
    # The user scope is unaffected.
    assert (await lsp.request("invincat/memory/list", {"scope": "user"}))["items"] == []
