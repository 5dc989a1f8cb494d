"""The Wyoming server beside the HTTP one, in the same process and event loop (`serving`, from
the app's lifespan): it listens on LOBUG_WYOMING_HOST:LOBUG_WYOMING_PORT, answers loopback
and the allow-list (LOBUG_WYOMING_ALLOW) only, serves at most `MAX_CONNECTIONS` at once, and
advertises itself as `_wyoming._tcp.local.` (unless LOBUG_WYOMING_ZEROCONF=0) so Home
Assistant finds it. Whether it may start at all is `exposure.check_wyoming_exposure`'s."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import re
import socket
from collections.abc import AsyncIterator
from typing import Any

from lobug.config import Settings
from lobug.exposure import wyoming_host
from lobug.services import Services
from lobug.wyoming.connection import Connection
from lobug.wyoming.limits import MAX_CONNECTIONS, MAX_LINE_BYTES

log = logging.getLogger(__name__)

SERVICE_TYPE = "_wyoming._tcp.local."
STOP_WAIT_S = 2.0  # connections still open at a stop get this long to end
MDNS_GROUP = "224.0.0.251"


class WyomingServer:
    def __init__(self, svc: Services, host: str, port: int) -> None:
        self.svc, self.host, self.port = svc, host, port
        self.config = svc.settings.wyoming
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_server(
            self._accept, self.host, self.port, limit=MAX_LINE_BYTES
        )
        self.port = self._server.sockets[0].getsockname()[1]  # port 0: the one given
        log.info("Wyoming server on %s:%d", self.host, self.port)

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._connections):
            task.cancel()
        if self._connections:
            await asyncio.wait(self._connections, timeout=STOP_WAIT_S)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername")
        address = peer[0] if isinstance(peer, tuple) else ""
        if not self.config.allows(address):
            log.warning("wyoming: %s is not in LOBUG_WYOMING_ALLOW: closed", address)
            writer.close()
            return
        if len(self._connections) >= MAX_CONNECTIONS:
            log.warning("wyoming: %d connections open: %s closed", MAX_CONNECTIONS, address)
            writer.close()
            return
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            await Connection(self.svc, reader, writer).run()
        except Exception:
            log.exception("wyoming: the connection of %s failed", address)
        finally:
            self._connections.discard(task)


@contextlib.asynccontextmanager
async def serving(settings: Settings, svc: Services) -> AsyncIterator[WyomingServer]:
    """The Wyoming server (and its advertisement) while the app runs."""
    assert settings.wyoming.port is not None
    server = WyomingServer(svc, wyoming_host(settings), settings.wyoming.port)
    await server.start()
    advert = await advertise(server.host, server.port) if settings.wyoming.zeroconf else None
    try:
        yield server
    finally:
        if advert is not None:
            with contextlib.suppress(Exception):
                await advert.async_close()
        await server.stop()


async def advertise(host: str, port: int) -> Any:
    """Register `_wyoming._tcp.local.` for Home Assistant's discovery; None (logged) where
    the address is loopback or multicast cannot be used."""
    address = _advertised_address(host)
    if address is None:
        log.info("wyoming: not advertised by zeroconf (listening on loopback only)")
        return None
    try:
        from zeroconf.asyncio import AsyncServiceInfo, AsyncZeroconf

        name = f"{_instance_name()}.{SERVICE_TYPE}"
        info = AsyncServiceInfo(
            SERVICE_TYPE, name, addresses=[socket.inet_aton(address)], port=port
        )
        zeroconf = AsyncZeroconf()
        await zeroconf.async_register_service(info)
    except Exception as exc:
        log.warning("wyoming: the zeroconf advertisement failed: %s", exc)
        return None
    log.info("wyoming: advertised as %s at %s:%d", name, address, port)
    return zeroconf


def _advertised_address(host: str) -> str | None:
    """The IPv4 address to advertise: the host's own, or for `0.0.0.0`/`::` the one this
    machine reaches the local network by."""
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return None
    if ip.is_loopback:
        return None
    if not ip.is_unspecified:
        return str(ip) if ip.version == 4 else None
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.connect((MDNS_GROUP, 1))  # no packet is sent: it picks the interface
        found: str = sock.getsockname()[0]
        return found
    return None


def _instance_name() -> str:
    host = re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname())[:40].strip("-")
    return f"lobug-{host or 'server'}"
