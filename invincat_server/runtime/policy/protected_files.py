"""Which of Invincat's own files the agent's tools may never change, and which it may read.

Everything under `$INVINCAT_HOME` is Invincat's, not the project's: approval rules, project
trust, the user MCP config (always started, `autoApprove` honoured), `config.toml`, skills,
remote subagents, the thread database, logs, the user memory store. When the project root
is `$HOME` that directory lies inside the workspace, so the file, search and shell tools
must refuse it explicitly (issue 13 §1). Writes are refused for all of it; reads only for
what can carry secrets or other projects' conversations (see `HOME_READABLE`).

Project-level settings that grant something (start a program, send data somewhere, change
what runs without asking) are not refused: the user may want the agent to edit them, but
only with an approval that says what the change grants (`policy/settings_grants.py`), never
under an "always allow writes" rule, and never through a shell command.
"""

from __future__ import annotations

# Top-level entries of $INVINCAT_HOME the agent may *read*: skills (also served by
# load_skill) and offload transcripts (already redacted; they live here only when the
# project root is $HOME). Everything else may hold secrets (config.toml, mcp.json env and
# headers, subagents.json), every project's conversations (threads.sqlite) or memory.
HOME_READABLE = frozenset({"skills", "offload"})

# Files directly under $INVINCAT_HOME that grant permissions or start code; the tamper
# watch snapshots them (plus every file under HOME_WATCHED_DIRS) around each tool call.
HOME_SETTINGS_FILES = (
    "approvals.json",
    "trusted_projects.json",
    "mcp.json",
    "config.toml",
    "subagents.json",
)
HOME_WATCHED_DIRS = ("skills",)

# Relative to the project root: files whose content starts programs (MCP servers), sends
# tasks to servers (remote subagents) or configures the memory agent.
PROJECT_SETTINGS_FILES = (
    ".mcp.json",
    ".invincat/mcp.json",
    ".invincat/config.toml",
    ".invincat/subagents.json",
)
