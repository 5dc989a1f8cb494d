"""Keyword search: FTS5 indexes over messages and facts (kept in step by triggers, see the
schema), ranked by BM25."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable

from lobug.language.text import FUNCTION_WORDS
from lobug.store.household import EVERYONE, Viewer
from lobug.store.models import FactHit, Message
from lobug.store.sql import rows
from lobug.store.sql.visibility import visible_facts
from lobug.store.sqlite.database import SQLiteDatabase

log = logging.getLogger(__name__)

FTS_TABLES = ("messages_fts", "facts_fts", "summaries_fts")
_FTS_WORD = re.compile(r"\w+", re.UNICODE)
COMMON_WORD_ROWS = 1000
"""A word of the query found in more rows of the index than this is left out of the keyword
search of facts, as function words are: BM25 gives it little weight, yet it costs the most
(on 100k facts, a word in 14k of them took one search from under 1 ms to over 100 ms)."""

COMMON_MESSAGE_SHARE = 0.05
COMMON_MESSAGE_MIN_ROWS = 20
MESSAGES_COUNTED = 20_000
"""A word of a message search found in more than `COMMON_MESSAGE_SHARE` of the agent's
messages (at least `COMMON_MESSAGE_MIN_ROWS`; the messages are counted up to
`MESSAGES_COUNTED`, so at most 1,000, as for facts) is left out of its keyword side: a
speaker's name or a word said every day matches short greetings best (BM25 favours short
rows) and pushes out what was asked about. On the dev half of LoCoMo recall@10 went from
0.730 to 0.740 (0.657 to 0.687 on the test half); shares of 2, 10 and 20% did worse on dev."""


def fts_words(text: str) -> list[str]:
    """The distinct words of `text` but common English function words (unless there is
    nothing else), at most 64.

    Function words add little to BM25 but match most rows: on 100k facts they made a keyword
    search several times slower."""
    words = dict.fromkeys(w.lower() for w in _FTS_WORD.findall(text) if len(w) > 1)
    content = [w for w in words if w not in FUNCTION_WORDS] or list(words)
    return content[:64]


def any_of(words: list[str]) -> str:
    """An FTS5 query matching any of `words`, every word quoted, so no user text is read as
    FTS syntax."""
    return " OR ".join(f'"{w}"' for w in words)


def common_message_rows(agent_messages: int) -> int:
    """Rows of the agent's messages above which a word is too common to search by (see
    `COMMON_MESSAGE_SHARE`), for an agent with `agent_messages` messages."""
    return max(COMMON_MESSAGE_MIN_ROWS, int(COMMON_MESSAGE_SHARE * agent_messages))


def words_in_at_most(
    words: list[str], limit: int, rows_with: Callable[[str, int], int]
) -> list[str]:
    """The `words` found in at most `limit` rows; `rows_with(word, stop)` counts a word's
    rows, stopping at `stop`."""
    return [word for word in words if rows_with(word, limit + 1) <= limit]


def fts_query(text: str) -> str:
    """An FTS5 query matching any word of `text` (see `fts_words`)."""
    return any_of(fts_words(text))


class SQLiteFullText(SQLiteDatabase):
    common_word_rows = COMMON_WORD_ROWS

    def _erase_free_pages(self, *, rewrite_file: bool = False) -> None:
        """After a purge: merge the full-text indexes (their old segments still hold the
        erased words), then checkpoint the WAL into the file and truncate it. With
        `secure_delete` on, freed pages and deleted cells are zeroed. That is not all: a
        merged index can keep an erased word in a block of its own, and a page SQLite
        rebuilds (balancing a b-tree) keeps old bytes in its unused gap (measured: 1 to 3
        copies of 40 or 400 purged secrets), so a finished purge job or deletion of an
        agent (`rewrite_file`) rebuilds the full-text indexes from their tables and rewrites
        the file whole (VACUUM: fresh pages, free ones dropped), checkpointed again."""
        command = "rebuild" if rewrite_file else "optimize"
        with self._lock:
            for name in FTS_TABLES:
                self._conn.execute(f"INSERT INTO {name}({name}) VALUES ('{command}')")
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            if rewrite_file:
                self._conn.execute("VACUUM")
                self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def _uncommon_words(self, table: str, text: str) -> list[str]:
        """The words of `text` (see `fts_words`) found in at most `common_word_rows` rows of
        the full-text index `table` (of every agent: counting stops past the limit)."""
        return words_in_at_most(
            fts_words(text),
            self.common_word_rows,
            lambda word, stop: self._count(
                f"SELECT COUNT(*) AS n FROM (SELECT 1 FROM {table} WHERE {table} MATCH ? LIMIT ?)",
                (f'"{word}"', stop),
            ),
        )

    def uncommon_message_words(self, agent: str, text: str) -> list[str]:
        """The words of `text` (see `fts_words`) found in few enough of the agent's messages
        to tell them apart (see `COMMON_MESSAGE_SHARE`)."""
        agent_id = self.agent_id(agent)
        counted = self._count(
            "SELECT COUNT(*) AS n FROM (SELECT 1 FROM conversation_log WHERE agent_id = ? LIMIT ?)",
            (agent_id, MESSAGES_COUNTED),
        )
        return words_in_at_most(
            fts_words(text),
            common_message_rows(counted),
            lambda word, stop: self._count(
                "SELECT COUNT(*) AS n FROM (SELECT 1 FROM messages_fts JOIN conversation_log l "
                "ON l.id = messages_fts.rowid WHERE messages_fts MATCH ? AND l.agent_id = ? "
                "LIMIT ?)",
                (f'"{word}"', agent_id, stop),
            ),
        )

    def repair_full_text_search(self) -> list[str]:
        """Rebuild any full-text index that fails its integrity check (derived data: the
        tables it indexes are the truth). Returns the names of the rebuilt indexes."""
        rebuilt = []
        with self._lock:
            for name in FTS_TABLES:
                try:
                    self._conn.execute(f"INSERT INTO {name}({name}) VALUES ('integrity-check')")
                except Exception as exc:
                    log.warning("full-text index %s is damaged (%s); rebuilding it", name, exc)
                    self._conn.execute(f"INSERT INTO {name}({name}) VALUES ('rebuild')")
                    rebuilt.append(name)
        return rebuilt

    def keyword_messages(self, agent: str, query: str, k: int) -> list[tuple[Message, float]]:
        """The agent's messages matching any word of `query`, best BM25 first (score > 0)."""
        match = fts_query(query)
        if not match:
            return []
        found = self._query(
            f"SELECT {rows.message_columns('l')}, -bm25(messages_fts) AS score FROM messages_fts "
            "JOIN conversation_log l ON l.id = messages_fts.rowid "
            "WHERE messages_fts MATCH ? AND l.agent_id = ? ORDER BY bm25(messages_fts) LIMIT ?",
            (match, self.agent_id(agent), k),
        )
        return [(rows.message(agent, row), float(row["score"])) for row in found]

    def keyword_fact_hits(
        self, agent: str, query: str, k: int, viewer: Viewer = EVERYONE
    ) -> list[FactHit]:
        """The agent's current facts `viewer` may see matching any word of `query` but the
        common ones (see `COMMON_WORD_ROWS`), best BM25 first."""
        match = any_of(self._uncommon_words("facts_fts", query))
        if not match:
            return []
        visible, shown = visible_facts(viewer)
        found = self._query(
            "SELECT f.id, -bm25(facts_fts) AS score, f.created_at, f.user_score "
            "FROM facts_fts JOIN facts f ON f.id = facts_fts.rowid "
            f"WHERE facts_fts MATCH ? AND f.agent_id = ? AND f.invalidated_at IS NULL{visible} "
            "ORDER BY bm25(facts_fts) LIMIT ?",
            (match, self.agent_id(agent), *shown, k),
        )
        return [rows.fact_hit(row) for row in found]
