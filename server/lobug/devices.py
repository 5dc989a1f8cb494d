"""The devices heard lately: each one's working memory and sensors, at most `limit` of them.

The least recently used device beyond the limit is dropped; its next turn warms a new state
from the conversation log. A device in the middle of a turn is never dropped: its turn holds
the state's lock, and only an idle state can be evicted. A turn that took a state which was
evicted before it got the lock takes the fresh one instead, so one device never has two
states, or two turns at once.

The tools a connected device offers (`offer_tools`) are kept apart from its state, so a state
evicted while the device stays connected is warmed again with them."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from lobug.backends.base import ToolBox
from lobug.conversation import DeviceState


class DeviceStates:
    def __init__(self, limit: int, warm: Callable[[str], DeviceState]) -> None:
        self.limit = limit
        self._warm = warm
        self._states: OrderedDict[str, DeviceState] = OrderedDict()
        self._tools: dict[str, ToolBox] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._states)

    def __contains__(self, device_id: object) -> bool:
        with self._lock:
            return device_id in self._states

    def of_agent(self, agent: str) -> list[DeviceState]:
        """The states in memory of the devices that talk to `agent`."""
        with self._lock:
            return [state for state in self._states.values() if state.agent == agent]

    def get(self, device_id: str) -> DeviceState:
        """The device's state, warmed from the log when it is not in memory."""
        with self._lock:
            state = self._states.get(device_id)
            if state is None:
                state = self._warm(device_id)
                state.tools = self._tools.get(device_id)
                self._states[device_id] = state
            self._states.move_to_end(device_id)
            self._evict_idle(keep=device_id)
            return state

    def offer_tools(self, device_id: str, tools: ToolBox | None) -> None:
        """The device's turns offer `tools` to the model from now on (None: none)."""
        with self._lock:
            self._set_tools(device_id, tools)

    def withdraw_tools(self, device_id: str, tools: ToolBox) -> None:
        """No more `tools` (the device left), unless others replaced them (it came back)."""
        with self._lock:
            if self._tools.get(device_id) is tools:
                self._set_tools(device_id, None)

    def _set_tools(self, device_id: str, tools: ToolBox | None) -> None:
        if tools is None:
            self._tools.pop(device_id, None)
        else:
            self._tools[device_id] = tools
        if (state := self._states.get(device_id)) is not None:
            state.tools = tools

    @contextmanager
    def turn(self, device_id: str) -> Iterator[DeviceState]:
        """The device's state, held for one turn: other turns of the device wait."""
        state = self._held(device_id)
        try:
            yield state
        finally:
            state.lock.release()

    @contextmanager
    def between_turns(self, device_id: str) -> Iterator[DeviceState | None]:
        """The device's state, held for a moment when no turn holds it; None while one does
        (what is read then may change under the reader)."""
        state = self.get(device_id)
        if not state.lock.acquire(blocking=False):
            yield None
            return
        try:
            yield state
        finally:
            state.lock.release()

    def _held(self, device_id: str) -> DeviceState:
        while True:
            state = self.get(device_id)
            state.lock.acquire()
            with self._lock:
                if self._states.get(device_id) is state:
                    return state
            state.lock.release()  # evicted while this turn waited for it: take the new one

    def _evict_idle(self, keep: str) -> None:
        excess = len(self._states) - self.limit
        for device_id, state in list(self._states.items()):
            if excess <= 0:
                return
            if device_id != keep and not state.lock.locked():
                del self._states[device_id]
                excess -= 1
