"""Citations: where in the project the text that supports an entry is written.

A citation names a project-relative file, a 1-based inclusive line range, the sha256 of
those lines and a short quoted anchor (the first non-blank cited line, trimmed) that
helps find the text again after nearby edits. Governance resolves every proposed
citation against the files as they are when the batch is applied (inside the project,
not protected memory data, a readable text file, the range inside the file); the runtime
computes the hash and the anchor itself, so a proposer cannot record a hash for text
that is not there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

# The pydantic-free core (the quick reader uses it too); re-exported for existing callers.
from invincat_server.runtime.memory.citation_text import (
    ANCHOR_CHARS,
    MAX_CITATIONS,
    MAX_CITED_FILE_BYTES,
    MAX_CITED_LINES,
    CitationPaths,
    anchor_of,
    citation_label,
    read_lines,
    text_hash,
)
from invincat_server.runtime.memory.schema import path_is_nameable

__all__ = [
    "ANCHOR_CHARS",
    "MAX_CITATIONS",
    "MAX_CITED_FILE_BYTES",
    "MAX_CITED_LINES",
    "Citation",
    "CitationIn",
    "CitationResolver",
    "anchor_of",
    "read_lines",
    "text_hash",
]


class Citation(BaseModel):
    """A stored citation (unknown fields are kept, like everywhere in the store)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    path: str = Field(min_length=1, max_length=500)
    start_line: int = Field(ge=1)
    end_line: int = Field(ge=1)
    # Lenient on purpose: a hand-edited or pulled store with an odd value here must not
    # make the whole store unreadable; a wrong hash only makes the entry stale.
    sha256: str = Field(max_length=128)
    anchor: str = Field(default="", max_length=1000)

    @field_validator("path")
    @classmethod
    def _nameable(cls, path: str) -> str:
        # A path no file can have (a NUL byte) cannot be checked at all: the entry is
        # invalid, not stale (the quick reader refuses it the same way).
        if not path_is_nameable(path):
            raise ValueError("the path contains a NUL byte")
        return path

    def label(self) -> str:
        return citation_label(
            {"path": self.path, "start_line": self.start_line, "end_line": self.end_line}
        )

    def moved_to(self, path: str, start_line: int, end_line: int) -> Citation:
        """The same citation (unknown fields too) at another place: a re-anchored range."""
        return self.model_copy(
            update={"path": path, "start_line": start_line, "end_line": end_line}
        )

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class CitationIn(BaseModel):
    """A citation as a proposer gives it: the runtime fills in (or checks) hash and anchor."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str = Field(min_length=1, max_length=500)
    start_line: int = Field(ge=1)
    end_line: int = Field(ge=1)
    sha256: str | None = Field(default=None, pattern=r"^[0-9a-fA-F]{64}$")
    anchor: str | None = Field(default=None, max_length=ANCHOR_CHARS)

    @model_validator(mode="after")
    def _range(self) -> CitationIn:
        if self.end_line < self.start_line:
            raise ValueError("end_line is before start_line")
        if self.end_line - self.start_line + 1 > MAX_CITED_LINES:
            raise ValueError(f"a citation covers at most {MAX_CITED_LINES} lines")
        return self


class CitationResolver(CitationPaths):
    """Checks proposed citations against the project's files (used by governance)."""

    def __init__(
        self,
        project_root: Path,
        is_protected: Callable[[Path], bool],
        seen: frozenset[str] | None = None,
    ) -> None:
        super().__init__(project_root, is_protected)
        self._seen = seen

    def restricted_to(self, seen: Iterable[str]) -> CitationResolver:
        """A resolver that also refuses files not in `seen` (paths as given or relative to
        the project): the memory agent may cite only what its run was shown."""
        known = set()
        for raw in seen:
            rel, _ = self.relative(raw)
            if rel is not None:
                known.add(rel)
        return CitationResolver(self.root, self._is_protected, frozenset(known))

    def resolve(self, cite: CitationIn) -> tuple[Citation | None, str | None]:
        rel, why = self.relative(cite.path)
        if rel is None:
            return None, why
        if self._seen is not None and rel not in self._seen:
            return None, (
                f"{rel} was not among the files this run saw (cite only files from the "
                "project evidence or the stale entries shown)"
            )
        lines = read_lines(self.real_root / rel)
        if lines is None:
            return None, f"cited file {rel} does not exist or is not a readable text file"
        if cite.end_line > len(lines):
            return None, (
                f"cited range {cite.start_line}-{cite.end_line} is outside {rel} "
                f"({len(lines)} lines)"
            )
        cited = lines[cite.start_line - 1 : cite.end_line]
        digest = text_hash(cited)
        if cite.sha256 is not None and cite.sha256.lower() != digest:
            return None, (
                f"sha256 does not match {rel} lines {cite.start_line}-{cite.end_line} as they "
                "are now (cite the current text)"
            )
        anchor = anchor_of(cited)
        if cite.anchor is not None:
            wanted = " ".join(cite.anchor.split())
            if wanted and wanted not in " ".join(" ".join(cited).split()):
                return None, f"anchor is not in {rel} lines {cite.start_line}-{cite.end_line}"
            anchor = wanted[:ANCHOR_CHARS] or anchor
        return (
            Citation(
                path=rel,
                start_line=cite.start_line,
                end_line=cite.end_line,
                sha256=digest,
                anchor=anchor,
            ),
            None,
        )
