"""What the dashboard charts and lists: the conversation log by device and day, how much was
stored each day, and how long replies took each day (from the log's own timestamps: a user
message committed, then the answer committed). Days are UTC dates, `YYYY-MM-DD`."""

from __future__ import annotations

from lobug.store.models import ConversationDay, DayGrowth, DayLatency
from lobug.store.sql import rows
from lobug.store.sql.database import SqlDatabase


class SqlActivity(SqlDatabase):
    def conversation_days(self, agent: str, limit: int) -> list[ConversationDay]:
        """Each device's days with messages, newest first."""
        found = self._query(
            f"SELECT device_id, {self.dialect.day} AS day, COUNT(*) AS messages, "
            "MAX(created_at) AS last_at FROM conversation_log "
            "WHERE agent_id = ? GROUP BY device_id, day ORDER BY day DESC, last_at DESC LIMIT ?",
            (self.agent_id(agent), limit),
        )
        return [rows.conversation_day(r) for r in found]

    def growth_by_day(self, agent: str, since: float) -> list[DayGrowth]:
        """Messages and facts (every version) stored each day since `since`, oldest first."""
        agent_id = self.agent_id(agent)
        found = self._query(
            "SELECT day, SUM(is_message) AS messages, SUM(1 - is_message) AS facts FROM ("
            f"SELECT {self.dialect.day} AS day, 1 AS is_message FROM conversation_log "
            "WHERE agent_id = ? AND created_at >= ? UNION ALL "
            f"SELECT {self.dialect.day} AS day, 0 FROM facts WHERE agent_id = ? AND created_at >= ?"
            ") stored GROUP BY day ORDER BY day",
            (agent_id, since, agent_id, since),
        )
        return [DayGrowth(r["day"], int(r["messages"]), int(r["facts"])) for r in found]

    def reply_latency_by_day(self, agent: str, since: float) -> list[DayLatency]:
        """Per day, the replies that directly followed a user message of the same device and
        the mean seconds between the two commits, oldest first."""
        found = self._query(
            f"SELECT {self.dialect.day} AS day, COUNT(*) AS replies, "
            "AVG(created_at - asked_at) AS mean_s FROM (SELECT role, created_at, "
            "LAG(role) OVER turn AS asked_role, LAG(created_at) OVER turn AS asked_at "
            "FROM conversation_log WHERE agent_id = ? AND created_at >= ? "
            "WINDOW turn AS (PARTITION BY device_id ORDER BY id)) turns "
            "WHERE role = 'assistant' AND asked_role = 'user' GROUP BY day ORDER BY day",
            (self.agent_id(agent), since),
        )
        return [DayLatency(r["day"], r["replies"], float(r["mean_s"])) for r in found]
