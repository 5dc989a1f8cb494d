"""The bundled chat model the tests run (issue 41): a test that needs a model but not its
quality runs the smallest, so the suite does not slow down with the default's size."""

from __future__ import annotations

from pathlib import Path

from lobug.backends.bundled_models import bundled_model, model_file

SMALLEST_CHAT_MODEL = "smollm2-135m"


def smallest_chat_model() -> Path:
    return model_file(bundled_model(SMALLEST_CHAT_MODEL))
