"""Bearer-token gate for devices, programs and admins when the server is exposed beyond
loopback, and the caller's role it records for the routes.

A pure ASGI middleware, so a request without a valid token is refused before anything else
happens to it: its body is not read, its JSON not parsed, its path not even routed. A request it
lets through carries its role, `ADMIN` or `DEVICE` (`lobug.web.roles`), under `ROLE_KEY` in
the scope's state, and a device's own token (`LOBUG_BOUND_DEVICE_TOKENS`) its device under
`DEVICE_KEY` (the evidence `roles.caller_evidence` reads); what that role may do is
`roles.may`'s to say, asked by the routes (`deps.AdminOnly`) and the MCP tools (`mcp_server`)."""

from __future__ import annotations

from collections.abc import Mapping

from starlette.types import ASGIApp, Receive, Scope, Send

from lobug.api.errors import error_response
from lobug.config import Settings
from lobug.exposure import is_loopback
from lobug.web.handshake import refuse_handshake
from lobug.web.roles import (
    ADMIN,
    DEVICE,
    DEVICE_KEY,
    OWN_TOKEN_DEVICES_KEY,
    ROLE_KEY,
    UI_PREFIX,
    Role,
    bearer_token,
    device_of_token,
    role_of_token,
)

OPEN_PATHS = frozenset({"/health", "/memory/health"})
UNAUTHORIZED = ("unauthorized", "A valid 'Authorization: Bearer <token>' is required")
CHALLENGE = {"WWW-Authenticate": "Bearer"}


def role_without_tokens(settings: Settings) -> Role:
    """Everyone's role when no token is configured: admin on loopback (only this machine can
    call), device when exposed with LOBUG_ALLOW_UNAUTHENTICATED=1 (it chats, it does not erase)."""
    return ADMIN if is_loopback(settings.host) else DEVICE


def is_open_path(path: str) -> bool:
    """Answered without a token: health, and the dashboard (which asks for a session)."""
    return path in OPEN_PATHS or path == UI_PREFIX or path.startswith(UI_PREFIX + "/")


class TokenGate:
    """401 for every path but the open ones (`is_open_path`) without `Authorization: Bearer
    <token>` naming a device or an admin token, when any token is configured (a WebSocket is
    refused at its handshake); records the caller's role."""

    def __init__(
        self,
        app: ASGIApp,
        device_tokens: tuple[str, ...],
        admin_tokens: tuple[str, ...],
        open_role: Role,
        bound_device_tokens: Mapping[str, str] | None = None,
    ) -> None:
        self.app = app
        self.bound_device_tokens = dict(bound_device_tokens or {})
        self.device_tokens = (*device_tokens, *self.bound_device_tokens.values())
        self.admin_tokens = admin_tokens
        self.open_role = open_role

    def role_of(self, scope: Scope) -> Role | None:
        """The caller's role, or None when tokens are configured and none of them was
        presented. Both lists are compared in full, whatever the first one says."""
        if not (self.device_tokens or self.admin_tokens):
            return self.open_role
        return role_of_token(bearer_token(scope), self.admin_tokens, self.device_tokens)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        role = self.role_of(scope)
        if role is not None:
            state = scope.setdefault("state", {})
            state[ROLE_KEY] = role
            if role == DEVICE:
                state[DEVICE_KEY] = device_of_token(bearer_token(scope), self.bound_device_tokens)
                state[OWN_TOKEN_DEVICES_KEY] = frozenset(self.bound_device_tokens)
        elif scope["type"] == "websocket":  # refused at the handshake, with the reason
            await refuse_handshake(scope, receive, send, 401, *UNAUTHORIZED, CHALLENGE)
            return
        elif not is_open_path(scope["path"]):
            refusal = error_response(401, *UNAUTHORIZED, CHALLENGE)
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, send)
