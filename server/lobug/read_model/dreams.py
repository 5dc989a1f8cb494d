"""Dreams (`memory/dream.py`) as the surfaces show them: a stored dream with its diary, or
the plan of a dry run or a skipped one."""

from __future__ import annotations

from pydantic import BaseModel

from lobug.memory.dream import DreamPlan, DreamResult
from lobug.read_model.common import shown
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
    return shown(DreamChangeOut, change)


def dream_out(dream: Dream) -> DreamOut:
    rewritten = dream.base_memory_before is not None
    changes = [change_out(c) for c in dream.changes]
    return shown(DreamOut, dream, changes=changes, base_memory_rewritten=rewritten)


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
