"""Async remote subagents: runs on a LangGraph deployment, through `langgraph-sdk`.

Configured in `subagents.json` (docs/extensions.md): `$INVINCAT_HOME/subagents.json` and
`<project>/.invincat/subagents.json`; on a duplicate name the user file wins. A project
file may not name an API key variable: a cloned repository must not be able to send your
credentials to a server it chose.

Four tools; a task id is `agent:thread_id:run_id`, self-contained so it still works after a
restart:

- `remote_task_start(agent, task)` creates a thread and a background run (asks first);
- `remote_task_status(task_id)` returns the run status (free);
- `remote_task_result(task_id, wait_seconds?)` returns the final report (free);
- `remote_task_cancel(task_id)` interrupts the run (asks first).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.tools import BaseTool, ToolException
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from invincat_server.runtime.tools.files import make_tool

if TYPE_CHECKING:
    from invincat_server.runtime.extensions import ExtensionContext, Extensions

CONFIG_FILE = "subagents.json"
AGENT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
MAX_TASK_CHARS = 20_000
MAX_RESULT_CHARS = 20_000
MAX_WAIT_SECONDS = 120
MAX_ACTIVE_TASKS = 5
"""Runs started by one session that may be pending or running at the same time."""
FINAL_STATUSES = frozenset({"success", "error", "timeout", "interrupted"})


class RemoteAgentConfig(BaseModel):
    """One entry of `remote` in subagents.json."""

    model_config = ConfigDict(extra="forbid")

    url: str = Field(description="Base URL of the LangGraph API, e.g. http://127.0.0.1:2024.")
    graph_id: str = Field(description="The graph (assistant) id to run, as in langgraph.json.")
    description: str = ""
    api_key_env: str | None = None
    """Name of the environment variable holding the API key (user file only)."""
    timeout: float = Field(default=30.0, ge=1, le=300)
    """Seconds for each HTTP request to the deployment."""

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if not re.match(r"^https?://[^\s/]+", value):
            raise ValueError("url must start with http:// or https:// and name a host")
        return value.rstrip("/")


@dataclass(frozen=True)
class RemoteAgent:
    name: str
    config: RemoteAgentConfig
    source: Path


def config_files(home: Path, project_root: Path) -> list[Path]:
    """Highest precedence first."""
    return [home / CONFIG_FILE, project_root / ".invincat" / CONFIG_FILE]


def load_remote_agents(
    home: Path, project_root: Path, notify: Callable[[str], None]
) -> dict[str, RemoteAgent]:
    """The configured remote agents; a bad file or entry is reported and skipped."""
    agents: dict[str, RemoteAgent] = {}
    for index, path in enumerate(config_files(home, project_root)):
        if not path.is_file():
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            notify(f"Remote subagents config {path} skipped: it is not readable JSON ({exc}).")
            continue
        entries = data.get("remote") if isinstance(data, dict) else None
        if not isinstance(entries, dict):
            notify(
                f'Remote subagents config {path} skipped: expected {{"remote": {{name: {{…}}}}}}.'
            )
            continue
        for name, raw in entries.items():
            if not AGENT_NAME.match(str(name)):
                notify(f"Remote subagent {name!r} in {path} skipped: bad name.")
                continue
            try:
                config = RemoteAgentConfig.model_validate(raw)
            except ValidationError as exc:
                problems = "; ".join(
                    f"{'.'.join(map(str, e['loc'])) or 'entry'}: {e['msg']}" for e in exc.errors()
                )
                notify(f"Remote subagent {name!r} in {path} skipped: {problems}.")
                continue
            if index > 0 and config.api_key_env:
                notify(
                    f"Remote subagent {name!r} in {path}: api_key_env is ignored in a project "
                    f"file; define the agent in {config_files(home, project_root)[0]} to use a key."
                )
                config = config.model_copy(update={"api_key_env": None})
            agents.setdefault(name, RemoteAgent(name, config, path))
    return agents


class StartArgs(BaseModel):
    agent: str = Field(description="Name of a configured remote agent.")
    task: str = Field(description="The complete task; the remote agent sees nothing else.")


class TaskIdArgs(BaseModel):
    task_id: str = Field(description="The id remote_task_start returned.")


class ResultArgs(TaskIdArgs):
    wait_seconds: int = Field(
        default=0,
        ge=0,
        le=MAX_WAIT_SECONDS,
        description=f"Wait up to this many seconds (at most {MAX_WAIT_SECONDS}) for it to finish.",
    )


def _message_text(message: Any) -> str:
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(part.get("text", "")) if isinstance(part, dict) else str(part) for part in content
        )
    return ""


def final_report(values: Any) -> str:
    """The last AI message of a messages-state graph, else the state as JSON."""
    if isinstance(values, dict) and isinstance(values.get("messages"), list):
        for message in reversed(values["messages"]):
            if isinstance(message, dict) and message.get("type") in ("ai", "AIMessage"):
                return _message_text(message)
    return json.dumps(values, ensure_ascii=False, default=str)


class RemoteTasks:
    """Clients for the configured deployments and the tasks this session started."""

    def __init__(self, agents: dict[str, RemoteAgent]) -> None:
        self.agents = agents
        self._clients: dict[str, Any] = {}
        self._started: dict[str, float] = {}
        self._status: dict[str, str] = {}

    def client(self, name: str) -> Any:
        if name not in self._clients:
            from langgraph_sdk import get_client

            config = self.agents[name].config
            key = os.environ.get(config.api_key_env) if config.api_key_env else None
            # api_key=None (not omitted): the SDK would otherwise pick up LANGSMITH_API_KEY
            # & co. from the environment and send it to whatever server is configured.
            self._clients[name] = get_client(url=config.url, api_key=key, timeout=config.timeout)
        return self._clients[name]

    def _parse(self, task_id: str) -> tuple[str, str, str]:
        parts = task_id.strip().split(":")
        if len(parts) != 3 or not all(parts):
            raise ToolException(
                f"{task_id!r} is not a remote task id; use the id remote_task_start returned."
            )
        if parts[0] not in self.agents:
            raise ToolException(f"Task {task_id} belongs to an unknown remote agent {parts[0]!r}.")
        return parts[0], parts[1], parts[2]

    async def _call(self, name: str, action: str, coro: Any) -> Any:
        import httpx

        url = self.agents[name].config.url
        try:
            return await coro
        except httpx.HTTPStatusError as exc:
            raise ToolException(
                f"The remote agent {name} at {url} refused to {action}: HTTP "
                f"{exc.response.status_code if exc.response is not None else '?'} {exc}"
            ) from exc
        except httpx.HTTPError as exc:
            reason = str(exc) or type(exc).__name__
            raise ToolException(
                f"Cannot reach the remote agent {name} at {url} to {action}: {reason}. "
                "Check that the deployment is running and the url in subagents.json."
            ) from exc

    async def start(self, agent: str, task: str) -> str:
        if agent not in self.agents:
            known = ", ".join(self.agents) or "(none)"
            raise ToolException(f"No remote agent named {agent!r}. Configured: {known}.")
        if not task.strip():
            raise ToolException("task is empty: say what the remote agent should do.")
        if len(task) > MAX_TASK_CHARS:
            raise ToolException(f"task is longer than {MAX_TASK_CHARS} characters; shorten it.")
        active = [t for t in self._started if self._status.get(t) not in FINAL_STATUSES]
        for task_id in active:
            try:
                await self.status(task_id)  # refresh: some may have finished meanwhile
            except ToolException:
                continue  # unreachable: keep counting it as running
        active = [t for t in self._started if self._status.get(t) not in FINAL_STATUSES]
        if len(active) >= MAX_ACTIVE_TASKS:
            raise ToolException(
                f"{len(active)} remote tasks are still running ({', '.join(active)}); at most "
                f"{MAX_ACTIVE_TASKS} at a time. Wait for one or cancel it first."
            )
        client = self.client(agent)
        config = self.agents[agent].config
        thread = await self._call(agent, "create a thread", client.threads.create())
        run = await self._call(
            agent,
            "start a run",
            client.runs.create(
                thread["thread_id"],
                config.graph_id,
                input={"messages": [{"role": "user", "content": task}]},
            ),
        )
        task_id = f"{agent}:{thread['thread_id']}:{run['run_id']}"
        self._started[task_id] = time.monotonic()
        self._status[task_id] = str(run.get("status") or "pending")
        return (
            f"Started remote task {task_id} on {agent} ({config.url}, graph {config.graph_id}); "
            f"status: {self._status[task_id]}. It runs in the background: check it with "
            "remote_task_status, get the report with remote_task_result."
        )

    async def status(self, task_id: str) -> str:
        agent, thread_id, run_id = self._parse(task_id)
        run = await self._call(
            agent, "report the status", self.client(agent).runs.get(thread_id, run_id)
        )
        status = str(run.get("status") or "unknown")
        self._status[task_id] = status
        return status

    async def result(self, task_id: str, wait_seconds: int = 0) -> str:
        agent, thread_id, _ = self._parse(task_id)
        deadline = time.monotonic() + min(max(wait_seconds, 0), MAX_WAIT_SECONDS)
        status = await self.status(task_id)
        while status not in FINAL_STATUSES and time.monotonic() < deadline:
            await asyncio.sleep(min(1.0, max(0.05, deadline - time.monotonic())))
            status = await self.status(task_id)
        if status in ("pending", "running"):
            return f"Remote task {task_id} is still {status}; no result yet. Ask again later."
        if status != "success":
            return f"Remote task {task_id} ended with status {status}; it produced no report."
        state = await self._call(
            agent, "return the result", self.client(agent).threads.get_state(thread_id)
        )
        report = final_report(state.get("values") if isinstance(state, dict) else None)
        if len(report) > MAX_RESULT_CHARS:
            report = report[:MAX_RESULT_CHARS] + f"\n… [cut at {MAX_RESULT_CHARS} characters]"
        return f"Remote task {task_id} finished.\n{report}"

    async def cancel(self, task_id: str) -> str:
        agent, thread_id, run_id = self._parse(task_id)
        status = await self.status(task_id)
        if status in FINAL_STATUSES:
            return f"Remote task {task_id} already ended with status {status}; nothing to cancel."
        await self._call(
            agent, "cancel the run", self.client(agent).runs.cancel(thread_id, run_id, wait=True)
        )
        return f"Cancelled remote task {task_id}; status: {await self.status(task_id)}."

    async def aclose(self) -> None:
        for client in self._clients.values():
            await client.aclose()
        self._clients.clear()


def build_tools(tasks: RemoteTasks) -> list[BaseTool]:
    async def start(agent: str, task: str) -> str:
        return await tasks.start(agent, task)

    async def status(task_id: str) -> str:
        return f"Remote task {task_id}: {await tasks.status(task_id)}."

    async def result(task_id: str, wait_seconds: int = 0) -> str:
        return await tasks.result(task_id, wait_seconds)

    async def cancel(task_id: str) -> str:
        return await tasks.cancel(task_id)

    return [
        make_tool(
            "remote_task_start",
            "Start a task on a configured remote agent (a LangGraph deployment). Returns at "
            "once with a task id; the work runs in the background.",
            StartArgs,
            start,
        ),
        make_tool(
            "remote_task_status",
            "Status of a remote task: pending, running, success, error, timeout or interrupted.",
            TaskIdArgs,
            status,
        ),
        make_tool(
            "remote_task_result",
            "The final report of a finished remote task (optionally waiting for it).",
            ResultArgs,
            result,
        ),
        make_tool("remote_task_cancel", "Cancel a running remote task.", TaskIdArgs, cancel),
    ]


def prompt_section(agents: dict[str, RemoteAgent]) -> str:
    listed = "\n".join(
        f"- {a.name}: {a.config.description or '(no description)'}" for a in agents.values()
    )
    return (
        "## Remote agents\n"
        "These agents run elsewhere, in the background. remote_task_start(agent, task) "
        "returns a task id at once; keep working and collect the report later with "
        "remote_task_result(task_id) (remote_task_status to check, remote_task_cancel to "
        f"stop). At most {MAX_ACTIVE_TASKS} may run at a time.\n" + listed
    )


async def remote_subagents_provider(ctx: ExtensionContext, ext: Extensions) -> None:
    """Adds the remote_task_* tools when subagents.json configures remote agents."""
    agents = load_remote_agents(ctx.settings.home, ctx.workspace.root, ctx.notify)
    if not agents:
        return
    tasks = RemoteTasks(agents)
    ext.tools.extend(build_tools(tasks))
    ext.prompt_sections.append(prompt_section(agents))
    ext.closers.append(tasks.aclose)
