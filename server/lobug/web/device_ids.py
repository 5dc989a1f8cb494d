"""The one rule for a device's name as a surface receives it (`X-Device-Id` on the HTTP
routes, `Device-Id` on the xiaozhi WebSocket): `names.DEVICE_ID`, and never the name of an
internal source of the log; and a device's own token speaks only as its device
(`token_device_problem`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lobug.names import DEVICE_ID, DEVICE_ID_RULE
from lobug.store.models import INTERNAL_SOURCES
from lobug.web.roles import caller_device, has_own_token


def device_id_problem(value: str, header: str = "X-Device-Id") -> str | None:
    """Why `value` (sent in `header`) names no device, or None."""
    if not DEVICE_ID.fullmatch(value):
        return DEVICE_ID_RULE
    if value in INTERNAL_SOURCES:
        return f"{header} {value!r} names an internal source of the log"
    return None


def token_device_problem(
    scope: Mapping[str, Any], value: str, header: str = "X-Device-Id"
) -> str | None:
    """Why a request with a device token may not speak as device `value`: a device's own token
    (`LOBUG_BOUND_DEVICE_TOKENS`) speaks only as its device, and a device that has its own
    token is spoken as only with it. The token is the evidence of which device calls, the
    header is not (`memory/people.Household`: only such a device's binding says who speaks)."""
    own = caller_device(scope)
    if own is not None and own != value:
        return f"this token is device {own!r}'s own: {header} must be {own!r}"
    if own is None and has_own_token(scope, value):
        return f"device {value!r} has a token of its own: only that token speaks as it"
    return None
