"""`invincat chat`: one-shot turns and the interactive REPL over the Session API."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from invincat_server.runtime.config import ConfigError, Settings
from invincat_server.runtime.database import DatabaseUnavailableError
from invincat_server.runtime.errors import SessionError
from invincat_server.runtime.events import (
    ApprovalRequested,
    Event,
    MemoryChanged,
    MemoryUpdating,
    TurnEnd,
    TurnStart,
)
from invincat_server.runtime.memory.errors import MemoryConfigError, MemoryStoreError
from invincat_server.runtime.policy.decisions import Decision
from invincat_server.runtime.policy.workspace import Workspace
from invincat_server.runtime.project import Project, Projects, SessionOptions
from invincat_server.runtime.session import Session
from invincat_server.runtime.turn import Turn
from invincat_server.terminal.approver import Approver, AutoApprover, NoAnswer, PromptApprover
from invincat_server.terminal.render import HumanRenderer, JsonRenderer
from invincat_server.terminal.retry_watch import RetryState, RetryWatch, retry_notice
from invincat_server.terminal.rules_cli import repl_rules
from invincat_server.terminal.stdin import Interrupted, LineReader, PlainPrompter
from invincat_server.terminal.type_ahead import QuietTerminal, quiet_terminal

if TYPE_CHECKING:
    # rich and prompt_toolkit (~0.25 s to import) serve only a person at a terminal: they
    # are loaded when the REPL runs there (rich also for a one-shot chat's status line on a
    # terminal's stderr), never for piped or --json runs.
    from invincat_server.terminal.line_editor import LineEditor
    from invincat_server.terminal.rich_render import RichRenderer
    from invincat_server.terminal.status_line import StatusLine

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
REPL_HELP = """Commands:
  /help            this help
  /new             start a new thread
  /threads         list saved threads (* marks the current one)
  /thread ID       switch to a saved thread
  /offload         move older messages of this thread out of the model's context
  /rewind          undo turns: pick one, see the diff, restore code, conversation or both
  /memory          list long-term memory entries (user and project)
  /skills          list the skills the agent can load
  /rules           list the 'always' approval rules (this session's, this workspace's)
  /rules revoke ID take one back: matching calls ask again
  /plan PROMPT     plan first: a read-only planner proposes steps for you to approve
  /expand [N]      the full output of tool result N (default: the latest)
  /exit, /quit     leave (Ctrl-D works too)
Ctrl-C cancels the running turn (at an approval prompt too: nothing is approved);
at an empty prompt it leaves (in a terminal: press it twice; on typed text it clears it).
In a terminal: Up for history, Tab completes /commands and @files, Esc-Enter adds a newline."""
NOT_YET: set[str] = set()
SLASH_COMMANDS = (
    *("/help", "/new", "/threads", "/thread", "/offload", "/memory", "/skills", "/plan"),
    *("/expand", "/rules", "/rewind", "/exit", "/quit"),
)


@dataclass
class ChatOptions:
    prompt: str | None
    yes: bool
    json: bool
    thread: str | None
    resume: bool
    cwd: str | None
    model: str | None
    plan: bool = False
    trust_project: bool = False


class Pending(Exception):
    """An approval was left pending because input ended."""


class ChatApp:
    def __init__(self, settings: Settings, options: ChatOptions) -> None:
        self.settings = settings.with_model(options.model)
        self.options = options
        self.retries: RetryWatch | None = None
        self.renderer: HumanRenderer | JsonRenderer | RichRenderer = (
            JsonRenderer() if options.json else HumanRenderer()
        )
        self.rich: RichRenderer | None = None
        self.status: StatusLine | None = None
        if self._interactive_terminal(sys.stdout) and not os.environ.get("NO_COLOR"):
            # Colour and live status only for a person at a terminal that wants colour.
            from invincat_server.terminal.rich_render import RichRenderer

            self.retries = RetryWatch()  # retries are only logged by the client
            self.renderer = self.rich = RichRenderer(retries=self.retries)
        else:
            # Elsewhere the first retry of a turn is one line on stderr (status_line.py
            # draws it above the live line of a one-shot chat at a terminal).
            self.retries = RetryWatch(on_retry=self._on_retry)
            if self._status_terminal():
                from invincat_server.terminal.status_line import StatusLine

                self.status = StatusLine(sys.stderr, self.retries)
                self.renderer = HumanRenderer(status=self.status)
        self.session: Session | None = None
        self.working_dir = Path(".")
        """Where `--cwd` points (resolved when the run starts)."""
        self.current: Turn | None = None
        self.following: Turn | None = None
        self.interrupted = False
        self._printing: set[asyncio.Future[None]] = set()
        self.quiet: QuietTerminal | None = None

    def _interactive_terminal(self, stream: TextIO) -> bool:
        """The REPL at a terminal. One-shot runs, pipes and `--json` stay plain and stable
        for scripts."""
        return not self.options.json and self.options.prompt is None and stream.isatty()

    def _status_terminal(self) -> bool:
        """A one-shot chat with a person watching stderr: the live status line goes there
        (stdout keeps the plain answer, for `> file` too)."""
        return (
            self.options.prompt is not None
            and not self.options.json
            and sys.stderr.isatty()
            and os.environ.get("TERM") != "dumb"
        )

    def _on_retry(self, state: RetryState) -> None:
        if state.count != 1:
            return  # the first retry says it; later ones show in the status line
        where = self.settings.base_url or "the default OpenAI endpoint"
        text = "invincat: " + retry_notice(state, where, self.settings.request_timeout)
        if self.status is not None:
            self.status.print_above(text)
        else:
            self._err(text.removeprefix("invincat: "))

    def _err(self, text: str) -> None:
        sys.stderr.write(f"invincat: {text}\n")
        sys.stderr.flush()

    async def run(self) -> int:
        typed = ""
        if self._interactive_terminal(sys.stdout) and sys.stdin.isatty():
            # At once, before the slow part: from here keys typed ahead are not echoed and
            # keep their Enters (type_ahead.py).
            self.quiet = quiet_terminal(sys.stdin.fileno())
            typed = self.quiet.enter() if self.quiet is not None else ""
        try:
            return await self._run(typed)
        finally:
            if self.quiet is not None:
                self.quiet.restore()

    async def _run(self, typed: str) -> int:
        cwd = Path(self.options.cwd or ".").expanduser()
        if not cwd.is_dir():
            self._err(f"--cwd {cwd} is not a directory.")
            return EXIT_USAGE
        self.working_dir = cwd.resolve()
        # The core Project, as every front end opens it (runtime/project/).
        projects = Projects(self.settings)
        project = projects.open(cwd)
        try:
            return await self._run_project(project, typed)
        finally:
            await projects.release(project)

    async def _run_project(self, project: Project, typed: str) -> int:
        workspace = Workspace(project.root)
        if self.rich is not None:
            self.rich.root = workspace.root
        try:
            self.session = await project.session(
                SessionOptions(
                    auto_approve=self.options.yes,
                    # --yes approves tool calls, never project MCP configs: only this flag
                    # does.
                    # working_dir: AGENTS.md is read from the root down to it.
                    options={
                        "trust_project": self.options.trust_project,
                        "working_dir": str(self.working_dir),
                    },
                )
            )
        except (ConfigError, MemoryConfigError) as exc:  # [memory] options are config too
            self._err(str(exc))
            return EXIT_USAGE
        except (DatabaseUnavailableError, MemoryStoreError) as exc:
            # The database named redacted, or memory that cannot be opened (the memory
            # database's tables missing for a role that may not create them): its own
            # words say what to do; no traceback.
            self._err(str(exc))
            return EXIT_FAILED
        for notice in await asyncio.to_thread(project.notices):
            self._err(notice)  # stderr in both modes: --json stdout stays events only
        self.reader = self._input(workspace)
        if typed and not isinstance(self.reader, PlainPrompter):
            self.reader.type_ahead(typed)
        self.approver: Approver = (
            AutoApprover()
            if self.options.yes
            else PromptApprover(self.renderer, self.reader, revise=self.session.edited_request)
        )
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGINT, self._on_sigint)
        if self.quiet is not None:
            loop.add_signal_handler(signal.SIGTSTP, self.quiet.suspend)
        if self.retries is not None:
            self.retries.install()
        try:
            thread_id = await self._pick_thread()
            if thread_id is False:
                return EXIT_USAGE
            return await self._main((thread_id or None) if isinstance(thread_id, str) else None)
        except Pending as exc:
            self._err(str(exc))
            return EXIT_FAILED
        finally:
            loop.remove_signal_handler(signal.SIGINT)
            loop.remove_signal_handler(signal.SIGTSTP)
            if self.retries is not None:
                self.retries.uninstall()

    def _input(self, workspace: Workspace) -> PlainPrompter | LineEditor:
        """prompt_toolkit when a person types at a terminal; plain lines for pipes, scripts
        and `--json`, whose input and output stay exactly as they were."""
        if not (self._interactive_terminal(sys.stdout) and sys.stdin.isatty()):
            return PlainPrompter(LineReader(), self.renderer.prompts)
        from invincat_server.terminal.line_editor import ChatCompleter, LineEditor, history_path

        return LineEditor(
            history_path(self.settings.home, workspace.root),
            ChatCompleter(SLASH_COMMANDS, workspace.root),
        )

    async def _pick_thread(self) -> str | bool | None:
        assert self.session is not None
        if self.options.thread:
            known = {t.thread_id for t in await self.session.threads()}
            if self.options.thread not in known:
                self._err(f"unknown thread {self.options.thread!r}; see `invincat threads list`.")
                return False
            return self.options.thread
        if self.options.resume:
            threads = await self.session.threads(all_workspaces=False)
            if not threads:
                self._err(
                    "no saved thread in this workspace to resume; start one without --resume."
                )
                return False
            return threads[0].thread_id
        return None

    async def _main(self, thread_id: str | None) -> int:
        assert self.session is not None
        status = EXIT_OK
        if thread_id:
            status = await self._finish_pending(thread_id)
        if self.options.prompt is not None:
            if status != EXIT_OK:
                return status
            mode = "plan" if self.options.plan else "agent"
            return await self._one_turn(self.options.prompt, thread_id, mode)
        self.session.add_listener(self._post_turn_listener)
        if self.options.thread and not sys.stdin.isatty() and status != EXIT_OK:
            return status
        return await self._repl(thread_id)

    async def _finish_pending(self, thread_id: str) -> int:
        """Finish the turn an earlier process left waiting for approvals: it is resumed as
        a turn of its own that asks them again (`turn_start`, then `approval_requested`,
        then the decision is read like any other)."""
        assert self.session is not None
        try:
            turn = await self.session.reopen_pending(thread_id)
        except SessionError as exc:
            self._err(str(exc))
            return EXIT_FAILED
        if turn is None:
            return EXIT_OK
        self.renderer.note("Resuming the turn an earlier session left waiting for approval.")
        return await self._drive(turn, follow=self.options.prompt is not None)

    async def _decide(self, request: ApprovalRequested) -> Decision:
        assert self.session is not None
        self.renderer.pause()
        self._discard_type_ahead()
        try:
            return await self.approver.decide(request)
        except NoAnswer:
            raise Pending(
                f"input ended; approval {request.approval_id} is still pending. Resume with "
                f"`invincat chat --thread {request.thread_id}`."
            ) from None

    def _answered_already(self, request: ApprovalRequested) -> None:
        """`request` was answered before its turn came (a 'reject always' of its batch
        covered it, or another front end answered): no prompt; its `approval_resolved`
        follows."""
        assert self.session is not None
        if self.session.policy.denied(request) is not None:
            self.renderer.note("rejected: you rejected such calls for this session")
        else:
            self.renderer.note(f"approval {request.approval_id} was already answered")

    def _discard_type_ahead(self) -> None:
        """Keys typed before an approval question was shown never answer it: a line meant
        as the next prompt (or a stray `y`) must not decide what runs (docs/security.md)."""
        dropped = self.reader.discard_type_ahead()
        if self.quiet is not None:
            dropped += self.quiet.discard()
        if dropped:
            self.renderer.note(
                "(what was typed before this question was dropped: only keys typed now answer it)"
            )

    async def _decide_while_running(
        self, turn: Turn, request: ApprovalRequested
    ) -> Decision | None:
        """Ask for `request` while `turn` still runs. If the turn ends first (Ctrl-C cancels
        it), the prompt is dropped and None returned: the approval was closed as cancelled
        with the turn, so the call never runs — a cancel never approves anything. The line
        reader keeps its place, so the next line typed goes to the next prompt."""
        assert turn.task is not None
        asking = asyncio.ensure_future(self._decide(request))
        try:
            await asyncio.wait({asking, turn.task}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            asking.cancel()
            raise
        if not turn.task.done():
            try:
                return asking.result()  # a decision, or Pending when input ended
            except Interrupted:
                # Ctrl-C typed at a terminal's approval menu: cancel the turn, like the
                # signal does; the approval closes as cancelled, nothing is approved.
                self.renderer.prompts.write("^C\n")
                self.renderer.prompts.flush()
                assert self.session is not None
                self.session.cancel(turn.turn_id)
                with contextlib.suppress(asyncio.CancelledError):
                    await asyncio.wait({turn.task})
                return None
        asking.cancel()
        with contextlib.suppress(asyncio.CancelledError, Pending):
            await asking
        # End the prompt's line (`> ^C`) so what follows starts on a line of its own.
        self.renderer.prompts.write("\n")
        self.renderer.prompts.flush()
        return None

    async def _one_turn(self, prompt: str, thread_id: str | None, mode: str = "agent") -> int:
        assert self.session is not None
        try:
            turn = await self.session.start_turn(prompt, thread_id, mode)
        except SessionError as exc:
            self._err(str(exc))
            return EXIT_USAGE
        return await self._drive(turn, follow=True)

    async def _drive(self, turn: Turn, *, follow: bool = False) -> int:
        """Render a turn. With `follow` (one-shot runs), also wait for the background work
        after `turn_end` (memory extraction) and render its events as post-turn notes."""
        assert self.session is not None
        self.current = turn
        ended = False
        try:
            async for event in turn.events(follow=follow):
                if ended:
                    self.renderer.post_turn(event)
                    continue
                if isinstance(event, TurnStart) and self.retries is not None:
                    self.retries.reset()  # earlier turns' retries are not news
                self.renderer.event(event)
                if isinstance(event, TurnEnd):
                    ended = True
                    self.current = None
                    self.following = turn
                if isinstance(event, ApprovalRequested) and not turn.done:
                    if not await self.session.is_pending(event.approval_id):
                        self._answered_already(event)
                        continue
                    decision = await self._decide_while_running(turn, event)
                    if decision is None:
                        continue  # the turn ended at the prompt; its turn_end follows
                    result = await self.session.resolve(event.approval_id, decision)
                    if not result.resolved:
                        self.renderer.note(f"not resolved: {result.reason}")
        finally:
            self.current = None
            self.following = None
        return {"completed": EXIT_OK, "failed": EXIT_FAILED, "cancelled": EXIT_INTERRUPTED}[
            turn.status or "failed"
        ]

    def _post_turn_listener(self, turn: Turn, event: Event) -> None:
        # In the REPL, memory work of a finished turn reports while the user types.
        if turn.done and isinstance(event, MemoryUpdating | MemoryChanged):
            if self.reader.busy:
                # A prompt is on screen: print above it, never into the line being typed.
                task = asyncio.ensure_future(
                    self.reader.print_above(lambda: self.renderer.post_turn(event))
                )
                self._printing.add(task)  # kept until done: the loop holds tasks weakly
                task.add_done_callback(self._printing.discard)
            else:
                self.renderer.post_turn(event)

    def _on_sigint(self) -> None:
        if self.current is not None and self.session is not None:
            self.session.cancel(self.current.turn_id)
        elif self.following is not None:
            for task in self.following.followups:
                task.cancel()  # stop waiting for memory work; the answer is already shown
        else:
            self.interrupted = True
            for task in asyncio.all_tasks():
                if task.get_name() == "invincat-repl":
                    task.cancel()

    async def _repl(self, thread_id: str | None) -> int:
        task = asyncio.current_task()
        if task is not None:
            task.set_name("invincat-repl")
        try:
            return await self._repl_loop(thread_id)
        except asyncio.CancelledError:
            return EXIT_INTERRUPTED if self.interrupted else EXIT_OK

    async def _read_chat(self) -> str | None:
        """The next chat input; None to leave (Ctrl-D, end of input, Ctrl-C twice)."""
        self.renderer.pause()
        if isinstance(self.reader, PlainPrompter):
            return await self.reader.chat("\n› ")
        self.renderer.prompts.write("\n")
        self.renderer.prompts.flush()
        warned = False
        while True:
            try:
                return await self.reader.chat("› ")
            except Interrupted:
                if warned:
                    return None
                warned = True
                self.renderer.note("(Ctrl-C again or Ctrl-D to leave; /help for commands)")
            finally:
                # Belt and braces: whatever a prompt did to signal handlers, Ctrl-C during
                # the next turn must reach `_on_sigint` and cancel it.
                loop = asyncio.get_running_loop()
                loop.add_signal_handler(signal.SIGINT, self._on_sigint)

    async def _repl_loop(self, thread_id: str | None) -> int:
        assert self.session is not None
        self.renderer.note("Invincat chat — /help for commands, Ctrl-D to leave.")
        while True:
            line = await self._read_chat()
            if line is None:
                return EXIT_OK
            line = line.strip()
            if not line:
                continue
            if line.startswith("/"):
                command, _, arg = line.partition(" ")
                if command in ("/exit", "/quit"):
                    return EXIT_OK
                thread_id = await self._slash_command(command, arg.strip(), thread_id)
                continue
            thread_id = await self._run_prompt(line, thread_id)

    async def _run_prompt(
        self, prompt: str, thread_id: str | None, mode: str = "agent"
    ) -> str | None:
        """Run one turn to its end; returns the thread the REPL continues on."""
        assert self.session is not None
        try:
            turn = await self.session.start_turn(prompt, thread_id, mode)
        except SessionError as exc:
            self.renderer.note(str(exc))
            return thread_id
        await self._drive(turn)
        return turn.thread_id

    async def _slash_command(self, command: str, arg: str, thread_id: str | None) -> str | None:
        """Run one REPL command (not /exit); returns the thread the REPL continues on."""
        assert self.session is not None
        if command == "/new":
            self.renderer.note("New thread.")
            return None
        if command == "/thread":
            return await self._switch_thread(arg, thread_id)
        if command == "/threads":
            await self._list_threads(thread_id)
            return thread_id
        if command == "/plan":
            if not arg:
                self.renderer.note("Usage: /plan WHAT TO DO")
                return thread_id
            return await self._run_prompt(arg, thread_id, "plan")
        if command == "/help":
            self.renderer.note(REPL_HELP)
        elif command == "/offload":
            await self._offload(thread_id)
        elif command == "/rewind":
            from invincat_server.terminal.rewind_repl import repl_rewind

            await repl_rewind(self.session, thread_id, self._ask_fresh, self.renderer.note)
        elif command in NOT_YET:
            self.renderer.note(f"{command} is not available in this version yet.")
        else:
            await self._show(command, arg)
        return thread_id

    async def _ask_fresh(self, prompt: str) -> str | None:
        """One answer typed at the REPL's input to a /command's question that decides
        something (what /rewind restores): as for an approval, only keys typed once the
        question shows answer it."""
        self.renderer.pause()
        self._discard_type_ahead()
        return await self.reader.answer(prompt)

    async def _show(self, command: str, arg: str) -> None:
        """The commands that only show something (or take back a rule)."""
        assert self.session is not None
        if command == "/expand":
            self._expand(arg)
        elif command == "/memory":
            await self._show_memory()
        elif command == "/skills":
            self._show_skills()
        elif command == "/rules":
            for line in repl_rules(self.session.policy, arg):
                self.renderer.note(line)
        else:
            self.renderer.note(f"Unknown command {command}; /help lists them.")

    async def _list_threads(self, current: str | None) -> None:
        """Saved threads, the one this REPL continues on marked `*`."""
        assert self.session is not None
        threads = await self.session.threads()
        if not threads:
            self.renderer.note("No saved threads yet.")
        for info in threads:
            mark = "*" if info.thread_id == current else " "
            self.renderer.note(f"{mark} {info.thread_id}  {info.updated_at}  {info.title}")
        if threads and current is None:
            self.renderer.note("(this session is on a new thread: it is saved with its first turn)")

    def _expand(self, arg: str) -> None:
        if arg and not arg.isdigit():
            self.renderer.note("Usage: /expand [N] (N as shown after a tool result)")
        else:
            self.renderer.expand(int(arg) if arg else None)

    async def _switch_thread(self, wanted: str, thread_id: str | None) -> str | None:
        assert self.session is not None
        if not wanted:
            self.renderer.note("Usage: /thread ID (/threads lists the ids; * marks this one)")
            return thread_id
        known = {t.thread_id for t in await self.session.threads()}
        if wanted not in known:
            self.renderer.note(f"Unknown thread {wanted!r}.")
            return thread_id
        self.renderer.note(f"Switched to {wanted}.")
        await self._finish_pending(wanted)
        return wanted

    async def _show_memory(self) -> None:
        assert self.session is not None
        entries = await asyncio.to_thread(self.session.memory.list)
        if not entries:
            self.renderer.note("No memory entries yet.")
            return
        for entry in entries:
            self.renderer.note(
                f"{entry.id}  {entry.scope:<7}  {entry.tier:<4}  {entry.score:>3}  "
                f"[{entry.section}] {entry.content}"
            )

    def _show_skills(self) -> None:
        assert self.session is not None
        scan = self.session.skills()
        if not scan.skills:
            self.renderer.note(
                "No skills found (looked in $INVINCAT_HOME/skills, "
                ".invincat/skills and .agents/skills)."
            )
        for skill in scan.skills:
            hidden = f" (shadows {len(skill.shadowed)} more)" if skill.shadowed else ""
            self.renderer.note(f"{skill.name}  [{skill.source}]{hidden}  {skill.description}")
        for problem in scan.problems:
            self.renderer.note(problem)

    async def _offload(self, thread_id: str | None) -> None:
        assert self.session is not None
        if thread_id is None:
            self.renderer.note("Nothing to offload yet: this thread has no messages.")
            return
        try:
            report = await self.session.offload(thread_id)
        except SessionError as exc:
            self.renderer.note(str(exc))
            return
        if not report["offloadedMessages"]:
            self.renderer.note("Nothing to offload: only the latest turn is in context.")
            return
        self.renderer.note(
            f"Offloaded {report['offloadedMessages']} messages to {report['file']} "
            f"(context ~{report['tokensBefore']} → ~{report['tokensAfter']} tokens)."
        )


async def run_chat(settings: Settings, options: ChatOptions) -> int:
    return await ChatApp(settings, options).run()
