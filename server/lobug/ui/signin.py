"""Signing in to the dashboard with an admin token (a device token gives a read-only view),
and signing out. With no token configured the server is open (as the API is) and the sign-in
page opens a session at once, with the role the API would give: admin on loopback."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from lobug.config import Settings
from lobug.ui.access import PosterDep, safe_next
from lobug.ui.render import environment, html_response, sessions_of
from lobug.ui.sessions import COOKIE
from lobug.web.roles import UI_PREFIX, Role, caller_role, role_of_token

router = APIRouter(include_in_schema=False)
MAX_TOKEN_CHARS = 1000


def settings_of(request: Request) -> Settings:
    found: Settings = request.app.state.settings
    return found


def signed_in(request: Request, role: Role, wanted: str | None) -> Response:
    session = sessions_of(request).open(role)
    response = RedirectResponse(safe_next(wanted), status_code=303)
    response.set_cookie(
        COOKIE,
        session.id,
        max_age=int(sessions_of(request).ttl_s),
        path=UI_PREFIX,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )
    return response


def sign_in_form(wanted: str | None, refused: bool = False) -> HTMLResponse:
    html = environment().get_template("signin.html").render(next=safe_next(wanted), refused=refused)
    return html_response(html, 401 if refused else 200)


@router.get("/ui/signin")
async def sign_in_page(request: Request, next: str | None = None) -> Response:
    if sessions_of(request).find(request.cookies.get(COOKIE)):
        return RedirectResponse(safe_next(next), status_code=303)
    open_role = caller_role(request.scope)
    if not settings_of(request).tokens_required and open_role is not None:
        return signed_in(request, open_role, next)
    return sign_in_form(next)


@router.post("/ui/signin")
async def sign_in(
    request: Request,
    token: Annotated[str, Form(max_length=MAX_TOKEN_CHARS)] = "",
    next: Annotated[str | None, Form()] = None,
) -> Response:
    settings = settings_of(request)
    role = role_of_token(token.strip(), settings.admin_tokens, settings.device_tokens)
    if role is None:
        return sign_in_form(next, refused=True)
    return signed_in(request, role, next)


@router.post("/ui/signout")
async def sign_out(request: Request, viewer: PosterDep) -> Response:
    sessions_of(request).close(viewer.id)
    response = RedirectResponse(f"{UI_PREFIX}/signin", status_code=303)
    response.delete_cookie(COOKIE, path=UI_PREFIX)
    return response
