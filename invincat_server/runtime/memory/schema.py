"""The store format's plain constants and the tier rule, without pydantic: the models
(models.py) validate with them and the quick reader (reader.py) reads with them, so the
two cannot drift apart."""

from __future__ import annotations

from typing import Literal

Scope = Literal["user", "project"]
Tier = Literal["hot", "warm", "cold"]

SCOPES: tuple[Scope, ...] = ("user", "project")
STORE_VERSION = 1
HOT_MIN, WARM_MIN = 70, 30
MAX_SECTION, MAX_CONTENT, MAX_SCORE_REASON = 80, 500, 200
ID_PREFIX: dict[str, str] = {"user": "u", "project": "p"}
"""The letter after `mem_` in an entry id of each scope."""


def tier_for(score: int) -> Tier:
    if score >= HOT_MIN:
        return "hot"
    if score >= WARM_MIN:
        return "warm"
    return "cold"
