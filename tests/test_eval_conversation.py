"""The judging rules of `scripts/eval_conversation.py` (issue 41), on replies seen or feared
there, and the sitting's own data judged by them. No server."""

from __future__ import annotations

import pytest
from scripts.conversation_judging import (
    Claim,
    MemoryView,
    change_verdict,
    claim_of,
    foreign_words,
    holds_any,
    invented_details,
    listing_verdict,
    odd_reasons,
    percentile,
    says_unknown,
    speaker_prefix,
    stage_direction,
    truthful,
)
from scripts.eval_conversation import (
    EXPECTED_FACTS,
    PERSONA,
    QUESTIONS,
    QUICK_FACTS,
    REQUESTS,
    UNKNOWNS,
    ModelRun,
    TurnResult,
    facts_listed,
    reminders_listed,
    table_row,
)

SAID = [
    "Hi! By the way, my name is Marta.",
    "My partner Jonas is a carpenter, he builds furniture.",
    "We have a beagle named Biscuit.",
    "Our daughter Lina is seven and she's crazy about dinosaurs.",
]


# ---------------------------------------------------------------------- odd replies


@pytest.mark.parametrize(
    "reply",
    [
        "Sterra: The night is young.",
        "El Fuego: I am the dog.",
        "User: what's my name?",
        "Sure thing.\nLo-Bug: Hello again!",
    ],
)
def test_a_speaker_prefix_is_odd(reply: str) -> None:
    assert speaker_prefix(reply)


@pytest.mark.parametrize(
    "reply",
    [
        "Ingredients:\n- 2 eggs\n- 200 g flour\nSteps: mix and fry.",
        "Sure: here is one.",
        "Tomorrow at 9:00 I'll remind you.",
        "Note: beagles love to sniff.",
    ],
)
def test_headings_and_times_are_no_speakers(reply: str) -> None:
    assert speaker_prefix(reply) is None


@pytest.mark.parametrize(
    "reply", ["(repeat of your message) Hello!", "*smiles* Hi Marta.", "[laughs] That's funny."]
)
def test_stage_directions_are_odd(reply: str) -> None:
    assert stage_direction(reply)


@pytest.mark.parametrize(
    "reply",
    [
        "Boil it (about 6 minutes) for a soft yolk.",
        "Mix **flour** and milk.",
        "[REACT] Nice!",
        "* 2 eggs\n* milk",
    ],
)
def test_brackets_bold_and_bullets_are_no_stage_directions(reply: str) -> None:
    assert stage_direction(reply) is None


def test_a_fragment_of_another_language_is_odd() -> None:
    assert foreign_words("Lo que la buen noche debe leer es el pino de leer")
    assert foreign_words("Das ist sehr gut, danke.")
    assert foreign_words("Ciao! Questo è molto bello.")


def test_one_foreign_word_in_english_is_not() -> None:
    assert foreign_words("In Lisbon, say obrigado and try the pastel de nata.") == []
    assert foreign_words("Chili con carne is a classic.") == []
    # Qwen2.5-Coder-1.5B's pancakes: "non" is part of a word, "Pour" an English verb
    assert foreign_words("Heat a non-stick pan. Pour the batter in.") == []


def test_speaking_as_the_user_is_odd() -> None:
    assert odd_reasons("My name is Marta and I love my dog.", "Hi", ["Marta"]) == [
        "speaks as the user: My name is Marta"
    ]
    assert odd_reasons("I'm allergic to peanuts too!", "I'm allergic to peanuts", ["Marta"])


def test_empty_echoed_looping_and_repeated_replies_are_odd() -> None:
    assert odd_reasons("  ", "Hi", ["Marta"]) == ["empty"]
    assert odd_reasons("Hi, I'm Marta!", "hi i'm marta", [])  # echoed
    assert odd_reasons("Nice. Nice. Nice. Nice. Nice. Nice.", "Hi", [])
    assert odd_reasons("Got it!", "Thanks", [], earlier_replies=["Got it!"])


def test_a_good_reply_is_not_odd() -> None:
    reply = "Nice to meet you, Marta! Beagles are lovely dogs (and very curious)."
    assert odd_reasons(reply, "We have a beagle named Biscuit.", ["Marta"]) == []


# ---------------------------------------------------------------------- invented details


def test_a_name_never_said_is_invented() -> None:
    assert invented_details("Your son's name is Daniel.", [*SAID, "What's my son's name?"]) == [
        "Daniel"
    ]


def test_a_relation_never_said_is_invented() -> None:
    assert invented_details("Your wife Jonas is lovely.", SAID) == ["Your wife"]
    assert invented_details("Your brother works as a nurse.", SAID) == ["Your brother"]


def test_what_was_said_paraphrased_is_not_invented() -> None:
    assert invented_details("Your partner Jonas and your child Lina (7) love Biscuit.", SAID) == []
    assert invented_details("Wonderful! Beagles are great. See you Friday at 09:00.", SAID) == []


def test_a_question_about_an_unsaid_relation_may_name_it() -> None:
    asked = [*SAID, "What's my son's name?"]
    assert invented_details("You haven't told me about your son.", asked) == []


# ---------------------------------------------------------------------- right answers


def test_keywords_count_with_endings_aside() -> None:
    assert holds_any("She loves dinosaurs and drawing.", "dinosaur|strawberry")
    assert holds_any("Your partner is called Jonas.", "jonas")
    assert not holds_any("I don't know your partner's name.", "jonas")


@pytest.mark.parametrize(
    "reply",
    [
        "You haven't told me about a son.",
        "I don't know your mother's name.",
        "You never mentioned a cat.",
        "I'm not sure which team you support.",
        "I have no record of that.",
    ],
)
def test_unknowns_said_unknown(reply: str) -> None:
    assert says_unknown(reply)


@pytest.mark.parametrize("reply", ["Your son's name is Daniel.", "You support Arsenal!"])
def test_invented_answers_are_not_unknowns(reply: str) -> None:
    assert not says_unknown(reply)


# ---------------------------------------------------------------------- requests


@pytest.mark.parametrize(
    ("reply", "claim"),
    [
        ("I forgot 1 fact: you're going to Lisbon in August.", Claim.DONE),
        ("Okay, I forgot what you told me about your trip.", Claim.DONE),
        ("I'll remind you tomorrow at 09:00 to call the vet.", Claim.DONE),
        ("Got it, your dog is called Pretzel now.", Claim.DONE),
        ("I didn't find anything about a trip.", Claim.NOT_DONE),
        ("I couldn't find a reminder about the vet.", Claim.NOT_DONE),
        ("Lisbon is lovely in August.", Claim.NONE),
    ],
)
def test_the_claim_of_a_confirmation(reply: str, claim: Claim) -> None:
    assert claim_of(reply) is claim


def test_a_success_sentence_for_nothing_is_untruthful() -> None:
    verdict = change_verdict("Okay, I forgot what you told me about your trip.", False, False)
    assert (verdict.honoured, verdict.truthful) == (False, False)


def test_saying_nothing_was_found_when_nothing_changed_is_truthful() -> None:
    verdict = change_verdict("I didn't find anything about a trip.", True, True)
    assert (verdict.honoured, verdict.truthful) == (False, True)
    assert verdict.notes == ["its goal was already met before it"]


def test_a_change_shown_and_confirmed_is_honoured_and_truthful() -> None:
    verdict = change_verdict("Done: I forgot that you're allergic to peanuts.", False, True)
    assert (verdict.claim, verdict.honoured, verdict.truthful) == (Claim.DONE, True, True)
    assert not truthful(Claim.NONE, True)


def test_a_listing_names_what_the_api_holds_and_nothing_it_does_not() -> None:
    held, gone = ["marta", "nurse", "lina"], ["volvo", "lisbon"]
    assert listing_verdict("You're Marta, a nurse.", held, gone, at_least=2).truthful
    wrong = listing_verdict("You're Marta, a nurse with a Volvo.", held, gone, at_least=2)
    assert (wrong.honoured, wrong.truthful) == (True, False)
    assert not listing_verdict("You're Marta.", held, gone, at_least=2).honoured


def test_no_reminders_said_when_there_are_none_is_right() -> None:
    assert listing_verdict("You have no reminders.", [], ["vet"]).truthful
    assert not listing_verdict("Call the vet at 9.", [], ["vet"]).truthful


# ---------------------------------------------------------------------- the sitting's data

BEFORE = MemoryView(
    facts=(
        "The user's name is Marta.",
        "The user has a beagle named Biscuit.",
        "The user is allergic to peanuts.",
        "The user drives an old red Volvo.",
        "The user is going to Lisbon in August.",
    )
)
AFTER = MemoryView(
    facts=("The user's name is Marta.", "The user's dog is called Pretzel."),
    reminders=("call the vet",),
)


def test_every_change_request_has_a_goal_the_persona_meets_after_it_and_not_before() -> None:
    changes = [r for r in REQUESTS if r.goal is not None and "Cancel" not in r.said]
    for request in changes:
        assert request.goal is not None
        assert not request.goal(BEFORE), request.said
        assert request.goal(AFTER), request.said
    cancel = next(r for r in REQUESTS if "Cancel" in r.said)
    assert cancel.goal is not None and not cancel.goal(AFTER) and cancel.goal(BEFORE)


def test_the_listings_ask_for_what_the_api_holds() -> None:
    assert reminders_listed(AFTER) == (["vet"], [])
    assert reminders_listed(BEFORE) == ([], ["vet"])
    held, gone = facts_listed(AFTER)
    assert held == ["marta"] and "biscuit" in gone and "volvo" in gone


def test_the_sitting_is_forty_turns_and_the_quick_one_ten() -> None:
    lines = [*PERSONA, *QUESTIONS, *UNKNOWNS]
    assert len(lines) + len(REQUESTS) == 40
    assert sum(q.kind == "direct" for q in QUESTIONS) == 8
    assert sum(q.kind == "indirect" for q in QUESTIONS) == 4
    assert sum(x.quick for x in [*lines, *REQUESTS]) == 10
    assert set(QUICK_FACTS) <= set(EXPECTED_FACTS)


def test_the_persona_states_every_fact_a_question_asks() -> None:
    told = " ".join(line.said for line in PERSONA)
    for question in QUESTIONS:
        assert holds_any(told, question.keys), question.said


def test_a_table_row_per_model() -> None:
    run = ModelRun("tiny.gguf", "90 MiB", {})
    run.turns = [
        TurnResult("office", "direct", "What's my name?", "Marta.", 0.5, right=True),
        TurnResult("office", "unknown", "Son?", "Daniel.", 1.5, right=False, invented=["Daniel"]),
    ]
    row = table_row(run)
    assert row.startswith("| tiny.gguf | 90 MiB | 1/1 (0 indirect) | 0/1 | 1 | 0/2 |")
    assert "not current" in row and "| 1.0/1.4 |" in row
    assert percentile([1.0, 2.0, 3.0], 0.5) == 2.0


def test_world_names_and_laughs_are_no_personal_details() -> None:
    assert invented_details("Lisbon, Portugal, is warm in August.", SAID) == []
    assert invented_details("Hehehe! You're lucky, I'll tell you. Tell me more.", SAID) == []
    assert invented_details("The dog El Fuego barks.", SAID) == ["El", "Fuego"]
    assert invented_details("The user's name was Akira.", SAID) == ["Akira"]


def test_accented_words_not_said_are_foreign() -> None:
    assert foreign_words("Saludos maíz de amigo, el turmo.")
    assert foreign_words("Café au lait is fine.") == []


def test_nonsense_about_the_request_is_no_confirmation() -> None:
    reply = "It seems it happened years ago when you mentioned allergies, but nothing has changed."
    assert claim_of(reply) is Claim.NONE
    assert claim_of("I've removed your allergy from my memory.") is Claim.DONE
    assert invented_details("Mimi is called Mimi, and your dog Mimi too.", SAID) == ["Mimi"]


def test_a_family_of_its_own_speaks_as_a_person() -> None:
    assert odd_reasons("My brother is a pastry chef.", "Hi", ["Marta"])
    assert odd_reasons("My pleasure, Marta!", "Thanks", ["Marta"]) == []


def test_a_stray_i_dont_know_is_no_confirmation() -> None:
    reply = "For example, \"I'm allergic to peanuts and I don't know why\" could be rephrased."
    assert claim_of(reply) is Claim.NONE
    assert claim_of("I don't have anything about a car.") is Claim.NOT_DONE


def test_a_read_back_waiting_for_a_yes_is_a_question_to_confirm() -> None:
    from scripts.conversation_judging import asks_to_confirm

    assert asks_to_confirm('I have this note: you like tea. Say "yes" and I\'ll forget it.')
    assert not asks_to_confirm("I forgot 1 fact: you like tea.")


def test_the_servers_own_say_yes_is_no_invented_detail() -> None:
    reply = 'I have this note: you have a beagle named Biscuit. Say "yes" and I\'ll change it.'
    said = ["We have a beagle named Biscuit.", "Actually my dog is called Pretzel now."]
    assert invented_details(reply, said) == []


def test_every_sentence_of_an_answer_about_the_person_is_judged() -> None:
    asked = [*SAID, "I'm stuck late at work, who could pick up our daughter today?"]
    lindsay = "Lindsay, the one who's been working on the machine for a long time."
    assert invented_details(lindsay, asked) == []  # said of no one, in general chat
    assert invented_details(lindsay, asked, answer=True) == ["Lindsay"]
