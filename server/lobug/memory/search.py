"""Hybrid search: vector KNN, BM25 full-text and recency, fused by weighted reciprocal rank.

Each signal ranks its own candidates; an item scores `weight / (RRF_K + rank)` per signal it
appears in, so a hit found by both meaning and words rises above one found by either alone.
If the embedder fails, search falls back to keywords and says so (`mode`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from lobug.backends.base import Vector
from lobug.config import MemoryConfig
from lobug.memory.store import MemoryStore, ScoredFact, ScoredMessage

log = logging.getLogger(__name__)

SearchMode = Literal["hybrid", "vector", "keyword"]
RRF_K = 60
CANDIDATES_PER_RESULT = 4
MIN_CANDIDATES = 20


@dataclass(frozen=True)
class SearchWeights:
    vector: float = 1.0
    keyword: float = 1.0
    recency: float = 0.1


def weights_of(config: MemoryConfig) -> SearchWeights:
    return SearchWeights(
        config.search_vector_weight, config.search_keyword_weight, config.search_recency_weight
    )


@dataclass(frozen=True)
class MessageSearch:
    hits: list[ScoredMessage]
    mode: SearchMode  # what actually ran: "keyword" when embedding failed


def fuse(rankings: Sequence[tuple[float, Sequence[int]]], k: int) -> list[tuple[int, float]]:
    """(id, score) best first from (weight, ids best first) rankings."""
    scores: dict[int, float] = {}
    for weight, ids in rankings:
        if weight <= 0:
            continue
        for rank, item in enumerate(ids):
            scores[item] = scores.get(item, 0.0) + weight / (RRF_K + rank + 1)
    return sorted(scores.items(), key=lambda pair: (-pair[1], -pair[0]))[:k]


def candidate_count(k: int) -> int:
    return max(MIN_CANDIDATES, CANDIDATES_PER_RESULT * k)


def search_messages(
    store: MemoryStore,
    embed: Callable[[str], Vector],
    agent: str,
    query: str,
    k: int,
    *,
    weights: SearchWeights,
    mode: SearchMode = "hybrid",
) -> MessageSearch:
    vector = None
    if mode != "keyword":
        try:
            vector = embed(query)
        except Exception as exc:
            log.warning("embedding failed (%s); searching by keywords only", exc)
            mode = "keyword"
    n = candidate_count(k)
    by_vector = store.search_messages(agent, vector, n) if vector is not None else []
    by_words = store.keyword_messages(agent, query, n) if mode != "vector" else []
    messages = {h.message.id: h.message for h in by_vector}
    messages.update({m.id: m for m, _ in by_words})
    recent = sorted(messages, key=lambda i: -messages[i].created_at)
    fused = fuse(
        [
            (weights.vector, [h.message.id for h in by_vector]),
            (weights.keyword, [m.id for m, _ in by_words]),
            (weights.recency if mode == "hybrid" else 0.0, recent),
        ],
        k,
    )
    similarity = (
        store.similarities("message", [i for i, _ in fused], vector) if vector is not None else {}
    )
    hits = [ScoredMessage(messages[i], similarity.get(i, 0.0)) for i, _ in fused]
    return MessageSearch(hits, mode)


def search_facts(
    store: MemoryStore,
    agent: str,
    query: str,
    vector: Vector | None,
    k: int,
    *,
    min_similarity: float,
    weights: SearchWeights,
) -> list[ScoredFact]:
    """Current facts for a prompt: vector hits above the similarity floor, fused with keyword
    hits (a fact naming the same person or place is relevant however its vector scores)."""
    n = candidate_count(k)
    by_vector = [
        hit
        for hit in (store.search_facts(agent, vector, n) if vector is not None else [])
        if hit.similarity >= min_similarity
    ]
    by_words = store.keyword_facts(agent, query, n)
    facts = {h.fact.id: h.fact for h in by_vector}
    facts.update({f.id: f for f, _ in by_words})
    fused = fuse(
        [
            (weights.vector, [h.fact.id for h in by_vector]),
            (weights.keyword, [f.id for f, _ in by_words]),
            (weights.recency, sorted(facts, key=lambda i: -facts[i].created_at)),
        ],
        k,
    )
    similarity = {h.fact.id: h.similarity for h in by_vector}
    if vector is not None:
        missing = [i for i, _ in fused if i not in similarity]
        similarity.update(store.similarities("fact", missing, vector))
    return [ScoredFact(facts[i], similarity.get(i, 0.0)) for i, _ in fused]
