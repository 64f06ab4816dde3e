"""A project's start-up state (runtime/project/startup.py): starting, then ready or failed
with the message the user is told; the combined phase of several projects."""

from __future__ import annotations

from invincat_server.runtime.config import ConfigError
from invincat_server.runtime.database import DatabaseUnavailableError
from invincat_server.runtime.memory.errors import (
    MemoryConfigError,
    MemoryDatabaseUnavailableError,
)
from invincat_server.runtime.project.startup import (
    COULD_NOT_START,
    Startup,
    combined,
    failure_message,
)


def test_ready_counts_the_opening_and_announces_once() -> None:
    changes: list[str] = []
    startup = Startup(changed=lambda: changes.append(startup.phase))
    assert (startup.phase, startup.message) == ("starting", None)
    startup.begin()
    startup.stack_imported(1.5)
    startup.ready()
    startup.ready()  # no change of phase: not announced again
    assert changes == ["ready"]
    assert startup.stack_import_seconds == 1.5
    assert startup.session_open_seconds is not None and startup.session_open_seconds >= 0
    assert startup.message is None


def test_a_failed_step_is_the_message_of_the_failure() -> None:
    changes: list[str] = []
    startup = Startup(changed=lambda: changes.append(startup.phase))
    startup.step_failed(ConfigError("OPENAI_API_KEY is not set: export OPENAI_API_KEY=<key>"))
    assert startup.phase == "starting" and startup.message is None  # not failed yet
    told = startup.fail()
    assert told == "OPENAI_API_KEY is not set: export OPENAI_API_KEY=<key>"
    assert startup.message == told and changes == ["failed"]
    assert startup.session_open_seconds is None


def test_a_failure_without_a_reason_still_says_so() -> None:
    startup = Startup()
    assert startup.fail() == COULD_NOT_START
    assert startup.phase == "failed"


def test_an_unexpected_error_is_named_with_its_type() -> None:
    assert failure_message(OSError("disk gone")) == "Invincat could not start: OSError: disk gone"
    assert failure_message(ConfigError("bad config")) == "bad config"
    down = "Cannot use the database postgresql://ann:***@db/inv: connection refused"
    assert failure_message(DatabaseUnavailableError(down)) == down
    # The memory backend opening the same database first: told the same way.
    assert failure_message(MemoryDatabaseUnavailableError(down)) == down
    # Memory that cannot be opened says what to do in its own words, too.
    writers = "config.toml: [memory] writers must be a list of at most 1000 names."
    assert failure_message(MemoryConfigError(writers)) == writers


def test_combined_phase_of_several_projects() -> None:
    assert combined([]) == "ready"
    assert combined([], begun=False) == "starting"
    assert combined(["ready", "starting"]) == "starting"
    assert combined(["ready", "failed", "starting"]) == "failed"
    assert combined(["ready", "ready"]) == "ready"
    assert combined(["ready"], begun=False) == "starting"
