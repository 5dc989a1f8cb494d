"""How the suite's tests are handed to pytest-xdist's workers (`make test` runs four): as its
`load` scheduling does, test by test as workers free up, except that a batch never ends inside
a module. A module's tests so run on one worker, and a module-scoped server (the voice and
xiaozhi servers load whisper, piper and the chat model: about 25 s each under the suite's load)
starts once, not once on each worker its tests were spread over, as `load` did near the end of
the run where it hands out two tests at a time."""

from __future__ import annotations

import pytest
from xdist.remote import Producer
from xdist.scheduler import LoadScheduling
from xdist.workermanage import WorkerController


class WholeModules(LoadScheduling):
    def _send_tests(self, node: WorkerController, num: int) -> None:
        super()._send_tests(node, self._to_the_module_end(num))

    def _to_the_module_end(self, num: int) -> int:
        """`num`, or more, so that the batch of the first `num` pending tests ends where a
        module does."""
        assert self.collection is not None
        modules = [self.collection[index].split("::")[0] for index in self.pending]
        while 0 < num < len(modules) and modules[num] == modules[num - 1]:
            num += 1
        return num


def whole_modules(config: pytest.Config, log: Producer) -> WholeModules | None:
    """The scheduler for `--dist load` (None: xdist's own for any other mode)."""
    return WholeModules(config, log) if config.getvalue("dist") == "load" else None
