"""`lobug learning`: the learning queue (`memory/work_queue.py`). `list` (or `lobug learning`
alone) counts the exchanges waiting for their memory work and shows those parked after
failing (the model's output could not be read, or the model was down, `MAX_ATTEMPTS` times);
`retry [ID...]` runs the parked ones (or those ids) again: on the local file here, with the
configured models, waiting for them; on a server (`--url`, an admin token) by its memory
work, answered at once."""

from __future__ import annotations

import click

from lobug.cli.access import MemoryAccess, whole_memory_command
from lobug.cli.memory import ListByDefault
from lobug.cli.output import Output
from lobug.memory.work_queue import RETRY_BATCH

PARKED_COLUMNS = [
    ("id", "id"),
    ("agent", "agent"),
    ("said_at", "said"),
    ("attempts", "attempts"),
    ("error", "last error"),
    ("said", "words"),
]


@click.group(cls=ListByDefault)
def learning() -> None:
    """What the memory still has to learn from, and what it failed to; `lobug learning`
    lists it."""


@learning.command("list")
@whole_memory_command
@click.option("--limit", type=click.IntRange(0, RETRY_BATCH), default=50, show_default=True)
def list_learning(memory: MemoryAccess, out: Output, agent: str | None, limit: int) -> None:
    """Exchanges waiting to be learned from, and the oldest parked ones (of `--agent`)."""
    found = memory.learning(limit)
    parked = [p for p in found["parked_exchanges"] if agent is None or p["agent"] == agent]
    if out.as_json:
        out.json({**found, "parked_exchanges": parked})
        return
    click.echo(
        f"{found['queued']} exchanges waiting to be learned from, {found['parked']} parked "
        f"after {found['max_attempts']} failed attempts"
        + (" (`lobug learning retry` runs them again)" if found["parked"] else "")
    )
    if parked:
        click.echo()
        out.table(parked, PARKED_COLUMNS)


@learning.command("retry")
@whole_memory_command
@click.argument("ids", nargs=-1, type=click.IntRange(1))
def retry_learning(
    memory: MemoryAccess, out: Output, agent: str | None, ids: tuple[int, ...]
) -> None:
    """Learn from the parked exchanges (or those IDS) again; one failing again stays
    parked with its new error."""
    chosen = list(ids) or None
    if agent is not None:  # that agent's alone
        listed = memory.learning(RETRY_BATCH)["parked_exchanges"]
        theirs = [int(p["id"]) for p in listed if p["agent"] == agent]
        chosen = [i for i in chosen or theirs if i in theirs]
    done = memory.retry_learning(chosen)
    retried = f"{done['retrying']} parked exchange{'' if done['retrying'] == 1 else 's'}"
    if done["waited"]:
        message = f"Retried {retried}; {done['parked']} still parked."
    else:
        message = (
            f"{retried} handed to the server's memory work; `lobug learning list` shows "
            "those still parked."
        )
    out.said(message, done)
