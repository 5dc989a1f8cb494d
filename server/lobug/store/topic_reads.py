"""Reading topics back, one text for both engines: the SQL differs only in the parameter mark
(`?` for SQLite, `%s` for PostgreSQL), which each engine's topics class names as `MARK`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from lobug.store import errors
from lobug.store.models import Topic, TopicActivity
from lobug.store.sql import rows


class _Database(Protocol):
    MARK: str

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]: ...

    def agent_id(self, name: str) -> int: ...


class TopicReads:
    """The reads of the `TopicStore` protocol, mixed into each engine's topics class."""

    def topics(self: _Database, agent: str) -> list[Topic]:
        """The agent's topics in the order of their build (largest first)."""
        return _topics_where(self, agent, f"t.agent_id = {self.MARK}", self.agent_id(agent))

    def topic(self: _Database, agent: str, topic_id: int) -> Topic:
        """One of the agent's topics; TopicNotFound when it has none by this id."""
        mark = self.MARK
        condition = f"t.agent_id = {mark} AND t.id = {mark}"
        found = _topics_where(self, agent, condition, self.agent_id(agent), topic_id)
        if not found:
            raise errors.TopicNotFound(f"agent {agent!r} has no topic {topic_id}")
        return found[0]

    def topic_activity(
        self: _Database, agent: str, since: float, limit: int
    ) -> list[TopicActivity]:
        """The agent's `limit` most active topics: most members learned or ended at `since` or
        later first, then the newest member, the larger, the earlier built."""
        mark = self.MARK
        found = self._query(
            "SELECT t.id, t.name, t.summary, t.size, t.last_active_at, "
            f"(SELECT COUNT(*) FROM topic_members m WHERE m.topic_id = t.id AND m.at >= {mark}) "
            f"AS activity FROM topics t WHERE t.agent_id = {mark} "
            f"ORDER BY activity DESC, t.last_active_at DESC, t.size DESC, t.position LIMIT {mark}",
            (since, self.agent_id(agent), limit),
        )
        return [_activity(row) for row in found]


def _topics_where(db: _Database, agent: str, condition: str, *params: Any) -> list[Topic]:
    found = db._query(
        f"SELECT {rows.TOPIC_COLUMNS} FROM topics t WHERE {condition} ORDER BY position", params
    )
    members = db._query(
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
