"""Who is looking at the dashboard: the signed-in session, checked on every page; an admin's
session with its CSRF token for every change.

Pages depend on `ViewerDep`; routes that change something on `EditorDep`. A missing or expired
session redirects to the sign-in page; a change without the CSRF token, or one the session's
role may not make (`lobug.web.roles.may`: a device token's session only reads), is refused
with 403."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote

from fastapi import Depends, FastAPI, Request
from fastapi.responses import RedirectResponse, Response

from lobug.memory.evidence import reader
from lobug.services import MemoryServices
from lobug.store.household import Viewer
from lobug.ui.render import message_page, sessions_of
from lobug.ui.sessions import COOKIE, Session, csrf_matches
from lobug.web.roles import UI_PREFIX, Access

SIGN_IN = f"{UI_PREFIX}/signin"


class SignInRequired(Exception):
    def __init__(self, wanted: str) -> None:
        super().__init__(wanted)
        self.wanted = wanted


class Refused(Exception):
    """403: a change without its CSRF token, or one a read-only session may not make."""


def current_viewer(request: Request) -> Session:
    session = sessions_of(request).find(request.cookies.get(COOKIE))
    if session is None:
        wanted = UI_PREFIX
        if request.method == "GET":
            wanted = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        raise SignInRequired(wanted)
    return session


async def current_poster(
    request: Request, viewer: Annotated[Session, Depends(current_viewer)]
) -> Session:
    """The session of a form that carries its CSRF token."""
    form = await request.form()
    token = form.get("csrf")
    if not csrf_matches(viewer, token if isinstance(token, str) else None):
        raise Refused("This form is missing its security token: reload the page and try again.")
    return viewer


async def current_editor(viewer: Annotated[Session, Depends(current_poster)]) -> Session:
    require(viewer, Access.CHANGE)
    return viewer


def require(viewer: Session, access: Access) -> None:
    """403 unless the session's role may make a call that does `access`."""
    if not viewer.may(access):
        raise Refused("Signed in with a device token: this view is read-only.")


def reads_of(svc: MemoryServices, session: Session, agent: str) -> Viewer:
    """Blocking: what the session's token may read of `agent`'s memory (`memory.evidence`)."""
    return reader(svc.memory.household, agent, session.evidence)


ViewerDep = Annotated[Session, Depends(current_viewer)]
PosterDep = Annotated[Session, Depends(current_poster)]
EditorDep = Annotated[Session, Depends(current_editor)]


def safe_next(wanted: str | None) -> str:
    """Where to go after signing in: a dashboard path, never another site."""
    if wanted and wanted.startswith(UI_PREFIX) and not wanted.startswith("//"):
        return wanted
    return UI_PREFIX


def install_access_handlers(app: FastAPI) -> None:
    async def sign_in_first(_: Request, exc: Exception) -> Response:
        assert isinstance(exc, SignInRequired)
        return RedirectResponse(f"{SIGN_IN}?next={quote(exc.wanted, safe='')}", status_code=303)

    async def refused(request: Request, exc: Exception) -> Response:
        return message_page(request, "Not allowed", str(exc), status=403)

    app.add_exception_handler(SignInRequired, sign_in_first)
    app.add_exception_handler(Refused, refused)
