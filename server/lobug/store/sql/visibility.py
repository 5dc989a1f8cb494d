"""Which facts a viewer may see (`store/household.py`'s `Viewer`): the one rule, written
once as a condition that every fact query serving a person adds to its WHERE."""

from __future__ import annotations

from typing import Any

from lobug.store.household import HOUSEHOLD, Viewer

# How many nearest vectors a search reads for a viewer who may not see every fact, per fact
# wanted: vectors are ranked before the rule applies (the in-memory and HNSW indexes know no
# owners), so a person's search looks further and keeps the first `k` they may see.
RESTRICTED_OVERFETCH = 4
RESTRICTED_EXTRA = 32


def visible_facts(viewer: Viewer, alias: str = "f", mark: str = "?") -> tuple[str, list[Any]]:
    """` AND (...)`: the facts of table alias `alias` that `viewer` may see, and its
    parameters (`mark`: the statement's placeholder). Everyone (curators, maintenance, a
    household without people): all. A person: the household's and their own private ones.
    A guest: household facts marked shareable."""
    if viewer.sees_everything:
        return "", []
    if viewer.kind == "person":
        return (
            f" AND ({alias}.scope = '{HOUSEHOLD}' OR {alias}.owner_person_id = {mark})",
            [viewer.person_id],
        )
    return f" AND ({alias}.scope = '{HOUSEHOLD}' AND {alias}.shareable = 1)", []


def nearest_to_read(viewer: Viewer, k: int) -> int:
    """How many nearest vectors to read for `k` facts `viewer` may see."""
    return k if viewer.sees_everything else k * RESTRICTED_OVERFETCH + RESTRICTED_EXTRA
