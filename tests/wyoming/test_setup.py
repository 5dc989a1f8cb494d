"""The Wyoming settings, the start-up check that refuses an open Wyoming server beyond
loopback, the allow-list and the zeroconf address."""

from __future__ import annotations

import ipaddress
from dataclasses import replace

import pytest

from lobug.app import create_app
from lobug.config import ConfigError, Settings
from lobug.config.wyoming import WyomingConfig, parse_networks
from lobug.exposure import check_wyoming_exposure, wyoming_host
from lobug.wyoming.server import _advertised_address


def test_the_settings_are_read_from_the_environment() -> None:
    env = {
        "LOBUG_WYOMING_PORT": "10700",
        "LOBUG_WYOMING_HOST": "0.0.0.0",
        "LOBUG_WYOMING_ALLOW": "192.168.1.20, 10.0.0.0/24",
        "LOBUG_WYOMING_ZEROCONF": "0",
    }
    wyoming = Settings.from_env(env).wyoming
    assert wyoming.port == 10700 and wyoming.host == "0.0.0.0" and not wyoming.zeroconf
    assert wyoming.allow == parse_networks("192.168.1.20/32,10.0.0.0/24")
    assert Settings.from_env({}).wyoming == WyomingConfig()  # off: no port


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("LOBUG_WYOMING_PORT", "70000"),
        ("LOBUG_WYOMING_PORT", "ten"),
        ("LOBUG_WYOMING_ALLOW", "home-assistant.local"),
        ("LOBUG_WYOMING_ZEROCONF", "maybe"),
    ],
)
def test_a_bad_value_names_its_variable(variable: str, value: str) -> None:
    with pytest.raises(ConfigError, match=variable):
        Settings.from_env({variable: value})


def exposed(host: str, allow: str = "", http_host: str = "127.0.0.1") -> Settings:
    wyoming = WyomingConfig(port=10700, host=host, allow=parse_networks(allow))
    return Settings(host=http_host, wyoming=wyoming)


def test_beyond_loopback_it_needs_an_allow_list() -> None:
    with pytest.raises(ConfigError, match="LOBUG_WYOMING_ALLOW"):
        check_wyoming_exposure(exposed("0.0.0.0"))
    with pytest.raises(ConfigError, match="no authentication"):
        create_app(exposed("192.168.1.5"))
    check_wyoming_exposure(exposed("0.0.0.0", allow="192.168.1.20"))
    check_wyoming_exposure(exposed("127.0.0.1"))
    check_wyoming_exposure(exposed("::1"))
    check_wyoming_exposure(Settings(host="0.0.0.0", allow_unauthenticated=True))  # no port


def test_it_listens_where_the_http_server_does_unless_told() -> None:
    follows = exposed("", http_host="0.0.0.0", allow="10.0.0.0/8")
    assert wyoming_host(follows) == "0.0.0.0"
    assert wyoming_host(exposed("127.0.0.1", http_host="0.0.0.0")) == "127.0.0.1"
    with pytest.raises(ConfigError, match=r"would listen on 0\.0\.0\.0"):
        check_wyoming_exposure(replace(follows, wyoming=replace(follows.wyoming, allow=())))


def test_the_allow_list_answers_loopback_and_its_addresses() -> None:
    config = WyomingConfig(allow=parse_networks("192.168.1.20,10.0.0.0/24,fd00::/8"))
    assert config.allows("127.0.0.1") and config.allows("::1")
    assert config.allows("192.168.1.20") and config.allows("::ffff:192.168.1.20")
    assert config.allows("10.0.0.99") and config.allows("fd00::5")
    assert not config.allows("192.168.1.21") and not config.allows("10.0.1.1")
    assert not config.allows("") and not config.allows("garbage")


def test_zeroconf_advertises_a_reachable_ipv4_address() -> None:
    assert _advertised_address("127.0.0.1") is None
    assert _advertised_address("192.168.1.5") == "192.168.1.5"
    assert _advertised_address("fd00::5") is None
    found = _advertised_address("0.0.0.0")
    assert found is None or ipaddress.ip_address(found).version == 4
