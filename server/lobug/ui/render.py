"""Pages from the Jinja2 templates beside this module: the layout's context (the viewer, the
chosen agent, the note left by the last change), time and size formats, and the one way a
change answers: do it in a worker thread, leave a note, go back to the page (303)."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from lobug.backends.base import BackendError
from lobug.clock import utc_text
from lobug.memory.agents import require_agent
from lobug.services import MemoryServices
from lobug.store.errors import StoreError
from lobug.store.models import AgentCounts
from lobug.ui.sessions import Note, Session, Sessions

# The agent a form's change is for (every form names it).
AgentField = Annotated[str, Form(min_length=1, max_length=200)]

TEMPLATES = Path(__file__).parent / "templates"
# Pages load only this server's own stylesheet and script, and no other site may frame them.
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; form-action 'self'; frame-ancestors 'none'; "
    "base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}
NAV = (
    ("/ui", "Overview"),
    ("/ui/conversations", "Conversations"),
    ("/ui/facts", "Facts"),
    ("/ui/base-memory", "Base memory"),
    ("/ui/blocks", "Blocks"),
    ("/ui/topics", "Topics"),
    ("/ui/people", "People"),
    ("/ui/search", "Search"),
    ("/ui/audit", "Audit"),
)


def when(moment: float | None) -> str:
    return "" if moment is None else utc_text(moment)


def size(n_bytes: int) -> str:
    units = ("B", "KiB", "MiB", "GiB")
    value, unit = float(n_bytes), 0
    while value >= 1024 and unit < len(units) - 1:
        value, unit = value / 1024, unit + 1
    return f"{n_bytes} B" if unit == 0 else f"{value:.1f} {units[unit]}"


@functools.cache
def environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=select_autoescape(default=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["when"] = when
    env.filters["size"] = size
    return env


@dataclass(frozen=True)
class AgentChoice:
    """The agent a page shows (None: no memory yet) and every agent, with their counts."""

    current: AgentCounts | None
    agents: list[AgentCounts]

    @property
    def name(self) -> str | None:
        return self.current.agent.name if self.current else None


def choose_agent(svc: MemoryServices, wanted: str | None) -> AgentChoice:
    """Blocking. The agent asked for if it exists, else the configured one, else the first."""
    agents = svc.store.agents_with_counts()
    by_name = {a.agent.name: a for a in agents}
    for name in (wanted, svc.settings.agent):
        if name in by_name:
            return AgentChoice(by_name[name], agents)
    return AgentChoice(agents[0] if agents else None, agents)


def link_for(agent: str | None, path: str, **params: Any) -> str:
    """A dashboard URL that keeps the chosen agent; None values are left out."""
    query = {"agent": agent, **params}
    kept = {k: v for k, v in query.items() if v is not None and v != ""}
    return f"{path}?{urlencode(kept)}" if kept else path


def sessions_of(request: Request) -> Sessions:
    return request.app.state.ui_sessions


def page(
    request: Request,
    template: str,
    viewer: Session,
    choice: AgentChoice,
    status: int = 200,
    **context: Any,
) -> HTMLResponse:
    html = (
        environment()
        .get_template(template)
        .render(
            viewer=viewer,
            choice=choice,
            agent=choice.name,
            link=functools.partial(link_for, choice.name),
            nav=NAV,
            path=request.url.path,
            note=sessions_of(request).take_note(viewer),
            **context,
        )
    )
    return html_response(html, status)


def html_response(html: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(html, status_code=status, headers=SECURITY_HEADERS)


def message_page(request: Request, title: str, text: str, status: int) -> HTMLResponse:
    """A page outside the layout's session: refusals and sign-in."""
    html = environment().get_template("message.html").render(title=title, text=text)
    return html_response(html, status)


async def act(
    request: Request,
    viewer: Session,
    svc: MemoryServices,
    agent: str,
    change: Callable[[], str],
    path: str,
    **params: Any,
) -> RedirectResponse:
    """Run `change` (blocking) in a worker thread once the form's `agent` is known to exist;
    its answer, or why it failed, becomes the note the page shows after going back to `path`
    (`link_for` the agent, with `params`)."""

    def checked() -> str:
        require_agent(svc.store, agent)
        return change()

    try:
        note = Note(await asyncio.to_thread(checked))
    except (StoreError, BackendError, ValueError) as exc:
        note = Note(str(exc) or type(exc).__name__, failed=True)
    sessions_of(request).leave_note(viewer, note)
    return RedirectResponse(link_for(agent, path, **params), status_code=303)
