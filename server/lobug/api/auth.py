"""Bearer-token check for devices and programs when the server is exposed beyond loopback."""

from __future__ import annotations

import hmac

from fastapi import Request

from lobug.api.errors import ApiError


def token_matches(presented: str, tokens: tuple[str, ...]) -> bool:
    """Constant-time comparison against every configured token (no early exit)."""
    matched = False
    candidate = presented.encode()
    for token in tokens:
        matched |= hmac.compare_digest(candidate, token.encode())
    return matched


async def require_token(request: Request) -> None:
    """FastAPI dependency: 401 unless a valid `Authorization: Bearer <token>` is sent,
    when tokens are configured."""
    tokens: tuple[str, ...] = request.app.state.settings.device_tokens
    if not tokens:
        return
    scheme, _, presented = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token_matches(presented.strip(), tokens):
        raise ApiError(401, "unauthorized", "A valid 'Authorization: Bearer <token>' is required")
