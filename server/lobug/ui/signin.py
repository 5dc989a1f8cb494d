"""Signing in to the dashboard with an admin token (a device token gives a read-only view),
and signing out. With no token configured the server is open (as the API is) and the sign-in
page opens a session at once, with the role the API would give: admin on loopback.

Sign-ins are throttled per client address and per token (`ui.throttle`): too many failures,
or too many sessions for one token, answer 429 with `Retry-After` before the token is even
compared."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from lobug.config import Settings
from lobug.ui.access import PosterDep, safe_next
from lobug.ui.render import environment, html_response, sessions_of
from lobug.ui.sessions import COOKIE
from lobug.ui.throttle import SignInThrottle
from lobug.web.roles import DEVICE, UI_PREFIX, Role, caller_role, device_of_token, role_of_token

router = APIRouter(include_in_schema=False)
MAX_TOKEN_CHARS = 1000


def settings_of(request: Request) -> Settings:
    return request.app.state.settings


def signed_in(
    request: Request, role: Role, wanted: str | None, device: str | None = None
) -> Response:
    session = sessions_of(request).open(role, device)
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


def throttle_of(request: Request) -> SignInThrottle:
    return request.app.state.ui_sign_ins


def client_of(request: Request) -> str:
    return request.client.host if request.client else ""


def sign_in_form(wanted: str | None, refused: bool = False, wait_s: int = 0) -> HTMLResponse:
    html = (
        environment()
        .get_template("signin.html")
        .render(next=safe_next(wanted), refused=refused, wait_s=wait_s)
    )
    response = html_response(html, 429 if wait_s else 401 if refused else 200)
    if wait_s:
        response.headers["Retry-After"] = str(wait_s)
    return response


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
    settings, throttle, client = settings_of(request), throttle_of(request), client_of(request)
    wait_s = throttle.client_wait_s(client)
    if wait_s:
        return sign_in_form(next, wait_s=wait_s)
    token = token.strip()
    role = role_of_token(token, settings.admin_tokens, settings.every_device_token)
    if role is None:
        throttle.failed(client)
        return sign_in_form(next, refused=True)
    wait_s = throttle.token_wait_s(token)
    if wait_s:
        return sign_in_form(next, wait_s=wait_s)
    throttle.signed_in(token)
    device = device_of_token(token, settings.bound_device_tokens) if role == DEVICE else None
    return signed_in(request, role, next, device)


@router.post("/ui/signout")
async def sign_out(request: Request, viewer: PosterDep) -> Response:
    sessions_of(request).close(viewer.id)
    response = RedirectResponse(f"{UI_PREFIX}/signin", status_code=303)
    response.delete_cookie(COOKIE, path=UI_PREFIX)
    return response
