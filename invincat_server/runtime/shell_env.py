"""The environment `execute` commands run with: the server's own, minus credentials.

An approved `env`, `echo $OPENAI_API_KEY`, or any program a command starts (a test suite,
a cloned repository's build script) would otherwise read the model API key Invincat was
started with, and every other token the user's shell exported. So, as Codex's
`shell_environment_policy` does by default, commands get the environment without

- the variables Invincat itself reads credentials from (`OWN_CREDENTIALS`), always; and
- every variable whose name contains KEY, SECRET, TOKEN, PASSWORD, PASSWD or CREDENTIAL
  (any case), unless the user keeps it by name: `[shell] keep_env` in
  `$INVINCAT_HOME/config.toml` or `INVINCAT_SHELL_KEEP_ENV` (comma-separated).

Only the user may keep variables: a project's `.invincat/config.toml` is the repository
talking, and a cloned repository must not be able to ask for your tokens, so its
`keep_env` is ignored and the session says so once.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

__all__ = [
    "KEEP_ENV_VARIABLE",
    "OWN_CREDENTIALS",
    "command_environment",
    "is_secret_name",
    "keep_env_names",
    "report_project_keep_env",
]

KEEP_ENV_VARIABLE = "INVINCAT_SHELL_KEEP_ENV"
OWN_CREDENTIALS = frozenset({"OPENAI_API_KEY", "INVINCAT_LSP_TOKEN", "INVINCAT_DATABASE_URL"})
"""Read by Invincat as credentials (runtime/config.py, the language server's --tcp token,
the memory database's URL, which may carry its password and would let a command change
memory behind governance): never handed to a command, whatever keep_env says."""
SECRET_NAME = re.compile(r"KEY|SECRET|TOKEN|PASSWORD|PASSWD|CREDENTIAL", re.IGNORECASE)
MAX_NAME = 256  # longer is no variable anyone exports on purpose
MAX_NAMES = 256
MAX_PROJECT_CONFIG_BYTES = 1_000_000
PROJECT_CONFIG = ".invincat/config.toml"


def is_secret_name(name: str) -> bool:
    """A name that says it holds a credential (the default drop list)."""
    return name in OWN_CREDENTIALS or SECRET_NAME.search(name) is not None


def command_environment(env: Mapping[str, str], keep: Iterable[str] = ()) -> dict[str, str]:
    """``env`` without credentials: Invincat's own always, other secret-named variables
    unless named in ``keep``."""
    kept = frozenset(keep) - OWN_CREDENTIALS
    return {name: value for name, value in env.items() if name in kept or not is_secret_name(name)}


def _valid_names(items: Iterable[object], where: str, warn: Callable[[str], None]) -> list[str]:
    """The usable variable names among ``items``; each bad one is reported and skipped."""
    names: list[str] = []
    for index, item in enumerate(items):
        if index >= MAX_NAMES:
            warn(f"{where} lists more than {MAX_NAMES} names; the rest were ignored.")
            break
        shown = repr(item)[:80]
        if not isinstance(item, str):
            warn(f"{where}: {shown} is not a variable name (a string); it was ignored.")
            continue
        name = item.strip()
        if not name or "\x00" in name or "=" in name or len(name) > MAX_NAME:
            warn(f"{where}: {shown} is not a variable name; it was ignored.")
            continue
        if name in OWN_CREDENTIALS:
            warn(
                f"{where}: {name} is Invincat's own credential and never reaches commands; "
                "it was ignored."
            )
            continue
        names.append(name)
    return names


def keep_env_names(
    env: Mapping[str, str], table: object, warn: Callable[[str], None]
) -> tuple[str, ...]:
    """The user's keep_env: `INVINCAT_SHELL_KEEP_ENV` when set, else `keep_env` in the
    user's `[shell]` table (``table``). Bad values cost only themselves."""
    raw_env = env.get(KEEP_ENV_VARIABLE)
    if raw_env:
        return tuple(_valid_names(raw_env.split(","), KEEP_ENV_VARIABLE, warn))
    if table is None:
        return ()
    if not isinstance(table, dict):
        warn("[shell] in config.toml is not a table; it was ignored.")
        return ()
    raw = table.get("keep_env")
    if raw is None:
        return ()
    if not isinstance(raw, list):
        warn(f"[shell] keep_env must be a list of variable names, not {repr(raw)[:80]}; ignored.")
        return ()
    return tuple(_valid_names(raw, "[shell] keep_env", warn))


def report_project_keep_env(root: Path, home: Path, notify: Callable[[str], None]) -> None:
    """Tell the user once when the project's config asks to keep variables: it is ignored."""
    path = root / PROJECT_CONFIG
    # When the project is $HOME its `.invincat/config.toml` is the user's own file.
    if os.path.realpath(path) == os.path.realpath(home / "config.toml"):
        return
    try:
        if not path.is_file():
            return
        with path.open("rb") as fh:
            data = fh.read(MAX_PROJECT_CONFIG_BYTES + 1)
        if len(data) > MAX_PROJECT_CONFIG_BYTES:
            return  # the sandbox settings' reader already says the file was ignored
        table = tomllib.loads(data.decode("utf-8")).get("shell")
    except (OSError, ValueError):  # unreadable: the sandbox settings' reader says so
        return
    if isinstance(table, dict) and "keep_env" in table:
        notify(
            f"[shell] keep_env in the project's {PROJECT_CONFIG} was ignored: a repository "
            "cannot choose which of your secrets its commands see. To pass a variable to "
            f'commands, add it to [shell] keep_env = ["NAME"] in {home / "config.toml"} or '
            f"set {KEEP_ENV_VARIABLE}=NAME."
        )
