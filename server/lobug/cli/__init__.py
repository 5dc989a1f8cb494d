"""The `lobug` command line (click): servers (`serve`, `memory-server`, `reindex`,
`install-service`), the memory at the terminal (`agents`, `facts`, `search`, `messages`,
`blocks`, `base-memory`, `audit`, `dream`, `topics`, `stats`, `learning`), `chat`, the bundled
chat models (`models`), and moving memory (`export`, `import`, `backup`, `restore`).

Exit codes: 0 done; 1 not found, refused (by the store, the server or a running server
holding the database) or unreachable; 2 usage or configuration error."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import click

from lobug.cli import (
    chat,
    dream,
    facts,
    learning,
    memory,
    models,
    people,
    servers,
    topics,
    transfer,
)
from lobug.cli.output import USAGE, ConfigurationError, Refused
from lobug.config import ConfigError

SERVERS = ("serve", "memory-server", "reindex")


class LobugGroup(click.Group):
    """Turns refusals (the store's, the domain's: a ValueError such as a fact type the
    curation refused, a failing model, a file that cannot be written) into exit code 1 with
    their message."""

    def invoke(self, ctx: click.Context) -> Any:
        from lobug.backends.base import BackendError
        from lobug.memory.transfer import InvalidExport
        from lobug.store.errors import StoreError

        try:
            return super().invoke(ctx)
        except ConfigError as exc:
            raise ConfigurationError(str(exc)) from exc
        except (StoreError, InvalidExport, BackendError, OSError, ValueError) as exc:
            raise Refused(str(exc)) from exc


@click.group(cls=LobugGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--log-level",
    envvar="LOBUG_LOG_LEVEL",
    help="default: info for the servers, warning for the other commands",
)
@click.pass_context
def cli(ctx: click.Context, log_level: str | None) -> None:
    """Lo-Bug assistant server and its memory.

    Memory commands work on the local database (LOBUG_DB_PATH; safe while the server runs)
    or, with --url and --token, on a running server. Exit codes: 0 done, 1 not found or
    refused, 2 usage. Shell completion: eval "$(_LOBUG_COMPLETE=bash_source lobug)"."""
    if log_level is None:
        log_level = "info" if ctx.invoked_subcommand in SERVERS else "warning"
    logging.basicConfig(
        level=log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    ctx.obj = {"log_level": log_level.lower()}


for command in (
    servers.serve,
    servers.memory_server,
    servers.reindex,
    servers.mcp,
    servers.migrate_db,
    servers.install_service,
    memory.agents,
    facts.facts,
    facts.search,
    memory.messages,
    memory.blocks,
    memory.base_memory,
    memory.audit,
    dream.dream,
    topics.topics,
    memory.stats,
    learning.learning,
    people.people,
    chat.chat,
    models.models,
    transfer.export,
    transfer.import_,
    transfer.backup,
    transfer.restore,
):
    cli.add_command(command)


def main(argv: Sequence[str] | None = None) -> int:
    """Run `lobug`; the exit code."""
    try:
        cli.main(args=list(argv) if argv is not None else None, prog_name="lobug")
    except SystemExit as exit:
        code = exit.code
        return code if isinstance(code, int) else (0 if code is None else USAGE)
    return 0
