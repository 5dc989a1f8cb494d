"""Auth on every route, and what logs may hold: no tokens, no message text unless debug."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from lobug.app import create_app, create_memory_app
from lobug.backends import Backends
from lobug.config import Settings

TOKEN = "tok-Zq81-never-logged"
OPEN_PATHS = {"/health", "/memory/health"}
WRONG = [{}, {"Authorization": "Bearer nope"}, {"Authorization": TOKEN}, {"X-Token": TOKEN}]


def calls(app: FastAPI) -> Iterator[tuple[str, str]]:
    """(method, path) of every operation in the app's schema, path parameters filled in."""
    for path, operations in app.openapi()["paths"].items():
        for method in operations:
            yield method.upper(), re.sub(r"\{[^}]+\}", "x", path)


@pytest.fixture
def guarded(settings: Settings) -> Settings:
    return settings.with_overrides(device_tokens=(TOKEN, "second-token"))


@pytest.mark.parametrize("make_app", [create_app, create_memory_app])
def test_nothing_but_health_answers_without_a_valid_token(
    guarded: Settings, backends: Backends, make_app: object
) -> None:
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
