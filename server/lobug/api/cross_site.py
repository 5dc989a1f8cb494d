"""What a web page on another site could make a browser send, refused before anything else
happens to it, on a server without tokens (where whoever reaches it has its open role):

- DNS rebinding: a page of `attacker.example`, whose name now resolves to this machine, reads
  the server with `Host: attacker.example`. Only the served host names are answered: the
  loopback ones (`localhost`, `127.x.x.x`, `::1`) and LOBUG_ALLOWED_HOSTS, any port. Any other
  `Host` is 421 `host_not_allowed`. (A request without `Host`, HTTP/1.0, is no browser's.)
- Cross-site requests: an `Origin` that is not a served host (nor, where every host name is
  served, the request's own host) is 403 `origin_not_allowed`. A request without `Origin` is
  not cross-site: devices, programs, curl and the CLI send none, browsers send one with every
  cross-site change.
- Bodies a browser sends cross-site without asking first: a change sent to a JSON route as
  `text/plain`, `multipart/form-data` or `application/x-www-form-urlencoded` is 415
  `unsupported_media_type`, whatever its `Origin`.

Which host names are checked: on loopback, always; beyond it (LOBUG_ALLOW_UNAUTHENTICATED=1),
only when LOBUG_ALLOWED_HOSTS names them (devices reach such a server by whatever name or
address they were given). With tokens set, the token gate is the rule and nothing here runs
unless LOBUG_ALLOWED_HOSTS is set (then the Host check does). One rule for every path, `/mcp`
included. A pure ASGI middleware, outermost: nothing is read, parsed or routed before it."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from lobug.api.errors import error_response
from lobug.config import Settings
from lobug.exposure import is_loopback
from lobug.web.handshake import refuse_handshake

LOOPBACK_NAMES = frozenset({"localhost"})
CHANGING_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# What a form or a `fetch` without preflight may send to another site.
SIMPLE_CONTENT_TYPES = frozenset(
    {"text/plain", "multipart/form-data", "application/x-www-form-urlencoded"}
)


@dataclass(frozen=True)
class Refusal:
    status: int
    error: str
    detail: str


@dataclass(frozen=True)
class SiteRule:
    """Which hosts are served and whether browsers' cross-site requests are refused."""

    allowed_hosts: frozenset[str]
    check_host: bool
    check_cross_site: bool

    @classmethod
    def of(cls, settings: Settings) -> SiteRule:
        listed = bool(settings.allowed_hosts)
        open_server = not settings.tokens_required
        return cls(
            frozenset(settings.allowed_hosts),
            check_host=listed or (open_server and is_loopback(settings.host)),
            check_cross_site=open_server,
        )

    @property
    def active(self) -> bool:
        return self.check_host or self.check_cross_site

    def serves(self, name: str) -> bool:
        """Whether `name` (a host name without port, lower case) is one this server answers."""
        return name in LOOPBACK_NAMES or name in self.allowed_hosts or _loopback_address(name)

    def refusal(
        self, method: str, host: str | None, origin: str | None, body_type: str, json_route: bool
    ) -> Refusal | None:
        """Why the request is refused, or None."""
        if self.check_host and host is not None and not self.serves(host_name(host)):
            return Refusal(
                421,
                "host_not_allowed",
                f"This server does not answer to the host name {host_name(host)!r} (add it to "
                "LOBUG_ALLOWED_HOSTS if it is yours)",
            )
        if not self.check_cross_site:
            return None
        if origin is not None and not self._same_site(origin, host):
            return Refusal(
                403, "origin_not_allowed", "Requests from another site's pages are refused"
            )
        if method in CHANGING_METHODS and json_route and body_type in SIMPLE_CONTENT_TYPES:
            return Refusal(
                415,
                "unsupported_media_type",
                f"This route takes a JSON body: send it as application/json, not {body_type}",
            )
        return None

    def _same_site(self, origin: str, host: str | None) -> bool:
        parts = urlsplit(origin.strip().lower())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return False  # "null" (a sandboxed page, a file) or nonsense
        if self.serves(parts.hostname):
            return True
        # Every host name is served here (beyond loopback, no list): the page must be this
        # server's own, the same host and port the request was sent to.
        return not self.check_host and host is not None and parts.netloc == host.lower()


def host_name(host: str) -> str:
    """`Host` without its port, brackets and trailing dot, lower case."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:].partition("]")[0]
    if host.count(":") == 1:
        host = host.partition(":")[0]
    return host.rstrip(".")


def _loopback_address(name: str) -> bool:
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def header(scope: Scope, wanted: bytes) -> str | None:
    for name, value in scope.get("headers", ()):
        if name == wanted:
            return str(value.decode("latin-1"))
    return None


class CrossSiteGuard:
    """`SiteRule` over every HTTP request and WebSocket handshake; `json_route(path)` says
    whether a path's bodies are JSON (not the dashboard's forms, not audio uploads)."""

    def __init__(self, app: ASGIApp, rule: SiteRule, json_route: Callable[[str], bool]) -> None:
        self.app = app
        self.rule = rule
        self.json_route = json_route

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or not self.rule.active:
            await self.app(scope, receive, send)
            return
        body_type = (header(scope, b"content-type") or "").split(";")[0].strip().lower()
        refusal = self.rule.refusal(
            scope.get("method", "GET"),
            header(scope, b"host"),
            header(scope, b"origin"),
            body_type,
            self.json_route(scope["path"]),
        )
        if refusal is None:
            await self.app(scope, receive, send)
        elif scope["type"] == "websocket":
            await receive()  # the handshake's connect
            await refuse_handshake(
                scope, receive, send, refusal.status, refusal.error, refusal.detail
            )
        else:
            answer = error_response(refusal.status, refusal.error, refusal.detail)
            await answer(scope, receive, send)
