"""Settings and data locations.

Environment variables win over `$INVINCAT_HOME/config.toml`, which wins over defaults.
Nothing here touches the network or imports the LangChain stack, so front ends can load
settings cheaply at start-up.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from invincat_server.runtime import database_url
from invincat_server.runtime.shell_env import keep_env_names

SANDBOX_MODES = ("read-only", "workspace-write", "off")
"""`execute`'s OS sandbox modes, narrowest first (runtime/sandbox, docs/security.md)."""
DEFAULT_SANDBOX_MODE = "workspace-write"

TEXT_TOOL_CALL_MODES = ("auto", "off")
"""`text_tool_calls`: understand tool calls a model wrote as text, or not
(runtime/text_tool_calls.py, docs/configuration.md)."""

PROJECT_MARKERS = (".git", "pyproject.toml", "package.json", "Cargo.toml", "go.mod")
DEFAULT_CONTEXT_WINDOW = 128_000
DEFAULT_CHECKPOINTS_MAX_MB = 1024
DEFAULT_MAX_OUTPUT_TOKENS = 4096
DEFAULT_MAX_REPEATED_CALLS = 3
MAX_REPEATED_CALLS_LIMIT = 1000
MAX_OUTPUT_TOKENS_LIMIT = 1_000_000


class ConfigError(Exception):
    """A configuration problem the user can fix; the message says how."""


@dataclass(frozen=True)
class Settings:
    """Resolved configuration for one process."""

    home: Path
    """User data dir (`$INVINCAT_HOME`, default `~/.invincat`)."""
    model: str | None
    """Main chat model name (`INVINCAT_MODEL` / config `model`)."""
    base_url: str | None
    """OpenAI-compatible endpoint (`OPENAI_BASE_URL` / config `base_url`)."""
    api_key: str | None
    """API key (`OPENAI_API_KEY`); never read from config files to keep secrets out of them."""
    memory_model: str | None = None
    """Model for the memory agent (`INVINCAT_MEMORY_MODEL`); defaults to `model`."""
    request_timeout: float = 120.0
    """Seconds before one model request is abandoned (`INVINCAT_REQUEST_TIMEOUT`)."""
    max_retries: int = 2
    """Retries of a failed model request: 429 and 5xx (`INVINCAT_MAX_RETRIES`)."""
    max_output_tokens: int = DEFAULT_MAX_OUTPUT_TOKENS
    """Output-token cap sent with every model request, 0 for none
    (`INVINCAT_MAX_OUTPUT_TOKENS` / config `max_output_tokens`): a small model that loops
    stops there instead of streaming until its context is full."""
    temperature: float | None = None
    """Sampling temperature sent with every model request (`INVINCAT_TEMPERATURE` / config
    `temperature`, 0–2); None sends none: the server's own default."""
    context_window: int = DEFAULT_CONTEXT_WINDOW
    """Model context window in tokens, used for `context_usage` (`INVINCAT_CONTEXT_WINDOW`)."""
    compaction_threshold: float = 0.8
    """Auto-compact when estimated context passes this fraction of the window."""
    auto_compaction: bool = True
    """Summarise older turns when the threshold is passed (`INVINCAT_AUTO_COMPACTION`)."""
    micro_compaction: bool = True
    """Elide old bulky tool outputs in model requests (`INVINCAT_MICRO_COMPACTION`)."""
    sandbox_mode: str = DEFAULT_SANDBOX_MODE
    """The user's `execute` sandbox mode (`INVINCAT_SANDBOX` / `[sandbox] mode`); a
    project's `.invincat/config.toml` may narrow it, and widen it only once trusted."""
    sandbox_network: bool = False
    """Whether sandboxed commands may use the network (`INVINCAT_SANDBOX_NETWORK` /
    `[sandbox] network`)."""
    shell_keep_env: tuple[str, ...] = ()
    """Secret-named variables `execute` commands still get (`INVINCAT_SHELL_KEEP_ENV` /
    `[shell] keep_env`, the user's file only; runtime/shell_env.py)."""
    shell_env_warnings: tuple[str, ...] = ()
    """keep_env values that were ignored, and why: each session reports them once."""
    text_tool_calls: str = "auto"
    """`auto`: a response with no structured tool calls is searched for calls written as
    text (`INVINCAT_TEXT_TOOL_CALLS` / `text_tool_calls`); `off`: its text is the answer."""
    attach_named_files: bool = True
    """Workspace files the prompt names without `@` (`fix calc.py`) are attached like
    `@` mentions (`INVINCAT_ATTACH_NAMED_FILES` / `attach_named_files`; runtime/mentions.py)."""
    max_repeated_calls: int = DEFAULT_MAX_REPEATED_CALLS
    """The how-many-th identical tool call of a turn is not run but answered with an error,
    0 for never (`INVINCAT_MAX_REPEATED_CALLS` / `max_repeated_calls`); two more end the
    turn (runtime/agents/repeated_calls.py)."""
    checkpoints_max_bytes: int = DEFAULT_CHECKPOINTS_MAX_MB * 1024 * 1024
    """The cap on one project's rewind checkpoints (`INVINCAT_CHECKPOINTS_MAX_MB` /
    `[checkpoints] max_mb`): over it, the oldest are pruned (runtime/checkpoints)."""
    database_url: str | None = field(default=None, repr=False)
    """PostgreSQL instead of the embedded files (`INVINCAT_DATABASE_URL` / `database_url`,
    no password in the file; runtime/database_url.py). Never log it: `redacted()` it."""

    @property
    def threads_db(self) -> Path:
        return self.home / "threads.sqlite"

    @property
    def approvals_file(self) -> Path:
        return self.home / "approvals.json"

    def with_model(self, model: str | None) -> Settings:
        return replace(self, model=model) if model else self


def default_home(env: Mapping[str, str]) -> Path:
    if env.get("INVINCAT_HOME"):
        return Path(env["INVINCAT_HOME"]).expanduser()
    return Path(env.get("HOME") or Path.home()) / ".invincat"


def _read_config_file(path: Path) -> dict[str, object]:
    if not path.is_file():
        return {}
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"Cannot read {path}: {exc}. Fix or remove the file.") from exc


def _number(raw: object, name: str, kind: type[int] | type[float]) -> int | float:
    try:
        return kind(raw)  # type: ignore[arg-type, call-overload]  # raw is checked here
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{name} must be a number, got {raw!r}.") from exc


def _flag(raw: str | None, name: str, default: bool) -> bool:
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise ConfigError(f"{name} must be true or false, got {raw!r}.")


def _max_output_tokens(raw: str | None) -> int:
    if raw is None:
        return DEFAULT_MAX_OUTPUT_TOKENS
    value = _number(raw, "max_output_tokens", int)
    if not 0 <= value <= MAX_OUTPUT_TOKENS_LIMIT:
        raise ConfigError(
            f"max_output_tokens must be between 0 (no cap) and {MAX_OUTPUT_TOKENS_LIMIT:,}, "
            f"got {raw}."
        )
    return int(value)


def _temperature(raw: str | None) -> float | None:
    if raw is None:
        return None
    value = float(_number(raw, "temperature", float))
    if not 0.0 <= value <= 2.0:  # NaN fails this too
        raise ConfigError(f"temperature must be between 0 and 2, got {raw}.")
    return value


def _max_repeated_calls(raw: str | None) -> int:
    if raw is None:
        return DEFAULT_MAX_REPEATED_CALLS
    value = _number(raw, "max_repeated_calls", int)
    # 1 would refuse every call, its first time included.
    if value != 0 and not 2 <= value <= MAX_REPEATED_CALLS_LIMIT:
        raise ConfigError(
            f"max_repeated_calls must be 0 (off) or from 2 to {MAX_REPEATED_CALLS_LIMIT:,}, "
            f"got {raw}."
        )
    return int(value)


def sandbox_mode(raw: object, name: str) -> str:
    """A valid sandbox mode, or a ConfigError naming the choices."""
    if isinstance(raw, str) and raw.strip().lower() in SANDBOX_MODES:
        return raw.strip().lower()
    raise ConfigError(f"{name} must be one of {', '.join(SANDBOX_MODES)}; got {raw!r}.")


def _text_tool_calls(raw: str | None) -> str:
    if raw is None:
        return "auto"
    value = raw.strip().lower()
    if value not in TEXT_TOOL_CALL_MODES:
        raise ConfigError(f"text_tool_calls must be auto or off, got {raw!r}.")
    return value


def _sandbox_settings(env: Mapping[str, str], file_cfg: dict[str, object]) -> tuple[str, bool]:
    """(mode, network) from the environment, else the user's `[sandbox]` table."""
    table = file_cfg.get("sandbox", {})
    if not isinstance(table, dict):
        raise ConfigError("[sandbox] in config.toml must be a table (mode = ..., network = ...).")
    mode = DEFAULT_SANDBOX_MODE
    if env.get("INVINCAT_SANDBOX"):
        mode = sandbox_mode(env["INVINCAT_SANDBOX"], "INVINCAT_SANDBOX")
    elif "mode" in table:
        mode = sandbox_mode(table["mode"], "[sandbox] mode")
    network = table.get("network", False)
    if not isinstance(network, bool):
        raise ConfigError(f"[sandbox] network must be true or false, got {network!r}.")
    network = _flag(
        env.get("INVINCAT_SANDBOX_NETWORK") or None, "INVINCAT_SANDBOX_NETWORK", network
    )
    return mode, network


def _checkpoints_max_bytes(env: Mapping[str, str], file_cfg: dict[str, object]) -> int:
    """`[checkpoints] max_mb` (or INVINCAT_CHECKPOINTS_MAX_MB) in bytes: 1 to 1,000,000 MB."""
    table = file_cfg.get("checkpoints", {})
    if not isinstance(table, dict):
        raise ConfigError("[checkpoints] in config.toml must be a table (max_mb = ...).")
    raw: object = env.get("INVINCAT_CHECKPOINTS_MAX_MB") or table.get("max_mb")
    if raw is None:
        return DEFAULT_CHECKPOINTS_MAX_MB * 1024 * 1024
    if isinstance(raw, bool):
        raise ConfigError(f"[checkpoints] max_mb must be a number of megabytes, got {raw!r}.")
    value = float(_number(raw, "[checkpoints] max_mb", float))
    if not 1 <= value <= 1_000_000:  # also refuses NaN and infinity
        raise ConfigError(f"[checkpoints] max_mb must be from 1 to 1000000, got {raw!r}.")
    return int(value * 1024 * 1024)


def _database_url(env: Mapping[str, str], file_cfg: dict[str, object]) -> str | None:
    from_env = env.get("INVINCAT_DATABASE_URL")
    raw = from_env or file_cfg.get("database_url")
    if raw in (None, ""):
        return None
    if not isinstance(raw, str):
        raise ConfigError(f"database_url must be a string, got {type(raw).__name__}.")
    try:
        return database_url.check(raw, from_file=not from_env)
    except database_url.DatabaseUrlError as exc:
        raise ConfigError(str(exc)) from None


def load_settings(env: Mapping[str, str] | None = None) -> Settings:
    """Read settings from the environment and `$INVINCAT_HOME/config.toml`."""
    env = os.environ if env is None else env
    home = default_home(env)
    file_cfg = _read_config_file(home / "config.toml")

    def pick(env_name: str, key: str) -> str | None:
        value = env.get(env_name) or file_cfg.get(key)
        return str(value) if value not in (None, "") else None

    timeout = pick("INVINCAT_REQUEST_TIMEOUT", "request_timeout")
    retries = pick("INVINCAT_MAX_RETRIES", "max_retries")
    window = pick("INVINCAT_CONTEXT_WINDOW", "context_window")
    threshold = pick("INVINCAT_COMPACTION_THRESHOLD", "compaction_threshold")
    threshold_value = float(_number(threshold, "compaction_threshold", float)) if threshold else 0.8
    if not 0.1 <= threshold_value <= 1.0:
        raise ConfigError(f"compaction_threshold must be between 0.1 and 1.0, got {threshold}.")
    sandbox, network = _sandbox_settings(env, file_cfg)
    warnings: list[str] = []
    keep_env = keep_env_names(env, file_cfg.get("shell"), warnings.append)
    return Settings(
        home=home,
        model=pick("INVINCAT_MODEL", "model"),
        base_url=pick("OPENAI_BASE_URL", "base_url"),
        api_key=env.get("OPENAI_API_KEY") or None,
        memory_model=pick("INVINCAT_MEMORY_MODEL", "memory_model"),
        request_timeout=float(_number(timeout, "request_timeout", float)) if timeout else 120.0,
        max_retries=int(_number(retries, "max_retries", int)) if retries else 2,
        max_output_tokens=_max_output_tokens(
            pick("INVINCAT_MAX_OUTPUT_TOKENS", "max_output_tokens")
        ),
        temperature=_temperature(pick("INVINCAT_TEMPERATURE", "temperature")),
        context_window=int(_number(window, "context_window", int))
        if window
        else DEFAULT_CONTEXT_WINDOW,
        compaction_threshold=threshold_value,
        auto_compaction=_flag(
            pick("INVINCAT_AUTO_COMPACTION", "auto_compaction"), "auto_compaction", True
        ),
        micro_compaction=_flag(
            pick("INVINCAT_MICRO_COMPACTION", "micro_compaction"), "micro_compaction", True
        ),
        sandbox_mode=sandbox,
        sandbox_network=network,
        shell_keep_env=keep_env,
        shell_env_warnings=tuple(warnings),
        text_tool_calls=_text_tool_calls(pick("INVINCAT_TEXT_TOOL_CALLS", "text_tool_calls")),
        attach_named_files=_flag(
            pick("INVINCAT_ATTACH_NAMED_FILES", "attach_named_files"), "attach_named_files", True
        ),
        max_repeated_calls=_max_repeated_calls(
            pick("INVINCAT_MAX_REPEATED_CALLS", "max_repeated_calls")
        ),
        checkpoints_max_bytes=_checkpoints_max_bytes(env, file_cfg),
        database_url=_database_url(env, file_cfg),
    )


def find_project_root(start: Path) -> Path:
    """Nearest ancestor holding a project marker (`.git` first), else `start` itself."""
    start = start.resolve()
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    for candidate in (start, *start.parents):
        if any((candidate / marker).exists() for marker in PROJECT_MARKERS[1:]):
            return candidate
    return start
