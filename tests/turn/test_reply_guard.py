"""The reply guard on a turn: a refused reply is asked for once more, else the fallback is
said; the log marks it, and a fallback is never learned from (issue 18)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import pytest

from lobug.config import MemoryConfig, Settings
from lobug.language.claims import invented_details, known_words
from lobug.language.quality import CUT, is_learnable, without_stage_directions
from lobug.memory.manager import MemoryManager
from lobug.store.sqlite.engine import SQLiteStore
from lobug.turn.assistant import Assistant
from lobug.turn.decision import Decision
from lobug.turn.reply_guard import (
    FALLBACK_REPLY,
    NOT_DONE_REPLY,
    UNKNOWN_REPLY,
    GuardedReply,
    Refusal,
    ReplyGuard,
    careful_messages,
    text_chunks,
)
from lobug.turn.spoken import sentences
from tests.fakes import FakeChat, FakeEmbedder

LOOP = "Oo, oo, oo, oo, oo, oo, oo, oo, oo, oo, oo, oo"
PORTUGUESE = "Não pode ser mais difícil que estejo também já esta deixar com Joana!"
GOOD = "Lisbon is lovely. How long have you lived there with Joana?"
# Replies of the tiny default model in a new user's evening (issue 41).
ROLE_PLAY = "El Fuego: Lisbon is lovely, my friend."
STAGE = "(repeat of your message) Lisbon is lovely."
MIXED = "Lisbon is lovely. Lo que la buen noche debe leer es el pino de leer."


@pytest.fixture
def assistant(
    settings: Settings, store: SQLiteStore, fake_chat: FakeChat, fake_embedder: FakeEmbedder
) -> Assistant:
    memory = MemoryManager(store, fake_chat, fake_embedder, MemoryConfig())
    return Assistant(settings, store, memory, fake_chat, fake_embedder)


def test_a_sane_reply_is_asked_for_once(assistant: Assistant, fake_chat: FakeChat) -> None:
    fake_chat.enqueue(GOOD)
    turn = assistant.reply("desk", "I live in Lisbon with my partner Joana.")
    assert turn.response == GOOD and len(fake_chat.chat_requests()) == 1
    assert turn.assistant_message is not None and turn.assistant_message.metadata is None


@pytest.mark.parametrize("refused", [LOOP, PORTUGUESE, ROLE_PLAY, "(nods)", "*smiles*"])
def test_a_refused_reply_is_asked_for_again_with_safer_settings(
    assistant: Assistant, fake_chat: FakeChat, refused: str
) -> None:
    fake_chat.enqueue(refused, GOOD)
    turn = assistant.reply("desk", "I live in Lisbon with my partner Joana.")
    assert turn.response == GOOD
    second = fake_chat.chat_requests()[1]
    assert "Write in English only." in second[-1]["content"]  # after the person's words
    assert turn.assistant_message is not None
    assert turn.assistant_message.metadata is not None
    assert turn.assistant_message.metadata["guard"] == "regenerated"
    assert is_learnable(turn.assistant_message.metadata)


@pytest.mark.parametrize(
    ("acted", "said"),
    [
        (STAGE, "Lisbon is lovely."),
        ("(smiling warmly)\nLisbon is lovely.", "Lisbon is lovely."),
        ("Lisbon is lovely. *smiles* How long?", "Lisbon is lovely. How long?"),
        ("Lisbon is lovely. [laughs] Is Joana well?", "Lisbon is lovely. Is Joana well?"),
    ],
)
def test_a_stage_direction_is_left_out_of_a_reply_asked_for_once(
    assistant: Assistant, fake_chat: FakeChat, acted: str, said: str
) -> None:
    """The tiny default model opened about one reply in ten with its acting ("(turning to the
    user with a smile) I'm glad you asked that!"): the words are said, the model asked once."""
    fake_chat.enqueue(acted, GOOD)
    turn = assistant.reply("desk", "I live in Lisbon with my partner Joana.")
    assert turn.response == said and len(fake_chat.chat_requests()) == 1


def test_brackets_within_a_sentence_are_no_stage_direction() -> None:
    kept = "Preheat the oven (180 C) and mix the flour in. Bake it (covered) for an hour."
    assert without_stage_directions(kept) == kept


def test_a_reply_refused_after_a_good_sentence_keeps_it_without_asking_again(
    assistant: Assistant, fake_chat: FakeChat
) -> None:
    """A text turn is a streamed turn read whole: what passed stands, marked cut, as it would
    have been said by voice; the model is asked once."""
    fake_chat.enqueue(MIXED, GOOD)
    turn = assistant.reply("desk", "I live in Lisbon with my partner Joana.")
    assert turn.response == "Lisbon is lovely."
    assert len(fake_chat.chat_requests()) == 1
    assert turn.assistant_message is not None and turn.assistant_message.metadata is not None
    assert turn.assistant_message.metadata["guard"] == CUT


def test_refused_twice_the_fallback_is_said_and_not_learned_from(
    assistant: Assistant, fake_chat: FakeChat, store: SQLiteStore
) -> None:
    fake_chat.enqueue(LOOP, PORTUGUESE)
    turn = assistant.reply("desk", "I am allergic to peanuts.")
    assert turn.response == FALLBACK_REPLY
    assert turn.exchange is not None  # the user's words are still learned from
    logged = store.recent_messages("lobug", "desk", 2)
    assert [m.content for m in logged] == ["I am allergic to peanuts.", FALLBACK_REPLY]
    problem = "degenerate: under 30% distinct words"
    assert logged[1].metadata == {"guard": "fallback", "problem": problem}
    assert not is_learnable(logged[1].metadata)


def test_the_fallback_is_no_context_for_fact_extraction(
    assistant: Assistant, fake_chat: FakeChat
) -> None:
    fake_chat.enqueue(LOOP, LOOP)
    turn = assistant.reply("desk", "I am allergic to peanuts.")
    assert turn.user_message is not None and turn.assistant_message is not None
    fake_chat.enqueue(
        '{"facts": [{"fact": "The user is allergic to peanuts", "type": "identity"}, '
        '{"fact": "The user says oo, oo, oo, oo, oo", "type": "identity"}]}'
    )
    assistant.memory.process_exchange("lobug", turn.user_message, turn.assistant_message)
    (extraction,) = fake_chat.extraction_requests()
    assert extraction[-1]["content"] == "User: I am allergic to peanuts.\nAssistant: "
    facts = assistant.store.facts("lobug")
    assert [f.content for f in facts] == ["The user is allergic to peanuts"]


REFUSED_FIRST = f"{PORTUGUESE} And more."  # its first sentence is refused


def said_and_stored(assistant: Assistant, *replies: str) -> tuple[list[str], Decision]:
    """A streamed turn said sentence by sentence through its reply guard: what was said and
    the answer the log keeps (with the guard's marks)."""
    fake_chat = assistant.chat
    assert isinstance(fake_chat, FakeChat)
    fake_chat.enqueue(*replies)
    with assistant.reply_streaming("desk", "I live in Lisbon.") as streaming:
        said = list(streaming.guarded(said_sentences).passed(streaming.pieces()))
    message = streaming.turn.assistant_message if streaming.turn else None
    if message is None:
        return said, Decision("ignore", "")
    marks = message.metadata or {}
    return said, Decision("respond", message.content, marks.get("guard"), marks.get("problem"))


def said_sentences(pieces: Iterable[str]) -> Iterator[str]:
    return sentences(iter(pieces))


def test_a_streamed_answer_refused_before_anything_was_said_is_replaced_as_it_streams(
    assistant: Assistant, fake_chat: FakeChat
) -> None:
    said, stored = said_and_stored(assistant, REFUSED_FIRST, GOOD)
    assert said == ["Lisbon is lovely.", "How long have you lived there with Joana?"]
    assert (stored.text, stored.guard) == (GOOD, "regenerated")
    assert fake_chat.abandoned_streams == 1  # the refused answer's model was stopped
    second = fake_chat.chat_requests()[1]
    assert second[-1]["content"].endswith("never repeat yourself.)")  # the careful rule


def test_a_second_try_refused_at_its_first_sentence_says_the_fallback(
    assistant: Assistant, fake_chat: FakeChat
) -> None:
    said, stored = said_and_stored(assistant, REFUSED_FIRST, REFUSED_FIRST)
    assert said == [FALLBACK_REPLY]
    assert (stored.text, stored.guard) == (FALLBACK_REPLY, "fallback")
    assert fake_chat.abandoned_streams == 2  # both models stopped


def test_a_second_try_refused_after_a_good_sentence_keeps_it(
    assistant: Assistant, fake_chat: FakeChat
) -> None:
    said, stored = said_and_stored(assistant, REFUSED_FIRST, f"Lisbon is lovely. {REFUSED_FIRST}")
    assert said == ["Lisbon is lovely."]
    assert (stored.text, stored.guard) == ("Lisbon is lovely.", CUT)
    assert fake_chat.abandoned_streams == 2


def test_a_second_try_that_says_nothing_says_the_fallback(
    assistant: Assistant, fake_chat: FakeChat
) -> None:
    said, stored = said_and_stored(assistant, REFUSED_FIRST, "[IGNORE]")
    assert said == [FALLBACK_REPLY] and stored.guard == "fallback"


def test_a_barge_in_during_the_second_try_keeps_what_was_heard_of_it(
    assistant: Assistant, fake_chat: FakeChat
) -> None:
    fake_chat.enqueue(REFUSED_FIRST, GOOD)
    with assistant.reply_streaming("desk", "I live in Lisbon.") as streaming:
        heard = next(streaming.guarded(said_sentences).passed(streaming.pieces()))
        streaming.interrupt(heard)
    assert heard == "Lisbon is lovely."
    turn = streaming.turn
    assert turn is not None and turn.response == "Lisbon is lovely."
    assert turn.assistant_message is not None
    assert turn.assistant_message.metadata == {"guard": "cut", "problem": "interrupted"}
    assert fake_chat.abandoned_streams == 2  # the refused answer's model, the second try's


def test_a_streamed_answer_cut_after_good_sentences_keeps_them(
    assistant: Assistant, fake_chat: FakeChat
) -> None:
    fake_chat.enqueue(GOOD + " " + LOOP)
    with assistant.reply_streaming("desk", "I live in Lisbon.") as streaming:
        next(iter(streaming.pieces()))
        replacement = streaming.refuse("degenerate: a loop", "Lisbon is lovely.")
        assert replacement is not None and replacement.guard == "cut"
    turn = streaming.turn
    assert turn is not None and turn.response == "Lisbon is lovely."
    assert turn.assistant_message is not None and turn.assistant_message.metadata == {
        "guard": "cut",
        "problem": "degenerate: a loop",
    }


def test_careful_messages_add_the_rule_after_the_persons_words() -> None:
    messages = [
        {"role": "system", "content": "You are Lo-Bug."},
        {"role": "user", "content": "hi"},
    ]
    careful = careful_messages(messages, "en")
    assert careful[0] == messages[0]  # the cached prompt's start is left as it was
    assert careful[1]["content"].startswith("hi\n\n(Write in English only.")
    assert messages[1]["content"] == "hi"  # not changed in place
    after_a_reply = careful_messages([*messages, {"role": "assistant", "content": "Hey"}], "auto")
    assert after_a_reply[0]["content"].startswith("You are Lo-Bug.\nReply in one or two")
    assert after_a_reply[1:] == [*messages[1:], {"role": "assistant", "content": "Hey"}]


@pytest.mark.parametrize(
    ("pieces", "chunks"),
    [
        (["Hel", "lo. Ho", "w are", " you?"], ["Hello. ", "How are you?"]),
        (
            ["One.", " Two!", "\n", "- three\n", "- four"],
            ["One. ", "Two!\n", "- three\n", "- four"],
        ),
        (["Fine."], ["Fine."]),
        (["word "] * 50, ["word " * 41, "word " * 9]),
        (["no-spaces-" * 30], ["no-spaces-" * 30]),
    ],
)
def test_text_chunks_end_at_sentences_and_keep_every_character(
    pieces: list[str], chunks: list[str]
) -> None:
    assert list(text_chunks(pieces)) == chunks


def test_a_chunk_is_refused_alone_or_after_what_was_said() -> None:
    guard = ReplyGuard("en")
    assert guard.chunk_problem("", "That sounds lovely. ") is None
    assert guard.chunk_problem("", PORTUGUESE) is not None
    assert guard.chunk_problem("I see. I see. ", "I see. ") is not None


def refusal_kept(calls: list[tuple[str, str]], replacement: Decision) -> Refusal:
    def refused(problem: str, said: str) -> Decision:
        calls.append((problem, said))
        return replacement

    return refused


def test_the_guarded_loop_says_what_passes_and_stops_at_the_first_refused_piece() -> None:
    calls: list[tuple[str, str]] = []
    cut = Decision("respond", "That sounds lovely.", CUT, "a loop")
    reply = GuardedReply(ReplyGuard("en"), refusal_kept(calls, cut), separator=" ")
    said = list(reply.passed(["That sounds lovely.", "I see.", "I see.", "I see.", "Never."]))
    assert said[0] == "That sounds lovely." and "Never." not in said
    assert len(calls) == 1 and calls[0][1] == " ".join(said)  # what was said, as heard
    assert reply.decision() == cut


def test_the_guarded_loop_says_the_replacement_when_nothing_was_said() -> None:
    calls: list[tuple[str, str]] = []
    again = Decision("respond", GOOD, "regenerated", "wrong language")
    reply = GuardedReply(ReplyGuard("en"), refusal_kept(calls, again))
    assert list(reply.passed([PORTUGUESE, "never read"])) == [GOOD]
    assert calls == [(calls[0][0], "")] and reply.decision() == again


def test_the_guarded_loop_without_a_refusal_stores_what_was_said() -> None:
    reply = GuardedReply(ReplyGuard("en"), refusal_kept([], Decision("ignore", "")))
    assert "".join(reply.passed(["Fine, ", "thanks."])) == "Fine, thanks."
    assert reply.decision() == Decision("respond", "Fine, thanks.")


KNOWN = known_words(["The user has a dog called Biscuit.", "What is my dog's name?"])


@pytest.mark.parametrize(
    ("reply", "invented"),
    [
        ("Your dog's name is Biscuzzle.", ["Biscuzzle"]),
        ("Can't wait to hear about your adventures with NASA!", ["NASA"]),
        ("You were born in Bergelmar in 1984.", ["Bergelmar", "1984"]),
        ("Your dog is called Biscuit.", []),
        ("You could visit the Louvre one day.", []),  # advice, not a claim
        ("Have you been to Rome?", []),  # a question claims nothing
        ("Paris is lovely in spring.", []),  # not about the person
        ("Sure! Your dog Biscuit sounds lovely.", []),
        ("You've got great taste in food.", []),  # a contraction of "you" is no name
        ("You'd like the park.", []),
        ("He's right, you've met Biscuit.", []),
        ("Alright, your dog is lovely.", []),  # an opener, not a name
        ("Today you walked Biscuit.", []),
        # "you" acted on, not acting: no claim about them.
        ("I'd be happy to help you find some delicious Italian recipes!", []),
        ("I can tell you that Bella Vita serves pizza.", []),
        ("I think you live in Bergelmar.", ["Bergelmar"]),  # "you" acting after a verb
        ("A friend of yours lives in Oslo.", ["Oslo"]),
        ("Packing light, you will enjoy the hills.", []),  # an -ing form opens the sentence
        ("Hiking with Biscuit, you met Tobias.", ["Tobias"]),
    ],
)
def test_a_claim_about_the_person_names_only_what_the_prompt_holds(
    reply: str, invented: list[str]
) -> None:
    assert invented_details(reply, KNOWN) == invented


def test_a_turn_whose_reply_invents_a_detail_says_it_does_not_know(
    assistant: Assistant, fake_chat: FakeChat
) -> None:
    fake_chat.enqueue("Your son is called Maximilian.", "Your son Tobias is lovely.")
    turn = assistant.reply("desk", "Tell me about my son")
    assert turn.response == UNKNOWN_REPLY
    assert turn.assistant_message is not None
    assert turn.assistant_message.metadata == {
        "guard": "fallback",
        "problem": "invented: Maximilian",
    }


def test_an_answer_about_the_person_that_invents_is_not_asked_for_twice(
    assistant: Assistant, fake_chat: FakeChat
) -> None:
    """SmolLM2-135M asked again made something up again, and the person waited twice."""
    fake_chat.enqueue("Your son is called Maximilian.", "Your son Tobias is lovely.")
    turn = assistant.reply("desk", "Is my son still at school?")
    assert turn.response == UNKNOWN_REPLY
    assert len(fake_chat.chat_requests()) == 1


def test_advice_asked_after_news_about_the_person_may_name_things(
    assistant: Assistant, fake_chat: FakeChat
) -> None:
    fake_chat.enqueue("A classic Italian Margherita: tomatoes, mozzarella and basil.")
    said = "My favourite food is pizza with mushrooms. Can you suggest a good recipe?"
    turn = assistant.reply("desk", said)
    assert turn.response == "A classic Italian Margherita: tomatoes, mozzarella and basil."
    assert turn.assistant_message is not None and turn.assistant_message.metadata is None


def test_an_answer_about_the_person_is_checked_sentence_by_sentence() -> None:
    known = known_words(["The user drives a green Skoda Octavia.", "Which car do I drive?"])
    reply = "That's a classic. The latest Skoda, the 2018 model."
    assert invented_details(reply, known) == []  # no "you": not a claim in general chat
    assert invented_details(reply, known, answer=True) == ["2018"]


def test_a_speaker_label_is_refused_at_the_opening_only_and_asterisk_actions_anywhere() -> None:
    guard = ReplyGuard("en")
    assert guard.chunk_problem("", "El Fuego: I am a dog.") is not None
    assert guard.chunk_problem("", "Done: I forgot that.") is None
    assert guard.chunk_problem("Here is a recipe. ", "Eggs: two, beaten.") is None
    assert guard.chunk_problem("Hello! ", "*smiles* How are you?") is not None
    assert guard.problem("Preheat the oven (180 C) and mix the flour in.") is None
    assert guard.problem("Note that 3:30 works for me.") is None


def test_a_model_without_the_memorys_tools_may_not_claim_it_forgot(
    assistant: Assistant, fake_chat: FakeChat, store: SQLiteStore
) -> None:
    """ "Please don't remember my allergy anymore" (a phrasing the rules do not know) was
    answered "I'm sorry I forgot your allergies again." with nothing forgotten."""
    fake_chat.enqueue("I'm sorry I forgot your allergies again.", "Okay, I've deleted it.")
    turn = assistant.reply("desk", "Wipe the allergy thing from your head, would you?")
    assert turn.response == NOT_DONE_REPLY
    fake_chat.enqueue("I forgot to mention: tea is nice.")
    assert (
        assistant.reply("desk", "Tell me about tea").response == "I forgot to mention: tea is nice."
    )


def test_a_reply_speaking_as_the_person_is_refused() -> None:
    """The 0.5B model answered "I'm Marta from Riverside Clinic." to "I work as a nurse at the
    Riverside clinic", and "My son's name is Lina." to "What's my son's name?"."""
    known = known_words(["Marta", "Riverside", "Lina"])
    assert ReplyGuard("en", known).problem("I'm Marta from Riverside Clinic.") is not None
    answering = ReplyGuard("en", known, answer=True)
    assert answering.problem("My son's name is Lina.") is not None
    assert answering.problem("I'm sorry, I don't know. My pleasure to help.") is None
    assert ReplyGuard("en", known).problem("My favourite colour is blue, what's yours?") is None


@pytest.mark.parametrize(
    ("asked", "reply"),
    [
        # Refused on Qwen2.5-Coder-1.5B in the evaluation (issue 41): good answers.
        ("Can you give me a simple recipe for pancakes?", "1. Mix the flour. 2. Heat the pan."),
        ("How long should I boil an egg for a soft yolk?", "Boil it for 6 to 7 minutes."),
        (
            "Any idea what to get my daughter?",
            "Based on what you told me, your daughter Lina likes dinosaurs.",
        ),
        ("Which football team do I support?", "As an AI, I don't know your team yet."),
    ],
)
def test_good_answers_of_a_capable_model_pass_the_invented_details_check(
    asked: str, reply: str
) -> None:
    from lobug.turn.recall import asked_words

    known = known_words([asked, "The user's daughter Lina likes dinosaurs."])
    assert ReplyGuard("en", known, answer=bool(asked_words(asked))).problem(reply) is None


def test_a_name_opening_a_sentence_is_still_a_claim() -> None:
    known = known_words(["What's my son's name?"])
    assert ReplyGuard("en", known, answer=True).problem("Max is your son.") is not None
    assert ReplyGuard("en", known, answer=True).problem("Fido.") is not None


def test_a_name_before_a_comma_opening_an_answer_is_a_claim() -> None:
    """SmolLM2-135M, asked "who could pick up our daughter today?": "Lindsay, the one who's
    been working on the machine for a long time." (nobody told of a Lindsay)."""
    known = known_words(["Who could pick up our daughter today?"])
    answering = ReplyGuard("en", known, answer=True)
    lindsay = "Lindsay, the one who's been working on the machine for a long time."
    assert answering.problem(lindsay) == "invented: Lindsay"
    assert answering.problem("Unfortunately, I don't know who could.") is None
    assert answering.problem("Sure, your partner could.") is None


def test_in_german_a_name_given_that_memory_lacks_is_a_claim_and_the_fallback_is_german() -> None:
    """Qwen2.5-Coder-1.5B with LOBUG_LANGUAGE=de, asked about a cat and a dog it was never
    told of: "Deine Katze heißt Felix.", "Dein Hund heißt Max." (German writes every noun
    with a capital: only a name given in a naming phrase is read)."""
    known = known_words(["Wie heißt meine Katze?", "Der Benutzer hat einen Hund namens Bello"])
    german = ReplyGuard("de", known)
    assert german.problem("Deine Katze heißt Felix.") == "invented: Felix"
    assert german.problem("Dein Hund heißt Bello.") is None
    assert german.problem("Du kannst ihr ein Buch über Dinosaurier schenken.") is None
    said = german.fallback("invented: Felix", None)
    assert said.text == "Das weiß ich noch nicht. Erzähl es mir, dann merke ich es mir."
    assert ReplyGuard("en", known).fallback("invented: Felix", None).text == UNKNOWN_REPLY
