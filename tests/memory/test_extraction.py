from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from lobug.memory.extraction import fact_payload, is_grounded, merge_facts, validate_facts


def test_parses_object_list_and_fenced_json() -> None:
    assert fact_payload('{"facts": [{"fact": "a", "type": "event"}]}') == [
        {"fact": "a", "type": "event"}
    ]
    assert fact_payload('[{"fact": "b"}]') == [{"fact": "b"}]
    assert fact_payload('```json\n{"facts": [{"fact": "c"}]}\n```') == [{"fact": "c"}]
    assert fact_payload('Sure! {"facts": [{"fact": "d"}]} hope that helps') == [{"fact": "d"}]


@given(st.text())
def test_parser_never_raises_on_arbitrary_text(raw: str) -> None:
    assert fact_payload(raw) is None or isinstance(fact_payload(raw), list)


def test_grounded_facts_are_kept() -> None:
    source = ("My name is Alex and I work at NASA", "Nice to meet you, Alex!")
    assert is_grounded("The user's name is Alex", source)
    assert is_grounded("The user works at NASA", source)


def test_invented_facts_are_dropped() -> None:
    source = ("I'm 34 and love pizza", "Pizza is great!")
    assert not is_grounded("The user is from Italy", source)
    assert not is_grounded("The user is 43 years old and loves pizza", source)
    assert not is_grounded("I am a NASA astronaut, located on Mars", ("I work at NASA", "Cool"))


def test_validation_drops_malformed_ungrounded_and_duplicate_items() -> None:
    items = [
        {"fact": "The user works at NASA", "type": "identity", "confidence": 3},
        {"fact": "The user works at NASA.", "type": "identity"},
        {"fact": "The user is an astronaut on Mars", "type": "identity"},
        {"fact": 12, "type": "identity"},
        {"type": "identity"},
        {"fact": "The user's name is Alex", "type": "made-up-type", "time": "  "},
    ]
    facts = validate_facts(
        items,
        user_text="My name is Alex and I work at NASA",
        source_message_ids=(1, 2),
        max_facts=5,
    )
    assert [f.content for f in facts] == ["The user works at NASA", "The user's name is Alex"]
    assert facts[0].confidence == 0.6  # a grounded extraction; the model's 3 does not raise it
    assert facts[1].fact_type == "identity"  # "My name is": the rule, not the made-up type
    assert facts[1].time_span is None
    assert all(f.source_message_ids == (1, 2) for f in facts)


def test_validation_respects_the_limit() -> None:
    items = [{"fact": f"The user owns {n} cats", "type": "identity"} for n in range(1, 9)]
    facts = validate_facts(
        items,
        user_text="I own 1 2 3 4 5 6 7 8 cats",
        source_message_ids=(),
        max_facts=3,
    )
    assert len(facts) == 3


def test_truncated_reply_keeps_the_completed_objects() -> None:
    raw = '{"facts": [{"fact": "The user likes tea", "type": "preference"}, {"fact": "The us'
    assert fact_payload(raw) == [{"fact": "The user likes tea", "type": "preference"}]


def test_first_person_facts_are_stored_about_the_user() -> None:
    facts = validate_facts(
        [{"fact": "I work at NASA", "type": "identity"}, {"fact": "My dog is Rex"}],
        user_text="I work at NASA, my dog is Rex",
        source_message_ids=(),
        max_facts=5,
    )
    assert [f.content for f in facts] == ["The user works at NASA", "The user's dog is Rex"]


def test_merge_keeps_order_skips_same_words_and_limits() -> None:
    from lobug.store.models import NewFact

    first = [NewFact("The user likes tea")]
    second = [NewFact("the user LIKES tea"), NewFact("The user has a cat"), NewFact("x y z")]
    merged = merge_facts(first, second, 2)
    assert [f.content for f in merged] == ["The user likes tea", "The user has a cat"]


def test_a_fact_found_only_in_the_assistants_words_is_dropped() -> None:
    """Issue 18: the model took its own babble and inventions for facts about the user."""
    items = [
        {"fact": "The user lives in Lisbon with Joana", "type": "identity"},
        {"fact": "The car is a luxury car", "type": "trait"},
        {"fact": "The user's partner Joana is a teacher at a luxury school", "type": "identity"},
    ]
    facts = validate_facts(
        items,
        user_text="I live in Lisbon with my partner Joana.",
        source_message_ids=(1, 2),
        max_facts=5,
    )
    assert [f.content for f in facts] == ["The user lives in Lisbon with Joana"]


def test_babble_questions_and_facts_about_the_assistant_are_dropped() -> None:
    user_text = (
        "I live in Lisbon with my partner Joana, in a flat near the castle, and I am allergic "
        "to peanuts."
    )
    items = [
        {"fact": "Não pode ser mais difícil que estejo também já esta deixar com Joana!"},
        {"fact": "Joana e o mesmo"},
        {"fact": "Há alguma mesa!"},
        {"fact": "Does the user live in Lisbon?"},
        {"fact": "The assistant lives in Lisbon with Joana"},
        {"fact": "Lo-Bug is allergic to peanuts"},
        {"fact": "Joana, Joana, Joana, Joana, Joana"},
        {"fact": "The flat near the castle"},
        {"fact": "The castle"},
        {"fact": "The user is allergic to peanuts"},
    ]
    facts = validate_facts(items, user_text=user_text, source_message_ids=(1, 2), max_facts=10)
    assert [f.content for f in facts] == ["The user is allergic to peanuts"]


def test_a_name_said_with_a_possessive_grounds_the_fact_the_model_wrote() -> None:
    """Issue 41: "My dog's name is Biscuit" did not ground "The user's dog is called
    Biscuit" ("dog's" was not "dog"), so the model's fact was dropped."""
    kept = validate_facts(
        [{"fact": "The user's dog is called Biscuit", "type": "identity"}],
        user_text="My dog's name is Biscuit",
        source_message_ids=(1, 2),
        max_facts=5,
    )
    assert [f.content for f in kept] == ["The user's dog is called Biscuit"]


def test_a_fact_in_the_conversations_language_is_grounded_by_its_own_words() -> None:
    """Qwen2.5-Coder-1.5B asked for German facts of "Ich arbeite als Krankenschwester im
    Krankenhaus." wrote "Der User ist eine Krankenschwester"; German function words and the
    German word for the user are framing, as "the user is a" is in English."""
    said = "Ich arbeite als Krankenschwester im Krankenhaus."
    items = [
        {"fact": "Der User ist eine Krankenschwester", "type": "identity"},
        {"fact": "Der Benutzer ist eine Ärztin", "type": "identity"},  # not said
    ]
    kept = validate_facts(
        items, user_text=said, source_message_ids=(1, 2), max_facts=3, language="de"
    )
    assert [fact.content for fact in kept] == ["Der User ist eine Krankenschwester"]
    assert not is_grounded("Der User ist eine Krankenschwester", [said])  # English framing only


def test_the_extraction_asks_for_facts_in_the_conversations_language() -> None:
    from lobug.memory.prompts import batch_fact_extraction_messages, fact_extraction_messages

    german = fact_extraction_messages("Mein Hund heißt Bello.", "Schön!", language="de")
    assert "write every fact in German" in german[0]["content"]
    batch = batch_fact_extraction_messages([("Hallo", "Hallo!")], simple=True, language="de")
    assert "write every fact in German" in batch[0]["content"]
    english = fact_extraction_messages("My dog is Bello.", "Nice!")
    assert "write every fact in" not in english[0]["content"]


def test_the_user_named_in_another_language_is_no_name_to_ground() -> None:
    said = "Hallo! Ich heiße Marta."
    assert is_grounded("Der Benutzer ist Marta", [said], "de")  # a German noun, capitalised
    assert not is_grounded("Der Benutzer ist Maria", [said], "de")


def test_german_articles_and_naming_words_are_framing_too() -> None:
    """Qwen2.5-Coder-1.5B's German fact for "Unser Hund heißt Bello, er ist ein Beagle.":
    "Der Benutzer hat einen Hund namens Bello" (its claim: the dog, Bello)."""
    said = "Unser Hund heißt Bello, er ist ein Beagle."
    assert is_grounded("Der Benutzer hat einen Hund namens Bello", [said], "de")
    assert not is_grounded("Der Benutzer hat einen Hund namens Rex", [said], "de")
