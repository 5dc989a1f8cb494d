"""Memory requests understood by the model (issue 41, item 2): where the chat backend calls
tools (`ChatBackend.supports_tools`: Ollama, OpenAI-compatible servers) and
`LOBUG_UNDERSTANDING` is `auto`, each turn offers the model the memory's requests as tools,
so "please don't remember my allergy anymore", "scratch that thing about the car" or "vergiss,
was ich über meine Reise gesagt habe" are understood in any phrasing and language. The
phrase rules of `spoken_requests` are then not asked; they stay for a model that cannot.

Each tool is carried out by the code a spoken request runs (`spoken_curation`), within what the
speaker may see, and returns the sentence that says what was done ("I forgot 1 fact: ...",
"I didn't find anything about ..."), which the model tells the person: it never learns of a
success that did not happen. A turn in which a memory tool ran is kept as a spoken request
is: neither the request nor its answer stays in the log or the working memory, so nothing is
learned from them and a topic to forget is not written down again (`used_memory`,
`PreparedTurn.conclude`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from lobug.backends.base import ToolBox
from lobug.memory import reminders
from lobug.memory.curation import Curation
from lobug.memory.people import Household
from lobug.memory.spoken_requests import Correction, SetReminder
from lobug.store.household import Viewer
from lobug.turn.spoken_curation import (
    cancel_reminders,
    correct,
    forget_last_turn,
    forget_topic,
    remember_statement,
    set_reminder,
    what_you_know,
)

FORGET_ABOUT = "forget_about"
FORGET_LAST = "forget_last_message"
CORRECT = "correct_fact"
REMEMBER = "remember_fact"
SET_REMINDER = "set_reminder"
LIST_REMINDERS = "list_reminders"
CANCEL_REMINDERS = "cancel_reminders"
WHAT_YOU_KNOW = "what_you_know"
MAX_ARGUMENT_CHARS = 200


def _text(description: str) -> dict[str, str]:
    return {"type": "string", "description": description}


def _spec(name: str, description: str, **properties: dict[str, str]) -> dict[str, Any]:
    parameters = {"type": "object", "properties": properties, "required": list(properties)}
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


SPECS: tuple[dict[str, Any], ...] = (
    _spec(
        FORGET_ABOUT,
        "Forget what the person told you about something, when they ask you to forget, delete, "
        "scratch or stop remembering it.",
        topic=_text("what to forget, in the person's words, e.g. 'my trip', 'my allergy'"),
    ),
    _spec(FORGET_LAST, "Forget the last thing the person said before this request."),
    _spec(
        CORRECT,
        "Change something the person told you before, when they say it is wrong or has changed.",
        subject=_text("what changed, e.g. 'my dog's name'"),
        statement=_text("the new fact in the person's words, e.g. 'My dog is called Pretzel.'"),
    ),
    _spec(
        REMEMBER,
        "Remember a fact about the person, when they ask you to remember or note it.",
        statement=_text("the fact in the person's words, e.g. 'My locker code is 4417.'"),
    ),
    _spec(
        SET_REMINDER,
        "Set a reminder the person asks for.",
        what=_text("what to remind them of, e.g. 'call the vet'"),
        when=_text("when, in English: 'at 18:00', 'tomorrow at 9', 'in 20 minutes'"),
    ),
    _spec(LIST_REMINDERS, "Say which reminders are waiting."),
    _spec(
        CANCEL_REMINDERS,
        "Cancel waiting reminders.",
        about=_text("a word of the reminders to cancel, or 'all'"),
    ),
    _spec(WHAT_YOU_KNOW, "Say what you know about the person, when they ask."),
)
MEMORY_TOOLS = frozenset(spec["function"]["name"] for spec in SPECS)


@dataclass(frozen=True)
class RequestTurn:
    """Where and by whom a turn's memory requests are made."""

    agent: str
    device_id: str
    viewer: Viewer
    now: datetime
    request_message_id: int | None  # the turn's own message (not forgotten as "the last")


def memory_tools(curation: Curation, household: Household, turn: RequestTurn) -> ToolBox:
    """The memory's requests as tools for one turn."""
    handlers = _handlers(curation, household, turn)

    def call(name: str, arguments: dict[str, Any]) -> str:
        said = {k: str(v)[:MAX_ARGUMENT_CHARS].strip() for k, v in arguments.items()}
        return handlers[name](said)

    return ToolBox(SPECS, call)


Handler = Callable[[dict[str, str]], str]


def _handlers(curation: Curation, household: Household, turn: RequestTurn) -> dict[str, Handler]:
    agent, device, viewer, key = (
        turn.agent,
        turn.device_id,
        turn.viewer,
        (turn.agent, turn.device_id),
    )

    def about(said: dict[str, str]) -> str | None:
        wanted = said.get("about", "")
        return None if wanted.lower() in ("", "all", "everything") else wanted

    return {
        FORGET_ABOUT: lambda said: forget_topic(
            curation,
            household.awaiting,
            key,
            said.get("topic", ""),
            viewer,
            turn.request_message_id,
        ),
        FORGET_LAST: lambda said: forget_last_turn(
            curation, agent, device, viewer, before=turn.request_message_id
        ),
        CORRECT: lambda said: correct(
            curation,
            agent,
            Correction(said.get("subject", ""), "", said.get("statement", "")),
            viewer,
            household.awaiting,
            key,
        ),
        REMEMBER: lambda said: remember_statement(
            curation, agent, said.get("statement", ""), viewer
        ),
        SET_REMINDER: lambda said: set_reminder(
            curation,
            agent,
            device,
            SetReminder(said.get("what", ""), said.get("when", "")),
            turn.now,
            viewer,
        ),
        LIST_REMINDERS: lambda said: reminders.listed_for(curation.store, agent, viewer, turn.now),
        CANCEL_REMINDERS: lambda said: cancel_reminders(curation, agent, about(said), viewer),
        WHAT_YOU_KNOW: lambda said: what_you_know(curation, agent, viewer),
    }


def with_memory_tools(device: ToolBox | None, memory: ToolBox) -> ToolBox:
    """The device's tools (when it offers any) and the memory's, as one box."""
    if device is None:
        return memory
    names = {spec["function"]["name"] for spec in memory.specs}
    own = tuple(s for s in device.specs if s["function"]["name"] not in names)

    def call(name: str, arguments: dict[str, Any]) -> str:
        return memory.call(name, arguments) if name in names else device.call(name, arguments)

    return ToolBox((*memory.specs, *own), call)


def used_memory(uses: Sequence[dict[str, Any]]) -> bool:
    """Whether a memory tool ran in a turn (its uses, `ToolBox.recording`)."""
    return any(use.get("name") in MEMORY_TOOLS for use in uses)
