"""The memory model is told when it has nothing to cite (runtime/memory_agent/prompt.py)."""

from __future__ import annotations

from invincat_server.runtime.memory_agent.prompt import NOTHING_TO_CITE, user_message


def _message(**kwargs: object) -> str:
    base: dict[str, object] = {
        "conversation": "User: remember: tabs in Makefiles",
        "snapshot": "(empty)",
        "evidence": [],
        "explicit": True,
        "last_rejection": None,
    }
    return user_message(**{**base, **kwargs})  # type: ignore[arg-type]


def test_without_evidence_the_model_is_told_there_is_nothing_to_cite() -> None:
    assert NOTHING_TO_CITE in _message()


def test_with_evidence_or_stale_entries_it_is_not() -> None:
    evidence = [{"tool": "read_file", "path": "Makefile", "text": "all:\n\tmake"}]
    assert NOTHING_TO_CITE not in _message(evidence=evidence)
    assert NOTHING_TO_CITE not in _message(stale=[{"id": "m1", "citations": []}])
