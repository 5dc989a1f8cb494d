"""`lobug.mcp_server.run_stdio` with fake models, for the stdio tests (run as a module)."""

from __future__ import annotations

import sys

from lobug.config import Settings
from lobug.engine import MemoryEngine
from lobug.mcp_server import run_stdio
from tests.fakes import FakeChat, FakeEmbedder

if __name__ == "__main__":
    database = sys.argv[1]
    engine = MemoryEngine(
        database,
        agent="desk",
        chat=FakeChat(),
        embedder=FakeEmbedder(),
        settings=Settings(db_path=database),
    )
    run_stdio([], engine)
