"""Scripted fake OpenAI-compatible HTTP server for tests (see docs/fake-openai.md).

server = FakeOpenAIServer([{"content": "Hello"}]).start_in_thread()
ChatOpenAI(model="fake-model", base_url=server.base_url, api_key="test")
"""

from __future__ import annotations

from .completions import EXHAUSTED_CONTENT
from .recording import RecordedRequest
from .scenario import ScenarioError, Step, load_script, validate_step
from .server import FakeOpenAIServer

__all__ = [
    "EXHAUSTED_CONTENT",
    "FakeOpenAIServer",
    "RecordedRequest",
    "ScenarioError",
    "Step",
    "load_script",
    "validate_step",
]
