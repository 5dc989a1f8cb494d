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
from datetime import datetime
from typing import Protocol

from lobug.memory import reminders
from lobug.memory.curation import Curation, TopicLookupFailed
from lobug.memory.people import Household
from lobug.memory.spoken_requests import (
    CancelReminder,
    Correction,
    ForgetLast,
    ForgetTopic,
    ListReminders,
    MemoryRequest,
    SetReminder,
    recognise_memory_request,
)
from lobug.memory.voice_enrolment import HeardVoice
from lobug.store.household import EVERYONE, Speaker, Viewer
from lobug.store.models import VOICE
from lobug.text import second_person, sentence_case, third_person


class DeviceAt(Protocol):
    """Where a request was said: a device (its id) of an agent."""

    agent: str
    device_id: str


# How far back "forget that" looks for the person's last message on this device.
LAST_TURN_WINDOW = 20
MAX_LISTED = 3

log = logging.getLogger(__name__)


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
) -> str | None:
    """A memory request said on a device (`at`: its agent and id) by `speaker`, carried out
    within what they may see (enrolment by voice and its sentences, `heard` in a voice turn;
    "forget everything about me" and its confirmation; the requests of `spoken_requests`),
    and the sentence to say back; None for any other turn."""
    learning = household.enrolment.turn(curation, (at.agent, at.device_id), speaker, text, heard)
    if learning is not None:
        return learning
    forget_me = household.forget_me_turn(at.agent, at.device_id, speaker, text)
    if forget_me is not None:
        curation.on_forget(at.agent)  # what they said leaves the working memories too
        return forget_me
    request = recognise_memory_request(text)
    if request is None:
        return None
    viewer = household.viewer(at.agent, speaker)
    return carry_out(curation, at.agent, at.device_id, request, now, viewer)


def carry_out(
    curation: Curation,
    agent: str,
    device_id: str,
    request: MemoryRequest,
    now: datetime,
    viewer: Viewer = EVERYONE,
) -> str:
    """Do what was asked (`now`: the time where the user lives), within what `viewer` (the
    one speaking) may see; the sentence to say back."""
    if isinstance(request, ForgetLast):
        return forget_last_turn(curation, agent, device_id, viewer)
    if isinstance(request, ForgetTopic):
        return forget_topic(curation, agent, request.topic, viewer)
    if isinstance(request, SetReminder):
        return set_reminder(curation, agent, device_id, request, now)
    if isinstance(request, ListReminders):
        return reminders.listed(curation.store.waiting_reminders(agent), now)
    if isinstance(request, CancelReminder):
        return cancel_reminders(curation, agent, request.about)
    return correct(curation, agent, request, viewer)


def set_reminder(
    curation: Curation, agent: str, device_id: str, request: SetReminder, now: datetime
) -> str:
    """Store the reminder; say back when it will ring (the time chosen for "at six")."""
    ring = reminders.ring_time(request.when, now)
    about = second_person(reminders.to_phrase(request.what))
    if ring is None:
        return f"I can only remind you {about} at a time still to come, within a year."
    curation.store.add_reminder(agent, device_id, request.what, ring.at.timestamp(), actor=VOICE)
    return f"Okay, I'll remind you {about} {ring.said}."


def cancel_reminders(curation: Curation, agent: str, about: str | None) -> str:
    """Cancel the waiting reminders about `about` (all when None); say which."""
    waiting = curation.store.waiting_reminders(agent)
    chosen = reminders.about(waiting, about)
    if not chosen:
        topic = "" if about is None else f" about {second_person(about)}"
        return f"You have no reminders{topic}."
    cancelled = curation.store.cancel_reminders(agent, [r.id for r in chosen], actor=VOICE)
    if len(cancelled) == 1:
        about = second_person(reminders.to_phrase(cancelled[0].what))
        return f"Okay, I cancelled the reminder {about}."
    return f"Okay, I cancelled {len(cancelled)} reminders."


def forget_last_turn(
    curation: Curation, agent: str, device_id: str, viewer: Viewer = EVERYONE
) -> str:
    """Forget the device's last message from the person and what came after it."""
    recent = [
        m
        for m in curation.store.recent_messages(agent, device_id, LAST_TURN_WINDOW)
        if viewer.hears(m.person_id)
    ]
    starts = [i for i, message in enumerate(recent) if message.role == "user"]
    if not starts:
        return "There is nothing for me to forget yet."
    ids = [message.id for message in recent[starts[-1] :]]
    curation.forget_messages(agent, ids, actor=VOICE)
    return "Okay, I forgot what you just said."


def forget_topic(curation: Curation, agent: str, topic: str, viewer: Viewer = EVERYONE) -> str:
    """Purge the facts and messages about `topic` that `viewer` may see; nothing when the
    facts about it cannot be looked up."""
    about = second_person(topic)
    try:
        facts = curation.facts_about(agent, topic, viewer)
    except TopicLookupFailed:
        return could_not_check(about, "I haven't forgotten anything")
    messages = curation.messages_about(agent, topic, viewer)
    for fact in facts:
        curation.forget_fact(agent, fact.id, purge=True, actor=VOICE)
    curation.forget_messages(agent, messages, actor=VOICE)
    if not facts and not messages:
        return f"I had nothing saved about {about}."
    return f"Okay, I forgot what you told me about {about}."


def correct(curation: Curation, agent: str, request: Correction, viewer: Viewer = EVERYONE) -> str:
    """Replace the one fact about the subject (among those `viewer` may see) with the
    statement; store it (the speaker's) when there is none; ask which when there are
    several. A guest of a household with people has no notes to correct."""
    if viewer.kind == "guest":
        return "I only keep notes for the people of this household."
    content = sentence_case(third_person(request.statement.rstrip(".!")))
    said = second_person(request.statement.rstrip(".!"))
    try:
        candidates = curation.facts_about(agent, request.subject, viewer)
    except TopicLookupFailed:
        return could_not_check(second_person(request.subject), "I haven't changed anything")
    if not candidates:
        curation.add_fact(agent, content, "identity", actor=VOICE, owner_person_id=viewer.person_id)
        return f"Thanks, I'll remember that {said}."
    if len(candidates) == 1:
        curation.correct_fact(agent, candidates[0].id, content, actor=VOICE)
        return f"Got it, I corrected that: {said}."
    listed = " or ".join(f'"{fact.content}"' for fact in candidates[:MAX_LISTED])
    return (
        f"I have {len(candidates)} notes about {second_person(request.subject)}: {listed}. "
        "Which one is wrong?"
    )
