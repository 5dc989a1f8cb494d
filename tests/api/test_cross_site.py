"""The cross-site guard (`lobug.api.cross_site`) over a tiny app: which Host, Origin and body
types it lets through, for each setup (loopback or not, tokens or not, a list of hosts)."""

from __future__ import annotations

from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route, WebSocketRoute
from starlette.testclient import TestClient, WebSocketDenialResponse
from starlette.websockets import WebSocket

from lobug.api.cross_site import CrossSiteGuard, SiteRule, host_name
from lobug.app import json_only
from lobug.config import ConfigError, Settings

TOKEN = "Ab3dEf6hIj9kLm2nOp5q"


async def echo(request: Request) -> JSONResponse:
    return JSONResponse({"body": (await request.body()).decode()})


async def talk(socket: WebSocket) -> None:
    await socket.accept()
    await socket.send_text("hello")
    await socket.close()


def guarded(tmp_path: Path, **settings: object) -> TestClient:
    rule = SiteRule.of(Settings(db_path=tmp_path / "m.db", **settings))  # type: ignore[arg-type]
    routes = [
        Route("/memory/{rest:path}", echo, methods=["GET", "POST", "PUT", "DELETE"]),
        Route("/chat/audio", echo, methods=["POST"]),
        Route("/ui/{rest:path}", echo, methods=["GET", "POST"]),
        WebSocketRoute("/ws", talk),
    ]
    app = CrossSiteGuard(Starlette(routes=routes), rule=rule, json_route=json_only)
    return TestClient(app, base_url="http://127.0.0.1:8321")


@pytest.mark.parametrize(
    ("host", "status"),
    [
        ("127.0.0.1:8321", 200),
        ("localhost:8321", 200),
        ("LOCALHOST.", 200),
        ("127.9.9.9", 200),
        ("[::1]:8321", 200),
        ("attacker.example", 421),
        ("attacker.example:8321", 421),
        ("127.0.0.1.attacker.example", 421),
        ("192.168.1.50:8321", 421),
    ],
)
def test_on_loopback_without_tokens_only_loopback_host_names_are_served(
    tmp_path: Path, host: str, status: int
) -> None:
    with guarded(tmp_path) as client:
        answer = client.get("/memory/export", headers={"Host": host})
    assert answer.status_code == status
    if status == 421:
        assert answer.json()["error"] == "host_not_allowed"


def test_listed_hosts_are_served_too_and_with_tokens_only_the_list_is_checked(
    tmp_path: Path,
) -> None:
    with guarded(tmp_path, allowed_hosts=("lobug.local",)) as client:
        assert client.get("/memory/x", headers={"Host": "lobug.local:8321"}).status_code == 200
        assert client.get("/memory/x", headers={"Host": "other.local"}).status_code == 421
    with guarded(tmp_path, admin_tokens=(TOKEN,), allowed_hosts=("lobug.local",)) as client:
        assert client.get("/memory/x", headers={"Host": "other.local"}).status_code == 421
        foreign = {"Origin": "https://attacker.example", "Content-Type": "text/plain"}
        assert client.post("/memory/x", headers=foreign).status_code == 200  # tokens rule
    with guarded(tmp_path, admin_tokens=(TOKEN,)) as client:
        assert client.get("/memory/x", headers={"Host": "attacker.example"}).status_code == 200


def test_beyond_loopback_any_host_is_served_but_only_its_own_pages_may_post(
    tmp_path: Path,
) -> None:
    with guarded(tmp_path, host="0.0.0.0", allow_unauthenticated=True) as client:
        lan = {"Host": "192.168.1.50:8321"}
        assert client.get("/memory/x", headers=lan).status_code == 200
        own = {**lan, "Origin": "http://192.168.1.50:8321"}
        assert client.post("/memory/x", headers=own, json={}).status_code == 200
        other = {**lan, "Origin": "http://192.168.1.51:8321"}
        assert client.post("/memory/x", headers=other, json={}).status_code == 403


@pytest.mark.parametrize(
    ("origin", "status"),
    [
        ("http://127.0.0.1:8321", 200),
        ("http://localhost:3000", 200),
        ("https://[::1]", 200),
        ("https://attacker.example", 403),
        ("http://127.0.0.1.attacker.example", 403),
        ("null", 403),
        ("file://", 403),
    ],
)
def test_a_foreign_origin_is_refused(tmp_path: Path, origin: str, status: int) -> None:
    with guarded(tmp_path) as client:
        answer = client.post("/memory/dream/lobug", headers={"Origin": origin})
        read = client.get("/memory/export", headers={"Origin": origin})
    assert (answer.status_code, read.status_code) == (status, status)
    if status == 403:
        assert answer.json()["error"] == "origin_not_allowed"


@pytest.mark.parametrize(
    "body_type",
    [
        "text/plain",
        "text/plain; charset=utf-8",
        "multipart/form-data; boundary=x",
        "application/x-www-form-urlencoded",
    ],
)
def test_a_cross_site_body_type_on_a_json_route_is_refused(tmp_path: Path, body_type: str) -> None:
    with guarded(tmp_path) as client:
        for method in ("POST", "PUT", "DELETE"):
            answer = client.request(
                method, "/memory/dream/lobug", content=b"{}", headers={"Content-Type": body_type}
            )
            assert answer.status_code == 415
            assert answer.json()["error"] == "unsupported_media_type"
        assert client.get("/memory/x", headers={"Content-Type": body_type}).status_code == 200


def test_devices_and_forms_keep_working(tmp_path: Path) -> None:
    """The device contract: JSON with application/json, audio as multipart or audio/wav,
    no Origin; the dashboard's forms from its own pages."""
    with guarded(tmp_path) as client:
        assert client.post("/memory/x", json={"text": "hi"}).status_code == 200
        assert client.post("/memory/x", content=b'{"text": "hi"}').status_code == 200
        upload = {"audio": ("recording.wav", b"RIFF", "audio/wav")}
        assert client.post("/chat/audio", files=upload).status_code == 200
        wav = {"Content-Type": "audio/wav"}
        assert client.post("/chat/audio", content=b"RIFF", headers=wav).status_code == 200
        form = {"Origin": "http://127.0.0.1:8321"}
        assert client.post("/ui/facts", data={"csrf": "x"}, headers=form).status_code == 200
        assert client.post("/ui/facts", data={"csrf": "x"}).status_code == 200


def test_a_websocket_from_a_foreign_page_or_host_is_refused_with_its_reason(
    tmp_path: Path,
) -> None:
    with guarded(tmp_path) as client:
        with client.websocket_connect("/ws") as socket:
            assert socket.receive_text() == "hello"
        refusals = (
            ({"Origin": "https://attacker.example"}, 403, "origin_not_allowed"),
            ({"Host": "attacker.example"}, 421, "host_not_allowed"),
        )
        for refused, status, error in refusals:
            with (
                pytest.raises(WebSocketDenialResponse) as denied,
                client.websocket_connect("/ws", headers=refused) as socket,
            ):
                socket.receive_text()
            assert denied.value.status_code == status
            assert denied.value.json()["error"] == error and denied.value.json()["detail"]


def test_host_names_and_the_setting() -> None:
    assert host_name("[::1]:80") == "::1"
    assert host_name("Lobug.Local.:8321") == "lobug.local"
    assert host_name("::1") == "::1"
    env = {"LOBUG_ALLOWED_HOSTS": " Lobug.Local. , [fd00::2], 192.168.1.50 ,"}
    assert Settings.from_env(env).allowed_hosts == ("lobug.local", "fd00::2", "192.168.1.50")
    for wrong in ("http://lobug.local", "lobug.local:8321"):
        with pytest.raises(ConfigError, match="LOBUG_ALLOWED_HOSTS"):
            Settings.from_env({"LOBUG_ALLOWED_HOSTS": wrong})
