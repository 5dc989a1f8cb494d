"""How a person, in English, asks the memory for something in a sentence of its own: the words
that decide which sentence is a memory request and which is an ordinary turn.

- Forgetting the person (`memory/people.py`): "forget everything about me"
  (`asks_to_forget_me`), then "yes, forget me" (`confirms`); `OPENERS`, the greetings a
  spoken request may open with.
- The spoken memory requests (`memory/spoken_requests.py`, which turns a match into a request
  and keeps the limits on its length): what politeness and wake words around a request are
  (`polite_ask`, `without_sign_off`), "forget that" (`asks_to_forget_last`), "forget what I
  told you about my sister" (`forgotten_topic`), "that's wrong, my sister's name is Ana"
  (`corrected_fact`), "my dog is called Pretzel now" (`renamed_fact`), "remind me to call
  Anna at six" (`reminder_asked`, `TIME_THEN_TASK`, `TIME_STARTS`, `without_to`), "what are
  my reminders" (`asks_for_reminders`), "cancel the reminder about Anna"
  (`cancelled_reminder`), "what do you know about me" (`asks_what_you_know`), "learn my voice"
  (`learn_voice_rule`, also read by `memory/voice_enrolment.py`); and what a topic or a value
  in them may be: a thing named, not a pronoun (`names_something`), one clause
  (`is_one_clause`) with one statement (`has_second_statement`)."""

from __future__ import annotations

import re

from lobug.language.fillers import SEPARATOR

# "Hi", "okay", "hey Lo-Bug," before a request or a claim: not part of it.
OPENERS = r"(?:(?:hi|hey|hello|ok|okay|oh|so|well)[,!.]?\s+)*(?:lo-?bug[,!.]?\s+)?"
_POLITE = r"(?:please|now|thanks|thank you)?[.!]?"
_FORGET_ME = re.compile(
    rf"^{OPENERS}(?:(?:can|could|would|will) you\s+)?(?:please\s+)?"
    r"(?:forget|erase|delete)\s+(?:me|everything (?:you know )?about me|all about me|"
    rf"all (?:you know )?about me|everything of mine)[\s,.!]*{_POLITE}\??$",
    re.IGNORECASE,
)
_CONFIRM = re.compile(
    rf"^{OPENERS}(?:yes|yeah|yep|confirm|do it|go ahead)"
    rf"(?:[,.!]?\s*(?:please\s+)?(?:forget|erase|delete) (?:me|everything))?[\s,.!]*{_POLITE}$",
    re.IGNORECASE,
)

# The spoken memory requests (`memory/spoken_requests.py`). Each is matched against the whole
# request, once the lead-in (`fillers.without_lead_in`), a polite ask and a sign-off are gone.
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
# "remind me at six to call Anna": the time first, then "to" and what to do.
TIME_THEN_TASK = re.compile(r"\s+to\s+")
# "remind me to call Anna at six": where a time phrase that ends the reminder may start.
TIME_STARTS = re.compile(r"\s(?=(?:in|at|on|today|tonight|tomorrow)\b)")
_TO = re.compile(r"^to\s+", re.IGNORECASE)
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


def asks_to_forget_me(text: str) -> bool:
    """ "Forget everything about me", "forget me", "please erase all you know about me"."""
    return _FORGET_ME.match(text.strip()) is not None


def confirms(text: str) -> bool:
    """ "Yes", "yes, forget me", "confirm", "go ahead": a pending request's confirmation."""
    return _CONFIRM.match(text.strip()) is not None


def polite_ask(said: str) -> re.Match[str] | None:
    """The polite "can/could/would/will you (please)" `said` opens with, or None."""
    return _POLITE_ASK.match(said)


def without_sign_off(said: str) -> str:
    """`said` without what ends it after the request: "please", "thanks", "thank you", the
    wake word and trailing punctuation, as often as they come."""
    while True:
        shorter = _TRAILING_WORD.sub("", said.rstrip(_TRAILING_PUNCTUATION))
        if shorter == said:
            return said
        said = shorter


def asks_to_forget_last(request: str) -> bool:
    """ "Forget that", "forget what I just said", "scratch that" (from your memory)."""
    return _FORGET_LAST.fullmatch(request) is not None


def forgotten_topic(request: str) -> str | None:
    """The topic, as said, of "forget what I told you about <topic>", "forget (all) about
    <topic>", "don't remember <topic> anymore", "stop remembering <topic>"; or None."""
    match = _FORGET_TOPIC.fullmatch(request)
    return None if match is None else match["topic"] or match["unremembered"]


def corrected_fact(request: str) -> re.Match[str] | None:
    """ "That's wrong / you got that wrong / correction, my <subject> is (called) <value>":
    its `statement`, `subject` ("my sister's name") and `value` ("Ana"); or None."""
    return _CORRECTION.fullmatch(request)


def renamed_fact(request: str) -> re.Match[str] | None:
    """ "(Actually) my <subject> is (called) <Value> now", with a capitalised value: its
    `statement`, `subject`, `verb` ("called", "named" or "") and `value`; or None. The caller
    asks for a naming verb or a subject that ends in "name"."""
    return _RENAMED.fullmatch(request)


def reminder_asked(request: str) -> str | None:
    """What follows "remind me" ("to call Anna at six"), or None."""
    match = _REMIND.fullmatch(request)
    return None if match is None else match["rest"]


def without_to(task: str) -> str:
    """ "to call Anna" -> "call Anna"."""
    return _TO.sub("", task)


def asks_for_reminders(question: str) -> bool:
    """ "What reminders do I have", "what are my reminders", "list my reminders"."""
    return _LIST_REMINDERS.fullmatch(question) is not None


def cancelled_reminder(request: str) -> re.Match[str] | None:
    """ "Cancel (all) (the/my) reminder(s) (about/to/for <about>)", "cancel the <named>
    reminder": its `about` or `named` (both None: every reminder); or None."""
    return _CANCEL_REMINDER.fullmatch(request)


def asks_what_you_know(question: str) -> bool:
    """ "What do you know about me", "what do you remember about me", "what have I told you"."""
    return _WHAT_YOU_KNOW.fullmatch(question) is not None


def learn_voice_rule(named: str) -> re.Pattern[str]:
    """ "Learn my voice", "remember my voice, <after>", "<before>, (please,) learn my voice":
    `named` is how a person says their name, with "{group}" where its group's name goes."""
    return re.compile(
        rf"{_VOICE}(?:{SEPARATOR}{named.format(group='after')})?"
        rf"|{named.format(group='before')}{SEPARATOR}(?:please{SEPARATOR})?{_VOICE}",
        re.IGNORECASE,
    )


def names_something(words: list[str]) -> bool:
    """Whether a topic's `words` name a thing to forget: not "it", "them", "everything ..."
    first, nor only pronouns ("forget about it" is a brush-off, "everything about me" too
    broad for a sentence said to the device)."""
    return words[0].lower() not in _NOT_A_NOUN_PHRASE_START and not all(
        word.lower() in _PRONOUNS for word in words
    )


def is_one_clause(words: str) -> bool:
    """Whether `words` hold no clause break (",", ";", ":", "!", "?", ". ") and no second
    request ("... and tell me a joke", "... then what's the weather")."""
    return not _CLAUSE_BREAK.search(words) and not _SECOND_REQUEST.search(words)


def has_second_statement(value: str) -> bool:
    """Whether a corrected value holds a second statement ("Ana and my brother's name is
    Bob"): a form of "be" in it."""
    return _SECOND_STATEMENT.search(value) is not None
