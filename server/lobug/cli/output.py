"""How commands answer: an aligned table (rich) for people, JSON with `--json`, progress
bars only on a terminal, and the exit codes (0 done, 1 not found or refused, 2 usage)."""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import click

OK, REFUSED, USAGE = 0, 1, 2

Column = tuple[str, str]
Json = dict[str, Any]  # an answer of the REST API
PIPED_WIDTH = 160
ISO_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")  # (key in the row, header)


class Refused(click.ClickException):
    """Not found, refused by the store or the server, or the server unreachable: exit 1."""

    exit_code = REFUSED


class AgentMissing(Refused):
    """The agent a call named was never created (`access.with_access` says where, and how)."""


class ConfigurationError(click.ClickException):
    """A LOBUG_* variable is wrong: exit 2, as a usage error."""

    exit_code = USAGE

    def format_message(self) -> str:
        return f"configuration error: {self.message}"


def no_agent(name: str, where: str) -> str:
    """The refusal for an agent never created, with the command that creates it."""
    return f"no agent named {name!r} in {where} (create it with `lobug agents create {name}`)"


def by_score(hits: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Search hits of every kind in one list, highest `score` first (a hit without one, a
    fact ranked by a server older than the fact scores, keeps its place before those with
    one); ties keep the search's order."""
    return sorted(hits, key=lambda hit: -math.inf if hit["score"] is None else -hit["score"])


class Output:
    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json

    def json(self, data: Any) -> None:
        click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))

    def table(
        self, rows: Sequence[dict[str, Any]], columns: Sequence[Column], data: Any = None
    ) -> None:
        """`rows` as a table; with --json, `data` (or the rows) as JSON."""
        if self.as_json:
            self.json(rows if data is None else data)
            return
        from rich.table import Table
        from rich.text import Text

        table = Table(box=None, header_style="bold", pad_edge=False)
        for _, header in columns:
            table.add_column(header, overflow="fold")
        for row in rows:
            table.add_row(*(Text(cell(row.get(key))) for key, _ in columns))
        console().print(table)

    def record(self, data: dict[str, Any], keys: Sequence[str] | None = None) -> None:
        """One object as `key  value` lines (or JSON)."""
        if self.as_json:
            self.json(data)
            return
        shown = [(key, data.get(key)) for key in (keys or list(data))]
        self.table([{"k": k, "v": v} for k, v in shown], [("k", ""), ("v", "")])

    def said(self, message: str, data: Any) -> None:
        """A change done: a sentence for people, the answer as JSON."""
        if self.as_json:
            self.json(data)
        else:
            click.echo(message)

    @contextmanager
    def progress(self, description: str) -> Iterator[Any]:
        """A bar pulsing on a terminal while a long step runs (never with --json or when
        piped); yields `advance(n)` to count what is done (bytes written, say)."""
        if self.as_json or not sys.stderr.isatty():
            yield lambda n=1: None
            return
        from rich.progress import Progress

        with Progress(console=console(stderr=True), transient=True) as bar:
            task = bar.add_task(description, total=None)
            yield lambda n=1: bar.advance(task, n)


def console(stderr: bool = False) -> Any:
    """A terminal's own width; piped output is not folded at 80 columns."""
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    width = None if stream.isatty() else PIPED_WIDTH
    return Console(stderr=stderr, highlight=False, soft_wrap=False, width=width)


def cell(value: Any) -> str:
    """A value as a table shows it: times to the second, flags as yes/no, lists joined."""
    if isinstance(value, str) and ISO_TIME.fullmatch(value):
        return value[:19].replace("T", " ")
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)
