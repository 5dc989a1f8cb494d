"""Several server processes on one PostgreSQL database (fake models inside real processes):
concurrent writers through two memory servers and a device server lose and duplicate
nothing, and a database outage gives 503s, then the servers recover without a restart."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from lobug.store.postgres.database import POOL_TIMEOUT_S
from tests.e2e.server import ServerProcess, free_port, wait_until_healthy
from tests.engines import Databases, postgres_server

pytestmark = pytest.mark.e2e
pytest.importorskip("psycopg")

WRITERS = 6
MESSAGES_PER_WRITER = 25
EXCHANGES = 12


def start(command: str, database_url: str, log_path: Path, **env: str) -> ServerProcess:
    port = free_port()
    environment = {
        **os.environ,
        "LOBUG_DATABASE_URL": database_url,
        "LOBUG_SPEECH": "0",
        "LOBUG_MAINTENANCE_INTERVAL_S": "1",
        **env,
    }
    log = log_path.open("ab")
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.e2e.fake_server", command, str(port)],
        env=environment,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    log.close()
    server = ServerProcess(process, f"http://127.0.0.1:{port}", log_path)
    wait_until_healthy(server)
    return server


@contextmanager
def servers(database_url: str, folder: Path, *commands: str) -> Iterator[list[ServerProcess]]:
    started: list[ServerProcess] = []
    try:
        for n, command in enumerate(commands):
            started.append(start(command, database_url, folder / f"{command}-{n}.log"))
        yield started
    finally:
        for server in started:
            server.stop()


def rows(database_url: str, sql: str) -> list[tuple[object, ...]]:
    import psycopg

    with psycopg.connect(database_url) as conn:
        return list(conn.execute(sql).fetchall())


def write_messages(urls: list[str], writer: int) -> list[int]:
    """Post this writer's messages, alternating between the memory servers; return the ids
    acknowledged."""
    acknowledged = []
    with httpx.Client(timeout=60) as client:
        for n in range(MESSAGES_PER_WRITER):
            body = {"agent_name": "shared", "role": "user", "content": f"writer {writer} #{n}"}
            response = client.post(f"{urls[n % len(urls)]}/messages", json=body)
            assert response.status_code == 200, response.text
            acknowledged.append(int(response.json()["id"]))
    return acknowledged


def talk(device_url: str, n: int) -> None:
    with httpx.Client(timeout=60) as client:
        response = client.post(
            f"{device_url}/chat/text",
            json={"text": f"I keep pebble{n} in my pocket"},
            # Two turns a device: a fourth at once would be refused (429 device_busy).
            headers={"X-Device-Id": f"device{n % 6}"},
        )
        assert response.status_code == 200, response.text


def wait_for_empty_queue(database_url: str, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while rows(database_url, "SELECT COUNT(*) FROM learning_queue")[0][0]:
        assert time.monotonic() < deadline, "the memory work did not finish"
        time.sleep(0.5)


def test_two_memory_servers_and_a_device_server_share_one_database(
    postgres: Databases, tmp_path: Path
) -> None:
    url = postgres.fresh()
    with servers(url, tmp_path, "memory-server", "memory-server", "serve") as (one, two, device):
        httpx.post(f"{one.url}/agents", json={"name": "shared"}, timeout=30).raise_for_status()
        with ThreadPoolExecutor(WRITERS + 3) as pool:
            talking = [pool.submit(talk, device.url, n) for n in range(EXCHANGES)]
            written = pool.map(write_messages, [[one.url, two.url]] * WRITERS, range(WRITERS))
            acknowledged = [i for ids in written for i in ids]
            for done in talking:
                done.result()
        wait_for_empty_queue(url)
    counted = {
        content: n
        for content, n in rows(url, "SELECT content, COUNT(*) FROM conversation_log GROUP BY 1")
    }
    assert len(acknowledged) == len(set(acknowledged)) == WRITERS * MESSAGES_PER_WRITER
    for writer in range(WRITERS):
        for n in range(MESSAGES_PER_WRITER):
            assert counted[f"writer {writer} #{n}"] == 1
    learned = [content for (content,) in rows(url, "SELECT content FROM facts")]
    for n in range(EXCHANGES):  # one fact per exchange: its memory work ran once
        assert len([fact for fact in learned if f"pebble{n} " in fact]) == 1, learned


def pg_ctl(server_url: str, *args: str) -> None:
    """Run pg_ctl on the pgserver whose socket folder (its data folder) `server_url` names."""
    from pgserver._commands import pg_ctl as run

    pgdata = Path(parse_qs(urlsplit(server_url).query)["host"][0])
    user = "pgserver" if os.geteuid() == 0 else None  # pgserver runs as this user under root
    run(list(args), pgdata=pgdata, user=user)


def stop_database(server_url: str) -> None:
    pg_ctl(server_url, "-w", "-m", "fast", "stop")


def start_database(server_url: str) -> None:
    pgdata = parse_qs(urlsplit(server_url).query)["host"][0]
    pg_ctl(server_url, "-w", "-o", '-h ""', "-o", f"-k {pgdata}", "-l", f"{pgdata}/log", "start")


def keep_writing(url: str, writer: int, stop: threading.Event) -> dict[str, int]:
    """Post messages until `stop`; return each message's status code."""
    codes: dict[str, int] = {}
    with httpx.Client(base_url=url, timeout=60) as client:
        while not stop.is_set():
            content = f"load {writer} #{len(codes)}"
            body = {"agent_name": "a", "role": "user", "content": content}
            response = client.post("/messages", json=body)
            assert response.status_code in (200, 503), response.text
            if response.status_code == 503:
                assert response.json()["error"] == "storage_unavailable"
            codes[content] = response.status_code
            time.sleep(0.05)
    return codes


def test_a_database_outage_under_load_gives_503_then_the_server_recovers(
    tmp_path: Path,
) -> None:
    if os.environ.get("LOBUG_TEST_DATABASE_URL"):
        pytest.skip("stops and restarts its own pgserver")
    with postgres_server(None) as server_url:
        url = Databases(server_url).fresh()
        with servers(url, tmp_path, "memory-server") as (memory,):
            httpx.post(f"{memory.url}/agents", json={"name": "a"}, timeout=30).raise_for_status()
            stop = threading.Event()
            with ThreadPoolExecutor(3) as pool:
                load = [pool.submit(keep_writing, memory.url, n, stop) for n in range(3)]
                time.sleep(2)
                stop_database(server_url)
                time.sleep(POOL_TIMEOUT_S + 3)  # longer than a request waits for a connection
                start_database(server_url)
                time.sleep(8)
                stop.set()
                codes = {k: v for done in load for k, v in done.result().items()}
            stored = rows(url, "SELECT content FROM conversation_log")
    acknowledged = {content for content, code in codes.items() if code == 200}
    assert 503 in codes.values() and list(codes.values())[-1] == 200
    assert acknowledged <= {content for (content,) in stored}  # nothing acknowledged is lost
    assert len(stored) == len({content for (content,) in stored})
