"""`lobug topics`: an agent's topics (`memory/topics.py`), grouped again now (`--rebuild`,
which loads the chat model on the local file) or its global memory (`--global`: pinned facts
and the most active topics)."""

from __future__ import annotations

import click

from lobug.cli.access import MemoryAccess, memory_command
from lobug.cli.output import Json, Output

TOPIC_COLUMNS = [
    ("id", "id"),
    ("name", "name"),
    ("members", "facts+episodes"),
    ("last_active_at", "last active"),
    ("summary", "summary"),
]


def rows_of(topics: list[Json]) -> list[Json]:
    return [{**t, "members": len(t["fact_ids"]) + len(t["episode_ids"])} for t in topics]


def show_global(out: Output, agent: str, found: Json) -> None:
    if out.as_json:
        out.json(found)
        return
    pinned = "\n".join(f"- {f['content']}" for f in found["pinned"]) or "(none)"
    click.echo(f"Pinned facts of {agent}:\n{pinned}\n\nMost active topics:")
    out.table(rows_of(found["active_topics"]), TOPIC_COLUMNS)


@click.command()
@memory_command
@click.option("--rebuild", is_flag=True, help="group the facts and episodes into topics now")
@click.option(
    "--global", "global_", is_flag=True, help="the pinned facts and the most active topics"
)
def topics(memory: MemoryAccess, out: Output, agent: str, rebuild: bool, global_: bool) -> None:
    """The agent's topics: its facts and episodes grouped by meaning, each named and
    summarized (the nightly dream rebuilds them)."""
    if global_:
        show_global(out, agent, memory.global_memory(agent))
        return
    if rebuild:  # minutes on a small model: a pulsing bar on a terminal meanwhile
        with out.progress("grouping and naming topics"):
            listed = memory.rebuild_topics(agent)
    else:
        listed = memory.topics(agent)
    out.table(rows_of(listed), TOPIC_COLUMNS, data=listed)
