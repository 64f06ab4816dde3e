"""Tool calls written as text: the formats open models use, and what never becomes a call."""

from __future__ import annotations

import json

import pytest

from invincat_server.runtime.text_tool_calls import (
    MAX_TEXT_CHARS,
    TextToolCalls,
    find_text_tool_calls,
)

READ = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
    "required": ["path"],
}
WRITE = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
    "required": ["path", "content"],
}
TOOLS = {"read_file": READ, "write_file": WRITE, "ls": None}


def found(text: str) -> list[tuple[str, dict, str | None]]:
    return [(c.name, c.args, c.error) for c in find_text_tool_calls(text, TOOLS).calls]


def read(path: str) -> tuple[str, dict, None]:
    return ("read_file", {"path": path}, None)


CALL = {"name": "read_file", "arguments": {"path": "a.py"}}


@pytest.mark.parametrize(
    "text",
    [
        f"```json\n{json.dumps(CALL)}\n```",
        f"Let me look.\n```\n{json.dumps(CALL)}\n```\nThen I will explain.",
        f"```tool_call\n{json.dumps(CALL)}\n```",
        json.dumps(CALL),
        f"I will read it: {json.dumps(CALL)} and then answer.",
        json.dumps([CALL]),
        json.dumps({"name": "read_file", "parameters": {"path": "a.py"}}),
        json.dumps({"name": "read_file", "arguments": json.dumps({"path": "a.py"})}),
        json.dumps({"arguments": {"path": "a.py"}, "name": "read_file"}),
        json.dumps({"type": "function", "function": CALL}),
        json.dumps({"function": "read_file", "parameters": {"path": "a.py"}}),
        json.dumps({"tool": "read_file", "tool_input": {"path": "a.py"}}),
        json.dumps({"action": "read_file", "action_input": {"path": "a.py"}}),
        json.dumps({"tool_call": CALL}),
        f"<tool_call>\n{json.dumps(CALL)}\n</tool_call>",
        f"<tool_call>{json.dumps(CALL)}",  # cut before the closing tag
        # Qwen2.5-Coder 1.5B behind llama-server, seen in bench/real_model.py: the
        # prompt's empty markup echoed before the fenced call.
        f"<tools></tools>\n\n```json\n{json.dumps(CALL, indent=2)}\n```",
        f"<tool_call></tool_call> {json.dumps(CALL)}",
        # Bench run 20: its prompt's tool definitions echoed, then the call in a fence.
        "<tools>\n  <function>\n    <name>read_file</name>\n    <arguments>\n"
        "      <properties><path>a.py</path></properties>\n    </arguments>\n  </function>\n"
        f"</tools>\n\n```json\n{json.dumps(CALL, indent=2)}\n```",
        f"<function_call>{json.dumps(CALL)}</function_call>",
        f"[TOOL_CALLS] {json.dumps([CALL])}",
        '[TOOL_CALLS]read_file[ARGS]{"path": "a.py"}',
        '[TOOL_CALLS]read_file[CALL_ID]a1b2c3d4e[ARGS]{"path": "a.py"}',
        '<|python_tag|>{"name": "read_file", "parameters": {"path": "a.py"}}',
        '<function=read_file>{"path": "a.py"}</function>',
        '<function name="read_file">{"path": "a.py"}</function>',
        # Bench run 22: markup alone in a fence of another language.
        f"Apply it:\n```python\n<tools>\n{json.dumps(CALL)}\n</tools>\n```\nDone.",
        # Bench run 21: the arguments as an attribute, in single quotes or HTML-escaped.
        '<tools>\n  <function name="read_file" arguments=\'{"path": "a.py"}\'/>\n</tools>',
        '<function name="read_file" arguments="{&quot;path&quot;: &quot;a.py&quot;}"/>',
        # Bench run 23: each argument an attribute, typed by the schema.
        '<tools>\n  <function name="read_file" path="a.py"/>\n</tools>',
        "<tool_call>\n<function=read_file>\n<parameter=path>\na.py\n</parameter>\n</function>\n</tool_call>",
    ],
)
def test_each_format_gives_the_call(text: str) -> None:
    assert found(text) == [read("a.py")]


def test_several_calls_in_one_answer_each_count() -> None:
    hermes = "".join(
        f"<tool_call>{json.dumps({'name': 'read_file', 'arguments': {'path': p}})}</tool_call>\n"
        for p in ("a", "b", "c")
    )
    assert found(hermes) == [read("a"), read("b"), read("c")]
    llama = (
        '<|python_tag|>{"name": "read_file", "parameters": {"path": "a"}}; '
        '{"name": "read_file", "parameters": {"path": "b"}}'
    )
    assert found(llama) == [read("a"), read("b")]
    mistral = '[TOOL_CALLS]read_file[ARGS]{"path": "a"}[TOOL_CALLS]ls[ARGS]{}'
    assert found(mistral) == [read("a"), ("ls", {}, None)]
    generic = json.dumps({"tool_calls": [CALL, {"name": "ls", "arguments": {}}]})
    assert found(generic) == [read("a.py"), ("ls", {}, None)]


def test_braces_and_tags_inside_strings_do_not_cut_the_call() -> None:
    content = 'def f():\n    return {"}": "{"}  # </tool_call> ```'
    call = {"name": "write_file", "arguments": {"path": "f.py", "content": content}}
    assert found(f"<tool_call>{json.dumps(call)}</tool_call>") == [
        ("write_file", {"path": "f.py", "content": content}, None)
    ]
    assert found(f"```json\n{json.dumps(call)}\n```") == [
        ("write_file", {"path": "f.py", "content": content}, None)
    ]


def test_a_name_that_is_not_offered_is_text_unless_in_tool_call_markup() -> None:
    example = json.dumps({"name": "delete_everything", "arguments": {}})
    result = find_text_tool_calls(f"For example: {example}", TOOLS)
    assert result.calls == [] and "`delete_everything` is not an offered tool" in result.ignored[0]
    [call] = find_text_tool_calls(f"<tool_call>{example}</tool_call>", TOOLS).calls
    assert call.error is not None and "not an available tool" in call.error
    assert "read_file" in call.error and call.args == {}


def test_arguments_that_do_not_fit_the_schema_are_reported_not_used() -> None:
    [(name, args, error)] = found(json.dumps({"name": "read_file", "arguments": {"path": 3}}))
    assert (name, args) == ("read_file", {}) and error is not None
    assert "path" in error and "not of type 'string'" in error
    [(_, _, missing)] = found(json.dumps({"name": "write_file", "arguments": {"path": "x"}}))
    assert missing is not None and "'content' is a required property" in missing
    [(_, _, not_object)] = found(json.dumps({"name": "read_file", "arguments": [1, 2]}))
    assert not_object is not None and "JSON object" in not_object
    [(_, _, bad_json)] = found(json.dumps({"name": "read_file", "arguments": "{oops"}))
    assert bad_json is not None and "not valid JSON" in bad_json


def test_one_bad_call_costs_that_call_only() -> None:
    text = "\n".join(
        f"<tool_call>{body}</tool_call>"
        for body in (
            json.dumps({"name": "read_file", "arguments": {"path": "a"}}),
            "not json at all",
            json.dumps({"name": "read_file", "arguments": {"path": None}}),
            json.dumps({"name": "nope", "arguments": {}}),
            json.dumps({"name": "read_file", "arguments": {"path": "b"}}),
        )
    )
    result = found(text)
    assert [(n, a) for n, a, e in result if e is None] == [
        ("read_file", {"path": "a"}),
        ("read_file", {"path": "b"}),
    ]
    assert len([e for _, _, e in result if e is not None]) == 2


def test_nul_bytes_and_control_characters() -> None:
    # A NUL in an argument is the tool's to refuse, as for a structured call.
    call = {"name": "read_file", "arguments": {"path": "a\u0000b"}}
    assert found(json.dumps(call)) == [read("a\u0000b")]
    # A raw NUL in the text around the call does not hide it.
    assert found(f"\x00 {json.dumps(CALL)} \x00") == [read("a.py")]
    # A NUL in an unknown name: quoted escaped, and never sent back as a tool name.
    [call_out] = find_text_tool_calls(
        "<tool_call>" + json.dumps({"name": "x\u0000y", "arguments": {}}) + "</tool_call>", TOOLS
    ).calls
    assert call_out.name == "unknown_tool" and "\\x00" in (call_out.error or "")


def test_prose_and_ordinary_json_are_not_calls() -> None:
    for text in (
        "The answer is 42.",
        'Use {"name": "read_file"} as the config key.',  # no arguments: not a call shape
        json.dumps({"path": "a.py", "content": "x"}),
        json.dumps({"result": CALL}),
        "```json\n{not json\n```",
        "",
        "   ",
    ):
        assert found(text) == [], text


def test_quoted_files_and_thinking_are_never_parsed() -> None:
    hermes = f"<tool_call>{json.dumps(CALL)}</tool_call>"
    assert found(f"The file says:\n```text\n{hermes}\n```") == []
    assert found(f"The file says:\n```xml\n{hermes}\n```") == []
    assert found(f"```markdown\n{hermes}\n```") == []
    assert found(f"```python\nPROMPT = '{json.dumps(CALL)}'\n```") == []
    assert found(f"<think>should I? {hermes}</think>No tool needed.") == []
    # A call after the thinking still counts.
    assert found(f"<think>yes</think>{hermes}") == [read("a.py")]


def test_nothing_offered_means_nothing_found() -> None:
    assert find_text_tool_calls(json.dumps(CALL), {}) == TextToolCalls()


def test_huge_or_hostile_text_stays_bounded() -> None:
    assert find_text_tool_calls("x" * (MAX_TEXT_CHARS + 1), TOOLS).calls == []
    # Each decode attempt is bounded in number (no quadratic search over text full of
    # call starts) and the decoder's recursion limit ends deep nesting.
    for hostile in (
        '{"' * 200_000,
        "[" * 200_000,
        '{"a": ' * 100_000,
        "<tool_call>" * 50_000,
        "```json\n" * 50_000,
    ):
        assert found(hostile) == []
    # A call cut short (the output-token cap) that is the whole answer is fed back as
    # broken, in bounded time; nothing runs.
    [(_, args, error)] = found('{"name": "read_file", "arguments": {"path": "' + "a" * 500_000)
    assert args == {} and "Unterminated string" in (error or "")


def test_a_flood_of_calls_is_capped() -> None:
    text = "".join(f"<tool_call>{json.dumps(CALL)}</tool_call>" for _ in range(100))
    result = find_text_tool_calls(text, TOOLS)
    assert len(result.calls) == 32 and result.ignored


def test_deeply_nested_arguments_are_an_error_not_a_crash() -> None:
    deep = '{"name": "read_file", "arguments": {"path": "a", "x": ' + "[" * 50_000 + "]" * 50_000
    # The decoder gives up: nothing runs; the whole answer, it is fed back as broken.
    [(name, args, error)] = found(deep + "}}")
    assert (name, args) == ("read_file", {}) and "nested too deeply" in (error or "")
    assert found(f"Like this: {deep}}}}}") == []  # in prose: text


def test_the_format_is_named() -> None:
    assert find_text_tool_calls(f"<tool_call>{json.dumps(CALL)}</tool_call>", TOOLS).formats == [
        "tool_call"
    ]
    assert find_text_tool_calls(f"```json\n{json.dumps(CALL)}\n```", TOOLS).formats == [
        "fenced json"
    ]


def test_thinking_markup_inside_an_argument_is_kept() -> None:
    call = {"name": "write_file", "arguments": {"path": "p.md", "content": "<think>x</think>"}}
    assert found(f"<tool_call>{json.dumps(call)}</tool_call>") == [
        ("write_file", {"path": "p.md", "content": "<think>x</think>"}, None)
    ]


def test_a_fenced_call_spread_over_lines_with_a_fence_in_an_argument() -> None:
    call = {"name": "write_file", "arguments": {"path": "R.md", "content": "```sh\nls\n```\n"}}
    text = "Here:\n```json\n" + json.dumps(call, indent=2) + "\n```\nDone."
    assert found(text) == [("write_file", call["arguments"], None)]


def test_text_parameters_are_typed_by_the_schema() -> None:
    text = (
        "<tool_call><function=read_file>\n<parameter=path>\n123\n</parameter>\n"
        "<parameter=limit>\n20\n</parameter>\n</function></tool_call>"
    )
    # `path` is a string in the schema (kept as written), `limit` an integer (read as JSON).
    assert found(text) == [("read_file", {"path": "123", "limit": 20}, None)]


@pytest.mark.parametrize(
    "path_schema",
    [
        {"anyOf": [{"type": "string"}, {"type": "null"}]},  # Pydantic's `str | None`
        {"type": ["string", "null"]},
        {"oneOf": [{"type": "null"}, {"anyOf": [{"type": "string", "minLength": 1}]}]},
    ],
)
def test_a_nullable_string_parameter_stays_a_string(path_schema: dict) -> None:
    schema = {
        "type": "object",
        "properties": {"path": path_schema, "limit": {"type": ["integer", "null"]}},
        "required": ["path"],
    }
    text = (
        "<tool_call><function=read_file>\n<parameter=path>\n123\n</parameter>\n"
        "<parameter=limit>\n20\n</parameter>\n</function></tool_call>"
    )
    [call] = find_text_tool_calls(text, {"read_file": schema}).calls
    # `path` may be a string: kept as written (not the number 123), so it validates;
    # `limit` may not: read as JSON.
    assert (call.args, call.error) == ({"path": "123", "limit": 20}, None)
    doc = '<tool_call><function=read_file>\n<parameter=path>\n{"a": 1}\n</parameter>\n'
    [call] = find_text_tool_calls(doc + "</function></tool_call>", {"read_file": schema}).calls
    assert call.args == {"path": '{"a": 1}'}  # JSON-looking text for a string stays text


BROKEN_WRITE = (
    '{\n  "name": "write_file",\n  "arguments": {\n    "path": "calc.py",\n'
    '    "content": """\ndef add(a, b):\n    return a + b\n"""\n  }\n}'
)


@pytest.mark.parametrize(
    "text",
    [
        f"```json\n{BROKEN_WRITE}\n```",
        f"Here it is:\n```\n{BROKEN_WRITE}\n```",
        f"<tool_call>\n{BROKEN_WRITE}\n</tool_call>",
        # bench run 26, beside two write_todos calls that were read
        '<write_file>\n{\n  "path": "calc.py",\n'
        '  "content": """def add(a, b):\n    return a + b\n"""\n}\n</write_file>',
    ],
)
def test_a_triple_quoted_string_is_read_as_the_string_python_makes_of_it(text: str) -> None:
    """Qwen2.5-Coder-1.5B's usual way to write a file's content (bench runs 10-26)."""
    [(name, args, error)] = found(text)
    assert (name, error) == ("write_file", None)
    assert args == {"path": "calc.py", "content": "def add(a, b):\n    return a + b\n"}


def test_a_triple_quoted_string_keeps_its_escapes_quotes_and_later_newlines() -> None:
    text = (
        '{"name": "write_file", "arguments": {"path": "a.py", "content": """\n\nx = "a\\tb"\n"""}}'
    )
    [(_name, args, error)] = found(text)
    assert error is None and args["content"] == '\nx = "a\tb"\n'
    # A backslash before the closing quotes is no Python string: left as written.
    [(_name, args, error)] = found('{"name": "write_file", "arguments": {"content": """x\\"""}}')
    assert args == {} and error is not None and "not valid JSON" in error


@pytest.mark.parametrize(
    "text",
    [
        '```json\n{"name": "read_file", "arguments": {"path": "a.py",}}\n```',  # trailing comma
        '<tool_call>\n{"name": "read_file", "arguments": {"path": "a.py"\n</tool_call>',
    ],
)
def test_a_call_that_names_its_tool_but_is_not_json_is_an_error_to_feed_back(text: str) -> None:
    [(name, args, error)] = found(text)
    assert name == "read_file" and args == {}
    assert error is not None and "not valid JSON" in error and "line " in error
    assert "double quotes" in error


def test_broken_json_that_is_no_call_of_an_offered_tool_stays_text() -> None:
    for text in (
        'E.g.\n```json\n{"name": "delete_all", "arguments": {"x": """y"""}}\n```\nSee?',
        '```json\n{"title": "notes", "body": """x"""}\n```',
        '```python\n{"name": "write_file", "arguments": {"content": """x"""}}\n```',
        'So: {"name": "write_file", "arguments": {"content": "x",}}',  # prose may quote
    ):
        assert found(text) == [], text


@pytest.mark.parametrize(
    "text",
    [
        '```json\n{"name": "worker", "arguments": {"path": "a.py"}}\n```',
        '{"name": "worker", "arguments": {"path": "a.py"}}',
        '\n```\n[{"name": "worker", "arguments": {}}]\n```\n',
        '```json\n{"name": "worker", "arguments": {"x": """y"""}}\n```',
    ],
)
def test_a_call_that_is_the_whole_answer_naming_no_tool_is_fed_back(text: str) -> None:
    # Qwen2.5-Coder-1.5B answered just this, naming a subagent type as its tool.
    [(name, args, error)] = found(text)
    assert (name, args) == ("worker", {})
    assert "not an available tool" in (error or "") and "read_file" in (error or "")


def test_a_call_naming_no_tool_next_to_prose_stays_an_example() -> None:
    for text in (
        'The config looks like:\n```json\n{"name": "worker", "arguments": {}}\n```',
        '```json\n{"name": "worker", "arguments": {}}\n```\nThat is the format.',
        '```json\n{"name": "worker", "arguments": {}}\n{"name": "x", "arguments": {}}\n```',
    ):
        assert found(text) == [], text


def test_several_calls_in_one_tag_are_all_taken() -> None:
    block = (
        '<tools>\n{"name": "read_file", "arguments": {"path": "a.py"}}\n'
        '{"name": "read_file", "arguments": {"path": "b.py"}},\n'
        '{"name": "ls", "arguments": {}}\nand prose after\n</tools>'
    )
    found = find_text_tool_calls(block, {"read_file": None, "ls": None})
    assert [(c.name, c.args) for c in found.calls] == [
        ("read_file", {"path": "a.py"}),
        ("read_file", {"path": "b.py"}),
        ("ls", {}),
    ]


TODOS = {
    "type": "object",
    "properties": {"todos": {"type": "array", "items": {"type": "object"}}},
    "required": ["todos"],
}
TWO = {"type": "object", "properties": {"a": {"type": "array"}, "b": {"type": "string"}}}


def test_one_item_for_the_arguments_is_the_one_item_of_a_tools_one_array_parameter() -> None:
    text = (
        '<tool_call>{"name": "t", "arguments": {"content": "x", "status": "pending"}}</tool_call>'
    )
    [call] = find_text_tool_calls(text, {"t": TODOS}).calls
    assert call.error is None and call.args == {"todos": [{"content": "x", "status": "pending"}]}
    [empty] = find_text_tool_calls(
        '<tool_call>{"name": "t", "arguments": {}}</tool_call>', {"t": TODOS}
    ).calls
    assert empty.error is not None and "required" in empty.error


@pytest.mark.parametrize(
    ("schema", "args", "error"),
    [
        (TODOS, {"todos": [{"content": "x"}]}, None),
        # Two parameters: which one the list was meant for is anybody's guess.
        (TWO, {}, "they must be a JSON object, not list"),
        ({"type": "object", "properties": {"s": {"type": "string"}}}, {}, "not list"),
    ],
)
def test_a_list_for_the_arguments_fills_a_tools_one_array_parameter(
    schema: dict[str, object], args: dict[str, object], error: str | None
) -> None:
    text = '<tool_call>{"name": "t", "arguments": [{"content": "x"}]}</tool_call>'
    [call] = find_text_tool_calls(text, {"t": schema}).calls
    assert call.args == args
    assert (call.error is None) if error is None else (error in str(call.error))


def test_a_tag_named_after_an_offered_tool_holds_its_arguments() -> None:
    text = (
        'Searching.\n<grep>\n{"pattern": "parser", "path": "cli.py"}\n</grep>\n'
        '<b>bold</b> <ls>not json</ls> <rm>{"path": "x"}</rm>'
    )
    found = find_text_tool_calls(text, {"grep": None, "ls": None})
    assert [(c.name, c.args, c.format) for c in found.calls] == [
        ("grep", {"pattern": "parser", "path": "cli.py"}, "tool_tag")
    ]


def test_a_tag_named_after_an_offered_tool_with_its_arguments_as_attributes() -> None:
    """Bench run 27: the fix handed to a subagent so, and the turn ended with nothing."""
    task = {
        "type": "object",
        "properties": {"description": {"type": "string"}, "subagent_type": {"type": "string"}},
        "required": ["description", "subagent_type"],
    }
    limit = {"type": "object", "properties": {"n": {"type": "integer"}}}
    text = (
        "<task description=\"Fix &quot;add&quot; in calc.py\" subagent_type='worker'/>\n"
        '<a href="x">link</a> <rm path="x"/> <ls n="3">'
    )
    found = find_text_tool_calls(text, {"task": task, "ls": limit})
    assert [(c.name, c.args, c.error) for c in found.calls] == [
        ("task", {"description": 'Fix "add" in calc.py', "subagent_type": "worker"}, None),
        ("ls", {"n": 3}, None),  # typed by its schema
    ]
    # Attributes that do not fit the schema: an error to feed back, as for any call.
    [call] = find_text_tool_calls('<task description="x"/>', {"task": task}).calls
    assert call.error is not None and "'subagent_type' is a required property" in call.error


def test_a_tool_tag_is_not_read_when_the_answer_holds_a_named_call() -> None:
    text = '<tool_call>{"name": "ls", "arguments": {}}</tool_call> <grep>{"pattern": "x"}</grep>'
    found = find_text_tool_calls(text, {"grep": None, "ls": None})
    assert [c.name for c in found.calls] == ["ls"]


def test_a_bare_call_followed_by_a_fence_of_no_json_is_a_call() -> None:
    # Qwen2.5-Coder-1.5B (bench run 15): its call, then the result it imagined, quoted.
    text = (
        json.dumps(CALL)
        + "\n```python\n     1\tfrom calc import add\n```\n\n```\nobj['read_file']['result']\n```"
    )
    assert found(text) == [read("a.py")]
    # A fence that holds JSON is still where the call is looked for, prose aside.
    fenced_other = json.dumps(CALL) + '\n```json\n{"name": "ls", "arguments": {}}\n```'
    assert found(fenced_other) == [("ls", {}, None)]


def test_attribute_arguments_that_are_not_json_are_an_error_to_feed_back() -> None:
    # As Qwen2.5-Coder-1.5B wrote it (bench run 15): never run, the model told why.
    [(name, _, error)] = found('<function name="write_file" arguments="calc.py, add(a, b)"/>')
    assert name == "write_file" and error is not None and "not valid JSON" in error


def test_arguments_as_attributes_are_typed_by_the_schema() -> None:
    # As Qwen2.5-Coder-1.5B wrote its fix in bench run 23.
    text = (
        '<tools>\n  <function name="read_file" path="a.py" limit="20"/>\n'
        '  <function name="write_file" path="b.py" content="x = &quot;1&quot;"/>\n</tools>'
    )
    assert found(text) == [
        ("read_file", {"path": "a.py", "limit": 20}, None),
        ("write_file", {"path": "b.py", "content": 'x = "1"'}, None),
    ]


def test_a_triple_quoted_string_indented_with_its_json_is_dedented() -> None:
    """Bench run 30: the whole fixed calc.py written eight spaces in, to line up."""
    text = (
        '{\n  "name": "write_file",\n  "arguments": {\n    "path": "calc.py",\n'
        '    "content": """\n        def add(a, b):\n            return a + b\n        """\n  }\n}'
    )
    [(_name, args, error)] = found(text)
    assert error is None and args["content"] == "def add(a, b):\n    return a + b\n"
