"""Who may reach the server: loopback addresses, token strength, and the start-up check that
refuses an open server beyond loopback (`check_exposure`)."""

from __future__ import annotations

import ipaddress

from lobug.config import ConfigError, Settings


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


# A bearer token: 16+ visible ASCII characters, 8+ of them different (`check_exposure`).
MIN_TOKEN_CHARS, MIN_TOKEN_DISTINCT = 16, 8


def is_strong_token(token: str) -> bool:
    visible = all(33 <= ord(c) <= 126 for c in token)
    return visible and len(token) >= MIN_TOKEN_CHARS and len(set(token)) >= MIN_TOKEN_DISTINCT


def check_token_strength(settings: Settings) -> None:
    """ConfigError naming the first weak token by its variable and position, never its value."""
    for variable, tokens in (
        ("LOBUG_DEVICE_TOKENS", settings.device_tokens),
        ("LOBUG_BOUND_DEVICE_TOKENS", tuple(settings.bound_device_tokens.values())),
        ("LOBUG_ADMIN_TOKENS", settings.admin_tokens),
    ):
        weak = next((n for n, t in enumerate(tokens, 1) if not is_strong_token(t)), None)
        if weak is not None:
            raise ConfigError(
                f"{variable}: token {weak} of {len(tokens)} is too weak: a token needs "
                f"{MIN_TOKEN_CHARS} or more visible ASCII characters, {MIN_TOKEN_DISTINCT} of them "
                "different (make one: python -c 'import secrets; print(secrets.token_urlsafe(24))')"
            )


def check_exposure(settings: Settings) -> str | None:
    """At start-up: refuse weak tokens and an unauthenticated server beyond loopback; return a
    warning if the latter is explicitly allowed."""
    check_token_strength(settings)
    if is_loopback(settings.host) or settings.tokens_required:
        return None
    if settings.allow_unauthenticated:
        return (
            f"Serving on {settings.host} WITHOUT authentication "
            "(LOBUG_ALLOW_UNAUTHENTICATED=1): anyone on the network can talk to the memory; "
            "its admin routes (erase, edit, audit, export) stay closed."
        )
    raise ConfigError(
        f"LOBUG_HOST={settings.host} is reachable from other machines. Set LOBUG_DEVICE_TOKENS "
        "(comma-separated bearer tokens for devices) and LOBUG_ADMIN_TOKENS (for erasing and "
        "editing memory) or, for old firmware without tokens, LOBUG_ALLOW_UNAUTHENTICATED=1."
    )


def wyoming_host(settings: Settings) -> str:
    """Where the Wyoming server listens: LOBUG_WYOMING_HOST, else LOBUG_HOST."""
    return settings.wyoming.host or settings.host


def check_wyoming_exposure(settings: Settings) -> None:
    """At start-up: Wyoming has no authentication, so a Wyoming server reachable from other
    machines needs the addresses it may answer (LOBUG_WYOMING_ALLOW); ConfigError without."""
    host = wyoming_host(settings)
    if settings.wyoming.port is None or is_loopback(host) or settings.wyoming.allow:
        return
    raise ConfigError(
        f"The Wyoming server (LOBUG_WYOMING_PORT={settings.wyoming.port}) would listen on {host}, "
        "reachable from other machines, and Wyoming has no authentication. Set "
        "LOBUG_WYOMING_ALLOW to the addresses that may use it (Home Assistant's, e.g. "
        "LOBUG_WYOMING_ALLOW=192.168.1.20), or LOBUG_WYOMING_HOST=127.0.0.1."
    )
