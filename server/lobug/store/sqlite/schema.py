"""The SQLite schema: numbered migrations, applied in order when a database opens and recorded
in `schema_migrations`. They are the contract with every database file already written: never
edit one, add the next.

`fact_vectors` (the *current* facts) and `message_vectors` (logged messages that were embedded)
are vec0 tables whose dimension comes from the embedding model, so `vectors.py` creates them
when the store is bound to a model, not here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from lobug.store.sql.purge_schema import purge_jobs
from lobug.store.sqlite.reminder_schema import owned_reminders


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    statements: Sequence[str] = field(default_factory=tuple)


# Richer facts (seed 001), SQLite's migration 8 and PostgreSQL's 3 alike. The four old types
# become the six new ones: personal -> identity, knowledge -> trait, preference and event
# stay (`models.LEGACY_FACT_TYPES`). `time_span` was the model's free text ("last year"); it
# becomes the coarse enum `models.TIME_SPANS`, and free text that is none of them is cleared
# (the fact's sentence still says it). `due_at`: when a commitment is due.
RICHER_FACTS = (
    "ALTER TABLE facts ADD COLUMN due_at {time}",
    "UPDATE facts SET fact_type = CASE fact_type WHEN 'personal' THEN 'identity' "
    "WHEN 'knowledge' THEN 'trait' ELSE fact_type END "
    "WHERE fact_type IN ('personal', 'knowledge')",
    "UPDATE facts SET fact_type = 'trait' WHERE fact_type NOT IN "
    "('identity', 'trait', 'preference', 'event', 'commitment', 'constraint')",
    "UPDATE facts SET time_span = NULL WHERE time_span NOT IN "
    "('short_term', 'medium_term', 'current', 'long_term', 'future')",
    "CREATE INDEX facts_by_type ON facts(agent_id, fact_type, invalidated_at, id)",
)


def richer_facts(time_type: str) -> tuple[str, ...]:
    """`RICHER_FACTS` with the engine's type of a time."""
    return tuple(statement.format(time=time_type) for statement in RICHER_FACTS)


# Parked learning, SQLite's migration 10 and PostgreSQL's 5 alike: an exchange whose memory
# work failed too often leaves the passes' retries (`parked_at`) instead of being dropped,
# with what went wrong last (`last_error`), until a person retries it (`sql/queue.py`).
PARKED_LEARNING = (
    "ALTER TABLE learning_queue ADD COLUMN parked_at {time}",
    "ALTER TABLE learning_queue ADD COLUMN last_error TEXT",
)


def parked_learning(time_type: str) -> tuple[str, ...]:
    """`PARKED_LEARNING` with the engine's type of a time."""
    return tuple(statement.format(time=time_type) for statement in PARKED_LEARNING)


# How derived text was made, SQLite's migration 11 and PostgreSQL's 6 alike: an episode's
# summary and each base memory version say whether the chat model wrote it, it was built
# without the model from the sources' words (`extractive`) or a person wrote it (`made_by`,
# `models.MADE_BY`), and how many of the model's sentences its sources did not support were
# left out (`dropped_sentences`; topics too). Older versions wrote the first two as notes
# inside the text, which a person saw as content: taken out here (`made_by` says it now).
OLD_EXTRACTIVE_SUMMARY = "Extractive summary (the user's own words; the model's summary failed):"
OLD_EXTRACTIVE_BASE = "Key facts (listed without the model; its document failed its checks):"


def _starts_with(column: str, note: str) -> str:
    quoted = note.replace("'", "''")
    return f"SUBSTR({column}, 1, {len(note)}) = '{quoted}'"


def _without(column: str, note: str) -> str:
    """`column` less the note it starts with and the one space or line break after it."""
    return f"SUBSTR({column}, {len(note) + 2})"


DERIVED_TEXT = (
    "ALTER TABLE summaries ADD COLUMN made_by TEXT",
    "ALTER TABLE summaries ADD COLUMN dropped_sentences INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE base_memory_versions ADD COLUMN made_by TEXT",
    "ALTER TABLE base_memory_versions ADD COLUMN dropped_sentences INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE topics ADD COLUMN dropped_sentences INTEGER NOT NULL DEFAULT 0",
    f"UPDATE summaries SET made_by = 'extractive', "
    f"content = {_without('content', OLD_EXTRACTIVE_SUMMARY)} "
    f"WHERE {_starts_with('content', OLD_EXTRACTIVE_SUMMARY)}",
    "UPDATE summaries SET made_by = 'model' WHERE made_by IS NULL",
    f"UPDATE base_memory_versions SET made_by = 'extractive', "
    f"content = {_without('content', OLD_EXTRACTIVE_BASE)} "
    f"WHERE {_starts_with('content', OLD_EXTRACTIVE_BASE)}",
    "UPDATE base_memory_versions SET made_by = CASE WHEN written_by IN ('cascade', 'dream') "
    "THEN 'model' ELSE 'person' END WHERE made_by IS NULL",
    f"UPDATE base_memory SET content = {_without('content', OLD_EXTRACTIVE_BASE)} "
    f"WHERE {_starts_with('content', OLD_EXTRACTIVE_BASE)}",
    f"UPDATE dreams SET base_memory_before = {_without('base_memory_before', OLD_EXTRACTIVE_BASE)} "
    f"WHERE {_starts_with('base_memory_before', OLD_EXTRACTIVE_BASE)}",
    "UPDATE topics SET summary = REPLACE(summary, '{note} ', '')".format(
        note=OLD_EXTRACTIVE_SUMMARY.replace("'", "''")
    ),
)


# Reminders, SQLite's migration 12 and PostgreSQL's 7 alike: what a person asked to be reminded
# of and when, rung once (`said_at`, on the device `said_on`) or cancelled (`sql/reminders.py`).
REMINDERS = (
    """CREATE TABLE reminders (
        id {id},
        agent_id {agent_ref} NOT NULL REFERENCES agents(id),
        device_id TEXT NOT NULL,
        what TEXT NOT NULL,
        ring_at {time} NOT NULL,
        created_at {time} NOT NULL,
        said_at {time},
        said_on TEXT,
        cancelled_at {time}
    )""",
    "CREATE INDEX reminders_waiting ON reminders(agent_id, ring_at) "
    "WHERE said_at IS NULL AND cancelled_at IS NULL",
)


def reminders(id_type: str, agent_ref: str, time_type: str) -> tuple[str, ...]:
    """`REMINDERS` with the engine's types of an id, a reference to one and a time."""
    return tuple(
        statement.format(id=id_type, agent_ref=agent_ref, time=time_type) for statement in REMINDERS
    )


# A household, SQLite's migration 13 and PostgreSQL's 8 alike (`memory/people.py`; MEMORY.md
# "A household"): people, a device's default person, voice profiles (embeddings, no audio); who
# said each message (`person_id`; on an assistant row whom it answered; NULL: a guest) by which
# source and how sure; each fact's owner (NULL: the household), scope and `shareable`. Older
# user rows become a guest's, older facts the household's and not shareable.
def household(id_type: str, time_type: str, blob_type: str) -> tuple[str, ...]:
    """The household migration with the engine's types of an id, a time and a blob."""
    return (
        f"""CREATE TABLE people (
            id {id_type},
            agent_id {_ref("agents")},
            name TEXT NOT NULL,
            name_key TEXT NOT NULL,
            created_at {time_type} NOT NULL,
            UNIQUE (agent_id, name_key)
        )""",
        f"""CREATE TABLE device_people (
            agent_id {_ref("agents")},
            device_id TEXT NOT NULL,
            person_id {_ref("people")} ON DELETE CASCADE,
            PRIMARY KEY (agent_id, device_id)
        )""",
        f"""CREATE TABLE voice_profiles (
            id {id_type},
            person_id {_ref("people")} ON DELETE CASCADE,
            embedding {blob_type} NOT NULL,
            model TEXT NOT NULL,
            created_at {time_type} NOT NULL
        )""",
        "CREATE INDEX voice_profiles_by_person ON voice_profiles(person_id)",
        "ALTER TABLE conversation_log ADD COLUMN person_id BIGINT REFERENCES people(id)",
        "ALTER TABLE conversation_log ADD COLUMN speaker_source TEXT",
        f"ALTER TABLE conversation_log ADD COLUMN speaker_confidence {time_type}",
        "UPDATE conversation_log SET speaker_source = "
        "CASE role WHEN 'user' THEN 'guest' ELSE role END",
        "CREATE INDEX conversation_log_by_person ON conversation_log(agent_id, person_id, id)",
        "ALTER TABLE facts ADD COLUMN owner_person_id BIGINT REFERENCES people(id)",
        "ALTER TABLE facts ADD COLUMN scope TEXT NOT NULL DEFAULT 'household'",
        "ALTER TABLE facts ADD COLUMN shareable SMALLINT NOT NULL DEFAULT 0",
        "CREATE INDEX facts_by_owner ON facts(agent_id, owner_person_id, id)",
    )


def _ref(table: str) -> str:
    return f"BIGINT NOT NULL REFERENCES {table}(id)"


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "initial_schema",
        (
            """CREATE TABLE agents (
                id INTEGER PRIMARY KEY,
                name TEXT NOT NULL UNIQUE,
                created_at REAL NOT NULL
            )""",
            """CREATE TABLE conversation_log (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                agent_id INTEGER NOT NULL REFERENCES agents(id),
                device_id TEXT NOT NULL,
                role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
                content TEXT NOT NULL,
                created_at REAL NOT NULL,
                summarized INTEGER NOT NULL DEFAULT 0
            )""",
            "CREATE INDEX conversation_log_by_device ON conversation_log(agent_id, device_id, id)",
            "CREATE INDEX conversation_log_unsummarized "
            "ON conversation_log(agent_id, summarized, id)",
            """CREATE TABLE facts (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                agent_id INTEGER NOT NULL REFERENCES agents(id),
                content TEXT NOT NULL,
                fact_type TEXT NOT NULL,
                subject TEXT,
                relation TEXT,
                object TEXT,
                time_span TEXT,
                confidence REAL NOT NULL DEFAULT 0.5,
                user_score INTEGER CHECK (user_score BETWEEN 0 AND 10),
                source_message_ids TEXT NOT NULL DEFAULT '[]',
                created_at REAL NOT NULL,
                valid_from REAL NOT NULL,
                invalidated_at REAL,
                superseded_by INTEGER REFERENCES facts(id)
            )""",
            "CREATE INDEX facts_by_agent ON facts(agent_id, invalidated_at, id)",
            """CREATE TABLE summaries (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                agent_id INTEGER NOT NULL REFERENCES agents(id),
                content TEXT NOT NULL,
                source_from_id INTEGER NOT NULL,
                source_to_id INTEGER NOT NULL,
                created_at REAL NOT NULL,
                incorporated INTEGER NOT NULL DEFAULT 0
            )""",
            "CREATE INDEX summaries_unincorporated ON summaries(agent_id, incorporated, id)",
            """CREATE TABLE base_memory (
                agent_id INTEGER PRIMARY KEY REFERENCES agents(id),
                content TEXT NOT NULL DEFAULT '',
                updated_at REAL NOT NULL
            )""",
            "CREATE TABLE store_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        ),
    ),
    Migration(
        2,
        "memory_api",
        (
            "ALTER TABLE agents ADD COLUMN metadata TEXT",
            # SQLite cannot alter a CHECK constraint: rebuild the log with the same ids.
            """CREATE TABLE conversation_log_v2 (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                agent_id INTEGER NOT NULL REFERENCES agents(id),
                device_id TEXT NOT NULL,
                role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'system')),
                content TEXT NOT NULL,
                created_at REAL NOT NULL,
                summarized INTEGER NOT NULL DEFAULT 0,
                metadata TEXT
            )""",
            "INSERT INTO conversation_log_v2(id, agent_id, device_id, role, content, created_at, "
            "summarized) SELECT id, agent_id, device_id, role, content, created_at, summarized "
            "FROM conversation_log",
            "INSERT INTO sqlite_sequence(name, seq) SELECT 'conversation_log_v2', seq "
            "FROM sqlite_sequence WHERE name = 'conversation_log' AND NOT EXISTS "
            "(SELECT 1 FROM sqlite_sequence WHERE name = 'conversation_log_v2')",
            "UPDATE sqlite_sequence SET seq = MAX(seq, COALESCE((SELECT seq FROM sqlite_sequence "
            "WHERE name = 'conversation_log'), 0)) WHERE name = 'conversation_log_v2'",
            "DROP TABLE conversation_log",
            "ALTER TABLE conversation_log_v2 RENAME TO conversation_log",
            "CREATE INDEX conversation_log_by_device ON conversation_log(agent_id, device_id, id)",
            "CREATE INDEX conversation_log_unsummarized "
            "ON conversation_log(agent_id, summarized, id)",
            "CREATE INDEX conversation_log_by_agent ON conversation_log(agent_id, id)",
            """CREATE TABLE memory_blocks (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                agent_id INTEGER NOT NULL REFERENCES agents(id),
                label TEXT NOT NULL,
                value TEXT NOT NULL,
                description TEXT,
                char_limit INTEGER CHECK (char_limit IS NULL OR char_limit > 0),
                read_only INTEGER NOT NULL DEFAULT 0,
                created_at REAL NOT NULL,
                updated_at REAL NOT NULL,
                UNIQUE (agent_id, label)
            )""",
            """CREATE TABLE memory_block_history (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                block_id INTEGER NOT NULL REFERENCES memory_blocks(id),
                old_value TEXT,
                new_value TEXT NOT NULL,
                changed_by TEXT NOT NULL,
                changed_at REAL NOT NULL
            )""",
            "CREATE INDEX memory_block_history_by_block ON memory_block_history(block_id, id)",
        ),
    ),
    Migration(
        3,
        "full_text_search",
        (
            "CREATE VIRTUAL TABLE messages_fts USING fts5("
            "content, content='conversation_log', content_rowid='id', tokenize='porter unicode61')",
            "CREATE TRIGGER messages_fts_insert AFTER INSERT ON conversation_log BEGIN "
            "INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content); END",
            "CREATE TRIGGER messages_fts_delete AFTER DELETE ON conversation_log BEGIN "
            "INSERT INTO messages_fts(messages_fts, rowid, content) "
            "VALUES ('delete', old.id, old.content); END",
            "CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON conversation_log BEGIN "
            "INSERT INTO messages_fts(messages_fts, rowid, content) "
            "VALUES ('delete', old.id, old.content); "
            "INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content); END",
            "INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')",
            "CREATE VIRTUAL TABLE facts_fts USING fts5("
            "content, content='facts', content_rowid='id', tokenize='porter unicode61')",
            "CREATE TRIGGER facts_fts_insert AFTER INSERT ON facts BEGIN "
            "INSERT INTO facts_fts(rowid, content) VALUES (new.id, new.content); END",
            "CREATE TRIGGER facts_fts_delete AFTER DELETE ON facts BEGIN "
            "INSERT INTO facts_fts(facts_fts, rowid, content) "
            "VALUES ('delete', old.id, old.content); END",
            "CREATE TRIGGER facts_fts_update AFTER UPDATE OF content ON facts BEGIN "
            "INSERT INTO facts_fts(facts_fts, rowid, content) "
            "VALUES ('delete', old.id, old.content); "
            "INSERT INTO facts_fts(rowid, content) VALUES (new.id, new.content); END",
            "INSERT INTO facts_fts(facts_fts) VALUES ('rebuild')",
        ),
    ),
    Migration(
        4,
        "learning_queue",
        (
            # Answered exchanges whose memory work (facts, cascades) has not finished: written
            # with the reply in one transaction, removed when the work is done, so a crash
            # never loses it.
            """CREATE TABLE learning_queue (
                assistant_message_id INTEGER PRIMARY KEY REFERENCES conversation_log(id),
                user_message_id INTEGER NOT NULL REFERENCES conversation_log(id),
                attempts INTEGER NOT NULL DEFAULT 0,
                queued_at REAL NOT NULL
            )""",
            # Messages meant to have a vector that were stored while the embedder failed.
            """CREATE TABLE embedding_backlog (
                message_id INTEGER PRIMARY KEY REFERENCES conversation_log(id)
            )""",
        ),
    ),
    Migration(
        5,
        "curation",
        (
            # Where a fact came from (`device:<id>`, `api`, `v1`, `manual`), whether a person
            # pinned it, and when it was forgotten (it left every prompt and search) or purged
            # (its text erased; the row stays as a content-free tombstone).
            "ALTER TABLE facts ADD COLUMN origin TEXT",
            "ALTER TABLE facts ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0",
            "ALTER TABLE facts ADD COLUMN forgotten_at REAL",
            "ALTER TABLE facts ADD COLUMN purged_at REAL",
            "CREATE INDEX facts_pinned ON facts(agent_id, pinned) WHERE pinned = 1",
            # Every version of the base memory, by the cascade or by hand; `stale` asks the
            # long-term cascade to rewrite it (something it was distilled from was forgotten).
            "ALTER TABLE base_memory ADD COLUMN stale INTEGER NOT NULL DEFAULT 0",
            """CREATE TABLE base_memory_versions (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                agent_id INTEGER NOT NULL REFERENCES agents(id),
                content TEXT NOT NULL,
                written_by TEXT NOT NULL,
                created_at REAL NOT NULL
            )""",
            "CREATE INDEX base_memory_versions_by_agent ON base_memory_versions(agent_id, id)",
            "INSERT INTO base_memory_versions(agent_id, content, written_by, created_at) "
            "SELECT agent_id, content, 'cascade', updated_at FROM base_memory",
            # Append-only: rows are never updated or deleted, except that a purge scrubs the
            # text it erased from `before`/`after`, and deleting an agent removes its rows.
            """CREATE TABLE audit_log (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                agent_id INTEGER,
                at REAL NOT NULL,
                actor TEXT NOT NULL,
                action TEXT NOT NULL,
                target TEXT NOT NULL,
                target_ids TEXT NOT NULL DEFAULT '[]',
                before TEXT,
                after TEXT,
                detail TEXT
            )""",
            "CREATE INDEX audit_log_by_agent ON audit_log(agent_id, id)",
        ),
    ),
    Migration(
        6,
        "episodes",
        (
            # A summary is an episode: the span of time its messages cover, filled from them
            # by a trigger whenever a summary is written (by the cascade or an import).
            "ALTER TABLE summaries ADD COLUMN started_at REAL",
            "ALTER TABLE summaries ADD COLUMN ended_at REAL",
            "CREATE TRIGGER summaries_span AFTER INSERT ON summaries BEGIN "
            "UPDATE summaries SET "
            "started_at = (SELECT MIN(created_at) FROM conversation_log WHERE agent_id = "
            "new.agent_id AND id BETWEEN new.source_from_id AND new.source_to_id), "
            "ended_at = (SELECT MAX(created_at) FROM conversation_log WHERE agent_id = "
            "new.agent_id AND id BETWEEN new.source_from_id AND new.source_to_id) "
            "WHERE id = new.id; END",
            "UPDATE summaries SET "
            "started_at = (SELECT MIN(created_at) FROM conversation_log l WHERE l.agent_id = "
            "summaries.agent_id AND l.id BETWEEN source_from_id AND source_to_id), "
            "ended_at = (SELECT MAX(created_at) FROM conversation_log l WHERE l.agent_id = "
            "summaries.agent_id AND l.id BETWEEN source_from_id AND source_to_id)",
            "CREATE INDEX summaries_by_time ON summaries(agent_id, ended_at, started_at)",
            "CREATE INDEX conversation_log_by_time ON conversation_log(agent_id, created_at)",
            "CREATE VIRTUAL TABLE summaries_fts USING fts5("
            "content, content='summaries', content_rowid='id', tokenize='porter unicode61')",
            "CREATE TRIGGER summaries_fts_insert AFTER INSERT ON summaries BEGIN "
            "INSERT INTO summaries_fts(rowid, content) VALUES (new.id, new.content); END",
            "CREATE TRIGGER summaries_fts_delete AFTER DELETE ON summaries BEGIN "
            "INSERT INTO summaries_fts(summaries_fts, rowid, content) "
            "VALUES ('delete', old.id, old.content); END",
            "CREATE TRIGGER summaries_fts_update AFTER UPDATE OF content ON summaries BEGIN "
            "INSERT INTO summaries_fts(summaries_fts, rowid, content) "
            "VALUES ('delete', old.id, old.content); "
            "INSERT INTO summaries_fts(rowid, content) VALUES (new.id, new.content); END",
            "INSERT INTO summaries_fts(summaries_fts) VALUES ('rebuild')",
            # An episode's embedding (float32, the bound model's dimension). Episodes are few
            # (one per 20 messages), so they are compared by a scan, not a vec0 index.
            """CREATE TABLE summary_vectors (
                summary_id INTEGER PRIMARY KEY REFERENCES summaries(id),
                embedding BLOB NOT NULL
            )""",
            "CREATE TRIGGER summary_vectors_delete AFTER DELETE ON summaries BEGIN "
            "DELETE FROM summary_vectors WHERE summary_id = old.id; END",
        ),
    ),
    Migration(
        7,
        "dreams",
        (
            # One consolidation ("dream") of an agent's memory: its diary (Markdown naming
            # facts by id, so a purge leaves no text behind here), the facts it retired
            # (`changes`, JSON), the base memory it replaced (NULL: none rewritten) and the
            # watermark of the memory it saw, so a scheduled dream skips an unchanged agent.
            """CREATE TABLE dreams (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                agent_id INTEGER NOT NULL REFERENCES agents(id),
                started_at REAL NOT NULL,
                finished_at REAL NOT NULL,
                diary TEXT NOT NULL,
                changes TEXT NOT NULL DEFAULT '[]',
                base_memory_before TEXT,
                watermark TEXT NOT NULL,
                undone_at REAL
            )""",
            "CREATE INDEX dreams_by_agent ON dreams(agent_id, id)",
            # The vectors of the facts a dream retired, so undoing it restores them as they were.
            """CREATE TABLE dream_vectors (
                dream_id INTEGER NOT NULL REFERENCES dreams(id),
                fact_id INTEGER NOT NULL,
                embedding BLOB NOT NULL,
                PRIMARY KEY (dream_id, fact_id)
            )""",
            "CREATE TRIGGER dream_vectors_delete AFTER DELETE ON dreams BEGIN "
            "DELETE FROM dream_vectors WHERE dream_id = old.id; END",
        ),
    ),
    Migration(8, "richer_facts", richer_facts("REAL")),
    Migration(
        9,
        "topics",
        (
            # Topics (`memory/topics.py`): clusters of an agent's facts and episodes, rebuilt
            # as a whole from them (by the dream or on demand), so nothing here is a source of
            # truth. `open_questions` and `next_actions` are JSON lists of strings.
            """CREATE TABLE topics (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                agent_id INTEGER NOT NULL REFERENCES agents(id),
                position INTEGER NOT NULL,
                name TEXT NOT NULL,
                summary TEXT NOT NULL,
                open_questions TEXT NOT NULL DEFAULT '[]',
                next_actions TEXT NOT NULL DEFAULT '[]',
                written_by TEXT NOT NULL,
                built_at REAL NOT NULL,
                size INTEGER NOT NULL,
                last_active_at REAL NOT NULL
            )""",
            "CREATE INDEX topics_by_agent ON topics(agent_id, position)",
            # What each topic was made from: forgetting a fact or dropping an episode drops
            # the topics that hold it, so their text never outlives it.
            """CREATE TABLE topic_members (
                topic_id INTEGER NOT NULL REFERENCES topics(id) ON DELETE CASCADE,
                kind TEXT NOT NULL CHECK (kind IN ('fact', 'episode')),
                member_id INTEGER NOT NULL,
                at REAL NOT NULL,
                PRIMARY KEY (topic_id, kind, member_id)
            )""",
            "CREATE INDEX topic_members_by_member ON topic_members(kind, member_id)",
            # A topic's activity counts its members since a time: an index range, no table.
            "CREATE INDEX topic_members_by_time ON topic_members(topic_id, at)",
        ),
    ),
    Migration(10, "parked_learning", parked_learning("REAL")),
    Migration(11, "derived_text", DERIVED_TEXT),
    Migration(12, "reminders", reminders("INTEGER PRIMARY KEY AUTOINCREMENT", "INTEGER", "REAL")),
    Migration(13, "household", household("INTEGER PRIMARY KEY AUTOINCREMENT", "REAL", "BLOB")),
    Migration(14, "owned_reminders", owned_reminders("REAL")),
    Migration(15, "purge_jobs", purge_jobs("INTEGER PRIMARY KEY AUTOINCREMENT", "REAL")),
)
