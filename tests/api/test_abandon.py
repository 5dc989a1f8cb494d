"""A client that hangs up while its request waits for a busy model: over real HTTP (uvicorn
in this process, fake models), the reply is skipped and nothing unheard is recorded."""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path

import pytest

from lobug.app import create_app
from lobug.backends import Backends
from lobug.config import Settings
from lobug.store.sqlite.engine import SQLiteStore
from tests.api.test_voice import speech_wav
from tests.fakes import FakeChat, FakeEmbedder, FakeSTT, FakeTTS
from tests.live import LiveServer
from tests.polling import eventually

QUESTION = "Are you still there?"
JSON = "application/json"


def send_and_hang_up(url: str, path: str, body: bytes, content_type: str, fake: FakeChat) -> None:
    """Post `body`, wait until the request is queued for the model, then close the socket."""
    host, port = url.removeprefix("http://").split(":")
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: {content_type}\r\n"
        f"X-Device-Id: quitter\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    with socket.create_connection((host, int(port)), timeout=10) as conn:
        conn.sendall(head + body)
        assert eventually(lambda: len(fake.abandon_checks) == 1), "never reached the model"


def json_body(data: dict[str, object]) -> bytes:
    return json.dumps(data).encode()


@pytest.mark.parametrize(
    ("path", "body", "content_type", "device"),
    [
        ("/chat/text", json_body({"text": QUESTION}), JSON, "quitter"),
        ("/chat/audio", speech_wav(), "audio/wav", "quitter"),
        ("/chat/audio/stream", speech_wav(), "audio/wav", "quitter"),
        (
            "/v1/chat/completions",
            json_body({"model": "m", "messages": [{"role": "user", "content": QUESTION}]}),
            JSON,
            "v1",
        ),
    ],
    ids=["text", "audio", "audio-stream", "proxy"],
)
def test_a_reply_nobody_waits_for_is_skipped(
    tmp_path: Path, path: str, body: bytes, content_type: str, device: str
) -> None:
    fake = FakeChat(default="You will never hear this.")
    fake.queue_gate = threading.Event()
    settings = Settings(db_path=tmp_path / "memory.db")
    backends = Backends(fake, FakeEmbedder(), FakeSTT(QUESTION), FakeTTS())
    server = LiveServer(create_app(settings, backends))
    try:
        send_and_hang_up(server.url, path, body, content_type, fake)
        check = fake.abandon_checks[0]
        assert check is not None and eventually(check), "the hang-up was not noticed"
        fake.queue_gate.set()  # the model is free: the request's turn comes
        assert eventually(lambda: fake.abandoned_requests == 1)
    finally:
        server.stop()
    store = SQLiteStore(settings.db_path)
    said = [(m.role, m.content) for m in store.recent_messages("lobug", device, 10)]
    store.close()
    assert said == [("user", QUESTION)]  # kept, like any message; no reply
    assert fake.chat_requests() == []
