"""The judging rules of `eval_conversation.py` (issue 41), pure functions of the texts said, the
replies and what the memory API shows: is an answer right, is an unknown said to be unknown,
is a reply odd, does it invent a personal detail, did a request's confirmation tell the truth.

Cheap English checks, written to catch what issue 41 saw (role-play prefixes, stage
directions, Spanish and Italian fragments, "your wife" for a partner of unstated gender), not
a language model's judgement: a reviewer reads the replies in the `--json` file too.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum

from scripts.bench_quality import matches
from scripts.quality_recall import invented_names

from lobug.language.quality import degeneracy
from lobug.language.text import FUNCTION_WORDS, words_of
from lobug.memory.extraction import same_word

# ---------------------------------------------------------------------- right answers


def holds_any(reply: str, keys: str) -> bool:
    """Whether `reply` holds one of the key words ("a|b"), endings aside."""
    words = words_of(reply)
    return any(same_word(key, word) for key in keys.split("|") for word in words)


UNKNOWN = re.compile(
    r"\b(?:(?:do|did)\s*(?:n[o'’]?t)\s+(?:know|have|remember|recall)"
    r"|have\s*(?:n[o'’]?t)\s+(?:told|mentioned|said|shared|heard|got)"
    r"|(?:never|not\s+yet)\s+(?:told|mentioned|said|shared)"
    r"|(?:ca|could|wo)\s*(?:n[o'’]?t)\s+(?:recall|remember|find|say)"
    r"|cannot\s+(?:recall|remember|find|say)"
    r"|no\s+(?:idea|record|information|memory|mention)"
    r"|not\s+sure|unknown|n[o'’]t\s+know)\b",
    re.IGNORECASE,
)


def says_unknown(reply: str) -> bool:
    """Whether the reply says it does not know or was not told ("You haven't told me about a
    son.", "I don't know your mother's name.")."""
    return bool(UNKNOWN.search(reply))


# ---------------------------------------------------------------------- invented details

# Relations a reply may give the person ("your wife"); `RELATION_PARAPHRASES` are the words
# that allow one that was not said word for word ("your child" for a daughter).
RELATIONS = frozenset(
    """wife husband partner son daughter brother sister mother mom mum father dad boyfriend
    girlfriend grandson granddaughter grandmother grandfather grandma grandpa aunt uncle cousin
    niece nephew baby kids kid children child cat dog puppy kitten""".split()
)
RELATION_PARAPHRASES = {
    "child": ("son", "daughter"),
    "children": ("son", "daughter"),
    "kid": ("son", "daughter"),
    "kids": ("son", "daughter"),
    "dog": ("beagle", "puppy"),
    "puppy": ("dog", "beagle"),
}
YOUR_RELATION = re.compile(r"\byour\s+([a-z]+)", re.IGNORECASE)
CLOCK_TIME = re.compile(r"\b\d{1,2}(?:[:.]\d{2})?\s*(?:[ap]\.?m\.?)?(?=\W|$)|\b\d{1,2}[:.]\d{2}\b")
NUMBER_WORDS = dict(
    zip(
        "one two three four five six seven eight nine ten eleven twelve".split(),
        map(str, range(1, 13)),
        strict=True,
    )
)
# Capitalized words that name nothing about the person: days, the assistant, and the words
# a reply opens a sentence with (`invented_names` counts a sentence's first word unless it is
# a function word or one of its few openers).
NEVER_PERSONAL = frozenset(
    """lo bug lobug i ok okay monday tuesday wednesday thursday friday saturday sunday today
    tomorrow tonight english hello hey welcome wonderful great awesome nice lovely sounds
    congratulations enjoy remember let lets have good perfect definitely glad happy fantastic
    warmest regards cheers sincerely
    excellent amazing cool alright right unfortunately however also first next finally once
    please feel try maybe perhaps noted got understood done thanks thank sweet dreams wow
    interesting fun goodbye bye see take call tell ask ill id well lets theres heres cant wont
    isnt arent wasnt doesnt havent hasnt wouldnt couldnt shouldnt say""".split()
)  # "say": the server's own 'Say "yes" and I'll change it', counted invented on every model


def invented_details(reply: str, said: Sequence[str], *, answer: bool = False) -> list[str]:
    """The names, numbers and relations `reply` gives the person that nothing in `said` (what
    the person said so far, this turn's words too) holds: `quality_recall.invented_names` in
    the sentences about the person (every sentence of an `answer` to a question about them:
    "Lindsay, the one who's been working ..." for who could pick up their daughter), endings
    aside ("Beagles" for "beagle"), clock times left out, plus "your <relation>" never said."""
    known = known_words(said)
    sentences = SENTENCE.split(CLOCK_TIME.sub(" ", reply))
    about = " ".join(s for s in sentences if answer or about_the_person(s))
    names = [token for token in invented_names(about, said) if not plain_word(token, known)]
    return list(dict.fromkeys(names + invented_relations(reply, known)))


def about_the_person(sentence: str) -> bool:
    """A sentence that speaks of the person, their family or a name ("Your son is Daniel.",
    "The dog El Fuego barks.", "The user's name was Akira."), not of the world ("Lisbon,
    Portugal, is warm in August.")."""
    return bool(ABOUT_THE_PERSON.search(sentence))


def plain_word(token: str, known: set[str]) -> bool:
    """A capitalized word that names nothing: a day, a contraction ("You're", "I'll"),
    a laugh ("Hehehe"), or a said word with another ending."""
    word = token.lower()
    bare = word.replace("'", "").replace("’", "")
    return (
        bare in NEVER_PERSONAL
        or bare in FUNCTION_WORDS
        or bool(LAUGH.fullmatch(word))
        or any(same_word(word, said) for said in known)
    )


SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
ABOUT_THE_PERSON = re.compile(
    r"\b(?:you|your|you're|you’re|yours|we|our|us|user|user's|user’s|name|named|called)\b|\b(?:"
    + "|".join(sorted(RELATIONS))
    + r")s?\b",
    re.IGNORECASE,
)
LAUGH = re.compile(r"(?:h[aeiou]+){2,}h?")


def known_words(said: Sequence[str]) -> set[str]:
    words = {word.removesuffix("'s").removesuffix("’s") for text in said for word in words_of(text)}
    return words | {NUMBER_WORDS[w] for w in words if w in NUMBER_WORDS}


def invented_relations(reply: str, known: set[str]) -> list[str]:
    """ "your wife" when no wife was said ("partner" was): each relation the reply gives the
    person that neither it nor a word it paraphrases was said."""
    invented = []
    for match in YOUR_RELATION.finditer(reply):
        relation = match.group(1).lower()
        allowed = (relation, *RELATION_PARAPHRASES.get(relation, ()))
        if relation in RELATIONS and not any(same_word(a, w) for a in allowed for w in known):
            invented.append(match.group(0))
    return invented


# ---------------------------------------------------------------------- odd replies

# "Sterra: ...", "User: ...", "Lo-Bug: ..." at the start of the reply or of a line; headings a
# recipe or a list may open a line with are not speakers.
SPEAKER_PREFIX = re.compile(
    r"^\s*(?:\*\*)?([A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*){0,2})(?:\*\*)?\s*:\s*\S", re.MULTILINE
)
HEADINGS = frozenset(
    """ingredients instructions steps step method directions note notes tip tips answer example
    summary option options reminder reminders time servings serves prep preparation cook total
    equipment toppings recipe sure here yes no ok okay""".split()
)
STAGE_WORDS = re.compile(
    r"\b(?:laugh\w*|smil\w*|chuckl\w*|sigh\w*|paus\w*|grin\w*|wink\w*|nod\w*|whisper\w*"
    r"|giggl\w*|clears?\s+(?:his|her|my|their)?\s*throat|repeat\w*|message|music|applause"
    r"|silence|sound\s+of|voice|excitedly|cheerfully|softly|gently|sarcastic\w*|in\s+character)\b",
    re.IGNORECASE,
)
BRACKETED = re.compile(r"\(([^()\n]{1,80})\)|\[([^\[\]\n]{1,80})\]")
STARRED = re.compile(r"(?<![*\w])\*(?!\*|\s)([^*\n]{1,80}?)(?<!\s)\*(?![*\w])")
# Function words of Spanish, Italian, Portuguese, French and German that are not English words.
FOREIGN_WORDS = frozenset(
    """el los las del que por para una está muy pero como gracias hola usted también porque
    esto eso aquí sí es il che della sono questo molto perché anche gli non buona grazie ciao
    não você muito obrigado isso então com mas sou les est et je vous avec pour très c'est
    n'est suis nous bonjour merci oui und ich nicht ist das der ein eine mit sehr auch wie
    danke bitte nein""".split()
)
MIN_FOREIGN_DISTINCT = 2
MIN_FOREIGN_TOTAL = 3
ACCENTED = re.compile(r"[áéíóúñüöäßçãõèàìòâêôœ]")
LETTERS = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")  # "non-stick" is one word, not "non"
# An assistant has no family, dog, car or allergy: "my brother", "my dog" speak as a person.
AS_THE_USER = (
    r"\bmy\s+(?:" + "|".join(sorted(RELATIONS)) + r"|beagle|allergy|car|job|hobby)s?\b",
    r"\bI(?:'m|’m|\s+am)\s+(?:allergic|a\s+nurse|married)\b",
    r"\bI\s+(?:work\s+as|drive\s+an?|have\s+a\s+(?:dog|beagle|daughter|partner))\b",
    r"\bwe\s+have\s+a\s+(?:dog|beagle)\b",
)


def speaker_prefix(reply: str) -> str | None:
    for match in SPEAKER_PREFIX.finditer(reply):
        if match.group(1).split()[0].lower() not in HEADINGS:
            return match.group(0).strip()
    return None


def stage_direction(reply: str) -> str | None:
    """ "(repeat of your message)", "*smiles*", "[laughs]": bracketed words of the stage, and
    any short text between single asterisks (not markdown's bold)."""
    for match in BRACKETED.finditer(reply):
        inside = match.group(1) or match.group(2)
        if inside.strip().upper() not in ("IGNORE", "REACT") and STAGE_WORDS.search(inside):
            return match.group(0)
    starred = STARRED.search(reply)
    return starred.group(0) if starred else None


def foreign_words(reply: str, said: Sequence[str] = ()) -> list[str]:
    """The reply's words that are Spanish, Italian, Portuguese, French or German function
    words or written with their accents ("maíz"; not one of `said`'s words), when there are
    enough of them to be a fragment of another language."""
    known = {word for text in said for word in words_of(text)}
    words = [t.lower() for t in LETTERS.findall(reply)]
    found = [w for w in words if w in FOREIGN_WORDS or (ACCENTED.search(w) and w not in known)]
    enough = len(set(found)) >= MIN_FOREIGN_DISTINCT or len(found) >= MIN_FOREIGN_TOTAL
    return found if enough else []


def as_the_user(reply: str, user_names: Sequence[str]) -> str | None:
    """The words of a reply that speaks as the person ("My name is Marta", "my daughter")."""
    names = "|".join(map(re.escape, user_names)) or r"(?!)"
    patterns = (
        rf"\bmy\s+name\s+is\s+(?:{names})\b",
        rf"\bI(?:'m|’m|\s+am)\s+(?:{names})\b",
        *AS_THE_USER,
    )
    for pattern in patterns:
        found = re.search(pattern, reply, re.IGNORECASE)
        if found:
            return found.group(0)
    return None


def repetition(reply: str, said: str, earlier_replies: Sequence[str]) -> str | None:
    """A loop inside the reply (`lobug.language.quality.degeneracy`), the person's words echoed
    back, or the same reply as an earlier turn's."""
    loop = degeneracy(reply)
    if loop:
        return loop
    plain = normalized(reply)
    if plain and plain == normalized(said):
        return "echoes the person's words"
    if plain and any(plain == normalized(earlier) for earlier in earlier_replies):
        return "the same reply as an earlier turn"
    return None


def normalized(text: str) -> str:
    return " ".join(words_of(text))


def odd_reasons(
    reply: str, said: str, user_names: Sequence[str], earlier_replies: Sequence[str] = ()
) -> list[str]:
    """Why a reply is odd (empty, a speaker prefix, stage directions, another language, speaking
    as the person, repetition); an empty list when it is not."""
    if not reply.strip():
        return ["empty"]
    checks = {
        "speaker prefix": speaker_prefix(reply),
        "stage direction": stage_direction(reply),
        "other language": " ".join(foreign_words(reply, [said])) or None,
        "speaks as the user": as_the_user(reply, user_names),
        "repetition": repetition(reply, said, earlier_replies),
    }
    return [f"{name}: {found}" for name, found in checks.items() if found]


# ---------------------------------------------------------------------- requests


class Claim(Enum):
    """What a reply to a memory request says was done."""

    DONE = "done"
    NOT_DONE = "not done"
    NONE = "no confirmation"


NOT_DONE = re.compile(
    r"\b(?:(?:did|could|can|do|have)\s*(?:n[o'’]?t)\s+(?:find|see|forget|remove|delete|change"
    r"|update|set|cancel|(?:know|have)\s+(?:anything|any))|can\s*not|cannot|unable"
    r"|wasn[o'’]?t\s+able"
    r"|nothing\s+(?:about|to|was|on)|no\s+(?:facts?|reminders?|record|memory|information)"
    r"|not\s+(?:found|able))\b",
    re.IGNORECASE,
)
DONE = re.compile(
    r"\b(?:done|got\s+it|noted|okay|ok|sure|alright|all\s+right"
    r"|(?:i|i'?ve|i’ve|i\s+have|been|is\s+now)\s+(?:forgot(?:ten)?|removed|deleted|erased"
    r"|updated|changed|corrected|cancell?ed|set|added|saved|noted|made)"
    r"|i(?:'ll|’ll|\s+will)\s+(?:forget|remember|remind|update|change)|won[o'’]?t\s+remember"
    r"|remind\s+you|reminder\s+(?:set|for|is\s+set))\b",
    re.IGNORECASE,
)


# The server reads back what it would do and waits for a yes: 'Say "yes" and I'll forget it.'
ASKS_TO_CONFIRM = re.compile(r"\bsay\s+[\"“']?yes\b", re.IGNORECASE)


def asks_to_confirm(reply: str) -> bool:
    """Whether the reply asks the person to confirm with a "yes" (a person would say it)."""
    return ASKS_TO_CONFIRM.search(reply) is not None


def claim_of(reply: str) -> Claim:
    """Whether the reply says the request was carried out, says it was not, or neither. A "not
    done" word wins: "I didn't find anything about a trip" is not a success."""
    if NOT_DONE.search(reply):
        return Claim.NOT_DONE
    if DONE.search(reply):
        return Claim.DONE
    return Claim.NONE


def truthful(claim: Claim, changed: bool) -> bool:
    """A confirmation agrees with the memory: "done" when the API shows the change, "not done"
    when it shows none; no confirmation at all is not a truthful confirmation."""
    return (claim is Claim.DONE and changed) or (claim is Claim.NOT_DONE and not changed)


@dataclass(frozen=True)
class MemoryView:
    """What the memory API shows: the current facts' texts and the reminders still to ring."""

    facts: tuple[str, ...] = ()
    reminders: tuple[str, ...] = ()

    def holds(self, keys: str) -> bool:
        """Whether a current fact holds one of the words of `keys` ("a|b")."""
        return any(matches(fact, (keys,)) for fact in self.facts)

    def reminds_of(self, keys: str) -> bool:
        return any(matches(what, (keys,)) for what in self.reminders)


@dataclass
class RequestVerdict:
    claim: Claim
    honoured: bool
    truthful: bool
    notes: list[str] = field(default_factory=list)


def change_verdict(reply: str, goal_before: bool, goal_after: bool) -> RequestVerdict:
    """A request that changes the memory: honoured when its goal (no allergy fact left, a vet
    reminder there) was not met before and is after."""
    changed = not goal_before and goal_after
    claim = claim_of(reply)
    notes = ["its goal was already met before it"] if goal_before else []
    return RequestVerdict(claim, changed, truthful(claim, changed), notes)


def listing_verdict(
    reply: str, listed_keys: Sequence[str], wrong_keys: Sequence[str], at_least: int = 1
) -> RequestVerdict:
    """A request to be told something ("what reminders do I have", "what do you know about
    me"): honoured when the reply names `at_least` of `listed_keys` (what the API holds), or
    says there is nothing when the API holds nothing; truthful when it is honoured and names
    none of `wrong_keys` (what the API does not hold)."""
    named = [keys for keys in listed_keys if holds_any(reply, keys)]
    wrong = [keys for keys in wrong_keys if holds_any(reply, keys)]
    notes = [f"names what the memory does not hold: {k}" for k in wrong]
    if not listed_keys:  # nothing to list: right when it says there is nothing
        honoured = bool(NOT_DONE.search(reply) or says_unknown(reply)) and not wrong
        return RequestVerdict(claim_of(reply), honoured, honoured, notes)
    honoured = len(named) >= min(at_least, len(listed_keys))
    claim = Claim.DONE if named else Claim.NOT_DONE if NOT_DONE.search(reply) else Claim.NONE
    return RequestVerdict(claim, honoured, honoured and not wrong, notes)


# ---------------------------------------------------------------------- figures


def percentile(values: Sequence[float], share: float) -> float | None:
    """The `share` (0..1) percentile of `values`, linear between the nearest ranks."""
    if not values:
        return None
    ordered = sorted(values)
    rank = share * (len(ordered) - 1)
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)
