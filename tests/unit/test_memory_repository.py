"""Memory database namespaces: one repository, one name, whatever the remote's spelling;
no credentials in a name; bad `[memory]` values are one clear error each."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from invincat_server.runtime.memory.backend import load_options, namespaces
from invincat_server.runtime.memory.errors import MemoryConfigError
from invincat_server.runtime.memory.repository import normalise_remote, project_namespace


@pytest.mark.parametrize(
    "url",
    [
        "git@github.com:acme/widgets.git",
        "git@github.com:acme/widgets",
        "https://github.com/acme/widgets",
        "https://github.com/acme/widgets.git/",
        "https://alice:ghp_secretsecret@github.com/acme/widgets.git",
        "ssh://git@github.com:22/acme/widgets.git",
        "ssh://git@GitHub.com/acme/widgets",
        "git://github.com/acme/widgets.git",
    ],
)
def test_every_spelling_of_one_remote_is_one_name(url: str) -> None:
    assert normalise_remote(url) == "github.com/acme/widgets"


def test_local_remotes_and_garbage() -> None:
    assert normalise_remote("/srv/git/widgets.git") == "file/srv/git/widgets"
    assert normalise_remote("file:///srv/git/widgets") == "file/srv/git/widgets"
    for bad in ("", "   ", "https://github.com/", "x\x00y", "https://[::1"):
        assert normalise_remote(bad) is None
    assert normalise_remote("https://h/" + "a" * 5000) is None  # too long to be a name


def test_the_project_falls_back_to_its_path_without_a_remote(tmp_path: Path) -> None:
    assert project_namespace(tmp_path) == f"project:path:{tmp_path.resolve()}"
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    assert project_namespace(tmp_path) == f"project:path:{tmp_path.resolve()}"
    subprocess.run(
        ["git", "-C", str(tmp_path), "remote", "add", "origin", "git@gitlab.com:a/b.git"],
        check=True,
    )
    assert project_namespace(tmp_path) == "project:gitlab.com/a/b"
    assert project_namespace(tmp_path, "acme/widgets") == "project:acme/widgets"


def test_configured_names_win(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(
        '[memory]\nrepository = "acme/widgets"\nuser = "ada"\nwriters = ["Ada", "B@x.org"]\n'
    )
    options = load_options(tmp_path, env={})
    assert options.writers == frozenset({"ada", "b@x.org"})
    assert namespaces(tmp_path, options) == {"user": "user:ada", "project": "project:acme/widgets"}
    assert load_options(tmp_path, env={"INVINCAT_MEMORY_REPOSITORY": "other"}).repository == (
        "other"
    )


@pytest.mark.parametrize(
    "body",
    [
        "repository = 5",
        'repository = ""',
        'repository = "a\\u0000b"',
        f'repository = "{"x" * 5000}"',
        'writers = "ada"',
        "writers = [1, 2]",
        "user = []",
        "memory = 3",
    ],
)
def test_a_bad_value_is_one_clear_error(tmp_path: Path, body: str) -> None:
    text = body if body.startswith("memory") else f"[memory]\n{body}\n"
    (tmp_path / "config.toml").write_text(text)
    with pytest.raises(MemoryConfigError) as err:
        load_options(tmp_path, env={})
    assert str(tmp_path / "config.toml") in str(err.value)


def test_the_user_is_named_by_git_email_before_the_login(tmp_path: Path) -> None:
    from invincat_server.runtime.memory.repository import user_namespace

    assert user_namespace("ada", "ada@example.com") == "user:ada"
    assert user_namespace(None, "ada@example.com") == "user:ada@example.com"
    assert user_namespace(None, None).startswith("user:")
