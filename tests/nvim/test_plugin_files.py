"""The plugin's static parts: the protocol mirror, lazy loading, the help file."""

from __future__ import annotations

import json
import re
import subprocess
from enum import IntEnum
from pathlib import Path

from invincat_server.lsp import protocol
from tests.deadlines import DEADLINE
from tests.nvim.harness import NVIM, PLUGIN

PROTOCOL_LUA = PLUGIN / "lua" / "invincat" / "protocol.lua"


def _lua_constants() -> tuple[dict[str, str], dict[str, int]]:
    text = PROTOCOL_LUA.read_text()
    strings = dict(re.findall(r'^M\.([A-Z_]+) = "([^"]*)"$', text, re.MULTILINE))
    block = text[text.index("M.ErrorCode = {") :]
    block = block[: block.index("}")]
    codes = {name: int(code) for name, code in re.findall(r"([A-Z_]+) = (-?\d+)", block)}
    return strings, codes


def test_protocol_lua_mirrors_the_servers_protocol_module() -> None:
    strings, codes = _lua_constants()
    python = {
        name: value
        for name, value in vars(protocol).items()
        if name.isupper() and isinstance(value, str)
    }
    # Every server name the editor relies on, with the same value, and nothing invented.
    assert {name: strings.get(name) for name in python} == python
    assert set(strings) <= set(python)
    methods = {value for value in strings.values() if value.startswith("invincat/")}
    assert methods >= protocol.REQUESTS | {protocol.EVENT, protocol.MEMORY_DID_CHANGE}
    assert issubclass(protocol.ErrorCode, IntEnum)
    assert {code.name: code.value for code in protocol.ErrorCode} == {
        name: code for name, code in codes.items() if name != "METHOD_NOT_FOUND"
    }


def _nvim(*lua: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    args = [str(NVIM), "--headless", "--clean", "-i", "NONE", "--cmd", f"set rtp^={PLUGIN}"]
    for chunk in lua:
        args += ["-c", f"lua {chunk}"]
    args += ["-c", "qall!"]
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    for name in ("CONFIG", "DATA", "STATE", "CACHE"):
        env[f"XDG_{name}_HOME"] = str(tmp_path / name.lower())
    return subprocess.run(
        args, env=env, capture_output=True, text=True, timeout=DEADLINE, check=False
    )


def test_the_plugin_file_only_defines_the_command_and_loads_nothing(tmp_path: Path) -> None:
    done = _nvim(
        "io.stderr:write(vim.json.encode({"
        " command = vim.api.nvim_get_commands({}).Invincat ~= nil,"
        " loaded = vim.tbl_filter(function(m) return m:match('^invincat') end,"
        " vim.tbl_keys(package.loaded)) }))",
        tmp_path=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stderr) == {"command": True, "loaded": []}


def test_every_module_loads_and_the_help_file_has_valid_tags(tmp_path: Path) -> None:
    (tmp_path / "doc").mkdir()
    (tmp_path / "doc" / "invincat.txt").write_text((PLUGIN / "doc" / "invincat.txt").read_text())
    modules = sorted(p.stem for p in (PLUGIN / "lua" / "invincat").glob("*.lua"))
    requires = " ".join(f"require('invincat.{m}');" for m in modules if m != "init")
    done = _nvim(
        f"require('invincat'); {requires}",
        f"vim.cmd.helptags('{tmp_path / 'doc'}')",
        tmp_path=tmp_path,
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
    tags = (tmp_path / "doc" / "tags").read_text()
    for name in ["invincat.txt", ":Invincat", "invincat-setup", "invincat-health"]:
        assert f"{name}\t" in tags
    lua = (PLUGIN / "lua" / "invincat" / "init.lua").read_text()
    subcommands = re.findall(r"^  (\w+) = function", lua[lua.index("local subcommands") :], re.M)
    for sub in subcommands:
        assert f":Invincat-{sub}\t" in tags, f":Invincat {sub} is not documented"
