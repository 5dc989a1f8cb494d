"""schemathesis against the server's own OpenAPI schema, over real HTTP: every operation, with
and without tokens, valid and invalid data. No answer may be a 5xx, none may hang."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import hypothesis
import pytest
import schemathesis
from schemathesis import Case
from schemathesis.checks import not_a_server_error

from lobug.app import create_app
from lobug.backends import Backends
from lobug.config import Settings
from tests.fakes import FakeChat, FakeEmbedder, FakeSTT, FakeTTS
from tests.live import LiveServer

# Not traced by coverage, nor are its servers: the fuzzer looks for server errors, not for
# lines (the tests that cover the routes run traced), and tracing nearly doubled its CPU time
# (160 s against 89 s, the most of any file in `make test`).
pytestmark = pytest.mark.no_cover

TOKEN = "fuzz-token-Gd5Vy2"
EXAMPLES = 30

# The schema is the app's own; building the app reads nothing and starts nothing.
schema = schemathesis.openapi.from_dict(
    create_app(Settings(db_path=Path(tempfile.gettempdir()) / "unused.db")).openapi()
)


@schemathesis.serializer("audio/wav")
def raw_audio(_ctx: object, value: object) -> bytes:
    """Whatever was generated for the raw `audio/wav` body, as bytes (mostly not a WAV)."""
    if isinstance(value, bytes):
        return value
    return str(value).encode()


def fuzz_backends() -> Backends:
    return Backends(FakeChat(), FakeEmbedder(), stt=FakeSTT(), tts=FakeTTS())


@pytest.fixture(scope="module")
def open_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    settings = Settings(db_path=tmp_path_factory.mktemp("open") / "m.db")
    server = LiveServer(create_app(settings, fuzz_backends()), traced=False)
    yield server.url
    server.stop()


@pytest.fixture(scope="module")
def guarded_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    settings = Settings(db_path=tmp_path_factory.mktemp("guarded") / "m.db", device_tokens=(TOKEN,))
    server = LiveServer(create_app(settings, fuzz_backends()), traced=False)
    yield server.url
    server.stop()


@schema.parametrize()
@hypothesis.settings(
    max_examples=EXAMPLES,
    suppress_health_check=list(hypothesis.HealthCheck),
    phases=[hypothesis.Phase.explicit, hypothesis.Phase.generate],
)
def test_no_server_errors_without_tokens(case: Case, open_server: str) -> None:
    case.call_and_validate(base_url=open_server, checks=[not_a_server_error], timeout=30)


@schema.parametrize()
@hypothesis.settings(
    max_examples=EXAMPLES // 3,
    suppress_health_check=list(hypothesis.HealthCheck),
    phases=[hypothesis.Phase.explicit, hypothesis.Phase.generate],
)
def test_tokens_are_required_and_nothing_fails_with_one(case: Case, guarded_server: str) -> None:
    anonymous = case.call(base_url=guarded_server, timeout=30)
    open_paths = {"/health", "/memory/health"}
    if case.path in open_paths:
        assert anonymous.status_code < 500
    else:  # 405: a method the path does not have, refused before anything else
        assert anonymous.status_code in (401, 405), (case.method, case.path)
    case.call_and_validate(
        base_url=guarded_server,
        headers={"Authorization": f"Bearer {TOKEN}"},
        checks=[not_a_server_error],
        timeout=30,
    )
