"""What each built-in tool does, in one place: approvals, protection, the LSP's pending
edits, the terminal and docs/tools.md all read these sets instead of keeping their own.

Pure data (no LangChain import): the language server reads it before `initialize` is
answered. A tool not listed here (an MCP tool, say) has no traits and is asked about.
"""

from __future__ import annotations

# Look at the workspace without changing it.
READS_FILES = frozenset({"read_file", "ls", "glob", "grep"})
# Change files; the approval layer previews them with preview_change() and the editor
# shows them as pending edits.
WRITES_FILES = frozenset({"write_file", "edit_file"})
# Run a shell command (not confined to the workspace: approval-gated instead).
RUNS_COMMANDS = frozenset({"execute"})
# Reach the network.
USES_NETWORK = frozenset({"web_fetch", "remote_task_start"})

# Safe to run without asking. Besides the file readers: load_skill only reads skills the
# user installed; search_memory only reads governed memory (redacted); write_todos and
# ask_user only talk to the user; the remote status/result tools only read runs this
# session started (starting and cancelling them ask first).
FREE_TOOLS = READS_FILES | frozenset(
    {
        "write_todos",
        "ask_user",
        "load_skill",
        "search_memory",
        "remote_task_status",
        "remote_task_result",
    }
)
