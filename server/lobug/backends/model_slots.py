"""Which of llama.cpp's slots a call runs in, so that a conversation finds its own prompt
cached there (issue 45).

A slot keeps the prompt it last read; a new prompt in it reads only what it does not share
with that one: a prefix, and with `n_cache_reuse` runs of it further on too (a history
window that slid by some messages). Left to choose, llama.cpp takes the slot sharing the
longest *prefix* with the prompt and, below a tenth of the prompt, the least recently used:
a device's conversation whose window had slid (only the standing prompt in common) went to
another slot and was read whole (835 tokens in 3.2 s on two cores, against 79 tokens in
0.8 s in its own slot), and another device's turn or background work could take a device's
slot in between.

So the backend chooses (`ModelSlots`): background work always in a slot of its own, never
a device's; a person's call in the slot already holding most of its messages (any of them,
not only a prefix), else the least recently used free one; `ANY_SLOT` (llama.cpp chooses)
when every slot is in use by other conversations."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from lobug.backends.base import ChatMessage

ANY_SLOT = -1  # llama.cpp's `id_slot` for "any free slot"

MessageKey = tuple[str, str]


@dataclass
class HeldPrompt:
    """What one slot holds: the messages of the prompt it last read, when it was last used,
    and how many calls run in it now."""

    messages: frozenset[MessageKey] = frozenset()
    used_at: float = -math.inf
    calls: int = 0


@dataclass
class ModelSlots:
    """The choice of slot for each call: slots 0 to `slots - 2` serve people, the last one
    background work (one slot alone serves both)."""

    slots: int
    clock: Callable[[], float] = time.monotonic
    _held: list[HeldPrompt] = field(init=False)
    _lock: threading.Lock = field(init=False, default_factory=threading.Lock)

    def __post_init__(self) -> None:
        if self.slots < 1:
            raise ValueError("llama.cpp needs a slot at least")
        self._held = [HeldPrompt() for _ in range(max(1, self.slots - 1))]

    @property
    def background(self) -> int:
        """The slot background work runs in (one call at a time: `sharing.ModelTurns`)."""
        return self.slots - 1

    @contextmanager
    def person(self, messages: Sequence[ChatMessage]) -> Iterator[int]:
        """The slot for a person's call reading `messages`, held while the call runs."""
        with self._lock:
            slot = self._choose(messages)
            if slot != ANY_SLOT:
                held = self._held[slot]
                held.messages = frozenset(map(key, messages))
                held.calls += 1
                held.used_at = self.clock()
        try:
            yield slot
        finally:
            if slot != ANY_SLOT:
                with self._lock:
                    held.calls -= 1
                    held.used_at = self.clock()

    def _choose(self, messages: Sequence[ChatMessage]) -> int:
        """The slot holding most of the prompt past its first message (the standing prompt
        every conversation shares). One in use only where it holds at least half of it: then
        it is this conversation's call before (a prompt read ahead, an answer being stopped),
        and llama.cpp runs this one after it; a message two devices happen to share is no
        reason to wait for another's answer. Else the least recently used free slot; else
        any."""
        rest = messages[1:]
        whole = sum(len(key(m)[1]) for m in rest)
        shared = [self._shared(held, rest) for held in self._held]
        for slot in sorted(range(len(shared)), key=shared.__getitem__, reverse=True):
            if shared[slot] == 0:
                break
            if self._held[slot].calls == 0 or 2 * shared[slot] >= whole:
                return slot
        free = [slot for slot, held in enumerate(self._held) if held.calls == 0]
        if not free:
            return ANY_SLOT
        return min(free, key=lambda slot: self._held[slot].used_at)

    @staticmethod
    def _shared(held: HeldPrompt, messages: Sequence[ChatMessage]) -> int:
        """How much of `messages` (in characters) the slot holds already."""
        return sum(len(key(m)[1]) for m in messages if key(m) in held.messages)


def key(message: ChatMessage) -> MessageKey:
    return message["role"], message.get("content") or ""
