"""Topics (`memory/topics.py`): the material they are built from (the current facts and the
embedded episodes, with their vectors), an agent's topics replaced as a whole in one
transaction and read back, and the topics dropped when a fact or episode they hold is
forgotten (`drop_topics_holding`, called by forgetting in the same transaction)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from lobug.store import errors
from lobug.store.models import Summary, Topic, TopicActivity, TopicDraft, Vector
from lobug.store.sqlite import rows
from lobug.store.sqlite.database import marks
from lobug.store.sqlite.episodes import SQLiteEpisodes


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


class SQLiteTopics(SQLiteEpisodes):
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

    def topics(self, agent: str) -> list[Topic]:
        """The agent's topics in the order of their build (largest first)."""
        return self._topics_where(agent, "t.agent_id = ?", self.agent_id(agent))

    def topic(self, agent: str, topic_id: int) -> Topic:
        """One of the agent's topics; TopicNotFound when it has none by this id."""
        found = self._topics_where(
            agent, "t.agent_id = ? AND t.id = ?", self.agent_id(agent), topic_id
        )
        if not found:
            raise errors.TopicNotFound(f"agent {agent!r} has no topic {topic_id}")
        return found[0]

    def _topics_where(self, agent: str, condition: str, *params: Any) -> list[Topic]:
        found = self._query(
            f"SELECT {rows.TOPIC_COLUMNS} FROM topics t WHERE {condition} ORDER BY position",
            params,
        )
        members = self._query(
            "SELECT m.topic_id, m.kind, m.member_id, m.at FROM topic_members m "
            f"JOIN topics t ON t.id = m.topic_id WHERE {condition} "
            "ORDER BY m.topic_id, m.kind, m.member_id",
            params,
        )
        by_topic: dict[int, list[Any]] = {}
        for row in members:
            by_topic.setdefault(int(row["topic_id"]), []).append(rows.topic_member(row))
        return [rows.topic(agent, row, by_topic.get(int(row["id"]), [])) for row in found]

    def topic_activity(self, agent: str, since: float, limit: int) -> list[TopicActivity]:
        """The agent's `limit` most active topics: most members learned or ended at `since` or
        later first, then the newest member, the larger, the earlier built."""
        found = self._query(
            "SELECT t.id, t.name, t.summary, t.size, t.last_active_at, "
            "(SELECT COUNT(*) FROM topic_members m WHERE m.topic_id = t.id AND m.at >= ?) "
            "AS activity FROM topics t WHERE t.agent_id = ? "
            "ORDER BY activity DESC, t.last_active_at DESC, t.size DESC, t.position LIMIT ?",
            (since, self.agent_id(agent), limit),
        )
        return [
            TopicActivity(
                int(row["id"]),
                row["name"],
                row["summary"],
                int(row["activity"]),
                float(row["last_active_at"]),
                int(row["size"]),
            )
            for row in found
        ]
