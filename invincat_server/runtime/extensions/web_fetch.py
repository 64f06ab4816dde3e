"""The `web_fetch` tool as an extension (see runtime/tools/web.py and docs/tools.md)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from invincat_server.runtime.tools.web import LoopbackAllowance, build_web_tools

if TYPE_CHECKING:
    from invincat_server.runtime.extensions import ExtensionContext, Extensions

LOOPBACK_ENV = "INVINCAT_WEB_FETCH_ALLOW_LOOPBACK"
"""Test-only: `1` allows loopback targets on every port, `8080,8081` on those ports."""


async def web_fetch_provider(ctx: ExtensionContext, ext: Extensions) -> None:
    """Add `web_fetch`; loopback is refused unless a test allows it (option, then env)."""
    raw = ctx.options.get("allow_loopback_fetch")
    if raw is None:
        raw = os.environ.get(LOOPBACK_ENV)
    ext.tools.extend(build_web_tools(allow=LoopbackAllowance.parse(raw)))
