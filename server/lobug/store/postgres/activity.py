"""What the dashboard charts and lists, as the SQLite engine's `activity.py` computes it: the
log by device and day, what was stored each day, and reply latency per day (UTC dates)."""

from __future__ import annotations

from lobug.store.models import ConversationDay, DayGrowth, DayLatency
from lobug.store.postgres.database import PostgresDatabase

_DAY = "to_char(to_timestamp(created_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD')"


class PostgresActivity(PostgresDatabase):
    def conversation_days(self, agent: str, limit: int) -> list[ConversationDay]:
        """Each device's days with messages, newest first."""
        found = self._query(
            f"SELECT device_id, {_DAY} AS day, COUNT(*) AS messages, MIN(created_at) AS first_at, "
            "MAX(created_at) AS last_at FROM conversation_log WHERE agent_id = %s "
            "GROUP BY device_id, day ORDER BY day DESC, last_at DESC LIMIT %s",
            (self.agent_id(agent), limit),
        )
        return [
            ConversationDay(r["device_id"], r["day"], r["messages"], r["first_at"], r["last_at"])
            for r in found
        ]

    def growth_by_day(self, agent: str, since: float) -> list[DayGrowth]:
        """Messages and facts (every version) stored each day since `since`, oldest first."""
        agent_id = self.agent_id(agent)
        found = self._query(
            "SELECT day, SUM(is_message) AS messages, SUM(1 - is_message) AS facts FROM ("
            f"SELECT {_DAY} AS day, 1 AS is_message FROM conversation_log "
            "WHERE agent_id = %s AND created_at >= %s UNION ALL "
            f"SELECT {_DAY} AS day, 0 FROM facts WHERE agent_id = %s AND created_at >= %s"
            ") stored GROUP BY day ORDER BY day",
            (agent_id, since, agent_id, since),
        )
        return [DayGrowth(r["day"], int(r["messages"]), int(r["facts"])) for r in found]

    def reply_latency_by_day(self, agent: str, since: float) -> list[DayLatency]:
        """Per day, the replies that directly followed a user message of the same device and
        the mean seconds between the two commits, oldest first."""
        found = self._query(
            f"SELECT {_DAY} AS day, COUNT(*) AS replies, AVG(created_at - asked_at) AS mean_s "
            "FROM (SELECT role, created_at, "
            "LAG(role) OVER turn AS asked_role, LAG(created_at) OVER turn AS asked_at "
            "FROM conversation_log WHERE agent_id = %s AND created_at >= %s "
            "WINDOW turn AS (PARTITION BY device_id ORDER BY id)) turns "
            "WHERE role = 'assistant' AND asked_role = 'user' GROUP BY day ORDER BY day",
            (self.agent_id(agent), since),
        )
        return [DayLatency(r["day"], r["replies"], float(r["mean_s"])) for r in found]
