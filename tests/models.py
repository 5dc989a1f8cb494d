"""The bundled chat model the tests run (issue 41): a test that needs a model but not its
quality runs the smallest, so the suite does not slow down with the default's size."""

from __future__ import annotations

from pathlib import Path

from lobug.backends.bundled_models import bundled_model, model_file

SMALLEST_CHAT_MODEL = "smollm2-135m"

# The suite runs four workers on two cores (`WORKERS` in the Makefile). llama.cpp's threads
# meet at a spinning barrier after each step: a model on two threads beside another worker's
# model waits for a thread that is off the core (measured: the embedded-model tests took 73 s
# beside one busy core, 20 s alone; on one thread 35 s and 25 s). Each model in a test runs
# on one thread.
TEST_MODEL_THREADS = 1


def smallest_chat_model() -> Path:
    return model_file(bundled_model(SMALLEST_CHAT_MODEL))
