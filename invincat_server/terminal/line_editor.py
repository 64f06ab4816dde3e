"""Line input for `invincat chat` in a terminal, on prompt_toolkit.

What it gives over a bare `readline()`: line editing, history kept per project under
$INVINCAT_HOME (never in the project), a paste of several lines as ONE prompt (bracketed
paste), Esc-Enter / Alt-Enter for a newline, completion of slash commands and `@file` paths,
single-keystroke answers at approval menus, and Ctrl-C as a key (not a signal) while typing.

Only used when stdin and stdout are terminals; pipes and `--json` keep `stdin.LineReader`.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from prompt_toolkit import PromptSession
from prompt_toolkit.application import Application, get_app_or_none, run_in_terminal
from prompt_toolkit.application.current import set_app
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import ANSI
from prompt_toolkit.history import FileHistory
from prompt_toolkit.input import create_input
from prompt_toolkit.input.typeahead import get_typeahead, store_typeahead
from prompt_toolkit.input.vt100_parser import Vt100Parser
from prompt_toolkit.key_binding import KeyBindings, KeyPress, KeyPressEvent

from invincat_server.runtime import private_files
from invincat_server.terminal.stdin import Interrupted

__all__ = ["ChatCompleter", "Interrupted", "LineEditor", "history_path"]

# Folders never offered for `@file` completion: big, generated or private.
SKIPPED_DIRS = {".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__", ".invincat"}
MAX_PATH_COMPLETIONS = 200
# Keys that can answer an approval menu in one keystroke (the menu says which apply).
MENU_KEYS = ("y", "n", "e", "s", "w", "r", "d")


def history_path(home: Path, project_root: Path) -> Path:
    """One history file per project, under $INVINCAT_HOME: prompts can hold secrets, so they
    are never written into the project (where they could be committed)."""
    key = hashlib.sha256(str(project_root.resolve()).encode()).hexdigest()[:16]
    return home / "history" / f"{key}.txt"


class ChatCompleter(Completer):
    """Slash commands at the start of the input; `@path` anywhere, for workspace files only.

    Not prompt_toolkit's PathCompleter: it completes `../` and absolute paths, and the
    promise here is that only files inside the project are offered."""

    def __init__(self, commands: Iterable[str], root: Path) -> None:
        self.commands = sorted(commands)
        self.root = root.resolve()

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterator[Completion]:
        before = document.text_before_cursor
        if before.startswith("/") and " " not in before:
            for command in self.commands:
                if command.startswith(before):
                    yield Completion(command, start_position=-len(before))
            return
        word = before.split()[-1] if before and not before[-1].isspace() else ""
        if word.startswith("@"):
            yield from self._paths(word[1:])

    def _paths(self, typed: str) -> Iterator[Completion]:
        folder_part, _, name_part = typed.rpartition("/")
        folder = (self.root / folder_part).resolve()
        # Workspace files only: no absolute paths, no `..` out of the project.
        if typed.startswith("/") or not folder.is_relative_to(self.root) or not folder.is_dir():
            return
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            return
        shown = 0
        for entry in entries:
            if not entry.name.startswith(name_part) or entry.name in SKIPPED_DIRS:
                continue
            if entry.name.startswith(".") and not name_part.startswith("."):
                continue
            if not Path(entry.path).resolve().is_relative_to(self.root):
                continue  # a symlink out of the project
            is_dir = entry.is_dir()
            text = entry.name + ("/" if is_dir else "")
            if any(char.isspace() for char in entry.name):
                # The mention would end at the space: replace the whole `@…` word with the
                # quoted form the core reads, `@"dir/my notes.md"`.
                quoted = f'@"{folder_part + "/" if folder_part else ""}{text}"'
                yield Completion(quoted, start_position=-len(typed) - 1, display=text)
            else:
                yield Completion(text, start_position=-len(name_part), display=text)
            shown += 1
            if shown >= MAX_PATH_COMPLETIONS:
                return


def _bindings(menu: Callable[[], list[str]] | None) -> KeyBindings:
    """Keys of a prompt. With `menu` (answer prompts), Ctrl-C always interrupts and the keys
    `menu()` returns answer with one keystroke."""
    bindings = KeyBindings()

    @bindings.add("c-c", eager=True)
    def _ctrl_c(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        if buffer.text and menu is None:
            buffer.reset()  # Ctrl-C on typed text clears it, like a shell
            return
        event.app.exit(exception=Interrupted())

    @bindings.add("escape", "enter")
    @bindings.add("c-j")  # Ctrl-J too (what many terminals send for Shift-Enter)
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    @bindings.add("c-d")
    def _ctrl_d(event: KeyPressEvent) -> None:
        if not event.current_buffer.text:
            event.app.exit(exception=EOFError())
        else:
            event.current_buffer.delete()

    if menu is None:
        return bindings

    def offered(key: str) -> Condition:
        def check() -> bool:
            app = get_app_or_none()
            return key in menu() and app is not None and not app.current_buffer.text

        return Condition(check)

    for key in MENU_KEYS:

        @bindings.add(key, filter=offered(key))
        def _answer(event: KeyPressEvent) -> None:
            # One keystroke answers a menu; a `{` still starts a typed JSON decision.
            event.current_buffer.text = event.key_sequence[0].key
            event.current_buffer.validate_and_handle()

    return bindings


class LineEditor:
    """The prompt_toolkit prompt used for the chat prompt and for approval answers."""

    def __init__(self, history_file: Path, completer: Completer) -> None:
        # Prompts can hold secrets: the history is readable by its owner only.
        # Created (or tightened) 0600 in a 0700 folder whatever the umask, and not through a
        # link planted under $INVINCAT_HOME (history_path: home/history/<key>.txt).
        flags = os.O_CREAT | os.O_WRONLY | os.O_APPEND
        os.close(private_files.open_file(history_file, flags, root=history_file.parent.parent))
        self._menu: list[str] = []
        self._showing: Application[str] | None = None
        # One input for both sessions, so keys typed ahead are known in one place.
        self._input = create_input(sys.stdin)
        self._chat: PromptSession[str] = PromptSession(
            input=self._input,
            history=FileHistory(str(history_file)),
            completer=completer,
            complete_while_typing=False,  # Tab completes; typing stays undisturbed
            key_bindings=_bindings(None),
            enable_open_in_editor=False,
        )
        # Answers (approval menus, reasons, JSON) are not chat prompts: no shared history.
        self._answers: PromptSession[str] = PromptSession(
            input=self._input,
            key_bindings=_bindings(lambda: self._menu),
        )

    def type_ahead(self, keys: str) -> None:
        """Give the next prompt `keys` (as a terminal sends them) as if typed at it."""
        presses: list[KeyPress] = []
        parser = Vt100Parser(presses.append)
        parser.feed(keys)
        parser.flush()
        store_typeahead(self._input, presses)

    def discard_type_ahead(self) -> int:
        """Drop the keys a prompt read beyond its Enter (kept for the next prompt); returns
        how many. Before an approval: only keys typed at the question answer it."""
        return len(get_typeahead(self._input))

    @property
    def busy(self) -> bool:
        """A prompt is on screen (tracked here: background tasks do not share the prompt's
        context, so prompt_toolkit's `get_app()` would not see it from them)."""
        return self._showing is not None

    async def chat(self, prompt: str) -> str | None:
        """The next chat input (may hold newlines); None at Ctrl-D. Raises Interrupted."""
        return await self._ask(self._chat, prompt)

    async def answer(self, prompt: str, menu_keys: Iterable[str] = ()) -> str | None:
        """An answer line; with `menu_keys`, one of those keys answers at once."""
        self._menu = list(menu_keys)
        try:
            return await self._ask(self._answers, prompt)
        finally:
            self._menu = []

    async def _ask(self, session: PromptSession[str], prompt: str) -> str | None:
        self._showing = session.app
        try:
            # handle_sigint=False: prompt_toolkit would otherwise remove the asyncio SIGINT
            # handler when the prompt ends, and a later Ctrl-C would not cancel the turn.
            return await session.prompt_async(ANSI(prompt), handle_sigint=False)
        except EOFError:
            return None
        finally:
            self._showing = None

    async def print_above(self, write: Callable[[], None]) -> None:
        """Run `write` (printing to the terminal) without landing in the input line: above
        the prompt when one is shown, directly otherwise."""
        app = self._showing
        if app is None:
            write()
            return
        with set_app(app):  # this task did not start the prompt: point it at it
            await run_in_terminal(write)
