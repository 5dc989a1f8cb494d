"""Bodies over the limit are refused with 413 before they are read whole."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import Message, Receive, Scope, Send

from lobug.api.limits import BodySizeLimit
from lobug.app import create_app
from lobug.backends import Backends
from lobug.config import Settings
from tests.live import LiveServer


async def echo_length(scope: Scope, receive: Receive, send: Send) -> None:
    body = await Request(scope, receive).body()
    await JSONResponse({"length": len(body)})(scope, receive, send)


async def swallow_errors(scope: Scope, receive: Receive, send: Send) -> None:
    """An endpoint that turns any failure while reading into its own 400."""
    try:
        await Request(scope, receive).body()
    except Exception:
        await JSONResponse({"error": "mine"}, status_code=400)(scope, receive, send)
        return
    await JSONResponse({"ok": True})(scope, receive, send)


def run(
    app: BodySizeLimit, chunks: list[bytes], headers: list[tuple[bytes, bytes]] | None = None
) -> tuple[int, dict[str, object], int]:
    """(status, JSON body, chunks the app pulled) for a request sent in `chunks`."""
    pulled = 0
    sent: list[Message] = []

    async def receive() -> Message:
        nonlocal pulled
        pulled += 1
        if pulled > len(chunks):
            return {"type": "http.disconnect"}
        more = pulled < len(chunks)
        return {"type": "http.request", "body": chunks[pulled - 1], "more_body": more}

    async def send(message: Message) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/x", "headers": headers or []}
    asyncio.run(app(scope, receive, send))
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], json.loads(body), pulled


def test_a_body_within_the_limit_reaches_the_app() -> None:
    status, body, _ = run(BodySizeLimit(echo_length, lambda _: 100), [b"a" * 60, b"b" * 40])
    assert (status, body) == (200, {"length": 100})


def test_a_chunked_body_is_cut_off_as_soon_as_it_passes_the_limit() -> None:
    chunks = [b"x" * 1000] * 50
    status, body, pulled = run(BodySizeLimit(echo_length, lambda _: 2500), chunks)
    assert status == 413 and body["error"] == "payload_too_large"
    assert pulled == 3


def test_an_endpoint_that_catches_the_overflow_still_answers_413() -> None:
    status, body, pulled = run(BodySizeLimit(swallow_errors, lambda _: 10), [b"x" * 8] * 5)
    assert status == 413 and body["error"] == "payload_too_large"
    assert pulled == 2


def test_a_declared_length_over_the_limit_is_refused_unread() -> None:
    headers = [(b"content-length", b"99999999999")]
    status, body, pulled = run(BodySizeLimit(echo_length, lambda _: 10), [b"x"], headers)
    assert status == 413 and body["error"] == "payload_too_large"
    assert pulled == 0


@pytest.fixture
def small_limit_client(tmp_path: Path, backends: Backends) -> TestClient:
    settings = Settings(db_path=tmp_path / "m.db", max_body_bytes=4096, max_audio_bytes=20_000)
    return TestClient(create_app(settings, backends))


@pytest.mark.parametrize(
    "path", ["/memory/messages", "/v1/chat/completions", "/memory/agents", "/chat/text"]
)
def test_every_json_endpoint_has_the_body_limit(small_limit_client: TestClient, path: str) -> None:
    with small_limit_client as client:
        response = client.post(path, content=b"{" + b" " * 10_000 + b"}")
    assert response.status_code == 413
    assert response.json()["error"] == "payload_too_large"


@pytest.mark.parametrize("path", ["/chat/text", "/context/sensors"])
def test_the_device_json_limit_is_the_setting(
    tmp_path: Path, backends: Backends, path: str
) -> None:
    """~100 KiB of JSON: past the old hard-coded 64 KiB, within a 200 KiB setting."""
    body = json.dumps({"text": "x" * 100_000, "orientation": "up", "gyro_x": 1.0}).encode()
    within = Settings(db_path=tmp_path / "m.db", max_body_bytes=200_000, max_text_chars=200_000)
    with TestClient(create_app(within, backends)) as client:
        response = client.post(path, content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 200, response.text
    below = within.with_overrides(max_body_bytes=50_000)
    with TestClient(create_app(below, backends)) as client:
        response = client.post(path, content=body, headers={"Content-Type": "application/json"})
    assert (response.status_code, response.json()["error"]) == (413, "payload_too_large")


def test_audio_paths_allow_a_recording(small_limit_client: TestClient) -> None:
    with small_limit_client as client:
        medium = client.post(
            "/chat/audio", content=b"x" * 10_000, headers={"content-type": "audio/wav"}
        )
        huge = client.post(
            "/chat/audio", content=b"x" * 60_000, headers={"content-type": "audio/wav"}
        )
    assert medium.status_code != 413
    assert huge.status_code == 413


def refusal_over_a_socket(url: str, head: bytes, body_chunks: list[bytes]) -> tuple[bytes, int]:
    """Send `head`, then body chunks until the server answers; (answer, chunks sent)."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as conn:
        conn.sendall(head)
        sent = 0
        conn.settimeout(0.05)
        answer = b""
        for chunk in body_chunks:
            with contextlib.suppress(TimeoutError):
                answer = conn.recv(65536)
            if answer:
                break
            conn.sendall(chunk)
            sent += 1
        conn.settimeout(10)
        while b"\r\n\r\n" not in answer:
            more = conn.recv(65536)
            if not more:
                break
            answer += more
    return answer, sent


def test_over_real_http_a_huge_declared_body_is_refused_unsent(
    tmp_path: Path, backends: Backends
) -> None:
    server = LiveServer(create_app(Settings(db_path=tmp_path / "m.db"), backends))
    try:
        head = (
            b"POST /memory/messages HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\n"
            b"Content-Length: 10000000000\r\n\r\n"
        )
        answer, sent = refusal_over_a_socket(server.url, head, [b"x" * 65536] * 100)
        assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
        assert sent < 5
        chunked_head = (
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
        )
        chunk = b"10000\r\n" + b"x" * 65536 + b"\r\n"
        answer, sent = refusal_over_a_socket(server.url, chunked_head, [chunk] * 400)
        assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
        assert sent < 100  # the limit is 16 chunks; the rest of the 26 MB never had to be sent
    finally:
        server.stop()
