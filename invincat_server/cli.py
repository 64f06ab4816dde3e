"""`invincat` command line: parses arguments and hands over to a front end.

Kept free of heavy imports so `--help` and argument errors are instant.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from invincat_server import __version__

EXIT_USAGE = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="invincat", description="Invincat: AI coding assistant with governed memory."
    )
    parser.add_argument("--version", action="version", version=f"invincat {__version__}")
    sub = parser.add_subparsers(dest="command")

    chat = sub.add_parser("chat", help="terminal chat: one turn with PROMPT, else a REPL")
    chat.add_argument("prompt", nargs="?", help="run one turn with this prompt, then exit")
    chat.add_argument("--yes", action="store_true", help="approve every tool call without asking")
    chat.add_argument("--json", action="store_true", help="print one JSON event per line")
    chat.add_argument("--thread", metavar="ID", help="continue this saved thread")
    chat.add_argument("--resume", action="store_true", help="continue the latest thread here")
    chat.add_argument("--cwd", metavar="DIR", help="work in DIR (default: current directory)")
    chat.add_argument("--model", metavar="NAME", help="model name (overrides INVINCAT_MODEL)")

    threads = sub.add_parser("threads", help="saved threads")
    threads_sub = threads.add_subparsers(dest="threads_command", required=True)
    threads_list = threads_sub.add_parser("list", help="list saved threads, newest first")
    threads_list.add_argument("--json", action="store_true", help="machine-readable output")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    from invincat_server.runtime.config import ConfigError, load_settings

    try:
        settings = load_settings()
    except ConfigError as exc:
        print(f"invincat: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.command == "chat":
        if args.thread and args.resume:
            parser.error("--thread and --resume cannot be combined")
        from invincat_server.terminal.app import ChatOptions, run_chat

        options = ChatOptions(
            prompt=args.prompt,
            yes=args.yes,
            json=args.json,
            thread=args.thread,
            resume=args.resume,
            cwd=args.cwd,
            model=args.model,
        )
        try:
            return asyncio.run(run_chat(settings, options))
        except KeyboardInterrupt:
            return 130
    if args.command == "threads":
        from invincat_server.terminal.app import list_threads

        return asyncio.run(list_threads(settings, args.json))
    parser.print_help()
    return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
