"""The device server with the fake chat model and embedder, as a process of its own for the
browser tests: `python -m tests.ui.fake_server`, configured by the LOBUG_* variables as
`lobug serve` is. Nothing is downloaded or loaded: it starts in about a second."""

from __future__ import annotations

import os

import uvicorn

from lobug.app import create_app
from lobug.backends import Backends
from lobug.config import Settings
from tests.fakes import FakeChat, FakeEmbedder


def main() -> None:
    settings = Settings.from_env(os.environ)
    app = create_app(settings, Backends(FakeChat("Okay, noted."), FakeEmbedder()))
    uvicorn.run(app, host=settings.host, port=settings.port, log_level="warning")


if __name__ == "__main__":
    main()
