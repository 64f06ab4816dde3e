"""The agent stack a Session runs on, built in one place.

`open_agent_stack` loads the model, opens the checkpointer and the records (threads.sqlite
under `$INVINCAT_HOME`, or the `database_url` PostgreSQL database: runtime/thread_store.py
chooses), the memory service and its agent, the extensions, the context
middleware, and builds the main agent and the planner. The Session owns the result and
closes it; turns reach the graphs through `AgentStack.agent` and `AgentStack.config`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from invincat_server.runtime import private_files
from invincat_server.runtime.bulk_import import bulk_import
from invincat_server.runtime.config import Settings
from invincat_server.runtime.data_dir import ensure_data_dir
from invincat_server.runtime.extensions import ExtensionContext, load_extensions
from invincat_server.runtime.policy.settings_watch import SettingsWatch
from invincat_server.runtime.policy.workspace import Workspace
from invincat_server.runtime.thread_store import Checkpointing, ThreadRecords, open_checkpointing

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from invincat_server.runtime.approvals import ApprovalPolicy
    from invincat_server.runtime.instructions import InstructionFiles
    from invincat_server.runtime.memory.service import MemoryService
    from invincat_server.runtime.memory_agent.runner import MemoryAgent
    from invincat_server.runtime.tools.documents import DocumentSource


@dataclass
class AgentStack:
    """Everything a Session's turns run on; `aclose` releases it."""

    stores: Checkpointing
    records: ThreadRecords
    memory: MemoryService
    memory_agent: MemoryAgent
    extensions: Any
    context: Any
    graph: Any
    planner: Any

    def agent(self, name: str) -> Any:
        """The graph of agent `name` ("main" or "planner")."""
        return self.planner if name == "planner" else self.graph

    @staticmethod
    def config(thread_id: str, agent: str = "main") -> dict[str, Any]:
        """The graph config of `agent` on the user's thread `thread_id`."""
        # The planner keeps its own checkpoint under a derived key; tools read the user's
        # thread id from `invincat_thread`.
        key = thread_id if agent == "main" else f"{thread_id}/{agent}"
        return {
            "configurable": {"thread_id": key, "invincat_thread": thread_id},
            "recursion_limit": 200,
        }

    async def aclose(self) -> None:
        await self.extensions.aclose()
        await self.stores.close()


async def open_agent_stack(
    settings: Settings,
    workspace: Workspace,
    policy: ApprovalPolicy,
    documents: DocumentSource,
    *,
    model: BaseChatModel | None,
    options: dict[str, Any],
    notify: Callable[[str], None],
    memory: MemoryService | None = None,
) -> AgentStack:
    """Load the agent stack. Raises ConfigError if the model is not configured (the
    message names what to set). `memory`: the process's MemoryService for this
    workspace when one exists already (runtime/project_data.py), so there is one writer."""
    # Where the CLI and ACP import LangChain, LangGraph and the OpenAI SDK (the language
    # server has them imported already): see bulk_import.py.
    with bulk_import():
        from invincat_server.runtime.models import build_chat_model

        chat_model = model or build_chat_model(settings)
        # 0700 and tightened (an older version left it 0755 with a 0644 threads.sqlite)...
        private_files.prepare_home(settings.home)
        ensure_data_dir(settings.home, root=settings.home)  # ...and out of a dotfiles repo
        stores = await open_checkpointing(settings)
        try:
            return await _load_agents(
                settings,
                workspace,
                policy,
                documents,
                stores,
                model=chat_model,
                options=options,
                notify=notify,
                memory=memory,
            )
        except BaseException:
            # A stack that failed half-way leaves no open database behind.
            await stores.close()
            raise


@dataclass
class ServerAgent:
    """The main agent as a LangGraph Server runs it (runtime/remote/graph.py)."""

    graph: Any
    memory: MemoryService
    extensions: Any

    async def aclose(self) -> None:
        await self.extensions.aclose()


async def open_server_agent(
    settings: Settings, workspace: Workspace, *, notify: Callable[[str], None]
) -> ServerAgent:
    """The main agent for a LangGraph deployment: the same model, tools, approvals
    (ApprovalMiddleware's interrupts, nothing pre-approved but the server user's own
    rules), sandbox, memory and extensions as a Session's, without a checkpointer (the
    server brings its own), records, memory extraction or plan mode. Asking the user a
    question is answered "no one to ask" (headless): only approvals wait for a person."""
    with bulk_import():
        from invincat_server.runtime.agents.memory_guard import MemoryGuardMiddleware
        from invincat_server.runtime.approvals import ApprovalPolicy, WorkspaceRuleStore
        from invincat_server.runtime.instructions import (
            InstructionFiles,
            load_instruction_settings,
        )
        from invincat_server.runtime.memory.backend import open_service
        from invincat_server.runtime.models import build_chat_model
        from invincat_server.runtime.sandbox import open_sandbox
        from invincat_server.runtime.tools.documents import DiskOnly

    model = build_chat_model(settings)  # ConfigError names what to set
    private_files.prepare_home(settings.home)
    policy = ApprovalPolicy(
        workspace.root, WorkspaceRuleStore(settings.approvals_file), auto_approve=False
    )
    documents = DiskOnly()
    # The configured backend: the JSON store files, or PostgreSQL with database_url.
    memory = open_service(settings.home, workspace.root, settings.database_url, notify=notify)
    workspace.deny = _memory_and_home_refusal(settings, workspace, memory)
    instructions = InstructionFiles(
        workspace.root, None, load_instruction_settings(settings.home), home=settings.home
    )
    watch = SettingsWatch(settings.home)
    sandbox = await open_sandbox(
        settings, workspace.root, trust_project=False, notify=notify, headless=lambda: False
    )
    policy.execute_sandbox = sandbox
    tools, extensions = await _tools_and_extensions(
        ExtensionContext(
            settings=settings,
            workspace=workspace,
            policy=policy,
            model=model,
            core_tools=[],
            documents=documents,
            notify=notify,
            tool_guards=[MemoryGuardMiddleware(memory, watch)],
            answer_readers=text_call_readers(settings, workspace=workspace, documents=documents),
        ),
        sandbox,
        memory,
    )
    _context, graph, _planner = _build_agents(
        settings,
        workspace,
        policy,
        documents,
        model=model,
        tools=[*tools, *extensions.tools],
        saver=None,
        memory=memory,
        instructions=instructions,
        watch=watch,
        extensions=extensions,
        remembers=False,  # no memory agent runs after a deployment's turns
        headless_questions=True,
    )
    return ServerAgent(graph, memory, extensions)


async def _load_agents(
    settings: Settings,
    workspace: Workspace,
    policy: ApprovalPolicy,
    documents: DocumentSource,
    stores: Checkpointing,
    *,
    model: Any,
    options: dict[str, Any],
    notify: Callable[[str], None],
    memory: MemoryService | None,
) -> AgentStack:
    from invincat_server.runtime.agents.memory_guard import MemoryGuardMiddleware
    from invincat_server.runtime.instructions import InstructionFiles, load_instruction_settings
    from invincat_server.runtime.models import build_chat_model
    from invincat_server.runtime.sandbox import open_sandbox

    chat_model = model
    saver, records = stores.saver, stores.records
    instructions = InstructionFiles(
        workspace.root,
        Path(options["working_dir"]) if options.get("working_dir") else None,
        load_instruction_settings(settings.home),  # ConfigError: a bad [instructions]
        home=settings.home,
    )
    memory, memory_agent = _open_memory(
        settings,
        workspace,
        records,
        notify,
        lambda: build_chat_model(settings, model=settings.memory_model),
        memory,
        instructions,
    )
    watch = SettingsWatch(settings.home)
    sandbox = await open_sandbox(
        settings,
        workspace.root,
        trust_project=bool(options.get("trust_project")),
        notify=notify,
        headless=lambda: policy.auto_approve,
    )
    policy.execute_sandbox = sandbox  # approvals: how each command runs, and what asks always
    tools, extensions = await _tools_and_extensions(
        ExtensionContext(
            settings=settings,
            workspace=workspace,
            policy=policy,
            model=chat_model,
            core_tools=[],
            documents=documents,
            notify=notify,
            tool_guards=[MemoryGuardMiddleware(memory, watch)],
            answer_readers=text_call_readers(settings, workspace=workspace, documents=documents),
            options=dict(options),
        ),
        sandbox,
        memory,
    )
    context, graph, planner = _build_agents(
        settings,
        workspace,
        policy,
        documents,
        model=chat_model,
        tools=[*tools, *extensions.tools],
        saver=saver,
        memory=memory,
        instructions=instructions,
        watch=watch,
        extensions=extensions,
        remembers=memory_agent.config.enabled,
    )
    return AgentStack(stores, records, memory, memory_agent, extensions, context, graph, planner)


def text_call_readers(
    settings: Settings,
    note: Any = None,
    *,
    workspace: Workspace | None = None,
    documents: DocumentSource | None = None,
) -> list[Any]:
    """The middleware that reads tool calls a model wrote as text, for one agent's stack
    (listed last: it wraps the model call innermost, so it sees the tools finally offered
    and the model's own answer; text_tool_call_middleware.py). None with `off`. `note`:
    the hint for a call to a tool not offered (agents/main_agent.memory_tool_note).
    `workspace` and `documents`: where a file an answer shows changed is read, to tell a
    change from a quote (tools/documents.project_text)."""
    if settings.text_tool_calls != "auto":
        return []
    from invincat_server.runtime.agents.text_tool_call_middleware import TextToolCallMiddleware
    from invincat_server.runtime.tools.documents import project_text

    current = None
    if workspace is not None and documents is not None:
        current = functools.partial(project_text, workspace, documents)
    return [TextToolCallMiddleware(note, current)]


async def _tools_and_extensions(
    context: ExtensionContext, sandbox: Any, memory: MemoryService
) -> tuple[list[Any], Any]:
    """The core tools (files, shell in `sandbox`, memory search) and the extensions loaded
    over them: a Session's and a deployment's agent are given the same."""
    from invincat_server.runtime.tools import build_core_tools
    from invincat_server.runtime.tools.memory_search import build_search_memory_tool

    core = build_core_tools(context.workspace, documents=context.documents, sandbox=sandbox)
    tools = [*core, build_search_memory_tool(memory)]
    context.core_tools = list(tools)
    return tools, await load_extensions(context)


def _build_agents(
    settings: Settings,
    workspace: Workspace,
    policy: ApprovalPolicy,
    documents: DocumentSource,
    *,
    model: Any,
    tools: list[Any],
    saver: Any,
    memory: MemoryService,
    instructions: InstructionFiles,
    watch: SettingsWatch,
    extensions: Any,
    remembers: bool,
    headless_questions: bool = False,
) -> tuple[Any, Any, Any]:
    """The context middleware, the main agent and the planner. `remembers`: the memory
    agent runs after turns (the main agent is told it need not store what it is told)."""
    from invincat_server.runtime.agents.approval_middleware import ApprovalMiddleware
    from invincat_server.runtime.agents.interaction import InteractionMiddleware
    from invincat_server.runtime.agents.main_agent import (
        REMEMBERING,
        build_main_agent,
        memory_tool_note,
        system_prompt,
    )
    from invincat_server.runtime.agents.memory_guard import MemoryGuardMiddleware
    from invincat_server.runtime.agents.memory_injection import (
        InstructionsInjectionMiddleware,
        MemoryInjectionMiddleware,
    )
    from invincat_server.runtime.agents.planner import (
        PlannerApprovalMiddleware,
        build_planner_agent,
    )
    from invincat_server.runtime.agents.repeated_calls import RepeatedCallGuard
    from invincat_server.runtime.context.middleware import ContextMiddleware, ContextSettings

    def text_calls() -> list[Any]:
        note = memory_tool_note if remembers else None
        return text_call_readers(settings, note, workspace=workspace, documents=documents)

    def repeats() -> RepeatedCallGuard | None:
        limit = settings.max_repeated_calls
        return RepeatedCallGuard(limit) if limit else None

    from invincat_server.runtime.agents.project_overview import project_overview

    files = project_overview(workspace.root, workspace.denied)
    sections = [files, *([REMEMBERING] if remembers else []), *extensions.prompt_sections]
    prompt = system_prompt(str(workspace.root), sections)
    context = ContextMiddleware(
        model,
        ContextSettings(
            window=settings.context_window,
            threshold=settings.compaction_threshold,
            micro=settings.micro_compaction,
            auto=settings.auto_compaction,
        ),
        prompt,
    )
    graph = build_main_agent(
        model=model,
        tools=tools,
        approvals=ApprovalMiddleware(policy, workspace, documents),
        prompt=prompt,
        context=context,
        checkpointer=saver,
        workspace_root=str(workspace.root),
        extra_middleware=[
            InteractionMiddleware(headless=policy.auto_approve or headless_questions, agent="main"),
            # The instruction files first, then governed memory (memory_injection.py).
            InstructionsInjectionMiddleware(instructions.render),
            MemoryInjectionMiddleware(memory.render_injection),
            MemoryGuardMiddleware(memory, watch),
            *extensions.middleware,
            *text_calls(),
        ],
        guards=[guard] if (guard := repeats()) is not None else [],
    )
    planner = build_planner_agent(
        model=model,
        tools=tools,
        checkpointer=saver,
        workspace_root=str(workspace.root),
        headless=policy.auto_approve,
        # web_fetch is on the planner's allow-list and must be approved like anywhere else.
        approvals=PlannerApprovalMiddleware(policy, workspace, documents),
        guard=MemoryGuardMiddleware(memory, watch),
        extra_middleware=text_calls(),
        repeats=repeats(),
    )
    return context, graph, planner


def _open_memory(
    settings: Settings,
    workspace: Workspace,
    records: ThreadRecords,
    notify: Callable[[str], None],
    model_factory: Callable[[], Any],
    shared: MemoryService | None,
    instructions: InstructionFiles,
) -> tuple[MemoryService, MemoryAgent]:
    """The memory service, its extraction agent, and the workspace's refusal of tools
    that reach for memory data or Invincat's home."""
    from invincat_server.runtime.memory.backend import open_service
    from invincat_server.runtime.memory.redaction import redact_text
    from invincat_server.runtime.memory_agent.config import load_memory_agent_config
    from invincat_server.runtime.memory_agent.runner import MemoryAgent
    from invincat_server.runtime.records import MemoryCursors

    if shared is not None:
        memory = shared
        memory.set_notify(notify)
    else:
        memory = open_service(settings.home, workspace.root, settings.database_url, notify=notify)
    workspace.deny = _memory_and_home_refusal(settings, workspace, memory)
    agent = MemoryAgent(
        service=memory,
        cursors=MemoryCursors(records),
        model_factory=model_factory,
        redact=redact_text,
        config=load_memory_agent_config(settings.home, workspace.root),
        text_tool_calls=settings.text_tool_calls == "auto",
        instruction_files=instructions.included_paths,
    )
    return memory, agent


def _memory_and_home_refusal(
    settings: Settings, workspace: Workspace, memory: MemoryService
) -> Callable[[Path, bool], str | None]:
    """The workspace's refusal of tools that reach for memory data or Invincat's home."""
    guard = memory.guard

    def deny(path: Path, write: bool) -> str | None:
        kind = guard.protection(path, write=write)
        where = workspace.relative(path)
        if kind == "memory":
            return (
                f"{where} is protected memory data (a store, journal, lock or backup, or "
                "their folder). Tools cannot read or change it; memory changes go through "
                "governance (`invincat memory ...`)."
            )
        if kind == "home":
            return (
                f"{where} is in Invincat's home directory ({settings.home}): approval "
                "rules, project trust, MCP and other settings, skills, threads. Tools can "
                "never change it, and read only its skills/ and offload/ folders; the user "
                "changes these files."
            )
        return None

    return deny
