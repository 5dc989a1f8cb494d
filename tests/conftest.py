from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import hypothesis
import pytest
from fastapi.testclient import TestClient

from lobug.app import create_app
from lobug.backends import Backends
from lobug.config import MemoryConfig, Settings
from lobug.store.sqlite.engine import SQLiteStore
from tests.fakes import FakeChat, FakeEmbedder

# The machine is small and shared with model-backed tests: judge properties, not speed.
hypothesis.settings.register_profile("lobug", deadline=None)
hypothesis.settings.load_profile("lobug")


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    # No nightly dream: a test that wants one runs it.
    return Settings(db_path=tmp_path / "memory.db", memory=MemoryConfig(), dream_at="")


@pytest.fixture
def fake_chat() -> FakeChat:
    return FakeChat()


@pytest.fixture
def fake_embedder() -> FakeEmbedder:
    return FakeEmbedder()


@pytest.fixture
def backends(fake_chat: FakeChat, fake_embedder: FakeEmbedder) -> Backends:
    return Backends(chat=fake_chat, embedder=fake_embedder)


@pytest.fixture
def store(tmp_path: Path, fake_embedder: FakeEmbedder) -> Iterator[SQLiteStore]:
    opened = SQLiteStore(tmp_path / "store.db")
    opened.bind_embedding(fake_embedder.model, fake_embedder.dimension)
    yield opened
    opened.close()


@pytest.fixture
def client(settings: Settings, backends: Backends) -> Iterator[TestClient]:
    with TestClient(create_app(settings, backends)) as test_client:
        yield test_client
