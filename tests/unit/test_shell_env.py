"""The environment filter of `execute` commands and its keep_env setting."""

from __future__ import annotations

from pathlib import Path

import pytest

from invincat_server.runtime.config import load_settings
from invincat_server.runtime.shell_env import (
    MAX_NAMES,
    command_environment,
    is_secret_name,
    keep_env_names,
    report_project_keep_env,
)


@pytest.mark.parametrize(
    "name",
    [
        "OPENAI_API_KEY",
        "INVINCAT_LSP_TOKEN",
        "INVINCAT_DATABASE_URL",
        "GITHUB_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "db_password",
        "MYSQL_PWD_PASSWD",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "stripeSecretKey",
        "SSH_KEY_PATH",
    ],
)
def test_secret_names_are_dropped(name: str) -> None:
    assert is_secret_name(name)
    assert command_environment({name: "v", "PATH": "/bin"}) == {"PATH": "/bin"}


@pytest.mark.parametrize("name", ["PATH", "HOME", "LANG", "TERM", "OPENAI_BASE_URL", "PWD"])
def test_ordinary_names_pass(name: str) -> None:
    assert not is_secret_name(name)
    assert command_environment({name: "v"}) == {name: "v"}


def test_kept_names_pass_but_never_invincats_own_credentials() -> None:
    env = {"GITHUB_TOKEN": "g", "OPENAI_API_KEY": "k", "INVINCAT_LSP_TOKEN": "t", "X_KEY": "x"}
    env["INVINCAT_DATABASE_URL"] = "postgresql://u:pw@db/x"
    kept = command_environment(
        env, ["GITHUB_TOKEN", "OPENAI_API_KEY", "INVINCAT_LSP_TOKEN", "INVINCAT_DATABASE_URL"]
    )
    assert kept == {"GITHUB_TOKEN": "g"}


def test_keep_is_by_exact_name() -> None:
    assert command_environment({"github_token": "g"}, ["GITHUB_TOKEN"]) == {}


def _names(env: dict[str, str], table: object) -> tuple[tuple[str, ...], list[str]]:
    warnings: list[str] = []
    return keep_env_names(env, table, warnings.append), warnings


def test_the_table_list_is_read() -> None:
    assert _names({}, {"keep_env": ["A_TOKEN", " B_KEY "]}) == (("A_TOKEN", "B_KEY"), [])
    assert _names({}, None) == ((), [])
    assert _names({}, {}) == ((), [])


def test_the_environment_variable_wins_over_the_file() -> None:
    names, warnings = _names(
        {"INVINCAT_SHELL_KEEP_ENV": "A_TOKEN,,B_KEY"}, {"keep_env": ["C_TOKEN"]}
    )
    assert names == ("A_TOKEN", "B_KEY")
    assert len(warnings) == 1 and "INVINCAT_SHELL_KEEP_ENV" in warnings[0]  # the empty item


@pytest.mark.parametrize("table", ["A_TOKEN", {"keep_env": "A_TOKEN"}, {"keep_env": {"a": 1}}])
def test_a_value_that_is_not_a_list_is_ignored_with_a_warning(table: object) -> None:
    names, warnings = _names({}, table)
    assert names == () and len(warnings) == 1


def test_bad_items_cost_only_themselves() -> None:
    raw = ["GOOD_TOKEN", 7, None, ["X"], "NUL\x00NAME", "A=B", "", "X" * 10_000, "OPENAI_API_KEY"]
    names, warnings = _names({}, {"keep_env": raw})
    assert names == ("GOOD_TOKEN",)
    assert len(warnings) == len(raw) - 1
    assert all(len(w) < 400 for w in warnings)  # a huge value is not echoed whole


def test_a_huge_list_is_cut_with_one_warning() -> None:
    names, warnings = _names({}, {"keep_env": [f"V{i}_TOKEN" for i in range(MAX_NAMES + 50)]})
    assert len(names) == MAX_NAMES and len(warnings) == 1


def test_settings_carry_keep_env_and_its_warnings(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('[shell]\nkeep_env = ["GITHUB_TOKEN", 1]\n')
    settings = load_settings({"INVINCAT_HOME": str(tmp_path)})
    assert settings.shell_keep_env == ("GITHUB_TOKEN",)
    assert len(settings.shell_env_warnings) == 1


def test_a_projects_keep_env_is_reported_once_and_nothing_else(tmp_path: Path) -> None:
    home, root = tmp_path / "home", tmp_path / "project"
    (root / ".invincat").mkdir(parents=True)
    home.mkdir()
    notices: list[str] = []
    report_project_keep_env(root, home, notices.append)
    assert notices == []  # no file
    (root / ".invincat" / "config.toml").write_text('[shell]\nkeep_env = ["A_TOKEN"]\n')
    report_project_keep_env(root, home, notices.append)
    assert len(notices) == 1 and "ignored" in notices[0]
    (root / ".invincat" / "config.toml").write_text("[shell]\nkeep_env = [unclosed\n")
    report_project_keep_env(root, home, notices.append)
    assert len(notices) == 1  # unreadable: the sandbox settings' reader reports it


def test_the_users_own_file_reached_as_the_project_is_not_reported(tmp_path: Path) -> None:
    # Project = $HOME, whose .invincat is $INVINCAT_HOME: that file is the user's.
    home = tmp_path / ".invincat"
    home.mkdir()
    (home / "config.toml").write_text('[shell]\nkeep_env = ["A_TOKEN"]\n')
    notices: list[str] = []
    report_project_keep_env(tmp_path, home, notices.append)
    assert notices == []
