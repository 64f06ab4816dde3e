"""A command group typed alone (`invincat threads`, `memory`, `rules`) shows that group's
help: its subcommands, what each does; not argparse's complaint about an internal name
such as "threads_command"."""

from __future__ import annotations

import pytest

from tests.terminal.cli_process import run_invincat


@pytest.mark.parametrize(
    ("group", "subcommands"),
    [
        ("threads", ("list", "delete", "prune")),
        ("memory", ("list", "show", "apply", "delete", "revert", "verify")),
        ("rules", ("list", "revoke")),
    ],
)
def test_a_group_alone_prints_its_subcommands(
    invincat_env: dict[str, str], group: str, subcommands: tuple[str, ...]
) -> None:
    done = run_invincat([group], invincat_env)
    assert done.code == 2  # a usage error, as `invincat` alone
    assert done.stdout == ""
    assert done.stderr.startswith(f"usage: invincat {group} ")
    assert "_command" not in done.stderr
    assert "required" not in done.stderr
    for name in subcommands:
        assert f"\n    {name} " in done.stderr, done.stderr


def test_a_group_alone_shows_its_help_even_with_a_broken_config(
    invincat_env: dict[str, str],
) -> None:
    # The help does not depend on settings that are only needed to run a subcommand.
    done = run_invincat(["threads"], {**invincat_env, "INVINCAT_REQUEST_TIMEOUT": "not a number"})
    assert done.code == 2
    assert "list " in done.stderr and "prune " in done.stderr, done.stderr


def test_an_unknown_subcommand_still_names_the_choices(invincat_env: dict[str, str]) -> None:
    done = run_invincat(["threads", "bogus"], invincat_env)
    assert done.code == 2
    assert "invalid choice: 'bogus'" in done.stderr
