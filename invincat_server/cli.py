"""`invincat` command line: parses arguments and hands over to a front end.

Kept free of heavy imports so `--help` and argument errors are instant.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from invincat_server import __version__
from invincat_server.import_path import drop_working_directory, relative_entries

if TYPE_CHECKING:
    from invincat_server.runtime.config import Settings

EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, like `seq 1000000 | head -1`
WARM_SERVER_HELP = (
    "One-shot chats and --stdio run in a per-user warm server that keeps the agent stack "
    "imported (started on first use, exits after 10 idle minutes): `invincat server "
    "status` shows it and its workers, `invincat server stop` stops it, INVINCAT_WARM=0 "
    "turns it off (docs/warm-server.md)."
)
STDIO_AT_A_TERMINAL = (
    "invincat: this is the language server for editors (LSP on stdin/stdout): it waits "
    "for an editor's messages, typed text is not a chat. To chat here, run `invincat chat` "
    '(or `invincat chat "PROMPT"`). Ctrl-C leaves.'
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="invincat",
        description="Invincat: AI coding assistant with governed memory.",
        epilog=WARM_SERVER_HELP,
    )
    parser.add_argument("--version", action="version", version=f"invincat {__version__}")
    server = parser.add_argument_group("language server (what editors launch)")
    server.add_argument("--stdio", action="store_true", help="serve LSP over stdin/stdout")
    server.add_argument(
        "--tcp",
        action="store_true",
        help="serve one editor over TCP (with --port); it must send the token written to "
        "the connection-info file as initializationOptions.token in `initialize`",
    )
    server.add_argument("--port", type=int, metavar="N", help="TCP port for --tcp (0: any free)")
    server.add_argument(
        "--host",
        default="127.0.0.1",
        help="TCP host for --tcp (127.0.0.1); other than loopback needs --allow-remote",
    )
    server.add_argument(
        "--allow-remote",
        action="store_true",
        help="let --host be an address other machines can reach (the token travels unencrypted)",
    )
    server.add_argument(
        "--token-file",
        metavar="PATH",
        help="where --tcp writes host, port, token and pid, mode 0600 "
        "(default $INVINCAT_HOME/run/lsp-PID.json); INVINCAT_LSP_TOKEN sets the token",
    )
    server.add_argument(
        "--socket",
        metavar="PATH",
        help="serve one editor on a unix socket at PATH, created with mode 0600",
    )
    server.add_argument(
        "--acp", action="store_true", help="serve the Agent Client Protocol over stdin/stdout"
    )
    sub = parser.add_subparsers(dest="command")

    chat = sub.add_parser("chat", help="terminal chat: one turn with PROMPT, else a REPL")
    chat.add_argument("prompt", nargs="?", help="run one turn with this prompt, then exit")
    chat.add_argument("--yes", action="store_true", help="approve every tool call without asking")
    chat.add_argument("--json", action="store_true", help="print one JSON event per line")
    chat.add_argument("--thread", metavar="ID", help="continue this saved thread")
    chat.add_argument("--resume", action="store_true", help="continue the latest thread here")
    chat.add_argument("--cwd", metavar="DIR", help="work in DIR (default: current directory)")
    chat.add_argument("--model", metavar="NAME", help="model name (overrides INVINCAT_MODEL)")
    chat.add_argument(
        "--plan", action="store_true", help="plan mode: approve a read-only planner's plan first"
    )
    chat.add_argument(
        "--trust-project",
        action="store_true",
        help="trust this project's MCP config (.mcp.json) as it is now and start its servers",
    )
    chat.add_argument(
        "--remote",
        metavar="NAME",
        help="start PROMPT as a background run on the configured LangGraph deployment NAME "
        "and return (docs/remote.md)",
    )
    chat.add_argument("--wait", action="store_true", help="with --remote: wait for the run")

    threads = sub.add_parser("threads", help="saved threads")
    threads_sub = threads.add_subparsers(dest="threads_command", metavar="COMMAND")
    from invincat_server.terminal.threads_cli import add_threads_subcommands

    add_threads_subcommands(threads_sub)

    from invincat_server.terminal.memory_cli import add_memory_parser

    add_memory_parser(sub)

    from invincat_server.terminal.rules_cli import add_rules_parser

    add_rules_parser(sub)

    from invincat_server.terminal.rewind_cli import add_rewind_parser

    add_rewind_parser(sub)

    from invincat_server.terminal.remote_cli import add_remote_parser

    add_remote_parser(sub)

    from invincat_server.warm.manage import add_server_parser

    add_server_parser(sub)
    _help_when_no_subcommand(sub, ("threads", "memory", "rules", "remote"))
    return parser


def _help_when_no_subcommand(sub: argparse._SubParsersAction, groups: tuple[str, ...]) -> None:
    """`invincat threads` alone prints the threads help (exit 2), not argparse's "the
    following arguments are required: threads_command": the groups' subcommands are
    optional to argparse and `_run` checks for them (`group_help` below)."""
    for name in groups:
        group = sub.choices[name]
        group.set_defaults(group_help=group.format_help)


def _check_transport(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """One transport; TCP only on loopback unless the user explicitly allows more."""
    if sum(map(bool, (args.stdio, args.tcp, args.socket))) > 1:
        parser.error("--stdio, --tcp and --socket cannot be combined")
    if not args.tcp and (args.port is not None or args.token_file or args.allow_remote):
        parser.error("--port, --token-file and --allow-remote go with --tcp")
    if not args.tcp:
        return
    if args.port is None:
        parser.error("--tcp needs --port N")
    from invincat_server.lsp.transport import is_loopback

    if not is_loopback(args.host):
        if not args.allow_remote:
            parser.error(
                f"--host {args.host} is reachable from other machines: whoever connects "
                "with the token runs commands as you. Use 127.0.0.1 (or --socket), an SSH "
                "tunnel, or add --allow-remote if you really mean it."
            )
        print(
            f"invincat: warning: serving on {args.host} (--allow-remote): anyone who can "
            "reach it and learns the token controls the agent, and the token and all "
            "traffic travel unencrypted.",
            file=sys.stderr,
        )


def main(argv: list[str] | None = None, *, warm: bool = True) -> int:
    """Run the command line. `warm=False`: never hand `chat` to the warm server (what a
    warm server's worker runs, so it does not hand the command on again)."""
    # Before any lazy import (the stack, the language server): a cold run started in a
    # project must not find that project's files on its import path (import_path.py).
    drop_working_directory()
    if warm:  # the process the user started (a worker's client already said it)
        _warn_about_relative_pythonpath()
    try:
        code = _run(argv, warm)
        sys.stdout.flush()  # inside the try: a closed pipe often shows only at this flush
    except BrokenPipeError:
        return _quiet_broken_pipe()
    return code


def _warn_about_relative_pythonpath() -> None:
    """Said on stderr (stdout may be the LSP channel), on every start while it holds."""
    entries = relative_entries(os.environ.get("PYTHONPATH"))
    if entries:
        shown = ", ".join(repr(entry) for entry in entries)
        print(
            f"invincat: warning: PYTHONPATH has an empty or relative entry ({shown}): "
            "Python imports files of the current directory through it while it starts, "
            "before Invincat can stop it; remove it (e.g. "
            "PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}/opt/lib)",
            file=sys.stderr,
        )


def _stdio_in_warm_server() -> int | None:
    """`invincat --stdio` served by a worker of the warm server (docs/warm-server.md), which
    has the agent stack imported: the first chat of a new editor window does not wait for
    those imports. Never waits for a server to start: with none listening, this process
    serves cold and one starts in the background for the next window. None: serve here."""
    from invincat_server.warm.common import warm_setting

    setting = warm_setting(os.environ)
    if setting is False:
        return None
    from invincat_server.warm.client import run_warm

    return run_warm(["--stdio"], explain=setting is True, wait=False)


def _explain_stdio_at_a_terminal(stdio: bool) -> None:
    """`invincat --stdio` typed at a shell would otherwise wait in silence: an editor never
    gives the language server a terminal, so a terminal on stdin means a person. Said on
    stderr (stdout is the protocol's), then it serves as usual."""
    if not stdio or not os.isatty(0):
        return
    print(STDIO_AT_A_TERMINAL, file=sys.stderr, flush=True)


def _quiet_broken_pipe() -> int:
    """Whoever read our stdout stopped (`invincat threads list | head -1`): exit quietly,
    with the code a process killed by SIGPIPE has, instead of a traceback. Python ignores
    SIGPIPE (so sockets to the model server cannot kill us), hence the exception."""

    # Point stdout at /dev/null so the interpreter's final flush cannot fail again.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return EXIT_BROKEN_PIPE


def _run_chat(
    parser: argparse.ArgumentParser,
    args: argparse.Namespace,
    settings: Settings,
    warm_argv: list[str] | None,
) -> int:
    if args.thread and args.resume:
        parser.error("--thread and --resume cannot be combined")
    if args.plan and not args.prompt:
        parser.error("--plan needs a PROMPT (in the REPL use /plan PROMPT)")
    if warm_argv is not None:
        # One-shot turns and the REPL: a warm worker shows the REPL's prompt in a fraction
        # of a second instead of after the stack's imports (docs/warm-server.md).
        from invincat_server.warm.client import run_warm
        from invincat_server.warm.common import warm_setting

        code = run_warm(warm_argv, explain=warm_setting(os.environ) is True, announce=not args.json)
        if code is not None:
            return code
    import asyncio

    from invincat_server.runtime.bulk_import import bulk_import

    with bulk_import():  # the chat front end and the part of the stack it imports
        from invincat_server.terminal.app import ChatOptions, run_chat

    options = ChatOptions(
        prompt=args.prompt,
        yes=args.yes,
        json=args.json,
        thread=args.thread,
        resume=args.resume,
        cwd=args.cwd,
        model=args.model,
        plan=args.plan,
        trust_project=args.trust_project,
    )
    try:
        return asyncio.run(run_chat(settings, options))
    except KeyboardInterrupt:
        return 130


def _run_remote_chat(
    parser: argparse.ArgumentParser, args: argparse.Namespace, settings: Settings
) -> int:
    """`chat --remote NAME PROMPT`: a background run on a deployment; nothing runs here."""
    if not args.remote:
        parser.error("--wait goes with --remote NAME")
    if not args.prompt:
        parser.error("--remote needs a PROMPT")
    local_only = [
        flag
        for flag, given in (
            ("--yes", args.yes),
            ("--thread", args.thread),
            ("--resume", args.resume),
            ("--model", args.model),
            ("--plan", args.plan),
            ("--trust-project", args.trust_project),
        )
        if given
    ]
    if local_only:
        # --yes above all: approvals of a remote run are given with `invincat remote approve`.
        parser.error(f"{', '.join(local_only)} cannot be combined with --remote")
    from invincat_server.terminal.remote_cli import run_remote_chat

    return run_remote_chat(settings, args)


def _run_bookkeeping(settings: Settings, args: argparse.Namespace) -> int:
    """The commands that need no agent stack: memory, threads, rules, rewind."""
    if args.command == "memory":
        from invincat_server.terminal.memory_cli import run_memory_command

        return run_memory_command(settings, args)
    if args.command == "threads":
        from invincat_server.terminal.threads_cli import run_threads_command

        return run_threads_command(settings, args)
    if args.command == "rewind":  # the code part; the conversation part opens a Session
        from invincat_server.terminal.rewind_cli import run_rewind_command

        return run_rewind_command(settings, args)
    from invincat_server.terminal.rules_cli import run_rules_command

    return run_rules_command(settings, args)


def _run_without_settings(args: argparse.Namespace) -> int | None:
    """What needs no settings (works without OPENAI_API_KEY or with a broken config):
    `invincat server …`, a command group named alone (`invincat threads`), which prints
    that group's help, and `invincat memory merge-driver`. None: the command needs
    settings."""
    if args.command == "server":
        from invincat_server.warm.manage import run_server_command

        return run_server_command(args)
    if hasattr(args, "group_help") and getattr(args, f"{args.command}_command") is None:
        print(args.group_help(), end="", file=sys.stderr)
        return EXIT_USAGE
    if args.command == "memory" and args.memory_command == "merge-driver":
        # What git runs inside a merge: a settings error must not fail every merge.
        from invincat_server.terminal.memory_share_cli import run_merge_driver

        return run_merge_driver(args)
    return None


def _run_launched_often(raw_argv: list[str], warm: bool) -> int | None:
    """The command lines other programs start many times, which skip building the whole
    CLI (its imports and subparsers); None: any other command line."""
    if raw_argv and all(arg == "--stdio" for arg in raw_argv):
        # What editors launch, on every start (~10 ms before the server can answer
        # `initialize`). Also when the flag comes twice: vscode-languageclient appends
        # `--stdio` to the configured arguments for its stdio transport.
        _explain_stdio_at_a_terminal(warm)  # a worker's client said it already
        if warm:
            code = _stdio_in_warm_server()
            if code is not None:
                return code
        from invincat_server.lsp.server import serve

        return serve()
    if raw_argv[:2] == ["memory", "merge-driver"]:
        # What git runs for every merge of the project store (`memory share` registers
        # this spelling): its own small parser; other spellings take the general path.
        from invincat_server.terminal.memory_share_cli import run_merge_driver_argv

        return run_merge_driver_argv(raw_argv[2:])
    return None


def _run(argv: list[str] | None, warm: bool) -> int:
    raw_argv = sys.argv[1:] if argv is None else list(argv)
    early = _run_launched_often(raw_argv, warm)
    if early is not None:
        return early
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.acp:
        if args.stdio or args.tcp or args.socket or args.command:
            parser.error("--acp cannot be combined with --stdio, --tcp, --socket or a command")
        from invincat_server.acp.server import serve as serve_acp

        return serve_acp()
    if args.stdio or args.tcp or args.socket:
        _check_transport(parser, args)
        _explain_stdio_at_a_terminal(args.stdio and warm)
        # Settings errors are the server's to report (window/showMessage), not an exit.
        from pathlib import Path

        from invincat_server.lsp.server import serve

        return serve(
            tcp=args.tcp,
            host=args.host,
            port=args.port,
            socket_path=Path(args.socket) if args.socket else None,
            info_file=Path(args.token_file) if args.token_file else None,
        )
    if args.token_file or args.allow_remote or args.port is not None:
        parser.error("--port, --token-file and --allow-remote go with --tcp")
    early = _run_without_settings(args)
    if early is not None:
        return early
    from invincat_server.runtime.config import ConfigError, load_settings

    try:
        settings = load_settings()
    except ConfigError as exc:
        print(f"invincat: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.command == "chat" and (args.remote or args.wait):
        return _run_remote_chat(parser, args, settings)
    if args.command == "remote":
        from invincat_server.terminal.remote_cli import run_remote_command

        return run_remote_command(settings, args)
    return _run_local(parser, args, settings, raw_argv, warm)


def _run_local(
    parser: argparse.ArgumentParser,
    args: argparse.Namespace,
    settings: Settings,
    raw_argv: list[str],
    warm: bool,
) -> int:
    """A command on this machine's (or `database_url`'s) threads and memory."""
    from invincat_server.runtime.database import DatabaseUnavailableError

    try:
        if args.command == "chat":
            # One-shot chat runs in the warm server unless INVINCAT_WARM=0
            # (docs/warm-server.md).
            from invincat_server.warm.common import warm_setting

            use_warm = warm and warm_setting(os.environ) is not False
            return _run_chat(parser, args, settings, raw_argv if use_warm else None)
        if args.command in ("memory", "threads", "rules", "rewind"):
            return _run_bookkeeping(settings, args)
    except DatabaseUnavailableError as exc:
        # The `database_url` database is down or refuses us: one line naming it redacted
        # (runtime/database.py scrubbed the driver's text), no traceback.
        print(f"invincat: {exc}", file=sys.stderr)
        return EXIT_FAILED
    parser.print_help()
    return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
