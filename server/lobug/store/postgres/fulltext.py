"""Keyword search: `tsvector` columns generated from the text (English stemming) with GIN
indexes, matched by a `tsquery` of any word of the query and ranked by `ts_rank_cd` (cover
density). The search fuses the rank the same way as FTS5's BM25 (divided by the best hit's),
so only the ratios between hits matter; docs/memory.md says how they differ from BM25's."""

from __future__ import annotations

from lobug.store.household import EVERYONE, Viewer
from lobug.store.models import FactHit, Message
from lobug.store.postgres.database import PostgresDatabase
from lobug.store.sql import rows
from lobug.store.sql.visibility import visible_facts
from lobug.store.sqlite.fulltext import (
    COMMON_WORD_ROWS,
    MESSAGES_COUNTED,
    common_message_rows,
    fts_words,
    words_in_at_most,
)


def ts_query(text: str) -> str:
    """A `to_tsquery` text matching any content word of `text` (function words left out, as
    for FTS5); every word single-quoted, so no user text is read as tsquery syntax."""
    return any_of(fts_words(text))


def any_of(words: list[str]) -> str:
    return " | ".join(f"'{word}'" for word in words)


class PostgresFullText(PostgresDatabase):
    common_word_rows = COMMON_WORD_ROWS

    def _uncommon_fact_words(self, text: str) -> list[str]:
        """The words of `text` (see `fts_words`) found in at most `common_word_rows` facts
        (of every agent: counting stops past the limit), as for SQLite."""
        return words_in_at_most(
            fts_words(text),
            self.common_word_rows,
            lambda word, stop: self._count(
                "SELECT COUNT(*) AS n FROM (SELECT 1 FROM facts "
                "WHERE search @@ to_tsquery('english', %s) LIMIT %s) common",
                (any_of([word]), stop),
            ),
        )

    def uncommon_message_words(self, agent: str, text: str) -> list[str]:
        """The words of `text` found in few enough of the agent's messages to tell them
        apart, as for SQLite (`COMMON_MESSAGE_SHARE`)."""
        agent_id = self.agent_id(agent)
        counted = self._count(
            "SELECT COUNT(*) AS n FROM (SELECT 1 FROM conversation_log WHERE agent_id = %s "
            "LIMIT %s) agent_rows",
            (agent_id, MESSAGES_COUNTED),
        )
        return words_in_at_most(
            fts_words(text),
            common_message_rows(counted),
            lambda word, stop: self._count(
                "SELECT COUNT(*) AS n FROM (SELECT 1 FROM conversation_log WHERE agent_id = %s "
                "AND search @@ to_tsquery('english', %s) LIMIT %s) common",
                (agent_id, any_of([word]), stop),
            ),
        )

    def keyword_messages(self, agent: str, query: str, k: int) -> list[tuple[Message, float]]:
        """The agent's messages matching any word of `query`, best rank first (score > 0)."""
        match = ts_query(query)
        if not match:
            return []
        found = self._query(
            f"SELECT {rows.MESSAGE_COLUMNS}, ts_rank_cd(search, q) AS score "
            "FROM conversation_log, to_tsquery('english', %s) q "
            "WHERE search @@ q AND agent_id = %s ORDER BY score DESC, id LIMIT %s",
            (match, self.agent_id(agent), k),
        )
        return [(rows.message(agent, row), float(row["score"])) for row in found]

    def keyword_fact_hits(
        self, agent: str, query: str, k: int, viewer: Viewer = EVERYONE
    ) -> list[FactHit]:
        """The agent's current facts `viewer` may see matching any word of `query` but the
        common ones (see `COMMON_WORD_ROWS`), best rank first."""
        match = any_of(self._uncommon_fact_words(query))
        if not match:
            return []
        visible, shown = visible_facts(viewer, mark="%s")
        found = self._query(
            "SELECT f.id, ts_rank_cd(f.search, q) AS score, f.created_at, f.user_score "
            "FROM facts f, to_tsquery('english', %s) q "
            f"WHERE f.search @@ q AND f.agent_id = %s AND f.invalidated_at IS NULL{visible} "
            "ORDER BY score DESC, f.id LIMIT %s",
            (match, self.agent_id(agent), *shown, k),
        )
        return [rows.fact_hit(row) for row in found]
