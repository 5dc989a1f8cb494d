"""Purge jobs, SQLite's migration 14 and PostgreSQL's 9 alike (`memory/purges.py`,
`sql/purges.py`): a purge (of facts, of messages, of a person) is recorded here with the ids it
erases, never their text, before its first deletion; it is finished (`finished_at`, with its
counts) only when every copy is gone, and an unfinished one is resumed at start-up."""

from __future__ import annotations


def purge_jobs(id_type: str, time_type: str) -> tuple[str, ...]:
    """The purge-jobs migration with the engine's types of an id and a time."""
    return (
        f"""CREATE TABLE purge_jobs (
            id {id_type},
            agent_id BIGINT NOT NULL REFERENCES agents(id),
            kind TEXT NOT NULL,
            target_ids TEXT NOT NULL DEFAULT '[]',
            fact_ids TEXT NOT NULL DEFAULT '[]',
            message_ids TEXT NOT NULL DEFAULT '[]',
            actor TEXT NOT NULL,
            created_at {time_type} NOT NULL,
            finished_at {time_type},
            counts TEXT
        )""",
        "CREATE INDEX purge_jobs_unfinished ON purge_jobs(finished_at, id)",
    )
