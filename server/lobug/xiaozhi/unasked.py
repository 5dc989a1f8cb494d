"""What a xiaozhi device hears that no model wrote: due reminders, said unasked at their time
(looked for every `REMINDER_POLL_S` while the device is idle, and at once on connecting, so a
device that was offline hears what came due meanwhile; each whichever device or turn claims it
first, marked said once said to the end: `memory/reminders.py`), and device settings changed
by spoken rules ("volume 30", "louder": `device_tools`) through the device's own MCP tools."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from functools import partial
from typing import TYPE_CHECKING, Any

from lobug.memory import reminders
from lobug.memory.reminders import Ringing, owners_at
from lobug.turn.device_tools import Nudge, device_command, settle

if TYPE_CHECKING:
    from lobug.xiaozhi.session import Session

log = logging.getLogger(__name__)

REMINDER_POLL_S = 5.0
REMINDER = {"reminder": True}  # the said reminder's metadata in the log


async def ring_reminders(session: Session) -> None:
    """Say the device's due reminders whenever the device is idle, until it leaves."""
    while not session.left.is_set():
        if session.idle:
            ringing = await asyncio.to_thread(claim_due, session)
            if ringing.message:
                await session.announce(ringing.message, partial(rung, session, ringing))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(session.left.wait(), REMINDER_POLL_S)


def claim_due(session: Session) -> Ringing:
    """The due reminders of whoever this device is for (`reminders.owners_at`), claimed."""
    svc = session.svc
    agent = svc.settings.agent_for_device(session.device)
    proven = svc.memory.household.proven(session.device)
    owners = owners_at(svc.store, agent, session.device, proven=proven)
    return reminders.claim_due(svc.store, agent, session.device, owners, svc.memory.clock)


def rung(session: Session, ringing: Ringing, said: list[str], cut: bool) -> None:
    """Once the message was said to the end: the reminders are said, and logged as the
    assistant's words (not learned from); cut off, they ring again."""
    ringing.settle("" if cut else " ".join(said))
    if said and not cut:
        svc = session.svc
        agent = svc.settings.agent_for_device(session.device)
        text = " ".join(said)
        svc.store.append_message(agent, session.device, "assistant", text, metadata=REMINDER)


async def set_device(session: Session, text: str) -> bool:
    """Carry out `text` when it asks for a setting the device offers; whether it did."""
    command = device_command(text, session.tools)
    if command is None:
        return False
    if isinstance(command, Nudge):
        status = None
        if command.status_tool is not None:
            status = await session.call_tool(command.status_tool, {})
        call = settle(command, status)
        if call is None:
            name = command.setting.name
            await session.announce(
                f"I can't tell the {name} just now. Say a number, like {name} 50.", nothing
            )
            return True
    else:
        call = command
    done = await session.call_tool(call.tool, call.arguments)
    setting = next(iter(call.arguments))
    await session.announce(
        call.said if done is not None else f"I couldn't set the {setting}.", nothing
    )
    return True


def nothing(said: list[str], cut: bool) -> None:
    """A setting's answer is not stored (like a spoken memory request's)."""


def tool_result(payload: dict[str, Any]) -> dict[str, Any] | None:
    """An MCP answer's result, None when it is an error."""
    result = payload.get("result")
    return result if isinstance(result, dict) and not result.get("isError") else None
