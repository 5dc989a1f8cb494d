"""Cascade outputs are checked; a failed one is retried once, then built without the model
(issue 18: four summaries in seven were "Oo, oo, oo, ...")."""

from __future__ import annotations

from lobug.config import MemoryConfig
from lobug.memory.manager import MemoryManager
from lobug.memory.quality import (
    extractive_summary,
    output_problem,
    salient_words,
)
from lobug.store.models import Message
from lobug.store.sqlite.engine import SQLiteStore
from tests.fakes import FakeChat, FakeEmbedder

SAID = [
    "I live in Lisbon with my partner Joana.",
    "I work as a nurse at Santa Maria hospital.",
    "My brother Rui lives in Porto.",
]
LOOP = "Oo, oo, oo, oo, oo, oo, oo, oo, oo, oo, oo, oo, oo, oo"
GOOD = "The user lives in Lisbon with Joana, works as a nurse and has a brother, Rui, in Porto."


def check(text: str) -> str | None:
    return output_problem(text, SAID, language="en", max_chars=1600)


def test_a_summary_that_says_something_passes() -> None:
    assert check(GOOD) is None


def test_loops_other_languages_and_empty_summaries_are_refused() -> None:
    assert check(LOOP) == "degenerate: under 30% distinct words"
    assert check("Não pode ser mais difícil que estejo também já esta deixar com Joana e Rui.")
    assert check("") == "too short"
    assert check("x " * 1000) == "longer than 1600 characters"


def test_a_summary_about_nothing_that_was_said_is_refused() -> None:
    assert check("The conversation was friendly and pleasant overall.") == (
        "mentions none of what was said"
    )


def test_salient_words_are_the_words_said_most() -> None:
    assert salient_words(["Joana likes tea. Joana likes Lisbon."])[:2] == ["joana", "likes"]


def log(store: SQLiteStore, texts: list[str]) -> list[Message]:
    messages = []
    for text in texts:
        messages.append(store.append_message("lobug", "desk", "user", text))
        messages.append(store.append_message("lobug", "desk", "assistant", "Nice!"))
    return messages


def test_the_extractive_summary_is_the_users_statements_and_no_note() -> None:
    messages = [
        Message(n, "lobug", "desk", "user", text, 0.0, False) for n, text in enumerate(SAID)
    ]
    summary = extractive_summary(messages)
    assert summary.startswith("The user lives in Lisbon with the user's partner Joana.")
    assert "nurse" in summary and "Porto" in summary


def summarizing(store: SQLiteStore, chat: FakeChat) -> MemoryManager:
    config = MemoryConfig(short_term_threshold=6, short_term_keep=1)
    return MemoryManager(store, chat, FakeEmbedder(), config)


def test_a_looping_summary_is_retried_at_temperature_zero_with_a_stricter_prompt(
    store: SQLiteStore,
) -> None:
    chat = FakeChat()
    messages = log(store, SAID)
    chat.enqueue('{"facts": []}', LOOP, GOOD)
    report = summarizing(store, chat).process_exchange("lobug", *messages[-2:])
    assert report.summarized and not report.errors
    assert [(s.content, s.made_by) for s in store.summaries("lobug")] == [(GOOD, "model")]
    retry = chat.requests[-1][0]
    assert "Write in English only." in retry[0]["content"]


def test_a_summary_refused_twice_is_built_without_the_model(store: SQLiteStore) -> None:
    chat = FakeChat(default=LOOP)
    messages = log(store, SAID)
    report = summarizing(store, chat).process_exchange("lobug", *messages[-2:])
    assert report.summarized
    (summary,) = store.summaries("lobug")
    assert summary.made_by == "extractive"  # a field: the text is the user's words alone
    assert summary.content.startswith("The user lives in Lisbon") and "oo" not in summary.content
    assert "Extractive" not in summary.content and "failed" not in summary.content


def test_a_base_memory_refused_twice_lists_facts_and_summaries(store: SQLiteStore) -> None:
    chat = FakeChat(default=LOOP)
    for text in SAID * 2:
        message = store.append_message("lobug", "desk", "user", text)
        store.add_summary("lobug", f"The user said: {text}", [message])
    config = MemoryConfig(long_term_threshold=4, long_term_keep=1)
    memory = MemoryManager(store, chat, FakeEmbedder(), config)
    report = memory.process_exchange("lobug", *log(store, ["hi there"]))
    assert report.distilled
    base = store.base_memory("lobug")
    assert base.startswith("- ") and "Joana" in base and "oo" not in base
    assert "without the model" not in base
    assert store.base_memory_history("lobug")[0].made_by == "extractive"


def test_a_summary_that_chats_instead_of_reporting_is_refused() -> None:
    chatty = "Maya: Ah, what a wonderful choice! What brings you both to Edinburgh and Porto?"
    assert check(chatty) == "not a third-person account (a question, I/you, or a transcript line)"
    assert check("I've been playing the piano in Lisbon since I was a little girl in Porto.")
