"""Facts as the surfaces show them: one fact, one just added (with the near duplicates it
made history), one with its versions and its sources."""

from __future__ import annotations

from pydantic import BaseModel, Field

from lobug.memory.evidence import heard, visible_fact, visible_versions
from lobug.read_model.common import MessageOut, iso, message_out, shown
from lobug.store.household import Viewer
from lobug.store.models import AddedFact, Fact
from lobug.store.protocol import FactReads


class FactOut(BaseModel):
    id: str
    type: str
    content: str
    subject: str | None
    relation: str | None
    object: str | None
    time_span: str | None = Field(
        description="short_term, medium_term, current, long_term or future (None: not said)"
    )
    due_at: str | None = Field(description="when a commitment is due")
    confidence: float
    user_score: int | None
    pinned: bool
    created_at: str
    valid_from: str
    invalidated_at: str | None
    forgotten_at: str | None
    purged_at: str | None
    origin: str | None = Field(description="device:<id>, api, v1 or manual")
    source_message_ids: list[str]
    superseded_by: str | None
    owner_person_id: str | None = Field(
        default=None, description="the person it belongs to (None: the household)"
    )
    scope: str = Field(default="household", description="private (its owner's) or household")
    shareable: bool = Field(default=False, description="a household fact a guest may hear")
    score: float | None = Field(
        default=None, description="found by a search (`q`): its score, highest first"
    )


class AddedFactOut(FactOut):
    superseded: list[str] = Field(description="the near duplicates this fact made history")


class FactDetailOut(FactOut):
    versions: list[FactOut] = Field(description="every version of the fact, oldest first")
    sources: list[MessageOut] = Field(description="its source messages not forgotten")


def fact_fields(fact: Fact, score: float | None = None) -> FactOut:
    return shown(
        FactOut,
        fact,
        type=fact.fact_type,
        valid_from=iso(fact.valid_from),
        superseded_by=None if fact.superseded_by is None else str(fact.superseded_by),
        score=None if score is None else round(score, 6),
    )


def added_out(added: AddedFact) -> AddedFactOut:
    return AddedFactOut(
        **fact_fields(added.fact).model_dump(), superseded=[str(i) for i in added.superseded]
    )


def fact_detail(store: FactReads, agent: str, fact: Fact) -> FactDetailOut:
    """Blocking: the fact with its versions and its sources still in the log."""
    versions = store.fact_versions(agent, fact.id)
    sources = store.messages_by_id(agent, fact.source_message_ids)
    return FactDetailOut(
        **fact_fields(fact).model_dump(),
        versions=[fact_fields(v) for v in versions],
        sources=[message_out(m) for m in sources],
    )


def visible_detail(store: FactReads, agent: str, fact_id: int, viewer: Viewer) -> FactDetailOut:
    """Blocking: `fact_detail` as `viewer` may see it: FactNotFound for a fact they may not
    see, and only the versions and source messages they may."""
    fact = visible_fact(store, agent, fact_id, viewer)
    if viewer.sees_everything:
        return fact_detail(store, agent, fact)
    versions = visible_versions(store, agent, fact.id, viewer)
    sources = heard(store.messages_by_id(agent, fact.source_message_ids), viewer)
    return FactDetailOut(
        **fact_fields(fact).model_dump(),
        versions=[fact_fields(v) for v in versions],
        sources=[message_out(m) for m in sources],
    )
