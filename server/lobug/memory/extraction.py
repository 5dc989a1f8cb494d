"""Turn a model's fact-extraction output into validated, grounded facts.

Small models produce valid JSON with invented content (SmolLM2 turned "I'm 34 and love pizza"
into "Italy", and took sentences of its own babble for facts), so a fact is kept only when
its key words occur in what the user said: the assistant's reply gives the model context,
never content. Facts in another language than the conversation's, questions, exclamations
and facts about the assistant itself are dropped too.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from datetime import datetime
from typing import Any

from lobug.language.claims import bare
from lobug.language.facts import (
    NO_CLAIM_WORDS,
    USER_IN_OTHER_LANGUAGES,
    names_the_assistant,
    names_the_user,
)
from lobug.language.quality import LANGUAGE_WORDS, text_problem
from lobug.language.text import sentence_case, third_person, word_tokens
from lobug.memory import confidence
from lobug.memory.disclosure import (
    DATED_TYPES,
    due_of_statement,
    informative_sentences,
    is_past,
    names_someone,
    stated_type,
)
from lobug.memory.prompts import WHOSE
from lobug.memory.when import due_time
from lobug.store.models import FACT_TYPES, LEGACY_FACT_TYPES, TIME_SPANS, NewFact, fact_type_of

MAX_FACT_CHARS = 300
MIN_GROUNDED_SHARE = 0.6
MIN_STEM_CHARS = 4


class UnreadableOutput(ValueError):
    """A fact-extraction reply in which no list of facts can be read: the exchange's memory
    work failed (retried, then parked by the work queue), it did not find "no facts"."""


def read_fact_payload(raw: str) -> list[dict[str, Any]]:
    """The list of fact objects in a model reply (`fact_payload`: chatter around the JSON is
    tolerated, and a reply cut off by the token limit still yields the objects completed
    before the cut); UnreadableOutput when it holds no payload at all (not JSON, the wrong
    shape, or cut before its first fact), so that [] always means the model found nothing.
    The error names no word of the reply."""
    found = fact_payload(raw)
    if found is None:
        raise UnreadableOutput(f"unreadable fact-extraction output ({len(raw)} characters)")
    return found


def fact_payload(raw: str) -> list[dict[str, Any]] | None:
    """The fact objects of a reply, or None when it holds no payload: a JSON list, an
    object with a `facts` list (or a lone `fact`; `{}` is none), or the whole objects of a
    list cut short. A readable list keeps only its objects (validation weighs them)."""
    data = whole_json(raw)
    if isinstance(data, dict):
        data = data.get("facts", [data] if "fact" in data else [] if not data else None)
    elif data is None:
        data = _complete_objects(raw) or ([] if _EMPTY_LIST.search(raw) else None)
    if not isinstance(data, list):
        return None
    return [item for item in data if isinstance(item, dict)]


_EMPTY_LIST = re.compile(r"\[\s*\]")


def whole_json(raw: str) -> Any:
    """The reply read as one JSON value (a code fence around it tolerated), else None."""
    text = raw.strip()
    if text.startswith("```"):
        text = text.strip("`").removeprefix("json").strip()
    try:
        return json.loads(text)
    except ValueError:
        return None


def _complete_objects(raw: str) -> list[dict[str, Any]]:
    """Whole {...} objects inside the first JSON array of a truncated reply."""
    start = raw.find("[")
    if start < 0:
        return []
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    position = raw.find("{", start)
    while position >= 0:
        try:
            value, end = decoder.raw_decode(raw, position)
        except ValueError:
            break
        if isinstance(value, dict):
            found.append(value)
        position = raw.find("{", end)
    return found


def content_words(text: str) -> list[str]:
    """The words that carry a claim, lower case, without a possessive ("dog's" -> "dog")."""
    words = (bare(w).strip("'’") for w in word_tokens(text))
    return [w for w in words if (len(w) >= 2 or w.isdigit()) and w not in NO_CLAIM_WORDS]


def same_word(a: str, b: str) -> bool:
    """Equal, or the same word with another ending ("works"/"work", "loved"/"love")."""
    if a == b:
        return True
    if a.isdigit() or b.isdigit():
        return False
    shared = common_prefix_length(a, b)
    return shared >= MIN_STEM_CHARS and shared >= min(len(a), len(b)) - 1


def common_prefix_length(a: str, b: str) -> int:
    for position, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return position
    return min(len(a), len(b))


def occurs_in(word: str, source_words: AbstractSet[str]) -> bool:
    return word in source_words or any(same_word(word, other) for other in source_words)


def is_grounded(fact: str, source_texts: Iterable[str], language: str = "en") -> bool:
    """True when the fact's key words occur in the source: every number and name, and most of
    the remaining words (allowing other endings of the same word). The function words of the
    conversation's `language` ("ist", "eine") and its word for the user are no key words."""
    own = LANGUAGE_WORDS.get(language, frozenset()) if language != "en" else frozenset()
    framing = own | USER_IN_OTHER_LANGUAGES  # English ones are `NO_CLAIM_WORDS` already
    words = [w for w in content_words(fact) if w not in framing]
    if not words:
        return False
    source_words = {w for text in source_texts for w in content_words(text)}
    if not all(occurs_in(word, source_words) for word in _names_and_numbers(fact) - framing):
        return False
    found = sum(1 for w in words if occurs_in(w, source_words))
    return found / len(words) >= MIN_GROUNDED_SHARE


def _names_and_numbers(fact: str) -> set[str]:
    tokens = word_tokens(fact)
    special = set()
    for position, token in enumerate(tokens):
        lowered = token.lower().strip("'’-")
        if lowered in NO_CLAIM_WORDS:
            continue
        if any(c.isdigit() for c in token) or (position > 0 and token[0].isupper()):
            special.add(lowered)
    return special


def claim_problem(claim: str, language: str) -> str | None:
    """Why a claim as the model wrote it is no fact about the user, or None."""
    if claim.rstrip().endswith(("?", "!")):
        return "a question or an exclamation"
    if names_the_assistant(claim):
        return "about the assistant"
    if not (names_the_user(claim) or names_someone(claim)):
        return 'about no one ("The castle")'
    return text_problem(claim, language)


def validate_facts(
    items: Sequence[dict[str, Any]],
    *,
    user_text: str,
    source_message_ids: tuple[int, ...],
    max_facts: int,
    language: str = "en",
    said_at: datetime | None = None,
    trust_model: bool = False,
) -> list[NewFact]:
    """Well-formed facts grounded in the user's statements (`informative_sentences` of
    `user_text`), de-duplicated, at most `max_facts`; claims that fail `claim_problem` are
    dropped. Each is typed by `fact_type`, given the confidence `memory/confidence.py` gives
    a grounded extraction, and, a commitment or a plan, the due time its `due` field or
    sentence names, read as of `said_at` (when the user spoke, in their time zone).
    `trust_model` (a capable backend's extraction): the model's type and its `whose` are
    taken as it gives them; the word rules only fill what it left out."""
    kept: list[NewFact] = []
    seen: set[str] = set()
    statements = informative_sentences(user_text)
    for item in items:
        claim = item.get("fact", item.get("content"))
        if not isinstance(claim, str) or claim_problem(claim, language) is not None:
            continue
        fact = _to_fact(item, source_message_ids, said_at, statements, trust_model)
        if fact is None:
            continue
        key = " ".join(content_words(fact.content))
        if key in seen or not is_grounded(fact.content, statements, language):
            continue
        seen.add(key)
        kept.append(fact)
        if len(kept) >= max_facts:
            break
    return kept


def merge_facts(first: list[NewFact], second: list[NewFact], limit: int) -> list[NewFact]:
    """`first`, then the facts of `second` with other content words, at most `limit`. A fact
    of `first` that `second` holds too (the model's and the user's own statement agree)
    takes the higher confidence of the two."""
    merged = list(first)
    seen = {frozenset(content_words(f.content)): i for i, f in enumerate(first)}
    for fact in second:
        key = frozenset(content_words(fact.content))
        if key not in seen:
            seen[key] = len(merged)
            merged.append(fact)
        elif fact.confidence > merged[seen[key]].confidence:
            merged[seen[key]] = dataclasses.replace(merged[seen[key]], confidence=fact.confidence)
    return merged[:limit]


def source_sentence(fact: str, statements: Sequence[str]) -> str:
    """The user's statement a fact was most likely made from: the one sharing most of its
    content words ("" when there is none)."""
    words = content_words(fact)

    def shared(statement: str) -> int:
        said = set(content_words(statement))
        return sum(1 for word in words if occurs_in(word, said))

    return max(statements, key=shared, default="")


def fact_type(model_type: Any, said: str, *, trust_model: bool = False) -> str:
    """A fact's type: what the user's own sentence says by the rule of
    `disclosure.stated_type`; where the rule finds nothing, the model's type when it is one
    of seed 001's (or an old one, mapped), else identity. A small model's type is no evidence
    (it copies its prompt's example), so the rule goes first; a capable model's
    (`trust_model`) understands the sentence in any language and phrasing, so it goes first
    and the rule only fills a type it left out."""
    known = model_type in FACT_TYPES or model_type in LEGACY_FACT_TYPES
    if trust_model and known:
        return fact_type_of(model_type)
    stated = stated_type(said)
    if stated is not None:
        return stated
    return fact_type_of(model_type) if known else "identity"


def _to_fact(
    item: dict[str, Any],
    source_message_ids: tuple[int, ...],
    said_at: datetime | None,
    statements: Sequence[str] = (),
    trust_model: bool = False,
) -> NewFact | None:
    content = item.get("fact", item.get("content"))
    if not isinstance(content, str):
        return None
    content = sentence_case(third_person(" ".join(content.split())))
    if not content or len(content) > MAX_FACT_CHARS:
        return None
    said = source_sentence(content, statements) or content
    kind = fact_type(item.get("type"), said, trust_model=trust_model)
    whose = item.get("whose") if trust_model and item.get("whose") in WHOSE else None
    span = item.get("time_span")
    due = due_of(item.get("due"), said, said_at) if kind in DATED_TYPES else None
    return NewFact(
        content=content,
        fact_type=kind,
        subject=_optional_text(item.get("subject")),
        relation=_optional_text(item.get("relation")),
        object=_optional_text(item.get("object")),
        time_span=span if span in TIME_SPANS else ("future" if due is not None else None),
        confidence=confidence.of_extraction(said, item.get("confidence")),
        source_message_ids=source_message_ids,
        due_at=due,
        whose=whose,
    )


def due_of(due: Any, said: str, said_at: datetime | None) -> float | None:
    """When a commitment or a plan is due: the time its `due` field names, else one its
    sentence names; None when neither names one, when the sentence tells of something done
    already, or when the time it was said is not known."""
    if said_at is None or is_past(said):
        return None
    if isinstance(due, str) and (at := due_time(due, said_at)) is not None:
        return at
    return due_of_statement(said, "event", said_at)


def _optional_text(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    value = " ".join(value.split())[:MAX_FACT_CHARS]
    return value or None
