"""Episodes (summaries with the span of time they cover) for a turn: those whose words or
meaning match the question, and, when the question names a time ("yesterday", "last
Tuesday"), the episodes and messages of that window first.

Blocking (SQLite): call from worker threads.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from lobug.memory import search
from lobug.memory.when import TimeWindow, time_window
from lobug.store.models import Message, ScoredMessage, ScoredSummary, Summary, Vector
from lobug.store.protocol import EpisodeStore

RELEVANT_EPISODES = 3
# The messages of a named window of time that a turn sees, oldest first.
WINDOW_MESSAGES = 8


@dataclass(frozen=True)
class Recalled:
    """What a turn recalls of earlier conversations: episodes best first (those of the window
    first), the messages of the window, and the window the question named."""

    episodes: tuple[Summary, ...] = ()
    messages: tuple[ScoredMessage, ...] = ()
    window: TimeWindow | None = None


def recall(
    store: EpisodeStore,
    agent: str,
    query: str,
    vector: Vector | None,
    now: datetime,
    *,
    weights: search.SearchWeights,
    min_similarity: float,
    k: int = RELEVANT_EPISODES,
) -> Recalled:
    """Episodes and messages for `query` (see the module); `now` carries the user's zone."""
    if not query.strip() or k == 0:
        return Recalled()
    window = time_window(query, now)
    dated: list[Summary] = []
    messages: list[Message] = []
    if window is not None:
        dated = store.summaries_between(agent, window.start, window.end, k)
        messages = store.messages_between(agent, window.start, window.end, WINDOW_MESSAGES)
    matches = matching_episodes(
        store, agent, query, vector, k, weights, min_similarity=min_similarity
    )
    relevant = [hit.summary for hit in matches]
    episodes = {s.id: s for s in [*dated, *relevant]}
    return Recalled(
        tuple(list(episodes.values())[:k]),
        tuple(ScoredMessage(m, 0.0) for m in messages),
        window,
    )


def matching_episodes(
    store: EpisodeStore,
    agent: str,
    query: str,
    vector: Vector | None,
    k: int,
    weights: search.SearchWeights,
    *,
    min_similarity: float,
) -> list[ScoredSummary]:
    """Episodes by hybrid search: cosine (at least `min_similarity`) and BM25 fused as facts
    are (no recency: an old conversation is as worth recalling as a new one that matches)."""
    n = search.fusion_pool_size(k)
    by_vector = [
        (summary, similarity)
        for summary, similarity in (
            store.search_summaries(agent, vector, n) if vector is not None else []
        )
        if similarity >= min_similarity
    ]
    by_words = store.keyword_summaries(agent, query, n)
    found = {s.id: s for s, _ in [*by_vector, *by_words]}
    cosine = {s.id: score for s, score in by_vector}
    keyword = search.keyword_scores([(s.id, score) for s, score in by_words])
    fused = search.fuse([(weights.vector, cosine), (weights.keyword, keyword)], k)
    return [ScoredSummary(found[i], cosine.get(i, 0.0), score) for i, score in fused]
