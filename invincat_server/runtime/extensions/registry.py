"""The extension providers a session loads, in order (see extensions/__init__.py)."""

from __future__ import annotations

from invincat_server.runtime.extensions import Provider
from invincat_server.runtime.extensions.mcp import mcp_provider
from invincat_server.runtime.extensions.remote_subagents import remote_subagents_provider
from invincat_server.runtime.extensions.skills import skills_provider
from invincat_server.runtime.extensions.subagents import subagents_provider
from invincat_server.runtime.extensions.web_fetch import web_fetch_provider

PROVIDERS: list[Provider] = []
PROVIDERS.append(web_fetch_provider)
PROVIDERS.append(mcp_provider)
PROVIDERS.append(skills_provider)
PROVIDERS.append(subagents_provider)
PROVIDERS.append(remote_subagents_provider)
