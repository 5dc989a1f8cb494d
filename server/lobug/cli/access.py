"""The one interface every memory command talks to, `MemoryAccess`, implemented once over
the REST API (`lobug.cli.remote.RemoteAccess`): a running server's (`--url`, `--token`), or
by default the memory API of the database file of `LOBUG_DB_PATH` run in this process
(`remote.local_access`; safe while the server runs: WAL and a busy timeout). A command
prints the same thing either way."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

import click

from lobug.cli.output import AgentMissing, Output, Refused, no_agent
from lobug.memory.search import SearchMode
from lobug.store.models import FactFlags, FactQuery

Json = dict[str, Any]


class MemoryAccess(Protocol):
    default_agent: str
    where: str  # the database's path, or the server's URL

    def agents(self) -> list[Json]: ...

    def create_agent(self, name: str) -> Json: ...

    def delete_agent(self, name: str) -> Json: ...

    def facts(self, agent: str, query: FactQuery) -> Json: ...

    def fact(self, agent: str, fact_id: int) -> Json: ...

    def add_fact(self, agent: str, text: str, fact_type: str | None) -> Json: ...

    def correct_fact(self, agent: str, fact_id: int, text: str) -> Json: ...

    def flag_fact(self, agent: str, fact_id: int, flags: FactFlags) -> Json: ...

    def forget_fact(self, agent: str, fact_id: int, purge: bool) -> Json: ...

    def search(self, agent: str, text: str, mode: SearchMode, limit: int) -> list[Json]: ...

    def messages(self, agent: str, limit: int) -> list[Json]: ...

    def forget_span(
        self, agent: str, device: str | None, since: float | None, until: float | None
    ) -> Json: ...

    def blocks(self, agent: str) -> list[Json]: ...

    def set_block(self, agent: str, label: str, value: str) -> Json: ...

    def delete_block(self, agent: str, label: str, purge: bool) -> Json: ...

    def base_memory(self, agent: str) -> Json: ...

    def write_base_memory(self, agent: str, content: str) -> Json: ...

    def audit(self, agent: str, limit: int) -> Json: ...

    def dream(self, agent: str, dry_run: bool) -> Json: ...

    def dreams(self, agent: str, limit: int) -> list[Json]: ...

    def undo_dream(self, agent: str, dream_id: int) -> Json: ...

    def topics(self, agent: str) -> list[Json]: ...

    def rebuild_topics(self, agent: str) -> list[Json]: ...

    def global_memory(self, agent: str) -> Json: ...

    def stats(self) -> Json: ...

    def learning(self, limit: int) -> Json: ...

    def retry_learning(self, ids: list[int] | None) -> Json: ...

    def export(self, agent: str | None) -> Iterator[bytes]: ...

    def import_document(self, document: Any, as_agent: str | None, merge: bool) -> Json: ...

    def people(self, agent: str) -> list[Json]: ...

    def add_person(self, agent: str, name: str, devices: list[str]) -> Json: ...

    def forget_person(self, agent: str, person_id: int, delete: bool) -> Json: ...

    def person_facts(self, agent: str, person_id: int) -> list[Json]: ...

    def set_device_person(self, agent: str, device: str, person_id: int | None) -> list[Json]: ...

    def move_fact(self, agent: str, fact_id: int, scope: str, shareable: bool) -> Json: ...

    def close(self) -> None: ...


@contextmanager
def opened(url: str | None, token: str | None) -> Iterator[MemoryAccess]:
    """The server at `url`, or the local database file."""
    from lobug.cli import remote

    access: MemoryAccess
    if url:
        access = remote.RemoteAccess(url, token)
    else:
        from lobug.config import Settings

        access = remote.local_access(Settings.from_env(os.environ))
    try:
        yield access
    finally:
        access.close()


def memory_command(fn: Callable[..., None]) -> Callable[..., None]:
    """Give a command `--url`, `--token`, `--json` and `--agent`, and call it with the open
    `MemoryAccess`, its `Output` and the agent (default: LOBUG_AGENT, or the server's, created
    on first use; another agent must have been created: `lobug agents create`)."""
    return with_access(fn, default_agent=True)


def whole_memory_command(fn: Callable[..., None]) -> Callable[..., None]:
    """`memory_command` for commands on every agent unless `--agent` names one (None)."""
    return with_access(fn, default_agent=False)


def with_access(fn: Callable[..., None], *, default_agent: bool) -> Callable[..., None]:
    @click.option("--json", "as_json", is_flag=True, help="machine-readable output")
    @click.option("--token", envvar="LOBUG_TOKEN", help="admin token for --url (or LOBUG_TOKEN)")
    @click.option(
        "--url",
        envvar="LOBUG_URL",
        help="a running server (http://host:8321, or a memory server); default: the local "
        "database file of LOBUG_DB_PATH",
    )
    @click.option(
        "--agent",
        "-a",
        help="the agent (memory namespace); default "
        + ("LOBUG_AGENT" if default_agent else "every agent"),
    )
    @functools.wraps(fn)
    def command(
        agent: str | None, url: str | None, token: str | None, as_json: bool, **kwargs: Any
    ) -> None:
        with opened(url, token) as access:
            chosen = agent or (access.default_agent if default_agent else None)
            if default_agent and agent is None:  # it exists from the first command on
                access.create_agent(access.default_agent)
            try:
                fn(access, Output(as_json), chosen, **kwargs)
            except AgentMissing:
                if chosen is None:
                    raise
                raise Refused(no_agent(chosen, access.where)) from None

    return command
