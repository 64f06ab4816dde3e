"""A session over a store with one bad entry: every turn injects the valid entries, the
cleanup after a turn refuses to rewrite the store, and the next turn says why once."""

from __future__ import annotations

from pathlib import Path

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.sessions import SessionFactory, run_turn

from .bad_stores import GOOD_PROJECT, GOOD_USER, INVALID, write_stores


async def test_turns_go_on_with_the_valid_entries_and_the_refusal_is_told_once(
    fake_openai: FakeOpenAIServer,
    make_session: SessionFactory,
    invincat_home: Path,
    workspace: Path,
) -> None:
    stores = write_stores(invincat_home, workspace, INVALID["cite_number"])
    before = stores[1].read_bytes()
    fake_openai.add_steps([{"content": "One."}, {"content": "Two."}, {"content": "Three."}])
    session = await make_session()

    thread, first = await run_turn(session, "first", follow=True)
    _, second = await run_turn(session, "second", thread, follow=True)
    _, third = await run_turn(session, "third", thread, follow=True)

    for request in fake_openai.chat_requests():
        system = request["messages"][0]["content"]
        assert all(f"- [Testing] {c}" in system for c in (GOOD_USER, *GOOD_PROJECT))
    told = [e for e in [*first, *second, *third] if e.type == "error" and "items[1]" in e.message]
    assert len(told) == 1, told
    assert "nothing new is saved to project memory" in told[0].message
    assert stores[1].read_bytes() == before
    assert not list(stores[1].parent.glob("*.corrupt-*"))
