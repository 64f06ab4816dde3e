"""CLI: `python -m invincat_server.testing.fake_openai --script FILE [--port N] [--host H]`.

Prints exactly one line, `READY http://HOST:PORT/v1`, on stdout once listening, so
test harnesses in any language can spawn it with `--port 0` and read the address back.
Everything else (request log, warnings) goes to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys

from .scenario import ScenarioError, Step, load_script
from .server import FakeOpenAIServer


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m invincat_server.testing.fake_openai",
        description="Scripted fake OpenAI-compatible chat-completions server for tests.",
    )
    parser.add_argument(
        "--script", help="scenario file (.json or .yaml) holding {'steps': [...]}; optional"
    )
    parser.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port; 0 picks a free one")
    parser.add_argument("--quiet", action="store_true", help="log only warnings to stderr")
    return parser.parse_args(argv)


async def _serve(steps: list[Step], host: str, port: int) -> None:
    server = FakeOpenAIServer(steps, host=host, port=port)
    await server.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, stop.set)
        except (NotImplementedError, RuntimeError):
            # Windows has no loop signal handlers; a plain handler that wakes the loop works.
            signal.signal(sig, lambda *_: loop.call_soon_threadsafe(stop.set))
    print(f"READY {server.base_url}", flush=True)
    try:
        await stop.wait()
    finally:
        await server.stop()


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    logging.basicConfig(
        level=logging.WARNING if args.quiet else logging.INFO,
        stream=sys.stderr,
        format="fake-openai %(levelname)s %(message)s",
    )
    try:
        steps = load_script(args.script) if args.script else []
    except (OSError, ScenarioError) as exc:
        print(f"fake-openai: {exc}", file=sys.stderr)
        return 2
    try:
        asyncio.run(_serve(steps, args.host, args.port))
    except OSError as exc:  # e.g. the port is taken
        print(f"fake-openai: cannot serve: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        pass  # SIGINT before the handler was installed: still a clean exit
    return 0


if __name__ == "__main__":
    sys.exit(main())
