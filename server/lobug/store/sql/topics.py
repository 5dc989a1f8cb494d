"""Topics (`memory/topics.py`): an agent's topics replaced as a whole in one transaction and
read back, and the topics dropped when a fact or episode they hold is forgotten
(`drop_topics_holding`, called by forgetting in the same transaction). The material they are
built from (the embedded episodes with their vectors) is each engine's own."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from lobug.store import errors
from lobug.store.models import Topic, TopicActivity, TopicDraft
from lobug.store.sql import rows
from lobug.store.sql.dialect import batches, marks
from lobug.store.sql.episodes import SqlEpisodes


def drop_topics_holding(conn: Any, kind: str, ids: Sequence[int]) -> None:
    """Delete the topics made from any of the facts or episodes `ids` (`kind`), members too."""
    for batch in batches(ids):
        conn.execute(
            "DELETE FROM topics WHERE id IN (SELECT topic_id FROM topic_members "
            f"WHERE kind = ? AND member_id IN ({marks(batch)}))",
            (kind, *batch),
        )


def _held(conn: Any, agent_id: int, drafts: Sequence[TopicDraft]) -> set[tuple[str, int]]:
    """The members of `drafts` that are still there: current facts and episodes of the agent
    (one may have been forgotten while the topics were being written)."""
    facts = sorted({m.id for d in drafts for m in d.members if m.kind == "fact"})
    episodes = sorted({m.id for d in drafts for m in d.members if m.kind == "episode"})
    held: set[tuple[str, int]] = set()
    if facts:
        held |= {
            ("fact", int(row["id"]))
            for row in conn.execute(
                f"SELECT id FROM facts WHERE agent_id = ? AND id IN ({marks(facts)}) "
                "AND invalidated_at IS NULL AND forgotten_at IS NULL",
                (agent_id, *facts),
            )
        }
    if episodes:
        held |= {
            ("episode", int(row["id"]))
            for row in conn.execute(
                f"SELECT id FROM summaries WHERE agent_id = ? AND id IN ({marks(episodes)})",
                (agent_id, *episodes),
            )
        }
    return held


class SqlTopics(SqlEpisodes):
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
        topic_id = conn.execute(
            "INSERT INTO topics(agent_id, position, name, summary, open_questions, "
            "next_actions, written_by, built_at, size, last_active_at, dropped_sentences) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
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
                draft.dropped_sentences,
            ),
        ).fetchone()["id"]
        conn.executemany(
            "INSERT INTO topic_members(topic_id, kind, member_id, at) VALUES (?, ?, ?, ?)",
            [(topic_id, m.kind, m.id, m.at) for m in draft.members],
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
        return [_activity(row) for row in found]

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


def _activity(row: Any) -> TopicActivity:
    return TopicActivity(
        int(row["id"]),
        row["name"],
        row["summary"],
        int(row["activity"]),
        float(row["last_active_at"]),
        int(row["size"]),
    )
