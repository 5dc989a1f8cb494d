"""`lobug dream`: consolidate an agent's memory now (`memory/dream.py`), preview it
(`--dry-run`), list the dreams (`--list`) or undo one (`--undo ID`). On the local file the
chat model is loaded only when the base memory is rewritten."""

from __future__ import annotations

import click

from lobug.cli.access import MemoryAccess, memory_command
from lobug.cli.output import Output

DREAM_COLUMNS = [
    ("id", "id"),
    ("finished_at", "when"),
    ("changes", "facts retired"),
    ("base_memory_rewritten", "base memory"),
    ("undone_at", "undone"),
]


@click.command()
@memory_command
@click.option("--dry-run", is_flag=True, help="say what the dream would do; change nothing")
@click.option("--list", "listing", is_flag=True, help="the agent's dreams, newest first")
@click.option("--undo", "undo_id", type=click.IntRange(1), help="undo the dream with this id")
def dream(
    memory: MemoryAccess,
    out: Output,
    agent: str,
    dry_run: bool,
    listing: bool,
    undo_id: int | None,
) -> None:
    """Merge near-duplicate facts, settle contradictions (the newer wins), retire low-value
    facts beyond LOBUG_MAX_FACTS and rewrite the base memory; print the dream's diary."""
    if listing:
        found = memory.dreams(agent, 20)
        rows = [{**d, "changes": len(d["changes"])} for d in found]
        out.table(rows, DREAM_COLUMNS, data=found)
        return
    if undo_id is not None:
        undone = memory.undo_dream(agent, undo_id)
        out.said(f"Dream {undo_id} of {agent} undone.", undone)
        return
    done = memory.dream(agent, dry_run)
    heading = "Dry run: nothing was changed.\n\n" if dry_run else f"Dream {done['id']}.\n\n"
    out.said(heading + done["diary"].rstrip(), done)
