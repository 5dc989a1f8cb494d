"""The order `make test` deals its modules to the workers in (`tests/scheduling.py`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import pytest

from tests.scheduling import (
    DurationRecorder,
    longest_modules_first,
    module_of,
    read_durations,
)


@dataclass
class Item:
    nodeid: str
    marks: tuple[str, ...] = field(default=())

    def get_closest_marker(self, name: str) -> object | None:
        return name if name in self.marks else None


def ordered(items: list[Item], durations: Path) -> list[str]:
    longest_modules_first(cast(list[pytest.Item], items), durations)
    return [item.nodeid for item in items]


def test_recorded_modules_go_longest_first_each_module_together(tmp_path: Path) -> None:
    durations = tmp_path / "durations.txt"
    durations.write_text("# seconds module\n5.0 tests/a.py\n200.0 tests/c.py\n40.0 tests/b.py\n")
    items = [Item("tests/a.py::one"), Item("tests/b.py::two"), Item("tests/c.py::three")]
    items.insert(1, Item("tests/a.py::four"))
    assert ordered(items, durations) == [
        "tests/c.py::three",
        "tests/b.py::two",
        "tests/a.py::one",
        "tests/a.py::four",
    ]


def test_a_module_not_recorded_is_estimated_from_its_marks(tmp_path: Path) -> None:
    durations = tmp_path / "durations.txt"
    durations.write_text("20.0 tests/known.py\n")
    items = [
        Item("tests/known.py::a"),
        Item("tests/many_quick.py::a"),
        Item("tests/many_quick.py::b"),
        Item("tests/server.py::a", ("e2e",)),
        Item("tests/server.py::b", ("e2e", "models")),
    ]
    # two server tests (about 30 s) before a recorded 20 s, before two quick tests
    assert [module_of(n) for n in dict.fromkeys(ordered(items, durations))] == [
        "tests/server.py",
        "tests/server.py",
        "tests/known.py",
        "tests/many_quick.py",
        "tests/many_quick.py",
    ]


def test_without_a_durations_file_every_module_is_estimated(tmp_path: Path) -> None:
    items = [Item("tests/quick.py::a"), Item("tests/browser.py::a", ("browser",))]
    assert ordered(items, tmp_path / "absent.txt") == ["tests/browser.py::a", "tests/quick.py::a"]


def test_the_recorder_writes_what_the_order_reads(tmp_path: Path) -> None:
    path = tmp_path / "durations.txt"
    recorder = DurationRecorder(path)
    for nodeid, seconds in [("tests/a.py::x", 1.5), ("tests/b.py::y", 9.0), ("tests/a.py::z", 2)]:
        report: Any = pytest.TestReport(nodeid, ("", 0, ""), {}, "passed", None, "call", [])
        report.duration = seconds
        recorder.pytest_runtest_logreport(report)
    recorder.pytest_sessionfinish()
    assert read_durations(path) == {"tests/b.py": 9.0, "tests/a.py": 3.5}
    assert path.read_text().splitlines()[1] == "9.0 tests/b.py"


def test_the_suites_durations_file_reads_and_names_existing_modules() -> None:
    root = Path(__file__).resolve().parents[1]
    recorded = read_durations(root / "tests" / "durations.txt")
    assert len(recorded) > 100
    assert [module for module in recorded if not (root / module).is_file()] == []
