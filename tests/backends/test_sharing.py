"""A person first (issue 28): background model calls give way to a person's calls at once,
and are finished afterwards with nothing lost. `FakeLlamaServer` stands in for llama.cpp's
server (`handle_chat_completions`, streamed or not) and records what it was asked and when a
person's call arrived during a background generation."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from lobug.backends.base import BackendError
from lobug.backends.embedded import background_completion
from lobug.backends.sharing import Attempt, ModelTurns, gives_way
from tests.polling import eventually

WORDS = [f" word{n}" for n in range(40)]  # what the fake model writes, one token a word
JSON_REPLY = json.dumps({"facts": [f"fact {n}" for n in range(12)]})
JSON_TOKENS = [JSON_REPLY[i : i + 4] for i in range(0, len(JSON_REPLY), 4)]
TOKEN_S = 0.01
Chunk = dict[str, Any]


def delta(text: str | None = None, finish: str | None = None) -> Chunk:
    return {"choices": [{"delta": {"content": text}, "finish_reason": finish}], "timings": {}}


class FakeLlamaServer:
    """Writes `WORDS` (or `JSON_TOKENS` when asked for JSON), one token each `TOKEN_S`, after
    one progress chunk per prompt batch (`prompt_batches`, each `batch_s`). A prompt ending
    with the assistant's words so far is continued from them, as llama.cpp does."""

    def __init__(self, prompt_batches: int = 1, batch_s: float = 0.0) -> None:
        self.prompt_batches = prompt_batches
        self.batch_s = batch_s
        self.bodies: list[dict[str, Any]] = []
        self.background_running = False
        self.tokens_while_a_person_waited = 0
        self.person_arrived_during_background = 0
        self.turns: ModelTurns | None = None

    def handle_chat_completions(
        self, body: dict[str, Any], on_chunk: Callable[[Chunk], bool] | None = None
    ) -> Any:
        self.bodies.append(body)
        if on_chunk is None:  # a person's call
            self.person_arrived_during_background += self.background_running
            return {"choices": [{"message": {"content": "Hello."}}]}
        self.background_running = True
        try:
            self._stream(body, on_chunk)
        finally:
            self.background_running = False
        return None

    def _stream(self, body: dict[str, Any], on_chunk: Callable[[Chunk], bool]) -> None:
        for _ in range(self.prompt_batches):
            time.sleep(self.batch_s)
            if on_chunk({"choices": [{"delta": {}}], "prompt_progress": {}}):
                return
        tokens = JSON_TOKENS if "response_format" in body else WORDS
        last = body["messages"][-1]
        done = last["content"] if last["role"] == "assistant" else ""
        start = len([t for t in tokens if t in done]) if done else 0
        for token in tokens[start:][: body["max_tokens"]]:
            time.sleep(TOKEN_S)
            self.tokens_while_a_person_waited += bool(self.turns and self.turns.people)
            if on_chunk(delta(token)):
                return
        on_chunk(delta(finish="stop"))


def a_person_calls(server: FakeLlamaServer, turns: ModelTurns, hold_s: float = 0.1) -> None:
    with turns.person():
        server.handle_chat_completions({"messages": [{"role": "user", "content": "Hi"}]})
        time.sleep(hold_s)  # the person's reply being written


def run_in_thread(call: Callable[[], str]) -> tuple[threading.Thread, list[str]]:
    result: list[str] = []
    thread = threading.Thread(target=lambda: result.append(call()))
    thread.start()
    return thread, result


def body(json_schema: bool = False, max_tokens: int = 100) -> dict[str, Any]:
    asked: dict[str, Any] = {
        "messages": [{"role": "system", "content": "Summarize."}, {"role": "user", "content": "x"}],
        "max_tokens": max_tokens,
    }
    if json_schema:
        asked["response_format"] = {"type": "json_schema"}
    return asked


def test_a_background_reply_stops_for_a_person_and_goes_on_from_its_words() -> None:
    server, turns = FakeLlamaServer(), ModelTurns(quiet_s=0.05)
    server.turns = turns
    thread, result = run_in_thread(
        lambda: background_completion(server, turns, body(), resumable=True)
    )
    assert eventually(lambda: server.background_running)
    time.sleep(5 * TOKEN_S)  # a few words written
    a_person_calls(server, turns)
    thread.join(10)
    assert server.person_arrived_during_background == 1
    assert server.tokens_while_a_person_waited <= 1  # stopped at the next token
    assert result == ["".join(WORDS)]  # nothing lost, nothing twice
    assert turns.stops == 1
    resumed = server.bodies[-1]
    assert resumed["messages"][-1]["role"] == "assistant"  # went on from its words
    assert resumed["max_tokens"] == 100 - len(resumed["messages"][-1]["content"].split())


def test_json_starts_again_after_a_person_and_is_whole() -> None:
    server, turns = FakeLlamaServer(), ModelTurns(quiet_s=0.05)
    server.turns = turns
    thread, result = run_in_thread(
        lambda: background_completion(server, turns, body(json_schema=True), resumable=False)
    )
    assert eventually(lambda: server.background_running)
    time.sleep(5 * TOKEN_S)
    a_person_calls(server, turns)
    thread.join(10)
    assert json.loads(result[0]) == json.loads(JSON_REPLY)
    assert server.bodies[-1]["messages"][-1]["role"] == "user"  # from the start
    assert server.tokens_while_a_person_waited <= 1


def test_a_long_background_prompt_stops_between_its_batches() -> None:
    server, turns = FakeLlamaServer(prompt_batches=50, batch_s=0.02), ModelTurns(quiet_s=0.05)
    server.turns = turns
    thread, result = run_in_thread(
        lambda: background_completion(server, turns, body(), resumable=True)
    )
    assert eventually(lambda: server.background_running)
    started = time.monotonic()
    with turns.person():
        assert eventually(lambda: not server.background_running, 1.0)
        stopped_in = time.monotonic() - started
    thread.join(20)
    assert stopped_in < 0.2  # one batch, not the 50 of the prompt
    assert result == ["".join(WORDS)]
    assert server.bodies[0]["return_progress"] is True  # a chunk after each batch


def test_a_person_never_waits_for_background_work() -> None:
    turns = ModelTurns()
    with turns.background():
        entered = threading.Event()

        def person() -> None:
            with turns.person():
                entered.set()

        threading.Thread(target=person).start()
        assert entered.wait(1.0)
        assert eventually(lambda: turns.people == 0)


def test_background_waits_for_people_and_then_a_quiet_moment() -> None:
    turns = ModelTurns(quiet_s=0.2)
    started: list[float] = []

    def background() -> None:
        with turns.background():
            started.append(time.monotonic())

    with turns.person():
        worker = threading.Thread(target=background)
        worker.start()
        time.sleep(0.1)
        assert not started  # not while a person's call is in flight
        left = time.monotonic()
    worker.join(5)
    assert started and started[0] - left >= 0.2


def test_background_calls_run_one_at_a_time_in_arrival_order() -> None:
    turns = ModelTurns(quiet_s=0.0)
    order: list[int] = []
    running = []

    def take(n: int) -> None:
        with turns.background():
            running.append(n)
            assert len(running) == 1
            order.append(n)
            time.sleep(0.01)
            running.remove(n)

    with turns.person():
        workers = []
        for n in range(5):
            workers.append(threading.Thread(target=take, args=(n,)))
            workers[-1].start()
            assert eventually(lambda q=n + 1: len(turns._line) == q)
    for worker in workers:
        worker.join(5)
    assert order == list(range(5))


def test_a_failed_background_call_gives_the_model_back() -> None:
    turns = ModelTurns(quiet_s=0.0)
    with pytest.raises(RuntimeError), turns.background():
        raise RuntimeError("model crashed")
    with turns.background():
        pass


def test_a_reply_stopped_at_its_token_budget_is_kept() -> None:
    turns = ModelTurns(quiet_s=0.0)
    runs = iter([Attempt("a b", finished=False, tokens=2), Attempt(" c", finished=False, tokens=1)])
    assert gives_way(turns, lambda _t, _n: next(runs), resumable=True, max_tokens=3) == "a b c"


class FailingServer:
    def __init__(self, chunks: list[Chunk], result: Any = None) -> None:
        self.chunks, self.result = chunks, result

    def handle_chat_completions(
        self, body: dict[str, Any], on_chunk: Callable[[Chunk], bool]
    ) -> Any:
        for chunk in self.chunks:
            if on_chunk(chunk):
                break
        return self.result


def test_a_failed_or_cut_background_stream_raises() -> None:
    turns = ModelTurns(quiet_s=0.0)
    for server in (
        FailingServer([{"error": {"message": "exceeds the available context size"}}]),
        FailingServer([], {"error": {"message": "bad request"}}),
        FailingServer([delta("half a")]),  # ended with no finish_reason
    ):
        with pytest.raises(BackendError):
            background_completion(server, turns, body(), resumable=True)
