"""The one rule for a device's name as a surface receives it (`X-Device-Id` on the HTTP
routes, `Device-Id` on the xiaozhi WebSocket): `names.DEVICE_ID`, and never the name of an
internal source of the log."""

from __future__ import annotations

from lobug.names import DEVICE_ID, DEVICE_ID_RULE
from lobug.store.models import INTERNAL_SOURCES


def device_id_problem(value: str, header: str = "X-Device-Id") -> str | None:
    """Why `value` (sent in `header`) names no device, or None."""
    if not DEVICE_ID.fullmatch(value):
        return DEVICE_ID_RULE
    if value in INTERNAL_SOURCES:
        return f"{header} {value!r} names an internal source of the log"
    return None
