"""The one word splitter and the one sentence splitter (`lobug.language.text`), Unicode-aware, the
ends of a reply still arriving, the third-person rewrite, and what rests on them."""

from __future__ import annotations

from lobug.language.text import (
    ARRIVING_SENTENCE_END,
    CLAUSE_END,
    PHRASE_START,
    SENTENCE_END,
    sentences_of,
    third_person,
    word_tokens,
    words_of,
)
from lobug.memory.disclosure import self_disclosures
from lobug.memory.extraction import is_grounded


def test_words_are_letters_and_digits_of_any_script_with_inner_apostrophes() -> None:
    assert words_of("Zoë Müller's dog, well-known_x: 42!") == [
        "zoë",
        "müller's",
        "dog",
        "well",
        "known",
        "x",
        "42",
    ]
    assert word_tokens("Ich heiße Jürgen") == ["Ich", "heiße", "Jürgen"]


def test_a_name_outside_ascii_is_grounded_as_one_word() -> None:
    """The old ASCII splitter read "Jürgen Müller" as "rgen" and "ller", so the true fact was
    not grounded and was dropped."""
    said = ["My neighbour is called Jürgen Müller."]
    assert is_grounded("The user's neighbour is called Jürgen Müller", said)
    assert not is_grounded("The user's neighbour is called Jürgen Mahler", said)


def test_a_sentence_goes_on_past_a_title_or_an_abbreviation() -> None:
    """Issue 41: "The user works as a pediatric nurse at St" was stored from "... at St.
    Mary's ..."."""
    said = "I work at St. Mary's with Dr. Okafor and Mrs. Li, e.g. on nights. Then I sleep!"
    assert sentences_of(said) == [
        "I work at St. Mary's with Dr. Okafor and Mrs. Li, e.g. on nights.",
        " Then I sleep!",
    ]
    assert sentences_of("It costs 3.5 euros. Fine") == ["It costs 3.5 euros.", " Fine"]
    assert sentences_of('She said "stop." Then? ') == ['She said "stop."', " Then?"]


def test_a_disclosed_fact_is_the_whole_sentence() -> None:
    said = "I work as a pediatric nurse at St. Mary's hospital. Mr. Chen is my boss."
    facts = [f.content for f in self_disclosures(said, (1, 2))]
    assert facts[0] == "The user works as a pediatric nurse at St. Mary's hospital"
    assert facts[1:] == ["Mr. Chen is the user's boss"]


def test_someone_and_i_are_the_user_and_them() -> None:
    assert third_person("Tomás and I are going to Lisbon") == (
        "Tomás and the user are going to Lisbon"
    )
    assert (
        third_person("My sister and I have a boat") == "the user's sister and the user have a boat"
    )
    assert third_person("I ski, my wife Ana and I are fit") == (
        "the user skis, the user's wife Ana and the user are fit"
    )
    assert third_person("I like tea and I work at NASA") == (
        "the user likes tea and the user works at NASA"
    )


def test_a_sentence_still_arriving_ends_only_once_the_space_after_it_has_come() -> None:
    """Unlike written text's `SENTENCE_END`, the arriving one holds the space after the mark:
    at the end of what has come, "3." may yet become "3.5"."""
    ends = [m.end() for m in ARRIVING_SENTENCE_END.finditer("It costs 3.5 euros. Fine")]
    assert ends == [len("It costs 3.5 euros. ")]
    assert [m.end() for m in ARRIVING_SENTENCE_END.finditer("It is 3.")] == [len("It is 3.")]
    assert [m.end() for m in SENTENCE_END.finditer("It is 3.")] == [len("It is 3.")]
    said = 'Sure… "Done!" Next\nline'
    assert [m.group() for m in ARRIVING_SENTENCE_END.finditer(said)] == ["… ", '!" ', "\n"]


def test_a_first_clause_ends_at_a_mark_and_its_space_and_a_phrase_starts_before_its_word() -> None:
    assert [m.group() for m in CLAUSE_END.finditer("Sure, well; 3:30 and 3:  x")] == [
        ", ",
        "; ",
        ":  ",
    ]
    said = "It's a lovely day With a breeze in the park"
    assert [said[m.end() :] for m in PHRASE_START.finditer(said)] == [
        "With a breeze in the park",
        "in the park",
    ]
    assert PHRASE_START.search("Sandy landing") is None  # whole words only
