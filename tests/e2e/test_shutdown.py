"""The embedded server started and stopped again and again, as a person does with `make run`
and Ctrl-C: idle, with a reply being written, with memory work queued behind it, and by
SIGTERM. Every stop ends with exit status 0 (SIGINT) or by the signal itself (SIGTERM), never
a crash in the interpreter's teardown (issue 28: one segmentation fault after "Finished server
process")."""

from __future__ import annotations

import signal
import threading
from pathlib import Path

import httpx
import pytest

from tests.e2e.server import start_server

pytestmark = [pytest.mark.e2e, pytest.mark.models]

# (what is going on when the stop comes, the signal)
STOPS = [
    ("idle", signal.SIGINT),
    ("reply", signal.SIGINT),
    ("memory work", signal.SIGINT),
    ("idle", signal.SIGTERM),
    ("memory work", signal.SIGTERM),
]
CLEAN_EXIT = {signal.SIGINT: 0, signal.SIGTERM: -signal.SIGTERM}


def keep_busy(url: str, doing: str) -> threading.Thread:
    """A reply in flight ("reply"), or several statements whose memory work is queued."""
    texts = ["Tell me a long story about the sea."]
    if doing == "memory work":
        texts = [f"My friend number {n} is called Sam and likes tuna." for n in range(3)]

    def talk() -> None:
        with httpx.Client(base_url=url, timeout=30) as http:
            for text in texts:
                try:
                    http.post("/chat/text", json={"text": text})
                except httpx.HTTPError:
                    return  # the server stopped under it: expected

    thread = threading.Thread(target=talk, daemon=True)
    thread.start()
    return thread


def test_the_server_stops_cleanly_every_time(tmp_path: Path) -> None:
    exits = []
    for number, (doing, sig) in enumerate(STOPS):
        log = tmp_path / f"server{number}.log"
        server = start_server(tmp_path / "memory.db", log, {"LOBUG_LLM_MAX_TOKENS": "200"})
        if doing != "idle":
            keep_busy(server.url, doing).join(timeout=1.5 if doing == "reply" else 4.0)
        server.process.send_signal(sig)
        code = server.process.wait(timeout=30)
        exits.append((doing, sig.name, code))
        assert code == CLEAN_EXIT[sig], f"{doing}, {sig.name}: {code}\n{log.read_text()[-3000:]}"
        assert "Segmentation fault" not in log.read_text()
    assert len(exits) == len(STOPS)
