"""`lobug agents | messages | blocks | base-memory | audit | stats`: the rest of the memory
at the terminal (facts and search are in `cli/facts.py`)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import click

from lobug.cli.access import MemoryAccess, memory_command
from lobug.cli.output import Json, Output, Refused

AGENT_COLUMNS = [
    ("name", "agent"),
    ("messages", "messages"),
    ("facts", "facts"),
    ("summaries", "summaries"),
    ("created_at", "created"),
]
MESSAGE_COLUMNS = [
    ("id", "id"),
    ("created_at", "when"),
    ("device_id", "device"),
    ("role", "role"),
    ("content", "content"),
]


class Moment(click.ParamType):
    """An ISO 8601 date or time (without a zone: UTC), as Unix seconds."""

    name = "time"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        if isinstance(value, float):
            return value
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            self.fail(f"{value!r} is not an ISO 8601 time (2026-05-01 or 2026-05-01T10:00)")
        return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def span_options(fn: Any) -> Any:
    fn = click.option("--until", type=Moment(), help="up to this time (UTC unless given)")(fn)
    fn = click.option("--since", type=Moment(), help="from this time (UTC unless given)")(fn)
    return click.option("--device", help="only this device (`api`: the memory API)")(fn)


class ListByDefault(click.Group):
    """A group that runs its `list` command when none is named: `lobug agents` lists, as
    `lobug agents --json` does (help stays `-h`)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or (args[0].startswith("-") and args[0] not in ctx.help_option_names):
            args = ["list", *args]
        return super().parse_args(ctx, args)


# ---------------------------------------------------------------------- agents


@click.group(cls=ListByDefault)
def agents() -> None:
    """The agents (memory namespaces) with their counts; `lobug agents` lists them."""


@agents.command("list")
@memory_command
def list_agents(memory: MemoryAccess, out: Output, agent: str) -> None:
    """Every agent with its messages, current facts and summaries."""
    out.table(memory.agents(), AGENT_COLUMNS)


@agents.command("create")
@memory_command
@click.argument("name")
def create_agent(memory: MemoryAccess, out: Output, agent: str, name: str) -> None:
    """Create an agent (a memory namespace); an existing one is left as it is."""
    out.said(f"agent {name} ready", memory.create_agent(name))


@agents.command("show")
@memory_command
@click.argument("name")
def show_agent(memory: MemoryAccess, out: Output, agent: str, name: str) -> None:
    """One agent's counts."""
    found = [a for a in memory.agents() if a["name"] == name]
    if not found:
        raise Refused(f"no agent named {name!r}")
    out.record(found[0])


@agents.command("delete")
@memory_command
@click.argument("name")
@click.option("--yes", is_flag=True, help="do not ask")
def delete_agent(memory: MemoryAccess, out: Output, agent: str, name: str, yes: bool) -> None:
    """Erase the agent and everything of it."""
    if not yes:
        click.confirm(f"Erase everything of {name!r}?", abort=True)
    deleted = memory.delete_agent(name)
    counts = ", ".join(f"{n} {kind}" for kind, n in sorted(deleted["deleted"].items()) if n)
    out.said(f"deleted {name}: {counts or 'it was empty'}", deleted)


# ---------------------------------------------------------------------- messages


@click.group(cls=ListByDefault)
def messages() -> None:
    """The conversation log; `lobug messages` lists it."""


def in_span(message: Json, device: str | None, since: float | None, until: float | None) -> bool:
    at = datetime.fromisoformat(message["created_at"].replace("Z", "+00:00")).timestamp()
    return (
        (device is None or message["device_id"] == device)
        and (since is None or at >= since)
        and (until is None or at <= until)
    )


@messages.command("list")
@memory_command
@span_options
@click.option("--limit", type=click.IntRange(1, 1000), default=50, show_default=True)
def list_messages(
    memory: MemoryAccess,
    out: Output,
    agent: str,
    device: str | None,
    since: float | None,
    until: float | None,
    limit: int,
) -> None:
    """The newest messages (of the newest 1000, those in the span), newest first."""
    filtered = device is not None or since is not None or until is not None
    found = memory.messages(agent, 1000 if filtered else limit)
    shown = [m for m in found if in_span(m, device, since, until)][:limit]
    out.table(shown, MESSAGE_COLUMNS)


@messages.command("forget")
@memory_command
@span_options
def forget_messages(
    memory: MemoryAccess,
    out: Output,
    agent: str,
    device: str | None,
    since: float | None,
    until: float | None,
) -> None:
    """Forget a stretch of conversation, and what was learned only from it."""
    if device is None and since is None and until is None:
        raise click.UsageError(
            "give --device, --since or --until (to erase everything: lobug agents delete)"
        )
    forgotten = memory.forget_span(agent, device, since, until)
    out.said(
        f"forgot {forgotten['messages']} messages, {forgotten['facts']} facts and "
        f"{forgotten['summaries']} summaries",
        forgotten,
    )


# ---------------------------------------------------------------------- blocks, base memory


@click.group(cls=ListByDefault)
def blocks() -> None:
    """Memory blocks: labelled texts always in the prompt; `lobug blocks` lists them."""


@blocks.command("list")
@memory_command
def list_blocks(memory: MemoryAccess, out: Output, agent: str) -> None:
    """The agent's blocks."""
    out.table(
        memory.blocks(agent),
        [("label", "label"), ("value", "value"), ("limit", "limit"), ("read_only", "read-only")],
    )


@blocks.command("get")
@memory_command
@click.argument("label")
def get_block(memory: MemoryAccess, out: Output, agent: str, label: str) -> None:
    """One block's value."""
    found = [b for b in memory.blocks(agent) if b["label"] == label]
    if not found:
        raise Refused(f"agent {agent!r} has no memory block {label!r}")
    if out.as_json:
        out.json(found[0])
    else:
        click.echo(found[0]["value"])


@blocks.command("set")
@memory_command
@click.argument("label")
@click.argument("value")
def set_block(memory: MemoryAccess, out: Output, agent: str, label: str, value: str) -> None:
    """Create the block or change its value (kept in its history)."""
    out.said(f"block {label} set", memory.set_block(agent, label, value))


@blocks.command("delete")
@memory_command
@click.argument("label")
@click.option("--purge", is_flag=True, help="also erase its texts from the audit log")
def delete_block(memory: MemoryAccess, out: Output, agent: str, label: str, purge: bool) -> None:
    """Remove the block and its history (read-only ones too)."""
    deleted = memory.delete_block(agent, label, purge)
    out.said(f"block {label} {'purged' if purge else 'deleted'}", deleted)


@click.group("base-memory")
def base_memory() -> None:
    """The base memory: one document per agent, always in the prompt."""


@base_memory.command("show")
@memory_command
def show_base_memory(memory: MemoryAccess, out: Output, agent: str) -> None:
    """The current base memory."""
    found = memory.base_memory(agent)
    if out.as_json:
        out.json(found)
    else:
        click.echo(found["content"] or "(empty)")


@base_memory.command("edit")
@memory_command
def edit_base_memory(memory: MemoryAccess, out: Output, agent: str) -> None:
    """Edit the base memory in $EDITOR; saving writes a new version."""
    current: str = memory.base_memory(agent)["content"]
    edited = click.edit(current, extension=".md", require_save=True)
    if edited is None or edited == current:
        out.said("base memory unchanged", memory.base_memory(agent))
        return
    out.said("base memory written", memory.write_base_memory(agent, edited))


# ---------------------------------------------------------------------- audit, stats


@click.command()
@memory_command
@click.option("--limit", type=click.IntRange(1, 1000), default=50, show_default=True)
def audit(memory: MemoryAccess, out: Output, agent: str, limit: int) -> None:
    """Who changed the agent's memory, newest first."""
    page = memory.audit(agent, limit)
    columns = [
        ("at", "when"),
        ("actor", "actor"),
        ("action", "action"),
        ("target", "target"),
        ("target_ids", "ids"),
        ("after", "after"),
    ]
    out.table(page["entries"], columns, data=page)


@click.command()
@memory_command
def stats(memory: MemoryAccess, out: Output, agent: str) -> None:
    """Counts per agent, the database's size, the memory-work queue (with the exchanges
    parked after failing: `lobug learning`) and the models."""
    found = memory.stats()
    if out.as_json:
        out.json(found)
        return
    keys = ["database", "size_bytes", "embedding_model", "chat_model", "learning_queue"]
    out.record(found, [*keys, "learning_parked"])
    click.echo()
    out.table(found["agents"], AGENT_COLUMNS)
