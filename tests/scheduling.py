"""How the suite's tests are handed to pytest-xdist's workers (`make test` runs four).

A worker is given a whole module at a time, the next one as it starts the last test it holds
(`WholeModules`): a module's tests run on one worker, so its module-scoped server (the voice
and xiaozhi servers load whisper, piper and the chat model: about 25 s each under the suite's
load) starts once, not once on each worker `load` spread its tests over. And the modules that
take longest go first (`longest_modules_first`): the long ones are dealt out while the quick
ones are left to fill the gaps, so the run does not end with one worker busy on a long module
while the others stand idle. How long a module takes is read from `tests/durations.txt` (the
seconds its tests took in a `make test` run, written by `--record-durations`), and estimated
from its tests' marks for a module it does not name yet."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from xdist.remote import Producer
from xdist.scheduler import LoadScheduling
from xdist.workermanage import WorkerController

HEAVY_MARKS = ("e2e", "models", "browser")
DURATIONS = Path(__file__).with_name("durations.txt")
# A module not in DURATIONS yet: about this long a test (the medians of `make test` on two
# cores, 7 December 2026), a test that starts a server, loads a model or drives a browser
# (HEAVY_MARKS) and any other.
HEAVY_TEST_S = 15.0
LIGHT_TEST_S = 0.3
# A worker runs a test once it knows the next one (its teardown depends on it): it must hold two.
HELD = 2


class WholeModules(LoadScheduling):
    collection: list[str] | None
    pending: list[int]
    node2pending: dict[WorkerController, list[int]]

    def schedule(self) -> None:
        """The first modules to each worker (`LoadScheduling.schedule`, one module a worker)."""
        assert self.collection_is_completed
        if self.collection is None:
            if not self._check_nodes_have_same_collection():
                self.log("**Different tests collected, aborting run**")
                return
            self.collection = next(iter(self.node2collection.values()))
            self.pending[:] = range(len(self.collection))
        for node in self.nodes:
            self.check_schedule(node)

    def check_schedule(self, node: WorkerController, duration: float = 0) -> None:
        """The next module to `node` when it holds fewer than two tests; its end when none is
        left."""
        if node.shutting_down:
            return
        while self.pending and len(self.node2pending[node]) < HELD:
            self._send_tests(node, self._to_the_module_end())
        if not self.pending:
            node.shutdown()

    def _to_the_module_end(self) -> int:
        """How many of the pending tests belong to the first pending test's module."""
        assert self.collection is not None
        first = module_of(self.collection[self.pending[0]])
        count = 1
        while (
            count < len(self.pending) and module_of(self.collection[self.pending[count]]) == first
        ):
            count += 1
        return count


def module_of(nodeid: str) -> str:
    return nodeid.split("::")[0]


def whole_modules(config: pytest.Config, log: Producer) -> WholeModules | None:
    """The scheduler for `--dist load` (None: xdist's own for any other mode)."""
    return WholeModules(config, log) if config.getvalue("dist") == "load" else None


def longest_modules_first(items: list[pytest.Item], durations: Path = DURATIONS) -> None:
    """`items` reordered in place: the modules expected to take longest first, each module's
    tests together and in their order."""
    recorded = read_durations(durations)
    estimated: Counter[str] = Counter()
    for item in items:
        heavy = any(item.get_closest_marker(mark) for mark in HEAVY_MARKS)
        estimated[module_of(item.nodeid)] += HEAVY_TEST_S if heavy else LIGHT_TEST_S
    expected = {module: recorded.get(module, guess) for module, guess in estimated.items()}
    order = {module: n for n, module in enumerate(estimated)}
    items.sort(key=lambda item: (-expected[module_of(item.nodeid)], order[module_of(item.nodeid)]))


def read_durations(path: Path) -> dict[str, float]:
    """`module -> seconds` from a durations file (`seconds module` lines; # comments)."""
    if not path.is_file():
        return {}
    found = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            seconds, module = line.split()
            found[module] = float(seconds)
    return found


class DurationRecorder:
    """`--record-durations FILE`: the seconds each module's tests took (set-up, call and
    teardown, as the workers reported them), written as a durations file at the end."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.seconds: Counter[str] = Counter()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.seconds[module_of(report.nodeid)] += report.duration

    def pytest_sessionfinish(self) -> None:
        lines = [f"{seconds:.1f} {module}" for module, seconds in self.seconds.most_common()]
        header = "# Written by `pytest --record-durations`: seconds each module's tests took.\n"
        self.path.write_text(header + "\n".join(lines) + "\n")
