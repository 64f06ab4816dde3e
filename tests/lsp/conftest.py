"""LSP end-to-end tests: the real `invincat --stdio` against the fake model over HTTP.

Every test runs once with the client capabilities of VS Code and once with Neovim's, and
pytest-lsp's spec checks (the server sending something those capabilities do not allow)
fail the test instead of warning.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.lsp.client import CLIENTS, InvincatClient, start_client, stop_client


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"))


@pytest.fixture(params=CLIENTS)
def editor(request: pytest.FixtureRequest) -> str:
    """Whose client capabilities the test client announces."""
    return str(request.param)


@pytest.fixture
async def lsp(
    invincat_env: dict[str, str], workspace: Path, editor: str
) -> AsyncIterator[InvincatClient]:
    client = await start_client(invincat_env, workspace, editor)
    yield client
    await stop_client(client)
