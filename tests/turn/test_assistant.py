"""Streaming turns hold their device themselves: the next turn of the device waits until the
streaming turn is closed, however it ends."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator

import pytest

from lobug.backends.base import ChatMessage
from lobug.config import MemoryConfig, Settings
from lobug.memory.manager import MemoryManager
from lobug.store.models import NewFact
from lobug.store.sqlite.engine import SQLiteStore
from lobug.tokens import estimate_tokens
from lobug.turn.assistant import Assistant
from lobug.turn.spoken import SpokenLimit
from tests.fakes import FakeChat, FakeEmbedder, unreachable


@pytest.fixture
def assistant(
    settings: Settings, store: SQLiteStore, fake_chat: FakeChat, fake_embedder: FakeEmbedder
) -> Assistant:
    memory = MemoryManager(store, fake_chat, fake_embedder, MemoryConfig())
    return Assistant(settings, store, memory, fake_chat, fake_embedder)


def device_is_free(assistant: Assistant, device_id: str = "desk") -> bool:
    lock = assistant.session(device_id).state().lock
    if not lock.acquire(timeout=2):
        return False
    lock.release()
    return True


def test_a_streaming_turn_holds_its_device_until_its_with_block_ends(
    assistant: Assistant, fake_chat: FakeChat
) -> None:
    fake_chat.enqueue("One. Two. Three.")
    with assistant.reply_streaming("desk", "count") as streaming:
        assert next(iter(streaming.pieces())) == "One. "
        assert not assistant.session("desk").state().lock.acquire(blocking=False)
    assert device_is_free(assistant)
    assert streaming.turn is not None and streaming.turn.response == "One."
    assert streaming.turn.exchange is not None  # queued for memory work with the reply
    assert fake_chat.abandoned_streams == 1  # closing stopped the model


def test_the_device_is_freed_when_the_with_block_raises(
    assistant: Assistant, fake_chat: FakeChat
) -> None:
    fake_chat.enqueue("A long answer.")
    with pytest.raises(RuntimeError), assistant.reply_streaming("desk", "hi"):
        raise RuntimeError("the device hung up badly")
    assert device_is_free(assistant)


def test_the_device_is_freed_when_the_model_fails_to_start(
    assistant: Assistant, fake_chat: FakeChat
) -> None:
    fake_chat.fail_with = unreachable()
    with pytest.raises(type(unreachable())):
        assistant.reply_streaming("desk", "hi")
    assert device_is_free(assistant)


def test_closing_twice_from_two_threads_stores_the_answer_once(
    assistant: Assistant, fake_chat: FakeChat, store: SQLiteStore
) -> None:
    fake_chat.enqueue("Hello there.")
    streaming = assistant.reply_streaming("desk", "hi")
    pieces: Iterator[str] = streaming.pieces()
    assert "".join(pieces) == "Hello there."
    closers = [threading.Thread(target=streaming.close) for _ in range(2)]
    for closer in closers:
        closer.start()
    for closer in closers:
        closer.join(10)
    said = [m.content for m in store.recent_messages("lobug", "desk", 10)]
    assert said == ["hi", "Hello there."]
    assert device_is_free(assistant)


def test_priming_reads_the_next_prompt_up_to_the_persons_words(
    assistant: Assistant, fake_chat: FakeChat
) -> None:
    spoken = SpokenLimit(max_sentences=2, max_tokens=96)
    assistant.prime("desk", agency=True, spoken=spoken)
    assert fake_chat.prefilled == []  # a model without a prompt cache is not primed
    fake_chat.caches_prompt_prefix = True
    for n in range(12):  # past the working memory's 20 messages: its window moves
        assistant.prime("desk", agency=True, spoken=spoken)
        assistant.reply("desk", f"question {n}", agency=True, spoken=spoken)
        primed, asked = fake_chat.prefilled[-1], fake_chat.requests[-1][0]
        assert asked[: len(primed)] == primed
        assert asked[len(primed) :] == [{"role": "user", "content": f"question {n}"}]
        assert "at most 2 short sentences" in primed[0]["content"]


def four_pets_like_the_garden(store: SQLiteStore, embedder: FakeEmbedder) -> None:
    """Four facts that each match "Which pet likes the garden?" (99 tokens of notes, by the
    estimate: over a budget of 60, within one of 200)."""
    for pet in ("cat Tom", "dog Rex", "parrot Polly", "hamster Bo"):
        fact = f"The user has a pet {pet} who likes the garden"
        store.add_fact("lobug", NewFact(fact), embedder.embed(fact))


def test_a_voice_turn_reads_its_notes_within_their_budget(
    assistant: Assistant, fake_chat: FakeChat, fake_embedder: FakeEmbedder, store: SQLiteStore
) -> None:
    four_pets_like_the_garden(store, fake_embedder)
    question = "Which pet likes the garden?"
    fake_chat.caches_prompt_prefix = True  # the notes come just before the person's words
    fake_chat.enqueue("Tom does.", "Tom does.")
    assistant.reply("desk", question)
    typed = notes_of(fake_chat.requests[-1][0])
    assistant.reply("desk", question, spoken=SpokenLimit(2, 96, notes_tokens=60))
    spoken = notes_of(fake_chat.requests[-1][0])
    assert typed.count("The user has a pet") == 4
    assert 1 <= spoken.count("The user has a pet") < 4
    assert estimate_tokens(spoken) <= 60
    assert typed.startswith(spoken.split("\n")[0])  # the best-matched facts are kept


def test_a_text_turn_reads_its_notes_within_their_budget(
    settings: Settings, store: SQLiteStore, fake_chat: FakeChat, fake_embedder: FakeEmbedder
) -> None:
    four_pets_like_the_garden(store, fake_embedder)
    memory = MemoryManager(store, fake_chat, fake_embedder, MemoryConfig())
    fake_chat.caches_prompt_prefix = True
    notes = {}
    for budget in (200, 60):
        within = dataclasses.replace(settings, text_notes_tokens=budget)
        assistant = Assistant(within, store, memory, fake_chat, fake_embedder)
        fake_chat.enqueue("Tom does.")
        assistant.reply(f"desk-{budget}", "Which pet likes the garden?")
        notes[budget] = notes_of(fake_chat.requests[-1][0])
    assert notes[200].count("The user has a pet") == 4
    assert 1 <= notes[60].count("The user has a pet") < 4
    assert estimate_tokens(notes[60]) <= 60


def notes_of(messages: list[ChatMessage]) -> str:
    """The per-turn notes: the system message just before the newest user message."""
    assert messages[-2]["role"] == "system"
    return messages[-2]["content"]


def test_primed_with_the_words_heard_the_turn_finds_its_whole_prompt_read(
    assistant: Assistant, fake_chat: FakeChat, fake_embedder: FakeEmbedder, store: SQLiteStore
) -> None:
    fake_chat.caches_prompt_prefix = True
    fact = "The user's sister Emma lives in Berlin"
    store.add_fact("lobug", NewFact(fact), fake_embedder.embed(fact))
    spoken = SpokenLimit(2, 96, notes_tokens=80)
    for words in ("hello there", "What should I bring my sister Emma in Berlin?"):
        assistant.prime("desk", agency=True, spoken=spoken, heard=words)
        fake_chat.enqueue("Flowers.")
        assistant.reply("desk", words, agency=True, spoken=spoken)
        assert fake_chat.prefilled[-1] == fake_chat.requests[-1][0]
    assert fact in notes_of(fake_chat.prefilled[-1])  # the notes were read ahead too


@pytest.mark.parametrize("caches_prompt_prefix", [True, False])
def test_a_voice_turn_reuses_the_memory_looked_up_while_it_was_heard(
    assistant: Assistant,
    fake_chat: FakeChat,
    fake_embedder: FakeEmbedder,
    store: SQLiteStore,
    caches_prompt_prefix: bool,
) -> None:
    fake_chat.caches_prompt_prefix = caches_prompt_prefix
    fact = "The user's sister Emma lives in Berlin"
    store.add_fact("lobug", NewFact(fact), fake_embedder.embed(fact))
    spoken = SpokenLimit(2, 96, notes_tokens=80)
    assistant.prime("desk", agency=True, spoken=spoken, heard="What should I bring Emma")
    calls = fake_embedder.calls
    fake_chat.enqueue("Flowers.")
    turn = assistant.reply("desk", "What should I bring Emma in Berlin?", spoken=spoken)
    assert fake_embedder.calls == calls  # the question was not embedded on the turn's path
    assert "retrieve_embed_query" not in turn.timings_ms
    assert "retrieve_early_fused" in turn.timings_ms
    assert fact in fake_chat.chat_requests()[-1][0]["content"] + notes_of(
        fake_chat.chat_requests()[-1]
    )


def test_a_question_memory_answers_is_answered_with_the_facts_words_without_the_model(
    assistant: Assistant, store: SQLiteStore, fake_chat: FakeChat, fake_embedder: FakeEmbedder
) -> None:
    fact = NewFact("The user has a dog called Biscuit", "identity")
    store.add_fact("lobug", fact, fake_embedder.embed(fact.content), actor="test")
    fake_chat.enqueue("Your dog's name is Biscuzzle!")  # what the small model said
    turn = assistant.reply("kitchen", "What is my dog called?")
    assert turn.response == "You have a dog called Biscuit."
    assert fake_chat.chat_requests() == []  # no model asked
    assert turn.exchange is not None  # stored, as any answered turn
    with assistant.reply_streaming("kitchen", "Do you remember my dog's name?") as streaming:
        said = "".join(streaming.pieces())
    assert said == "Yes. You have a dog called Biscuit."
    assert fake_chat.chat_requests() == []


def test_a_model_that_made_the_person_up_is_not_asked_about_them(
    assistant: Assistant, store: SQLiteStore, fake_chat: FakeChat, fake_embedder: FakeEmbedder
) -> None:
    """The tiny default answered "We have a beagle named Biscuit." with a dog called
    "Biscuzzie", and "What's my son's name?" with one (there is no son)."""
    fake_chat.answers_about_the_person = False
    fake_chat.enqueue("Here is a pancake recipe: flour, eggs, milk.")
    told = assistant.reply("kitchen", "We have a beagle named Biscuit.")
    assert told.response == "Got it: you and your family have a beagle named Biscuit."
    assert told.exchange is not None  # learned from, as any answered turn
    fact = NewFact("The user's daughter Lina loves dinosaurs", "preference")
    store.add_fact("lobug", fact, fake_embedder.embed(fact.content), actor="test")
    unknown = assistant.reply("kitchen", "What's my son's name?")
    assert unknown.response == "You haven't told me about your son."
    assert fake_chat.chat_requests() == []
    helped = assistant.reply("kitchen", "Can you give me a recipe for pancakes?")
    assert helped.response == "Here is a pancake recipe: flour, eggs, milk."


def test_a_prime_during_a_turn_of_the_device_leaves_the_model_to_that_turn(
    assistant: Assistant, fake_chat: FakeChat, fake_embedder: FakeEmbedder
) -> None:
    """The words heard late, once their turn has begun (it has stored them): a prompt built
    from the device's state then would hold them twice and take the model from the turn."""
    fake_chat.caches_prompt_prefix = fake_chat.answers_ahead = True
    spoken = SpokenLimit(2, 96, notes_tokens=80)
    words = "What should I bring my sister?"
    fake_chat.enqueue("Flowers are nice.")
    with assistant.reply_streaming("desk", words, agency=True, spoken=spoken) as streaming:
        calls = fake_embedder.calls
        assistant.prime("desk", agency=True, spoken=spoken, heard=words, answer=True)
        assistant.prime("desk", agency=True, spoken=spoken)
        said = "".join(streaming.pieces())
    assert said == "Flowers are nice."
    assert fake_chat.prefilled == [] and len(fake_chat.chat_requests()) == 1
    assert fake_embedder.calls == calls + 1  # its memory is still looked up, for the next turn
    fake_chat.enqueue("Tulips.")
    assistant.prime("desk", agency=True, spoken=spoken, heard="And my mother?", answer=True)
    with assistant.reply_streaming("desk", "And my mother?", agency=True, spoken=spoken) as again:
        assert "".join(again.pieces()) == "Tulips."
    assert again.timings_ms["ahead"] > 0  # between turns, the answer is begun ahead again


@pytest.mark.parametrize("heard_last", ["What should I bring my sister?", "What should I bring"])
def test_a_voice_turn_adopts_the_answer_begun_in_the_persons_pause_if_they_said_no_more(
    assistant: Assistant, fake_chat: FakeChat, heard_last: str
) -> None:
    fake_chat.answers_ahead = True
    spoken = SpokenLimit(2, 96, notes_tokens=80)
    fake_chat.enqueue("Flowers are nice.", "Chocolate, perhaps.")
    assistant.prime("desk", agency=True, spoken=spoken, heard=heard_last, answer=True)
    words = "What should I bring my sister?"
    with assistant.reply_streaming("desk", words, agency=True, spoken=spoken) as streaming:
        said = "".join(streaming.pieces())
    asked = [messages[-1]["content"] for messages in fake_chat.chat_requests()]
    if heard_last == words:  # adopted: the model was asked once
        assert (said, asked) == ("Flowers are nice.", [words])
        assert streaming.timings_ms["ahead"] > 0
    else:  # the person spoke on after the pause: answered anew
        assert (said, asked) == ("Chocolate, perhaps.", [heard_last, words])
        assert streaming.timings_ms["ahead"] == 0
    assert streaming.turn is not None and streaming.turn.response == said  # stored as said


def test_a_device_dropped_drops_what_the_household_kept_for_it(
    settings: Settings, store: SQLiteStore, fake_chat: FakeChat, fake_embedder: FakeEmbedder
) -> None:
    """One keep for what a device's turns share: a request waiting for its "yes" on a device
    goes when the device is dropped (here: a second device beyond the limit of one)."""
    memory = MemoryManager(store, fake_chat, fake_embedder, MemoryConfig())
    assistant = Assistant(
        settings.with_overrides(max_devices=1), store, memory, fake_chat, fake_embedder
    )
    waiting = memory.household.awaiting
    waiting.ask(("lobug", "kitchen"), None, "forget me")
    waiting.ask(("lobug", "hall"), None, "forget me")
    assistant.session("kitchen").state()
    assistant.session("hall").state()  # the kitchen is the least recently used: dropped
    assert waiting.take(("lobug", "kitchen"), None, "yes") is None
    assert waiting.take(("lobug", "hall"), None, "yes") == "forget me"
