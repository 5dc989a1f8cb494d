"""Real server processes with fake models.

`python -m tests.e2e.fake_server serve|memory-server PORT` builds the app as `lobug serve` /
`lobug memory-server` do (settings from the environment, LOBUG_DATABASE_URL included) and
serves it as they do (`lobug.serving.serve`), but with the fake chat and embedder, so tests of
several processes on one database do not load real models. With LOBUG_LLM_BACKEND=openai the
chat is the real OpenAI-compatible backend (LOBUG_LLM_BASE_URL, LOBUG_LLM_MODEL), e.g. pointed
at the fake model server below. FAKE_EMBED_DELAY_S makes the fake embedder spend that many
seconds on every text (a slow embedding model on a large import).

The fake chat learns one fact per exchange, the user's message itself: one fact per exchange
shows that each exchange's memory work ran once. While the file FAKE_GARBLED_FILE names
exists, its fact-extraction replies hold no JSON (a model whose output cannot be read); while
the file FAKE_EMBED_DOWN_FILE names exists, the fake embedder fails (an embedder down); while
the file FAKE_NOTES_FILE names exists, it answers with the facts its prompt quotes. While the file
FAKE_PURGE_PAUSE_FILE names exists, the store method FAKE_PURGE_PAUSE_AT names waits
(`pause_the_store`). With FAKE_REAL_SPEECH=1 the speech models are the real bundled ones (the
voice path with fake chat), with FAKE_SPEECH=1 the fake ones; FAKE_CHAT_DELAY_S makes every
answer that late, and FAKE_REPLY is every answer's text.

`python -m tests.e2e.fake_server model PORT` is a fake OpenAI-compatible model server
(`/v1/models`, `/v1/chat/completions`, streamed or not): it answers `MODEL_REPLY` in pieces.
A last user message holding `CUT_CLOSE` gets a stream whose connection is closed midway (a
body without length, ended by the close: no `finish_reason`, no `[DONE]`); one holding
`CUT_CHUNKED` a chunked stream that stops midway, without its last chunk. Not streamed, both
get half of the JSON answer before the connection closes. A model that calls tools: a streamed
request that offers a `..._set_volume` tool and whose last user message names a number
("make the sound thirty") asks for that tool with `{"volume": N}`; given the tool's result, it
answers `TOOL_DONE` (or `TOOL_FAILED` when the result says the call failed)."""

from __future__ import annotations

import json
import os
import re
import signal
import sys
import time
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from lobug.app import create_app, create_memory_app
from lobug.backends import Backends, build_chat, build_stt, build_tts
from lobug.backends.base import (
    BackendUnavailable,
    ChatBackend,
    ChatMessage,
    JsonSchema,
    SpeechToText,
    TextToSpeech,
    Vector,
)
from lobug.config import Settings
from lobug.memory.disclosure import stated_type
from lobug.serving import serve
from tests.e2e.server import ServerProcess, free_port, wait_until_healthy
from tests.fakes import FakeChat, FakeEmbedder, FakeSTT, FakeTTS

MODEL = "fake-model"
MODEL_REPLY = ("Once upon a time a bug lived in a lamp. ", "And then ", "the model")
CUT_CLOSE = "cut-by-close"
CUT_CHUNKED = "cut-chunked"
TOOL_DONE = "Done, the sound is at {volume} now."
TOOL_FAILED = "Sorry, the sound could not be changed."
TENS = {"ten": 10, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60}
TENS |= {"seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100}


def switched_on(variable: str) -> bool:
    """Whether the file the environment variable names exists (a switch a test flips)."""
    path = os.environ.get(variable)
    return bool(path) and Path(str(path)).exists()


def learn_what_was_said(messages: Sequence[ChatMessage], schema: JsonSchema | None) -> str:
    if schema is None:
        return answer_from_notes(messages) if switched_on("FAKE_NOTES_FILE") else "Okay."
    if switched_on("FAKE_GARBLED_FILE"):
        return "Sure! I will remember that."
    said = messages[-1]["content"].split("User:")[-1].split("\n")[0].strip()
    # A capable model types what it learns (its type is taken as given): this one types a
    # statement as the person's own words say, else as a trait.
    return json.dumps({"facts": [{"fact": said, "type": stated_type(said) or "trait"}]})


def answer_from_notes(messages: Sequence[ChatMessage]) -> str:
    """A model that answers from the notes its prompt quotes (the facts it was given, one
    `- "..."` line each), so a test sees through the device API what a turn was given."""
    notes = [
        line[3:-1]
        for message in messages
        if message["role"] == "system"
        for line in message["content"].splitlines()
        if line.startswith('- "') and line.endswith('"')
    ]
    return "I know that " + "; ".join(notes) + "." if notes else "I don't know that."


class SlowEmbedder(FakeEmbedder):
    """The fake embedder, `delay_s` seconds a text (not interruptible, as a model is not),
    failing while FAKE_EMBED_DOWN_FILE exists."""

    def __init__(self, delay_s: float = 0.0) -> None:
        super().__init__()
        self.delay_s = delay_s

    def embed_batch(self, texts: Sequence[str]) -> list[Vector]:
        if switched_on("FAKE_EMBED_DOWN_FILE"):
            raise BackendUnavailable("the fake embedder is down")
        time.sleep(self.delay_s * len(texts))
        return super().embed_batch(texts)


def chat_for(settings: Settings) -> ChatBackend:
    if settings.llm_backend == "openai":
        return build_chat(settings)
    delay_s = float(os.environ.get("FAKE_CHAT_DELAY_S") or 0)
    return FakeChat(responder=slowly(delay_s, os.environ.get("FAKE_REPLY")))


def slowly(
    delay_s: float, reply: str | None = None
) -> Callable[[Sequence[ChatMessage], JsonSchema | None], str]:
    """`learn_what_was_said`, its answers to a conversation `delay_s` seconds late (a slow
    model: a device's turns then overlap), and `reply` when given (a long answer)."""

    def responder(messages: Sequence[ChatMessage], schema: JsonSchema | None) -> str:
        if schema is None:
            time.sleep(delay_s)
            if reply:
                return reply
        return learn_what_was_said(messages, schema)

    return responder


def speech_for() -> tuple[SpeechToText | None, TextToSpeech | None]:
    """The real bundled speech models (FAKE_REAL_SPEECH=1), the fake ones (FAKE_SPEECH=1: a
    tone for every sentence, every recording heard as FAKE_HEARD), or none."""
    if os.environ.get("FAKE_REAL_SPEECH") == "1":
        settings = Settings.from_env(os.environ)
        return build_stt(settings), build_tts(settings)
    if os.environ.get("FAKE_SPEECH") == "1":
        return FakeSTT(os.environ.get("FAKE_HEARD") or "hello there"), FakeTTS()
    return None, None


def pause_the_store(pause_file: str | None, method: str) -> None:
    """While `pause_file` exists, the store's `method` waits before it runs (a test kills the
    process there, in the middle of a purge), having first created `pause_file` + ".reached"
    to say it got there."""
    if not pause_file:
        return
    from lobug.store.sqlite.engine import SQLiteStore

    run = getattr(SQLiteStore, method)

    def paused(self: SQLiteStore, *args: Any, **kwargs: Any) -> Any:
        if Path(pause_file).exists():
            Path(pause_file + ".reached").touch()
            while Path(pause_file).exists():
                time.sleep(0.05)
        return run(self, *args, **kwargs)

    setattr(SQLiteStore, method, paused)


def main(command: str, port: int) -> None:
    # A job started in the background (`cmd &`, as CI may be) ignores SIGINT, and Python then
    # installs no KeyboardInterrupt: the fake model would sit out every stop's 30 s timeout.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if command == "model":
        serve_model(port)
        return
    pause_the_store(
        os.environ.get("FAKE_PURGE_PAUSE_FILE"),
        os.environ.get("FAKE_PURGE_PAUSE_AT") or "forget_messages",
    )
    embedder = SlowEmbedder(float(os.environ.get("FAKE_EMBED_DELAY_S") or 0))
    if command == "memory-server":
        settings = Settings.from_memory_env(os.environ).with_overrides(port=port)
        app = create_memory_app(settings, Backends(chat_for(settings), embedder))
    else:
        settings = Settings.from_env(os.environ).with_overrides(port=port)
        app = create_app(settings, Backends(chat_for(settings), embedder, *speech_for()))
    serve(app, "127.0.0.1", port, "warning")


# ---------------------------------------------------------------------- the fake model server


def chunk_event(delta: dict[str, Any], finish: str | None) -> bytes:
    chunk = {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": MODEL,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(chunk)}\n\n".encode()


def completion(content: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": MODEL,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
    }


class ModelHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        listing = {"object": "list", "data": [{"id": MODEL, "object": "model", "created": 0}]}
        self._json(listing if self.path == "/v1/models" else {"status": "ok"})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        if "response_format" in body:  # memory work: nothing to learn
            self._json(completion(json.dumps({"facts": []})))
            return
        said = str(body["messages"][-1].get("content", ""))
        cut_close, cut_chunked = CUT_CLOSE in said, CUT_CHUNKED in said
        calling = tool_events(body)
        if body.get("stream") and calling:
            self._stream(calling)
        elif body.get("stream"):
            self._stream(
                text_events(MODEL_REPLY, cut=cut_close or cut_chunked), cut_close, cut_chunked
            )
        elif cut_close or cut_chunked:
            self._cut_json(completion("".join(MODEL_REPLY)), chunked=cut_chunked)
        else:
            self._json(completion("".join(MODEL_REPLY)))

    def _json(self, document: dict[str, Any]) -> None:
        payload = json.dumps(document).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _cut_json(self, document: dict[str, Any], *, chunked: bool) -> None:
        """Half of the answer, then the connection closes."""
        payload = json.dumps(document).encode()
        half = payload[: len(payload) // 2]
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.write(f"{len(payload):x}\r\n".encode() + half)
        else:
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(half)
        self.close_connection = True

    def _stream(
        self, events: list[bytes], cut_close: bool = False, cut_chunked: bool = False
    ) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        if cut_close:  # no length, no chunks: the body ends where the connection closes
            self.send_header("Connection", "close")
            self.end_headers()
            for event in events:
                self.wfile.write(event)
                self.wfile.flush()
            self.close_connection = True
            return
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for event in events:
            self.wfile.write(f"{len(event):x}\r\n".encode() + event + b"\r\n")
            self.wfile.flush()
        if cut_chunked:
            self.close_connection = True  # closed without the last, empty chunk
        else:
            self.wfile.write(b"0\r\n\r\n")

    def log_message(self, format: str, *args: Any) -> None:
        pass


def text_events(pieces: Sequence[str], *, cut: bool = False) -> list[bytes]:
    """A streamed answer in `pieces`; `cut`: without its end."""
    events = [chunk_event({"role": "assistant", "content": ""}, None)]
    events += [chunk_event({"content": piece}, None) for piece in pieces]
    return events if cut else [*events, chunk_event({}, "stop"), b"data: [DONE]\n\n"]


def tool_events(body: dict[str, Any]) -> list[bytes]:
    """The streamed answer of a model that calls tools (see the module's doc), or none."""
    tools = [t["function"]["name"] for t in body.get("tools") or []]
    volume_tool = next((name for name in tools if name.endswith("set_volume")), None)
    last = body["messages"][-1]
    if last["role"] == "tool":
        asked = json.loads(body["messages"][-2]["tool_calls"][0]["function"]["arguments"])
        failed = last["content"].startswith(("Failed", "Not done"))
        answer = TOOL_FAILED if failed else TOOL_DONE.format(volume=asked["volume"])
        return text_events([answer[:12], answer[12:]])
    volume = number_in(str(last.get("content", "")))
    if volume_tool is None or last["role"] != "user" or volume is None:
        return []
    call = {"index": 0, "id": "call-1", "type": "function"}
    call["function"] = {"name": volume_tool, "arguments": json.dumps({"volume": volume})}
    opening = chunk_event({"role": "assistant", "content": None, "tool_calls": [call]}, None)
    return [opening, chunk_event({}, "tool_calls"), b"data: [DONE]\n\n"]


def number_in(said: str) -> int | None:
    """The first number in `said`, in digits or a word of tens ("thirty")."""
    for word in re.findall(r"[a-z]+|\d+", said.lower()):
        if word.isdigit():
            return int(word)
        if word in TENS:
            return TENS[word]
    return None


def serve_model(port: int) -> None:
    with ThreadingHTTPServer(("127.0.0.1", port), ModelHandler) as httpd:
        httpd.daemon_threads = True
        httpd.serve_forever()


# ---------------------------------------------------------------------- for the tests


def start(command: str, log_path: Path, env: dict[str, str]) -> ServerProcess:
    """`python -m tests.e2e.fake_server COMMAND PORT` with `env` over this environment,
    once it answers `/health`."""
    import subprocess

    port = free_port()
    log = log_path.open("ab")
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.e2e.fake_server", command, str(port)],
        env={**os.environ, **env},
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    log.close()
    server = ServerProcess(process, f"http://127.0.0.1:{port}", log_path)
    wait_until_healthy(server)
    return server


def model_env(model: ServerProcess) -> dict[str, str]:
    """The variables that point a server's chat at the fake model server."""
    return {
        "LOBUG_LLM_BACKEND": "openai",
        "LOBUG_LLM_BASE_URL": f"{model.url}/v1",
        "LOBUG_LLM_MODEL": MODEL,
    }


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
