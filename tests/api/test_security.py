"""Auth on every route, who may do what (admin and device tokens), and what logs may hold: no
tokens, no message text unless debug."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI, Request
from fastapi.testclient import TestClient

from lobug.api.deps import ADMIN_RESPONSES, AdminOnly
from lobug.app import create_app, create_memory_app
from lobug.backends import Backends
from lobug.config import Settings
from lobug.web.roles import caller_role

TOKEN = "tok-Zq81-never-logged"
ADMIN_TOKEN = "adm-7Hq2-never-logged"
OPEN_PATHS = {"/health", "/memory/health"}
WRONG = [{}, {"Authorization": "Bearer nope"}, {"Authorization": TOKEN}, {"X-Token": TOKEN}]


def calls(app: FastAPI) -> Iterator[tuple[str, str]]:
    """(method, path) of every operation in the app's schema, path parameters filled in."""
    for path, operations in app.openapi()["paths"].items():
        for method in operations:
            yield method.upper(), re.sub(r"\{[^}]+\}", "x", path)


@pytest.fixture
def guarded(settings: Settings) -> Settings:
    return settings.with_overrides(device_tokens=(TOKEN, "second-token-Pz4Rq"))


@pytest.mark.parametrize("tokens", ["device_tokens", "admin_tokens"])
@pytest.mark.parametrize("make_app", [create_app, create_memory_app])
def test_nothing_but_health_answers_without_a_valid_token(
    settings: Settings, backends: Backends, make_app: object, tokens: str
) -> None:
    guarded = settings.with_overrides(**{tokens: (TOKEN, "second-token-Pz4Rq")})
    app = make_app(guarded, backends)  # type: ignore[operator]
    routes = list(calls(app))
    assert len(routes) > 8
    with TestClient(app) as client:
        for method, path in routes:
            for headers in WRONG:
                response = client.request(method, path, headers=headers, json={})
                if path in OPEN_PATHS:
                    assert response.status_code == 200, path
                else:
                    assert response.status_code == 401, (method, path, headers)
                    assert response.json()["error"] == "unauthorized"
        for path in ("/docs", "/redoc", "/openapi.json", "/memory/docs"):
            assert client.get(path, headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 404


def test_tokens_and_message_text_stay_out_of_the_logs(
    guarded: Settings, backends: Backends, caplog: pytest.LogCaptureFixture
) -> None:
    secret_text = "my bank pin is 4711 zebra"
    auth = {"Authorization": f"Bearer {TOKEN}"}
    caplog.set_level(logging.INFO)
    with TestClient(create_app(guarded, backends)) as client:
        client.post("/chat/text", json={"text": secret_text}, headers=auth)
        client.post("/chat/text", json={"text": secret_text}, headers={"Authorization": "Bearer x"})
        client.post("/memory/agents", json={"name": "a"}, headers=auth)
        client.post(
            "/memory/messages",
            json={"agent_name": "a", "role": "user", "content": secret_text},
            headers=auth,
        )
        client.post(
            "/v1/chat/completions",
            json={"model": "m", "messages": [{"role": "user", "content": secret_text}]},
            headers=auth,
        )
    logged = "\n".join(f"{r.getMessage()} {r.exc_text or ''}" for r in caplog.records)
    assert caplog.records, "the server logs something at info level"
    assert TOKEN not in logged
    assert "4711" not in logged


def test_the_database_and_its_folder_are_private(tmp_path: Path, backends: Backends) -> None:
    settings = Settings(db_path=tmp_path / "fresh" / "memory.db")
    with TestClient(create_app(settings, backends)) as client:
        client.post("/chat/text", json={"text": "hello"})
    assert (tmp_path / "fresh").stat().st_mode & 0o777 == 0o700
    assert (tmp_path / "fresh" / "memory.db").stat().st_mode & 0o777 == 0o600


def with_probes(app: FastAPI) -> FastAPI:
    """`app` with two routes of the test's own: one that names the caller's role, one that
    only admins may call (as the curation routes do)."""

    def role(request: Request) -> dict[str, str | None]:
        return {"role": caller_role(request.scope)}

    def admin_only() -> dict[str, bool]:
        return {"done": True}

    app.add_api_route("/probe/role", role)
    app.add_api_route(
        "/probe/admin",
        admin_only,
        methods=["DELETE"],
        dependencies=[AdminOnly],
        responses=ADMIN_RESPONSES,
    )
    return app


@pytest.fixture
def two_kinds(settings: Settings) -> Settings:
    return settings.with_overrides(
        device_tokens=(TOKEN, "second-token-Pz4Rq"), admin_tokens=(ADMIN_TOKEN,)
    )


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.mark.parametrize("make_app", [create_app, create_memory_app])
@pytest.mark.parametrize(
    ("headers", "role", "admin_status"),
    [
        (bearer(ADMIN_TOKEN), "admin", 200),
        (bearer(TOKEN), "device", 403),
        (bearer("second-token-Pz4Rq"), "device", 403),
    ],
)
def test_the_token_names_the_callers_role(
    two_kinds: Settings,
    backends: Backends,
    make_app: object,
    headers: dict[str, str],
    role: str,
    admin_status: int,
) -> None:
    app = with_probes(make_app(two_kinds, backends))  # type: ignore[operator]
    with TestClient(app) as client:
        assert client.get("/probe/role", headers=headers).json() == {"role": role}
        response = client.delete("/probe/admin", headers=headers)
    assert response.status_code == admin_status
    if admin_status == 403:
        assert response.json()["error"] == "admin_required"
        assert "LOBUG_ADMIN_TOKENS" in response.json()["detail"]


def test_no_or_a_wrong_token_is_refused_before_the_admin_check(
    two_kinds: Settings, backends: Backends
) -> None:
    with TestClient(with_probes(create_app(two_kinds, backends))) as client:
        for headers in [*WRONG, bearer(ADMIN_TOKEN + "x"), {"Authorization": ADMIN_TOKEN}]:
            for method, path in (("GET", "/probe/role"), ("DELETE", "/probe/admin")):
                response = client.request(method, path, headers=headers)
                assert response.status_code == 401, (method, headers)
                assert response.json()["error"] == "unauthorized"
        assert client.get("/health", headers=bearer(ADMIN_TOKEN)).status_code == 200


@pytest.mark.parametrize(
    ("overrides", "role", "admin_status"),
    [
        ({}, "admin", 200),
        ({"host": "localhost"}, "admin", 200),
        ({"host": "0.0.0.0", "allow_unauthenticated": True}, "device", 403),
    ],
)
def test_without_tokens_only_loopback_callers_are_admins(
    settings: Settings,
    backends: Backends,
    overrides: dict[str, object],
    role: str,
    admin_status: int,
) -> None:
    app = with_probes(create_app(settings.with_overrides(**overrides), backends))
    with TestClient(app) as client:
        assert client.get("/probe/role").json() == {"role": role}
        assert client.delete("/probe/admin").status_code == admin_status


def test_admin_only_routes_document_their_403(settings: Settings, backends: Backends) -> None:
    schema = with_probes(create_app(settings, backends)).openapi()
    assert "403" in schema["paths"]["/probe/admin"]["delete"]["responses"]


def test_admin_tokens_alone_hide_the_docs_and_report_token_auth(
    settings: Settings, backends: Backends
) -> None:
    guarded = settings.with_overrides(admin_tokens=(ADMIN_TOKEN,))
    with TestClient(create_app(guarded, backends)) as client:
        for path in ("/docs", "/redoc", "/openapi.json"):
            assert client.get(path, headers=bearer(ADMIN_TOKEN)).status_code == 404
        assert client.get("/health").json()["auth"] == "token"
        assert client.post("/chat/text", json={"text": "hi"}).status_code == 401
        assert (
            client.post("/chat/text", json={"text": "hi"}, headers=bearer(ADMIN_TOKEN)).status_code
            == 200
        )
