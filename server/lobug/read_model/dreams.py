"""Dreams (`memory/dream.py`) as the surfaces show them: a stored dream with its diary, or
the plan of a dry run or a skipped one."""

from __future__ import annotations

from pydantic import BaseModel

from lobug.memory.dream import DreamPlan, DreamResult
from lobug.read_model.common import iso, iso_or_none
from lobug.store.models import Dream, DreamChange


class DreamChangeOut(BaseModel):
    """A fact the dream retired: `merge` into, or `settle` by, the kept fact; or `retire`."""

    action: str
    fact_id: str
    kept_id: str | None
    reason: str


class DreamOut(BaseModel):
    """A stored dream, or (`id` null) the plan of a dry run or a skipped one."""

    id: str | None
    agent: str
    dry_run: bool = False
    skipped: bool = False
    started_at: str | None = None
    finished_at: str | None = None
    undone_at: str | None = None
    changes: list[DreamChangeOut]
    base_memory_rewritten: bool
    diary: str


def change_out(change: DreamChange) -> DreamChangeOut:
    return DreamChangeOut(
        action=change.action,
        fact_id=str(change.fact_id),
        kept_id=str(change.kept_id) if change.kept_id is not None else None,
        reason=change.reason,
    )


def dream_out(dream: Dream) -> DreamOut:
    return DreamOut(
        id=str(dream.id),
        agent=dream.agent,
        started_at=iso(dream.started_at),
        finished_at=iso(dream.finished_at),
        undone_at=iso_or_none(dream.undone_at),
        changes=[change_out(c) for c in dream.changes],
        base_memory_rewritten=dream.base_memory_before is not None,
        diary=dream.diary,
    )


def plan_out(plan: DreamPlan, *, dry_run: bool, skipped: bool) -> DreamOut:
    return DreamOut(
        id=None,
        agent=plan.agent,
        dry_run=dry_run,
        skipped=skipped,
        changes=[change_out(c) for c in plan.changes],
        base_memory_rewritten=plan.rewrite_base_memory,
        diary=plan.diary,
    )


def result_out(result: DreamResult, *, dry_run: bool) -> DreamOut:
    if result.dream is not None:
        return dream_out(result.dream)
    return plan_out(result.plan, dry_run=dry_run, skipped=result.skipped)
