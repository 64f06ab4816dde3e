"""Baseline for bench_lsp.py: a bare pygls 2.1 server that only answers `initialize`.

What any pygls server pays from spawn to its first answer (interpreter, pygls, lsprotocol,
cattrs); `invincat --stdio` is measured against it.
"""

from pygls.lsp.server import LanguageServer

if __name__ == "__main__":
    LanguageServer("minimal", "0").start_io()
