"""Stored memory entries and the store document (spec sections 1 and 2).

Every model here keeps unknown fields (`extra="allow"`): a newer invincat, a person
editing the JSON or another tool may add fields, and a rewrite by this version must
not drop them. Entries are frozen so a parsed store can be cached and shared between
batches without one batch mutating what another one sees.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from invincat_server.runtime.memory.citations import MAX_CITATIONS, Citation

# Re-exported: ids were defined here before ids.py (kept pydantic-free for the reader).
from invincat_server.runtime.memory.ids import ID_PATTERN, id_scope, new_id  # noqa: F401

# Re-exported: the store format's names stay importable from the models as before.
from invincat_server.runtime.memory.schema import (  # noqa: F401
    HOT_MIN,
    ID_PREFIX,
    MAX_AUTHOR_EMAIL,
    MAX_AUTHOR_NAME,
    MAX_BRANCH,
    MAX_CONTENT,
    MAX_ENTRY_DEPTH,
    MAX_SCORE_REASON,
    MAX_SECTION,
    READABLE_VERSIONS,
    SCOPES,
    STORE_VERSION,
    WARM_MIN,
    Scope,
    Tier,
    nesting_depth_exceeds,
    plain_label,
    tier_for,
)

Status = Literal["active", "archived"]
Confidence = Literal["low", "medium", "high"]
InvalidMarker = Literal["wrong", "superseded", "outdated", "misleading"]

# The score an op gets when it names only a tier: the middle of the band, so a later
# small rescore does not flip the tier by accident.
REPRESENTATIVE_SCORE: dict[Tier, int] = {"hot": 85, "warm": 50, "cold": 15}
DEFAULT_SCORE = 50


def now_iso() -> str:
    """Current UTC time, ISO-8601 with microseconds and a `+00:00` offset."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


def normalise_whitespace(text: str) -> str:
    """One line, single spaces: entries render as `- [Section] content` lines."""
    return " ".join(text.split())


class Evidence(BaseModel):
    """A tool result the fact was derived from (project scope)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    tool: str = Field(max_length=64)
    path: str = Field(max_length=500)
    sha256: str | None = Field(default=None, max_length=64)


def _plain(value: str | None, limit: int) -> str | None:
    if value is not None and not plain_label(value, limit):
        raise ValueError(f"must be 1-{limit} printable characters")
    return value


class Author(BaseModel):
    """Who proposed an entry (attribution.py): self-asserted, shown, never trusted."""

    model_config = ConfigDict(extra="allow", frozen=True)

    name: str
    email: str | None = None

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str | None:
        return _plain(value, MAX_AUTHOR_NAME)

    @field_validator("email")
    @classmethod
    def _email(cls, value: str | None) -> str | None:
        return _plain(value, MAX_AUTHOR_EMAIL)


class Source(BaseModel):
    """Who or what produced the entry; `thread_id` of creation never changes."""

    model_config = ConfigDict(extra="allow", frozen=True)

    thread_id: str | None = None
    anchor: str | None = None
    actor: str | None = None
    evidence: list[Evidence] = Field(default_factory=list)
    author: Author | None = None
    """Who proposed it (git's user.name/user.email, else the OS user); entries made
    before attribution have none."""
    branch: str | None = None
    """The git branch it was proposed on (project entries; none when detached)."""

    @field_validator("branch")
    @classmethod
    def _branch(cls, value: str | None) -> str | None:
        return _plain(value, MAX_BRANCH)

    @model_serializer(mode="wrap")
    def _omit_missing_attribution(
        self, handler: SerializerFunctionWrapHandler
    ) -> dict[str, object]:
        # Entries without attribution are written exactly as before it existed.
        data = handler(self)
        for key in ("author", "branch"):
            if data.get(key) is None:
                data.pop(key, None)
        return data


class Entry(BaseModel):
    """One durable fact in a store (spec section 2)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    id: str = Field(pattern=ID_PATTERN)
    scope: Scope
    section: str = Field(min_length=1, max_length=MAX_SECTION)
    content: str = Field(min_length=1, max_length=MAX_CONTENT)
    status: Status = "active"
    confidence: Confidence = "medium"
    score: int = Field(ge=0, le=100)
    tier: Tier
    score_reason: str = Field(default="", max_length=MAX_SCORE_REASON)
    invalid: InvalidMarker | None = None
    created_at: str
    updated_at: str
    last_scored_at: str | None = None
    archived_at: str | None = None
    source: Source = Field(default_factory=Source)
    citations: list[Citation] = Field(default_factory=list, max_length=MAX_CITATIONS)
    """Where the supporting text is (project scope); kept current by re-anchoring."""

    @model_serializer(mode="wrap")
    def _omit_empty_citations(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        # An uncited entry is written exactly as before citations existed, so stores stay
        # byte-identical for older versions and for `git diff`.
        data = handler(self)
        if not data.get("citations"):
            data.pop("citations", None)
        return data

    @model_validator(mode="after")
    def _bounded_depth(self) -> Entry:
        # Only unknown fields can nest freely (the declared ones are typed). Checked after
        # validation, so the JSON fast path stays in Rust; each place is offset by how deep
        # it sits in the entry's JSON, so the bound is exactly the quick reader's walk.
        places: list[tuple[dict[str, Any] | None, int]] = [
            (self.model_extra, 1),
            (self.source.model_extra, 2),
        ]
        places += [(c.model_extra, 3) for c in self.citations]
        if self.source.author is not None:
            places.append((self.source.author.model_extra, 3))
        places += [(e.model_extra, 4) for e in self.source.evidence]
        for extra, offset in places:
            for value in (extra or {}).values():
                if nesting_depth_exceeds(value, MAX_ENTRY_DEPTH - offset):
                    raise ValueError(f"the entry nests deeper than {MAX_ENTRY_DEPTH} levels")
        return self

    @model_validator(mode="after")
    def _consistent(self) -> Entry:
        # The id's format was checked by the field pattern; compare the prefix letter only
        # (cheaper than a second regex on every entry of a large store).
        if self.id[4] != ID_PREFIX[self.scope]:
            raise ValueError(f"id {self.id} does not belong to scope {self.scope!r}")
        if tier_for(self.score) != self.tier:
            raise ValueError(
                f"{self.id}: tier {self.tier!r} does not match score {self.score} "
                "(hot >= 70, warm 30-69, cold < 30)"
            )
        return self

    @property
    def injectable(self) -> bool:
        """Active, not marked invalid and not cold: what the model may see (spec section 5)."""
        return self.status == "active" and self.invalid is None and self.tier != "cold"

    def to_json(self) -> dict[str, object]:
        return self.model_dump(mode="json")


class StoreDoc(BaseModel):
    """The whole store file: `{"version": 2, "scope": ..., "items": [...]}`.

    Version 1 (older invincat) also had `next_seq`, the counter its numbered ids came
    from: still checked when present, so a damaged one is reported as before, but no
    longer used (new ids are random) and not written back."""

    model_config = ConfigDict(extra="allow")

    version: Literal[1, 2]  # schema.READABLE_VERSIONS
    scope: Scope
    next_seq: int | None = Field(default=None, ge=1)
    items: list[Entry]

    @model_validator(mode="after")
    def _items_belong_here(self) -> StoreDoc:
        seen: set[str] = set()
        for entry in self.items:
            if entry.scope != self.scope:
                raise ValueError(
                    f"entry {entry.id} has scope {entry.scope!r} in a {self.scope} store"
                )
            if entry.id in seen:
                raise ValueError(f"entry id {entry.id} appears twice")
            seen.add(entry.id)
        return self
