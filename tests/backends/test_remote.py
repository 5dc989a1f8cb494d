"""The Ollama and OpenAI-compatible backends against real (fake) model servers over HTTP.

Each fake is a small `http.server` on 127.0.0.1 speaking just the endpoints the official
clients call. It answers from a script and records the JSON bodies it received, so the tests
can check both what the backend returned and what actually went over the wire.
"""

from __future__ import annotations

import base64
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Generator, Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from lobug.backends import _choose_auto_backend as choose_auto_backend
from lobug.backends import build_chat
from lobug.backends.base import (
    Abandoned,
    BackendError,
    BackendUnavailable,
    ChatBackend,
    ChatMessage,
    Embedder,
)
from lobug.backends.remote import (
    OllamaChat,
    OllamaEmbedder,
    OpenAIChat,
    OpenAIEmbedder,
    StreamCut,
    ollama_has_model,
)
from lobug.config import Settings

HELLO: list[ChatMessage] = [{"role": "user", "content": "Hello?"}]
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"facts": {"type": "array", "items": {"type": "string"}}},
    "required": ["facts"],
}

# ------------------------------------------------------------------------------- fake servers


@dataclass
class Reply:
    """One scripted HTTP answer: a JSON body, or `chunks` sent with chunked encoding."""

    status: int = 200
    body: Any = None
    chunks: list[bytes] | None = None
    content_type: str = "application/json"
    # How a stream is cut midway: "close" (a body without length, ended by closing the
    # connection) or "chunked" (closed before the last, empty chunk).
    cut: str | None = None


@dataclass
class AsksForTools:
    """A scripted streamed answer that asks for tools: `calls` (name, arguments), after the
    words `said`."""

    calls: list[tuple[str, dict[str, Any]]]
    said: list[str] = field(default_factory=list)


@dataclass
class Received:
    method: str
    path: str
    body: Any
    headers: dict[str, str] = field(default_factory=dict)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    def do_GET(self) -> None:
        self._answer()

    def do_POST(self) -> None:
        self._answer()

    def _answer(self) -> None:
        with self.server.fake.answering():
            self._write_answer()

    def _write_answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        body = json.loads(raw) if raw else None
        headers = {key.lower(): value for key, value in self.headers.items()}
        reply = self.server.fake.handle(self.command, self.path, body, headers)
        self.send_response(reply.status)
        self.send_header("Content-Type", reply.content_type)
        if reply.chunks is None and reply.cut is not None:
            self._half_answer(json.dumps(reply.body).encode(), reply.cut)
            return
        if reply.chunks is None:
            payload = json.dumps(reply.body).encode()
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
            return
        if reply.cut == "close":
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(b"".join(reply.chunks))
            self.close_connection = True
            return
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for chunk in reply.chunks:
            time.sleep(self.server.fake.chunk_delay_s)
            try:
                self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                self.wfile.flush()
            except OSError:  # the client closed the stream: a model server stops generating
                self.server.fake.streams_closed_early += 1
                self.close_connection = True
                return
        if reply.cut == "chunked":
            self.close_connection = True
            return
        self.wfile.write(b"0\r\n\r\n")

    def _half_answer(self, payload: bytes, cut: str) -> None:
        """Half of a JSON answer, then the connection closes."""
        if cut == "chunked":
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.write(f"{len(payload):x}\r\n".encode() + payload[: len(payload) // 2])
        else:
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(payload[: len(payload) // 2])
        self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, fake: FakeServer) -> None:
        self.fake = fake
        super().__init__(("127.0.0.1", 0), _Handler)


class FakeServer:
    """A real HTTP server on a free local port; subclasses decide what each path answers."""

    def __init__(self) -> None:
        self.received: list[Received] = []
        self.failures: dict[str, deque[Reply]] = {}
        self.chat_replies: deque[list[str] | AsksForTools] = deque()
        self.cut: str | None = None  # the next streams are cut so (`Reply.cut`)
        self.chunk_delay_s = 0.0  # a model writing its reply at this pace
        self.streams_closed_early = 0  # streams the client closed before their end
        self.one_at_a_time = False  # answer like a model server with one slot
        self._answering = threading.Lock()
        self._lock = threading.Lock()
        self._httpd = _HTTPServer(self)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()

    def answering(self) -> AbstractContextManager[object]:
        return self._answering if self.one_at_a_time else nullcontext()

    def say(self, *pieces: str) -> None:
        """Script the next chat reply (streamed in these pieces, or joined when not streaming)."""
        self.chat_replies.append(list(pieces))

    def ask_for_tools(self, *calls: tuple[str, dict[str, Any]], said: tuple[str, ...] = ()) -> None:
        """Script the next chat reply as a streamed request for `calls`, after `said`."""
        self.chat_replies.append(AsksForTools(list(calls), list(said)))

    def fail_next(self, path: str, status: int, message: str = "scripted failure") -> None:
        self.failures.setdefault(path, deque()).append(self.error(status, message))

    def bodies(self, path: str) -> list[Any]:
        with self._lock:
            return [r.body for r in self.received if r.path == path]

    def handle(self, method: str, path: str, body: Any, headers: dict[str, str]) -> Reply:
        with self._lock:
            self.received.append(Received(method, path, body, headers))
            pending = self.failures.get(path)
            if pending:
                return pending.popleft()
            return self.route(method, path, body)

    def next_reply(self) -> list[str] | AsksForTools:
        return self.chat_replies.popleft() if self.chat_replies else ["(nothing scripted)"]

    def route(self, method: str, path: str, body: Any) -> Reply:
        raise NotImplementedError

    def error(self, status: int, message: str) -> Reply:
        raise NotImplementedError


class FakeOllama(FakeServer):
    """`/api/tags`, `/api/chat` (JSON or NDJSON stream) and `/api/embed`."""

    def __init__(self, models: list[str] | None = None, embed_dim: int = 4) -> None:
        self.models = list(models or [])
        self.embed_dim = embed_dim
        self.vectors: dict[str, list[float]] = {}
        super().__init__()

    def vector_for(self, text: str) -> list[float]:
        return self.vectors.get(text, [1.0] * self.embed_dim)

    def error(self, status: int, message: str) -> Reply:
        return Reply(status, {"error": message})

    def route(self, method: str, path: str, body: Any) -> Reply:
        if method == "GET" and path == "/api/tags":
            return Reply(body={"models": [_ollama_model(name) for name in self.models]})
        if method == "POST" and path == "/api/chat":
            return self._chat(body)
        if method == "POST" and path == "/api/embed":
            texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
            return Reply(
                body={
                    "model": body["model"],
                    "embeddings": [self.vector_for(text) for text in texts],
                }
            )
        return self.error(404, f"no route for {method} {path}")

    def _chat(self, body: Any) -> Reply:
        pieces = self.next_reply()
        if not body.get("stream"):
            assert isinstance(pieces, list)
            part = _ollama_chat_part(body["model"], "".join(pieces), done=True)
            return Reply(body=part, cut=self.cut)
        said = pieces.said if isinstance(pieces, AsksForTools) else pieces
        lines = [_ollama_chat_part(body["model"], piece, done=False) for piece in said]
        if isinstance(pieces, AsksForTools):  # Ollama sends the calls whole, in one part
            calls = [{"function": {"name": n, "arguments": a}} for n, a in pieces.calls]
            lines.append(_ollama_chat_part(body["model"], "", done=False))
            lines[-1]["message"]["tool_calls"] = calls
        if self.cut is None:
            lines.append(_ollama_chat_part(body["model"], "", done=True))
        return Reply(
            chunks=[json.dumps(line).encode() + b"\n" for line in lines],
            content_type="application/x-ndjson",
            cut=self.cut,
        )


def _ollama_model(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "model": name,
        "modified_at": "2025-01-01T00:00:00Z",
        "size": 1,
        "digest": "0" * 64,
        "details": {"format": "gguf", "family": "llama"},
    }


def _ollama_chat_part(model: str, content: str, *, done: bool) -> dict[str, Any]:
    part: dict[str, Any] = {
        "model": model,
        "created_at": "2025-01-01T00:00:00Z",
        "message": {"role": "assistant", "content": content},
        "done": done,
    }
    if done:
        part["done_reason"] = "stop"
    return part


class FakeOpenAI(FakeServer):
    """`/v1/models`, `/v1/chat/completions` (JSON or SSE stream) and `/v1/embeddings`."""

    def __init__(self, models: list[str] | None = None, embed_dim: int = 4) -> None:
        self.models = list(models or [])
        self.embed_dim = embed_dim
        self.vectors: dict[str, list[float]] = {}
        # Like some compatible servers: a request carrying `response_format` gets a 400.
        self.rejects_response_format = False
        # Answer embeddings in reverse order (each still carrying its `index`).
        self.reverse_embeddings = False
        super().__init__()

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def vector_for(self, text: str) -> list[float]:
        return self.vectors.get(text, [1.0] * self.embed_dim)

    def error(self, status: int, message: str) -> Reply:
        return Reply(
            status,
            {
                "error": {
                    "message": message,
                    "type": "invalid_request_error",
                    "param": None,
                    "code": None,
                }
            },
        )

    def route(self, method: str, path: str, body: Any) -> Reply:
        if method == "GET" and path == "/v1/models":
            return Reply(
                body={
                    "object": "list",
                    "data": [
                        {"id": name, "object": "model", "created": 0, "owned_by": "test"}
                        for name in self.models
                    ],
                }
            )
        if method == "POST" and path == "/v1/chat/completions":
            if self.rejects_response_format and "response_format" in body:
                return self.error(400, "response_format is not supported")
            return self._chat(body)
        if method == "POST" and path == "/v1/embeddings":
            return self._embeddings(body)
        return self.error(404, f"no route for {method} {path}")

    def _chat(self, body: Any) -> Reply:
        pieces = self.next_reply()
        if not body.get("stream"):
            assert isinstance(pieces, list)
            return Reply(
                body={
                    "id": "chatcmpl-1",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body["model"],
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": "".join(pieces)},
                            "finish_reason": "stop",
                        }
                    ],
                },
                cut=self.cut,
            )
        deltas: list[tuple[dict[str, Any], str | None]] = [({"role": "assistant"}, None)]
        if isinstance(pieces, AsksForTools):
            deltas += [({"content": piece}, None) for piece in pieces.said]
            deltas += _openai_call_deltas(pieces.calls)
        else:
            deltas += [({"content": piece}, None) for piece in pieces]
        if self.cut is None:
            deltas.append(({}, "tool_calls" if isinstance(pieces, AsksForTools) else "stop"))
        events = [
            json.dumps(
                {
                    "id": "chatcmpl-1",
                    "object": "chat.completion.chunk",
                    "created": 0,
                    "model": body["model"],
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                }
            )
            for delta, finish in deltas
        ]
        if self.cut is None:
            events.append("[DONE]")
        return Reply(
            chunks=[f"data: {event}\n\n".encode() for event in events],
            content_type="text/event-stream",
            cut=self.cut,
        )

    def _embeddings(self, body: Any) -> Reply:
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        as_base64 = body.get("encoding_format") == "base64"
        data = []
        for index, text in enumerate(texts):
            vector = self.vector_for(text)
            encoded: Any = (
                base64.b64encode(np.asarray(vector, dtype=np.float32).tobytes()).decode()
                if as_base64
                else vector
            )
            data.append({"object": "embedding", "index": index, "embedding": encoded})
        if self.reverse_embeddings:
            data.reverse()
        return Reply(
            body={
                "object": "list",
                "data": data,
                "model": body["model"],
                "usage": {"prompt_tokens": 1, "total_tokens": 1},
            }
        )


def _openai_call_deltas(
    calls: list[tuple[str, dict[str, Any]]],
) -> list[tuple[dict[str, Any], str | None]]:
    """Calls as an OpenAI-compatible stream sends them: the id and the name first, the
    arguments' JSON text in two fragments."""
    deltas: list[tuple[dict[str, Any], str | None]] = []
    for index, (name, arguments) in enumerate(calls):
        text = json.dumps(arguments)
        first = {"index": index, "id": f"call-{index}", "type": "function"}
        deltas.append(({"tool_calls": [{**first, "function": {"name": name}}]}, None))
        for fragment in (text[: len(text) // 2], text[len(text) // 2 :]):
            deltas.append(
                ({"tool_calls": [{"index": index, "function": {"arguments": fragment}}]}, None)
            )
    return deltas


# ------------------------------------------------------------------------------- fixtures


@pytest.fixture
def ollama() -> Iterator[FakeOllama]:
    server = FakeOllama(models=["llama3.2:latest", "qwen2.5:0.5b", "nomic-embed-text:latest"])
    yield server
    server.close()


@pytest.fixture
def openai_server() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI(models=["served-model", "embedder"])
    yield server
    server.close()


@pytest.fixture
def closed_url() -> str:
    """A local URL where nothing listens (the port was free a moment ago)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


Closer = Callable[[Any], Any]


@pytest.fixture
def closing() -> Iterator[Closer]:
    """Register a backend so that it is closed after the test (before its server stops)."""
    opened: list[ChatBackend | Embedder] = []

    def register(backend: Any) -> Any:
        opened.append(backend)
        return backend

    yield register
    for backend in reversed(opened):
        backend.close()


def _ollama_chat(closing: Closer, host: str, model: str = "llama3.2") -> OllamaChat:
    chat: OllamaChat = closing(OllamaChat(host, model, timeout_s=5, connect_timeout_s=0.5))
    return chat


def _openai_chat(closing: Closer, base_url: str, model: str = "served-model") -> OpenAIChat:
    chat: OpenAIChat = closing(
        OpenAIChat(model, base_url=base_url, api_key=None, timeout_s=5, connect_timeout_s=0.5)
    )
    return chat


def _unit(vector: list[float]) -> np.ndarray:
    array = np.asarray(vector, dtype=np.float32)
    return array / np.linalg.norm(array)


def _assert_unit_float32(vector: np.ndarray) -> None:
    assert vector.dtype == np.float32
    assert float(np.linalg.norm(vector)) == pytest.approx(1.0, abs=1e-6)


# ------------------------------------------------------------------------------- Ollama chat


def test_ollama_complete_returns_the_content_and_sends_the_request(
    ollama: FakeOllama, closing: Closer
) -> None:
    ollama.say("Hi there.")
    chat = _ollama_chat(closing, ollama.url)

    reply = chat.complete(HELLO, max_tokens=32, temperature=0.2)

    assert reply == "Hi there."
    [body] = ollama.bodies("/api/chat")
    assert body["model"] == "llama3.2"
    assert body["messages"] == [{"role": "user", "content": "Hello?"}]
    assert body["stream"] is False
    assert body["options"] == {"num_predict": 32, "temperature": 0.2}
    assert "format" not in body


def test_ollama_complete_forwards_the_json_schema_as_format(
    ollama: FakeOllama, closing: Closer
) -> None:
    ollama.say('{"facts": ["likes tea"]}')
    chat = _ollama_chat(closing, ollama.url)

    reply = chat.complete(HELLO, max_tokens=64, json_schema=SCHEMA)

    assert json.loads(reply) == {"facts": ["likes tea"]}
    [body] = ollama.bodies("/api/chat")
    assert body["format"] == SCHEMA


def test_ollama_stream_yields_the_pieces_in_order(ollama: FakeOllama, closing: Closer) -> None:
    ollama.say("Once ", "upon ", "a time.")
    chat = _ollama_chat(closing, ollama.url)

    pieces = list(chat.stream(HELLO, max_tokens=16))

    assert pieces == ["Once ", "upon ", "a time."]
    [body] = ollama.bodies("/api/chat")
    assert body["stream"] is True


@pytest.mark.parametrize("cut", ["close", "chunked"])
def test_an_ollama_stream_cut_midway_raises_after_the_pieces_that_came(
    ollama: FakeOllama, closing: Closer, cut: str
) -> None:
    ollama.say("Once ", "upon ")
    ollama.cut = cut
    chat = _ollama_chat(closing, ollama.url)
    pieces = []
    with pytest.raises(StreamCut, match="before the reply was finished"):
        for piece in chat.stream(HELLO, max_tokens=16):
            pieces.append(piece)
    assert pieces == ["Once ", "upon "]
    ollama.cut = None
    ollama.say("again")
    assert list(chat.stream(HELLO, max_tokens=16)) == ["again"]


@pytest.mark.parametrize("model", ["llama3.2", "llama3.2:latest", "qwen2.5:0.5b"])
def test_ollama_is_available_when_the_model_is_listed(
    ollama: FakeOllama, closing: Closer, model: str
) -> None:
    assert _ollama_chat(closing, ollama.url, model).is_available()


@pytest.mark.parametrize("model", ["mistral", "qwen2.5", "llama3.2:1b"])
def test_ollama_is_not_available_when_the_model_is_not_listed(
    ollama: FakeOllama, closing: Closer, model: str
) -> None:
    assert not _ollama_chat(closing, ollama.url, model).is_available()


def test_ollama_is_not_available_when_nothing_listens(closed_url: str, closing: Closer) -> None:
    assert not _ollama_chat(closing, closed_url).is_available()
    assert not ollama_has_model(closed_url, "llama3.2")


def test_ollama_is_not_available_when_the_listing_fails(
    ollama: FakeOllama, closing: Closer
) -> None:
    ollama.fail_next("/api/tags", 500)

    assert not _ollama_chat(closing, ollama.url).is_available()


def test_ollama_unreachable_raises_backend_unavailable(closed_url: str, closing: Closer) -> None:
    chat = _ollama_chat(closing, closed_url)

    with pytest.raises(BackendUnavailable, match="unreachable"):
        chat.complete(HELLO, max_tokens=8)
    with pytest.raises(BackendUnavailable):
        list(chat.stream(HELLO, max_tokens=8))


@pytest.mark.parametrize("status", [500, 503, 404])
def test_ollama_server_error_raises_backend_unavailable(
    ollama: FakeOllama, closing: Closer, status: int
) -> None:
    ollama.fail_next("/api/chat", status, "model is loading")
    chat = _ollama_chat(closing, ollama.url)

    with pytest.raises(BackendUnavailable, match=str(status)):
        chat.complete(HELLO, max_tokens=8)


def test_ollama_server_error_while_streaming_raises_backend_unavailable(
    ollama: FakeOllama, closing: Closer
) -> None:
    ollama.fail_next("/api/chat", 500)
    chat = _ollama_chat(closing, ollama.url)

    with pytest.raises(BackendUnavailable, match="500"):
        list(chat.stream(HELLO, max_tokens=8))


def test_ollama_bad_request_raises_backend_error_not_unavailable(
    ollama: FakeOllama, closing: Closer
) -> None:
    ollama.fail_next("/api/chat", 400, "invalid format")
    chat = _ollama_chat(closing, ollama.url)

    with pytest.raises(BackendError, match="400") as caught:
        chat.complete(HELLO, max_tokens=8, json_schema=SCHEMA)
    assert not isinstance(caught.value, BackendUnavailable)


def test_ollama_keeps_answering_after_a_failure(ollama: FakeOllama, closing: Closer) -> None:
    ollama.fail_next("/api/chat", 503)
    ollama.say("back again")
    chat = _ollama_chat(closing, ollama.url)

    with pytest.raises(BackendUnavailable):
        chat.complete(HELLO, max_tokens=8)
    assert chat.complete(HELLO, max_tokens=8) == "back again"


# ------------------------------------------------------------------------------- Ollama embed


def test_ollama_embedder_returns_normalised_float32_vectors_in_order(
    ollama: FakeOllama, closing: Closer
) -> None:
    ollama.vectors = {"tea": [3.0, 4.0, 0.0, 0.0], "coffee": [0.0, 0.0, 0.0, 2.0]}
    embedder: OllamaEmbedder = closing(
        OllamaEmbedder(ollama.url, "nomic-embed-text", dimension=None, timeout_s=5)
    )

    vectors = embedder.embed_batch(["tea", "coffee"])

    assert len(vectors) == 2
    for vector in vectors:
        _assert_unit_float32(vector)
    np.testing.assert_allclose(vectors[0], [0.6, 0.8, 0.0, 0.0], atol=1e-6)
    np.testing.assert_allclose(vectors[1], [0.0, 0.0, 0.0, 1.0], atol=1e-6)
    [body] = ollama.bodies("/api/embed")
    assert body == {"model": "nomic-embed-text", "input": ["tea", "coffee"]}
    np.testing.assert_allclose(embedder.embed("tea"), vectors[0])


def test_ollama_embedder_empty_batch_makes_no_request(ollama: FakeOllama, closing: Closer) -> None:
    embedder: OllamaEmbedder = closing(
        OllamaEmbedder(ollama.url, "nomic-embed-text", dimension=None, timeout_s=5)
    )

    assert embedder.embed_batch([]) == []
    assert ollama.received == []


@pytest.mark.parametrize("model", ["nomic-embed-text", "nomic-embed-text:latest"])
def test_ollama_embedder_knows_common_dimensions_without_a_call(
    ollama: FakeOllama, closing: Closer, model: str
) -> None:
    embedder: OllamaEmbedder = closing(
        OllamaEmbedder(ollama.url, model, dimension=None, timeout_s=5)
    )

    assert embedder.dimension == 768
    assert ollama.received == []


def test_ollama_embedder_probes_an_unknown_dimension_once(
    ollama: FakeOllama, closing: Closer
) -> None:
    ollama.embed_dim = 6
    embedder: OllamaEmbedder = closing(
        OllamaEmbedder(ollama.url, "my-embedder", dimension=None, timeout_s=5)
    )

    assert embedder.dimension == 6
    assert embedder.dimension == 6
    assert len(ollama.bodies("/api/embed")) == 1


def test_ollama_embedder_configured_dimension_wins(ollama: FakeOllama, closing: Closer) -> None:
    embedder: OllamaEmbedder = closing(
        OllamaEmbedder(ollama.url, "my-embedder", dimension=12, timeout_s=5)
    )

    assert embedder.dimension == 12
    assert ollama.received == []


def test_ollama_embedder_zero_vector_is_a_backend_error(
    ollama: FakeOllama, closing: Closer
) -> None:
    ollama.vectors = {"nothing": [0.0, 0.0, 0.0, 0.0]}
    embedder: OllamaEmbedder = closing(
        OllamaEmbedder(ollama.url, "nomic-embed-text", dimension=None, timeout_s=5)
    )

    with pytest.raises(BackendError, match="zero"):
        embedder.embed("nothing")


def test_ollama_embedder_failures(ollama: FakeOllama, closed_url: str, closing: Closer) -> None:
    ollama.fail_next("/api/embed", 500)
    ollama.fail_next("/api/embed", 400, "bad input")
    embedder: OllamaEmbedder = closing(
        OllamaEmbedder(ollama.url, "nomic-embed-text", dimension=None, timeout_s=5)
    )
    unreachable: OllamaEmbedder = closing(
        OllamaEmbedder(closed_url, "nomic-embed-text", dimension=None, timeout_s=0.5)
    )

    with pytest.raises(BackendUnavailable, match="500"):
        embedder.embed("tea")
    with pytest.raises(BackendError, match="400") as caught:
        embedder.embed("tea")
    assert not isinstance(caught.value, BackendUnavailable)
    with pytest.raises(BackendUnavailable, match="unreachable"):
        unreachable.embed("tea")


# ------------------------------------------------------------------------------- OpenAI chat


def test_openai_complete_returns_the_content_and_sends_the_request(
    openai_server: FakeOpenAI, closing: Closer
) -> None:
    openai_server.say("Hi there.")
    chat = _openai_chat(closing, openai_server.base_url)

    reply = chat.complete(HELLO, max_tokens=32, temperature=0.2)

    assert reply == "Hi there."
    [body] = openai_server.bodies("/v1/chat/completions")
    assert body["model"] == "served-model"
    assert body["messages"] == [{"role": "user", "content": "Hello?"}]
    assert body["max_tokens"] == 32
    assert body["temperature"] == 0.2
    assert "response_format" not in body
    assert not body.get("stream")


def test_openai_complete_sends_the_json_schema_as_response_format(
    openai_server: FakeOpenAI, closing: Closer
) -> None:
    openai_server.say('{"facts": []}')
    chat = _openai_chat(closing, openai_server.base_url)

    reply = chat.complete(HELLO, max_tokens=64, json_schema=SCHEMA)

    assert json.loads(reply) == {"facts": []}
    [body] = openai_server.bodies("/v1/chat/completions")
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "output", "schema": SCHEMA},
    }
    assert chat.supports_json_schema


def test_openai_retries_once_without_response_format_when_rejected(
    openai_server: FakeOpenAI, closing: Closer
) -> None:
    openai_server.rejects_response_format = True
    openai_server.say('{"facts": ["plain"]}')
    openai_server.say('{"facts": ["later"]}')
    chat = _openai_chat(closing, openai_server.base_url)

    first = chat.complete(HELLO, max_tokens=64, json_schema=SCHEMA)

    assert json.loads(first) == {"facts": ["plain"]}
    rejected, retried = openai_server.bodies("/v1/chat/completions")
    assert "response_format" in rejected
    assert "response_format" not in retried
    assert retried["messages"] == rejected["messages"]
    assert retried["max_tokens"] == 64
    assert chat.supports_json_schema is False

    # Remembered: the next structured request goes out without response_format at once.
    second = chat.complete(HELLO, max_tokens=64, json_schema=SCHEMA)

    assert json.loads(second) == {"facts": ["later"]}
    bodies = openai_server.bodies("/v1/chat/completions")
    assert len(bodies) == 3
    assert "response_format" not in bodies[2]


def test_openai_does_not_retry_a_bad_request_a_second_time(
    openai_server: FakeOpenAI, closing: Closer
) -> None:
    openai_server.fail_next("/v1/chat/completions", 400, "response_format is not supported")
    openai_server.fail_next("/v1/chat/completions", 400, "context too long")
    chat = _openai_chat(closing, openai_server.base_url)

    with pytest.raises(BackendError, match="400") as caught:
        chat.complete(HELLO, max_tokens=64, json_schema=SCHEMA)

    assert not isinstance(caught.value, BackendUnavailable)
    assert len(openai_server.bodies("/v1/chat/completions")) == 2


def test_a_context_length_error_keeps_structured_output_on(
    openai_server: FakeOpenAI, closing: Closer
) -> None:
    openai_server.fail_next(
        "/v1/chat/completions", 400, "This model's maximum context length is 4096 tokens"
    )
    chat = _openai_chat(closing, openai_server.base_url)

    with pytest.raises(BackendError, match="400"):
        chat.complete(HELLO, max_tokens=64, json_schema=SCHEMA)

    assert len(openai_server.bodies("/v1/chat/completions")) == 1
    assert chat.supports_json_schema
    openai_server.say('{"facts": []}')
    chat.complete(HELLO, max_tokens=64, json_schema=SCHEMA)
    assert "response_format" in openai_server.bodies("/v1/chat/completions")[-1]


def test_the_retry_without_response_format_keeps_the_abandon_check(
    openai_server: FakeOpenAI, closing: Closer
) -> None:
    openai_server.rejects_response_format = True
    chat = _openai_chat(closing, openai_server.base_url)
    checks: list[bool] = []

    def gone() -> bool:
        checks.append(True)
        return len(checks) > 1  # the client leaves while the first request is refused

    with pytest.raises(Abandoned):
        chat.complete(HELLO, max_tokens=64, json_schema=SCHEMA, abandoned=gone)

    assert len(openai_server.bodies("/v1/chat/completions")) == 1


def test_openai_bad_request_without_schema_raises_backend_error(
    openai_server: FakeOpenAI, closing: Closer
) -> None:
    openai_server.fail_next("/v1/chat/completions", 400, "max_tokens is too large")
    chat = _openai_chat(closing, openai_server.base_url)

    with pytest.raises(BackendError, match="400") as caught:
        chat.complete(HELLO, max_tokens=10**9)

    assert not isinstance(caught.value, BackendUnavailable)
    assert len(openai_server.bodies("/v1/chat/completions")) == 1
    assert chat.supports_json_schema


def test_openai_stream_yields_the_pieces_in_order(
    openai_server: FakeOpenAI, closing: Closer
) -> None:
    openai_server.say("Once ", "upon ", "a time.")
    chat = _openai_chat(closing, openai_server.base_url)

    pieces = list(chat.stream(HELLO, max_tokens=16))

    assert pieces == ["Once ", "upon ", "a time."]
    [body] = openai_server.bodies("/v1/chat/completions")
    assert body["stream"] is True
    assert body["max_tokens"] == 16


@pytest.mark.parametrize("cut", ["close", "chunked"])
def test_an_openai_stream_cut_midway_raises_after_the_pieces_that_came(
    openai_server: FakeOpenAI, closing: Closer, cut: str
) -> None:
    """Finding 4 of issue 29: a stream without `finish_reason` is no whole reply."""
    openai_server.say("Once ", "upon ")
    openai_server.cut = cut
    chat = _openai_chat(closing, openai_server.base_url)
    pieces = []
    with pytest.raises(StreamCut, match="before the reply was finished"):
        for piece in chat.stream(HELLO, max_tokens=16):
            pieces.append(piece)
    assert pieces == ["Once ", "upon "]
    assert isinstance(StreamCut("x"), BackendUnavailable)
    openai_server.cut = None
    openai_server.say("again")
    assert list(chat.stream(HELLO, max_tokens=16)) == ["again"]


@pytest.mark.parametrize("cut", ["close", "chunked"])
def test_a_whole_answer_cut_midway_is_unavailable_not_a_crash(
    openai_server: FakeOpenAI, ollama: FakeOllama, closing: Closer, cut: str
) -> None:
    """Half of a JSON answer (the connection closed) is a BackendUnavailable, never a
    JSONDecodeError escaping as a 500."""
    openai_server.cut = ollama.cut = cut
    for chat in (_openai_chat(closing, openai_server.base_url), _ollama_chat(closing, ollama.url)):
        with pytest.raises(BackendUnavailable):
            chat.complete(HELLO, max_tokens=16)


def test_openai_stream_can_be_abandoned_early(openai_server: FakeOpenAI, closing: Closer) -> None:
    openai_server.say("one ", "two ", "three")
    openai_server.say("again")
    chat = _openai_chat(closing, openai_server.base_url)

    pieces = chat.stream(HELLO, max_tokens=16)
    assert isinstance(pieces, Generator)
    assert next(pieces) == "one "
    pieces.close()

    assert chat.complete(HELLO, max_tokens=16) == "again"


@pytest.mark.parametrize("status", [500, 503, 429, 404])
def test_openai_server_error_raises_backend_unavailable(
    openai_server: FakeOpenAI, closing: Closer, status: int
) -> None:
    openai_server.fail_next("/v1/chat/completions", status)
    openai_server.fail_next("/v1/chat/completions", status)
    chat = _openai_chat(closing, openai_server.base_url)

    with pytest.raises(BackendUnavailable, match=str(status)):
        chat.complete(HELLO, max_tokens=8)
    with pytest.raises(BackendUnavailable, match=str(status)):
        list(chat.stream(HELLO, max_tokens=8))
    # max_retries=0: one request each, no hidden retries by the client.
    assert len(openai_server.bodies("/v1/chat/completions")) == 2


def test_openai_unreachable_raises_backend_unavailable(closed_url: str, closing: Closer) -> None:
    chat = _openai_chat(closing, f"{closed_url}/v1")

    with pytest.raises(BackendUnavailable, match="unreachable"):
        chat.complete(HELLO, max_tokens=8)
    with pytest.raises(BackendUnavailable, match="unreachable"):
        list(chat.stream(HELLO, max_tokens=8))


def test_openai_is_available(openai_server: FakeOpenAI, closing: Closer) -> None:
    assert _openai_chat(closing, openai_server.base_url).is_available()
    assert openai_server.received[-1].path == "/v1/models"


def test_openai_is_not_available_when_the_listing_fails(
    openai_server: FakeOpenAI, closing: Closer
) -> None:
    openai_server.fail_next("/v1/models", 500)

    assert not _openai_chat(closing, openai_server.base_url).is_available()


def test_openai_is_not_available_when_nothing_listens(closed_url: str, closing: Closer) -> None:
    assert not _openai_chat(closing, f"{closed_url}/v1").is_available()


def test_openai_sends_the_api_key_as_bearer_token(
    openai_server: FakeOpenAI, closing: Closer
) -> None:
    openai_server.say("ok")
    chat: OpenAIChat = closing(
        OpenAIChat(
            "served-model",
            base_url=openai_server.base_url,
            api_key="sk-test",
            timeout_s=5,
            connect_timeout_s=0.5,
        )
    )

    assert chat.complete(HELLO, max_tokens=4) == "ok"
    assert openai_server.received[-1].headers["authorization"] == "Bearer sk-test"


# ------------------------------------------------------------------------------- OpenAI embed


def test_openai_embedder_normalises_and_orders_by_index(
    openai_server: FakeOpenAI, closing: Closer
) -> None:
    openai_server.reverse_embeddings = True
    openai_server.vectors = {
        "a": [2.0, 0.0, 0.0, 0.0],
        "b": [0.0, 5.0, 0.0, 0.0],
        "c": [1.0, 1.0, 1.0, 1.0],
    }
    embedder: OpenAIEmbedder = closing(
        OpenAIEmbedder(
            "embedder", base_url=openai_server.base_url, api_key=None, dimension=None, timeout_s=5
        )
    )

    vectors = embedder.embed_batch(["a", "b", "c"])

    assert len(vectors) == 3
    for vector, text in zip(vectors, "abc", strict=True):
        _assert_unit_float32(vector)
        np.testing.assert_allclose(vector, _unit(openai_server.vectors[text]), atol=1e-6)
    [body] = openai_server.bodies("/v1/embeddings")
    assert body["model"] == "embedder"
    assert body["input"] == ["a", "b", "c"]


def test_openai_embedder_dimension(openai_server: FakeOpenAI, closing: Closer) -> None:
    known: OpenAIEmbedder = closing(
        OpenAIEmbedder(
            "text-embedding-3-small",
            base_url=openai_server.base_url,
            api_key=None,
            dimension=None,
            timeout_s=5,
        )
    )
    assert known.dimension == 1536
    assert openai_server.received == []

    openai_server.embed_dim = 5
    probed: OpenAIEmbedder = closing(
        OpenAIEmbedder(
            "embedder", base_url=openai_server.base_url, api_key=None, dimension=None, timeout_s=5
        )
    )
    assert probed.dimension == 5
    assert probed.dimension == 5
    assert len(openai_server.bodies("/v1/embeddings")) == 1


def test_openai_embedder_failures(
    openai_server: FakeOpenAI, closed_url: str, closing: Closer
) -> None:
    openai_server.fail_next("/v1/embeddings", 500)
    openai_server.fail_next("/v1/embeddings", 400, "input too long")
    embedder: OpenAIEmbedder = closing(
        OpenAIEmbedder(
            "embedder", base_url=openai_server.base_url, api_key=None, dimension=None, timeout_s=5
        )
    )
    unreachable: OpenAIEmbedder = closing(
        OpenAIEmbedder(
            "embedder", base_url=f"{closed_url}/v1", api_key=None, dimension=None, timeout_s=0.5
        )
    )

    with pytest.raises(BackendUnavailable, match="500"):
        embedder.embed("a")
    with pytest.raises(BackendError, match="400") as caught:
        embedder.embed("a")
    assert not isinstance(caught.value, BackendUnavailable)
    with pytest.raises(BackendUnavailable, match="unreachable"):
        unreachable.embed("a")


# ------------------------------------------------------------------------------- choosing


def _settings(tmp_path: Path, **changes: Any) -> Settings:
    return Settings(db_path=tmp_path / "m.db", **changes)


def test_auto_picks_ollama_when_it_has_the_default_model(
    ollama: FakeOllama, closing: Closer, tmp_path: Path
) -> None:
    ollama.say("from ollama")
    settings = _settings(
        tmp_path,
        llm_backend="auto",
        ollama_host=ollama.url,
        llm_connect_timeout_s=0.5,
        llm_timeout_s=5,
    )

    chat = closing(build_chat(settings))

    assert isinstance(chat, OllamaChat)
    assert chat.model == "llama3.2"
    assert chat.complete(HELLO, max_tokens=8) == "from ollama"


def test_auto_picks_ollama_for_a_configured_model_it_has(
    ollama: FakeOllama, closing: Closer, tmp_path: Path
) -> None:
    settings = _settings(
        tmp_path, llm_backend="auto", llm_model="qwen2.5:0.5b", ollama_host=ollama.url
    )

    chat = closing(build_chat(settings))

    assert isinstance(chat, OllamaChat)
    assert chat.model == "qwen2.5:0.5b"


def test_auto_falls_back_to_embedded_when_nothing_listens(closed_url: str, tmp_path: Path) -> None:
    settings = _settings(tmp_path, llm_backend="auto", ollama_host=closed_url)

    assert choose_auto_backend(settings) == "embedded"


def test_auto_falls_back_to_embedded_when_ollama_lacks_the_model(
    ollama: FakeOllama, tmp_path: Path
) -> None:
    settings = _settings(tmp_path, llm_backend="auto", llm_model="mistral", ollama_host=ollama.url)

    assert choose_auto_backend(settings) == "embedded"
    assert [r.path for r in ollama.received] == ["/api/tags"]


def test_auto_uses_a_gguf_file_without_asking_ollama(ollama: FakeOllama, tmp_path: Path) -> None:
    settings = _settings(
        tmp_path, llm_backend="auto", llm_model=str(tmp_path / "mine.GGUF"), ollama_host=ollama.url
    )

    assert choose_auto_backend(settings) == "embedded"
    assert ollama.received == []


def test_auto_uses_a_bundled_model_name_without_asking_ollama(
    ollama: FakeOllama, tmp_path: Path
) -> None:
    settings = _settings(
        tmp_path, llm_backend="auto", llm_model="qwen2.5-coder-0.5b", ollama_host=ollama.url
    )

    assert choose_auto_backend(settings) == "embedded"
    assert ollama.received == []


def test_explicit_openai_backend_talks_to_the_configured_server(
    openai_server: FakeOpenAI, closing: Closer, tmp_path: Path
) -> None:
    openai_server.say("from openai")
    settings = _settings(
        tmp_path,
        llm_backend="openai",
        llm_model="served-model",
        llm_base_url=openai_server.base_url,
        llm_connect_timeout_s=0.5,
    )

    chat = closing(build_chat(settings))

    assert isinstance(chat, OpenAIChat)
    assert chat.is_available()
    assert chat.complete(HELLO, max_tokens=8) == "from openai"
