"""The device's own MCP tools, offered to the model of its turns where it can call them
(issue 30, item 5; `device_tools.offered_tools`, `backends/tool_calls.py`) from its
`tools/list` answer until it leaves. The model runs in a worker thread: a call it asks for is
sent on the session's event loop (`Session.call_tool`) and waited for there, at most
`TOOL_CALL_S` and a little."""

from __future__ import annotations

import asyncio
from functools import partial
from typing import TYPE_CHECKING, Any

from lobug.turn.device_tools import ToolFailed, offered_tools
from lobug.xiaozhi.limits import TOOL_CALL_S

if TYPE_CHECKING:
    from lobug.xiaozhi.session import Session

MARGIN_S = 1.0  # past the device's own `TOOL_CALL_S`: the loop's time to pass the answer on


def offer_tools(session: Session) -> None:
    """Offer the device's tools (`session.tools`) to its turns, in place of any before."""
    loop = asyncio.get_running_loop()
    session.offered = offered_tools(session.tools, partial(call_from_worker, session, loop))
    session.svc.assistant.session(session.device).offer_tools(session.offered)


def withdraw_tools(session: Session) -> None:
    """The device left: its tools are no longer offered (unless it is back already)."""
    if session.offered is not None:
        session.svc.assistant.session(session.device).withdraw_tools(session.offered)


def call_from_worker(
    session: Session, loop: asyncio.AbstractEventLoop, name: str, arguments: dict[str, Any]
) -> dict[str, Any] | None:
    """`Session.call_tool` from a worker thread (the model's), waited for there."""
    if session.left.is_set():
        raise ToolFailed("the device has left")
    if _running_loop() is loop:  # waiting here would stop the loop that brings the answer
        raise ToolFailed("a device's tool is called from a worker thread, not its event loop")
    future = asyncio.run_coroutine_threadsafe(session.call_tool(name, arguments), loop)
    try:
        return future.result(TOOL_CALL_S + MARGIN_S)
    except TimeoutError:
        future.cancel()
        return None


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
