"""Export and import of agents (memory/transfer.py over store/sql/export_rows.py and
importing.py, on both engines), the JSON Schema, Markdown artifacts, SQLite's online backup
and restore."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from lobug.memory import transfer
from lobug.memory.artifacts import write_markdown
from lobug.memory.export_schema import json_schema
from lobug.store.engines import open_database
from lobug.store.errors import DatabaseInUse, ImportConflict, StoreError
from lobug.store.household import PRIVATE, Speaker
from lobug.store.models import CLI, FactFlags, NewFact, TopicDraft, TopicMember
from lobug.store.protocol import Store
from lobug.store.sqlite.backup import restore_database
from lobug.store.sqlite.engine import SQLiteStore
from tests.engines import Databases
from tests.fakes import FakeEmbedder

SCHEMA_FILE = Path(__file__).parents[2] / "docs" / "export.schema.json"
# Fields holding ids of the exporting database, by kind of record.
ID_FIELDS = {
    "people": ("id",),
    "messages": ("id", "person_id"),
    "summaries": ("id", "source_from_id", "source_to_id"),
    "facts": ("id", "source_message_ids", "superseded_by", "owner_person_id"),
    "base_memory_versions": ("id",),
    "blocks": ("id",),
    "audit": ("id", "target_ids"),
    "topics": ("id", "fact_ids", "episode_ids"),
    "reminders": ("id", "owner_person_id"),
}


def open_store(path: Path, embedder: FakeEmbedder) -> SQLiteStore:
    store = SQLiteStore(path)
    store.bind_embedding(embedder.model, embedder.dimension)
    return store


def open_engine(
    path: Path, engine: str, request: pytest.FixtureRequest, embedder: FakeEmbedder
) -> Store:
    """A store bound to the embedder: a SQLite file at `path`, or a fresh PostgreSQL
    database."""
    if engine == "sqlite":
        url = f"sqlite:///{path}"
    else:
        databases: Databases = request.getfixturevalue("postgres")
        url = databases.fresh()
    store = open_database(url)
    store.bind_embedding(embedder.model, embedder.dimension)
    return store


def remember_things(store: Store, embedder: FakeEmbedder, agent: str = "lobug") -> None:
    """Some of everything: a log from a device and the memory API, a summary, facts with a
    correction, a pin and a purged one, base memory, a block with history, reminders waiting,
    rung and cancelled."""
    store.ensure_agent(agent, {"room": "kitchen"})
    said = store.append_message(agent, "kitchen", "user", "My sister is called Ana")
    answered = store.append_message(agent, "kitchen", "assistant", "Nice name | really")
    store.append_embedded_message(agent, "api", "user", "I drink green tea", embedder.embed("tea"))
    episode = store.add_summary(agent, "They talked about Ana", [said, answered])
    first = store.add_fact(
        agent,
        NewFact("The user's sister is Ana", "identity", source_message_ids=(said.id,)),
        embedder.embed("sister Ana"),
    )
    corrected = store.correct_fact(
        agent,
        first.id,
        NewFact("The user's sister is Anna", "identity"),
        embedder.embed("Anna"),
        actor=CLI,
    )
    store.set_fact_flags(agent, corrected.id, FactFlags(pinned=True, user_score=9), actor=CLI)
    gone = store.add_fact(agent, NewFact("The user hates rain", "preference"), embedder.embed("x"))
    store.forget_fact(agent, gone.id, actor=CLI, purge=True)
    store.write_base_memory(agent, "The user has a sister.\nLikes tea.", actor=CLI)
    store.add_reminder(agent, "kitchen", "call Anna", 2_000_000_000.0, actor=CLI)
    rung = store.add_reminder(agent, "kitchen", "water the plants", 100.0, actor=CLI)
    store.claim_due_reminders(agent, "hall", 150.0, (None,), 60)
    store.mark_reminders_said([rung.id], "hall", 150.0)
    dropped = store.add_reminder(agent, "kitchen", "buy milk", 2_000_000_100.0, actor=CLI)
    store.cancel_reminders(agent, [dropped.id, rung.id], actor=CLI)
    store.create_block(agent, "human", "Alex", description="who")
    store.update_block(agent, "human", "Alex B.", changed_by=CLI)
    members = (TopicMember("fact", corrected.id, 5.0), TopicMember("episode", episode.id, 6.0))
    store.replace_topics(
        agent,
        [
            TopicDraft(
                "Ana", "The user's sister.", ("Where does Ana live?",), (), members, "model"
            ),
            TopicDraft("Weather", "Rain.", (), ("Buy an umbrella",), (), "extractive"),
        ],
    )


def exported(store: Store, embedder: FakeEmbedder) -> dict[str, Any]:
    agents = [counted.agent for counted in store.agents_with_counts()]
    text = "".join(transfer.export_chunks(store, agents, embedder.model, 1.0))
    document: dict[str, Any] = json.loads(text)
    return document


def without_ids(document: dict[str, Any]) -> dict[str, Any]:
    """The document with every id and reference to one replaced by its rank among the ids
    of its kind, and without the export time: what must survive a round trip."""
    copy = json.loads(json.dumps(document))
    copy.pop("exported_at")
    for agent in copy["agents"]:
        ranks = {kind: {r["id"]: n for n, r in enumerate(agent[kind])} for kind in ID_FIELDS}
        for kind, fields in ID_FIELDS.items():
            for record in agent[kind]:
                for name in fields:
                    record[name] = renumbered(kind, name, record, record[name], ranks)
    return copy


def renumbered(kind: str, name: str, record: Any, value: Any, ranks: Any) -> Any:
    target = {
        "source_from_id": "messages",
        "source_to_id": "messages",
        "source_message_ids": "messages",
        "fact_ids": "facts",
        "episode_ids": "summaries",
        "person_id": "people",
        "owner_person_id": "people",
        "target_ids": {
            "fact": "facts",
            "messages": "messages",
            "block": "blocks",
            "reminder": "reminders",
        }.get(record.get("target", ""), "base_memory_versions"),
    }.get(name, kind)
    if isinstance(value, list):
        return [ranks[target].get(v) for v in value]
    return None if value is None else ranks[target].get(value)


@pytest.fixture
def embedder() -> FakeEmbedder:
    return FakeEmbedder()


@pytest.fixture
def source(
    tmp_path: Path, embedder: FakeEmbedder, engine: str, request: pytest.FixtureRequest
) -> Iterator[Store]:
    store = open_engine(tmp_path / "source.db", engine, request, embedder)
    remember_things(store, embedder)
    yield store
    store.close()


@pytest.fixture
def target(
    tmp_path: Path, embedder: FakeEmbedder, engine: str, request: pytest.FixtureRequest
) -> Iterator[Store]:
    store = open_engine(tmp_path / "target.db", engine, request, embedder)
    # Ids in the new database differ from the old ones.
    store.append_message("other", "d", "user", "something else entirely")
    yield store
    store.close()


def import_document(store: Store, embedder: FakeEmbedder, document: Any, **kw: Any) -> Any:
    agents = transfer.renamed(transfer.read_document(document), kw.pop("as_agent", None))
    return transfer.import_agents(store, embedder, agents, actor=CLI, **kw)


@pytest.mark.both_engines
def test_round_trip_keeps_everything_but_ids_and_a_second_import_adds_nothing(
    source: Store, target: Store, embedder: FakeEmbedder
) -> None:
    document = exported(source, embedder)
    jsonschema.validate(document, json.loads(SCHEMA_FILE.read_text()))

    first = import_document(target, embedder, document, merge=False)
    again = import_document(target, embedder, document, merge=False)

    assert first[0].added["facts"] == 3 and first[0].added["messages"] == 3
    assert first[0].added["reminders"] == 3  # waiting, rung and cancelled alike
    assert again[0].total == 0
    back = exported(target, embedder)
    lobug_back = next(a for a in back["agents"] if a["name"] == "lobug")
    assert lobug_back["audit"][-1]["action"] == "import"  # the import itself is audited
    lobug_back["audit"].pop()
    back["agents"] = [lobug_back]
    assert without_ids(back) == without_ids(document)
    # An episode's span of time is that of its messages (not in the document: recomputed).
    assert [(s.started_at, s.ended_at) for s in target.summaries("lobug")] == [
        (s.started_at, s.ended_at) for s in source.summaries("lobug")
    ]
    # Vectors were recomputed: the current facts and the API message are found by meaning.
    assert [h.fact.content for h in target.search_facts("lobug", embedder.embed("Anna"), 1)] == [
        "The user's sister is Anna"
    ]
    assert target.search_messages("lobug", embedder.embed("tea"), 1)[0].message.device_id == "api"


def test_the_schema_file_is_the_generated_schema() -> None:
    assert json.loads(SCHEMA_FILE.read_text()) == json_schema()


@pytest.mark.parametrize(
    ("change", "path"),
    [
        (lambda d: d.update(version=6), "$.version"),
        (lambda d: d.pop("agents"), "$.agents"),
        (lambda d: d["agents"][0].update(name="a/b"), "$.agents[0].name"),
        (lambda d: d["agents"][0]["facts"][1].update(type="gossip"), "$.agents[0].facts[1].type"),
        (lambda d: d["agents"][0]["messages"][0].pop("content"), "$.agents[0].messages[0].content"),
        (
            lambda d: d["agents"][0]["facts"][1].update(user_score=11),
            "$.agents[0].facts[1].user_score",
        ),
        (
            lambda d: d["agents"][0]["blocks"][0]["history"][0].update(changed_at="noon"),
            "$.agents[0].blocks[0].history[0].changed_at",
        ),
        (
            lambda d: d["agents"][0]["topics"][0].update(open_questions=["ok", 3]),
            "$.agents[0].topics[0].open_questions",
        ),
    ],
)
@pytest.mark.both_engines
def test_a_bad_document_names_its_json_path_and_changes_nothing(
    source: Store, target: Store, embedder: FakeEmbedder, change: Any, path: str
) -> None:
    document = exported(source, embedder)
    change(document)
    before = exported(target, embedder)

    with pytest.raises(transfer.InvalidExport) as raised:
        import_document(target, embedder, document, merge=False)

    assert raised.value.path == path and path in str(raised.value)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(document, json_schema())
    assert without_ids(exported(target, embedder)) == without_ids(before)


@pytest.mark.both_engines
def test_a_version_1_document_is_read_with_its_facts_upgraded(
    source: Store, target: Store, embedder: FakeEmbedder
) -> None:
    document = exported(source, embedder)
    document["version"] = 1
    facts = document["agents"][0]["facts"]
    for fact, (old_type, span) in zip(
        facts[:2], [("personal", "last year"), ("knowledge", None)], strict=True
    ):
        fact.update(type=old_type, time_span=span)
    for fact in facts:
        del fact["due_at"]

    import_document(target, embedder, document, merge=False)

    back = exported(target, embedder)["agents"]
    upgraded = next(a for a in back if a["name"] == "lobug")["facts"]
    assert [(f["type"], f["time_span"], f["due_at"]) for f in upgraded[:2]] == [
        ("identity", None, None),
        ("trait", None, None),
    ]


@pytest.mark.both_engines
def test_a_version_2_document_has_no_topics_and_an_agent_keeps_its_own(
    source: Store, target: Store, embedder: FakeEmbedder
) -> None:
    document = exported(source, embedder)
    topics = document["agents"][0].pop("topics")
    document["version"] = 2
    import_document(target, embedder, document, merge=False)
    assert target.topics("lobug") == []

    document["version"] = 3
    document["agents"][0]["topics"] = topics
    added = import_document(target, embedder, document, merge=True)
    assert added[0].added["topics"] == 2 and added[0].total == 2
    (ana, _) = target.topics("lobug")
    held = {f.content: f.id for f in target.facts("lobug")}
    assert ana.member_ids("fact") == (held["The user's sister is Anna"],)
    member = next(m for m in ana.members if m.kind == "fact")
    assert member.at == target.facts_by_ids([member.id])[member.id].created_at

    renamed = document["agents"][0]["topics"]
    renamed[0]["name"] = "Sister"
    assert import_document(target, embedder, document, merge=True)[0].total == 0


def test_numbers_json_cannot_hold_are_refused(source: Store, embedder: FakeEmbedder) -> None:
    document = exported(source, embedder)
    document["agents"][0]["audit"][0]["at"] = float("nan")  # Python's json reads NaN

    with pytest.raises(transfer.InvalidExport, match=r"audit\[0\]\.at: must be a finite number"):
        transfer.read_document(document)


@pytest.mark.both_engines
def test_an_agent_with_other_memory_is_merged_into_only_when_asked(
    source: Store, target: Store, embedder: FakeEmbedder
) -> None:
    document = exported(source, embedder)
    target.append_message("lobug", "hall", "user", "I live in Porto")

    with pytest.raises(ImportConflict):
        import_document(target, embedder, document, merge=False)
    assert target.count_messages("lobug") == 1  # the failed import wrote nothing

    merged = import_document(target, embedder, document, merge=True)
    renamed = import_document(target, embedder, document, merge=False, as_agent="copy")

    assert merged[0].added["messages"] == 3 and target.count_messages("lobug") == 4
    assert renamed[0].agent == "copy" and target.count_messages("copy") == 3


def test_markdown_artifacts_are_byte_identical_for_the_same_database(
    source: Store, embedder: FakeEmbedder, tmp_path: Path
) -> None:
    agent = transfer.read_document(exported(source, embedder))[0]
    first = write_markdown(agent, tmp_path / "one")
    second = write_markdown(agent, tmp_path / "two")

    names = [str(p.relative_to(tmp_path / "one")) for p in first]
    assert names[:2] == ["GLOBAL_MEMORY.md", "audit.md"] and "facts/identity.md" in names
    assert [p.read_bytes() for p in first] == [p.read_bytes() for p in second]
    memory = (tmp_path / "one" / "GLOBAL_MEMORY.md").read_text()
    assert "The user's sister is Anna (#" in memory and "pinned, score 9" in memory
    day = next((tmp_path / "one" / "days").glob("*.md")).read_text()
    assert "## Device kitchen" in day and "They talked about Ana" in day
    assert "superseded by" in (tmp_path / "one" / "facts" / "identity.md").read_text()


def test_backup_under_write_load_holds_every_acknowledged_message(
    tmp_path: Path, embedder: FakeEmbedder
) -> None:
    server = open_store(tmp_path / "live.db", embedder)
    writer = open_store(tmp_path / "live.db", embedder)  # another connection, as a server's
    acknowledged: list[int] = []
    stop = threading.Event()

    def write() -> None:
        while not stop.is_set():
            acknowledged.append(writer.append_message("lobug", "d", "user", "hello " * 50).id)

    thread = threading.Thread(target=write)
    thread.start()
    try:
        while len(acknowledged) < 50:
            stop.wait(0.01)
        before = list(acknowledged)
        assert server.backup(tmp_path / "copy.db") == "ok"
    finally:
        stop.set()
        thread.join()
        writer.close()
        server.close()
    copy = open_store(tmp_path / "copy.db", embedder)
    held = {m.id for m in copy.agent_messages("lobug", 100_000)}
    copy.close()
    assert set(before) <= held and len(held) >= len(before)


def test_restore_refuses_while_the_database_is_open(
    source: Store, tmp_path: Path, embedder: FakeEmbedder
) -> None:
    source.backup(tmp_path / "copy.db")
    live = open_store(tmp_path / "live.db", embedder)

    with pytest.raises(DatabaseInUse, match="stop it"):
        restore_database(tmp_path / "copy.db", tmp_path / "live.db")
    live.close()
    restore_database(tmp_path / "copy.db", tmp_path / "live.db")

    restored = open_store(tmp_path / "live.db", embedder)
    assert restored.count_messages("lobug") == 3
    restored.close()
    (tmp_path / "junk.db").write_bytes(b"not a database at all" * 100)
    with pytest.raises(StoreError):
        restore_database(tmp_path / "junk.db", tmp_path / "live.db")


@pytest.mark.both_engines
def test_the_household_travels_and_an_older_document_is_a_guests(
    source: Store, target: Store, embedder: FakeEmbedder
) -> None:
    """Version 5: people with their devices, who said each message and whose each fact is,
    so a private fact stays private; a version-4 document (no people) imports as a guest's
    words and the household's facts, not shareable."""
    jo = source.add_person("lobug", "Jo", actor=CLI).id
    source.set_device_person("lobug", "desk", jo, actor=CLI)
    said = source.append_message(
        "lobug", "desk", "user", "My code is 4417", speaker=Speaker(jo, "voice", 0.9)
    )
    secret = NewFact("Jo's code is 4417", owner_person_id=jo, scope=PRIVATE)
    source.add_fact("lobug", secret, embedder.embed(secret.content))
    source.add_reminder("lobug", "desk", "see the doctor", 2e9, actor=CLI, owner_person_id=jo)
    document = exported(source, embedder)
    jsonschema.validate(document, json.loads(SCHEMA_FILE.read_text()))
    target.add_person("lobug", "JO", actor=CLI)  # one of the same name is the same person

    import_document(target, embedder, document, merge=True)

    [held] = target.people("lobug")
    [code] = [f for f in target.facts("lobug") if f.content == secret.content]
    assert (code.owner_person_id, code.scope, code.shareable) == (held.id, PRIVATE, False)
    [doctor] = [r for r in target.waiting_reminders("lobug") if r.what == "see the doctor"]
    assert doctor.owner_person_id == held.id  # Jo's still: never the household's
    [message] = [m for m in target.agent_messages("lobug", 20) if m.content == said.content]
    assert (message.person_id, message.speaker_source, message.speaker_confidence) == (
        held.id,
        "voice",
        0.9,
    )
    older = exported(source, embedder)
    older["version"] = 4
    agent = older["agents"][0]
    del agent["people"]
    for record in [*agent["messages"], *agent["facts"]]:
        for name in ("person_id", "speaker_source", "speaker_confidence"):
            record.pop(name, None)
        for name in ("owner_person_id", "scope", "shareable"):
            record.pop(name, None)
    for reminder in agent["reminders"]:
        reminder.pop("owner_person_id")
    [read] = transfer.read_document(older)
    assert {r["owner_person_id"] for r in read.of("reminders")} == {None}
    assert {m["speaker_source"] for m in read.of("messages")} == {"guest", "assistant"}
    assert {(f["owner_person_id"], f["scope"]) for f in read.of("facts")} == {(None, "household")}
