"""Whether the words heard so far end a whole turn, in English: the word rules behind the
turn's end (`lobug.voice.endpointing`), which decide where no turn-end model answers and
agree with it where one does. The silence a turn waits is the endpointer's; whether the
words leave the sentence open is this module's:

- Words that end with ". ? !" are whole: the person said something whole; but whisper ends
  what it hears with a full stop even when the person paused mid-sentence ("I would like to
  call."), so a sentence whose last word leaves it open (`OPEN_ENDINGS`: an article, a
  preposition, a conjunction, "to", or a verb that wants its object, "call", "buy", "visit")
  counts as unfinished: it costs such a sentence, when it was whole, the long wait, never
  the turn.
- A subject or an auxiliary at the end ("My wife and I ...", "Can you ...") leaves it open
  too, except where it closes a sentence people say whole every day: "Thank you."
  (`you_as_object`), "How are you?", "What do I have?" (`whole_question`); "What would
  you ...?" stays open (its verb is still to come).
- Words without a full stop are whole only as a one-word reply ("yes", "stop",
  `ONE_WORD_REPLIES`).
- A sentence that is only a short subject ("My favourite colour.", "The weather tomorrow.",
  `subject_alone`) is open: its predicate is still to come; so is a request that has not
  reached its verb ("Could you please.", `verb_to_come`), and one where whisper heard a
  greeting where "to" wants a verb ("Can you remind me to bye?": "buy" before a pause).
"""

from __future__ import annotations

import re

from lobug.language.text import words_of

LAST_SENTENCE = re.compile(r"[^.?!。？！]+[.?!。？！]*")
SENTENCE_END = re.compile(r"[.?!。？！]['\")\]]*\s*$")
# articles, possessives, prepositions, conjunctions and "to"
LINKING_WORDS = frozenset(
    "a an the my your our their his its this that these those some any every "
    "to of in on at for with about from into onto by as than like "
    "and or but so because if when while that which who whose where".split()
)
# verbs that want an object, said before it in a pause ("I'd like to call ... Anna")
OBJECT_VERBS = frozenset(
    "call buy visit get bring tell ask send take make book order remind find meet see "
    "show give put set play watch read text email".split()
)
OPEN_ENDINGS = LINKING_WORDS | OBJECT_VERBS
SUBJECTS = frozenset("i we you they he she".split())
# Verbs that want a thing after the person ("Remind me ... to call Anna", "Give her ... the
# keys"): the person alone leaves the sentence open. Whisper heard "Remind me in (700 ms)
# twenty minutes" as "Remind me." in 1 of 12 pause turns, for both codes of two runs.
THING_AFTER_PERSON = frozenset("remind give send bring".split())
PERSONS = frozenset("me us him her them".split())
POINTERS = SUBJECTS | frozenset("it this that these those there".split())
BE = frozenset("is are was were am".split())
AUXILIARIES = BE | frozenset(
    "be been being do does did have has had will would can could should shall may might "
    "must".split()
)
INTERJECTIONS = frozenset("hi hello bye goodbye yes no thanks".split())  # never a verb after "to"
# Said alone, whole: whisper often writes them without a full stop ("yes", "louder").
ONE_WORD_REPLIES = INTERJECTIONS | frozenset("yeah yep nope stop louder quieter".split())
DETERMINERS = frozenset("the my your our his her their this these those".split())
SOFTENERS = frozenset("please just maybe perhaps also kindly quickly".split())
SUBJECT_WORDS = 3  # the most words a subject said alone has ("My favourite colour")
QUESTION_WORDS = frozenset("what who where when how why which whose".split())


def finished(words: str) -> bool:
    """Whether `words` end a sentence that is whole (see the module); only the last sentence
    counts."""
    sentences = LAST_SENTENCE.findall(words)
    said = words_of(sentences[-1]) if sentences else []
    end = SENTENCE_END.search(words)
    if end is None:
        return len(said) == 1 and said[0] in ONE_WORD_REPLIES
    asked = "?" in end[0] or "？" in end[0]
    if (asked and whole_question(said)) or you_as_object(said):
        return True
    if subject_alone(said, asked=asked) or verb_to_come(said):
        return False
    if len(said) > 1 and said[-2] == "to" and said[-1] in INTERJECTIONS:
        return False  # "remind me to bye?": "to" wants a verb, whisper misheard it ("buy")
    if thing_to_come(said):
        return False
    last = said[-1] if said else ""
    return last not in OPEN_ENDINGS and last not in SUBJECTS and last not in AUXILIARIES


def whole_with_a_full_stop(words: str) -> bool:
    """Words without an end mark that would be a whole sentence with one: whisper now and
    then drops the last full stop ("... with my dog. and now i am tired")."""
    return SENTENCE_END.search(words) is None and finished(f"{words}.")


def thing_to_come(sentence: list[str]) -> bool:
    """ "Remind me ...", "Can you give her ...": a verb that wants a thing after the person,
    with the person last; unless a question word asks for the thing ("What should I bring
    her?")."""
    return (
        len(sentence) > 1
        and sentence[-2] in THING_AFTER_PERSON
        and sentence[-1] in PERSONS
        and sentence[0] not in QUESTION_WORDS
    )


def verb_to_come(sentence: list[str]) -> bool:
    """A request begun with an auxiliary and its subject and nothing but softeners after
    them ("Could you please ...", "Can you just ..."): its verb is still to come."""
    return (
        len(sentence) >= 2
        and sentence[0] in AUXILIARIES
        and sentence[1] in SUBJECTS
        and all(word in SOFTENERS for word in sentence[2:])
    )


def subject_alone(sentence: list[str], *, asked: bool) -> bool:
    """A sentence of a few words that is only a subject, a determiner and a noun or two with
    no verb ("My favourite colour ...", "My sister ...", "The weather tomorrow ..."): its
    predicate is still to come. Whisper writes such a half with a full stop, and even hears
    "My favourite colour is" as "My favorite colors."."""
    return (
        not asked
        and 2 <= len(sentence) <= SUBJECT_WORDS
        and sentence[0] in DETERMINERS
        and not any(word in AUXILIARIES for word in sentence)
    )


def whole_question(said: list[str]) -> bool:
    """A question asked with a question word whose last words are a form of "be" and its
    subject ("How are you?", "What is that?") or a subject and its verb ("What do I have?",
    "What can you do?"); "What would you?" is still open (its verb is to come)."""
    if len(said) < 3 or said[0] not in QUESTION_WORDS:
        return False
    before, last = said[-2:]
    return (last in POINTERS and before in BE) or (last in AUXILIARIES and before in POINTERS)


def you_as_object(said: list[str]) -> bool:
    """ "Thank you.", "Nice to meet you.", not "Can you." or "and you"."""
    return (
        len(said) > 1
        and said[-1] == "you"
        and said[-2] not in AUXILIARIES
        and said[-2] not in LINKING_WORDS
    )
