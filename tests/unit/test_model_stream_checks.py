"""The model client refuses answers it cannot trust to be whole (real ChatOpenAI against the
fake server): a stream that ends without a finish_reason, tool arguments that are not an
object. Turn-level behaviour (error event, exit 1) is in tests/terminal/test_faults.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from invincat_server.runtime.config import Settings
from invincat_server.runtime.errors import IncompleteResponseError, ModelOutputError
from invincat_server.runtime.models import build_chat_model
from invincat_server.testing.fake_openai import FakeOpenAIServer


def model_for(server: FakeOpenAIServer, tmp_path: Path):  # type: ignore[no-untyped-def]
    settings = Settings(
        home=tmp_path,
        model="fake-model",
        base_url=server.base_url,
        api_key="test",
        request_timeout=60,
        max_retries=0,
    )
    return build_chat_model(settings)


async def test_a_stream_without_finish_reason_is_refused(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_openai.add_steps([{"fault": "truncate", "content": "half of an answer", "chunk_size": 4}])
    with pytest.raises(IncompleteResponseError, match="without a finish_reason"):
        await model_for(fake_openai, tmp_path).ainvoke("hi")


async def test_a_whole_stream_is_accepted(fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    fake_openai.add_steps([{"content": "a whole answer", "chunk_size": 4}])
    assert (await model_for(fake_openai, tmp_path).ainvoke("hi")).content == "a whole answer"


@pytest.mark.parametrize(
    ("arguments", "kind"),
    [(["a.txt", "x"], "an array"), ("a.txt", "a string"), (3, "a number"), (None, "null")],
)
async def test_tool_arguments_must_be_a_json_object(
    fake_openai: FakeOpenAIServer, tmp_path: Path, arguments: object, kind: str
) -> None:
    fake_openai.add_steps([{"tool_calls": [{"name": "write_file", "arguments": arguments}]}])
    with pytest.raises(ModelOutputError) as caught:
        await model_for(fake_openai, tmp_path).ainvoke("hi")
    message = str(caught.value)
    assert f"not a JSON object (got {kind})" in message and "not valid JSON" not in message


async def test_arguments_cut_by_the_output_token_cap_say_which_setting_to_raise(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    cut = '{"path": "big.txt", "content": "lines and lin'
    fake_openai.add_steps(
        [{"tool_calls": [{"name": "write_file", "arguments_raw": cut}], "finish_reason": "length"}]
    )
    with pytest.raises(ModelOutputError) as caught:
        await model_for(fake_openai, tmp_path).ainvoke("hi")
    assert "malformed arguments for tool `write_file`" in str(caught.value)
    assert "output-token cap (max_output_tokens, INVINCAT_MAX_OUTPUT_TOKENS)" in str(caught.value)
