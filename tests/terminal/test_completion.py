"""Completion of slash commands and `@file` paths (pure logic; the pty test types Tab)."""

from __future__ import annotations

from pathlib import Path

from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from invincat_server.terminal.line_editor import ChatCompleter


def _complete(completer: ChatCompleter, text: str) -> list[str]:
    found = completer.get_completions(Document(text), CompleteEvent(completion_requested=True))
    return [c.text for c in found]


def test_slash_commands_complete_only_at_the_start(tmp_path: Path) -> None:
    completer = ChatCompleter(["/help", "/threads", "/thread"], tmp_path)
    assert _complete(completer, "/th") == ["/thread", "/threads"]
    assert _complete(completer, "see /th") == []


def test_at_paths_offer_workspace_files_only(tmp_path: Path) -> None:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "main.py").write_text("")
    (root / ".git").mkdir()
    (root / "node_modules").mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("")
    (root / "link").symlink_to(tmp_path / "outside")
    completer = ChatCompleter([], root)
    assert _complete(completer, "look at @src/m") == ["main.py"]
    assert _complete(completer, "@") == ["src/"]  # no .git, node_modules, nor the link out
    assert _complete(completer, "@../") == []
    assert _complete(completer, "@../outside/") == []
    assert _complete(completer, "@/etc/") == []
    assert _complete(completer, "@link/") == []  # a symlink out of the project


def test_a_name_with_a_space_completes_to_the_quoted_mention(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "my notes.md").write_text("")
    completer = ChatCompleter([], tmp_path)
    found = list(
        completer.get_completions(
            Document("see @docs/my"), CompleteEvent(completion_requested=True)
        )
    )
    assert [(c.text, c.start_position) for c in found] == [('@"docs/my notes.md"', -8)]
