"""SQLite's part of the conversation log: agent ids cached, message vectors as float32 blobs
in `message_vectors` and mirrored in the in-memory message index."""

from __future__ import annotations

from typing import Any

from lobug.store.models import Message, Vector
from lobug.store.sql.log import SqlLog
from lobug.store.sqlite.database import SQLiteDatabase, vector_blob


class SQLiteLog(SqlLog, SQLiteDatabase):
    # The database keeps the message index: SqlLog's no-op must not hide its update.
    _index_message_vectors = SQLiteDatabase._index_message_vectors

    def _agent_known(self, name: str, agent_id: int) -> None:
        self._agent_ids[name] = agent_id

    def _store_message_vector(self, conn: Any, message: Message, vector: Vector) -> None:
        conn.execute(
            "INSERT INTO message_vectors(message_id, agent_id, embedding) VALUES (?,?,?)",
            (message.id, message.agent_id, vector_blob(vector)),
        )
