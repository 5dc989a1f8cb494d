"""The conversation log by device and day, newest first, with search; choose a span of one
day's messages (from one message to another) and forget it, as `POST /memory/forget` does."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from lobug.memory.evidence import heard
from lobug.services import MemoryServices
from lobug.store.household import Viewer
from lobug.store.models import MANUAL, ConversationDay, Message
from lobug.ui.access import EditorDep, ViewerDep, reads_of
from lobug.ui.render import AgentChoice, act, choose_agent, page
from lobug.web.deps import MemoryDep

router = APIRouter(include_in_schema=False)
DAYS_LISTED = 200
MESSAGES_SHOWN = 500
SEARCH_RESULTS = 20


@dataclass(frozen=True)
class DayView:
    days: list[ConversationDay]
    device: str | None
    day: str | None
    messages: list[Message]
    found: list[Message]


def day_bounds(day: str) -> tuple[float, float]:
    start = datetime.fromisoformat(day).replace(tzinfo=UTC)
    return start.timestamp(), (start + timedelta(days=1)).timestamp() - 1e-6


def chosen_day(
    days: list[ConversationDay], device: str | None, day: str | None
) -> ConversationDay | None:
    """The device's day asked for, else its newest day (or the newest day of all)."""
    of_device = [d for d in days if device is None or d.device_id == device]
    return next((d for d in of_device if d.day == day), of_device[0] if of_device else None)


def day_view(
    svc: MemoryServices, agent: str, device: str | None, day: str | None, q: str, viewer: Viewer
) -> DayView:
    """Blocking: the messages `viewer` may read (`Viewer.hears`)."""
    days = svc.store.conversation_days(agent, DAYS_LISTED)
    chosen = chosen_day(days, device, day)
    messages: list[Message] = []
    if chosen is not None:
        since, until = day_bounds(chosen.day)
        ids = svc.store.span_message_ids(agent, chosen.device_id, since, until)
        messages = heard(svc.store.messages_by_id(agent, ids[:MESSAGES_SHOWN]), viewer)
    found = (
        [
            hit.message
            for hit in svc.curation.search_messages(agent, q, SEARCH_RESULTS, viewer=viewer).hits
        ]
        if q
        else []
    )
    return DayView(
        days,
        chosen.device_id if chosen else None,
        chosen.day if chosen else None,
        messages,
        found,
    )


@router.get("/ui/conversations")
async def conversations(
    request: Request,
    viewer: ViewerDep,
    svc: MemoryDep,
    agent: str | None = None,
    device: str | None = None,
    day: str | None = None,
    pick: str | None = None,
    q: str = "",
) -> HTMLResponse:
    if pick:  # the day picker's "device|day"
        device, _, day = pick.partition("|")

    def gather() -> tuple[AgentChoice, DayView | None]:
        choice = choose_agent(svc, agent)
        if choice.name is None:
            return choice, None
        shown = reads_of(svc, viewer, choice.name)
        return choice, day_view(svc, choice.name, device, day, q.strip(), shown)

    choice, view = await asyncio.to_thread(gather)
    return page(request, "conversations.html", viewer, choice, view=view, q=q)


@router.post("/ui/conversations/forget")
async def forget_span(
    request: Request,
    viewer: EditorDep,
    svc: MemoryDep,
    agent: Annotated[str, Form()],
    device: Annotated[str, Form()],
    day: Annotated[str, Form()],
    since: Annotated[float, Form()],
    until: Annotated[float, Form()],
) -> RedirectResponse:
    def forget() -> str:
        low, high = sorted((since, until))
        forgotten = svc.curation.forget_span(
            agent, device=device, since=low, until=high, actor=MANUAL
        )
        counts = forgotten.counts()
        return (
            f"Forgot {counts['messages']} messages; {counts['facts']} facts learned only from "
            f"them were purged and {counts['summaries']} summaries dropped."
        )

    return await act(
        request, viewer, svc, agent, forget, "/ui/conversations", device=device, day=day
    )
