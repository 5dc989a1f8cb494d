"""Bearer-token gate for devices and programs when the server is exposed beyond loopback.

A pure ASGI middleware, so a request without a valid token is refused before anything else
happens to it: its body is not read, its JSON not parsed, its path not even routed."""

from __future__ import annotations

import hmac

from starlette.types import ASGIApp, Receive, Scope, Send

from lobug.api.errors import error_response

OPEN_PATHS = frozenset({"/health", "/memory/health"})


def token_matches(presented: str, tokens: tuple[str, ...]) -> bool:
    """Constant-time comparison against every configured token (no early exit)."""
    matched = False
    candidate = presented.encode()
    for token in tokens:
        matched |= hmac.compare_digest(candidate, token.encode())
    return matched


def bearer_token(scope: Scope) -> str:
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            return token.strip() if scheme.lower() == "bearer" else ""
    return ""


class TokenGate:
    """401 for every path but `OPEN_PATHS` without `Authorization: Bearer <token>`, when
    tokens are configured."""

    def __init__(self, app: ASGIApp, tokens: tuple[str, ...]) -> None:
        self.app = app
        self.tokens = tokens

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] == "http"
            and self.tokens
            and scope["path"] not in OPEN_PATHS
            and not token_matches(bearer_token(scope), self.tokens)
        ):
            refusal = error_response(
                401,
                "unauthorized",
                "A valid 'Authorization: Bearer <token>' is required",
                {"WWW-Authenticate": "Bearer"},
            )
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, send)
