"""`learning()` with the real `openai` client over real HTTP.

The memory server is the real memory app (fake embedder) under uvicorn in a thread; the
model is a small OpenAI-compatible HTTP server that records what it was sent, so the tests
check what actually went over the wire and what the memory kept.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import threading
from collections import deque
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
from openai import AsyncOpenAI, InternalServerError, OpenAI, Stream
from openai.resources.chat.completions import AsyncCompletions, Completions
from openai.types.chat import ChatCompletionMessageParam

from lobug import learning
from lobug.app import create_app, create_memory_app
from lobug.backends import Backends
from lobug.client import MemoryServerUnavailable
from lobug.config import Settings
from lobug.memory.assembly import MEMORY_HEADER as CONTEXT_HEADER
from lobug.memory.assembly import MESSAGE_MAX_TOKENS
from lobug.tokens import estimate_tokens
from tests.live import LiveServer

AGENT = "tester"

# ------------------------------------------------------------------------------- live servers


class FakeOpenAI:
    """`POST /v1/chat/completions`, plain JSON or SSE; records every request body.

    `on_request` runs while a request is being answered (to break things mid-call)."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.replies: deque[str] = deque()
        self.fail_next: int | None = None
        self.on_request: Callable[[], None] | None = None
        self._httpd = _UpstreamHTTP(self)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()

    def answer(self, body: dict[str, Any]) -> tuple[int, str, bytes]:
        self.requests.append(body)
        if self.on_request is not None:
            self.on_request()
        if self.fail_next is not None:
            status, self.fail_next = self.fail_next, None
            return status, "application/json", json.dumps({"error": {"message": "boom"}}).encode()
        text = self.replies.popleft() if self.replies else "Nice to meet you."
        if body.get("stream"):
            return 200, "text/event-stream", sse(body["model"], text)
        return 200, "application/json", json.dumps(completion(body["model"], text)).encode()

    def messages(self, index: int = -1) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = self.requests[index]["messages"]
        return found


def completion(model: str, text: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def sse(model: str, text: str) -> bytes:
    def chunk(delta: dict[str, Any], finish: str | None) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        body = {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": model,
            "choices": [choice],
        }
        return f"data: {json.dumps(body)}\n\n"

    events = [chunk({"role": "assistant", "content": ""}, None)]
    events += [chunk({"content": word + " "}, None) for word in text.split(" ")[:-1]]
    events += [chunk({"content": text.split(" ")[-1]}, None), chunk({}, "stop")]
    return ("".join(events) + "data: [DONE]\n\n").encode()


class _UpstreamHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _UpstreamHTTP

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        status, content_type, payload = self.server.fake.answer(body)
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _UpstreamHTTP(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, fake: FakeOpenAI) -> None:
        self.fake = fake
        super().__init__(("127.0.0.1", 0), _UpstreamHandler)


# ------------------------------------------------------------------------------------ fixtures


@pytest.fixture
def memory_server(settings: Settings, backends: Backends) -> Iterator[LiveServer]:
    server = LiveServer(create_memory_app(settings, backends))
    yield server
    server.stop()


@pytest.fixture
def memory_api(memory_server: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=memory_server.url) as client:
        client.post("/agents", json={"name": AGENT}).raise_for_status()
        yield client


@pytest.fixture
def upstream() -> Iterator[FakeOpenAI]:
    fake = FakeOpenAI()
    yield fake
    fake.close()


@pytest.fixture
def client(upstream: FakeOpenAI) -> Iterator[OpenAI]:
    with OpenAI(base_url=upstream.url, api_key="test", max_retries=0) as opened:
        yield opened


def stored(memory_api: httpx.Client, agent: str = AGENT) -> list[tuple[str, str]]:
    """(role, content) of the agent's messages, oldest first."""
    messages = memory_api.get(f"/messages/{agent}").json()
    return [(m["role"], m["content"]) for m in reversed(messages)]


def remember(memory_api: httpx.Client, role: str, content: str) -> None:
    body = {"agent_name": AGENT, "role": role, "content": content}
    memory_api.post("/messages", json=body).raise_for_status()


def ask(client: OpenAI, *messages: Any) -> str:
    response = client.chat.completions.create(model="m", messages=list(messages))
    return response.choices[0].message.content or ""


USER: ChatCompletionMessageParam = {"role": "user", "content": "What is my name?"}

# --------------------------------------------------------------------------------------- tests


def test_lazy_export_keeps_import_light() -> None:
    import subprocess
    import sys

    code = "import sys, lobug; print('httpx' in sys.modules or 'openai' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "False"


def test_entry_names_the_start_command_when_the_server_is_down() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}"
    original = Completions.__dict__["create"]
    with (
        pytest.raises(MemoryServerUnavailable, match="lobug memory-server"),
        learning(AGENT, base_url=url),
    ):
        pass
    assert Completions.__dict__["create"] is original


def test_entry_creates_the_agent(memory_server: LiveServer) -> None:
    with learning("fresh", base_url=memory_server.url), httpx.Client() as http:
        assert http.get(f"{memory_server.url}/agents/fresh").status_code == 200


def test_context_goes_after_a_leading_system_message(
    memory_api: httpx.Client, memory_server: LiveServer, client: OpenAI, upstream: FakeOpenAI
) -> None:
    block = {"agent_name": AGENT, "label": "human", "value": "Name: Alice"}
    memory_api.post("/memory-blocks", json=block).raise_for_status()
    remember(memory_api, "user", "My name is Alice and I live in Boston.")
    system = {"role": "system", "content": "Be brief."}
    sent = [system, USER]

    with learning(AGENT, base_url=memory_server.url):
        assert ask(client, *sent) == "Nice to meet you."

    received = upstream.messages()
    assert received[0] == system
    assert received[2] == USER
    assert received[1]["role"] == "system"
    context = received[1]["content"]
    assert context.startswith(CONTEXT_HEADER)
    assert '"human": "Name: Alice"' in context
    assert ' user: "My name is Alice and I live in Boston."' in context  # after its time
    assert sent == [system, USER]  # the caller's list is left alone


def test_context_is_prepended_without_a_system_message(
    memory_api: httpx.Client, memory_server: LiveServer, client: OpenAI, upstream: FakeOpenAI
) -> None:
    remember(memory_api, "user", "My name is Alice.")
    with learning(AGENT, base_url=memory_server.url):
        ask(client, USER)
    received = upstream.messages()
    assert [m["role"] for m in received] == ["system", "user"]
    assert ' user: "My name is Alice."' in received[0]["content"]


def test_empty_memory_injects_nothing(
    memory_server: LiveServer, client: OpenAI, upstream: FakeOpenAI
) -> None:
    with learning("empty", base_url=memory_server.url):
        ask(client, USER)
    assert upstream.messages() == [USER]


def test_exchange_is_captured_and_remembered_next_time(
    memory_api: httpx.Client, memory_server: LiveServer, client: OpenAI, upstream: FakeOpenAI
) -> None:
    upstream.replies.append("Hello Alice, noted.")
    with learning(AGENT, base_url=memory_server.url):
        ask(client, {"role": "user", "content": "My name is Alice."})
    assert stored(memory_api) == [
        ("user", "My name is Alice."),
        ("assistant", "Hello Alice, noted."),
    ]
    message = memory_api.get(f"/messages/{AGENT}").json()[0]
    assert message["metadata"] == {"source": "learning", "model": "m"}

    with learning(AGENT, base_url=memory_server.url):
        ask(client, USER)
    context = upstream.messages()[0]["content"]
    assert ' user: "My name is Alice."' in context  # each after its time
    assert ' assistant: "Hello Alice, noted."' in context


def test_capture_only_stores_without_injecting(
    memory_api: httpx.Client, memory_server: LiveServer, client: OpenAI, upstream: FakeOpenAI
) -> None:
    remember(memory_api, "user", "My name is Alice.")
    with learning(AGENT, base_url=memory_server.url, capture_only=True):
        ask(client, USER)
    assert upstream.messages() == [USER]
    assert stored(memory_api)[-2:] == [
        ("user", "What is my name?"),
        ("assistant", "Nice to meet you."),
    ]


def test_multimodal_content_is_captured_as_its_text(
    memory_api: httpx.Client, memory_server: LiveServer, client: OpenAI, upstream: FakeOpenAI
) -> None:
    content = [
        {"type": "text", "text": "What is in"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
        {"type": "text", "text": "this picture?"},
    ]
    with learning(AGENT, base_url=memory_server.url):
        ask(client, {"role": "user", "content": content})
    assert upstream.messages()[-1] == {"role": "user", "content": content}
    assert stored(memory_api)[0] == ("user", "What is in\nthis picture?")


def test_long_messages_are_shortened_in_the_context(
    memory_api: httpx.Client, memory_server: LiveServer, client: OpenAI, upstream: FakeOpenAI
) -> None:
    remember(memory_api, "user", "my name " + "x" * 2000)
    with learning(AGENT, base_url=memory_server.url):
        ask(client, USER)
    line = next(line for line in upstream.messages()[0]["content"].splitlines() if "xxx" in line)
    assert line.endswith(' [...]"')
    assert estimate_tokens(line) <= MESSAGE_MAX_TOKENS + 20  # its time and role besides


def test_original_restored_after_an_exception(memory_server: LiveServer) -> None:
    originals = Completions.__dict__["create"], AsyncCompletions.__dict__["create"]
    with pytest.raises(ZeroDivisionError), learning(AGENT, base_url=memory_server.url):
        assert Completions.__dict__["create"] is not originals[0]
        assert AsyncCompletions.__dict__["create"] is not originals[1]
        1 / 0  # noqa: B018
    assert (Completions.__dict__["create"], AsyncCompletions.__dict__["create"]) == originals


def test_nested_blocks_restore_in_any_order(memory_server: LiveServer) -> None:
    original = Completions.__dict__["create"]
    outer = learning("outer", base_url=memory_server.url)
    inner = learning("inner", base_url=memory_server.url)
    outer.__enter__()
    inner.__enter__()
    outer.__exit__(None, None, None)
    inner.__exit__(None, None, None)
    assert Completions.__dict__["create"] is original


def test_model_errors_reach_the_caller_and_nothing_is_stored(
    memory_api: httpx.Client, memory_server: LiveServer, client: OpenAI, upstream: FakeOpenAI
) -> None:
    upstream.fail_next = 500
    with learning(AGENT, base_url=memory_server.url), pytest.raises(InternalServerError):
        ask(client, USER)
    assert stored(memory_api) == []


def test_stream_passes_through_and_is_captured_at_the_end(
    memory_api: httpx.Client, memory_server: LiveServer, client: OpenAI, upstream: FakeOpenAI
) -> None:
    remember(memory_api, "user", "My name is Alice.")
    upstream.replies.append("You are Alice.")
    with learning(AGENT, base_url=memory_server.url):
        stream = client.chat.completions.create(model="m", messages=[USER], stream=True)
        assert isinstance(stream, Stream)
        pieces = [chunk.choices[0].delta.content or "" for chunk in stream]
        assert stored(memory_api) == [("user", "My name is Alice."), *CAPTURED_STREAM]

    assert pieces == ["", "You ", "are ", "Alice.", ""]
    assert upstream.requests[-1]["stream"] is True
    assert ' user: "My name is Alice."' in upstream.messages()[0]["content"]


CAPTURED_STREAM = [("user", "What is my name?"), ("assistant", "You are Alice.")]


def test_async_client_is_intercepted(
    memory_api: httpx.Client, memory_server: LiveServer, upstream: FakeOpenAI
) -> None:
    remember(memory_api, "user", "My name is Alice.")
    upstream.replies.extend(["You are Alice.", "Still Alice."])

    async def converse() -> tuple[str, list[str]]:
        async with AsyncOpenAI(base_url=upstream.url, api_key="t", max_retries=0) as client:
            reply = await client.chat.completions.create(model="m", messages=[USER])
            stream = await client.chat.completions.create(model="m", messages=[USER], stream=True)
            pieces = [chunk.choices[0].delta.content or "" async for chunk in stream]
            return reply.choices[0].message.content or "", pieces

    with learning(AGENT, base_url=memory_server.url):
        reply, pieces = asyncio.run(converse())

    assert reply == "You are Alice."
    assert "".join(pieces) == "Still Alice."
    for index in (0, 1):
        assert upstream.messages(index)[0]["content"].startswith(CONTEXT_HEADER)
    assert stored(memory_api)[1:] == [
        ("user", "What is my name?"),
        ("assistant", "You are Alice."),
        ("user", "What is my name?"),
        ("assistant", "Still Alice."),
    ]


def test_memory_server_dying_mid_call_degrades_to_a_plain_call(
    memory_api: httpx.Client,
    memory_server: LiveServer,
    client: OpenAI,
    upstream: FakeOpenAI,
    caplog: pytest.LogCaptureFixture,
) -> None:
    remember(memory_api, "user", "My name is Alice.")
    upstream.on_request = memory_server.stop
    with (
        caplog.at_level(logging.WARNING, "lobug.client"),
        learning(AGENT, base_url=memory_server.url),
    ):
        assert ask(client, USER) == "Nice to meet you."  # context fetched, then the server died
        assert upstream.messages()[0]["content"].startswith(CONTEXT_HEADER)
        assert "user message not stored" in caplog.text

        upstream.on_request = None
        caplog.clear()
        assert ask(client, USER) == "Nice to meet you."
        assert upstream.messages() == [USER]
        assert "no memory for this call" in caplog.text

        stream = client.chat.completions.create(model="m", messages=[USER], stream=True)
        assert "".join(chunk.choices[0].delta.content or "" for chunk in stream) == (
            "Nice to meet you."
        )


def test_device_server_memory_path_and_env_url(
    settings: Settings,
    backends: Backends,
    client: OpenAI,
    upstream: FakeOpenAI,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = LiveServer(create_app(settings, backends))
    try:
        monkeypatch.delenv("MEMORY_SERVER_URL", raising=False)
        monkeypatch.setenv("LOBUG_MEMORY_URL", f"{server.url}/memory/")
        with learning(AGENT):
            ask(client, {"role": "user", "content": "My name is Alice."})
        with httpx.Client(base_url=f"{server.url}/memory") as api:
            assert stored(api) == [
                ("user", "My name is Alice."),
                ("assistant", "Nice to meet you."),
            ]
    finally:
        server.stop()


def test_token_is_sent_and_a_refusal_is_explained(
    settings: Settings, backends: Backends, client: OpenAI
) -> None:
    secured = Settings(db_path=settings.db_path, device_tokens=("secret-Int3rc-Pt9",))
    server = LiveServer(create_memory_app(secured, backends))
    try:
        with (
            pytest.raises(MemoryServerUnavailable, match="401"),
            learning(AGENT, base_url=server.url),
        ):
            pass
        with learning(AGENT, base_url=server.url, token="secret-Int3rc-Pt9"):
            assert ask(client, USER) == "Nice to meet you."
    finally:
        server.stop()
