"""Who calls: an admin (reads and changes the memory) or a device (chats and reads), known by
the bearer token a request carries or the token typed into the dashboard's sign-in form.

`api.auth.TokenGate` records the role of each request under `ROLE_KEY` in the ASGI scope's
state; `caller_role` reads it back for the API's admin check and the dashboard's sign-in."""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from typing import Any, Literal

Role = Literal["admin", "device"]
ADMIN: Role = "admin"
DEVICE: Role = "device"

ROLE_KEY = "lobug_role"
# The dashboard's pages check their own session cookie (`lobug.ui.sessions`): the API's gate
# lets them through without a token. Nothing else is reachable that way.
UI_PREFIX = "/ui"


def token_matches(presented: str, tokens: tuple[str, ...]) -> bool:
    """Constant-time comparison against every configured token (no early exit)."""
    matched = False
    candidate = presented.encode()
    for token in tokens:
        matched |= hmac.compare_digest(candidate, token.encode())
    return matched


def role_of_token(
    presented: str, admin_tokens: tuple[str, ...], device_tokens: tuple[str, ...]
) -> Role | None:
    """The role a token gives, or None. Both lists are compared in full, whatever the first
    one says."""
    is_admin = token_matches(presented, admin_tokens)
    is_device = token_matches(presented, device_tokens)
    if is_admin:
        return ADMIN
    return DEVICE if is_device else None


def caller_role(scope: Mapping[str, Any]) -> Role | None:
    """The role the API's gate recorded for this request (an ASGI scope); None on an open
    path without a token."""
    role: Role | None = scope.get("state", {}).get(ROLE_KEY)
    return role
