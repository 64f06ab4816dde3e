"""Settings resolution and the one-line configuration errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from invincat_server.runtime.config import ConfigError, find_project_root, load_settings
from invincat_server.runtime.models import check_model_settings


def test_env_wins_over_config_file(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('model = "from-file"\nbase_url = "http://x/v1"\n')
    env = {"INVINCAT_HOME": str(tmp_path), "INVINCAT_MODEL": "from-env", "OPENAI_API_KEY": "k"}
    settings = load_settings(env)
    assert settings.model == "from-env"
    assert settings.base_url == "http://x/v1"
    assert settings.threads_db == tmp_path / "threads.sqlite"


@pytest.mark.parametrize(
    ("env", "needle"),
    [({"INVINCAT_MODEL": "m"}, "OPENAI_API_KEY"), ({"OPENAI_API_KEY": "k"}, "INVINCAT_MODEL")],
)
def test_missing_model_configuration_names_what_to_set(
    tmp_path: Path, env: dict[str, str], needle: str
) -> None:
    settings = load_settings({"INVINCAT_HOME": str(tmp_path), **env})
    with pytest.raises(ConfigError) as info:
        check_model_settings(settings)
    message = str(info.value)
    assert needle in message and "\n" not in message


def test_broken_config_file_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("model = [unclosed\n")
    with pytest.raises(ConfigError, match=r"config\.toml"):
        load_settings({"INVINCAT_HOME": str(tmp_path)})


def test_project_root_is_the_nearest_git_ancestor(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    (tmp_path / "a" / "package.json").write_text("{}")
    assert find_project_root(deep) == tmp_path.resolve()
    plain = tmp_path.parent / (tmp_path.name + "-plain")
    plain.mkdir()
    assert find_project_root(plain) == plain.resolve()


def test_text_tool_calls_is_auto_unless_turned_off(tmp_path: Path) -> None:
    home = {"INVINCAT_HOME": str(tmp_path)}
    assert load_settings(home).text_tool_calls == "auto"
    (tmp_path / "config.toml").write_text('text_tool_calls = "off"\n')
    assert load_settings(home).text_tool_calls == "off"
    assert load_settings({**home, "INVINCAT_TEXT_TOOL_CALLS": "AUTO"}).text_tool_calls == "auto"


@pytest.mark.parametrize("bad", ["on", "yes", "auto\x00", "maybe"])
def test_a_bad_text_tool_calls_value_is_a_one_line_error(tmp_path: Path, bad: str) -> None:
    with pytest.raises(ConfigError, match="text_tool_calls must be auto or off") as info:
        load_settings({"INVINCAT_HOME": str(tmp_path), "INVINCAT_TEXT_TOOL_CALLS": bad})
    assert "\n" not in str(info.value)


def test_a_text_tool_calls_value_of_the_wrong_type_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("text_tool_calls = 1\n")
    with pytest.raises(ConfigError, match="text_tool_calls"):
        load_settings({"INVINCAT_HOME": str(tmp_path)})
