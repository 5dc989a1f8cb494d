"""Rows of the store as the domain's dataclasses, read by column name; and the one place where
what older versions let in is mended on read, so no list or export ever fails on a row:

- a JSON column (metadata, an audit row's detail, ...) holding a lone surrogate (stored as a
  `\\ud800` escape) comes back with U+FFFD in its place (`json_column`);
- a time outside `clock.EARLIEST`..`clock.LATEST` (an import once took `1e300`) comes back as
  the nearest end (`time_or_none`).

What is written now cannot hold either: JSON columns are written as UTF-8 (`json_or_none`), so
a lone surrogate is refused by the database driver, and `memory/limits.py` refuses both where
they enter."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import fields
from functools import cache
from typing import Any, TypeVar

from lobug.clock import EARLIEST, LATEST, clamped, utc_day
from lobug.store.models import (
    Agent,
    AuditEntry,
    BaseMemoryVersion,
    BlockChange,
    ConversationDay,
    Dream,
    DreamChange,
    Fact,
    FactHit,
    MemoryBlock,
    Message,
    Reminder,
    Summary,
    Topic,
    TopicMember,
)

T = TypeVar("T")

_MESSAGE_COLUMNS = (
    "id",
    "device_id",
    "role",
    "content",
    "created_at",
    "summarized",
    "metadata",
    "agent_id",
    "person_id",
    "speaker_source",
    "speaker_confidence",
)

AGENT_COLUMNS = "id, name, created_at, metadata"
BLOCK_COLUMNS = (
    "id, agent_id, label, value, description, char_limit, read_only, created_at, updated_at"
)
BLOCK_CHANGE_COLUMNS = "id, block_id, old_value, new_value, changed_by, changed_at"
SUMMARY_COLUMNS = (
    "id, content, source_from_id, source_to_id, created_at, incorporated, started_at, ended_at, "
    "made_by, dropped_sentences"
)
FACT_COLUMNS = (
    "f.id, a.name AS agent, f.content, f.fact_type, f.subject, f.relation, f.object, "
    "f.time_span, f.confidence, f.user_score, f.source_message_ids, f.created_at, "
    "f.valid_from, f.invalidated_at, f.superseded_by, f.origin, f.pinned, f.forgotten_at, "
    "f.purged_at, f.due_at, f.owner_person_id, f.scope, f.shareable"
)
AUDIT_COLUMNS = "id, agent_id, at, actor, action, target, target_ids, before, after, detail"
BASE_MEMORY_VERSION_COLUMNS = "id, content, written_by, created_at, made_by, dropped_sentences"
FACTS_JOIN_AGENTS = "facts f JOIN agents a ON a.id = f.agent_id"


def message_columns(table: str = "", prefix: str = "") -> str:
    """The columns `message` reads, from `table` (an alias in the query) and, where one query
    reads two messages, renamed with `prefix`."""
    source = f"{table}." if table else ""
    return ", ".join(
        f"{source}{c} AS {prefix}{c}" if prefix else f"{source}{c}" for c in _MESSAGE_COLUMNS
    )


MESSAGE_COLUMNS = message_columns()


def summary_columns(table: str) -> str:
    """The columns `summary` reads, from `table` (an alias in the query)."""
    return ", ".join(f"{table}.{c.strip()}" for c in SUMMARY_COLUMNS.split(","))


def json_or_none(value: dict[str, Any] | None) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False)


# A `\\uD800`-`\\uDFFF` escape: the only way a JSON text read from the database can hold a
# surrogate (the drivers decode the column's text as strict UTF-8).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def json_column(text: str | None) -> Any:
    """A JSON column's value, any lone surrogate in its strings and keys replaced by U+FFFD
    (a pair of escapes that makes one character is read as that character)."""
    if text is None:
        return None
    value = json.loads(text)
    if not _SURROGATE_ESCAPE.search(text):
        return value
    try:
        return _mended(value)
    except RecursionError:  # nested beyond mending: skipped
        return None


def _mended(value: Any) -> Any:
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_mended(item) for item in value]
    if isinstance(value, dict):
        return {_mended(key): _mended(item) for key, item in value.items()}
    return value


def _dict_or_none(text: str | None) -> dict[str, Any] | None:
    value = json_column(text)
    return value if value is None or isinstance(value, dict) else None


def time_or_none(at: Any) -> Any:
    """A time column's value, moved into EARLIEST..LATEST when it lies outside (None and
    times inside come back as they are)."""
    return at if at is None or EARLIEST <= at <= LATEST else clamped(at)


# The time fields of an export record (`store/records.py`), mended by `mended_times`.
RECORD_TIMES = (
    *("created_at", "updated_at", "valid_from", "invalidated_at", "forgotten_at"),
    *("purged_at", "due_at", "at", "changed_at", "built_at", "last_active_at"),
    *("ring_at", "said_at", "cancelled_at"),
)


def mended_times(record: dict[str, Any]) -> dict[str, Any]:
    """`record` with its times read through `time_or_none`."""
    for name in RECORD_TIMES:
        if name in record:
            record[name] = time_or_none(record[name])
    return record


def _json_tuple(text: str | None) -> tuple[Any, ...]:
    return tuple(json_column(text))


# The flag columns (0 or 1), the JSON lists and the JSON objects, by name.
FLAGS = ("summarized", "pinned", "read_only", "incorporated", "shareable")
JSON_LISTS = ("source_message_ids", "target_ids", "open_questions", "next_actions")
JSON_OBJECTS = ("metadata", "detail")
# How `_record` reads a column, by the name of its field; a column not named here is read as
# it is.
_READ: dict[str, Callable[[Any], Any]] = {
    **dict.fromkeys(RECORD_TIMES, time_or_none),
    **dict.fromkeys(("started_at", "ended_at", "finished_at", "undone_at"), time_or_none),
    **dict.fromkeys(FLAGS, bool),
    **dict.fromkeys(JSON_LISTS, _json_tuple),
    **dict.fromkeys(JSON_OBJECTS, _dict_or_none),
    "confidence": float,
    "dropped_sentences": int,
}


def _record(cls: type[T], row: Any, prefix: str = "", **given: Any) -> T:
    """A `cls` from the row's columns named as its fields (after `prefix`), each read as
    `_READ` says; the fields in `given` take the values given."""
    values = dict(given)
    for name, read in _readers(cls):  # type: ignore[arg-type]
        if name not in given:
            value = row[prefix + name]
            values[name] = value if read is None else read(value)
    return cls(**values)


@cache
def _readers(cls: type) -> tuple[tuple[str, Callable[[Any], Any] | None], ...]:
    """`cls`'s field names, each with how its column is read (None: as it is); asked once a
    class, as reading a fact's rows is on every turn's path."""
    return tuple((field.name, _READ.get(field.name)) for field in fields(cls))


def agent(row: Any) -> Agent:
    return Agent(
        int(row["id"]),
        str(row["name"]),
        float(time_or_none(row["created_at"])),
        _dict_or_none(row["metadata"]),
    )


def message(agent_name: str, row: Any, prefix: str = "") -> Message:
    return _record(Message, row, prefix, agent=agent_name)


def conversation_day(row: Any) -> ConversationDay:
    """A device's day of the log (`device_id, day, messages, last_at`); a day the database
    cannot name (a time out of range) is named by its mended last time."""
    last_at = time_or_none(row["last_at"])
    day = row["day"] or utc_day(last_at)
    return ConversationDay(row["device_id"], day, row["messages"], last_at)


def fact(row: Any) -> Fact:
    return _record(Fact, row)


def fact_hit(row: Any) -> FactHit:
    """A fact hit from the columns `id, score, created_at, user_score`."""
    return FactHit(row["id"], float(row["score"]), row["created_at"], row["user_score"])


REMINDER_COLUMNS = (
    "r.id, a.name AS agent, r.device_id, r.what, r.ring_at, r.created_at, r.said_at, "
    "r.said_on, r.cancelled_at, r.owner_person_id"
)


def reminder(row: Any) -> Reminder:
    return Reminder(
        id=int(row["id"]),
        agent=str(row["agent"]),
        device_id=str(row["device_id"]),
        what=str(row["what"]),
        ring_at=float(time_or_none(row["ring_at"])),
        created_at=float(time_or_none(row["created_at"])),
        said_at=time_or_none(row["said_at"]),
        said_on=row["said_on"],
        cancelled_at=time_or_none(row["cancelled_at"]),
        owner_person_id=row["owner_person_id"],
    )


def block(row: Any) -> MemoryBlock:
    return _record(MemoryBlock, row)


def block_change(row: Any) -> BlockChange:
    return _record(BlockChange, row)


def summary(agent_name: str, row: Any) -> Summary:
    return _record(Summary, row, agent=agent_name)


def audit_entry(row: Any) -> AuditEntry:
    return _record(AuditEntry, row)


def base_memory_version(row: Any) -> BaseMemoryVersion:
    return _record(BaseMemoryVersion, row)


# A dream's columns, read by `dream`.
DREAM_COLUMNS = (
    "id, started_at, finished_at, diary, changes, base_memory_before, watermark, undone_at"
)


def dream(agent: str, row: Any) -> Dream:
    """A `dreams` row (its `changes` JSON) as a Dream."""
    changes = tuple(DreamChange(**c) for c in json_column(row["changes"]))
    return _record(Dream, row, agent=agent, changes=changes)


# A topic's columns, read by `topic` (both engines).
TOPIC_COLUMNS = (
    "id, position, name, summary, open_questions, next_actions, written_by, built_at, "
    "dropped_sentences"
)


def topic(agent: str, row: Any, members: Sequence[TopicMember]) -> Topic:
    """A `topics` row (its JSON lists) and its members as a Topic."""
    return _record(Topic, row, agent=agent, members=tuple(members))


def topic_member(row: Any) -> TopicMember:
    return TopicMember(row["kind"], int(row["member_id"]), float(time_or_none(row["at"])))
