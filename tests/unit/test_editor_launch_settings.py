"""What the shipped editors launch cannot be chosen by the repository they open
(docs/security.md, "Repository content never runs as Invincat's code").

VS Code applies a setting of scope `window`, `resource` or `machine-overridable` from the
workspace's `.vscode/settings.json`; a setting of scope `machine` (or `application`) only
from the user's (or the remote's) settings. A cloned repository that could set the server
command, its arguments or its environment would run its own program, or ours with its
`PYTHONPATH` or `OPENAI_BASE_URL`, the moment the folder is opened.
"""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LAUNCH_SETTINGS = ("invincat.server.command", "invincat.server.args", "invincat.server.env")
USER_ONLY_SCOPES = ("machine", "application")


def test_a_workspace_cannot_set_what_vscode_launches_or_its_environment() -> None:
    manifest = json.loads((ROOT / "editors/vscode/package.json").read_text())
    properties = manifest["contributes"]["configuration"]["properties"]
    for name in LAUNCH_SETTINGS:
        assert properties[name].get("scope") in USER_ONLY_SCOPES, name
    # The e2e harness sets the command where a user-only setting is read (Machine/).
    harness = (ROOT / "editors/vscode/test/e2e/harness.ts").read_text()
    assert '"invincat.server.command"' in harness and '"Machine"' in harness


def test_the_launch_defaults_start_the_console_script() -> None:
    """`invincat --stdio` through the console script, never `python -m ...` (which would
    put the editor's working directory, the project, first on the import path)."""
    manifest = json.loads((ROOT / "editors/vscode/package.json").read_text())
    properties = manifest["contributes"]["configuration"]["properties"]
    assert properties["invincat.server.command"]["default"] == "invincat"
    assert properties["invincat.server.args"]["default"] == ["--stdio"]
    nvim = (ROOT / "editors/nvim/lua/invincat/init.lua").read_text()
    assert 'cmd = { "invincat", "--stdio" },' in nvim
