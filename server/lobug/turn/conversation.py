"""Working memory and prompt building: each device keeps its last messages in a deque,
warmed from the conversation log, and its latest sensor reading."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from lobug.backends.base import ChatMessage, ToolBox
from lobug.language.quality import language_rule
from lobug.memory.context import MemoryContext
from lobug.store.household import EVERYONE, Viewer
from lobug.store.models import Message
from lobug.tokens import (
    ITEM_OVERHEAD_TOKENS,
    estimate_tokens,
    prompt_budget_tokens,
    truncate_to_tokens,
)

PERSONALITY = """You are Lo-Bug, a small friendly voice assistant living in an M5Stack device \
on the user's desk. You remember the user across conversations. Answer in one to three short \
spoken sentences: no lists, no markdown, no emoji. If you do not know something, say so."""

AGENCY = """If the input is noise, not meant for you, or needs no answer, reply with exactly \
[IGNORE]. If a small non-verbal reaction fits better than words, start your reply with [REACT]."""


@dataclass(frozen=True)
class SensorReading:
    orientation: str | None = None
    is_moving: bool | None = None
    is_shaking: bool | None = None
    tap_detected: bool | None = None
    accel: tuple[float | None, float | None, float | None] = (None, None, None)
    gyro: tuple[float | None, float | None, float | None] = (None, None, None)
    received_at: float = 0.0

    def describe(self) -> str:
        parts = []
        if self.orientation:
            parts.append(f"Device orientation: {self.orientation}")
        if self.is_moving:
            parts.append("the device is being moved")
        if self.is_shaking:
            parts.append("the device is being shaken")
        if self.tap_detected:
            parts.append("the user just tapped the device")
        return "; ".join(parts)


@dataclass
class DeviceState:
    """One device's working memory and sensor state; `lock` serializes its turns.

    The prompt shows at least the last `size` messages (`shown`); `history` keeps half as
    many again, and `added` counts the messages given since it was made (or refilled)."""

    device_id: str
    agent: str
    size: int
    history: deque[ChatMessage]
    sensors: SensorReading | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    added: int = 0
    # Beside each message of `history`: the person who said it or was answered (None: a
    # guest), so a person is never shown another's words (`Viewer.hears`).
    people: deque[int | None] = field(default_factory=deque)
    # The tools the device offers (a xiaozhi device's MCP tools), for a model that calls them.
    tools: ToolBox | None = None

    def remember(self, role: str, content: str, person_id: int | None = None) -> None:
        self.history.append({"role": role, "content": content})
        self.people.append(person_id)
        self.added += 1

    def refill(self, messages: Iterable[tuple[str, str, int | None]]) -> None:
        """Replace the working memory with `messages` (role, content, person), oldest first."""
        fresh = list(messages)[-self.size :] if self.size else []
        self.history.clear()
        self.history.extend({"role": r, "content": c} for r, c, _ in fresh)
        self.people = deque((p for _, _, p in fresh), maxlen=self.history.maxlen)
        self.added = len(self.history)

    def shown(self, coming: int = 0, viewer: Viewer = EVERYONE) -> list[ChatMessage]:
        """The working memory as a prompt shows it: the last `size` messages and the older
        ones of the same block, for old messages leave it in blocks of half `size` rather
        than one per message. So the prompt's beginning stays the same for several turns and
        a model that caches prompt prefixes need not read it all again each turn (4.2 s for
        440 tokens on two cores). With `coming`, what it will show of the messages it holds now
        once that many more have been added. Of them, those `viewer` may hear."""
        step = max(1, self.size // 2)
        oldest = self.added - len(self.history)  # the count of the oldest message kept
        start = max(oldest, (self.added + coming - self.size) // step * step)
        shown = list(self.history)[start - oldest :]
        if viewer.sees_everything:
            return shown
        people = list(self.people)[start - oldest :]
        return [m for m, p in zip(shown, people, strict=True) if viewer.hears(p)]


def said(message: Message) -> tuple[str, str, int | None]:
    """A logged message as the working memory keeps it (role, content, person)."""
    return message.role, message.content, message.person_id


def new_device_state(
    device_id: str, agent: str, size: int, warm_from: Iterable[tuple[str, str, int | None]]
) -> DeviceState:
    """A device's state with a working memory of `size` messages, warmed from `warm_from`."""
    history: deque[ChatMessage] = deque(maxlen=size + size // 2)
    state = DeviceState(device_id=device_id, agent=agent, size=size, history=history)
    state.refill(warm_from)
    return state


def system_prompt(
    memory: MemoryContext,
    sensors: SensorReading | None,
    *,
    agency: bool = False,
    language: str = "en",
) -> str:
    """Personality, long-term memory, memory blocks, relevant memories, then the physical
    state."""
    standing = standing_prompt(memory, agency=agency, language=language)
    return "\n\n".join([standing, *turn_notes(memory, sensors)])


def standing_prompt(memory: MemoryContext, *, agency: bool = False, language: str = "en") -> str:
    """The part of the system prompt that stays the same from turn to turn; in a language
    other than English, the rule to answer in it (`LOBUG_LANGUAGE`)."""
    personality = PERSONALITY + (f"\n{AGENCY}" if agency else "")
    if language != "en" and language_rule(language):
        personality += f"\n{language_rule(language)}"
    return "\n\n".join([personality, *memory.standing_sections()])


def turn_notes(memory: MemoryContext, sensors: SensorReading | None) -> list[str]:
    """What changes every turn: the facts found for it and the physical state."""
    notes = memory.turn_sections()
    state = sensors.describe() if sensors else ""
    if state:
        notes.append(f"[Current physical state: {state}]")
    return notes


def turn_messages(
    memory: MemoryContext,
    sensors: SensorReading | None,
    history: Sequence[ChatMessage],
    *,
    agency: bool,
    context_tokens: int,
    reply_tokens: int,
    notes_last: bool,
    language: str = "en",
) -> list[ChatMessage]:
    """The messages for one turn. With `notes_last` the per-turn notes are a system message
    just before the newest user message instead of part of the first one, so the prompt's
    beginning (standing prompt and history) repeats from turn to turn and a model server that
    caches prompt prefixes does not recompute it. (The assembler has already left out the
    recalled messages that `history` holds.)"""
    if not notes_last:
        system = system_prompt(memory, sensors, agency=agency, language=language)
        return build_messages(
            system, history, context_tokens=context_tokens, reply_tokens=reply_tokens
        )
    note = "\n\n".join(turn_notes(memory, sensors))
    messages = build_messages(
        standing_prompt(memory, agency=agency, language=language),
        history,
        context_tokens=context_tokens,
        reply_tokens=reply_tokens,
        reserved_tokens=estimate_tokens(note),
    )
    if note:
        messages.insert(len(messages) - 1, {"role": "system", "content": note})
    return messages


def build_messages(
    system: str,
    history: Sequence[ChatMessage],
    *,
    context_tokens: int,
    reply_tokens: int,
    reserved_tokens: int = 0,
) -> list[ChatMessage]:
    """The system prompt and as much recent history as fits the model's context window
    (less `reserved_tokens` kept for something the caller adds), by `estimate_tokens`.

    The newest message (the user's turn) is always kept, cut to the budget if it alone is
    larger; older ones go first, then the end of the system prompt (never the personality)."""
    budget = prompt_budget_tokens(context_tokens, reply_tokens) - reserved_tokens
    kept: list[ChatMessage] = []
    used = estimate_tokens(system)
    for message in reversed(history):
        cost = estimate_tokens(message["content"]) + ITEM_OVERHEAD_TOKENS
        if kept and used + cost > budget:
            break
        kept.append(message)
        used += cost
    if used > budget:
        history_tokens = used - estimate_tokens(system)
        floor = estimate_tokens(PERSONALITY)
        system = truncate_to_tokens(system, max(floor, budget - history_tokens))
        if estimate_tokens(system) + history_tokens > budget and len(kept) == 1:
            room = max(1, budget - estimate_tokens(system) - ITEM_OVERHEAD_TOKENS)
            kept[0] = {**kept[0], "content": truncate_to_tokens(kept[0]["content"], room)}
    return [{"role": "system", "content": system}, *reversed(kept)]
