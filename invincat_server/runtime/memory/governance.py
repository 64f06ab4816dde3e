"""Phase 2 of the spec: the deterministic pipeline every proposed batch goes through.

Order (spec section 4): parse + schema -> batch rules -> target checks -> redaction ->
de-duplication -> bounds. `govern()` is pure: it gets the store state read under the
lock and returns what to write; the service does the locking, writing and journaling.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from invincat_server.runtime.memory.changeset import BatchContext, Changeset, Outcome, PendingCreate
from invincat_server.runtime.memory.citations import Citation, CitationResolver
from invincat_server.runtime.memory.dedupe import DuplicateIndex
from invincat_server.runtime.memory.errors import BatchShapeError
from invincat_server.runtime.memory.limits import MAX_OPS_PER_BATCH, MemoryLimits
from invincat_server.runtime.memory.models import (
    MAX_CONTENT,
    MAX_SECTION,
    Entry,
    id_scope,
)
from invincat_server.runtime.memory.ops import (
    ArchiveOp,
    CreateOp,
    DeleteOp,
    NoopOp,
    RescoreOp,
    RestoreOp,
    UpdateOp,
    op_name,
    parse_op,
)
from invincat_server.runtime.memory.redaction import mask_residual, redact, residual_secrets
from invincat_server.runtime.memory.report import AppliedOp
from invincat_server.runtime.memory.store import StoreState

TargetedOp = UpdateOp | RescoreOp | ArchiveOp | RestoreOp | DeleteOp


def coerce_operations(batch: object) -> list[Any]:
    """The op list of `{"operations": [...]}` or a bare list; BatchShapeError otherwise."""
    if isinstance(batch, list):
        return batch
    if isinstance(batch, dict):
        operations = batch.get("operations")
        if isinstance(operations, list):
            return operations
    raise BatchShapeError('A batch must be {"operations": [...]} or a JSON list of operations.')


def _raw_id(raw: object) -> str | None:
    value = raw.get("id") if isinstance(raw, dict) else None
    return mask_residual(value) if isinstance(value, str) else None


def _batch_rule_violation(raw_ops: list[Any]) -> str | None:
    if len(raw_ops) > MAX_OPS_PER_BATCH:
        return (
            f"batch has {len(raw_ops)} operations; at most {MAX_OPS_PER_BATCH} are allowed "
            "per batch (split it)"
        )
    # Counted on the proposal as given (even ops the schema refused): two ops on one id
    # mean the proposer is confused about that entry, and there is no "last one wins".
    named = Counter(
        raw["id"]
        for raw in raw_ops
        if isinstance(raw, dict) and raw.get("op") != "noop" and isinstance(raw.get("id"), str)
    )
    repeated = sorted(mask_residual(i) for i, n in named.items() if n > 1)
    if repeated:
        return (
            f"more than one op names {', '.join(repeated)}; each id may appear at most once "
            "per batch"
        )
    return None


def _target_problem(op: TargetedOp, entry: Entry | None, scope: str) -> str | None:
    owner = id_scope(op.id)
    if owner != scope:
        return f"{op.id} belongs to the {owner} scope, not {scope}"
    if entry is None:
        return f"no entry {op.id} in the {scope} store"
    if isinstance(op, UpdateOp) and entry.status == "archived":
        return f"{op.id} is archived; restore it before updating"
    if isinstance(op, ArchiveOp) and entry.status == "archived":
        return f"{op.id} is already archived"
    if isinstance(op, RestoreOp) and entry.status != "archived":
        return f"{op.id} is not archived; only archived entries can be restored"
    return None


def _redact_op(op: Any) -> tuple[Any | None, str | None]:
    """Redact every text field; (None, reason) when stored text still holds a secret."""
    updates: dict[str, Any] = {}
    if op.reason is not None:
        updates["reason"] = mask_residual(op.reason)
    for name, limit in (("section", MAX_SECTION), ("content", MAX_CONTENT)):
        value = getattr(op, name, None)
        if value is None:
            continue
        redacted = redact(value).text
        if residual_secrets(redacted):
            return None, f"{name} still looks like it holds a secret after redaction; not stored"
        if len(redacted) > limit:
            return None, f"{name} is longer than {limit} characters after redaction"
        updates[name] = redacted
    if getattr(op, "score_reason", None):
        updates["score_reason"] = mask_residual(op.score_reason)[:200]
    if isinstance(op, CreateOp) and op.evidence:
        updates["evidence"] = [
            ev.model_copy(update={"path": mask_residual(ev.path), "tool": mask_residual(ev.tool)})
            for ev in op.evidence
        ]
    return op.model_copy(update=updates), None


def _resolve_citations(
    op: Any, scope: str, resolver: CitationResolver | None
) -> tuple[list[Citation] | None, str | None]:
    """Check an op's citations against the project files as they are now.

    (citations with the runtime's hash and anchor, None); (None, None) when the op does
    not set citations; (None, why) when the op must be dropped.
    """
    proposed = getattr(op, "citations", None)
    if proposed is None:
        return None, None
    if not proposed:
        return [], None
    if scope != "project":
        return None, "citations are for project entries only (user memory is not per project)"
    if resolver is None:
        return None, "citations cannot be checked here (no project directory)"
    resolved: list[Citation] = []
    for number, cite in enumerate(proposed, 1):
        citation, why = resolver.resolve(cite)
        if citation is None:
            return None, f"citation {number}: {why}"
        anchor = redact(citation.anchor).text
        if residual_secrets(anchor):
            anchor = ""  # the anchor only helps re-finding the text; never store a secret
        resolved.append(
            citation.model_copy(update={"path": mask_residual(citation.path), "anchor": anchor})
        )
    return resolved, None


def _apply_targeted(
    cs: Changeset, index: int, op: TargetedOp, citations: list[Citation] | None = None
) -> None:
    entry = cs.work.entries[op.id]
    now = cs.ctx.time
    note: dict[str, Any] = {"reason": op.reason} if op.reason else {}
    if isinstance(op, DeleteOp):
        cs.remove(op.id, AppliedOp.of(op="delete", id=op.id, index=index, **note))
        return
    changes: dict[str, Any] = {"updated_at": now}
    if isinstance(op, UpdateOp):
        changes |= _update_changes(op, citations)
    elif isinstance(op, RescoreOp):
        changes |= {"score": op.score, "tier": op.tier, "score_reason": op.score_reason}
        changes["last_scored_at"] = now
        if op.invalid is not None:
            changes["invalid"] = op.invalid
    elif isinstance(op, ArchiveOp):
        changes |= {"status": "archived", "archived_at": now}
        if op.invalid is not None:
            changes["invalid"] = op.invalid
    elif isinstance(op, RestoreOp):
        changes |= {"status": "active", "archived_at": None}
    applied = AppliedOp.of(op=op.op, id=op.id, index=index, **note)
    cs.put(entry.model_copy(update=changes), applied)
    if isinstance(op, RestoreOp):
        cs.restored.append((op.id, applied))


def _update_changes(op: UpdateOp, citations: list[Citation] | None) -> dict[str, Any]:
    """The fields an update sets: only those it carries."""
    fields: dict[str, Any] = {
        "content": op.content,
        "confidence": op.confidence,
        "score_reason": op.score_reason,
    }
    changes = {key: value for key, value in fields.items() if value is not None}
    if citations is not None:
        changes["citations"] = citations
    return changes


def _create_fields(
    op: CreateOp, ctx: BatchContext, citations: list[Citation] | None
) -> dict[str, Any]:
    return {
        "citations": [c.model_dump(mode="json") for c in citations or []],
        "scope": ctx.scope,
        "section": op.section,
        "content": op.content,
        "status": "active",
        "confidence": op.confidence,
        "score": op.score,
        "tier": op.tier,
        "score_reason": op.score_reason or "",
        "invalid": None,
        "created_at": ctx.time,
        "updated_at": ctx.time,
        "last_scored_at": ctx.time,
        "archived_at": None,
        "source": {
            "thread_id": ctx.thread_id,
            "anchor": ctx.anchor,
            "actor": ctx.actor,
            "evidence": [ev.model_dump(exclude_none=True) for ev in op.evidence],
            "author": ctx.author,
            "branch": ctx.branch,
        },
    }


def govern(
    raw_ops: list[Any],
    state: StoreState,
    ctx: BatchContext,
    limits: MemoryLimits,
    citations: CitationResolver | None = None,
) -> Outcome:
    """Run the pipeline over a proposal against `state` (read under the lock).

    `citations` checks cited files (inside the project, existing, range valid); without
    it, an op that carries citations is dropped.
    """
    cs = Changeset(state, ctx)
    parsed = _parse_ops(cs, raw_ops)  # 1. parse + schema
    violation = _batch_rule_violation(raw_ops)  # 2. batch rules
    if violation:
        return cs.reject(violation)
    targeted = _check_targets(cs, parsed, state, ctx)  # 3. target checks
    # 4. redaction (+ citation checks, which read files)
    ready, cited = _clean_ops(cs, targeted, ctx, citations)
    for index, op in ready:  # everything but creates, so de-dup sees the batch's effect
        if not isinstance(op, CreateOp):
            _apply_targeted(cs, index, op, cited.get(index))
    _dedupe_creates(cs, ready, ctx, cited)  # 5. de-duplication of creates
    outcome = cs.finish(limits)  # 6. bounds (+ id allocation)
    created = {a.index: a.id for a in outcome.applied if a.op == "create"}
    for applied in outcome.applied:
        extra = applied.model_extra or {}
        if applied.op == "noop" and "duplicate_of_index" in extra:
            applied.id = created.get(extra["duplicate_of_index"])
    return outcome


def _parse_ops(cs: Changeset, raw_ops: list[Any]) -> list[tuple[int, Any]]:
    parsed: list[tuple[int, Any]] = []
    for index, raw in enumerate(raw_ops):
        op, why = parse_op(raw)
        if op is None:
            cs.drop(index, op_name(raw), mask_residual(why or "invalid op"), _raw_id(raw))
        else:
            parsed.append((index, op))
    return parsed


def _check_targets(
    cs: Changeset, parsed: list[tuple[int, Any]], state: StoreState, ctx: BatchContext
) -> list[tuple[int, Any]]:
    targeted: list[tuple[int, Any]] = []
    for index, op in parsed:
        if isinstance(op, NoopOp):
            note = {"reason": mask_residual(op.reason)} if op.reason else {}
            cs.applied.append(AppliedOp.of(op="noop", index=index, **note))
            continue
        if op.scope != ctx.scope:
            cs.drop(index, op.op, f"op scope {op.scope!r} does not match the {ctx.scope} store")
            continue
        if not isinstance(op, CreateOp):
            problem = _target_problem(op, state.entries.get(op.id), ctx.scope)
            if problem:
                cs.drop(index, op.op, problem, op.id)
                continue
        targeted.append((index, op))
    return targeted


def _clean_ops(
    cs: Changeset,
    targeted: list[tuple[int, Any]],
    ctx: BatchContext,
    citations: CitationResolver | None,
) -> tuple[list[tuple[int, Any]], dict[int, list[Citation] | None]]:
    ready: list[tuple[int, Any]] = []
    cited: dict[int, list[Citation] | None] = {}
    for index, op in targeted:
        clean, why = _redact_op(op)
        if clean is None:
            cs.drop(index, op.op, why or "holds a secret", getattr(op, "id", None))
            continue
        resolved, why = _resolve_citations(clean, ctx.scope, citations)
        if why is not None:
            cs.drop(index, op.op, mask_residual(why), getattr(op, "id", None))
            continue
        cited[index] = resolved
        ready.append((index, clean))
    return ready, cited


def _dedupe_creates(
    cs: Changeset,
    ready: list[tuple[int, Any]],
    ctx: BatchContext,
    cited: dict[int, list[Citation] | None],
) -> None:
    has_creates = any(isinstance(op, CreateOp) for _, op in ready)
    dupes = DuplicateIndex(
        (e.id, e.content)
        for e in (cs.work.entries.values() if has_creates else ())
        if e.status == "active" and e.invalid is None
    )
    for index, op in ready:
        if not isinstance(op, CreateOp):
            continue
        duplicate = dupes.find(op.content)
        if duplicate is not None:
            key, similarity = duplicate
            ref: dict[str, Any] = (
                {"duplicate_of_index": int(key[1:])} if key.startswith("#") else {"id": key}
            )
            cs.applied.append(
                AppliedOp.of(
                    op="noop",
                    index=index,
                    proposed_op="create",
                    reason=f"near-duplicate of {key} (similarity {similarity:.2f})",
                    **ref,
                )
            )
            continue
        cs.pending.append(
            PendingCreate(
                _create_fields(op, ctx, cited.get(index)),
                AppliedOp.of(op="create", index=index),
                index,
            )
        )
        dupes.add(f"#{index}", op.content)
