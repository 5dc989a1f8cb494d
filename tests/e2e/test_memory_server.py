"""`lobug memory-server` as a real process with the real bundled embedder."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.e2e.server import ServerProcess, free_port, wait_until_healthy

pytestmark = [pytest.mark.e2e, pytest.mark.models]


def start_memory_server(db_path: Path, log_path: Path) -> ServerProcess:
    port = free_port()
    env = {
        **os.environ,
        "MEMORY_SERVER_PORT": str(port),
        "MEMORY_SERVER_DB_PATH": str(db_path),
        "MEMORY_EMBEDDING_BACKEND": "local",
    }
    log = log_path.open("ab")
    process = subprocess.Popen(
        [sys.executable, "-m", "lobug", "memory-server"],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    log.close()
    server = ServerProcess(process, f"http://127.0.0.1:{port}", log_path)
    wait_until_healthy(server)
    return server


@pytest.fixture
def memory_server(tmp_path: Path) -> Iterator[ServerProcess]:
    server = start_memory_server(tmp_path / "memory.db", tmp_path / "server.log")
    yield server
    server.stop()


def test_posted_messages_are_found_by_meaning(memory_server: ServerProcess) -> None:
    with httpx.Client(base_url=memory_server.url, timeout=60) as client:
        health = client.get("/health").json()
        assert health["embedding_dimension"] == 384
        assert client.post("/agents", json={"name": "alice"}).status_code == 200
        for content in (
            "My favourite colour is blue.",
            "I adopted a kitten last week.",
            "The meeting moved to Thursday.",
        ):
            message = {"agent_name": "alice", "role": "user", "content": content}
            assert client.post("/messages", json=message).status_code == 200
        search = {"agent_name": "alice", "query": "Which pet do I have?", "limit": 2}
        hits = client.post("/messages/search", json=search).json()
    assert hits[0]["content"] == "I adopted a kitten last week."
    assert hits[0]["similarity"] > hits[1]["similarity"]
    assert memory_server.process.poll() is None, memory_server.log()
