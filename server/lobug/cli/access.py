"""How every memory command reaches the memory: `MemoryAccess` (`lobug.cli.rest`) over the
REST API, a running server's (`--url`, `--token`), or by default the memory API of the
database file of `LOBUG_DB_PATH` run in this process (`rest.local_access`; safe while the
server runs: WAL and a busy timeout). A command prints the same thing either way."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import click

from lobug.cli.output import AgentMissing, Output, Refused, no_agent
from lobug.cli.rest import MemoryAccess, local_access

__all__ = ["MemoryAccess", "memory_command", "opened", "whole_memory_command"]


@contextmanager
def opened(url: str | None, token: str | None) -> Iterator[MemoryAccess]:
    """The server at `url`, or the local database file."""
    if url:
        access = MemoryAccess(url, token)
    else:
        from lobug.config import Settings

        access = local_access(Settings.from_env(os.environ))
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
