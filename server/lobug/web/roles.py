"""Who calls, and what each caller may do: the one role rule every surface asks (the REST
API's route dependencies, the MCP tools, the dashboard and, through the API's answers, the
command line's remote mode).

An admin (an admin token) may do everything. A device (a device token, or anyone when the
server is exposed without tokens) may read the memory and converse (chat, speak, store messages
in the log, which the memory learns from, open an agent); it may never change what the memory
holds (write, correct, pin, score, forget or purge facts, write blocks or the base memory,
forget messages, delete agents, dream, rebuild topics, import) nor take it away whole (export,
the audit log). The role comes from the bearer token a request carries or the token typed into
the dashboard's sign-in form.

`api.auth.TokenGate` records the role of each request under `ROLE_KEY` in the ASGI scope's
state; `caller_role` reads it back for the surfaces' checks and the dashboard's sign-in."""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from enum import StrEnum
from typing import Any, Literal

from lobug.memory.evidence import ADMIN_EVIDENCE, NO_EVIDENCE, Evidence

Role = Literal["admin", "device"]
ADMIN: Role = "admin"
DEVICE: Role = "device"

ROLE_KEY = "lobug_role"
# The device whose own token (`Settings.bound_device_tokens`) the request carries.
DEVICE_KEY = "lobug_token_device"
# The devices that have a token of their own: only that token speaks as them.
OWN_TOKEN_DEVICES_KEY = "lobug_own_token_devices"
# The dashboard's pages check their own session cookie (`lobug.ui.sessions`): the API's gate
# lets them through without a token. Nothing else is reachable that way.
UI_PREFIX = "/ui"


class Access(StrEnum):
    """What a call does to the memory."""

    READ = "read"  # look: facts, messages, blocks, base memory, search, context, topics
    CONVERSE = "converse"  # talk: a turn, a message stored in the log (learned from), an agent
    CHANGE = "change"  # change what the memory holds: write, correct, forget, purge, import
    EXPORT = "export"  # take it away whole: the export, the audit log (every text it held)


ALLOWED: Mapping[Role, frozenset[Access]] = {
    ADMIN: frozenset(Access),
    DEVICE: frozenset({Access.READ, Access.CONVERSE}),
}

# The error code and words every surface answers a refused call with.
ADMIN_REQUIRED = "admin_required"
ADMIN_REQUIRED_DETAIL = (
    "This action needs an admin token: 'Authorization: Bearer <token>' with a token from "
    "LOBUG_ADMIN_TOKENS (a device token may read and chat, not change or export memory)"
)


def may(role: Role | None, access: Access) -> bool:
    """Whether a caller of `role` (None: nobody known) may make a call that does `access`."""
    return role is not None and access in ALLOWED[role]


def token_matches(presented: str, tokens: tuple[str, ...]) -> bool:
    """Constant-time comparison against every configured token (no early exit)."""
    matched = False
    candidate = presented.encode()
    for token in tokens:
        matched |= hmac.compare_digest(candidate, token.encode())
    return matched


def bearer_token(scope: Mapping[str, Any]) -> str:
    """The token of an ASGI scope's `Authorization: Bearer <token>` header ("" without)."""
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            return token.strip() if scheme.lower() == "bearer" else ""
    return ""


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


def device_of_token(presented: str, bound: Mapping[str, str]) -> str | None:
    """The device whose own token `presented` is, or None. Every token is compared."""
    found = None
    for device, token in bound.items():
        if token_matches(presented, (token,)):
            found = device
    return found


def caller_role(scope: Mapping[str, Any]) -> Role | None:
    """The role the API's gate recorded for this request (an ASGI scope); None on an open
    path without a token."""
    return scope.get("state", {}).get(ROLE_KEY)


def caller_device(scope: Mapping[str, Any]) -> str | None:
    """The device whose own token this request carries (the gate's record); None for an
    admin token, a plain device token or none."""
    device: str | None = scope.get("state", {}).get(DEVICE_KEY)
    return device


def has_own_token(scope: Mapping[str, Any], device: str) -> bool:
    """Whether `device` has a token of its own (`LOBUG_BOUND_DEVICE_TOKENS`), as the gate
    recorded for this request."""
    return device in scope.get("state", {}).get(OWN_TOKEN_DEVICES_KEY, frozenset())


def caller_evidence(scope: Mapping[str, Any]) -> Evidence:
    """What this request proves of its caller (`memory.evidence`): the admin, a device by its
    own token, or nothing (a plain device token, or no token on an exposed server)."""
    role = caller_role(scope)
    if role == ADMIN:
        return ADMIN_EVIDENCE
    return Evidence(device=caller_device(scope)) if role == DEVICE else NO_EVIDENCE
