"""Answers from memory, without the model: a question about the person whose answer one of
the facts retrieved for it holds is answered with that fact's own words, turned to the second
person ("What is my dog called?" with "The user has a dog called Biscuit" -> "You have a dog
called Biscuit.").

Why: the small default model copies names badly from its prompt (measured on SmolLM2-135M: 2 of
3 greedily, 0 of 3 with sampling: "Biscuzzle" for "Biscuit"), while the fact's words are the
ones the person said. A bigger model would say the same thing, so the rule costs nothing
there, and the turn is faster (no generation).

Only clear cases: the text is a question (a question mark, or a question word or auxiliary
first) about the person (my / our / I / we), it is not a request for advice ("how do I ...",
"what should I ..."), and every word it asks about is in the fact (other endings and a few
synonyms count: "name" is "called" or "named", or a name in the fact: "What's my partner
called?" with "The user's partner Jonas is a carpenter"; the thing a "which"/"what" asks for
is what the fact names: "Which instrument do I play?" with "The user plays the cello").
Anything else goes to the model as before.

A model that is not trusted with what it says of the person (the tiny default, which
invented "Your son's name is Daniel." and "Alec is a golden retriever"; `memory_only`) is not
asked about the person at all where the facts can answer: what they hold of the thing asked
about ("my daughter") is read out, and a thing none of them mentions is said unknown ("You
haven't told me about your son."), as is a "what"/"which" question that no fact answers.
Nor is it asked to answer a turn that only tells about the person: their words are said
back ("Got it: you and your family have a beagle named Biscuit."), where the tiny model
answered "No, no, no! I'm not Marta. I'm a Loomi" and "We've got a lovely dog here with a
name: Biscuzzie" (`acknowledgement`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from lobug.language.fillers import without_lead_in
from lobug.language.questions import (
    ABOUT_THE_PERSON,
    ADVICE,
    ASKED_THING,
    ASKING_WORDS,
    KINDS,
    NAME_IN_FACT,
    NAME_WORDS,
    POSSESSED,
    QUESTION_OPENERS,
    REMEMBERING,
    SYNONYMS,
    WH_OPENERS,
    YES_NO,
)
from lobug.language.text import (
    FUNCTION_WORDS,
    fact_said_to_the_user,
    sentences_of,
    words_of,
)
from lobug.memory.disclosure import known_names, said_sentences, self_disclosures
from lobug.store.models import ScoredFact

MAX_READ_OUT = 2
NEAREST_SIMILARITY = 0.15  # `nearest_fact`
NEAREST_MARGIN = 2.0
MAX_ASIDE_WORDS = 2  # "Hi!", "Oh, okay.": said beside a statement, not a turn of its own


def answer_from_memory(
    said: str,
    facts: Sequence[ScoredFact],
    *,
    memory_only: bool = False,
    said_before: Sequence[str] = (),
) -> str | None:
    """The server's own answer to a turn, no model asked: a fact's words for a question they
    answer (`answer_from_facts`); for a `memory_only` model also what memory holds or an
    unknown, and a statement about the person said back (`acknowledgement`; `said_before`:
    the person's earlier words in this conversation, whose names count as known before
    they are learned)."""
    answer = answer_from_facts(said, facts, memory_only=memory_only)
    if answer is None and memory_only:
        return acknowledgement(said, facts, said_before)
    return answer


def answer_from_facts(
    question: str, facts: Sequence[ScoredFact], *, memory_only: bool = False
) -> str | None:
    """The answer to `question` from the first of `facts` (best first) that holds it; None
    when the question is not one this rule answers or no fact holds every word asked about.
    `memory_only`: the model is not to be asked about the person, so a question about them
    that no fact answers gets what the facts hold of its thing, or is said unknown."""
    asked = asked_words(question)
    if not asked:
        return advice_from_memory(question, facts) if memory_only else None
    contents = [hit.fact.content for hit in facts]
    fact = next((c for c in contents if holds(bare_words(c), asked)), None)
    if fact is None:
        thing = asked_thing(question)
        fact = next((c for c in contents if holds_with_names(c, asked, thing)), None)
    if fact is not None:
        answer = fact_said_to_the_user(fact)
        return f"Yes. {answer}" if YES_NO.match(plain(question)) else answer
    return from_memory_only(question, facts, asked) if memory_only else None


def from_memory_only(
    question: str, facts: Sequence[ScoredFact], asked: Sequence[str]
) -> str | None:
    """For a model not asked about the person, a question about them no fact answers whole.
    One that asks for something they said (a what/which/who question, or one that asks to
    remember) gets the facts that mention what it asks about ("my daughter") read out, "You
    haven't told me about your son." when none does, and "You haven't told me that yet." when
    it names no such thing and no fact holds a word of it. Any other question gets the fact
    clearly nearest in meaning ("anything I should stay away from?": the peanut allergy), if
    one is; else None (the model answers, checked by the reply guard)."""
    contents = [hit.fact.content for hit in facts]
    text = plain(question)
    words = bare_words(text)
    if not (words[0] in WH_OPENERS or REMEMBERING.intersection(words)):
        return nearest_fact(facts)  # "And my mother?" after "What should I bring my sister?"
    possessed = [w for w in POSSESSED.findall(text) if w not in FUNCTION_WORDS]
    if possessed:
        about = [c for c in contents if holds(bare_words(c), possessed)][:MAX_READ_OUT]
        if about:
            said = " ".join(fact_said_to_the_user(c) for c in about)
            return f"Here's what I know: {lower_you(said)}"
        if possessed[0] in NAME_WORDS:  # "Do you remember my name?"
            return "You haven't told me your name."
        return f"You haven't told me about your {possessed[0]}."
    if any(holds(bare_words(c), [word]) for c in contents for word in asked):
        return None
    return "You haven't told me that yet."


def advice_from_memory(said: str, facts: Sequence[ScoredFact]) -> str | None:
    """For a model not asked about the person, a request for advice about something of
    theirs ("Should I pack shorts or a winter coat for our holiday?") gets the fact clearly
    nearest in meaning when that fact holds the thing ("... off to Lisbon in August for their
    summer holiday", 0.20 against 0.01): what the advice must weigh, which the small model
    left out ("pack a warm hat"). Advice about nothing of theirs ("How long should I boil an
    egg?") stays the model's."""
    questions = [s for s in sentences_of(said) if is_question(s)]
    text = plain(questions[-1]) if questions else ""
    if not ADVICE.match(text):
        return None
    possessed = [w for w in POSSESSED.findall(text) if w not in FUNCTION_WORDS]
    nearest = clearly_nearest(facts)
    if nearest is None or not any(holds(bare_words(nearest), [w]) for w in possessed):
        return None
    return f"From what you told me: {lower_you(fact_said_to_the_user(nearest))}"


def nearest_fact(facts: Sequence[ScoredFact]) -> str | None:
    """The fact clearly nearest in meaning to the question, said back, or None."""
    nearest = clearly_nearest(facts)
    if nearest is None:
        return None
    return f"From what you told me: {lower_you(fact_said_to_the_user(nearest))}"


def clearly_nearest(facts: Sequence[ScoredFact]) -> str | None:
    """The content of the fact nearest in meaning to the question when it is clearly so: at
    least `NEAREST_SIMILARITY` and `NEAREST_MARGIN` times any other's (measured on a
    persona's facts: the allergy 0.33 against 0.14 for "anything I should stay away from?";
    the daughter 0.27 against 0.23 for "who could pick up our daughter?", left to the model)."""
    ranked = sorted(facts, key=lambda hit: hit.similarity, reverse=True)
    if not ranked or ranked[0].similarity < NEAREST_SIMILARITY:
        return None
    if len(ranked) > 1 and ranked[0].similarity < NEAREST_MARGIN * ranked[1].similarity:
        return None
    return ranked[0].fact.content


def acknowledgement(
    said: str, facts: Sequence[ScoredFact] = (), said_before: Sequence[str] = ()
) -> str | None:
    """What a turn that only tells about the person, or about someone `facts` or their
    words `said_before` name ("Lina also loves drawing"), is answered with by a model not
    trusted with them: the statements said back; a greeting beside them ("Hi!") changes
    nothing. None for any other turn (a question, a request, chitchat: the model's)."""
    known = known_names([*(hit.fact.content for hit in facts), *said_before])
    told = []
    for sentence in said_sentences(said):
        stated = self_disclosures(sentence, (), known)
        if stated:
            told.append(fact_said_to_the_user(stated[0].content))
        elif len(words_of(sentence)) > MAX_ASIDE_WORDS or is_question(sentence):
            return None
    if not told:
        return None
    return f"Got it: {lower_you(' '.join(told))}"


def lower_you(said: str) -> str:
    """`said` to follow a colon: "You ..." / "Your ..." in lower case, a name as it is."""
    return re.sub(r"^(You|Your)\b", lambda m: m.group(1).lower(), said)


def asked_thing(question: str) -> str | None:
    """What a "which"/"what" question asks for ("Which instrument do I play?" -> instrument),
    or None."""
    match = ASKED_THING.match(plain(question))
    if match is None or match.group(1) in FUNCTION_WORDS:
        return None
    return match.group(1)


def holds_with_names(fact: str, asked: Sequence[str], thing: str | None) -> bool:
    """Whether `fact` answers the question: it holds every word asked about but the `thing`
    asked for, a name standing for "name"/"called" (something else must be asked about too:
    any name does not answer "What's my name?")."""
    wanted = [w for w in asked if w != thing]
    topics = [w for w in wanted if w not in NAME_WORDS]
    if not topics or not holds(bare_words(fact), topics):
        return False
    return len(topics) == len(wanted) or bool(NAME_IN_FACT.search(fact))


def asked_words(said: str) -> list[str]:
    """What the question `said` asks about the person (its content words), or [] when it is
    no such question. Only the last question of several sentences counts: "My favourite
    food is pizza. Can you suggest a recipe?" asks for advice, not about the person."""
    questions = [s for s in sentences_of(said) if is_question(s)]
    return _asked_about_them(questions[-1]) if questions else []


def is_question(sentence: str) -> bool:
    """A question mark, or a question word or auxiliary first (whisper often leaves the
    mark out: "what's my dog's name")."""
    text = plain(sentence)
    words = bare_words(text)
    return bool(words) and (
        sentence.rstrip().endswith("?") or words[0] in QUESTION_OPENERS or bool(YES_NO.match(text))
    )


def _asked_about_them(question: str) -> list[str]:
    text = plain(question)
    words = bare_words(text)
    if ADVICE.match(text) or not ABOUT_THE_PERSON.intersection(words):
        return []
    return [w for w in words if w not in FUNCTION_WORDS and w not in ASKING_WORDS]


def bare_words(text: str) -> list[str]:
    """Lower-case words without a possessive or contracted "'s" ("dog's" -> "dog", "what's"
    -> "what")."""
    return [re.sub(r"'s$", "", word) for word in words_of(text.replace("’", "'"))]


def plain(text: str) -> str:
    """Lower case, curly apostrophes straightened, greetings and the wake word dropped."""
    return without_lead_in(text.lower().replace("’", "'").strip())


def holds(fact_words: Iterable[str], asked: Sequence[str]) -> bool:
    """Whether every asked word, or one of its synonyms, is among the fact's words."""
    present = set(fact_words)
    return all(any(same(word, w) for w in present) for word in asked)


def same(asked: str, fact_word: str) -> bool:
    from lobug.memory.extraction import same_word

    options = SYNONYMS.get(asked, (asked,)) + KINDS.get(asked, ())
    return any(same_word(option, fact_word) for option in options)
