"""The phrase book (runtime/tool_phrases.py): one title, progressive phrase and kind per
tool call for every front end, whatever the model put in the arguments."""

from __future__ import annotations

import pytest

from invincat_server.runtime.tool_phrases import MAX_PHRASE_CHARS, phrase, tool_kind
from invincat_server.runtime.tool_traits import READS_FILES, RUNS_COMMANDS, WRITES_FILES
from tests.memory.credentials import credentials, leaked, straddlers


@pytest.mark.parametrize(
    ("name", "args", "title", "progressive", "kind"),
    [
        ("read_file", {"path": "src/app.py"}, "Read src/app.py", "Reading src/app.py", "read"),
        ("write_file", {"path": "a.txt", "content": "x"}, "Write a.txt", "Writing a.txt", "edit"),
        ("edit_file", {"path": "a.txt"}, "Edit a.txt", "Editing a.txt", "edit"),
        ("ls", {}, "List .", "Listing .", "search"),
        ("ls", {"path": "src"}, "List src", "Listing src", "search"),
        (
            "glob",
            {"pattern": "*.py", "path": "src"},
            "Find files matching `*.py` in src",
            "Finding files matching `*.py` in src",
            "search",
        ),
        ("grep", {"pattern": "TODO"}, "Search for `TODO`", "Searching for `TODO`", "search"),
        (
            "grep",
            {"pattern": "foo", "path": "."},  # the default folder is not said
            "Search for `foo`",
            "Searching for `foo`",
            "search",
        ),
        ("grep", {"pattern": "x", "path": "lib"}, "Search for `x` in lib", None, "search"),
        ("execute", {"command": "pytest -q"}, "Run `pytest -q`", "Running `pytest -q`", "execute"),
        (
            "execute",
            {"command": "touch b", "unsandboxed": True},
            "Run WITHOUT the sandbox: `touch b`",
            "Running WITHOUT the sandbox: `touch b`",
            "execute",
        ),
        # Only a real `true` leaves the sandbox; a string "true" is not one.
        ("execute", {"command": "ls", "unsandboxed": "true"}, "Run `ls`", None, "execute"),
        ("web_fetch", {"url": "https://e.com"}, "Fetch https://e.com", None, "fetch"),
        (
            "task",
            {"description": "look around", "subagent_type": "explorer"},
            "Start explorer subagent: look around",
            "Running explorer subagent: look around",
            "other",
        ),
        (
            "write_todos",
            {"todos": [{}, {}, {}]},
            "Update the todo list (3 items)",
            "Updating the todo list (3 items)",
            "think",
        ),
        ("approve_plan", {"todos": [{}]}, "Propose a plan (1 step)", None, "think"),
        ("ask_user", {"questions": [{}]}, "Ask you a question", "Asking you a question", "other"),
        ("ask_user", {"questions": [{}, {}]}, "Ask you 2 questions", None, "other"),
        ("load_skill", {"name": "deploy"}, "Load skill `deploy`", None, "read"),
        (
            "load_skill",
            {"name": "deploy", "file": "run.sh"},
            "Load skill `deploy`: run.sh",
            None,
            "read",
        ),
        ("search_memory", {"query": "db"}, "Search memory for `db`", None, "search"),
        (
            "remote_task_start",
            {"agent": "ci", "task": "run it"},
            "Start a remote task on ci: run it",
            None,
            "other",
        ),
        ("remote_task_status", {"task_id": "r1"}, "Check remote task r1", None, "other"),
        (
            "remote_task_result",
            {"task_id": "r1"},
            "Get the result of remote task r1",
            None,
            "other",
        ),
        ("remote_task_cancel", {"task_id": "r1"}, "Cancel remote task r1", None, "other"),
        # Tools the book does not know (an MCP server's): the name and the first text.
        (
            "demo__echo",
            {"times": 2, "text": "hi"},
            "demo__echo hi",
            "Calling demo__echo hi",
            "other",
        ),
        ("mcp_tool", {"n": 1}, 'mcp_tool {"n": 1}', None, "other"),
        ("mcp_tool", {}, "mcp_tool", "Calling mcp_tool", "other"),
    ],
)
def test_each_tool_has_its_words(
    name: str, args: dict, title: str, progressive: str | None, kind: str
) -> None:
    words = phrase(name, args)
    assert words.title == title
    if progressive is not None:
        assert words.progressive == progressive
    assert words.kind == kind == tool_kind(name)


@pytest.mark.parametrize(
    ("name", "args", "title"),
    [
        # Wrong types or missing fields say what the tool does without the value.
        ("read_file", {"path": 7}, "Read a file"),
        ("write_file", {}, "Write a file"),
        ("edit_file", {"path": ["a", "b"]}, "Edit a file"),
        ("ls", {"path": None}, "List ."),
        ("glob", {"pattern": {"x": 1}}, "Find files"),
        ("grep", {"path": "src"}, "Search files in src"),
        ("execute", {"command": ""}, "Run a command"),
        ("execute", {"command": "   \n\t"}, "Run a command"),
        ("web_fetch", {"url": 3}, "Fetch a page"),
        ("task", {"description": None}, "Start a subagent"),
        ("write_todos", {"todos": "three"}, "Update the todo list"),
        ("ask_user", {"questions": None}, "Ask you a question"),
        ("load_skill", {}, "Load a skill"),
        ("search_memory", {"query": 1}, "Search memory"),
        ("remote_task_status", {}, "Check remote task"),
        # Arguments that are not an object, a name that is not a string.
        ("read_file", None, "Read a file"),
        ("read_file", ["src/app.py"], "Read a file"),
        ("execute", "pytest -q", "Run a command"),
        (None, {}, "a tool"),
        (42, {"q": "x"}, "a tool x"),
        ("", {}, "a tool"),
    ],
)
def test_a_wrong_or_missing_value_costs_only_that_value(
    name: object, args: object, title: str
) -> None:
    assert phrase(name, args).title == title


def test_control_characters_and_newlines_never_reach_a_phrase() -> None:
    words = phrase("execute", {"command": "echo\x00 one\n  two\x1b[2J\x1b]0;owned\x07\x9b"})
    assert words.title == "Run `echo one two [2J ]0;owned`"
    assert not any(ord(c) < 32 or 127 <= ord(c) < 160 for c in words.progressive)
    assert phrase("mcp\x1b[31m", {}).title == "mcp [31m"


def test_huge_values_are_cut_to_one_short_line() -> None:
    huge = "echo one\n  two " + "x" * 2_000_000
    for name, args in [
        ("execute", {"command": huge}),
        ("grep", {"pattern": huge, "path": huge}),
        ("read_file", {"path": "word " * 500_000}),
        ("x" * 10_000, {"q": huge}),
        ("mcp", {"deep": [[[1] * 100_000]]}),
    ]:
        words = phrase(name, args)
        for text in (words.title, words.progressive):
            assert len(text) <= MAX_PHRASE_CHARS and "\n" not in text
            assert text.endswith("…"), text
    assert phrase("execute", {"command": huge}).title.startswith("Run `echo one two x")


def test_arguments_json_cannot_encode_still_give_a_title() -> None:
    cyclic: dict = {}
    cyclic["self"] = cyclic
    assert phrase("mcp", {"a": cyclic}).title == "mcp"
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    assert phrase("mcp", {"a": deep}).title == "mcp"
    assert phrase("mcp", {"a": object()}).title.startswith('mcp {"a": "<object object')


def test_a_secret_in_an_argument_is_redacted_before_it_is_cut() -> None:
    creds = straddlers(credentials(), 20)
    for cred in creds:
        for name, key in [("execute", "command"), ("read_file", "path"), ("mcp", "token_text")]:
            for prefix in ("", "curl -H 'Authorization: Bearer ", "x" * 50 + " "):
                words = phrase(name, {key: prefix + cred.text + " done"})
                for text in (words.title, words.progressive):
                    assert leaked(text, [cred]) == [], (cred.provider, name, text)
    words = phrase("execute", {"command": "export OPENAI_API_KEY=sk-proj-" + "a1B2" * 12})
    assert words.title.startswith("Run `export OPENAI_API_KEY=[REDACTED:")


def test_the_kinds_agree_with_the_tool_traits() -> None:
    assert {tool_kind(t) for t in WRITES_FILES} == {"edit"}
    assert {tool_kind(t) for t in RUNS_COMMANDS} == {"execute"}
    assert {tool_kind(t) for t in READS_FILES} <= {"read", "search"}
    assert tool_kind("some_mcp_tool") == "other" and tool_kind(None) == "other"


def test_an_unknown_tools_argument_is_redacted_beside_its_name() -> None:
    # Alone `hunter2` is no secret to the rules; named `api_key` it is.
    assert phrase("mcp", {"api_key": "hunter2"}).title == "mcp api_key: [REDACTED:credential]"
    assert phrase("mcp", {"text": "hunter2"}).title == "mcp hunter2"


def test_a_call_is_worded_once_by_the_core_and_front_ends_read_its_words() -> None:
    from pathlib import Path

    from invincat_server.runtime.events import ApprovalRequested, ToolCall

    call = ToolCall(id="c1", name="execute", args={"command": "pytest -q"})
    assert call.words == phrase("execute", {"command": "pytest -q"})
    assert call.words is call.words  # worded when the event was made, not per reader
    assert "words" not in call.to_json_dict() and call.summary == call.words.title
    asked = ApprovalRequested(
        approval_id="a1", thread_id="t", tool_name="write_file", args={"path": "a.txt"}
    )
    edited = asked.model_copy(update={"args": {"path": "b.txt"}})  # runtime/edited_call.py
    assert (asked.words.title, edited.words.title) == ("Write a.txt", "Write b.txt")
    assert "words" not in asked.to_json_dict()

    package = Path(__file__).resolve().parents[2] / "invincat_server"
    rewording = [
        str(path.relative_to(package))
        for front_end in ("terminal", "lsp", "acp", "warm")
        for path in (package / front_end).rglob("*.py")
        if "import phrase" in (text := path.read_text()) or " phrase(" in text
    ]
    assert rewording == []
