"""End to end over real HTTP with a model that always loops (issue 18): the device gets the
fallback, and nothing degenerate reaches the log's learnable rows, the summaries, the base
memory or the facts."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import httpx
import pytest

from lobug.app import create_app
from lobug.backends import Backends
from lobug.config import MemoryConfig, Settings
from lobug.language.quality import is_learnable, text_problem
from lobug.services import Services
from lobug.turn.reply_guard import FALLBACK_REPLY
from tests.api.test_voice import speech_wav, upload
from tests.fakes import FakeEmbedder, FakeSTT, FakeTTS, LoopingChat
from tests.live import LiveServer
from tests.polling import eventually

SAID = [
    "I live in Lisbon with my partner Joana.",
    "I work as a nurse at Santa Maria hospital.",
    "I am allergic to peanuts.",
    "My brother Rui lives in Porto.",
    "I drive an old Fiat Panda.",
    "I play the guitar on weekends.",
]


@pytest.fixture
def tts() -> FakeTTS:
    return FakeTTS()


@pytest.fixture
def server(settings: Settings, tts: FakeTTS) -> Iterator[tuple[str, Services]]:
    memory = MemoryConfig(
        short_term_threshold=6, short_term_keep=1, long_term_threshold=2, long_term_keep=1
    )
    backends = Backends(LoopingChat(), FakeEmbedder(), FakeSTT(SAID[0]), tts)
    app = create_app(replace(settings, memory=memory), backends)
    live = LiveServer(app)
    try:
        yield live.url, app.state.services
    finally:
        live.stop()


def test_a_looping_model_is_never_spoken_stored_or_learned_from(
    server: tuple[str, Services], tts: FakeTTS
) -> None:
    url, services = server
    with httpx.Client(base_url=url, timeout=30) as http:
        for text in SAID * 2:
            body = http.post("/chat/text", json={"text": text}).json()
            assert body == {"response": FALLBACK_REPLY, "action": "respond"}
        streamed = http.post("/chat/audio/stream", files=upload(speech_wav()))
        assert streamed.status_code == 200 and len(streamed.content) > 44
    assert tts.spoken == ["Sorry, I lost my train of thought.", "Could you say that again?"]
    assert eventually(lambda: services.memory_work.pending == 0, 30)

    store = services.store
    log = store.agent_messages("lobug", 100)
    assert len(log) == 2 * (len(SAID) * 2 + 1)
    replies = [m for m in log if m.role == "assistant"]
    assert all(m.content == FALLBACK_REPLY and not is_learnable(m.metadata) for m in replies)
    episodes = store.summaries("lobug")
    assert episodes and all(s.made_by == "extractive" for s in episodes)
    summaries = [s.content for s in episodes]
    for text in [*summaries, store.base_memory("lobug")]:
        assert "oo" not in text.lower().split() and text_problem(text, "en") is None
    facts = sorted(f.content.rstrip(".") for f in store.facts("lobug"))
    assert facts == sorted(
        [
            "The user lives in Lisbon with the user's partner Joana",
            "The user works as a nurse at Santa Maria hospital",
            "The user is allergic to peanuts",
            "The user's brother Rui lives in Porto",
            "The user drives an old Fiat Panda",
            "The user plays the guitar on weekends",
        ]
    )
