"""Prompt builders for the memory pipeline. Pure functions: text in, chat messages out."""

from __future__ import annotations

from collections.abc import Sequence

from lobug.backends.base import ChatMessage, JsonSchema
from lobug.language.quality import LANGUAGE_NAMES
from lobug.store.models import FACT_TYPES, TIME_SPANS, Fact, Message, Summary

MAX_TRANSCRIPT_MESSAGE_CHARS = 400
# Whose a fact is, as a capable model's extraction says: the person speaking's own, or the
# household's (`memory/people.owned` reads it).
WHOSE = ("speaker", "household")

FACT_SCHEMA_ITEM: JsonSchema = {
    "type": "object",
    "properties": {
        "fact": {"type": "string"},
        "type": {"type": "string", "enum": list(FACT_TYPES)},
        "subject": {"type": "string"},
        "relation": {"type": "string"},
        "object": {"type": "string"},
        "time_span": {"type": "string", "enum": list(TIME_SPANS)},
        "due": {"type": "string"},
        "confidence": {"type": "number"},
        "whose": {"type": "string", "enum": list(WHOSE)},
    },
    "required": ["fact", "type"],
}


SIMPLE_FACT_SCHEMA_ITEM: JsonSchema = {
    "type": "object",
    "properties": {
        "fact": {"type": "string", "maxLength": 200},
        "type": {"type": "string", "enum": list(FACT_TYPES)},
    },
    "required": ["fact", "type"],
    "additionalProperties": False,
}


def fact_schema(max_items: int, *, simple: bool = False) -> JsonSchema:
    """The extraction output's shape. `simple` leaves out the optional fields, which small
    models fill with junk instead of leaving them out."""
    item = SIMPLE_FACT_SCHEMA_ITEM if simple else FACT_SCHEMA_ITEM
    return {
        "type": "object",
        "properties": {"facts": {"type": "array", "maxItems": max_items, "items": item}},
        "required": ["facts"],
        "additionalProperties": False,
    }


FACT_EXTRACTION_SYSTEM = """You extract durable facts about the user from one exchange.
Output JSON only: {"facts": [{"fact": "...", "type": "identity|trait|preference|event|commitment|
constraint", "subject": "...", "relation": "...", "object": "...", "time_span": "short_term|
medium_term|current|long_term|future", "due": "...", "whose": "speaker|household",
"confidence": 0.0-1.0}]}
Rules:
- Each fact is one short standalone sentence in the third person ("The user ...").
- Only facts stated in the exchange. Never guess or add details.
- Skip greetings, chitchat, questions and filler. No facts: {"facts": []}.
- type: identity (name, work, family, home), trait (character, skills, habits, what the user
  knows), preference (likes, dislikes), event (something that happened or is planned),
  commitment (something the user promised or intends to do), constraint (a limit: allergy,
  budget, rule, something the user cannot do).
- time_span: how long the fact holds. due: when a commitment is due, in the user's words
  ("tomorrow", "on Friday").
- whose: speaker (about the person talking: their work, health, family, plans) or household
  (shared by everyone at home: "we have a beagle", "our wifi password is ...").
- subject/relation/object, time_span, due, whose and confidence are optional; confidence is
  how sure the exchange makes the fact."""


SIMPLE_FACT_EXTRACTION_SYSTEM = """Extract facts about the user from the exchange.
Output JSON only: {"facts": [{"fact": "The user ...", "type": "identity"}]}
Each fact is one short sentence about the user, stated in the exchange.
type is one of: identity, trait, preference, event, commitment, constraint.
No facts: {"facts": []}."""


# "The user" as a fact in another language opens (`in_language`;
# `language.facts.USER_IN_OTHER_LANGUAGES`).
THE_USER = {
    "de": "Der Benutzer",
    "fr": "L'utilisateur",
    "es": "El usuario",
    "it": "L'utente",
    "pt": "O utilizador",
}


def in_language(system: str, language: str) -> str:
    """The extraction instructions for a conversation in `language`: its facts written in
    that language (the conversation's words are what a fact is checked against, and what
    is said back), "The user" in its words, the examples too."""
    if language in ("en", "auto"):
        return system
    name = LANGUAGE_NAMES.get(language, language)
    the_user = THE_USER.get(language)
    if the_user is not None:
        system = system.replace('"The user ..."', f'"{the_user} ..."')
    rule = f"The conversation is in {name}: write every fact in {name}, about the user"
    return (
        f"{system}\n{rule} in the third person, from the user's words (never copy the assistant's)."
    )


def fact_extraction_messages(
    user_text: str, assistant_text: str, *, simple: bool = False, language: str = "en"
) -> list[ChatMessage]:
    exchange = f"User: {user_text}\nAssistant: {assistant_text}"
    system = SIMPLE_FACT_EXTRACTION_SYSTEM if simple else FACT_EXTRACTION_SYSTEM
    return [
        {"role": "system", "content": in_language(system, language)},
        {"role": "user", "content": exchange},
    ]


# Several exchanges in one extraction call (`memory/batch_extraction.py`): each is tagged
# by its number and each fact names the number of the exchange it was stated in.
EXCHANGE_FIELD = "exchange"


def batch_fact_schema(exchanges: int, max_items: int, *, simple: bool = False) -> JsonSchema:
    """`fact_schema` for `exchanges` numbered exchanges: each item names its exchange (1 to
    `exchanges`) before its fact, at most `max_items` facts for each exchange."""
    schema = fact_schema(max_items * exchanges, simple=simple)
    item = schema["properties"]["facts"]["items"]
    number = {"type": "integer", "enum": list(range(1, exchanges + 1))}
    tagged = {
        **item,
        "properties": {EXCHANGE_FIELD: number, **item["properties"]},
        "required": [EXCHANGE_FIELD, *item["required"]],
    }
    schema["properties"]["facts"] = {**schema["properties"]["facts"], "items": tagged}
    return schema


BATCH_RULE = """The exchanges are numbered. Every fact names the exchange it was stated in:
{"exchange": 2, "fact": "The user ...", ...}. A fact comes from one exchange only."""


def batch_fact_extraction_messages(
    exchanges: Sequence[tuple[str, str]], *, simple: bool = False, language: str = "en"
) -> list[ChatMessage]:
    """Ask for the facts of several exchanges (the user's words, the assistant's) at once."""
    system = SIMPLE_FACT_EXTRACTION_SYSTEM if simple else FACT_EXTRACTION_SYSTEM
    system = system.replace("from one exchange", "from each exchange")
    system = system.replace("from the exchange", "from each exchange")
    body = "\n\n".join(
        f"Exchange {number}\nUser: {user}\nAssistant: {assistant}"
        for number, (user, assistant) in enumerate(exchanges, start=1)
    )
    return [
        {"role": "system", "content": in_language(f"{system}\n{BATCH_RULE}", language)},
        {"role": "user", "content": body},
    ]


SUMMARY_SYSTEM = """Summarize the conversation below in 3 to 5 sentences.
Write in the third person and past tense ("The user said ...").
Keep specifics: names, dates, numbers, places, decisions. No commentary."""


def transcript(messages: Sequence[Message]) -> str:
    lines = []
    for message in messages:
        speaker = "User" if message.role == "user" else "Assistant"
        text = message.content
        if len(text) > MAX_TRANSCRIPT_MESSAGE_CHARS:
            text = text[:MAX_TRANSCRIPT_MESSAGE_CHARS] + "..."
        lines.append(f"{speaker}: {text}")
    return "\n".join(lines)


def summarize_conversation_messages(messages: Sequence[Message]) -> list[ChatMessage]:
    return [
        {"role": "system", "content": SUMMARY_SYSTEM},
        {"role": "user", "content": transcript(messages)},
    ]


DISTILL_SYSTEM = """You maintain a short document about the user: what an assistant should
always remember. Merge the new summaries and facts into the current document.
Sections, each a short bullet list: User Profile, Preferences, Ongoing Topics, Key History.
Keep what is still true, update what changed, drop trivia. At most 400 words.
Output only the document."""


def distill_base_memory_messages(
    current_base: str, summaries: Sequence[Summary], facts: Sequence[Fact]
) -> list[ChatMessage]:
    summary_lines = "\n".join(f"- {s.content}" for s in summaries) or "- (none)"
    fact_lines = "\n".join(f"- {f.content}" for f in facts) or "- (none)"
    body = (
        f"Current document:\n{current_base or '(empty)'}\n\n"
        f"New summaries:\n{summary_lines}\n\nRecent facts:\n{fact_lines}"
    )
    return [
        {"role": "system", "content": DISTILL_SYSTEM},
        {"role": "user", "content": body},
    ]


TOPIC_SCHEMA: JsonSchema = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 60},
        "summary": {"type": "string", "maxLength": 600},
        "open_questions": {"type": "array", "maxItems": 5, "items": {"type": "string"}},
        "next_actions": {"type": "array", "maxItems": 5, "items": {"type": "string"}},
    },
    "required": ["name", "summary", "open_questions", "next_actions"],
    "additionalProperties": False,
}

TOPIC_SYSTEM = """You describe one topic of what an assistant remembers about the user.
Output JSON only: {"name": "...", "summary": "...", "open_questions": ["...?"],
"next_actions": ["..."]}
- name: a title of 1 to 5 words, from the notes' own words.
- summary: 1 to 3 sentences in the third person ("The user ..."), only what the notes say.
- open_questions: what is still unknown about the topic, each ending with "?" (or none).
- next_actions: concrete follow-ups the notes imply (or none). Never invent details."""


def topic_messages(texts: Sequence[str]) -> list[ChatMessage]:
    """Ask for a topic's name, summary, open questions and next actions from its notes."""
    notes = "\n".join(f"- {text}" for text in texts)
    return [
        {"role": "system", "content": TOPIC_SYSTEM},
        {"role": "user", "content": f"Notes:\n{notes}"},
    ]
