"""`lobug serve | memory-server | reindex`."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence

from lobug.config import ConfigError, Settings


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lobug", description="Lo-Bug assistant server")
    parser.add_argument("--log-level", default=os.environ.get("LOBUG_LOG_LEVEL", "info"))
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="run the device server")
    serve.add_argument("--host", help="overrides LOBUG_HOST")
    serve.add_argument("--port", type=int, help="overrides LOBUG_PORT")
    memory_server = commands.add_parser(
        "memory-server", help="run only the memory REST API (MEMORY_* variables)"
    )
    memory_server.add_argument("--host", help="overrides MEMORY_SERVER_HOST")
    memory_server.add_argument("--port", type=int, help="overrides MEMORY_SERVER_PORT")
    commands.add_parser(
        "reindex", help="re-embed every fact and message with the configured embedding model"
    )
    args = parser.parse_args(argv)

    logging.basicConfig(
        level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    try:
        if args.command == "memory-server":
            settings = Settings.from_memory_env(os.environ)
            return memory_server_command(settings, args.host, args.port, args.log_level)
        settings = Settings.from_env(os.environ)
        if args.command == "serve":
            return serve_command(settings, args.host, args.port, args.log_level)
        return reindex_command(settings)
    except ConfigError as exc:
        print(f"lobug: configuration error: {exc}", file=sys.stderr)
        return 2


def serve_command(settings: Settings, host: str | None, port: int | None, log_level: str) -> int:
    import uvicorn

    from lobug.app import create_app

    settings = settings.with_overrides(host=host or settings.host, port=port or settings.port)
    app = create_app(settings)
    uvicorn.run(app, host=settings.host, port=settings.port, log_level=log_level.lower())
    return 0


def memory_server_command(
    settings: Settings, host: str | None, port: int | None, log_level: str
) -> int:
    import uvicorn

    from lobug.app import create_memory_app

    settings = settings.with_overrides(host=host or settings.host, port=port or settings.port)
    app = create_memory_app(settings)
    uvicorn.run(app, host=settings.host, port=settings.port, log_level=log_level.lower())
    return 0


def reindex_command(settings: Settings) -> int:
    from lobug.backends import build_embedder
    from lobug.store.sqlite.engine import SQLiteStore

    embedder = build_embedder(settings)
    store = SQLiteStore(settings.db_path)
    try:
        count = store.reindex(embedder.model, embedder.dimension, embedder.embed_batch)
    finally:
        store.close()
    print(
        f"re-embedded {count} facts and messages with {embedder.model} "
        f"({embedder.dimension} dimensions)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
