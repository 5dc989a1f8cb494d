"""What the user says about themselves, found without a model.

The bundled 135M model rarely extracts usable facts (it copies the prompt's examples), so for
such small models the pipeline also keeps the user's own first-person statements, rewritten in
the third person: "My name is Alex and I work at NASA" -> "The user's name is Alex and the
user works at NASA". Questions and requests are not statements about the user and are skipped.
"""

from __future__ import annotations

import re

from lobug.store.models import NewFact

MAX_SENTENCE_CHARS = 200
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")
_FIRST_PERSON = re.compile(r"\b(i|i'm|i've|i'd|i'll|my|me|mine|myself)\b", re.IGNORECASE)
_REQUEST_START = re.compile(
    r"^(can|could|would|will|please|what|when|where|who|why|how|which|do|does|did|is|are|"
    r"should|tell|let|remind|set|play|turn|show|hey|hi|hello|ok|okay)\b",
    re.IGNORECASE,
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
)
_I_VERB = re.compile(
    r"\bI\s+((?:really|also|just|usually|often|always|never|sometimes|still|actually|mostly|"
    r"only|totally|truly)\s+)?([a-z']+)"
)


def self_disclosures(user_text: str, source_message_ids: tuple[int, ...]) -> list[NewFact]:
    facts = []
    for match in _SENTENCE.finditer(user_text):
        sentence = " ".join(match.group().split())
        if _is_statement_about_user(sentence):
            content = third_person(sentence.rstrip(".!"))
            facts.append(
                NewFact(
                    content=content[0].upper() + content[1:],
                    fact_type="personal",
                    confidence=0.4,
                    source_message_ids=source_message_ids,
                )
            )
    return facts


def _is_statement_about_user(sentence: str) -> bool:
    return (
        len(sentence.split()) >= 3
        and len(sentence) <= MAX_SENTENCE_CHARS
        and not sentence.endswith("?")
        and not _REQUEST_START.match(sentence)
        and bool(_FIRST_PERSON.search(sentence))
    )


def third_person(sentence: str) -> str:
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
