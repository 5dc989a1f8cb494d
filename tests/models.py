"""The bundled chat model the tests run (issue 41): a test that needs a model but not its
quality runs the smallest, so the suite does not slow down with the default's size."""

from __future__ import annotations

from pathlib import Path

import pytest

from lobug.backends.bundled_models import bundled_model, model_file

SMALLEST_CHAT_MODEL = "smollm2-135m"


def smallest_chat_model() -> Path:
    return model_file(bundled_model(SMALLEST_CHAT_MODEL))


# `make test` runs two workers (one per core). Tests that keep a model busy for long while
# timing what a person waits (a turn during a dream, the 1.5B model in German, two xiaozhi
# devices) run on one worker, one after another (`--dist loadgroup`): beside each other on two
# cores, one took 244 of its 300 s.
ONE_AT_A_TIME = pytest.mark.xdist_group("models_one_at_a_time")
