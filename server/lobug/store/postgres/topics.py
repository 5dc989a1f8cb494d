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
from lobug.store.postgres.episodes import PostgresEpisodes
from lobug.store.sql import rows
from lobug.store.topic_reads import TopicReads


def drop_topics_holding(conn: Any, kind: str, ids: Sequence[int]) -> None:
    """Delete the topics made from any of the facts or episodes `ids` (`kind`), members too."""
    if ids:
        conn.execute(
            "DELETE FROM topics WHERE id IN (SELECT topic_id FROM topic_members "
            "WHERE kind = %s AND member_id = ANY(%s))",
            (kind, list(ids)),
        )


def _held(conn: Any, agent_id: int, drafts: Sequence[TopicDraft]) -> set[tuple[str, int]]:
    """The members of `drafts` that are still there: current facts and episodes of the agent
    (one may have been forgotten while the topics were being written)."""
    facts = sorted({m.id for d in drafts for m in d.members if m.kind == "fact"})
    episodes = sorted({m.id for d in drafts for m in d.members if m.kind == "episode"})
    held = {
        ("fact", int(row["id"]))
        for row in conn.execute(
            "SELECT id FROM facts WHERE agent_id = %s AND id = ANY(%s) "
            "AND invalidated_at IS NULL AND forgotten_at IS NULL",
            (agent_id, facts),
        )
    }
    held |= {
        ("episode", int(row["id"]))
        for row in conn.execute(
            "SELECT id FROM summaries WHERE agent_id = %s AND id = ANY(%s)",
            (agent_id, episodes),
        )
    }
    return held


class PostgresTopics(TopicReads, PostgresEpisodes):
    MARK = "%s"

    def episode_vectors(self, agent: str) -> tuple[list[Summary], Vector]:
        """The agent's embedded episodes, oldest first, and their vectors as one matrix."""
        if "summary_vectors" not in self.table_names():
            return [], np.zeros((0, 0), dtype=np.float32)
        found = self._query(
            f"SELECT {rows.summary_columns('s')}, v.embedding FROM summary_vectors v "
            "JOIN summaries s ON s.id = v.summary_id WHERE v.agent_id = %s ORDER BY s.id",
            (self.agent_id(agent),),
        )
        if not found:
            return [], np.zeros((0, 0), dtype=np.float32)
        vectors = np.stack([row["embedding"].to_numpy() for row in found]).astype(np.float32)
        return [rows.summary(agent, row) for row in found], vectors

    def replace_topics(self, agent: str, drafts: Sequence[TopicDraft]) -> list[Topic]:
        """Make `drafts` (in order) the agent's topics, in place of all it had; a draft with
        a member forgotten since it was made is left out."""
        agent_id = self.agent_id(agent)
        with self._transaction() as conn:
            now = self._clock()
            held = _held(conn, agent_id, drafts)
            conn.execute("DELETE FROM topics WHERE agent_id = %s", (agent_id,))
            kept = [d for d in drafts if all((m.kind, m.id) in held for m in d.members)]
            for position, draft in enumerate(kept):
                self._insert_topic(conn, agent_id, position, draft, now)
        return self.topics(agent)

    @staticmethod
    def _insert_topic(
        conn: Any, agent_id: int, position: int, draft: TopicDraft, now: float
    ) -> None:
        topic_id = conn.execute(
            "INSERT INTO topics(agent_id, position, name, summary, open_questions, "
            "next_actions, written_by, built_at, size, last_active_at) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
            "RETURNING id",
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
        ).fetchone()["id"]
        with conn.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO topic_members(topic_id, kind, member_id, at) VALUES (%s, %s, %s, %s)",
                [(topic_id, m.kind, m.id, m.at) for m in draft.members],
            )
