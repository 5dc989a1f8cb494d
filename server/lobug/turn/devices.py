"""The devices heard lately: each one's working memory and sensors, at most `limit` of them.

One eviction rule for everything kept per device: a device not heard from for `idle_s`, or
the least recently used beyond the limit, is dropped, with everything the other parts keep for
it in the device keep (`lobug.kept`: the early look-up, the answer ahead, a claim of who
speaks, a request waiting for its "yes", a voice being learnt), under the keep's one lock;
its next turn warms a new state from the conversation log. A device in the middle of a turn
is never dropped: its turn holds the state's lock, and only an idle state can be evicted. A
turn that took a state which was evicted before it got the lock takes the fresh one instead,
so one device never has two states, or two turns at once.

The tools a connected device offers (`offer_tools`) are kept apart from its state, so a state
evicted while the device stays connected is warmed again with them.

A surface waits for its device's turn with `queued` (or `admit`) before it hands the turn to a
worker thread: the wait is on the event loop, never on a shared pool thread, so a device with
many turns pending cannot take the threads the turn it waits for needs to finish (issue 42).
At most `max_waiting` turns of one device wait; the next is refused (`DeviceBusy`)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field

from lobug.backends.base import ToolBox
from lobug.kept import DeviceKeep
from lobug.turn.conversation import DeviceState

MAX_WAITING_TURNS = 2  # a device's turns waiting behind the one in progress
IDLE_S = 3600.0  # a device not heard from for this long is dropped from memory


class DeviceBusy(Exception):
    """A device's turn refused: `max_waiting` of its turns wait already."""

    def __init__(self, device_id: str, waiting: int) -> None:
        super().__init__(
            f"device {device_id!r} has {waiting} turns waiting already: "
            "wait for an answer before asking again"
        )
        self.device_id = device_id


@dataclass
class TurnGate:
    """One device's turns: whether one is in, and the futures of those waiting, in order.
    Bound to no event loop: a waiter is woken on its own loop."""

    waiting: deque[asyncio.Future[None]] = field(default_factory=deque)
    taken: bool = False


def _wake(handed: asyncio.Future[None]) -> None:
    if not handed.done():
        handed.set_result(None)


class Admitted:
    """A device's turn let in by its gate; `leave` (once, from any thread) lets the next in."""

    def __init__(self, states: DeviceStates, device_id: str) -> None:
        self._states, self._device_id = states, device_id
        self._left = threading.Event()

    def leave(self) -> None:
        if not self._left.is_set():
            self._left.set()
            self._states.hand_on(self._device_id)


class DeviceStates:
    def __init__(
        self,
        limit: int,
        warm: Callable[[str], DeviceState],
        max_waiting: int = MAX_WAITING_TURNS,
        idle_s: float = IDLE_S,
        clock: Callable[[], float] = time.monotonic,
        keep: DeviceKeep | None = None,
    ) -> None:
        """`keep`: what the other parts keep per device, dropped with the device; its lock is
        this registry's too (one lock for everything a device's turns share)."""
        self.limit = limit
        self.max_waiting = max_waiting
        self.idle_s = idle_s
        self._warm, self._clock = warm, clock
        self._states: OrderedDict[str, DeviceState] = OrderedDict()
        self._used: dict[str, float] = {}  # when each state was last asked for
        self.keep = keep or DeviceKeep()
        self._tools: dict[str, ToolBox] = {}
        self._gates: dict[str, TurnGate] = {}  # only while a turn is in or waits
        self._lock = self.keep.lock

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
            self._used[device_id] = self._clock()
            evicted = self._evict_idle(keep=device_id)
        self._forget(evicted)
        return state

    def sweep(self) -> list[str]:
        """Drop the states idle for `idle_s` (as every `get` does); the devices dropped."""
        with self._lock:
            evicted = self._evict_idle(keep=None)
        self._forget(evicted)
        return evicted

    def _forget(self, evicted: list[str]) -> None:
        for device_id in evicted:
            self.keep.drop(device_id)

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

    async def admit(self, device_id: str) -> Admitted:
        """Wait, on the event loop, until the device's earlier turns are done; DeviceBusy when
        `max_waiting` of its turns wait already. The caller `leave`s when its turn is over."""
        with self._lock:
            gate = self._gates.setdefault(device_id, TurnGate())
            if not gate.taken:
                gate.taken = True
                return Admitted(self, device_id)
            if len(gate.waiting) >= self.max_waiting:
                raise DeviceBusy(device_id, len(gate.waiting))
            handed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            gate.waiting.append(handed)
        try:
            await handed
        except asyncio.CancelledError:
            with self._lock:
                handed_over = handed not in gate.waiting
                if not handed_over:
                    gate.waiting.remove(handed)
            if handed_over:  # let in as it was cancelled: the next one goes instead
                self.hand_on(device_id)
            raise
        return Admitted(self, device_id)

    @asynccontextmanager
    async def queued(self, device_id: str) -> AsyncIterator[None]:
        """`admit` for the length of a `with` block."""
        admitted = await self.admit(device_id)
        try:
            yield
        finally:
            admitted.leave()

    def hand_on(self, device_id: str) -> None:
        """The device's turn is over: the next waiting one goes in, or the gate goes."""
        with self._lock:
            gate = self._gates.get(device_id)
            if gate is None:
                return
            if gate.waiting:
                handed = gate.waiting.popleft()
                handed.get_loop().call_soon_threadsafe(_wake, handed)
            else:
                del self._gates[device_id]

    def gates_open(self) -> int:
        """Devices with a turn in or waiting (their gates are dropped when none is)."""
        with self._lock:
            return len(self._gates)

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

    def _evict_idle(self, keep: str | None) -> list[str]:
        """The one eviction rule: a state no turn holds goes when it was not asked for in
        `idle_s`, or, least recently used first, while more than `limit` are kept."""
        excess = len(self._states) - self.limit
        stale = self._clock() - self.idle_s
        evicted = []
        for device_id, state in list(self._states.items()):  # least recently used first
            if device_id == keep or state.lock.locked():
                continue
            if excess > 0 or self._used.get(device_id, stale) <= stale:
                del self._states[device_id]
                self._used.pop(device_id, None)
                evicted.append(device_id)
                excess -= 1
        return evicted
