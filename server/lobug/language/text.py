"""Text helpers shared by memory and search: the one word splitter, the one sentence
splitter of written text, the sentence ends (and the first clause and phrase) of a reply
still arriving, which `turn/spoken.py` cuts into speech, English function words, and facts
about the user written in the third person."""

from __future__ import annotations

import re
import unicodedata

# A word: letters and digits of any script, with inner apostrophes ("Zoë", "Müller", "don't",
# "sister's"); underscores, hyphens and other punctuation split words. The one splitter of the
# package (FTS5 and tsvector tokenize for themselves).
WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")


def word_tokens(text: str) -> list[str]:
    """The words of `text` as written (case kept, for telling names)."""
    return WORD.findall(unicodedata.normalize("NFC", text))


def words_of(text: str) -> list[str]:
    """The words of `text`, lower case."""
    return [word.lower() for word in word_tokens(text)]


# Where a sentence of written text may end: its closing marks (and a closing quote or
# bracket) before a space or the text's end; "3.5" and "lo-bug.local" go on.
SENTENCE_END = re.compile(r"[.!?]+[\"'”’)\]]*(?=\s|$)")
# Words a full stop follows inside a sentence: titles before a name ("St. Mary's", "Dr.
# Okafor") and Latin abbreviations, lower case, without their last full stop.
ABBREVIATIONS = frozenset("mr mrs ms mx dr prof st mt jr sr vs e.g i.e cf approx".split())


def sentences_of(text: str) -> list[str]:
    """The sentences of `text`, each with its closing marks and leading space; a full stop
    after one of the `ABBREVIATIONS` ends none."""
    sentences, start = [], 0
    for end in SENTENCE_END.finditer(text):
        if not text[start : end.start()].strip() or _abbreviated(text[start : end.start()], end):
            continue
        sentences.append(text[start : end.end()])
        start = end.end()
    if text[start:].strip():
        sentences.append(text[start:])
    return sentences


def _abbreviated(before: str, end: re.Match[str]) -> bool:
    """Whether the full stop `end` closes the abbreviation that `before` ends with."""
    last = before.split()[-1].lstrip("(\"'“‘").lower()
    return end.group() == "." and last in ABBREVIATIONS


# Where a sentence of a reply still arriving (streamed from the model) may end, for speaking
# it before the rest comes (`turn/spoken.py`, and the reply guard through it). Unlike
# `SENTENCE_END`, this one holds the space after the mark: the text's end is only where the
# model has got to, so "3." may yet become "3.5"; a mark followed by a space ends a sentence
# before the next word exists, one that reaches the last character does not yet
# (`spoken.sentence_ends`). A line break ends one too, and "…".
ARRIVING_SENTENCE_END = re.compile(r"[.!?…]+[\"')\]]*(\s+|$)|\n+")
# Where the first piece of an arriving reply may end early, so its first audio leaves sooner:
# at a clause (", ", with its space, for the same reason) ...
CLAUSE_END = re.compile(r"[,;:]\s+")
# ... or, in a sentence without commas, before a phrase: a conjunction or preposition.
# "of", "like", "how", "as", "by", "into" too: a first sentence that ran on past them to its
# comma was 13 words long and took 440 ms to synthesize (5 s turns of `bench_voice.py`).
PHRASE_START = re.compile(
    r"\s(?=(?:and|but|or|so|because|with|for|to|that|which|who|when|where|while|if|in|on|at"
    r"|from|about|after|before|until|of|like|how|as|by|into)\s)",
    re.IGNORECASE,
)


# English function words: they carry no claim (fact grounding) and match most rows (keyword
# search). Contractions are listed without their apostrophe, as the FTS tokenizer splits them.
FUNCTION_WORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers herself him himself his how i if in into
    is it its itself just me more most my myself no nor not now of off on once only or other our
    ours ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    im ive youre youve youd youll hes shes theyre theyve weve whats thats dont didnt""".split()
)

# Modal verbs and common irregular past forms take no third-person -s.
_UNCHANGED = frozenset(
    """can could will would shall should may might must did was had went got made saw bought
    met told took came gave found left lost ran wrote ate drank began became knew thought felt
    kept sold sent spent won grew flew broke chose forgot heard held paid said put let set
    cut hurt quit""".split()
)
_IRREGULAR = {"am": "is", "have": "has", "do": "does", "go": "goes", "'m": "is"}
_PRONOUNS = (
    (re.compile(r"\bI'm\b|\bI am\b"), "the user is"),
    (re.compile(r"\bI've\b"), "the user has"),
    (re.compile(r"\bI'd\b"), "the user would"),
    (re.compile(r"\bI'll\b"), "the user will"),
    (re.compile(r"\bmy\b", re.IGNORECASE), "the user's"),
    (re.compile(r"\bmine\b", re.IGNORECASE), "the user's"),
    (re.compile(r"\bmyself\b", re.IGNORECASE), "themselves"),
    (re.compile(r"\bme\b", re.IGNORECASE), "the user"),
    # "We have a beagle": the user's household, a plural the verb already agrees with.
    (re.compile(r"\bwe['’]re\b", re.IGNORECASE), "the user and their family are"),
    (re.compile(r"\bwe['’]ve\b", re.IGNORECASE), "the user and their family have"),
    (re.compile(r"\bwe['’]ll\b", re.IGNORECASE), "the user and their family will"),
    (re.compile(r"\bwe['’]d\b", re.IGNORECASE), "the user and their family would"),
    (re.compile(r"\b(?:we|us)\b", re.IGNORECASE), "the user and their family"),
    (re.compile(r"\bours?\b", re.IGNORECASE), "the user's"),
    (re.compile(r"\bourselves\b", re.IGNORECASE), "themselves"),
)
_I_VERB = re.compile(
    r"\bI\s+((?:really|also|just|usually|often|always|never|sometimes|still|actually|mostly|"
    r"only|totally|truly)\s+)?([a-z']+)"
)


# "Tomás and I are", "my sister and I have": a subject of two (a name or "my ..." just
# before, or a verb only a plural takes), whose verb is left as said; "I ski and I swim" is
# two clauses of the user's.
_TWO_OF_US = (
    re.compile(r"(?:^|(?<=, ))((?:[Mm]y \w+|[A-Z][\w'’-]+)(?: [A-Z][\w'’-]+)?) and I\b(?!['’])"),
    re.compile(r"\b(\w+) and I(?= (?:are|were)\b)"),
)


def third_person(sentence: str) -> str:
    """The user's first-person words about themselves as said of them: "I work at NASA and
    my sister and I ski" -> "the user works at NASA and the user's sister and the user ski"."""
    for two in _TWO_OF_US:
        sentence = two.sub(r"\1 and the user", sentence)
    sentence = _I_VERB.sub(
        lambda m: f"the user {m.group(1) or ''}{_third_person_verb(m.group(2))}", sentence
    )
    for pattern, replacement in _PRONOUNS:
        sentence = pattern.sub(replacement, sentence)
    return re.sub(r"\bI\b", "the user", sentence)


def _third_person_verb(verb: str) -> str:
    lowered = verb.lower()
    if lowered in _IRREGULAR:
        return _IRREGULAR[lowered]
    if lowered in _UNCHANGED or lowered.endswith("ed") or "'" in lowered:
        return verb
    if re.search(r"(s|sh|ch|x|z|o)$", lowered):
        return verb + "es"
    if re.search(r"[^aeiou]y$", lowered):
        return verb[:-1] + "ies"
    return verb + "s"


def sentence_case(text: str) -> str:
    return text[:1].upper() + text[1:]


_SECOND_PERSON = {"my": "your", "mine": "yours", "me": "you", "myself": "yourself", "i": "you"}


def second_person(text: str) -> str:
    """`text` as said back to its speaker: "my sister" -> "your sister"."""
    return re.sub(
        r"\b(my|mine|me|myself|i)\b",
        lambda m: _SECOND_PERSON[m.group(1).lower()],
        text[:1].lower() + text[1:],
        flags=re.IGNORECASE,
    )


def content_stems(text: str) -> set[str]:
    """The words of `text` that carry meaning, crudely stemmed ("sister's", "sisters" and
    "sister" are one), for telling whether a text names a topic."""
    stems = set()
    for word in words_of(text):
        word = re.sub(r"['’]s?$", "", word.replace("’", "'").removesuffix("'s"))
        if word and word not in FUNCTION_WORDS:
            stems.add(word[:-1] if len(word) > 3 and word.endswith("s") else word)
    return stems


# A fact about "the user" said to them (the server's own answers from memory).
_THE_USER_AS_YOU = (
    (re.compile(r"\bthe user and their\b", re.IGNORECASE), "you and your"),  # "we", `text`
    (re.compile(r"\bthe user's\b", re.IGNORECASE), "your"),
    (re.compile(r"\bthe user (?:is|'s)\b", re.IGNORECASE), "you are"),
    (re.compile(r"\bthe user was\b", re.IGNORECASE), "you were"),
    (re.compile(r"\bthe user has\b", re.IGNORECASE), "you have"),
    (re.compile(r"\bthe user does\b", re.IGNORECASE), "you do"),
    (re.compile(r"\bthemselves\b", re.IGNORECASE), "yourself"),
)
_THE_USER_VERB = re.compile(
    r"\bthe user ((?:[a-z]+ly\s+|still\s+|also\s+|often\s+|never\s+)?)([a-z]+)\b", re.IGNORECASE
)
_UNCHANGED_MODALS = frozenset("can could will would shall should may might must did had".split())


def fact_said_to_the_user(fact: str) -> str:
    """A fact about "the user" (as the extraction writes facts) as said to them: "The user's
    dog is called Biscuit" -> "Your dog is called Biscuit."."""
    text = fact.strip().rstrip(".")
    for pattern, replacement in _THE_USER_AS_YOU:
        text = pattern.sub(replacement, text)
    text = _THE_USER_VERB.sub(lambda m: f"you {m.group(1)}{base_form(m.group(2))}", text)
    text = re.sub(r"\bthe user\b", "you", text, flags=re.IGNORECASE)
    return sentence_case(text) + "."


def base_form(verb: str) -> str:
    """A third-person verb's base form: "works" -> "work", "studies" -> "study"."""
    lowered = verb.lower()
    if lowered in _UNCHANGED_MODALS or not lowered.endswith("s") or lowered.endswith("ss"):
        return verb
    if lowered.endswith("ies"):
        return verb[:-3] + "y"
    if re.search(r"(?:sh|ch|x|z|o)es$", lowered):
        return verb[:-2]
    return verb[:-1]
