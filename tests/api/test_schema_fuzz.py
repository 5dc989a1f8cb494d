"""schemathesis against the server's own OpenAPI schema, over real HTTP: every operation, with
and without tokens, valid and invalid data. No answer may be a 5xx, none may hang.

Each operation's cases are built when its test runs (`fuzzed`), not at collection: every
worker of `make test` collects this module, one runs it, and building the cases of every
operation for collection took each worker 7 s of CPU (19 s under coverage)."""

from __future__ import annotations

import functools
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import hypothesis
import pytest
import schemathesis
from schemathesis import Case
from schemathesis.checks import not_a_server_error
from schemathesis.schemas import BaseSchema

from lobug.app import create_app
from lobug.backends import Backends
from lobug.config import Settings
from tests.fakes import FakeChat, FakeEmbedder, FakeSTT, FakeTTS
from tests.live import LiveServer

if TYPE_CHECKING:
    from schemathesis.generation.feedback import FeedbackSources

# Not traced by coverage, nor are its servers: the fuzzer looks for server errors, not for
# lines (the tests that cover the routes run traced), and tracing nearly doubled its CPU time
# (160 s against 89 s, the most of any file in `make test`).
pytestmark = pytest.mark.no_cover

TOKEN = "fuzz-token-Gd5Vy2"
EXAMPLES = 30
SETTINGS = hypothesis.settings(
    max_examples=EXAMPLES,
    suppress_health_check=list(hypothesis.HealthCheck),
    phases=[hypothesis.Phase.explicit, hypothesis.Phase.generate],
)


@functools.cache
def fuzz_schema() -> BaseSchema:
    """The app's own schema; building the app reads nothing and starts nothing."""
    settings = Settings(db_path=Path(tempfile.gettempdir()) / "unused.db")
    return schemathesis.openapi.from_dict(create_app(settings).openapi())


OPERATIONS = [result.ok().label for result in fuzz_schema().get_all_operations()]


def fuzzed(label: str, test: Callable[..., None]) -> Callable[..., None]:
    """`test` as Hypothesis runs it on the cases schemathesis makes for the operation `label`
    (its examples, its coverage cases, then generated ones): what `schema.parametrize()`
    builds for each operation at collection (`build_operation_test`, its seed and settings
    included), built here when the test runs. (schemathesis's own lazy schema would do this,
    but does not run on pytest 9.2.)"""
    from schemathesis.pytest._test_builder import build_operation_test

    schema = fuzz_schema()
    operation = schema.find_operation_by_label(label)
    assert operation is not None, label
    return build_operation_test(
        config=schema.config,
        operation=operation,
        test_func=test,
        given_kwargs={},
        feedback=feedback_of(test),
    )


@functools.cache
def feedback_of(test: Callable[..., None]) -> FeedbackSources:
    """What schemathesis carries from one operation's cases to the next, one for each test
    over all the operations, as `schema.parametrize()` keeps one for each test function; its
    checks loaded once, as the plugin does when it builds the first test."""
    from schemathesis.checks import load_all_checks
    from schemathesis.generation.feedback import FeedbackSources
    from schemathesis.python._constants.orchestrator import make_constants_value_source

    load_all_checks()
    return FeedbackSources(constants_value_source=make_constants_value_source(fuzz_schema()))


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


@SETTINGS
def no_server_error(case: Case, url: str) -> None:
    case.call_and_validate(base_url=url, checks=[not_a_server_error], timeout=30)


@hypothesis.settings(SETTINGS, max_examples=EXAMPLES // 3)
def tokens_required_and_no_server_error_with_one(case: Case, url: str) -> None:
    anonymous = case.call(base_url=url, timeout=30)
    open_paths = {"/health", "/memory/health"}
    if case.path in open_paths:
        assert anonymous.status_code < 500
    else:  # 405: a method the path does not have, refused before anything else
        assert anonymous.status_code in (401, 405), (case.method, case.path)
    case.call_and_validate(
        base_url=url,
        headers={"Authorization": f"Bearer {TOKEN}"},
        checks=[not_a_server_error],
        timeout=30,
    )


@pytest.mark.parametrize("operation", OPERATIONS)
def test_no_server_errors_without_tokens(operation: str, open_server: str) -> None:
    fuzzed(operation, no_server_error)(url=open_server)


@pytest.mark.parametrize("operation", OPERATIONS)
def test_tokens_are_required_and_nothing_fails_with_one(
    operation: str, guarded_server: str
) -> None:
    fuzzed(operation, tokens_required_and_no_server_error_with_one)(url=guarded_server)
