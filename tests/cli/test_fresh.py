"""The command line on a fresh database (issue 28, item 7): the default agent exists on first
use, another agent's refusal names `lobug agents create`, `lobug agents` lists, search is
ordered by its score, and a topic rebuild the server takes long over is waited for."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from lobug.app import create_app
from lobug.backends import Backends
from lobug.backends.base import ChatMessage, JsonSchema
from lobug.cli import access, cli, rest
from lobug.cli.output import Refused
from lobug.cli.rest import MemoryAccess, local_access
from lobug.config import Settings
from lobug.store.models import FactQuery
from lobug.store.sqlite.engine import SQLiteStore
from tests.cli.run import lobug, ok
from tests.e2e.fake_server import start
from tests.fakes import FakeChat, FakeEmbedder
from tests.live import LiveServer

QUERY = "who visits on sunday"
BEES = ["The user keeps bees", "The user's bees make honey"]


def on_the_file(settings: Settings, embedder: FakeEmbedder) -> MemoryAccess:
    return local_access(settings, Backends(FakeChat(), embedder))


@pytest.fixture
def fresh_file(
    settings: Settings, fake_embedder: FakeEmbedder, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Settings]:
    """`lobug` in this process on a fresh database file (the fake embedder)."""

    @contextmanager
    def fake_opened(url: str | None, token: str | None) -> Iterator[MemoryAccess]:
        opened = on_the_file(settings, fake_embedder)
        try:
            yield opened
        finally:
            opened.close()

    monkeypatch.setattr(access, "opened", fake_opened)
    yield settings


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_on_a_fresh_file_the_default_agent_exists_and_agents_lists(fresh_file: Settings) -> None:
    listed = run("facts", "list")
    assert (listed.exit_code, listed.output.split()[:3]) == (0, ["id", "type", "content"])
    assert [a["name"] for a in json.loads(run("agents", "--json").output)] == ["lobug"]
    table = run("agents").output.splitlines()
    assert [line.split()[0] for line in table] == ["agent", "lobug"]
    assert run("agents", "-h").output.startswith("Usage: cli agents")
    other = run("facts", "list", "--agent", "guest")
    assert other.exit_code == 1
    assert "create it with `lobug agents create guest`" in other.stderr


def test_a_server_names_the_command_that_creates_an_agent(
    settings: Settings, backends: Backends
) -> None:
    server = LiveServer(create_app(settings, backends))
    remote_access = MemoryAccess(server.url, None)
    try:
        with pytest.raises(Refused, match="create it with `lobug agents create NAME`"):
            remote_access.facts("guest", FactQuery())
    finally:
        remote_access.close()
        server.stop()


def test_search_lists_facts_and_messages_highest_score_first(
    settings: Settings, fake_embedder: FakeEmbedder
) -> None:
    """A message said in the query's very words (cosine 1) comes before a fact that shares
    only some of them; the fact used to be listed first whatever its score (0.398 above
    0.623)."""
    store = SQLiteStore(settings.db_path)
    store.bind_embedding(fake_embedder.model, fake_embedder.dimension)
    store.append_embedded_message("lobug", "api", "user", QUERY, fake_embedder.embed(QUERY))
    store.close()
    local = on_the_file(settings, fake_embedder)
    try:
        local.add_fact("lobug", "The user's sister Ana visits on Sunday", "identity")
        hits = local.search("lobug", QUERY, "hybrid", 5)
    finally:
        local.close()
    assert {h["kind"] for h in hits} == {"fact", "message"}
    scores = [h["score"] for h in hits]
    assert scores == sorted(scores, reverse=True)
    assert hits[0]["kind"] == "message"


def slow_topic_names(delay_s: float) -> FakeChat:
    def name_slowly(messages: Sequence[ChatMessage], schema: JsonSchema | None) -> str:
        time.sleep(delay_s)
        return '{"name": "Bees", "summary": "The user keeps bees."}'

    return FakeChat(responder=name_slowly)


def test_a_rebuild_the_server_takes_long_over_is_waited_for(
    settings: Settings, fake_embedder: FakeEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every other call gives up after TIMEOUT_S (60 s; 3 s here, as four test workers on two
    cores delayed a health check past 1 s); a topic rebuild whose naming takes 4 s is waited
    for."""
    monkeypatch.setattr(rest, "TIMEOUT_S", 3.0)
    chat = slow_topic_names(4.0)
    server = LiveServer(create_app(settings, Backends(chat, fake_embedder)))
    remote_access = MemoryAccess(server.url, None)
    try:
        remote_access.create_agent("lobug")
        for text in BEES:
            remote_access.add_fact("lobug", text, "trait")
        rebuilt = remote_access.rebuild_topics("lobug")
        assert [(t["name"], len(t["fact_ids"])) for t in rebuilt] == [("Bees", 2)]
        assert chat.requests, "the topic was named by the (slow) model"
    finally:
        remote_access.close()
        server.stop()


@pytest.mark.e2e
@pytest.mark.models
def test_the_commands_on_a_fresh_file_and_a_fresh_server_process(tmp_path: Path) -> None:
    """`lobug` as a person runs it: on a fresh file (the bundled embedding model) and with
    --url on a fresh server process (fake models)."""
    fresh = {"LOBUG_DB_PATH": str(tmp_path / "fresh.db")}
    assert ok("facts", "list", env=fresh).out.split() == [
        *("id", "type", "content", "due", "pinned", "score", "created")
    ]
    listed = ok("agents", env=fresh)
    assert [line.split()[0] for line in listed.out.splitlines()] == ["agent", "lobug"]
    assert [a["name"] for a in ok("agents", "--json", env=fresh).json()] == ["lobug"]
    other = lobug("facts", "list", "--agent", "guest", env=fresh)
    assert other.code == 1 and "lobug agents create guest" in other.err
    assert str(tmp_path / "fresh.db") in other.err
    tokens = {**fresh, "LOBUG_ADMIN_TOKENS": "a" * 40, "LOBUG_DEVICE_TOKENS": "d" * 40}
    ok("facts", "add", BEES[0], env=tokens)  # the file's holder needs no token
    assert ok("audit", "--json", env=fresh).json()["entries"][0]["actor"] == "cli"

    server = start("serve", tmp_path / "server.log", {"LOBUG_DB_PATH": str(tmp_path / "s.db")})
    try:
        remote_env = {"LOBUG_URL": server.url, "LOBUG_DB_PATH": str(tmp_path / "unused.db")}
        for text in BEES:
            ok("facts", "add", text, env=remote_env)
        assert [a["name"] for a in ok("agents", "--json", env=remote_env).json()] == ["lobug"]
        refused = lobug("facts", "list", "--agent", "guest", env=remote_env)
        assert refused.code == 1 and "lobug agents create guest" in refused.err
        topics = ok("topics", "--rebuild", "--json", env=remote_env).json()
        assert len(topics) == 1
    finally:
        server.stop()
