"""SIGKILL under load, through `scripts/crash_test.py`: nothing acknowledged is lost, the
database and its indexes stay consistent, working memory comes back."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.models]

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "crash_test.py"


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("crash_test", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look themselves up there
    spec.loader.exec_module(module)
    return module


# The restarted server resumes the memory work the kills interrupted on the embedded model;
# under the suite's workers other tests share the two cores with it, and 27 exchanges took
# over 120 s. The wait ends as soon as the queue is empty, so a longer one costs nothing when
# the machine is free.
LEARNING_WAIT_S = 420.0


@pytest.mark.timeout(LEARNING_WAIT_S + 180)
def test_kills_lose_nothing_acknowledged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    crash = load_script()
    ok = crash.run(
        tmp_path / "memory.db",
        tmp_path / "server.log",
        kills=2,
        devices=2,
        memory_clients=2,
        seed=7,
        uptime_s=(2.0, 4.0),
        learning_wait_s=LEARNING_WAIT_S,
    )
    printed = capsys.readouterr().out
    assert ok, printed + (tmp_path / "server.log").read_text(errors="replace")[-3000:]
    assert "messages lost       0" in printed
