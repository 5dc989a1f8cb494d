"""The servers' connection timeouts and access log, over real sockets (issue 17, finding 10),
and a prompt stop whatever the server is doing (issue 29, finding 9)."""

from __future__ import annotations

import logging
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
import uvicorn
from fastapi import FastAPI

from lobug.serving import STOP_DEADLINE_S, RedactQueryStrings, uvicorn_config

IDLE_S = 0.5
REQUEST_S = 1.0


@pytest.fixture
def address() -> Iterator[tuple[str, int]]:
    app = FastAPI()

    @app.get("/ping")
    async def ping() -> dict[str, str]:
        return {"pong": "yes"}

    @app.post("/echo")
    async def echo(body: dict[str, str]) -> dict[str, str]:
        return body

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    config = uvicorn_config(
        app, "127.0.0.1", 0, "warning", idle_timeout_s=IDLE_S, request_timeout_s=REQUEST_S
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    yield sock.getsockname()
    server.should_exit = True
    thread.join(timeout=10)
    sock.close()


def closed_after(conn: socket.socket, limit_s: float) -> float:
    """Seconds until the server closed `conn` (reads return nothing), at most `limit_s`."""
    started = time.monotonic()
    conn.settimeout(limit_s)
    while True:
        try:
            if conn.recv(4096) == b"":
                return time.monotonic() - started
        except TimeoutError:
            return limit_s
        except ConnectionResetError:
            return time.monotonic() - started


@pytest.mark.parametrize(
    ("sent", "limit"),
    [
        (b"", IDLE_S),  # connects and says nothing
        (b"GET /ping HTTP/1.1\r\nHost: x\r\n", REQUEST_S),  # headers never finished
        (
            b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{",
            REQUEST_S,
        ),  # stalled body
    ],
)
def test_slow_or_silent_connections_are_closed(
    address: tuple[str, int], sent: bytes, limit: float
) -> None:
    with socket.create_connection(address) as conn:
        if sent:
            conn.sendall(sent)
        waited = closed_after(conn, limit + 3)
    assert waited < limit + 1.5


def test_a_slow_sender_cannot_stretch_its_request_by_trickling(address: tuple[str, int]) -> None:
    with socket.create_connection(address) as conn:
        started = time.monotonic()
        for char in b"GET /ping HTTP/1.1\r\nHost: trickle\r\n":
            try:
                conn.sendall(bytes([char]))
            except OSError:
                break
            time.sleep(0.1)
        assert time.monotonic() - started < REQUEST_S + 1.5


def test_a_prompt_request_is_answered(address: tuple[str, int]) -> None:
    with socket.create_connection(address) as conn:
        conn.sendall(b"GET /ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        conn.settimeout(5)
        received = b""
        while chunk := conn.recv(4096):
            received += chunk
        assert received.startswith(b"HTTP/1.1 200") and received.endswith(b'{"pong":"yes"}')


def test_the_access_log_never_shows_a_query_string() -> None:
    record = logging.LogRecord(
        "uvicorn.access",
        logging.INFO,
        __file__,
        1,
        '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:5", "GET", "/memory/facts/a?token=s3cret&q=x", "1.1", 200),
        None,
    )
    assert RedactQueryStrings().filter(record)
    assert "s3cret" not in record.getMessage() and "/memory/facts/a" in record.getMessage()


# A server whose request and whose shutdown never end by themselves (a model call, a batch
# being embedded): `lobug.serving.serve` must still stop it within STOP_DEADLINE_S.
STUCK_SERVER = """
import asyncio, sys, time
from contextlib import asynccontextmanager
from fastapi import FastAPI
from lobug.serving import serve

@asynccontextmanager
async def lifespan(app):
    yield
    await asyncio.to_thread(time.sleep, 60)

app = FastAPI(lifespan=lifespan)

@app.get("/stuck")
async def stuck():
    print("request in", flush=True)
    await asyncio.to_thread(time.sleep, 60)

serve(app, "127.0.0.1", int(sys.argv[1]), "info")
"""


@pytest.mark.parametrize(
    ("stop", "status"), [(signal.SIGTERM, -signal.SIGTERM), (signal.SIGINT, 0)]
)
def test_a_stuck_server_stops_within_the_deadline(stop: int, status: int) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with subprocess.Popen(
        [sys.executable, "-c", STUCK_SERVER, str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    ) as process:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while not _answers(url) and time.monotonic() < deadline:
            time.sleep(0.1)
        with ThreadPoolExecutor(2) as pool:
            waiting = pool.submit(httpx.get, f"{url}/stuck", timeout=30)
            # The signal comes once the request is in (a fixed wait was too short once on a
            # busy machine: the request found the server gone).
            before = pool.submit(read_until, process, "request in").result(timeout=30)
            began = time.monotonic()
            process.send_signal(stop)
            try:
                log, _ = process.communicate(timeout=30)
            finally:
                process.kill()
            assert time.monotonic() - began < STOP_DEADLINE_S + 1
            answer = waiting.result()
    assert (answer.status_code, answer.json()["error"]) == (503, "server_stopping")
    assert process.returncode == status
    assert "stopping now" in log, before + log


def read_until(process: subprocess.Popen[str], marker: str) -> str:
    """What the process printed up to and including the line holding `marker`."""
    assert process.stdout is not None
    lines = []
    for line in process.stdout:
        lines.append(line)
        if marker in line:
            break
    return "".join(lines)


def _answers(url: str) -> bool:
    try:
        return httpx.get(f"{url}/docs", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False
