"""The seven operations a batch may carry and the operation-field matrix (spec section 3).

Each operation is a model with `extra="forbid"`: a field outside an op's "required" and
"may set" columns is a validation error, so the op is dropped with a reason that says
which field and why, instead of being silently ignored. `reason` is accepted on every op
as a free-text annotation for the journal; it is never stored on an entry.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)

from invincat_server.runtime.memory.citations import MAX_CITATIONS, CitationIn
from invincat_server.runtime.memory.ids import ID_FORMS
from invincat_server.runtime.memory.models import (
    DEFAULT_SCORE,
    ID_PATTERN,
    MAX_CONTENT,
    MAX_SCORE_REASON,
    MAX_SECTION,
    REPRESENTATIVE_SCORE,
    Confidence,
    InvalidMarker,
    Scope,
    Tier,
    normalise_whitespace,
    tier_for,
)

OP_NAMES = ("create", "update", "rescore", "archive", "restore", "delete", "noop")
_TIMESTAMPS = ("created_at", "updated_at", "last_scored_at", "archived_at")

# Why a field is refused, per op: the hint tells the proposer what to do instead.
_FORBIDDEN_HINTS: dict[str, dict[str, str]] = {
    "create": {
        "id": "ids are assigned by the runtime",
        "status": "new entries are always active",
        **{ts: "timestamps are set by the runtime" for ts in _TIMESTAMPS},
    },
    "update": {
        "section": "section is immutable; delete and create instead",
        "status": "use archive or restore",
        "score": "use rescore",
        "tier": "use rescore",
        "invalid": "use rescore or archive to mark an entry invalid",
    },
    "rescore": {
        "content": "use update",
        "section": "section is immutable; delete and create instead",
    },
    "archive": {"content": "archive does not change content; use update"},
    "restore": {"content": "restore does not change content; use update after restoring"},
    "delete": {"*": "delete carries only scope, id and reason"},
}
_IMMUTABLE = {"id", "scope", "section", "created_at", "source"}


class _Op(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    reason: str | None = Field(default=None, max_length=500)


def _clean(value: object) -> object:
    return normalise_whitespace(value) if isinstance(value, str) else value


def _score_and_tier(score: int | None, tier: Tier | None) -> tuple[int | None, Tier | None]:
    """Make score and tier consistent; raise when both are given and disagree."""
    if score is not None and tier is not None and tier_for(score) != tier:
        raise ValueError(
            f"tier {tier!r} does not match score {score} (hot >= 70, warm 30-69, cold < 30)"
        )
    if score is None and tier is not None:
        score = REPRESENTATIVE_SCORE[tier]
    if score is not None:
        tier = tier_for(score)
    return score, tier


class EvidenceIn(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    tool: str = Field(min_length=1, max_length=64)
    path: str = Field(min_length=1, max_length=500)
    sha256: str | None = Field(default=None, pattern=r"^[0-9a-fA-F]{64}$")


class CreateOp(_Op):
    op: Literal["create"]
    scope: Scope
    section: str = Field(min_length=1, max_length=MAX_SECTION)
    content: str = Field(min_length=1, max_length=MAX_CONTENT)
    confidence: Confidence = "medium"
    score: int | None = Field(default=None, ge=0, le=100)
    tier: Tier | None = None
    score_reason: str | None = Field(default=None, max_length=MAX_SCORE_REASON)
    evidence: list[EvidenceIn] = Field(default_factory=list, max_length=5)
    citations: list[CitationIn] = Field(default_factory=list, max_length=MAX_CITATIONS)

    _norm = field_validator("section", "content", "score_reason", mode="before")(_clean)

    @model_validator(mode="after")
    def _tier(self) -> CreateOp:
        score, tier = _score_and_tier(self.score, self.tier)
        if score is None:
            score, tier = DEFAULT_SCORE, tier_for(DEFAULT_SCORE)
        object.__setattr__(self, "score", score)
        object.__setattr__(self, "tier", tier)
        return self


class UpdateOp(_Op):
    op: Literal["update"]
    scope: Scope
    id: str = Field(pattern=ID_PATTERN)
    content: str | None = Field(default=None, min_length=1, max_length=MAX_CONTENT)
    confidence: Confidence | None = None
    score_reason: str | None = Field(default=None, max_length=MAX_SCORE_REASON)
    citations: list[CitationIn] | None = Field(default=None, max_length=MAX_CITATIONS)
    """Replaces the entry's citations (an empty list removes them)."""

    _norm = field_validator("content", "score_reason", mode="before")(_clean)

    @model_validator(mode="after")
    def _changes_something(self) -> UpdateOp:
        if self.content is None and self.confidence is None and self.citations is None:
            raise ValueError("update needs content and/or confidence (or citations)")
        return self


class RescoreOp(_Op):
    op: Literal["rescore"]
    scope: Scope
    id: str = Field(pattern=ID_PATTERN)
    score: int | None = Field(default=None, ge=0, le=100)
    tier: Tier | None = None
    score_reason: str = Field(min_length=1, max_length=MAX_SCORE_REASON)
    invalid: InvalidMarker | None = None

    _norm = field_validator("score_reason", mode="before")(_clean)

    @model_validator(mode="after")
    def _tier(self) -> RescoreOp:
        if self.score is None and self.tier is None:
            raise ValueError("rescore needs score or tier")
        score, tier = _score_and_tier(self.score, self.tier)
        object.__setattr__(self, "score", score)
        object.__setattr__(self, "tier", tier)
        return self


class ArchiveOp(_Op):
    op: Literal["archive"]
    scope: Scope
    id: str = Field(pattern=ID_PATTERN)
    reason: str = Field(min_length=1, max_length=500)
    invalid: InvalidMarker | None = None


class RestoreOp(_Op):
    op: Literal["restore"]
    scope: Scope
    id: str = Field(pattern=ID_PATTERN)
    reason: str = Field(min_length=1, max_length=500)


class DeleteOp(_Op):
    op: Literal["delete"]
    scope: Scope
    id: str = Field(pattern=ID_PATTERN)
    reason: str = Field(min_length=1, max_length=500)


class NoopOp(_Op):
    op: Literal["noop"]


Operation = Annotated[
    CreateOp | UpdateOp | RescoreOp | ArchiveOp | RestoreOp | DeleteOp | NoopOp,
    Field(discriminator="op"),
]
TargetedOp = UpdateOp | RescoreOp | ArchiveOp | RestoreOp | DeleteOp
_ADAPTER: TypeAdapter[Any] = TypeAdapter(Operation)


def _field_problem(op: str, field: str, err_type: str, msg: str) -> str:
    if err_type == "extra_forbidden":
        hints = _FORBIDDEN_HINTS.get(op, {})
        hint = hints.get(field) or hints.get("*")
        if hint is None and field in _IMMUTABLE:
            hint = f"{field} can never be changed"
        return f"{op} must not carry '{field}'" + (f" ({hint})" if hint else "")
    if err_type == "missing":
        return f"{op} requires '{field}'"
    if err_type == "string_pattern_mismatch" and field == "id":
        return f"id: not a memory id ({ID_FORMS})"
    return f"{field}: {msg}"


def describe_errors(raw: object, exc: ValidationError) -> str:
    """A human reason built from error types and locations only.

    Never from `input` values: a refused field may hold a secret, and this reason goes to
    the journal and the report.
    """
    op = raw.get("op") if isinstance(raw, dict) else None
    op_name = op if isinstance(op, str) and op in OP_NAMES else "op"
    problems: list[str] = []
    for err in exc.errors(include_input=False, include_url=False):
        err_type = err["type"]
        if err_type == "union_tag_invalid":
            problems.append(f"unknown op (allowed: {', '.join(OP_NAMES)})")
            continue
        if err_type == "union_tag_not_found":
            problems.append(f"missing 'op' (one of: {', '.join(OP_NAMES)})")
            continue
        loc = [str(part) for part in err["loc"]]
        if loc and loc[0] == op_name:
            loc = loc[1:]  # the discriminated union prefixes the tag
        field = ".".join(loc) or op_name
        msg = str(err["msg"]).removeprefix("Value error, ")
        problems.append(msg if not loc else _field_problem(op_name, field, err_type, msg))
    return "; ".join(dict.fromkeys(problems))


def parse_op(raw: object) -> tuple[Any | None, str | None]:
    """(operation, None) when `raw` fits its row of the matrix, else (None, reason)."""
    if not isinstance(raw, dict):
        return None, f"an operation must be a JSON object, got {type(raw).__name__}"
    try:
        return _ADAPTER.validate_python(raw), None
    except ValidationError as exc:
        return None, describe_errors(raw, exc)


def op_name(raw: object) -> str:
    """The op name for reports; `?` when the proposal did not give a known one."""
    op = raw.get("op") if isinstance(raw, dict) else None
    return op if isinstance(op, str) and op in OP_NAMES else "?"
