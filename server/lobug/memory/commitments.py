"""Commitments: what the user promised to do, found when they ask about it.

"What did I promise to do?" shares no words with "The user will call Anna on Friday", and
little meaning, so hybrid search alone misses it. A question about promises, plans or things
to do (`asks_about_commitments`, whose words are `language/statements.py`'s) brings the
agent's current commitments into its relevant facts, those due soonest first (then the newest
without a due time), ahead of what search found; each is written with when it is due.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import tzinfo

from lobug.clock import local_time
from lobug.language.statements import asks_about_commitments
from lobug.store.household import EVERYONE, Viewer
from lobug.store.models import Fact, FactQuery, ScoredFact
from lobug.store.protocol import CurationStore

COMMITMENT = "commitment"
# At most this many commitments join a turn's relevant facts.
MAX_COMMITMENTS = 5
# How many of the newest commitments are read to choose them.
READ_COMMITMENTS = 50


def with_commitments(
    store: CurationStore,
    agent: str,
    query: str,
    hits: Sequence[ScoredFact],
    viewer: Viewer = EVERYONE,
) -> tuple[ScoredFact, ...]:
    """`hits`, after the current commitments `viewer` may see when `query` asks about them."""
    if not asks_about_commitments(query):
        return tuple(hits)
    found, _ = store.list_facts(
        agent, FactQuery(fact_type=COMMITMENT, limit=READ_COMMITMENTS, viewer=viewer)
    )
    chosen = sorted(found, key=lambda f: (f.due_at is None, f.due_at or 0.0, -f.id))
    promised = [ScoredFact(fact, 1.0) for fact in chosen[:MAX_COMMITMENTS]]
    ids = {hit.fact.id for hit in promised}
    return (*promised, *(hit for hit in hits if hit.fact.id not in ids))


def fact_line(fact: Fact, zone: tzinfo | None) -> str:
    """A fact as a prompt writes it: its text as one JSON string, and a commitment's due day
    after it (`"The user will call Anna." (due Fri 2024-03-15)`)."""
    text = json.dumps(fact.content.strip(), ensure_ascii=False)
    if fact.due_at is None:
        return text
    return f"{text} (due {local_time(fact.due_at, zone).strftime('%a %Y-%m-%d')})"
