from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import hypothesis
import pytest
from fastapi.testclient import TestClient

from lobug.api import cross_site
from lobug.app import create_app
from lobug.backends import Backends
from lobug.config import MemoryConfig, Settings
from lobug.store.engines import open_database
from lobug.store.protocol import Store
from tests.engines import ENGINES, Databases, postgres_server
from tests.fakes import FakeChat, FakeEmbedder
from tests.models import SMALLEST_CHAT_MODEL, TEST_MODEL_THREADS

# The app on a fake model server that calls tools: its `model` fixture (`tests/served_model.py`).
pytest_plugins = ("tests.served_model",)

# The machine is small and shared with model-backed tests: judge properties, not speed.
hypothesis.settings.register_profile("lobug", deadline=None)
hypothesis.settings.load_profile("lobug")


def pytest_configure(config: pytest.Config) -> None:
    """The servers tests start, and settings read from the environment, run the smallest
    chat model unless a test says otherwise (`tests/models.py`), on one thread each."""
    os.environ.setdefault("LOBUG_LLM_MODEL", SMALLEST_CHAT_MODEL)
    os.environ.setdefault("LOBUG_LLM_THREADS", str(TEST_MODEL_THREADS))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """A module's tests on one worker (`tests/scheduling.py`)."""
    from tests.scheduling import whole_modules

    return whole_modules(config, log)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The modules that start servers or load models first (`tests/scheduling.py`)."""
    from tests.scheduling import heavy_modules_first

    heavy_modules_first(items)


@pytest.fixture(autouse=True, scope="session")
def served_test_host() -> Iterator[None]:
    """As Django's test runner does: the host name of in-process test clients (`testserver`)
    is served; a real server answers only loopback names and LOBUG_ALLOWED_HOSTS."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cross_site, "LOOPBACK_NAMES", cross_site.LOOPBACK_NAMES | {"testserver"})
        yield


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """After a run that includes `tests/test_layout.py`, the modules over the size guide (500
    lines), by name: visible, not failing (a warning would fail under `filterwarnings=error`)."""
    ran = terminalreporter.stats.get("passed", []) + terminalreporter.stats.get("failed", [])
    if not any(report.nodeid.startswith("tests/test_layout.py") for report in ran):
        return
    from tests.test_layout import GUIDE_MODULE_LINES, size_guide_report

    report = size_guide_report()
    if report:
        terminalreporter.section(f"modules over {GUIDE_MODULE_LINES} lines (split them)")
        for line in report:
            terminalreporter.write_line(line)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Tests marked `both_engines` that use a store run once per engine."""
    if "engine" in metafunc.fixturenames and metafunc.definition.get_closest_marker("both_engines"):
        metafunc.parametrize("engine", ENGINES, indirect=True)


@pytest.fixture
def engine(request: pytest.FixtureRequest) -> str:
    return str(getattr(request, "param", "sqlite"))


@pytest.fixture(scope="session")
def postgres() -> Iterator[Databases]:
    """A PostgreSQL server for the session (LOBUG_TEST_DATABASE_URL, or pgserver)."""
    pytest.importorskip("psycopg")
    given = os.environ.get("LOBUG_TEST_DATABASE_URL")
    with postgres_server(given) as url:
        databases = Databases(url)
        yield databases
        if given:  # a pgserver's folder goes with it
            databases.drop_all()


@pytest.fixture
def database_url(engine: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """Where a test's memory lives: a SQLite file, or a fresh PostgreSQL database."""
    if engine == "sqlite":
        return f"sqlite:///{tmp_path / 'memory.db'}"
    databases: Databases = request.getfixturevalue("postgres")
    return databases.fresh()


@pytest.fixture
def settings(tmp_path: Path, engine: str, request: pytest.FixtureRequest) -> Settings:
    url = None if engine == "sqlite" else request.getfixturevalue("database_url")
    # No nightly dream: a test that wants one runs it.
    return Settings(
        db_path=tmp_path / "memory.db", database_url=url, memory=MemoryConfig(), dream_at=""
    )


@pytest.fixture
def fake_chat() -> FakeChat:
    return FakeChat()


@pytest.fixture
def fake_embedder() -> FakeEmbedder:
    return FakeEmbedder()


@pytest.fixture
def backends(fake_chat: FakeChat, fake_embedder: FakeEmbedder) -> Backends:
    return Backends(chat=fake_chat, embedder=fake_embedder)


@pytest.fixture
def store(
    tmp_path: Path, engine: str, fake_embedder: FakeEmbedder, request: pytest.FixtureRequest
) -> Iterator[Store]:
    """An open store bound to the fake embedder: SQLite, or PostgreSQL for the tests marked
    `both_engines`."""
    if engine == "sqlite":
        url = f"sqlite:///{tmp_path / 'store.db'}"
    else:
        url = request.getfixturevalue("database_url")
    opened = open_database(url)
    opened.bind_embedding(fake_embedder.model, fake_embedder.dimension)
    yield opened
    opened.close()


@pytest.fixture
def client(settings: Settings, backends: Backends) -> Iterator[TestClient]:
    with TestClient(create_app(settings, backends)) as test_client:
        yield test_client
