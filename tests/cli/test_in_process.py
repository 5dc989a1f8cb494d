"""The local mode's server in the command's own process (`rest.local_access`): it builds
the models only for a request that needs them, runs no background work, is admin whatever
tokens are configured, audits as `cli`, and refuses a model other than the database's."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator

import pytest

from lobug import backends as backend_module
from lobug import services
from lobug.backends import Backends
from lobug.cli.output import Refused
from lobug.cli.rest import MemoryAccess, local_access
from lobug.config import Settings
from lobug.services import LazyChat
from lobug.store.models import FactQuery
from lobug.store.sqlite.engine import SQLiteStore
from tests.fakes import FakeChat, FakeEmbedder

BEES = ["The user keeps bees", "The user's bees make honey"]


class OtherEmbedder(FakeEmbedder):
    model = "another-model"


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How many chat models and embedders the configured builders made."""
    counts = {"chat": 0, "embedder": 0}

    def build_chat(settings: Settings) -> FakeChat:
        counts["chat"] += 1
        return FakeChat('{"name": "Bees", "summary": "The user keeps bees."}')

    def build_embedder(settings: Settings) -> OtherEmbedder:
        counts["embedder"] += 1
        return OtherEmbedder()

    monkeypatch.setattr(backend_module, "build_chat", build_chat)
    monkeypatch.setattr(services, "build_embedder", build_embedder)
    return counts


@pytest.fixture
def local(settings: Settings, fake_embedder: FakeEmbedder) -> Iterator[MemoryAccess]:
    """The local file with tokens configured; its chat model the configured one (a fake,
    built on first use)."""
    guarded = dataclasses.replace(settings, admin_tokens=("a" * 32,), device_tokens=("d" * 32,))
    opened = local_access(guarded, Backends(LazyChat(guarded), fake_embedder))
    opened.create_agent("lobug")
    yield opened
    opened.close()


def test_a_command_builds_no_chat_model_and_starts_no_background_work(
    local: MemoryAccess, built: dict[str, int]
) -> None:
    before = {t.name for t in threading.enumerate()}
    for text in BEES:
        local.add_fact("lobug", text, "trait")
    local.stats()
    local.dream("lobug", True)
    assert built["chat"] == 0
    started = {t.name for t in threading.enumerate()} - before
    # Only the event loop's thread and the workers its requests ran on.
    assert {n for n in started if not n.startswith(("AnyIO", "asyncio_"))} == set(), started

    rebuilt = local.rebuild_topics("lobug")
    assert built["chat"] == 1 and len(rebuilt) == 1


def test_the_local_file_is_admin_with_tokens_set_and_audits_as_cli(local: MemoryAccess) -> None:
    local.add_fact("lobug", BEES[0], "trait")
    local.set_block("lobug", "human", "Alex")
    entries = local.audit("lobug", 10)["entries"]
    assert {e["actor"] for e in entries} == {"cli"}


def test_the_embedder_is_built_for_a_vector_and_another_model_is_refused(
    settings: Settings, fake_embedder: FakeEmbedder, built: dict[str, int]
) -> None:
    store = SQLiteStore(settings.db_path)
    store.bind_embedding(fake_embedder.model, fake_embedder.dimension)
    store.ensure_agent("lobug")
    store.close()
    opened = local_access(settings)  # the configured models, built by `built`'s builders
    try:
        assert opened.facts("lobug", FactQuery())["total"] == 0
        assert opened.stats()["embedding_model"] == "fake-embed"
        assert built["embedder"] == 0
        with pytest.raises(Refused, match=r"embedding_mismatch: .*run `lobug reindex`"):
            opened.add_fact("lobug", BEES[0], "trait")
        with pytest.raises(Refused, match="embedding_mismatch"):
            opened.search("lobug", "bees", "hybrid", 5)
    finally:
        opened.close()
    assert built["embedder"] == 2  # each refused call built it, and closed it
