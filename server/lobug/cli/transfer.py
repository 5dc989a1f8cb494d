"""`lobug export | import | backup | restore`: move memory between machines as a JSON
document (or readable Markdown), and back the database file up while the server runs."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import click

from lobug.cli.access import MemoryAccess, whole_memory_command
from lobug.cli.output import Output, Refused
from lobug.config import Settings


@click.command("export")
@whole_memory_command
@click.option("--format", "form", type=click.Choice(["json", "markdown"]), default="json")
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="file (default: stdout)"
)
@click.argument("directory", required=False, type=click.Path(file_okay=False, path_type=Path))
def export(
    memory: MemoryAccess,
    out: Output,
    agent: str | None,
    form: str,
    output: Path | None,
    directory: Path | None,
) -> None:
    """Every agent (or --agent) as one JSON document; `--format markdown DIR` writes the
    agent's memory as Markdown files instead (GLOBAL_MEMORY.md, facts/, days/, audit.md)."""
    if form == "markdown":
        if directory is None:
            raise click.UsageError("--format markdown needs a DIRECTORY")
        write_markdown(memory, out, agent or memory.default_agent, directory)
        return
    if directory is not None:
        raise click.UsageError("a DIRECTORY is for --format markdown; use -o FILE for JSON")
    with out.progress("exporting") as advance:
        if output is None:
            copy(memory.export(agent), sys.stdout.buffer, advance)
            return
        with open_private(output) as target:
            copy(memory.export(agent), target, advance)
    if out.as_json:
        out.json({"file": str(output)})


def copy(chunks: Iterator[bytes], target: IO[bytes], advance: Any) -> None:
    for chunk in chunks:
        target.write(chunk)
        advance(len(chunk))
    target.flush()


def open_private(path: Path) -> IO[bytes]:
    """A file only its owner may read: an export holds a person's memory."""
    return os.fdopen(os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600), "wb")


def write_markdown(memory: MemoryAccess, out: Output, agent: str, directory: Path) -> None:
    from lobug.memory.artifacts import write_markdown as write_files
    from lobug.memory.transfer import read_document

    with tempfile.TemporaryFile() as spool:
        copy(memory.export(agent), spool, lambda n: None)
        spool.seek(0)
        records = read_document(json.load(spool))
    written = write_files(records[0], directory)
    names = [str(path.relative_to(directory)) for path in written]
    out.said(
        f"wrote {len(names)} files to {directory}", {"directory": str(directory), "files": names}
    )


@click.command("import")
@whole_memory_command
@click.argument("file", type=click.File("rb"))
@click.option("--as", "as_agent", help="import the document's one agent under this name")
@click.option("--merge", is_flag=True, help="add to an agent that already holds memory")
def import_(
    memory: MemoryAccess,
    out: Output,
    agent: str | None,
    file: IO[bytes],
    as_agent: str | None,
    merge: bool,
) -> None:
    """Import an export document: what the database does not hold yet is added, with new
    ids and vectors from the configured embedding model, in one transaction. Importing the
    same file again adds nothing."""
    from lobug.memory.transfer import InvalidExport, load_document

    try:
        document = load_document(file)  # not JSON, too deep, a lone surrogate: refused here
    except InvalidExport as exc:
        raise Refused(f"{file.name}: {exc}") from None
    with out.progress("importing"):
        answer = memory.import_document(document, as_agent or agent, merge)
    lines = [
        f"{i['agent']}: added "
        + (
            ", ".join(f"{n} {kind}" for kind, n in i["added"].items() if n)
            or "nothing (already there)"
        )
        for i in answer["imported"]
    ]
    out.said("\n".join(lines), answer)


@click.command()
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="machine-readable output")
def backup(path: Path, as_json: bool) -> None:
    """Copy the database (LOBUG_DB_PATH) to PATH while the server runs (SQLite's online
    backup); the copy is checked with PRAGMA integrity_check."""
    from lobug.store.sqlite.engine import SQLiteStore

    out = Output(as_json)
    settings = Settings.from_env(os.environ)
    if not settings.db_path.exists():
        raise Refused(f"no database at {settings.db_path}")
    store = SQLiteStore(settings.db_path)
    try:
        with out.progress("backing up"):
            verdict = store.backup(path)
    finally:
        store.close()
    size = path.stat().st_size
    out.said(
        f"backed up {settings.db_path} to {path} ({size} bytes, integrity {verdict})",
        {
            "database": str(settings.db_path),
            "backup": str(path),
            "size_bytes": size,
            "integrity": verdict,
        },
    )


@click.command()
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--yes", is_flag=True, help="do not ask")
@click.option("--json", "as_json", is_flag=True, help="machine-readable output")
def restore(path: Path, yes: bool, as_json: bool) -> None:
    """Replace the database (LOBUG_DB_PATH) with a backup. Refused while a server, or any
    other lobug process, has the database open."""
    from lobug.store.sqlite.backup import restore_database

    out = Output(as_json)
    settings = Settings.from_env(os.environ)
    if not yes:
        click.confirm(f"Replace {settings.db_path} with {path}?", abort=True)
    with out.progress("restoring"):
        restore_database(path, settings.db_path)
    out.said(
        f"restored {settings.db_path} from {path}",
        {"database": str(settings.db_path), "backup": str(path)},
    )
