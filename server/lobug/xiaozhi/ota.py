"""The answer to a xiaozhi device's OTA call (`POST /xiaozhi/ota/`, the first call it makes):
where its WebSocket is and the token to open it with, the server's time, and no firmware
update (the version the device reports is answered back, so it never updates from here).
No activation challenge: a device is known by its Device-Id, as `X-Device-Id` is. With tokens
set, the call needs one, as every route but `/health` does (the token gate)."""

from __future__ import annotations

import time
from typing import Any

from lobug.clock import local_time, zone_named
from lobug.config import Settings

WEBSOCKET_PATH = "/xiaozhi/v1/"


def websocket_url(settings: Settings, scheme: str, host: str) -> str:
    """The configured address, or one on the host and scheme the device reached us by."""
    if settings.xiaozhi.url:
        return settings.xiaozhi.url
    return f"{'wss' if scheme in ('https', 'wss') else 'ws'}://{host}{WEBSOCKET_PATH}"


def device_token(settings: Settings, presented: str) -> str:
    """The token the device is to open the WebSocket with: none when no token is needed;
    with tokens set, the one it called with (the token gate let only a valid one through)."""
    return presented if settings.tokens_required else ""


def firmware_version(body: Any) -> str:
    """The version the device runs (`application.version` of its report), or empty."""
    application = body.get("application") if isinstance(body, dict) else None
    version = application.get("version") if isinstance(application, dict) else None
    return version if isinstance(version, str) and len(version) <= 64 else ""


def ota_answer(
    settings: Settings, url: str, presented: str, body: Any, now: float | None = None
) -> dict[str, Any]:
    at = time.time() if now is None else now
    offset = local_time(at, zone_named(settings.memory.timezone)).utcoffset()
    minutes = int(offset.total_seconds() // 60) if offset is not None else 0
    return {
        "server_time": {"timestamp": int(at * 1000), "timezone_offset": minutes},
        "firmware": {"version": firmware_version(body), "url": ""},
        "websocket": {"url": url, "token": device_token(settings, presented)},
    }
