"""The client imports nothing of the server: a program using `learning()` stays light."""

from __future__ import annotations

import json
import subprocess
import sys

SERVER_ONLY = (
    "fastapi",
    "starlette",
    "uvicorn",
    "onnxruntime",
    "xllamacpp",
    "faster_whisper",
    "piper",
    "ctranslate2",
    "numpy",
    "sqlite_vec",
    "pydantic",
    "openai",  # imported when a `learning()` block begins, not before
)


def imported_by(code: str) -> list[str]:
    """Top-level module names in `sys.modules` after `code` ran in a fresh interpreter."""
    script = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    names: list[str] = json.loads(result.stdout.splitlines()[-1])
    return names


def test_the_client_imports_no_server_and_no_model_runtime() -> None:
    names = imported_by("import lobug.client, lobug.client.messages")
    assert "lobug.client.interceptor" in names
    assert [name for name in names if name.split(".")[0] in SERVER_ONLY] == []
    lobug_modules = [name for name in names if name.startswith("lobug.")]
    assert [name for name in lobug_modules if not name.startswith("lobug.client")] == []


def test_learning_is_exported_from_the_package() -> None:
    names = imported_by(
        "from lobug import learning\n"
        "from lobug.client.interceptor import learning as defined\n"
        "assert learning is defined"
    )
    assert [name for name in names if name.split(".")[0] in SERVER_ONLY] == []
