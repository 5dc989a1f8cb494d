"""Episodes (summaries with the span of time they cover) for a turn: those whose words or
meaning match the question, and, when the question names a time ("yesterday", "last
Tuesday"), the episodes and messages of that window first.

Blocking (SQLite): call from worker threads.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from lobug.memory.search import MemorySearch
from lobug.memory.when import TimeWindow, time_window
from lobug.store.household import Viewer
from lobug.store.models import ScoredMessage, Summary, Vector

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
    searcher: MemorySearch,
    agent: str,
    query: str,
    vector: Vector | None,
    now: datetime,
    *,
    min_similarity: float,
    k: int = RELEVANT_EPISODES,
) -> Recalled:
    """Episodes and messages for `query` (see the module); `now` carries the user's zone.
    Those matching it are found by `searcher` (cosine, at least `min_similarity`, and BM25)."""
    if not query.strip() or k == 0:
        return Recalled()
    window = time_window(query, now)
    dated = of_window(searcher, agent, window, k)
    matches = searcher.episodes(agent, query, vector, k, min_similarity=min_similarity)
    return with_episodes(dated, tuple(hit.summary for hit in matches), k)


def of_window(
    searcher: MemorySearch, agent: str, window: TimeWindow | None, k: int = RELEVANT_EPISODES
) -> Recalled:
    """The episodes and messages of `window` (none without one): a read by time, no search."""
    if window is None:
        return Recalled()
    store = searcher.store
    dated = store.summaries_between(agent, window.start, window.end, k)
    messages = store.messages_between(agent, window.start, window.end, WINDOW_MESSAGES)
    return Recalled(tuple(dated), tuple(ScoredMessage(m, 0.0) for m in messages), window)


def with_episodes(dated: Recalled, relevant: tuple[Summary, ...], k: int) -> Recalled:
    """`dated`'s window, its episodes first, then the `relevant` ones: at most `k`."""
    episodes = {s.id: s for s in [*dated.episodes, *relevant]}
    return Recalled(tuple(list(episodes.values())[:k]), dated.messages, dated.window)


def seen_by(recalled: Recalled, viewer: Viewer) -> Recalled:
    """What `viewer` may be told of `recalled`: episodes, made from everyone's words, only
    when they read summaries; of the messages, those they may hear."""
    if viewer.reads_summaries:
        return recalled
    heard = tuple(m for m in recalled.messages if viewer.hears(m.message.person_id))
    return Recalled((), heard, recalled.window)
