"""Commands that run or install a server: `serve`, `memory-server`, `reindex` (unchanged
from the argparse CLI) and `install-service` (a systemd user unit for `lobug serve`)."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

import click

from lobug.config import Settings

UNIT_NAME = "lobug.service"


@click.command()
@click.option("--host", help="overrides LOBUG_HOST")
@click.option("--port", type=int, help="overrides LOBUG_PORT")
@click.pass_context
def serve(ctx: click.Context, host: str | None, port: int | None) -> None:
    """Run the device server."""
    from lobug.app import create_app
    from lobug.serving import serve as run

    settings = Settings.from_env(os.environ)
    settings = settings.with_overrides(host=host or settings.host, port=port or settings.port)
    run(create_app(settings), settings.host, settings.port, ctx.obj["log_level"])


@click.command("memory-server")
@click.option("--host", help="overrides MEMORY_SERVER_HOST")
@click.option("--port", type=int, help="overrides MEMORY_SERVER_PORT")
@click.pass_context
def memory_server(ctx: click.Context, host: str | None, port: int | None) -> None:
    """Run only the memory REST API (MEMORY_* variables)."""
    from lobug.app import create_memory_app
    from lobug.serving import serve as run

    settings = Settings.from_memory_env(os.environ)
    settings = settings.with_overrides(host=host or settings.host, port=port or settings.port)
    run(create_memory_app(settings), settings.host, settings.port, ctx.obj["log_level"])


@click.command()
@click.option("--db", help="the database file (default LOBUG_DB_PATH)")
@click.option("--agent", help="the agent whose memory to serve (default LOBUG_AGENT)")
def mcp(db: str | None, agent: str | None) -> None:
    """Serve the memory over MCP on stdin/stdout (for desktop assistants and coding agents)."""
    from lobug.mcp_server import run_stdio

    argv = [*(["--db", db] if db else []), *(["--agent", agent] if agent else [])]
    run_stdio(argv)


@click.command()
def reindex() -> None:
    """Re-embed every fact and message with the configured embedding model."""
    from lobug.backends import build_embedder
    from lobug.store.engines import open_database

    settings = Settings.from_env(os.environ)
    embedder = build_embedder(settings)
    store = open_database(
        settings.store_url, pool_size=settings.db_pool_size, ef_search=settings.hnsw_ef_search
    )
    try:
        count = store.reindex(embedder.model, embedder.dimension, embedder.embed_batch)
    finally:
        store.close()
    click.echo(
        f"re-embedded {count} facts and messages with {embedder.model} "
        f"({embedder.dimension} dimensions)"
    )


@click.command("migrate-db")
@click.option("--from", "source", required=True, help="sqlite:///path")
@click.option("--to", "target", required=True, help="postgresql://user:pass@host:port/db")
@click.option("--batch", default=1000, show_default=True, help="rows per transaction")
def migrate_db(source: str, target: str, batch: int) -> None:
    """Copy everything (vectors included) from SQLite to PostgreSQL; safe to re-run. Ends
    by comparing counts and a checksum of the message texts on both sides (exit 1 if they
    differ)."""
    from lobug.cli.output import Refused
    from lobug.store.migrate import migrate_database

    with click.progressbar(length=0, label="copying", hidden=not sys.stderr.isatty()) as bar:

        def progress(table: str, done: int, total: int) -> None:
            bar.length = total
            bar.label = table
            bar.update(done - bar.pos)

        report = migrate_database(source, target, batch=batch, progress=progress)
    for table, count in report.source_counts.items():
        click.echo(f"{table:28} {count:>10} {report.target_counts.get(table, 0):>10}")
    same = report.source_checksum == report.target_checksum
    click.echo(f"message checksum: {'equal' if same else 'DIFFERENT'}")
    if not report.ok:
        raise Refused("the copy differs from the source")


@click.command("install-service")
@click.option("--write", is_flag=True, help=f"write ~/.config/systemd/user/{UNIT_NAME}")
def install_service(write: bool) -> None:
    """Print a systemd user unit for `lobug serve` with the current LOBUG_* variables."""
    Settings.from_env(os.environ)  # a configuration error is better found now
    unit = service_unit(os.environ, Path(sys.executable))
    if not write:
        click.echo(unit, nl=False)
        return
    path = Path.home() / ".config" / "systemd" / "user" / UNIT_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(unit)
    path.chmod(0o600)  # it may hold tokens
    click.echo(f"wrote {path}; enable it with: systemctl --user enable --now lobug")


def service_unit(environ: dict[str, str] | os._Environ[str], python: Path) -> str:
    """The unit text: `python -m lobug serve` with every LOBUG_, MEMORY_ and model-server
    variable of `environ`."""
    names = sorted(n for n in environ if n.startswith(("LOBUG_", "MEMORY_", "OLLAMA_", "OPENAI_")))
    lines = [
        "[Unit]",
        "Description=Lo-Bug assistant server",
        "After=network-online.target",
        "",
        "[Service]",
        f"ExecStart={shlex.quote(str(python))} -m lobug serve",
        *(f"Environment={quote_systemd(f'{n}={environ[n]}')}" for n in names),
        "Restart=on-failure",
        "RestartSec=5",
        "",
        "[Install]",
        "WantedBy=default.target",
    ]
    return "\n".join(lines) + "\n"


def quote_systemd(assignment: str) -> str:
    """An `Environment=` value, double-quoted when it holds spaces or quotes."""
    if any(c in assignment for c in ' "\\'):
        return '"' + assignment.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return assignment
