"""Hybrid search: vector similarity, BM25 full-text and recency, fused linearly.

Each candidate found by either signal gets `vector * cosine + keyword * bm25 / best_bm25 +
recency * exp(-age / RECENCY_DAYS)`. On LoCoMo this beat reciprocal-rank fusion (recall@10
0.627 against 0.597 with the same candidates) and both single signals (see `make bench`).
A fact a person scored (0-10) also gets `USER_SCORE_WEIGHT * (score - 5) / 5`: up to +0.1
for a 10, down to -0.1 for a 0, none unscored.
If the embedder fails, search falls back to keywords and says so (`mode`). Episodes fuse
cosine and BM25 alone (an old conversation is as worth recalling as a new one that matches).

Hybrid message search then lets a message borrow from the turns beside it: each gains
`NEIGHBOUR_SHARE` of the better score of the messages stored just before and after it (same
device), and those neighbours of the best candidates are scored too. A question is often
answered in the turn after the one that shares its words ("What did you paint?" - "A
sunrise"): on the dev half of LoCoMo this took recall@10 from 0.667 to 0.714.

`MemorySearch` is the one entry point: the weights read once from the configuration, `now`
from its clock, the query embedded when no vector comes with it. The functions below are its
parts.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from lobug.backends.base import Embedder, Vector
from lobug.clock import Clock
from lobug.config import MemoryConfig
from lobug.store.errors import EmbeddingMismatch
from lobug.store.household import EVERYONE, Viewer
from lobug.store.models import (
    Fact,
    FactHit,
    Message,
    ScoredFact,
    ScoredMessage,
    ScoredSummary,
)
from lobug.store.protocol import Store

log = logging.getLogger(__name__)

SearchMode = Literal["hybrid", "vector", "keyword"]
CANDIDATES_PER_RESULT = 4
MIN_CANDIDATES = 40
RECENCY_DAYS = 30.0
USER_SCORE_WEIGHT = 0.1
NEIGHBOUR_SHARE = 0.7
MESSAGE_CANDIDATES_PER_RESULT = 1.5  # fewer than facts get: see `message_pool_size`
NEIGHBOURS_OF_BEST = 20  # the candidates whose adjacent turns are looked up


@dataclass(frozen=True)
class SearchWeights:
    vector: float
    keyword: float
    recency: float


@dataclass(frozen=True)
class MessageSearch:
    hits: list[ScoredMessage]
    mode: SearchMode  # what actually ran: "keyword" when embedding failed


def fuse(signals: Sequence[tuple[float, dict[int, float]]], k: int) -> list[tuple[int, float]]:
    """(id, score) best first; each signal is (weight, {id: score in [0, 1]})."""
    scores: dict[int, float] = {}
    for weight, values in signals:
        for item, value in values.items():
            scores[item] = scores.get(item, 0.0) + weight * value
    return sorted(scores.items(), key=lambda pair: (-pair[1], -pair[0]))[:k]


def keyword_scores(hits: Sequence[tuple[int, float]]) -> dict[int, float]:
    """BM25 relative to the best match of this query."""
    best = max((score for _, score in hits), default=0.0)
    return {item: score / best for item, score in hits} if best > 0 else {}


def user_scores(hits: Iterable[FactHit]) -> dict[int, float]:
    """A person's score of each scored fact, from -1 (0) through 0 (5) to 1 (10)."""
    return {h.id: (h.user_score - 5) / 5 for h in hits if h.user_score is not None}


def recency_scores(created: dict[int, float], now: float) -> dict[int, float]:
    return {
        item: math.exp(-max(0.0, now - at) / (RECENCY_DAYS * 86400)) for item, at in created.items()
    }


def with_similarities(
    lookup: Callable[[Sequence[int], Vector], dict[int, float]],
    known: dict[int, float],
    candidates: Iterable[int],
    vector: Vector | None,
) -> dict[int, float]:
    """Cosine similarity of every candidate with a stored vector: those the vector search
    found already carry it; the keyword-only ones are looked up."""
    if vector is None:
        return known
    missing = [i for i in candidates if i not in known]
    return {**known, **lookup(missing, vector)}


def fusion_pool_size(k: int) -> int:
    """How many candidates each of vector and keyword search brings to the fusion for `k`
    results."""
    return max(MIN_CANDIDATES, CANDIDATES_PER_RESULT * k)


def message_pool_size(k: int) -> int:
    """How many candidates each of vector and keyword search brings to a message search for
    `k` results: a smaller pool than facts', since the neighbours of the best come in too,
    and the weaker keyword matches of a large pool crowd them out (LoCoMo dev recall@10 0.717
    with 40 for 10 results, 0.730 with 15)."""
    return math.ceil(MESSAGE_CANDIDATES_PER_RESULT * k)


def with_neighbours(
    store: Store,
    agent: str,
    vector: Vector,
    scores: dict[int, float],
    messages: dict[int, Message],
    similarity: dict[int, float],
    weights: SearchWeights,
    now: float,
) -> list[tuple[int, float]]:
    """The candidates and the adjacent turns of the best of them, best first, each scored
    with `NEIGHBOUR_SHARE` of its better neighbour's score added (see the module). Adds the
    neighbours to `messages` and `similarity`."""
    best = sorted(scores, key=lambda i: (-scores[i], -i))[:NEIGHBOURS_OF_BEST]
    wanted = {j for i in best for j in (i - 1, i + 1) if j not in messages}
    found = store.messages_by_id(agent, sorted(wanted))
    near = {m.id: m for m in found if is_adjacent(m, messages)}
    messages.update(near)
    cosine = store.message_similarities(list(near), vector)
    similarity.update(cosine)
    recency = recency_scores({i: m.created_at for i, m in near.items()}, now)
    own = {
        **scores,
        **{i: weights.vector * cosine.get(i, 0.0) + weights.recency * recency[i] for i in near},
    }
    lifted = {
        i: score + NEIGHBOUR_SHARE * best_neighbour(i, own, messages) for i, score in own.items()
    }
    return sorted(lifted.items(), key=lambda pair: (-pair[1], -pair[0]))


def is_adjacent(message: Message, messages: dict[int, Message]) -> bool:
    """Whether `message` was stored just before or after a candidate, by the same device."""
    return any(
        (other := messages.get(message.id + step)) is not None
        and other.device_id == message.device_id
        for step in (-1, 1)
    )


def best_neighbour(item: int, scores: dict[int, float], messages: dict[int, Message]) -> float:
    """The better score of the messages stored just before and after `item` by its device."""
    device = messages[item].device_id
    return max(
        (
            scores[j]
            for j in (item - 1, item + 1)
            if j in scores and messages[j].device_id == device
        ),
        default=0.0,
    )


@dataclass(frozen=True)
class FactCandidates:
    """The current facts either signal found for a query (hits: their rows are not read),
    with each signal's value in [0, 1] (the user score in [-1, 1]) before weighting."""

    hits: dict[int, FactHit]
    cosine: dict[int, float]
    keyword: dict[int, float]
    recency: dict[int, float]
    user: dict[int, float]

    def signals(self, weights: SearchWeights) -> list[tuple[float, dict[int, float]]]:
        return [
            (weights.vector, self.cosine),
            (weights.keyword, self.keyword),
            (weights.recency, self.recency),
            (USER_SCORE_WEIGHT, self.user),
        ]


def fact_candidates(
    store: Store,
    agent: str,
    query: str,
    vector: Vector | None,
    k: int,
    *,
    min_similarity: float,
    now: float,
    viewer: Viewer = EVERYONE,
    vector_hits: Sequence[FactHit] | None = None,
) -> FactCandidates:
    """Vector hits above the similarity floor and keyword hits (a fact naming the same person
    or place is relevant however its vector scores), with every signal of each. With
    `vector_hits` (found for `vector` already), no vector search is made."""
    n = fusion_pool_size(k)
    if vector is None:
        vector_hits = ()  # keywords alone
    elif vector_hits is None:
        vector_hits = store.nearest_fact_hits(agent, vector, n, viewer)
    by_vector = [hit for hit in vector_hits if hit.score >= min_similarity]
    by_words = store.keyword_fact_hits(agent, query, n, viewer)
    hits = {h.id: h for h in [*by_vector, *by_words]}
    known = {h.id: h.score for h in by_vector}
    return FactCandidates(
        hits,
        cosine=with_similarities(store.fact_similarities, known, hits, vector),
        keyword=keyword_scores([(h.id, h.score) for h in by_words]),
        recency=recency_scores({i: h.created_at for i, h in hits.items()}, now),
        user=user_scores(hits.values()),
    )


@dataclass(frozen=True)
class FactMatch:
    """A fact search result with the parts of its score, unweighted (None: no such signal)."""

    fact: Fact
    score: float
    cosine: float | None
    keyword: float | None
    recency: float
    user: float | None


def winners(
    store: Store,
    found: FactCandidates,
    weights: SearchWeights,
    k: int,
    viewer: Viewer = EVERYONE,
) -> list[tuple[Fact, float]]:
    """The best `k` candidates fused, best first, each with its score: only their rows are
    read (a fact forgotten meanwhile, or one `viewer` may not see, is left out)."""
    fused = fuse(found.signals(weights), k)
    facts = store.facts_by_ids([i for i, _ in fused], viewer)
    return [(facts[i], score) for i, score in fused if i in facts]


@dataclass(frozen=True)
class Explained:
    """What a fact search finds, each match with the parts of its score; whether the query
    could be embedded (False: keywords alone); the weights the parts were fused with."""

    matches: list[FactMatch]
    embedded: bool
    weights: SearchWeights


class MemorySearch:
    """The one entry point to memory search (see the module): facts, messages and episodes
    of an agent for a query, with the weights of `config` (`LOBUG_SEARCH_*_WEIGHT`) and the
    recency of `clock`'s now. Blocking (the store, the embedder)."""

    def __init__(
        self, store: Store, embedder: Embedder, config: MemoryConfig, clock: Clock = time.time
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.clock = clock
        self.weights = SearchWeights(
            config.search_vector_weight, config.search_keyword_weight, config.search_recency_weight
        )

    def query_vector(self, query: str) -> Vector | None:
        """`query` embedded, or None when the embedder fails (keywords alone still find)."""
        try:
            return self.embedder.embed(query)
        except EmbeddingMismatch:  # another model than the database's: not a passing failure
            raise
        except Exception as exc:
            log.warning("embedding the query failed (%s); searching by keywords only", exc)
            return None

    def facts(
        self,
        agent: str,
        query: str,
        k: int,
        *,
        mode: SearchMode = "hybrid",
        vector: Vector | None = None,
        min_similarity: float = 0.0,
        viewer: Viewer = EVERYONE,
        vector_hits: Sequence[FactHit] | None = None,
    ) -> list[ScoredFact]:
        """Current facts for `query`, best first: by meaning and words (`hybrid`), by meaning
        alone (`vector`: words weigh nothing) or by words alone (`keyword`). `vector` is the
        query's when it was embedded already; else it is embedded here (keywords alone when
        that fails). A vector hit needs `min_similarity`; a keyword hit does not. With
        `vector_hits`, the facts a search by `vector` found already, meaning is not searched
        again: they are fused anew with the facts that name `query`'s words."""
        if mode == "keyword":
            vector = None
        elif vector is None:
            vector = self.query_vector(query)
        weights = self.weights
        if mode == "vector":
            weights = dataclasses.replace(weights, keyword=0.0)
        found = fact_candidates(
            self.store,
            agent,
            query,
            vector,
            k,
            min_similarity=min_similarity,
            now=self.clock(),
            viewer=viewer,
            vector_hits=vector_hits,
        )
        return [
            ScoredFact(fact, found.cosine.get(fact.id, 0.0))
            for fact, _ in winners(self.store, found, weights, k, viewer)
        ]

    def explained(self, agent: str, query: str, k: int, viewer: Viewer = EVERYONE) -> Explained:
        """What hybrid `facts` finds for `query`, with the parts of each score."""
        vector = self.query_vector(query)
        found = fact_candidates(
            self.store, agent, query, vector, k, min_similarity=0.0, now=self.clock(), viewer=viewer
        )
        matches = [
            FactMatch(
                fact,
                score,
                found.cosine.get(fact.id),
                found.keyword.get(fact.id),
                found.recency[fact.id],
                found.user.get(fact.id),
            )
            for fact, score in winners(self.store, found, self.weights, k, viewer)
        ]
        return Explained(matches, vector is not None, self.weights)

    def messages(
        self,
        agent: str,
        query: str,
        k: int,
        *,
        mode: SearchMode = "hybrid",
        vector: Vector | None = None,
        viewer: Viewer = EVERYONE,
    ) -> MessageSearch:
        """The agent's messages for `query` that `viewer` may hear again, best first, by
        `mode` (keywords alone when the query cannot be embedded); `vector` is the query's
        when it was embedded already."""
        if mode == "keyword":
            vector = None
        elif vector is None:
            try:
                vector = self.embedder.embed(query)
            except Exception as exc:
                log.warning("embedding failed (%s); searching by keywords only", exc)
                mode = "keyword"
        store, weights, now = self.store, self.weights, self.clock()
        n = message_pool_size(k)
        by_vector = store.search_messages(agent, vector, n) if vector is not None else []
        words = store.uncommon_message_words(agent, query) if mode != "vector" else []
        by_words = store.keyword_messages(agent, " ".join(words), n) if words else []
        messages = {h.message.id: h.message for h in by_vector}
        messages.update({m.id: m for m, _ in by_words})
        known = {h.message.id: h.similarity for h in by_vector}
        similarity = with_similarities(store.message_similarities, known, messages, vector)
        recency = weights.recency if mode == "hybrid" else 0.0
        fused = fuse(
            [
                (weights.vector, similarity),
                (weights.keyword, keyword_scores([(m.id, s) for m, s in by_words])),
                (recency, recency_scores({i: m.created_at for i, m in messages.items()}, now)),
            ],
            len(messages),
        )
        if mode == "hybrid" and vector is not None:
            scores = dict(fused)
            fused = with_neighbours(
                store, agent, vector, scores, messages, similarity, weights, now
            )
        hits = [ScoredMessage(messages[i], similarity.get(i, 0.0)) for i, _ in fused[:k]]
        heard = [hit for hit in hits if viewer.hears(hit.message.person_id)]
        return MessageSearch(heard, mode)

    def episodes(
        self, agent: str, query: str, vector: Vector | None, k: int, *, min_similarity: float
    ) -> list[ScoredSummary]:
        """Episodes for `query` by hybrid search: cosine (at least `min_similarity`) and BM25
        fused as facts are (no recency: an old conversation is as worth recalling as a new one
        that matches); `vector` None: words alone."""
        n = fusion_pool_size(k)
        by_vector = [
            (summary, similarity)
            for summary, similarity in (
                self.store.search_summaries(agent, vector, n) if vector is not None else []
            )
            if similarity >= min_similarity
        ]
        by_words = self.store.keyword_summaries(agent, query, n)
        found = {s.id: s for s, _ in [*by_vector, *by_words]}
        cosine = {s.id: score for s, score in by_vector}
        keyword = keyword_scores([(s.id, score) for s, score in by_words])
        fused = fuse([(self.weights.vector, cosine), (self.weights.keyword, keyword)], k)
        return [ScoredSummary(found[i], cosine.get(i, 0.0), score) for i, score in fused]
