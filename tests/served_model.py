"""The app on a model that calls tools: the real OpenAI-compatible backend pointed at a fake
model server (`FakeOpenAI`), whose replies and tool calls a test scripts. The `model` fixture
is every test's (`tests/conftest.py` loads this module as a plugin); a module's own wins."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from lobug.app import create_app
from lobug.backends import Backends
from lobug.backends.base import SpeechToText
from lobug.backends.remote import OpenAIChat
from lobug.config import Settings
from tests.backends.test_remote import FakeOpenAI
from tests.fakes import FakeEmbedder, FakeSTT, FakeTTS

MODEL = "served-model"


@pytest.fixture
def model() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI(models=[MODEL])
    yield server
    server.close()


def client_on(
    settings: Settings,
    model: FakeOpenAI,
    embedder: FakeEmbedder,
    stt: SpeechToText | None = None,
) -> TestClient:
    """A client of the app whose chat model is `model`'s (speech: `stt`, else a fake)."""
    chat = OpenAIChat(
        MODEL, base_url=model.base_url, api_key=None, timeout_s=10, connect_timeout_s=1
    )
    backends = Backends(chat, embedder, stt or FakeSTT("hi"), FakeTTS())
    return TestClient(create_app(settings, backends))
