"""Memory requests said or typed to a device ("forget that", "forget what I told you about my
sister", "that's wrong, my sister's name is Ana"; see `spoken_requests`), carried out and
answered with a short confirmation, without asking the model.

Neither the request nor its answer enters the conversation log or the working memory: nothing
is learned from them, and a topic to forget is not written down again. Changes are audited
as `voice`. When what memory holds about the topic cannot be looked up (the embedder down),
nothing is changed and the answer says it could not check, never that nothing was saved.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Protocol

from lobug.language.text import (
    fact_said_to_the_user,
    second_person,
    sentence_case,
    third_person,
)
from lobug.memory import reminders
from lobug.memory.curation import Curation, TopicLookupFailed
from lobug.memory.people import Confirmations, Household
from lobug.memory.spoken_requests import (
    CancelReminder,
    Correction,
    ForgetLast,
    ForgetTopic,
    ListReminders,
    SetReminder,
    WhatYouKnow,
    recognise_memory_request,
)
from lobug.memory.voice_enrolment import HeardVoice
from lobug.store.errors import StoreError
from lobug.store.household import EVERYONE, Speaker, Viewer
from lobug.store.models import VOICE, Fact, FactQuery, Forgotten


class DeviceAt(Protocol):
    """Where a request was said: a device (its id) of an agent."""

    agent: str
    device_id: str


# How far back "forget that" looks for the person's last message on this device.
LAST_TURN_WINDOW = 20
MAX_LISTED = 3
MAX_KNOWN_LISTED = 8  # facts "what do you know about me" says

log = logging.getLogger(__name__)

# Said when a purge failed before it finished (never "done": what is recorded of it is finished
# by the background work, `MemoryWork.resume`, or by asking again).
NOT_FINISHED = (
    "Something went wrong while I was erasing what I know about you, so it is not finished "
    "yet. Please ask me again in a moment."
)


def could_not_check(about: str, undone: str) -> str:
    """The answer when the facts about `about` could not be looked up."""
    log.warning("the facts about a spoken topic could not be looked up", exc_info=True)
    return (
        f"I couldn't check what I have saved about {about} just now, so {undone}. "
        "Please ask me again in a moment."
    )


def answer_request(
    curation: Curation,
    household: Household,
    at: DeviceAt,
    speaker: Speaker,
    text: str,
    now: datetime,
    heard: HeardVoice | None = None,
    rules: bool = True,
) -> str | None:
    """A memory request said on a device (`at`: its agent and id) by `speaker`, carried out
    within what they may see (enrolment by voice and its sentences, `heard` in a voice turn;
    "forget everything about me" and its confirmation; the requests of `spoken_requests`),
    and the sentence to say back; None for any other turn."""
    learning = household.enrolment.turn(curation, (at.agent, at.device_id), speaker, text, heard)
    if learning is not None:
        return learning
    checking = household.check_claim(at.agent, speaker, text, heard)
    if checking is not None:
        return checking
    key = (at.agent, at.device_id)
    confirmed = household.awaiting.take(key, speaker.person_id, text)
    if isinstance(confirmed, ForgetFound):
        return forget_found(curation, at.agent, confirmed)
    if isinstance(confirmed, CorrectFound):
        return correct_found(curation, at.agent, confirmed)
    try:
        forget_me = household.forget_me_turn(
            at.agent, at.device_id, speaker, text, confirmed, purge=partial(purge_person, curation)
        )
    except StoreError:
        log.warning("a purge of a person did not finish", exc_info=True)
        return NOT_FINISHED
    if forget_me is not None:
        curation.on_forget(at.agent)  # what they said leaves the working memories too
        return forget_me
    request = recognise_memory_request(text) if rules else None
    if request is None:
        return None
    viewer = household.viewer(at.agent, speaker)
    if isinstance(request, ForgetTopic):
        return forget_topic(curation, household.awaiting, key, request.topic, viewer)
    if isinstance(request, Correction):
        return correct(curation, at.agent, request, viewer, household.awaiting, key)
    return carry_out(curation, at.agent, at.device_id, request, now, viewer)


def purge_person(curation: Curation, agent: str, person_id: int) -> str:
    """ "Yes, forget me": everything about the person, every copy, as one durable job; the
    answer, once it finished, says what went (household facts they stated stay)."""
    counts = curation.forget_person(agent, person_id, actor=VOICE)
    if not counts["facts"] and not counts["messages"]:
        return "Done. I had nothing of yours left to forget."
    notes, said = plural(counts["facts"], "note"), plural(counts["messages"], "message")
    return f"Done. I erased what I knew about you: {notes} and {said}."


def carry_out(
    curation: Curation,
    agent: str,
    device_id: str,
    request: ForgetLast | Correction | SetReminder | ListReminders | CancelReminder | WhatYouKnow,
    now: datetime,
    viewer: Viewer = EVERYONE,
) -> str:
    """Do what was asked (`now`: the time where the user lives), within what `viewer` (the
    one speaking) may see; the sentence to say back."""
    if isinstance(request, ForgetLast):
        return forget_last_turn(curation, agent, device_id, viewer)
    if isinstance(request, SetReminder):
        return set_reminder(curation, agent, device_id, request, now, viewer)
    if isinstance(request, ListReminders):
        return reminders.listed_for(curation.store, agent, viewer, now)
    if isinstance(request, CancelReminder):
        return cancel_reminders(curation, agent, request.about, viewer)
    if isinstance(request, WhatYouKnow):
        return what_you_know(curation, agent, viewer)
    return correct(curation, agent, request, viewer)


def set_reminder(
    curation: Curation,
    agent: str,
    device_id: str,
    request: SetReminder,
    now: datetime,
    viewer: Viewer = EVERYONE,
) -> str:
    """Store `viewer`'s reminder (`memory/reminders.py`); say back when it will ring."""
    store = curation.store
    return reminders.set_for(
        store, agent, device_id, viewer, request.what, request.when, now, actor=VOICE
    )


def cancel_reminders(
    curation: Curation, agent: str, about: str | None, viewer: Viewer = EVERYONE
) -> str:
    """Cancel `viewer`'s waiting reminders about `about` (all of theirs when None)."""
    return reminders.cancel_for(curation.store, agent, viewer, about, actor=VOICE)


def what_you_know(curation: Curation, agent: str, viewer: Viewer = EVERYONE) -> str:
    """The newest facts `viewer` may see, said back (`MAX_KNOWN_LISTED`), and how many more."""
    facts, total = curation.store.list_facts(
        agent, FactQuery(limit=MAX_KNOWN_LISTED, viewer=viewer)
    )
    if not facts:
        return "I don't know anything about you yet. Tell me, and I'll remember."
    listed = "; ".join(inline(fact_said_to_the_user(fact.content)) for fact in facts)
    more = f", and {plural(total - len(facts), 'other thing')}" if total > len(facts) else ""
    return f"I know that {listed}{more}."


def forget_last_turn(
    curation: Curation,
    agent: str,
    device_id: str,
    viewer: Viewer = EVERYONE,
    before: int | None = None,
) -> str:
    """Forget the device's last message from the person and what came after it (before
    message `before`: the request itself, when it was logged)."""
    recent = [
        m
        for m in curation.store.recent_messages(agent, device_id, LAST_TURN_WINDOW)
        if viewer.hears(m.person_id) and (before is None or m.id < before)
    ]
    starts = [i for i, message in enumerate(recent) if message.role == "user"]
    if not starts:
        return "There is nothing for me to forget yet."
    ids = [message.id for message in recent[starts[-1] :]]
    curation.forget_messages(agent, ids, actor=VOICE)
    return "Okay, I forgot what you just said."


@dataclass(frozen=True)
class ForgetFound:
    """A topic's facts found by meaning only and the messages about it, waiting for a yes."""

    about: str  # as said back: "your trip"
    facts: tuple[Fact, ...]
    messages: tuple[int, ...]


def forget_topic(
    curation: Curation,
    awaiting: Confirmations,
    key: tuple[str, str],
    topic: str,
    viewer: Viewer = EVERYONE,
    request_id: int | None = None,
) -> str:
    """Forget the facts that name `topic` (that `viewer` may see) and what they said about it
    (their messages naming it, the exchanges those facts came from), and say which facts
    went. Facts only close in meaning are not forgotten on a guess: they are said back, and
    forgotten on a "yes" (`awaiting`, on device `key`). Nothing changes when the facts cannot
    be looked up. `request_id`: the request's own message, when it was logged (not counted)."""
    about = second_person(topic)
    try:
        named = curation.facts_about(key[0], topic, viewer)
        facts = named or curation.facts_about(key[0], topic, viewer, loose=True)
    except TopicLookupFailed:
        return could_not_check(about, "I haven't forgotten anything")
    messages = [
        i for i in curation.messages_about(key[0], topic, viewer, facts=facts) if i != request_id
    ]
    found = ForgetFound(about, tuple(facts), tuple(messages))
    if named or not facts:
        return forget_found(curation, key[0], found)
    awaiting.ask(key, viewer.person_id, found)
    listed = "; ".join(inline(fact_said_to_the_user(fact.content)) for fact in facts[:MAX_LISTED])
    notes, them = ("this note", "it") if len(facts) == 1 else (f"these {len(facts)} notes", "them")
    return (
        f"I have nothing that names {about}, but {notes} may be about it: {listed}. "
        f'Say "yes" and I\'ll forget {them}.'
    )


def forget_found(curation: Curation, agent: str, found: ForgetFound) -> str:
    """Purge `found` (its facts, then its messages and what was learned only from them)
    and say what went."""
    for fact in found.facts:
        curation.forget_fact(agent, fact.id, purge=True, actor=VOICE)
    forgotten = curation.forget_messages(agent, list(found.messages), actor=VOICE)
    learned_with = len(set(forgotten.facts) - {fact.id for fact in found.facts})
    return forgot_about(found.about, [f.content for f in found.facts], learned_with, forgotten)


def forgot_about(about: str, facts: list[str], learned_with: int, forgotten: Forgotten) -> str:
    """What a forgotten topic's answer says: the facts that went (`MAX_LISTED` of them, as
    said to the person), and the messages and notes that went with them; or that nothing
    was found."""
    if not facts and not forgotten.messages:
        return f"I didn't find anything about {about}."
    if not facts:
        said = plural(len(forgotten.messages), "message")
        notes = f", and {plural(learned_with, 'note')} I took from it" if learned_with else ""
        return f"I deleted {said} of yours that mentioned {about}{notes}."
    listed = "; ".join(inline(fact_said_to_the_user(fact)) for fact in facts[:MAX_LISTED])
    more = len(facts) - MAX_LISTED + learned_with
    tail = f", and {plural(more, 'other note')}" if more > 0 else ""
    return f"I forgot {plural(len(facts), 'fact')}: {listed}{tail}."


def inline(sentence: str) -> str:
    """A sentence said back ("Your dog is Rex.") as part of a longer one ("your dog is Rex")."""
    text = sentence.rstrip(".")
    return text[0].lower() + text[1:] if re.match(r"You\b|Your\b", text) else text


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def remember_statement(
    curation: Curation, agent: str, statement: str, viewer: Viewer = EVERYONE
) -> str:
    """Store what the person asked to be remembered ("My locker code is 4417.") as their fact.
    A guest of a household with people has no notes."""
    if viewer.kind == "guest":
        return "I only keep notes for the people of this household."
    said = statement.strip().rstrip(".!")
    if not said:
        return "I didn't catch what to remember."
    content = sentence_case(third_person(said))
    curation.add_fact(agent, content, "identity", actor=VOICE, owner_person_id=viewer.person_id)
    return f"Thanks, I'll remember that {second_person(said)}."


@dataclass(frozen=True)
class CorrectFound:
    """A correction whose one fact was found by meaning only, waiting for a yes."""

    fact: Fact
    content: str  # the corrected fact, about the user
    said: str  # the corrected fact as said back


def correct(
    curation: Curation,
    agent: str,
    request: Correction,
    viewer: Viewer = EVERYONE,
    awaiting: Confirmations | None = None,
    key: tuple[str, str] | None = None,
) -> str:
    """Replace the one fact about the subject (among those `viewer` may see) with the
    statement; ask which when there are several. When none names the subject and one is
    close in meaning ("my dog" for "The user has a beagle named Biscuit"), it is read back
    and replaced on a "yes" (`awaiting`, on device `key`); with none, the statement is stored
    as the speaker's. A guest of a household with people has no notes to correct."""
    if viewer.kind == "guest":
        return "I only keep notes for the people of this household."
    content = sentence_case(third_person(request.statement.rstrip(".!")))
    said = second_person(request.statement.rstrip(".!"))
    try:
        candidates = curation.facts_about(agent, request.subject, viewer)
        close = []
        if not candidates and awaiting is not None:
            close = curation.facts_about(agent, request.subject, viewer, loose=True)
    except TopicLookupFailed:
        return could_not_check(second_person(request.subject), "I haven't changed anything")
    if len(close) == 1 and awaiting is not None and key is not None:
        awaiting.ask(key, viewer.person_id, CorrectFound(close[0], content, said))
        old = inline(fact_said_to_the_user(close[0].content))
        return f'I have this note: {old}. Say "yes" and I\'ll change it to: {said}.'
    if not candidates:
        return remember_statement(curation, agent, request.statement, viewer)
    if len(candidates) == 1:
        return correct_found(curation, agent, CorrectFound(candidates[0], content, said))
    listed = " or ".join(f'"{fact.content}"' for fact in candidates[:MAX_LISTED])
    return (
        f"I have {len(candidates)} notes about {second_person(request.subject)}: {listed}. "
        "Which one is wrong?"
    )


def correct_found(curation: Curation, agent: str, found: CorrectFound) -> str:
    curation.correct_fact(agent, found.fact.id, found.content, actor=VOICE)
    return f"Got it, I corrected that: {found.said}."
