"""The extension providers a session loads, in order (see extensions/__init__.py)."""

from __future__ import annotations

from invincat_server.runtime.extensions import Provider

PROVIDERS: list[Provider] = []
