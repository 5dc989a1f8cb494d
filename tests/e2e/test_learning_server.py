"""Honest learning and forgetting on real server processes (fake models, issue 28, item 5): an
extraction whose output cannot be read is retried across restarts, then parked where
`/health`, the dashboard and `lobug stats` show it, and learned from by `lobug learning
retry`; a spoken forget whose lookup failed says it could not check; and `/health` on the
real embedded model, `ready` only once speech has loaded."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from lobug.memory.work_queue import MAX_ATTEMPTS
from tests.cli.run import ok
from tests.e2e.fake_server import start
from tests.e2e.server import ServerProcess, start_server, wait_for_learning

pytestmark = pytest.mark.e2e

FAILED_STEP = "memory step extract_facts failed"


def until(condition: Callable[[], bool], timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.2)


def memory_of(server: ServerProcess) -> dict[str, int]:
    counts: dict[str, int] = httpx.get(f"{server.url}/health", timeout=10).json()["memory"]
    return counts


def test_unreadable_learning_is_parked_shown_and_retried(tmp_path: Path) -> None:
    garbled = tmp_path / "garbled"
    garbled.touch()
    log = tmp_path / "server.log"
    env = {"LOBUG_DB_PATH": str(tmp_path / "memory.db"), "FAKE_GARBLED_FILE": str(garbled)}
    server = start("serve", log, env)
    try:
        said = httpx.post(f"{server.url}/chat/text", json={"text": "My sister is called Ana"})
        assert said.status_code == 200
        with httpx.Client(base_url=server.url) as client:
            assert wait_for_learning(client)["learning_queue"] == 1  # kept, not dropped
        for attempt in range(2, MAX_ATTEMPTS + 1):  # each start's maintenance pass retries it
            server.stop()
            server = start("serve", log, env)
            until(lambda n=attempt: log.read_text().count(FAILED_STEP) == n)  # type: ignore[misc]
        until(lambda: memory_of(server)["learning_parked"] == 1)
        health = httpx.get(f"{server.url}/health").json()
        assert (health["ready"], health["ollama"], health["memory"]["learning_queue"]) == (
            True,
            True,
            0,
        )
        assert (
            '<span class="big">1</span> exchanges parked'
            in httpx.get(f"{server.url}/ui", follow_redirects=True).text
        )

        stats = ok("stats", env={"LOBUG_DB_PATH": str(tmp_path / "memory.db")}).out
        assert ["learning_parked", "1"] in [line.split() for line in stats.splitlines()]
        remote = {"LOBUG_URL": server.url}
        listed = ok("learning", "list", "--json", env=remote).json()
        [parked] = listed["parked_exchanges"]
        assert (parked["said"], parked["attempts"]) == ("My sister is called Ana", MAX_ATTEMPTS)
        assert parked["error"].startswith("unreadable fact-extraction output")

        garbled.unlink()  # the model answers in JSON again
        retried = ok("learning", "retry", env=remote).out
        assert retried.startswith("1 parked exchange handed to the server's memory work")
        until(lambda: memory_of(server)["learning_parked"] == 0)
        assert memory_of(server)["facts"] == 1
    finally:
        server.stop()


def test_a_spoken_forget_with_the_embedder_down_says_it_could_not_check(tmp_path: Path) -> None:
    down = tmp_path / "embedder-down"
    env = {"LOBUG_DB_PATH": str(tmp_path / "memory.db"), "FAKE_EMBED_DOWN_FILE": str(down)}
    server = start("serve", tmp_path / "server.log", env)
    try:
        with httpx.Client(base_url=server.url, timeout=30) as device:
            assert device.post("/chat/text", json={"text": "My sister is called Ana"}).is_success
            assert wait_for_learning(device)["facts"] == 1
            down.touch()
            reply = device.post("/chat/text", json={"text": "Forget what I said about my job"})
            assert reply.json()["response"] == (
                "I couldn't check what I have saved about your job just now, so I haven't "
                "forgotten anything. Please ask me again in a moment."
            )
            assert wait_for_learning(device)["facts"] == 1
            named = device.post("/chat/text", json={"text": "Forget what I said about my sister"})
            assert named.json()["response"].startswith("I forgot 1 fact: your sister")
            assert wait_for_learning(device)["facts"] == 0
    finally:
        server.stop()


@pytest.mark.models
def test_on_the_embedded_model_health_is_ready_once_speech_has_loaded(tmp_path: Path) -> None:
    """`ready` was true from the first answer, speech loading or not."""
    server = start_server(tmp_path / "memory.db", tmp_path / "server.log")
    seen: list[tuple[bool, bool, bool]] = []
    try:

        def speech_ready() -> bool:
            body = httpx.get(f"{server.url}/health", timeout=10).json()
            assert body["llm"]["backend"] == "embedded"
            seen.append((body["ready"], body["speech"]["ready"], body["ollama"]))
            return bool(body["speech"]["ready"])

        until(speech_ready, timeout_s=180)
    finally:
        server.stop()
    assert all(ready == speech for ready, speech, _ in seen)  # the model answers throughout
    assert all(answers for *_, answers in seen) and seen[-1] == (True, True, True)
