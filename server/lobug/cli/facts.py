"""`lobug facts ...` and `lobug search`: see, add, correct, pin, score and forget facts, and
search facts and messages with their scores."""

from __future__ import annotations

from typing import cast

import click

from lobug.cli.access import MemoryAccess, memory_command
from lobug.cli.output import Column, Output, cell
from lobug.memory.search import SearchMode
from lobug.store.models import DEFAULT_FACT_TYPE, FACT_TYPES, FactFlags, FactQuery

FACT_COLUMNS: list[Column] = [
    ("id", "id"),
    ("type", "type"),
    ("content", "content"),
    ("due_at", "due"),
    ("pinned", "pinned"),
    ("user_score", "score"),
    ("created_at", "created"),
]
HISTORY_COLUMNS: list[Column] = [
    *FACT_COLUMNS,
    ("superseded_by", "superseded by"),
    ("forgotten_at", "forgotten"),
]


@click.group()
def facts() -> None:
    """See and change an agent's facts (changes are audited as `cli`)."""


@facts.command("list")
@memory_command
@click.option("--type", "fact_type", type=click.Choice(FACT_TYPES), help="only this type")
@click.option("--pinned/--unpinned", default=None, help="only pinned (or unpinned) facts")
@click.option("--history", is_flag=True, help="every version, not only current facts")
@click.option("--limit", type=click.IntRange(1, 1000), default=100, show_default=True)
def list_facts(
    memory: MemoryAccess,
    out: Output,
    agent: str,
    fact_type: str | None,
    pinned: bool | None,
    history: bool,
    limit: int,
) -> None:
    """The agent's facts, newest first."""
    query = FactQuery(fact_type=fact_type, pinned=pinned, include_history=history, limit=limit)
    page = memory.facts(agent, query)
    out.table(page["facts"], HISTORY_COLUMNS if history else FACT_COLUMNS, data=page)


@facts.command("show")
@memory_command
@click.argument("fact_id", type=click.IntRange(min=1))
def show_fact(memory: MemoryAccess, out: Output, agent: str, fact_id: int) -> None:
    """One fact with every version of it and its source messages."""
    fact = memory.fact(agent, fact_id)
    if out.as_json:
        out.json(fact)
        return
    out.record(fact, [key for key in fact if key not in ("versions", "sources")])
    click.echo("\nversions:")
    out.table(fact["versions"], HISTORY_COLUMNS)
    if fact["sources"]:
        click.echo("\nlearned from:")
        out.table(fact["sources"], [("id", "id"), ("role", "role"), ("content", "content")])


@facts.command("add")
@memory_command
@click.argument("text")
@click.option("--type", "fact_type", type=click.Choice(FACT_TYPES), default=DEFAULT_FACT_TYPE)
def add_fact(memory: MemoryAccess, out: Output, agent: str, text: str, fact_type: str) -> None:
    """Write a fact by hand; a near duplicate of a current fact becomes its new version."""
    added = memory.add_fact(agent, text, fact_type)
    replaced = f" (replaces {', '.join(added['superseded'])})" if added["superseded"] else ""
    out.said(f"added fact {added['id']}{replaced}", added)


@facts.command("edit")
@memory_command
@click.argument("fact_id", type=click.IntRange(min=1))
@click.argument("text")
def edit_fact(memory: MemoryAccess, out: Output, agent: str, fact_id: int, text: str) -> None:
    """Correct a fact: the new text becomes its next version."""
    fact = memory.correct_fact(agent, fact_id, text)
    out.said(f"fact {fact_id} corrected: now fact {fact['id']}", fact)


@facts.command("forget")
@memory_command
@click.argument("fact_id", type=click.IntRange(min=1))
@click.option("--purge", is_flag=True, help="also erase the text of every version")
def forget_fact(memory: MemoryAccess, out: Output, agent: str, fact_id: int, purge: bool) -> None:
    """Forget a fact and all its versions (out of every prompt and search at once)."""
    fact = memory.forget_fact(agent, fact_id, purge)
    out.said(f"fact {fact_id} {'purged' if purge else 'forgotten'}", fact)


def flag(memory: MemoryAccess, out: Output, agent: str, fact_id: int, flags: FactFlags) -> None:
    fact = memory.flag_fact(agent, fact_id, flags)
    pinned, score = cell(fact["pinned"]), cell(fact["user_score"])
    out.said(f"fact {fact_id}: pinned {pinned}, score {score}", fact)


@facts.command("pin")
@memory_command
@click.argument("fact_id", type=click.IntRange(min=1))
def pin_fact(memory: MemoryAccess, out: Output, agent: str, fact_id: int) -> None:
    """Always keep the fact in the prompt."""
    flag(memory, out, agent, fact_id, FactFlags(pinned=True))


@facts.command("unpin")
@memory_command
@click.argument("fact_id", type=click.IntRange(min=1))
def unpin_fact(memory: MemoryAccess, out: Output, agent: str, fact_id: int) -> None:
    """Let the fact compete for the prompt again."""
    flag(memory, out, agent, fact_id, FactFlags(pinned=False))


@facts.command("score")
@memory_command
@click.argument("fact_id", type=click.IntRange(min=1))
@click.argument("score")
def score_fact(memory: MemoryAccess, out: Output, agent: str, fact_id: int, score: str) -> None:
    """Rate a fact 0-10 (`none` clears the score); search favours high scores."""
    if score == "none":
        flags = FactFlags(clear_score=True)
    elif score.isdigit() and 0 <= int(score) <= 10:
        flags = FactFlags(user_score=int(score))
    else:
        raise click.BadParameter("a score is 0-10 or none", param_hint="SCORE")
    flag(memory, out, agent, fact_id, flags)


@click.command("search")
@memory_command
@click.argument("query")
@click.option(
    "--mode",
    type=click.Choice(["hybrid", "vector", "keyword"]),
    default="hybrid",
    show_default=True,
)
@click.option("--limit", type=click.IntRange(1, 20), default=5, show_default=True)
def search(
    memory: MemoryAccess, out: Output, agent: str, query: str, mode: str, limit: int
) -> None:
    """Facts and messages found for QUERY, best first, with their similarity."""
    hits = memory.search(agent, query, cast(SearchMode, mode), limit)
    out.table(hits, [("kind", "kind"), ("id", "id"), ("score", "score"), ("text", "text")])
