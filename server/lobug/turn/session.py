"""One device as a surface sees it: what a surface (HTTP, xiaozhi, Wyoming) asks about a
device goes through its `DeviceSession`, never through the turn's parts.

What the device's turns share lives in one place with one lock: `devices.DeviceStates`
(working memory, sensors, offered tools, the turn gate) and the device keep it drops with the
device (`lobug.kept`: the memory looked up while the person is heard, `early.EarlyRecall`; the
answer begun in their pause, `backends/ahead.AnswersAhead`; who claimed to be speaking, a
request waiting for its "yes" and a voice being learnt, `memory/people.Household`). A session
is a small handle on them, made per request: it holds nothing of its own, so two surfaces
talking for the same device see the same state."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager

from lobug.backends.ahead import AnswersAhead
from lobug.backends.base import ToolBox
from lobug.turn.conversation import DeviceState, SensorReading
from lobug.turn.devices import Admitted, DeviceStates


class DeviceSession:
    """A device's turns, as a surface asks for them."""

    def __init__(self, device_id: str, devices: DeviceStates, ahead: AnswersAhead) -> None:
        self.device_id = device_id
        self._devices, self._ahead = devices, ahead

    async def admit(self) -> Admitted:
        """Wait, on the event loop, for the device's earlier turns (`DeviceStates.admit`);
        raises DeviceBusy when too many wait. The caller `leave`s when its turn is over."""
        return await self._devices.admit(self.device_id)

    def queued(self) -> AbstractAsyncContextManager[None]:
        """`admit` for the length of an `async with` block."""
        return self._devices.queued(self.device_id)

    def state(self) -> DeviceState:
        """The device's working memory and sensors (warmed from the log: blocking)."""
        return self._devices.get(self.device_id)

    def update_sensors(self, reading: SensorReading) -> None:
        """What the device's sensors read now, shown to its next turns."""
        self.state().sensors = reading

    def offer_tools(self, tools: ToolBox | None) -> None:
        """The device's own tools, offered to the model of its turns from now on."""
        self._devices.offer_tools(self.device_id, tools)

    def withdraw_tools(self, tools: ToolBox) -> None:
        """The device left: `tools` are offered no more (unless it offered others since)."""
        self._devices.withdraw_tools(self.device_id, tools)

    def spoke_again(self) -> None:
        """The person spoke again after a pause: the answer begun in it is not the turn's."""
        self._ahead.drop(self.device_id)
