"""How the suite's tests are handed to pytest-xdist's workers (`make test` runs four).

A worker is given a whole module at a time, the next one as it starts the last test it holds
(`WholeModules`): a module's tests run on one worker, so its module-scoped server (the voice
and xiaozhi servers load whisper, piper and the chat model: about 25 s each under the suite's
load) starts once, not once on each worker `load` spread its tests over. And the modules that
start servers or load models go first (`heavy_modules_first`): the long ones are dealt out
while the quick ones are left to fill the gaps, so the run does not end with one worker busy
on a server test while the others stand idle."""

from __future__ import annotations

from collections import Counter

import pytest
from xdist.remote import Producer
from xdist.scheduler import LoadScheduling
from xdist.workermanage import WorkerController

HEAVY_MARKS = ("e2e", "models", "browser")
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


def heavy_modules_first(items: list[pytest.Item]) -> None:
    """`items` reordered in place: the modules with the most tests that start a server, load
    a model or drive a browser first, each module's tests together and in their order."""
    heavy = Counter(
        module_of(item.nodeid)
        for item in items
        if any(item.get_closest_marker(mark) for mark in HEAVY_MARKS)
    )
    order = {
        module: n for n, module in enumerate(dict.fromkeys(module_of(i.nodeid) for i in items))
    }
    items.sort(key=lambda item: (-heavy[module_of(item.nodeid)], order[module_of(item.nodeid)]))
