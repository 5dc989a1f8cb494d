"""`lobug people` on the local file and through a server (`--url`): the same commands, the
same answers, the same rules (the name rule, the household's people, the purge)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner, Result

from lobug.app import create_app
from lobug.backends import Backends
from lobug.cli import cli
from lobug.config import Settings
from lobug.store.household import PRIVATE
from lobug.store.models import NewFact
from lobug.store.sqlite.engine import SQLiteStore
from tests.cli.test_learning import local_file  # noqa: F401  (the fixture)
from tests.fakes import FakeChat, FakeEmbedder
from tests.live import LiveServer


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def people_commands(prefix: list[str], store: SQLiteStore, embedder: FakeEmbedder) -> None:
    """The same script on either access: add, list, a private fact moved, forget, delete."""
    added = json.loads(run("people", "add", "Jordan", "--device", "kitchen", *prefix).output)
    assert (added["name"], added["devices"]) == ("Jordan", ["kitchen"])
    refused = run("people", "add", "R2D2", *prefix)
    assert refused.exit_code != 0 and "letters" in refused.output
    taken = run("people", "add", "Sam", "--device", "kitchen", *prefix)
    assert taken.exit_code != 0 and "device_taken" in taken.output and "--move" in taken.output
    sam = json.loads(run("people", "add", "Sam", "--device", "hall", *prefix).output)
    kept = run("people", "device", "hall", str(added["id"]), *prefix)
    assert kept.exit_code != 0 and "Sam's" in kept.output
    run("people", "device", "hall", str(added["id"]), "--move", *prefix)
    run("people", "delete", sam["id"], "--yes", *prefix)
    listed = json.loads(run("people", *prefix).output)  # `lobug people` lists
    assert listed == json.loads(run("people", "list", *prefix).output)
    assert [p["name"] for p in listed] == ["Jordan"]
    jordan = int(added["id"])
    text = "Jordan's locker code is 4417"
    fact = store.add_fact(
        "lobug", NewFact(text, owner_person_id=jordan, scope=PRIVATE), embedder.embed(text)
    )
    facts = json.loads(run("people", "facts", str(jordan), *prefix).output)
    assert [(f["content"], f["scope"]) for f in facts] == [(text, "private")]
    moved = json.loads(
        run("people", "move", str(fact.id), "household", "--shareable", *prefix).output
    )
    assert (moved["scope"], moved["shareable"]) == ("household", True)
    cleared = json.loads(run("people", "device", "kitchen", "none", *prefix).output)
    assert cleared[0]["devices"] == ["hall"]
    forgot = json.loads(run("people", "forget", str(jordan), "--yes", *prefix).output)
    assert (forgot["deleted"], forgot["facts"]) == (False, 0)  # the fact is the household's now
    deleted = json.loads(run("people", "delete", str(jordan), "--yes", *prefix).output)
    assert deleted["deleted"] is True
    assert text in [f.content for f in store.facts("lobug")]
    gone = run("people", "facts", str(jordan), *prefix)
    assert gone.exit_code != 0 and f"no person {jordan}" in gone.output


@pytest.mark.usefixtures("local_file")
def test_people_on_the_local_file(settings: Settings, fake_embedder: FakeEmbedder) -> None:
    store = SQLiteStore(settings.db_path)
    store.bind_embedding(fake_embedder.model, fake_embedder.dimension)
    try:
        store.ensure_agent("lobug")
        people_commands(["--json"], store, fake_embedder)
    finally:
        store.close()


def test_people_through_a_server(settings: Settings, fake_embedder: FakeEmbedder) -> None:
    app = create_app(settings, Backends(FakeChat(), fake_embedder))
    server = LiveServer(app)
    try:
        store: SQLiteStore = app.state.services.store
        store.ensure_agent("lobug")
        people_commands(["--json", "--url", server.url], store, fake_embedder)
    finally:
        server.stop()


@pytest.mark.parametrize("given", ["0", "x"])
def test_a_device_needs_a_person_or_none(given: str) -> None:
    assert run("people", "device", "kitchen", given).exit_code != 0
