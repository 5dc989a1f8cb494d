from __future__ import annotations

from lobug.language.text import FUNCTION_WORDS, third_person
from lobug.tokens import estimate_tokens, prompt_budget_tokens, truncate_to_tokens
from lobug.turn.conversation import build_messages


def test_english_is_counted_at_three_characters_a_token() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abc") == 1
    assert estimate_tokens("abcd") == 2


def test_other_scripts_cost_their_utf8_bytes() -> None:
    # 4,000 emoji were 13,685 tokens for SmolLM2; a 3.5 chars/token budget counted 1,143.
    assert estimate_tokens("😀" * 4000) == 16000
    assert estimate_tokens("我" * 4000) == 12000
    assert estimate_tokens("café") == 1 + 2


def test_truncation_keeps_the_longest_prefix_within_the_budget() -> None:
    assert truncate_to_tokens("abcdef", 1) == "abc"
    assert truncate_to_tokens("我我我", 7) == "我我"
    assert truncate_to_tokens("short", 100) == "short"
    assert estimate_tokens(truncate_to_tokens("é" * 999, 100)) <= 100


def test_prompt_budget_leaves_room_for_the_reply_and_the_template() -> None:
    assert prompt_budget_tokens(4096, 256) == 4096 - 256 - 256
    assert prompt_budget_tokens(300, 256) == 0


def test_emoji_history_that_fit_the_old_character_budget_is_dropped() -> None:
    older = {"role": "user", "content": "😀" * 3000}
    history = [older, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "hi"}]
    messages = build_messages("sys", history, context_tokens=4096, reply_tokens=256)
    assert [m["content"] for m in messages[1:]] == ["ok", "hi"]


def test_an_oversized_newest_message_is_cut_to_fit() -> None:
    history = [{"role": "user", "content": "我" * 4000}]
    messages = build_messages("sys", history, context_tokens=4096, reply_tokens=256)
    total = sum(estimate_tokens(m["content"]) for m in messages)
    assert total <= prompt_budget_tokens(4096, 256)
    assert messages[-1]["content"].startswith("我我我")


def test_one_third_person_that_conjugates() -> None:
    assert third_person("I work at NASA") == "the user works at NASA"
    # A subject of two keeps its verb as said (it was "... and the user goes hiking").
    assert third_person("My sister and I go hiking") == "the user's sister and the user go hiking"


def test_one_function_word_list_for_search_and_grounding() -> None:
    assert {"the", "my", "also", "dont"} <= FUNCTION_WORDS
    assert "nasa" not in FUNCTION_WORDS
