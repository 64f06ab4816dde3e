"""The stdio server owns stdout: nothing but protocol frames may reach the editor."""

from __future__ import annotations

import subprocess
import sys

from tests.deadlines import DEADLINE

CLAIM_AND_MISBEHAVE = """
import os, sys
from invincat_server.lsp.server import _claim_stdio
protocol_in, protocol_out = _claim_stdio()
print("a stray print")
os.system("echo a child process writing to stdout; read line; echo child read: $line")
protocol_out.write(b"FRAME:" + protocol_in.readline())
protocol_out.flush()
"""


def test_stray_output_goes_to_stderr_and_children_cannot_read_the_protocol() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CLAIM_AND_MISBEHAVE],
        input=b"message for the server\n",
        capture_output=True,
        timeout=DEADLINE,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == b"FRAME:message for the server\n"
    assert b"a stray print" in done.stderr
    assert b"a child process writing to stdout" in done.stderr
    assert b"child read:\n" in done.stderr  # the child read /dev/null, not the editor
