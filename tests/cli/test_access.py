"""`MemoryAccess` answers alike on the local file (`local_access`: the memory API app run in
this process) and on a server (over real HTTP), fake models in both, in this process."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from lobug.app import create_app
from lobug.backends import Backends
from lobug.cli.output import Refused
from lobug.cli.rest import MemoryAccess, local_access
from lobug.config import Settings
from lobug.store.errors import StoreError
from lobug.store.models import FactFlags, FactQuery
from lobug.store.sqlite.engine import SQLiteStore
from tests.fakes import FakeEmbedder
from tests.live import LiveServer


def seed(settings: Settings, embedder: FakeEmbedder) -> None:
    store = SQLiteStore(settings.db_path)
    store.bind_embedding(embedder.model, embedder.dimension)
    store.append_message("lobug", "kitchen", "user", "My sister Ana visits on Sunday")
    store.append_message("lobug", "hall", "user", "Turn on the hall light")
    store.close()


@pytest.fixture(params=["local", "remote"])
def access(
    request: pytest.FixtureRequest, settings: Settings, backends: Backends
) -> Iterator[MemoryAccess]:
    embedder = backends.embedder
    assert isinstance(embedder, FakeEmbedder)
    seed(settings, embedder)
    if request.param == "local":
        local = local_access(settings, backends)
        yield local
        local.close()
        return
    server = LiveServer(create_app(settings, backends))
    remote = MemoryAccess(server.url, None)
    yield remote
    remote.close()
    server.stop()


def test_facts_blocks_base_memory_and_audit(access: MemoryAccess) -> None:
    assert access.default_agent == "lobug"
    added = access.add_fact("lobug", "The user's sister is Ana", "identity")
    access.flag_fact("lobug", int(added["id"]), FactFlags(pinned=True, user_score=6))
    flagged = access.flag_fact("lobug", int(added["id"]), FactFlags(clear_score=True))
    assert (flagged["pinned"], flagged["user_score"]) == (True, None)
    corrected = access.correct_fact("lobug", int(added["id"]), "The user's sister is Anna")
    assert [v["content"] for v in corrected["versions"]][-1] == "The user's sister is Anna"
    shown = access.fact("lobug", int(added["id"]))
    assert shown["superseded_by"] == corrected["id"]
    page = access.facts("lobug", FactQuery(fact_type="identity", include_history=True))
    assert (page["total"], page["limit"], page["offset"]) == (2, 100, 0)
    forgotten = access.forget_fact("lobug", int(corrected["id"]), False)
    assert forgotten["forgotten_at"] and forgotten["content"] == "The user's sister is Anna"

    access.set_block("lobug", "human", "Alex")
    assert access.set_block("lobug", "human", "Alex B.")["value"] == "Alex B."
    assert [b["label"] for b in access.blocks("lobug")] == ["human"]
    written = access.write_base_memory("lobug", "Has a sister.")
    assert (written["content"], written["stale"]) == ("Has a sister.", False)
    assert access.base_memory("lobug")["content"] == "Has a sister."
    audit = access.audit("lobug", 3)
    assert audit["total"] == 8 and [e["action"] for e in audit["entries"]] == [
        "write",
        "update",
        "create",
    ]


def test_a_block_is_deleted_or_purged_with_its_texts(access: MemoryAccess) -> None:
    access.set_block("lobug", "kept", "Plain words")
    access.set_block("lobug", "secret", "Quaxilotl")
    assert access.delete_block("lobug", "kept", False)["purged"] is False
    assert access.delete_block("lobug", "secret", True) == {
        "agent": "lobug",
        "label": "secret",
        "purged": True,
    }
    assert access.blocks("lobug") == []
    entries = access.audit("lobug", 10)["entries"]
    assert [e["action"] for e in entries] == ["purge", "delete", "create", "create"]
    assert "Quaxilotl" not in json.dumps(entries) and "Plain words" in json.dumps(entries)
    with pytest.raises((Refused, StoreError), match="no block"):
        access.delete_block("lobug", "secret", True)


def test_messages_search_agents_stats_and_transfer(access: MemoryAccess) -> None:
    assert [m["device_id"] for m in access.messages("lobug", 10)] == ["hall", "kitchen"]
    hits = access.search("lobug", "sister Ana", "keyword", 5)
    assert hits[0]["kind"] == "message" and "sister" in hits[0]["text"]
    assert access.create_agent("guest")["name"] == "guest"
    assert {a["name"] for a in access.agents()} == {"lobug", "guest"}
    assert access.stats()["embedding_model"] == "fake-embed"

    document = json.loads(b"".join(access.export(None)))
    assert [a["name"] for a in document["agents"]] == ["guest", "lobug"]
    copied = access.import_document(document, None, True)
    assert [i["agent"] for i in copied["imported"]] == ["guest", "lobug"]
    assert all(set(i["added"].values()) == {0} for i in copied["imported"])

    forgotten = access.forget_span("lobug", "kitchen", None, None)
    assert forgotten["messages"] == 1
    assert access.delete_agent("guest")["deleted"]["messages"] == 0


def test_dream_dry_run_list_and_undo(access: MemoryAccess) -> None:
    access.add_fact("lobug", "The user works at NASA", None)
    access.add_fact("lobug", "The user works at NASA in Houston", None)
    preview = access.dream("lobug", True)
    assert (preview["id"], preview["dry_run"]) == (None, True)
    assert [c["action"] for c in preview["changes"]] == ["merge"]
    assert access.facts("lobug", FactQuery())["total"] == 2
    assert access.dreams("lobug", 5) == []
    with pytest.raises((Refused, StoreError), match="no dream 7"):
        access.undo_dream("lobug", 7)


def test_topics_and_the_global_memory(access: MemoryAccess) -> None:
    fact = access.add_fact("lobug", "The user keeps bees", None)
    access.flag_fact("lobug", int(fact["id"]), FactFlags(pinned=True))
    assert access.topics("lobug") == []
    found = access.global_memory("lobug")
    assert [f["content"] for f in found["pinned"]] == ["The user keeps bees"]
    assert (found["agent"], found["active_topics"]) == ("lobug", [])


def test_refusals(access: MemoryAccess) -> None:
    with pytest.raises((Refused, StoreError)):
        access.fact("lobug", 999)
    with pytest.raises(Refused):
        access.facts("nobody", FactQuery())
    with pytest.raises(Refused):
        list(access.export("nobody"))
    with pytest.raises(Refused, match="An agent name is"):
        access.create_agent("a/b")


def test_an_unreachable_server_is_refused() -> None:
    with pytest.raises(Refused, match="cannot reach"):
        MemoryAccess("http://127.0.0.1:9", None)
