"""PostgreSQL's part of the conversation log: message vectors as pgvectors (`as_vector`, used
by every part of the engine that stores one)."""

from __future__ import annotations

from typing import Any

import numpy as np

from lobug.store.models import Message, Vector
from lobug.store.postgres.database import PostgresDatabase
from lobug.store.sql.log import SqlLog


def as_vector(vector: Vector) -> Any:
    """A numpy vector as pgvector's type (adapted by the pool's `register_vector`)."""
    from pgvector import Vector as PgVector

    return PgVector(np.asarray(vector, dtype=np.float32))


class PostgresLog(SqlLog, PostgresDatabase):
    def _store_message_vector(self, conn: Any, message: Message, vector: Vector) -> None:
        conn.execute(
            "INSERT INTO message_vectors(message_id, agent_id, embedding) VALUES (?,?,?)",
            (message.id, message.agent_id, as_vector(vector)),
        )
