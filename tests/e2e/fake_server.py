"""A real server process with fake models: `python -m tests.e2e.fake_server serve|memory-server
PORT` builds the app as `lobug serve` / `lobug memory-server` do (settings from the
environment, LOBUG_DATABASE_URL included) but with the fake chat and embedder, so tests of
several processes on one database do not load real models.

The chat learns one fact per exchange, the user's message itself: one fact per exchange shows
that each exchange's memory work ran once."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence

import uvicorn

from lobug.app import create_app, create_memory_app
from lobug.backends import Backends
from lobug.backends.base import ChatMessage, JsonSchema
from lobug.config import Settings
from tests.fakes import FakeChat, FakeEmbedder


def learn_what_was_said(messages: Sequence[ChatMessage], schema: JsonSchema | None) -> str:
    if schema is None:
        return "Okay."
    said = messages[-1]["content"].split("User:")[-1].split("\n")[0].strip()
    return json.dumps({"facts": [{"fact": said, "type": "trait"}]})


def main(command: str, port: int) -> None:
    backends = Backends(FakeChat(responder=learn_what_was_said), FakeEmbedder())
    if command == "memory-server":
        settings = Settings.from_memory_env(os.environ).with_overrides(port=port)
        app = create_memory_app(settings, backends)
    else:
        settings = Settings.from_env(os.environ).with_overrides(port=port)
        app = create_app(settings, backends)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
