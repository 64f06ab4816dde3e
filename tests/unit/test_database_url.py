"""The database URL setting: where it may come from, and that its password never shows."""

from __future__ import annotations

from pathlib import Path

import pytest

from invincat_server.runtime.config import ConfigError, load_settings
from invincat_server.runtime.database_url import redacted


def _settings(tmp_path: Path, env: dict[str, str], file_text: str = ""):
    (tmp_path / "config.toml").write_text(file_text)
    return load_settings({"INVINCAT_HOME": str(tmp_path), **env})


def test_unset_means_the_embedded_files(tmp_path: Path) -> None:
    assert _settings(tmp_path, {}).database_url is None


def test_the_environment_may_carry_a_password(tmp_path: Path) -> None:
    url = "postgresql://ann:s3cret@db.example:5432/invincat"
    assert _settings(tmp_path, {"INVINCAT_DATABASE_URL": url}).database_url == url


def test_a_password_in_the_config_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        _settings(tmp_path, {}, 'database_url = "postgresql://ann:s3cret@db/invincat"\n')
    assert "s3cret" not in str(err.value)
    assert "INVINCAT_DATABASE_URL" in str(err.value)


def test_the_config_file_may_name_a_database_without_a_password(tmp_path: Path) -> None:
    text = 'database_url = "postgresql://ann@db/invincat"\n'
    assert _settings(tmp_path, {}, text).database_url == "postgresql://ann@db/invincat"


@pytest.mark.parametrize(
    "raw",
    ["mysql://x/y", "not a url", "postgresql://h:notaport/db", "postgresql://a\x00b@h/db"],
)
def test_bad_urls_are_clear_errors(tmp_path: Path, raw: str) -> None:
    with pytest.raises(ConfigError, match="database_url"):
        _settings(tmp_path, {"INVINCAT_DATABASE_URL": raw})


def test_a_wrong_type_in_the_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="database_url must be a string"):
        _settings(tmp_path, {}, "database_url = 5\n")


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://ann:s3cret@db:5432/inv", "postgresql://ann:***@db:5432/inv"),
        ("postgresql://ann@db/inv", "postgresql://ann@db/inv"),
        ("postgresql://db/inv?password=s3cret", "postgresql://db/inv?***"),
        ("postgresql://:s3cret@db/inv", "postgresql://:***@db/inv"),
    ],
)
def test_redacted_never_shows_the_password(url: str, shown: str) -> None:
    assert redacted(url) == shown
    assert "s3cret" not in redacted(url)
