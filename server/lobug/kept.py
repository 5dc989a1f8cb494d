"""What a device's turns keep between them, beside its working memory: one store, one lock,
one way to drop it all.

A device's turns share more than their working memory (`turn/devices.py`): the memory looked
up while the person was still speaking (`turn/early.py`), the answer begun in their pause
(`backends/ahead.py`), who claimed to be speaking (`memory/people.py`), a request waiting for
its "yes", a voice being learnt (`memory/voice_enrolment.py`). Each part names a `Slot` of the
one `DeviceKeep` and keeps its value there, by device (and, where a device may serve several
agents, by agent). The keep's lock is the one lock of them all: a part that reads and then
changes what it keeps holds `keep.lock` across both (it is re-entrant). `drop(device)` takes
everything kept for a device at once (the device was evicted: `turn/devices.py`), and hands
each value to its slot's `on_drop` (an answer being written is stopped) outside the lock.

A leaf: it knows nothing of what the values are."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar, cast

T = TypeVar("T")

# What is kept for one device: (slot name, key within the slot) -> value.
_Kept = dict[tuple[str, Hashable], object]


class DeviceKeep:
    """Everything the slots keep, by device, under one lock."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self._kept: dict[str, _Kept] = {}
        self._on_drop: dict[str, Callable[[Any], None]] = {}

    def slot(self, name: str, on_drop: Callable[[T], None] | None = None) -> Slot[T]:
        """The slot `name` (one per part that keeps something); `on_drop(value)` is called
        for each of its values dropped with its device."""
        with self.lock:
            if on_drop is not None:
                self._on_drop[name] = on_drop
        return Slot(self, name)

    def drop(self, device_id: str) -> None:
        """Nothing kept for `device_id` any more; each value's slot is told (`on_drop`)."""
        with self.lock:
            kept = self._kept.pop(device_id, {})
            told = [(self._on_drop.get(name), value) for (name, _), value in kept.items()]
        for on_drop, value in told:
            if on_drop is not None:
                on_drop(value)

    def devices(self) -> set[str]:
        """The devices something is kept for."""
        with self.lock:
            return set(self._kept)

    def _of(self, device_id: str) -> _Kept:
        return self._kept.setdefault(device_id, {})

    def _pop(self, device_id: str, where: tuple[str, Hashable]) -> object | None:
        kept = self._kept.get(device_id)
        if kept is None:
            return None
        value = kept.pop(where, None)
        if not kept:
            del self._kept[device_id]
        return value


class Slot(Generic[T]):
    """One part's values in a `DeviceKeep`, by device and `key` (None: one per device)."""

    def __init__(self, keep: DeviceKeep, name: str) -> None:
        self.keep, self.name = keep, name

    def get(self, device_id: str, key: Hashable = None) -> T | None:
        with self.keep.lock:
            kept = self.keep._kept.get(device_id)
            return None if kept is None else cast("T | None", kept.get((self.name, key)))

    def put(self, device_id: str, value: T, key: Hashable = None) -> T | None:
        """Keep `value`; the value it replaces, if any."""
        with self.keep.lock:
            kept = self.keep._of(device_id)
            earlier = kept.get((self.name, key))
            kept[(self.name, key)] = value
            return cast("T | None", earlier)

    def pop(self, device_id: str, key: Hashable = None) -> T | None:
        """Take the value out; None when there was none."""
        with self.keep.lock:
            return cast("T | None", self.keep._pop(device_id, (self.name, key)))

    def pop_if(self, device_id: str, value: T, key: Hashable = None) -> bool:
        """Take the value out only when it is still `value` (not replaced since)."""
        with self.keep.lock:
            if self.get(device_id, key) is not value:
                return False
            self.keep._pop(device_id, (self.name, key))
            return True

    def items(self) -> list[tuple[str, Hashable, T]]:
        """(device, key, value) of every value kept in the slot."""
        with self.keep.lock:
            return [
                (device_id, key, cast(T, value))
                for device_id, kept in self.keep._kept.items()
                for (name, key), value in kept.items()
                if name == self.name
            ]
