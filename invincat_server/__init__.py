"""Invincat: AI coding assistant backend with governed memory and controlled execution."""

import time

__version__ = "0.1.0"

STARTED = time.perf_counter()
"""When this process began importing Invincat: the start of the language server's
`initializeMs` figure (`invincat/status`)."""
