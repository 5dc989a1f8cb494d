"""A purge reaches every copy, and finishes (issue 42, item 3; `memory/purges.py`), on both
engines: a fact purge, a span forget and "forget everything about me" leave no byte of the
secret in what the database holds (a SQLite file with its -wal and -shm; every live row of
PostgreSQL), however many copies the memory made of it (messages quoting it, the base memory
and each of its versions, episodes, topics, dreams, the audit log); a purge recorded and cut
short (a crash) is finished by the next process's background work."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from lobug.config import MemoryConfig
from lobug.memory.curation import Curation
from lobug.memory.manager import MemoryManager
from lobug.memory.purges import secret_of, without
from lobug.memory.work_queue import MemoryWork
from lobug.store.engines import open_database
from lobug.store.errors import StorageUnavailable
from lobug.store.household import PRIVATE, Speaker
from lobug.store.models import NewFact, TopicDraft, TopicMember
from lobug.store.protocol import Store
from lobug.turn.spoken_curation import purge_person
from tests.engines import stored_bytes
from tests.fakes import FakeChat, FakeEmbedder

pytestmark = pytest.mark.both_engines

AGENT = "home"
SECRET = "zq4417vx"  # letters too: "4417" may be in a time or a vector as text
OTHER = "Jordan likes green tea."


def opened(url: str) -> Store:
    store = open_database(url)
    embedder = FakeEmbedder()
    store.bind_embedding(embedder.model, embedder.dimension)
    return store


@pytest.fixture
def store(database_url: str) -> Iterator[Store]:
    store = opened(database_url)
    yield store
    store.close()


def curation(store: Store, warmed: list[str] | None = None) -> Curation:
    rewarm = warmed.append if warmed is not None else lambda agent: None
    return Curation(store, FakeEmbedder(), MemoryConfig(), rewarm)


def copies(url: str) -> int:
    return stored_bytes(url).count(SECRET.encode())


def household_with_a_secret(store: Store) -> tuple[int, int]:
    """Jordan told his locker code; the memory made copies of it everywhere it makes copies:
    the fact, the reply that acknowledged it, a later reply that quoted it, the base memory
    (two versions, so its history and the audit log hold it too), an episode, a topic, a
    dream's diary. Returns Jordan's id and the fact's."""
    store.ensure_agent(AGENT)
    jordan = store.add_person(AGENT, "Jordan", actor="test").id
    store.add_person(AGENT, "Sam", actor="test")
    me = Speaker(jordan, "voice", 0.9)
    said = store.append_message(AGENT, "kitchen", "user", f"My locker code is {SECRET}", speaker=me)
    reply = store.append_reply_for_memory_work(
        AGENT, "kitchen", f"Got it, your locker code is {SECRET}.", said
    )
    asked = store.append_message(AGENT, "kitchen", "user", "What's my locker code?", speaker=me)
    store.append_reply_for_memory_work(AGENT, "kitchen", f"It's {SECRET}.", asked)
    tea = store.append_message(AGENT, "kitchen", "user", "I like green tea", speaker=me)
    embedder = FakeEmbedder()
    fact = store.add_fact(
        AGENT,
        NewFact(
            f"Jordan's locker code is {SECRET}",
            owner_person_id=jordan,
            scope=PRIVATE,
            source_message_ids=(said.id,),
        ),
        embedder.embed("locker code"),
    )
    store.write_base_memory(AGENT, f"Jordan's locker code is {SECRET}.", actor="test")
    store.write_base_memory(AGENT, f"{OTHER} His locker code is {SECRET}.", actor="test")
    episode = store.add_summary(
        AGENT, f"Jordan gave his locker code, {SECRET}.", [said, reply], vector=None
    )
    store.replace_topics(
        AGENT,
        [
            TopicDraft(
                "Lockers",
                f"The locker code is {SECRET}.",
                (),
                (),
                (TopicMember("episode", episode.id, time.time()),),
                "model",
            )
        ],
    )
    # A dream that rewrote the base memory keeps the one before and its diary.
    store.apply_dream(
        AGENT,
        [],
        f"{OTHER} His locker code is {SECRET}.",
        f"Kept the locker code {SECRET}. Nothing else changed.",
        started_at=time.time(),
    )
    assert tea.id
    return jordan, fact.id


def test_a_fact_purge_erases_every_copy_of_its_text(store: Store, database_url: str) -> None:
    _, fact = household_with_a_secret(store)
    assert copies(database_url) > 5
    warmed: list[str] = []

    curation(store, warmed).forget_fact(AGENT, fact, purge=True, actor="admin")

    assert copies(database_url) == 0
    assert store.get_fact(fact).content == "" and store.get_fact(fact).purged_at
    # The derived document is rewritten without the secret, the rest of it kept.
    assert store.base_memory(AGENT) == OTHER
    assert {m.content for m in store.agent_messages(AGENT, 10)} == {
        "What's my locker code?",
        "I like green tea",
    }
    assert warmed == [AGENT]  # the devices' working memories are refilled
    entry = store.audit_entries(AGENT, 1)[0]
    assert (entry.action, entry.target, entry.target_ids) == ("purge", "facts", (fact,))
    assert entry.detail is not None and entry.detail["messages"] == 3
    assert store.unfinished_purges() == []


def test_forget_me_erases_every_copy_and_only_theirs(store: Store, database_url: str) -> None:
    jordan, _ = household_with_a_secret(store)
    sam = store.find_person(AGENT, "Sam")
    assert sam is not None
    store.append_message(
        AGENT, "office", "user", "My dentist is Dr Alvarez", speaker=Speaker(sam.id, "voice", 1)
    )

    counts = curation(store).forget_person(AGENT, jordan, actor="voice")

    assert copies(database_url) == 0
    assert counts["messages"] == 5 and counts["facts"] == 1
    assert [m.content for m in store.agent_messages(AGENT, 10)] == ["My dentist is Dr Alvarez"]
    assert b"Alvarez" in stored_bytes(database_url)


def test_a_span_forget_erases_what_was_learned_and_its_copies(
    store: Store, database_url: str
) -> None:
    household_with_a_secret(store)
    ids = store.span_message_ids(AGENT, "kitchen", None, None)

    forgotten = curation(store).forget_span(
        AGENT, device="kitchen", since=None, until=None, actor="voice"
    )

    assert set(forgotten.messages) == set(ids) and len(forgotten.facts) == 1
    assert copies(database_url) == 0
    assert store.base_memory(AGENT) == OTHER


def test_a_purge_cut_short_is_finished_by_the_next_process(store: Store, database_url: str) -> None:
    jordan, _ = household_with_a_secret(store)
    # The job is recorded, nothing is erased yet: a crash here (or at any later step).
    job = curation(store).purges.begin_person(AGENT, jordan, actor="voice")
    assert [j.id for j in store.unfinished_purges()] == [job.id]
    assert copies(database_url) > 5
    store.close()

    again = opened(database_url)
    try:
        warmed: list[str] = []
        memory = MemoryManager(again, FakeChat(), FakeEmbedder(), MemoryConfig())
        work = MemoryWork(again, memory, purges=curation(again, warmed).purges)
        work.resume()
        assert again.unfinished_purges() == []
        assert copies(database_url) == 0
        assert warmed == [AGENT]
        done = again.purge_job(job.id)
        assert done.finished_at is not None and done.counts and done.counts["facts"] == 1
        work.close()
    finally:
        again.close()


class FailingOnce:
    """The store, but its first `purge_facts_and_derived` fails (a crash after the messages
    went, before the facts and the texts made from them did)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.failed = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    def purge_facts_and_derived(self, *args: Any, **kwargs: Any) -> Any:
        if not self.failed:
            self.failed = True
            raise StorageUnavailable("the disk went away")
        return self.store.purge_facts_and_derived(*args, **kwargs)


def test_a_purge_failing_midway_is_finished_later(store: Store, database_url: str) -> None:
    _, fact = household_with_a_secret(store)
    failing = FailingOnce(store)
    purges = Curation(failing, FakeEmbedder(), MemoryConfig()).purges  # type: ignore[arg-type]
    with pytest.raises(StorageUnavailable):
        purges.run(purges.begin_facts(AGENT, fact, actor="admin"))
    # The messages went; the fact's text stays until its copies are found and erased.
    assert "I like green tea" in {m.content for m in store.agent_messages(AGENT, 10)}
    assert len(store.agent_messages(AGENT, 10)) == 2
    assert SECRET in store.get_fact(fact).content and SECRET in store.base_memory(AGENT)
    (job,) = store.unfinished_purges()

    assert purges.resume() == 1
    assert copies(database_url) == 0 and store.base_memory(AGENT) == OTHER
    assert purges.run(job) is None  # finished: nothing runs twice


def test_forget_me_says_what_it_erased_once_it_finished(store: Store) -> None:
    jordan, _ = household_with_a_secret(store)
    said = purge_person(curation(store), AGENT, jordan)
    assert said == "Done. I erased what I knew about you: 1 note and 5 messages."
    assert store.unfinished_purges() == []
    again = purge_person(curation(store), AGENT, jordan)
    assert again == "Done. I had nothing of yours left to forget."


def test_a_derived_text_loses_the_whole_sentence_that_holds_a_secret_and_no_more() -> None:
    """Sentences as the language layer splits them (`text.sentences_of`): a title's full stop
    ends none, so no piece of the secret's sentence is left behind ("Dr." before)."""
    secret = secret_of(f"My locker code is {SECRET}.", names=[])
    text = f"Dr. Okafor said the locker code is {SECRET}. Jordan likes green tea!\nThat is all."
    assert without(text, [secret]) == "Jordan likes green tea!\nThat is all."
