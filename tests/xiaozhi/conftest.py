"""The xiaozhi tests' app: the real app with fake models (the transcript is always "What time
is it now?")."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from lobug.app import create_app
from lobug.backends import Backends
from lobug.config import Settings
from tests.fakes import FakeChat, FakeEmbedder, FakeSTT, FakeTTS


@pytest.fixture
def tts() -> FakeTTS:
    return FakeTTS()


@pytest.fixture
def app_client(
    settings: Settings, fake_chat: FakeChat, fake_embedder: FakeEmbedder, tts: FakeTTS
) -> Iterator[TestClient]:
    backends = Backends(fake_chat, fake_embedder, FakeSTT("What time is it now?"), tts)
    with TestClient(create_app(settings, backends)) as client:
        yield client
