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

What memory holds (`WhatYouKnow`):
    "what do you know about me", "what do you remember about me", "what have I told you".

Around any of them: case, curly apostrophes, missing punctuation (speech to text), leading
"hey/hi/ok/okay/oh/um/so/well/no/oops/sorry/actually/never mind/please" and the wake word
"Lo-Bug", trailing "please/thanks/thank you". A polite "can/could/would/will you (please)" may
open a request, and only then may it end with a question mark; every other question ("did you
forget that?", "forget that?") is an ordinary turn, and so is anything over 200 characters.

`PHRASINGS` lists examples of each kind with what they mean, for the documentation and tests.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple

from lobug.language.fillers import SEPARATOR, without_lead_in
from lobug.language.text import sentence_case
from lobug.memory.when import is_time_phrase
from lobug.names import SAYS_OWN_NAME, SPOKEN_NAME

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

_TRAILING_PUNCTUATION = " ,.!;:"
_TRAILING_WORD = re.compile(r"\s+(?:please|thanks|thank\s+you|lo[\s-]?bug)$", re.IGNORECASE)
_POLITE_ASK = re.compile(r"^(?:can|could|would|will)\s+you\s+(?:please\s+)?", re.IGNORECASE)
_FORGET_LAST = re.compile(
    r"""
    (?:forget\s+(?:that|this)
      |forget\s+what\s+i\s+(?:just\s+)?said
      |forget\s+what\s+i\s+just\s+told\s+you
      |forget\s+(?:that\s+)?i\s+said\s+that
      |forget\s+(?:the\s+)?last\s+thing\s+i\s+(?:just\s+)?said
      |forget\s+my\s+last\s+message
      |(?:delete|erase|scratch)\s+that
      |delete\s+what\s+i\s+(?:just\s+)?said)
    (?:\s+from\s+(?:your\s+)?memory)?
    """,
    re.IGNORECASE | re.VERBOSE,
)
_FORGET_TOPIC = re.compile(
    r"""
    (?:(?:forget|delete|erase)\s+(?:what|everything|all)\s+(?:that\s+)?i\s+(?:just\s+)?
         (?:told\s+you|said(?:\s+to\s+you)?|mentioned)
      |(?:forget|delete|erase)\s+(?:(?:everything|all|anything)(?:\s+you\s+know)?
         |what\s+you\s+know)
      |(?:forget|scratch|delete|erase)\s+(?:that|the)\s+(?:thing|bit|part|stuff)
      |forget(?:\s+all)?)
    \s+about\s+(?P<topic>.+)
    |(?:(?:please\s+)?(?:don[o'’]?t|do\s+not)\s+remember|stop\s+remembering|no\s+need\s+to\s+remember)
    \s+(?P<unremembered>.+?)(?:\s+(?:any\s?more|from\s+now\s+on))?
    """,
    re.IGNORECASE | re.VERBOSE,
)
_CORRECTION = re.compile(
    rf"""
    (?:that(?:'s|s|\s+is)\s+(?:wrong|not\s+right|incorrect|not\s+true|not\s+correct)
      |you(?:'re|re|\s+are)\s+wrong
      |you(?:'ve|\s+have)?\s+got\s+(?:that|it)\s+wrong
      |wrong
      |correction)
    {SEPARATOR}(?:actually{SEPARATOR})?
    (?P<statement>
      (?P<subject>my\s+.+?)\s+(?:is|are|was)(?:\s+(?:called|named))?\s+(?P<value>.+))
    """,
    re.IGNORECASE | re.VERBOSE,
)
# A name that changed, said without a marker: "(actually) my dog is called Pretzel now", "my
# dog's name is actually Pepper now" (only a name: "my sister is coming over now" is news).
_RENAMED = re.compile(
    r"""
    (?i:actually{SEPARATOR})?
    (?P<statement>
      (?P<subject>(?i:my)\s+.+?)
      \s+(?i:is|are)\s+(?i:actually\s+)?(?i:now\s+)?(?P<verb>(?i:called|named)|)
      \s*(?P<value>[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)?))
    \s+(?i:now)
    """.replace("{SEPARATOR}", SEPARATOR),
    re.VERBOSE,
)
_REMIND = re.compile(r"remind\s+me\s+(?P<rest>.+)", re.IGNORECASE)
_LIST_REMINDERS = re.compile(
    r"(?:what|which)\s+reminders\s+do\s+i\s+have|what\s+are\s+my\s+reminders"
    r"|(?:list|show|tell\s+me)\s+my\s+reminders|do\s+i\s+have\s+any\s+reminders",
    re.IGNORECASE,
)
_CANCEL_REMINDER = re.compile(
    r"(?:cancel|delete|remove)\s+(?:all\s+(?:of\s+)?)?(?:the\s+|my\s+|that\s+)?reminders?"
    r"(?:\s+(?:about|to|for|of)\s+(?P<about>.+))?"
    r"|(?:cancel|delete|remove)\s+(?:the\s+|my\s+)(?P<named>\w+(?:\s+\w+)?)\s+reminders?",
    re.IGNORECASE,
)
_WHAT_YOU_KNOW = re.compile(
    r"(?:tell\s+me\s+)?what\s+(?:else\s+)?(?:do\s+)?you\s+(?:know|remember)\s+about\s+me"
    r"|what\s+have\s+i\s+told\s+you(?:\s+about\s+(?:me|myself))?",
    re.IGNORECASE,
)
_VOICE = r"(?:learn|remember|memori[sz]e|recogni[sz]e)\s+my\s+voice"
_NAMED = SAYS_OWN_NAME + r"\s+(?P<{group}>" + SPOKEN_NAME + ")"
_LEARN_VOICE = re.compile(
    rf"{_VOICE}(?:{SEPARATOR}{_NAMED.format(group='after')})?"
    rf"|{_NAMED.format(group='before')}{SEPARATOR}(?:please{SEPARATOR})?{_VOICE}",
    re.IGNORECASE,
)
# "forget about it" brushes a subject off; "forget about me" is too broad to act on from voice.
_PRONOUNS = frozenset(
    "it that this those these them him her me us myself everything anything all any of stuff "
    "things".split()
)
_NOT_A_NOUN_PHRASE_START = frozenset("it them him me us myself everything anything".split())
_CLAUSE_BREAK = re.compile(r"[,;:!?]|\.\s")
_SECOND_REQUEST = re.compile(
    r"\b(?:and|then|but)\s+(?:then\s+)?(?:tell|play|set|turn|remind|show|give|what|whats|"
    r"what's|how|when|where|who|why|can|could|would|will|please|lets|let's)\b",
    re.IGNORECASE,
)
# "my sister's name is Ana and my brother's name is Bob" is two corrections: neither is applied.
_SECOND_STATEMENT = re.compile(r"\b(?:is|are|was|were|i'm|im)\b", re.IGNORECASE)


def recognise_memory_request(text: str) -> MemoryRequest | None:
    """The memory request `text` is, or None for an ordinary turn."""
    question = request_part(text, question=True)
    if question is not None and _LIST_REMINDERS.fullmatch(question):
        return ListReminders()
    if question is not None and _WHAT_YOU_KNOW.fullmatch(question):
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
    polite = _POLITE_ASK.match(said)
    if asked and not polite and not question:
        return None
    if polite:
        said = said[polite.end() :]
    return _without_trailing_filler(said)


def _without_trailing_filler(said: str) -> str:
    while True:
        shorter = _TRAILING_WORD.sub("", said.rstrip(_TRAILING_PUNCTUATION))
        if shorter == said:
            return said
        said = shorter


def _forget_last(request: str) -> ForgetLast | None:
    return ForgetLast() if _FORGET_LAST.fullmatch(request) else None


def _reminder(request: str) -> SetReminder | CancelReminder | None:
    cancel = _CANCEL_REMINDER.fullmatch(request)
    if cancel is not None:
        about = cancel["about"] or cancel["named"]
        return CancelReminder(about) if about is None or _is_topic(about) else None
    match = _REMIND.fullmatch(request)
    if match is None:
        return None
    rest = match["rest"]
    # "remind me at six to call Anna": the time first, then "to ..."
    for split in re.finditer(r"\s+to\s+", rest):
        when, what = rest[: split.start()], rest[split.end() :]
        if is_time_phrase(when) and _is_reminded_of(what):
            return SetReminder(what, when)
    # "remind me to call Anna at six": the shortest time phrase that ends it
    starts = [m.start() for m in re.finditer(r"\s(?=(?:in|at|on|today|tonight|tomorrow)\b)", rest)]
    for start in starts:
        what, when = rest[:start], rest[start + 1 :]
        what = re.sub(r"^to\s+", "", what, flags=re.IGNORECASE)
        if is_time_phrase(when) and _is_reminded_of(what):
            return SetReminder(what, when)
    return None


def _is_reminded_of(what: str) -> bool:
    return 0 < len(what) <= MAX_VALUE_CHARS and len(what.split()) <= MAX_VALUE_WORDS


def _forget_topic(request: str) -> ForgetTopic | None:
    match = _FORGET_TOPIC.fullmatch(request)
    topic = None if match is None else match["topic"] or match["unremembered"]
    if topic is None or not _is_topic(topic):
        return None
    return ForgetTopic(topic)


def _is_topic(topic: str) -> bool:
    words = topic.split()
    return (
        len(topic) <= MAX_TOPIC_CHARS
        and len(words) <= MAX_TOPIC_WORDS
        and words[0].lower() not in _NOT_A_NOUN_PHRASE_START
        and not all(word.lower() in _PRONOUNS for word in words)
        and _is_one_clause(topic)
    )


def _renamed(request: str) -> Correction | None:
    match = _RENAMED.fullmatch(request)
    if match is None or not (match["verb"] or match["subject"].endswith("name")):
        return None
    if not _is_subject(match["subject"]):
        return None
    subject, value = "m" + match["subject"][1:], match["value"]  # "My dog" -> "my dog"
    verb = f" {match['verb']}" if match["verb"] else ""
    return Correction(subject, value, sentence_case(f"{subject} is{verb} {value}") + ".")


def _correction(request: str) -> Correction | None:
    match = _CORRECTION.fullmatch(request)
    if match is None or not _is_subject(match["subject"]) or not _is_value(match["value"]):
        return None
    statement = sentence_case(match["statement"]) + "."
    return Correction(match["subject"], match["value"], statement)


def _is_subject(subject: str) -> bool:
    return len(subject.split()) <= MAX_SUBJECT_WORDS and _is_one_clause(subject)


def _is_value(value: str) -> bool:
    return (
        len(value) <= MAX_VALUE_CHARS
        and len(value.split()) <= MAX_VALUE_WORDS
        and _is_one_clause(value)
        and not _SECOND_STATEMENT.search(value)
    )


def _is_one_clause(words: str) -> bool:
    return not _CLAUSE_BREAK.search(words) and not _SECOND_REQUEST.search(words)
