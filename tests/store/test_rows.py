"""Rows older versions let in, written straight into the SQLite file, are mended where the
store reads rows (store/sql/rows.py): a lone surrogate in a JSON column, a time out of range.
And what is written now cannot hold a lone surrogate."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from lobug.clock import EARLIEST, LATEST
from lobug.memory import transfer
from lobug.store.sqlite.engine import SQLiteStore
from tests.fakes import FakeEmbedder


@pytest.fixture
def path(tmp_path: Path) -> Path:
    store = SQLiteStore(tmp_path / "memory.db")
    store.bind_embedding("fake-embed", FakeEmbedder().dimension)
    store.ensure_agent("alice", {"room": "hall"})
    store.append_message("alice", "kitchen", "user", "I keep bees")
    store.close()
    return tmp_path / "memory.db"


def write(path: Path, statement: str, *values: object) -> None:
    with sqlite3.connect(path) as db:
        db.execute(statement, values)
    db.close()


def test_a_lone_surrogate_in_a_json_column_reads_as_a_replacement_character(path: Path) -> None:
    write(path, "UPDATE agents SET metadata = ?", '{"k": "\\ud800", "\\udc00": "\\ud83d\\ude00"}')
    write(path, "UPDATE conversation_log SET metadata = ?", '{"k": ["x\\udfff"]}')
    write(
        path,
        "INSERT INTO audit_log(agent_id, at, actor, action, target, target_ids, detail) "
        "VALUES (1, 1.0, 'api', 'create', 'agent', '[]', ?)",
        '{"why": "\\uDBFF"}',
    )
    store = SQLiteStore(path)
    try:
        agent = store.find_agent("alice")
        assert agent is not None and agent.metadata == {"k": "\ufffd", "\ufffd": "\U0001f600"}
        assert store.agent_messages("alice", 10)[0].metadata == {"k": ["x\ufffd"]}
        assert store.audit_entries("alice", 10)[0].detail == {"why": "\ufffd"}
        text = "".join(transfer.export_chunks(store, [agent], "fake-embed", 1.0))
    finally:
        store.close()
    document = json.loads(text.encode("utf-8"))  # writable as UTF-8: nothing left to break
    assert document["agents"][0]["messages"][0]["metadata"] == {"k": ["x\ufffd"]}
    transfer.read_document(document)  # and within the import's rules again


def test_a_time_out_of_range_reads_as_the_nearest_end(path: Path) -> None:
    write(path, "UPDATE agents SET created_at = -1e12")
    write(path, "UPDATE conversation_log SET created_at = 1e300")
    store = SQLiteStore(path)
    try:
        agent = store.find_agent("alice")
        assert agent is not None and agent.created_at == EARLIEST
        assert store.agent_messages("alice", 10)[0].created_at == LATEST
        (day,) = store.conversation_days("alice", 10)  # the dashboard's list of days
        assert (day.day, day.last_at) == ("2200-01-01", LATEST)
        text = "".join(transfer.export_chunks(store, [agent], "fake-embed", 1.0))
    finally:
        store.close()
    document = json.loads(text)
    assert document["agents"][0]["messages"][0]["created_at"] == LATEST
    transfer.read_document(document)


def test_a_lone_surrogate_is_never_written(path: Path) -> None:
    store = SQLiteStore(path)
    try:
        with pytest.raises(UnicodeEncodeError):
            store.ensure_agent("bob", {"k": "\ud800"})
        with pytest.raises(UnicodeEncodeError):
            store.append_message("alice", "kitchen", "user", "hi", metadata={"k": "\udc00"})
        assert store.find_agent("bob") is None
        assert len(store.agent_messages("alice", 10)) == 1
    finally:
        store.close()
