"""Memory requests a person says or types to the device, recognised before the model is asked.

Only whole, clear English requests count: a false positive would erase someone's memory, so
the request must be everything that was said, give or take politeness and wake words.

Forget the last turn (`ForgetLast`):
    "forget that", "forget this", "forget what I (just) said", "forget what I just told you",
    "forget (that) I said that", "forget the last thing I (just) said", "forget my last message",
    "delete that", "erase that", "scratch that", "delete what I (just) said"; any of them may end
    with "from your memory".
Forget a topic (`ForgetTopic`):
    "forget what/everything/all (that) I (just) told you/said/mentioned about <topic>",
    "forget/delete/erase everything/all/anything (you know) about <topic>",
    "forget what you know about <topic>", "forget (all) about <topic>", "scratch that thing
    about <topic>", "(please) don't remember <topic> (anymore)", "stop remembering <topic>".
    The topic is kept as
    said; it has at most 8 words and 80 characters, is not a bare pronoun ("forget about it" is
    a brush-off, "everything about me" is too broad for a sentence said to the device) and holds
    no second clause ("..., what's the weather", "... and tell me a joke").
Correct a fact (`Correction`):
    a marker, "that's/that is wrong, not right, incorrect, not true, not correct", "you're wrong",
    "you got that wrong", "wrong" or "correction", then a statement "my <subject> is/are/was
    (called/named) <value>": "that's wrong, my sister's name is Ana". The subject has at most 6
    words; the value at most 12 words and 80 characters, one clause with no second statement
    ("... is Ana and my brother's name is Bob" is refused whole). The marker alone ("that's
    wrong") is not a request, as there is no new value to store; a statement without a marker
    ("my car is blue", "actually, my dog is called Rex", "no, my car is blue") is an ordinary
    turn, as it may just as well be news ("actually my sister is coming over tomorrow"), but
    for a new name said with "now": "(actually) my dog is called Pretzel now", "my dog's name
    is actually Pepper now" (a capitalised name, so "my sister is coming over now" is news).

Reminders (`SetReminder`, `ListReminders`, `CancelReminder`):
    "remind me to <what> <when>" or "remind me <when> to <what>", the time read by `when`;
    "what reminders do I have", "what are my reminders"; "cancel (all) (the/my) reminder(s)
    (about/to/for <what>)", "cancel the <what> reminder".
What memory holds (`WhatYouKnow`):
    "what do you know about me", "what do you remember about me", "what have I told you".
Learn a voice (`LearnVoice`, `recognise_voice_request`): "learn my voice, I'm Jordan",
    "I'm Jordan, learn my voice", "learn my voice".

Around any of them: case, curly apostrophes, missing punctuation (speech to text), leading
"hey/hi/ok/okay/oh/um/so/well/no/oops/sorry/actually/never mind/please" and the wake word
"Lo-Bug", trailing "please/thanks/thank you". A polite "can/could/would/will you (please)" may
open a request, and only then may it end with a question mark; every other question ("did you
forget that?", "forget that?") is an ordinary turn, and so is anything over 200 characters.

The words of each rule (the phrasings above, politeness, what a topic or a value may hold) are
English, in `language/requests.py`; this module keeps the limits and turns a match into a
request. `PHRASINGS` lists examples of each kind with what they mean, for the documentation
and tests.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from lobug.language.fillers import without_lead_in
from lobug.language.people import SAYS_OWN_NAME, SPOKEN_NAME
from lobug.language.requests import (
    TIME_STARTS,
    TIME_THEN_TASK,
    asks_for_reminders,
    asks_to_forget_last,
    asks_what_you_know,
    cancelled_reminder,
    corrected_fact,
    forgotten_topic,
    has_second_statement,
    is_one_clause,
    learn_voice_rule,
    names_something,
    polite_ask,
    reminder_asked,
    renamed_fact,
    without_sign_off,
    without_to,
)
from lobug.language.text import sentence_case
from lobug.memory.when import is_time_phrase

MAX_REQUEST_CHARS = 200
MAX_TOPIC_CHARS = 80
MAX_TOPIC_WORDS = 8
MAX_SUBJECT_WORDS = 6
MAX_VALUE_CHARS = 80
MAX_VALUE_WORDS = 12


@dataclass(frozen=True)
class ForgetLast:
    """Forget what the person said last."""


@dataclass(frozen=True)
class ForgetTopic:
    """Forget what the person said about a topic, kept in their words ("my sister")."""

    topic: str


@dataclass(frozen=True)
class Correction:
    """Replace what is known about `subject` ("my sister's name") with `value` ("Ana")."""

    subject: str
    value: str
    statement: str  # the corrected fact as said, as a sentence: "My sister's name is Ana."


@dataclass(frozen=True)
class SetReminder:
    """Ring `what` ("call Anna", as said) at the time `when` names ("at six", `reminders`)."""

    what: str
    when: str


@dataclass(frozen=True)
class ListReminders:
    """Say the reminders still waiting."""


@dataclass(frozen=True)
class CancelReminder:
    """Cancel the waiting reminders about `about` (every word of it), or all of them (None)."""

    about: str | None


@dataclass(frozen=True)
class WhatYouKnow:
    """Say what memory holds about the person (what they may see)."""


@dataclass(frozen=True)
class LearnVoice:
    """Learn the speaker's voice, as `name`'s (None: the name was not said)."""

    name: str | None


MemoryRequest = (
    ForgetLast
    | ForgetTopic
    | Correction
    | SetReminder
    | ListReminders
    | CancelReminder
    | WhatYouKnow
)


class Phrasing(NamedTuple):
    said: str
    means: MemoryRequest


PHRASINGS: tuple[Phrasing, ...] = (
    Phrasing("Forget that", ForgetLast()),
    Phrasing("Please forget that", ForgetLast()),
    Phrasing("Forget what I just said", ForgetLast()),
    Phrasing("Forget the last thing I said", ForgetLast()),
    Phrasing("Forget I said that", ForgetLast()),
    Phrasing("Forget my last message", ForgetLast()),
    Phrasing("Never mind, forget that", ForgetLast()),
    Phrasing("Delete that", ForgetLast()),
    Phrasing("Scratch that", ForgetLast()),
    Phrasing("Could you forget what I just said?", ForgetLast()),
    Phrasing("Forget what I told you about my sister", ForgetTopic("my sister")),
    Phrasing("Forget everything I said about the party", ForgetTopic("the party")),
    Phrasing("Forget everything about the dentist", ForgetTopic("the dentist")),
    Phrasing("Forget everything you know about my old job", ForgetTopic("my old job")),
    Phrasing("Forget about my sister", ForgetTopic("my sister")),
    Phrasing("Delete everything about my ex", ForgetTopic("my ex")),
    Phrasing("Please don't remember my allergy anymore", ForgetTopic("my allergy")),
    Phrasing("Stop remembering my old address", ForgetTopic("my old address")),
    Phrasing("Scratch that thing about the car", ForgetTopic("the car")),
    Phrasing(
        "That's wrong, my sister's name is Ana",
        Correction("my sister's name", "Ana", "My sister's name is Ana."),
    ),
    Phrasing(
        "No, that's not right: my car is blue",
        Correction("my car", "blue", "My car is blue."),
    ),
    Phrasing(
        "That is wrong, my favourite colour is green",
        Correction("my favourite colour", "green", "My favourite colour is green."),
    ),
    Phrasing(
        "You got that wrong, my dog is called Rex",
        Correction("my dog", "Rex", "My dog is called Rex."),
    ),
    Phrasing("Remind me to call Anna at six", SetReminder("call Anna", "at six")),
    Phrasing("Remind me at 7 pm to take my pills", SetReminder("take my pills", "at 7 pm")),
    Phrasing(
        "Remind me in 20 minutes to check the oven", SetReminder("check the oven", "in 20 minutes")
    ),
    Phrasing(
        "Please remind me about the dentist tomorrow at 9",
        SetReminder("about the dentist", "tomorrow at 9"),
    ),
    Phrasing("What reminders do I have?", ListReminders()),
    Phrasing("What are my reminders?", ListReminders()),
    Phrasing("Cancel the reminder about Anna", CancelReminder("Anna")),
    Phrasing("Cancel my reminder to call Anna", CancelReminder("call Anna")),
    Phrasing("Cancel all my reminders", CancelReminder(None)),
    Phrasing("Cancel the vet reminder", CancelReminder("vet")),
    Phrasing("What do you know about me?", WhatYouKnow()),
    Phrasing("What do you remember about me?", WhatYouKnow()),
    Phrasing(
        "Actually my dog is called Pretzel now",
        Correction("my dog", "Pretzel", "My dog is called Pretzel."),
    ),
    Phrasing(
        "My dog's name is actually Pepper now",
        Correction("my dog's name", "Pepper", "My dog's name is Pepper."),
    ),
    Phrasing(
        "Correction: my birthday is on the 3rd of May",
        Correction("my birthday", "on the 3rd of May", "My birthday is on the 3rd of May."),
    ),
)

_NAMED = SAYS_OWN_NAME + r"\s+(?P<{group}>" + SPOKEN_NAME + ")"
_LEARN_VOICE = learn_voice_rule(_NAMED)


def recognise_memory_request(text: str) -> MemoryRequest | None:
    """The memory request `text` is, or None for an ordinary turn."""
    question = request_part(text, question=True)
    if question is not None and asks_for_reminders(question):
        return ListReminders()
    if question is not None and asks_what_you_know(question):
        return WhatYouKnow()
    request = request_part(text)
    if request is None:
        return None
    return (
        _forget_last(request)
        or _reminder(request)
        or _forget_topic(request)
        or _correction(request)
        or _renamed(request)
    )


def recognise_voice_request(text: str) -> LearnVoice | None:
    """ "Learn my voice, I'm Jordan", "remember my voice, this is Jordan", "I'm Jordan, learn
    my voice", "learn my voice": enrolment by voice (`voice_enrolment`), or None."""
    request = request_part(text)
    found = None if request is None else _LEARN_VOICE.fullmatch(request)
    if found is None:
        return None
    return LearnVoice(found.group("after") or found.group("before"))


def request_part(text: str, *, question: bool = False) -> str | None:
    """What was asked without politeness and wake words, or None if it was a plain question
    (unless `question`: a question is what is looked for)."""
    said = " ".join(text.replace("’", "'").replace("‘", "'").split())
    if len(said) > MAX_REQUEST_CHARS:
        return None
    asked = said.endswith("?")
    said = without_lead_in(said.rstrip("?"))
    polite = polite_ask(said)
    if asked and not polite and not question:
        return None
    if polite:
        said = said[polite.end() :]
    return without_sign_off(said)


def _forget_last(request: str) -> ForgetLast | None:
    return ForgetLast() if asks_to_forget_last(request) else None


def _reminder(request: str) -> SetReminder | CancelReminder | None:
    cancel = cancelled_reminder(request)
    if cancel is not None:
        about = cancel["about"] or cancel["named"]
        return CancelReminder(about) if about is None or _is_topic(about) else None
    rest = reminder_asked(request)
    if rest is None:
        return None
    # "remind me at six to call Anna": the time first, then "to ..."
    for split in TIME_THEN_TASK.finditer(rest):
        when, what = rest[: split.start()], rest[split.end() :]
        if is_time_phrase(when) and _is_reminded_of(what):
            return SetReminder(what, when)
    # "remind me to call Anna at six": the shortest time phrase that ends it
    starts = [m.start() for m in TIME_STARTS.finditer(rest)]
    for start in starts:
        what, when = rest[:start], rest[start + 1 :]
        what = without_to(what)
        if is_time_phrase(when) and _is_reminded_of(what):
            return SetReminder(what, when)
    return None


def _is_reminded_of(what: str) -> bool:
    return 0 < len(what) <= MAX_VALUE_CHARS and len(what.split()) <= MAX_VALUE_WORDS


def _forget_topic(request: str) -> ForgetTopic | None:
    topic = forgotten_topic(request)
    if topic is None or not _is_topic(topic):
        return None
    return ForgetTopic(topic)


def _is_topic(topic: str) -> bool:
    words = topic.split()
    return (
        len(topic) <= MAX_TOPIC_CHARS
        and len(words) <= MAX_TOPIC_WORDS
        and names_something(words)
        and is_one_clause(topic)
    )


def _renamed(request: str) -> Correction | None:
    match = renamed_fact(request)
    if match is None or not (match["verb"] or match["subject"].endswith("name")):
        return None
    if not _is_subject(match["subject"]):
        return None
    subject, value = "m" + match["subject"][1:], match["value"]  # "My dog" -> "my dog"
    verb = f" {match['verb']}" if match["verb"] else ""
    return Correction(subject, value, sentence_case(f"{subject} is{verb} {value}") + ".")


def _correction(request: str) -> Correction | None:
    match = corrected_fact(request)
    if match is None or not _is_subject(match["subject"]) or not _is_value(match["value"]):
        return None
    statement = sentence_case(match["statement"]) + "."
    return Correction(match["subject"], match["value"], statement)


def _is_subject(subject: str) -> bool:
    return len(subject.split()) <= MAX_SUBJECT_WORDS and is_one_clause(subject)


def _is_value(value: str) -> bool:
    return (
        len(value) <= MAX_VALUE_CHARS
        and len(value.split()) <= MAX_VALUE_WORDS
        and is_one_clause(value)
        and not has_second_statement(value)
    )
