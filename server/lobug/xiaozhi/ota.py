"""The answer to a xiaozhi device's OTA call (`POST /xiaozhi/ota/`, the first call it makes):
where its WebSocket is and the token to open it with, the server's time, and no firmware
update (the version the device reports is answered back, so it never updates from here).
No activation challenge: a device is known by its Device-Id, as `X-Device-Id` is. With tokens
set, the call needs one, as every route but `/health` does (the token gate)."""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import urlsplit

from lobug.clock import local_time, zone_named
from lobug.config import Settings
from lobug.exposure import is_loopback

WEBSOCKET_PATH = "/xiaozhi/v1/"


def websocket_url(
    settings: Settings, scheme: str, host: str | None, local: tuple[str, int] | None
) -> str:
    """The configured address (LOBUG_XIAOZHI_URL); else the device's `Host` when it names a
    host this server answers to (LOBUG_ALLOWED_HOSTS, loopback); else the address the
    connection reached (the server's own socket, `local`). Never an unchecked `Host`: the
    answer carries the device's token to whatever address it names."""
    if settings.xiaozhi.url:
        return settings.xiaozhi.url
    ws = "wss" if scheme in ("https", "wss") else "ws"
    if host is not None and served(settings, host):
        return f"{ws}://{host.strip()}{WEBSOCKET_PATH}"
    address, port = local or ("127.0.0.1", settings.port)
    shown = f"[{address}]" if ":" in address else address
    return f"{ws}://{shown}:{port}{WEBSOCKET_PATH}"


def served(settings: Settings, host: str) -> bool:
    """Whether `host` (a `Host` header: a name or address, maybe a port) is one the server
    answers to: a loopback name or one of LOBUG_ALLOWED_HOSTS."""
    try:
        parts = urlsplit(f"//{host.strip()}")
        name, _ = parts.hostname, parts.port  # a port that is no number is refused here
    except ValueError:
        return False
    if not name or parts.username is not None or parts.path or parts.query or parts.fragment:
        return False
    name = name.rstrip(".")
    return is_loopback(name) or name in settings.allowed_hosts


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
