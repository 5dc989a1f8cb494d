"""What a xiaozhi device hears that no model wrote: due reminders, said unasked at their time
(looked for every `REMINDER_POLL_S` while the device is idle, and at once on connecting, so a
device that was offline hears what came due meanwhile; each is said once, whichever device or
turn claims it first: `memory/reminders.ring_due`), and device settings changed by spoken
rules ("volume 30", "louder": `device_tools`) through the device's own MCP tools."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING, Any

from lobug.device_tools import Nudge, device_command, settle
from lobug.memory.reminders import ring_due

if TYPE_CHECKING:
    from lobug.xiaozhi.session import Session

log = logging.getLogger(__name__)

REMINDER_POLL_S = 5.0
REMINDER = {"reminder": True}  # the said reminder's metadata in the log


async def ring_reminders(session: Session) -> None:
    """Say the device's agent's due reminders whenever the device is idle, until it leaves."""
    while not session.left.is_set():
        if session.idle:
            said = await asyncio.to_thread(claim_due, session)
            if said:
                await session.announce(said, lambda words, _: logged(session, words))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(session.left.wait(), REMINDER_POLL_S)


def claim_due(session: Session) -> str:
    svc = session.svc
    agent = svc.settings.agent_for_device(session.device)
    return ring_due(svc.store, agent, session.device, svc.memory.clock())


def logged(session: Session, said: list[str]) -> None:
    """A reminder said unasked goes in the log as the assistant's words (not learned from)."""
    if said:
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
