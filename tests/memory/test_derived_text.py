"""Derived memory without inventions (issue 28, item 4): the dream's base memory held "their
family's love for pets", and a topic showed the person "Extractive summary (the user's own
words; the model's summary failed): ...". Now every sentence of a summary, base memory or topic
summary must be supported by what it was made from (dropped and counted otherwise), and how a
text was made is a field stored beside it, never a note inside it."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence

import pytest

from lobug.backends.base import ChatMessage, JsonSchema
from lobug.config import MemoryConfig
from lobug.memory.dream import Dreamer
from lobug.memory.manager import MemoryManager
from lobug.memory.quality import (
    WordIndex,
    checked_output,
    is_supported,
    supported,
    words_said,
)
from lobug.memory.topics import TopicBuilder
from lobug.read_model.topics import topic_out
from lobug.store.models import NewFact
from lobug.store.protocol import Store
from tests.fakes import FakeChat, FakeEmbedder

SAID = [
    "I have a dog called Biscuit.",
    "My name is Maya and I live in Edinburgh.",
    "Biscuit is a golden retriever and he is three.",
]
INVENTED = "Their family's love for pets shapes their days."


@pytest.fixture
def fake_embedder() -> FakeEmbedder:
    """Wider than the default, so the topics' unrelated words rarely share a dimension."""
    return FakeEmbedder(dim=512)


def said() -> WordIndex:
    return WordIndex(w for text in SAID for w in words_said(text))


@pytest.mark.parametrize(
    ("sentence", "holds"),
    [
        ("The user has a dog called Biscuit.", True),
        ("The user mentioned that Biscuit is a golden retriever.", True),  # reporting: framing
        ("Maya lives in Edinburgh with her dog.", True),
        ("The user talked to Lo-Bug about Biscuit.", True),  # the assistant's name: framing
        ("Their dog is called Biscuzzle.", False),  # a misspelt name
        ("Biscuit is four years old.", False),  # a number said nowhere ("three" was)
        ("Biscuit is 3.", False),  # "three" is no digit: numbers are copied, not converted
        ("Maya lives in Glasgow.", False),  # another place
        (INVENTED, False),
        ("That was all.", True),  # claims nothing
    ],
)
def test_a_sentence_is_supported_by_its_names_numbers_and_most_of_its_words(
    sentence: str, holds: bool
) -> None:
    assert is_supported(sentence, said()) is holds


def test_unsupported_sentences_are_dropped_and_counted_line_by_line() -> None:
    document = "\n".join(
        [
            "## User Profile",
            "- Name: Maya",
            "- Lives in Edinburgh. Works at NASA.",
            "",
            "## Preferences",
            f"- {INVENTED}",
            "",
            "Key History:",
            "- Maya adopted Biscuit in 2019.",
        ]
    )
    kept = supported(document, SAID)
    assert kept.content == "## User Profile\n- Name: Maya\n- Lives in Edinburgh."
    assert (kept.made_by, kept.dropped_sentences) == ("model", 3)


def test_a_text_left_too_thin_by_the_drop_is_refused() -> None:
    text = f"Maya has a dog. {INVENTED} She went sailing in Norway."
    derived, problem = checked_output(text, SAID, language="en", max_chars=1600)
    assert derived is None
    assert problem == "2 sentences unsupported, the rest too short"


def summarizing(store: Store, chat: FakeChat, embedder: FakeEmbedder) -> MemoryManager:
    config = MemoryConfig(short_term_threshold=6, short_term_keep=0)
    return MemoryManager(store, chat, embedder, config)


def converse(store: Store) -> list[object]:
    messages: list[object] = []
    for text in SAID:
        messages.append(store.append_message("lobug", "desk", "user", text))
        messages.append(store.append_message("lobug", "desk", "assistant", "Lovely!"))
    return messages


@pytest.mark.both_engines
def test_a_summary_keeps_only_supported_sentences_and_says_how_many_it_lost(
    store: Store, fake_embedder: FakeEmbedder, caplog: pytest.LogCaptureFixture
) -> None:
    chat = FakeChat()
    good = "The user has a golden retriever called Biscuit and lives in Edinburgh."
    chat.enqueue('{"facts": []}', f"{good} {INVENTED}")
    messages = converse(store)
    with caplog.at_level(logging.INFO, logger="lobug.memory.manager"):
        report = summarizing(store, chat, fake_embedder).process_exchange(
            "lobug",
            *messages[-2:],  # type: ignore[arg-type]
        )
    assert report.summarized and not report.errors
    (summary,) = store.summaries("lobug")
    assert (summary.content, summary.made_by, summary.dropped_sentences) == (good, "model", 1)
    assert "1 sentences its sources do not support were dropped" in caplog.text


@pytest.mark.both_engines
def test_an_extractive_summary_says_so_in_a_field_not_in_its_text(
    store: Store, fake_embedder: FakeEmbedder
) -> None:
    chat = FakeChat(default="Oo, oo, oo, oo, oo, oo, oo, oo, oo, oo, oo")
    messages = converse(store)
    summarizing(store, chat, fake_embedder).process_exchange("lobug", *messages[-2:])  # type: ignore[arg-type]
    (summary,) = store.summaries("lobug")
    assert summary.made_by == "extractive"
    assert summary.content.startswith("The user has a dog called Biscuit.")
    assert "Extractive" not in summary.content and "model" not in summary.content


@pytest.mark.both_engines
def test_a_distilled_base_memory_drops_what_its_sources_do_not_hold(
    store: Store, fake_embedder: FakeEmbedder
) -> None:
    for text in SAID:
        message = store.append_message("lobug", "desk", "user", text)
        store.add_summary("lobug", f"The user said: {text}", [message], made_by="model")
    chat = FakeChat()
    document = (
        f"User Profile:\n- Maya lives in Edinburgh with Biscuit, a golden retriever.\n- {INVENTED}"
    )
    chat.enqueue('{"facts": []}', document)
    config = MemoryConfig(long_term_threshold=3, long_term_keep=0)
    exchange = [
        store.append_message("lobug", "desk", "user", "hello"),
        store.append_message("lobug", "desk", "assistant", "Hi!"),
    ]
    report = MemoryManager(store, chat, fake_embedder, config).process_exchange("lobug", *exchange)
    assert report.distilled
    assert store.base_memory("lobug") == (
        "User Profile:\n- Maya lives in Edinburgh with Biscuit, a golden retriever."
    )
    newest = store.base_memory_history("lobug")[0]
    assert (newest.written_by, newest.made_by, newest.dropped_sentences) == ("cascade", "model", 1)


def plant(store: Store, embedder: FakeEmbedder, text: str) -> int:
    return store.add_fact("lobug", NewFact(text, "identity"), embedder.embed(text)).id


@pytest.mark.both_engines
def test_the_dreams_base_memory_holds_no_invented_sentence_and_its_diary_counts_them(
    store: Store, fake_embedder: FakeEmbedder
) -> None:
    plant(store, fake_embedder, "The user has a dog called Biscuit")
    plant(store, fake_embedder, "The user's name is Maya")
    chat = FakeChat()
    chat.enqueue(f"The user's name is Maya and she has a dog called Biscuit. {INVENTED}")
    result = Dreamer(store, chat, max_facts=100).dream("lobug")
    assert result.dream is not None
    base = store.base_memory("lobug")
    assert base == "The user's name is Maya and she has a dog called Biscuit."
    assert "pets" not in base
    newest = store.base_memory_history("lobug")[0]
    assert (newest.written_by, newest.made_by, newest.dropped_sentences) == ("dream", "model", 1)
    assert "1 sentences of the model's base memory" in result.dream.diary
    assert "pets" not in result.dream.diary


@pytest.mark.both_engines
def test_a_dream_whose_base_memory_is_all_invention_leaves_it_as_it_was(
    store: Store, fake_embedder: FakeEmbedder
) -> None:
    plant(store, fake_embedder, "The user has a dog called Biscuit")
    store.write_base_memory("lobug", "The user has a dog called Biscuit.", actor="manual")
    chat = FakeChat()
    chat.enqueue(f"{INVENTED} They adore long walks on the beach in Brighton.")
    result = Dreamer(store, chat, max_facts=100).dream("lobug")
    assert result.dream is not None and result.dream.base_memory_before is None
    assert store.base_memory("lobug") == "The user has a dog called Biscuit."
    assert "passed its checks: it was left as it was" in result.dream.diary


@pytest.mark.both_engines
def test_undoing_a_dream_restores_how_the_old_base_memory_was_made(
    store: Store, fake_embedder: FakeEmbedder
) -> None:
    plant(store, fake_embedder, "The user has a dog called Biscuit")
    store.write_base_memory("lobug", "The user has a dog called Biscuit.", actor="manual")
    chat = FakeChat()
    chat.enqueue("The user has a dog, Biscuit.")
    dream = Dreamer(store, chat, max_facts=100).dream("lobug").dream
    assert dream is not None
    assert store.base_memory_history("lobug")[0].made_by == "model"
    store.undo_dream("lobug", dream.id, actor="manual")
    restored = store.base_memory_history("lobug")[0]
    assert (restored.content, restored.made_by) == ("The user has a dog called Biscuit.", "person")


KYOTO = (
    "The user plans a Kyoto trip in April",
    "The user booked a Kyoto trip flight for April",
    "The user wants Kyoto trip temples",
)


def describer(messages: Sequence[ChatMessage], schema: JsonSchema | None) -> str:
    return json.dumps(
        {
            "name": "Kyoto trip",
            "summary": "The user plans a Kyoto trip in April. Their sister Ana is coming too.",
            "open_questions": [],
            "next_actions": [],
        }
    )


@pytest.mark.both_engines
def test_a_topic_summary_keeps_only_what_its_notes_support(
    store: Store, fake_embedder: FakeEmbedder
) -> None:
    for text in KYOTO:
        store.add_fact("lobug", NewFact(text, "event"), fake_embedder.embed(text))
    (topic,) = TopicBuilder(store, FakeChat(responder=describer)).rebuild("lobug")
    assert topic.summary == "The user plans a Kyoto trip in April."
    assert (topic.written_by, topic.dropped_sentences) == ("model", 1)
    shown = topic_out(topic).model_dump()
    assert (shown["written_by"], shown["dropped_sentences"]) == ("model", 1)
    assert store.topics("lobug")[0].dropped_sentences == 1
