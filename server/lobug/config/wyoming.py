"""The settings of the Wyoming surface (`lobug.wyoming`, Home Assistant), read by
`Settings.from_env` into `Settings.wyoming`:

- `LOBUG_WYOMING_PORT`: the TCP port of the Wyoming server (unset: no Wyoming server);
- `LOBUG_WYOMING_HOST`: the address it listens on (unset: LOBUG_HOST's);
- `LOBUG_WYOMING_ALLOW`: the client addresses or networks it answers beyond loopback
  (`192.168.1.20,10.0.0.0/24`); Wyoming has no authentication, so a server reachable from
  other machines refuses to start without it (`lobug.wyoming.server.check_wyoming_exposure`);
- `LOBUG_WYOMING_ZEROCONF`: 0 turns off the `_wyoming._tcp.local.` advertisement."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_networks(raw: str) -> tuple[Network, ...]:
    """`192.168.1.20,10.0.0.0/24`: addresses or networks, separated by commas."""
    networks = []
    for item in raw.split(","):
        if item.strip():
            try:
                networks.append(ipaddress.ip_network(item.strip().strip("[]"), strict=False))
            except ValueError:
                raise ValueError(
                    "addresses or networks (10.0.0.0/24) separated by commas"
                ) from None
    return tuple(networks)


def parse_port(raw: str) -> int:
    port = int(raw)
    if not 0 < port < 65536:
        raise ValueError("a port between 1 and 65535")
    return port


@dataclass(frozen=True)
class WyomingConfig:
    port: int | None = None
    host: str = ""  # empty: the HTTP server's host
    allow: tuple[Network, ...] = ()
    zeroconf: bool = True

    def allows(self, address: str) -> bool:
        """Whether a client at `address` is on the allow-list (loopback always is)."""
        try:
            ip = ipaddress.ip_address(address.split("%", 1)[0])
        except ValueError:
            return False
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        return ip.is_loopback or any(ip in network for network in self.allow)


def wyoming_env(flag: Callable[[str], bool]) -> dict[str, tuple[str, Callable[[str], Any]]]:
    """The variables and their parsers (`flag`: the one every on/off setting is read with)."""
    return {
        "port": ("LOBUG_WYOMING_PORT", parse_port),
        "host": ("LOBUG_WYOMING_HOST", str.strip),
        "allow": ("LOBUG_WYOMING_ALLOW", parse_networks),
        "zeroconf": ("LOBUG_WYOMING_ZEROCONF", flag),
    }
