"""The servers' connection timeouts and access log, over real sockets (issue 17, finding 10)."""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Iterator

import pytest
import uvicorn
from fastapi import FastAPI

from lobug.serving import RedactQueryStrings, uvicorn_config

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
