"""Token estimates without tokenizer downloads (tiktoken fetches files at run time)."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import AnyMessage
from langchain_core.messages.utils import count_tokens_approximately


def estimate_tokens(messages: Sequence[AnyMessage], system_prompt: str = "") -> int:
    extra = len(system_prompt) // 4 if system_prompt else 0
    return int(count_tokens_approximately(list(messages))) + extra
