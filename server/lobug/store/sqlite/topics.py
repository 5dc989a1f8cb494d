"""Topics (`memory/topics.py`): the material they are built from (the current facts and the
embedded episodes, with their vectors), an agent's topics replaced as a whole in one
transaction and read back, and the topics dropped when a fact or episode they hold is
forgotten (`drop_topics_holding`, called by forgetting in the same transaction)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from lobug.store.models import Summary, Topic, TopicDraft, Vector
from lobug.store.sql import rows
from lobug.store.sql.dialect import marks
from lobug.store.sqlite.episodes import SQLiteEpisodes
from lobug.store.topic_reads import TopicReads


def drop_topics_holding(conn: Any, kind: str, ids: Sequence[int]) -> None:
    """Delete the topics made from any of the facts or episodes `ids` (`kind`), members too."""
    if ids:
        conn.execute(
            "DELETE FROM topics WHERE id IN (SELECT topic_id FROM topic_members "
            f"WHERE kind = ? AND member_id IN ({marks(ids)}))",
            (kind, *ids),
        )


def _held(conn: Any, agent_id: int, drafts: Sequence[TopicDraft]) -> set[tuple[str, int]]:
    """The members of `drafts` that are still there: current facts and episodes of the agent
    (one may have been forgotten while the topics were being written)."""
    facts = sorted({m.id for d in drafts for m in d.members if m.kind == "fact"})
    episodes = sorted({m.id for d in drafts for m in d.members if m.kind == "episode"})
    held = {
        ("fact", int(row["id"]))
        for row in conn.execute(
            f"SELECT id FROM facts WHERE agent_id = ? AND id IN ({marks(facts)}) "
            "AND invalidated_at IS NULL AND forgotten_at IS NULL",
            (agent_id, *facts),
        )
    }
    held |= {
        ("episode", int(row["id"]))
        for row in conn.execute(
            f"SELECT id FROM summaries WHERE agent_id = ? AND id IN ({marks(episodes)})",
            (agent_id, *episodes),
        )
    }
    return held


class SQLiteTopics(TopicReads, SQLiteEpisodes):
    MARK = "?"

    def episode_vectors(self, agent: str) -> tuple[list[Summary], Vector]:
        """The agent's embedded episodes, oldest first, and their vectors as one matrix."""
        ids, matrix = self._episode_matrix(self.agent_id(agent))
        if not len(ids):
            return [], np.zeros((0, 0), dtype=np.float32)
        wanted = [int(i) for i in ids]
        found = self._query(
            f"SELECT {rows.SUMMARY_COLUMNS} FROM summaries WHERE id IN ({marks(wanted)})", wanted
        )
        by_id = {int(row["id"]): rows.summary(agent, row) for row in found}
        keep = [i for i, summary_id in enumerate(wanted) if summary_id in by_id]
        return [by_id[wanted[i]] for i in keep], matrix[keep]

    def replace_topics(self, agent: str, drafts: Sequence[TopicDraft]) -> list[Topic]:
        """Make `drafts` (in order) the agent's topics, in place of all it had; a draft with
        a member forgotten since it was made is left out."""
        agent_id = self.agent_id(agent)
        with self._transaction() as conn:
            now = self._clock()
            held = _held(conn, agent_id, drafts)
            conn.execute("DELETE FROM topics WHERE agent_id = ?", (agent_id,))
            kept = [d for d in drafts if all((m.kind, m.id) in held for m in d.members)]
            for position, draft in enumerate(kept):
                self._insert_topic(conn, agent_id, position, draft, now)
        return self.topics(agent)

    @staticmethod
    def _insert_topic(
        conn: Any, agent_id: int, position: int, draft: TopicDraft, now: float
    ) -> None:
        cursor = conn.execute(
            "INSERT INTO topics(agent_id, position, name, summary, open_questions, "
            "next_actions, written_by, built_at, size, last_active_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                agent_id,
                position,
                draft.name,
                draft.summary,
                json.dumps(list(draft.open_questions)),
                json.dumps(list(draft.next_actions)),
                draft.written_by,
                now,
                len(draft.members),
                max((m.at for m in draft.members), default=now),
            ),
        )
        conn.executemany(
            "INSERT INTO topic_members(topic_id, kind, member_id, at) VALUES (?, ?, ?, ?)",
            [(cursor.lastrowid, m.kind, m.id, m.at) for m in draft.members],
        )
