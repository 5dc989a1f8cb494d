"""Run `lobug` as a subprocess (`python -m lobug`, the console script's code) and read its
answer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

TIMEOUT_S = 300  # the in-process chat loads the real model: slow on 2 busy cores


@dataclass
class Ran:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        assert self.code == 0, self.err
        return json.loads(self.out)


def command(*args: str) -> list[str]:
    """`python -m lobug ARGS`; while the tests are measured (`make test`), under coverage in
    parallel mode beside the tests' own data, which pytest-cov combines at the end: the CLI
    runs only in these subprocesses, and counts toward the coverage floor like the rest."""
    measuring = sys.modules.get("coverage")
    current = measuring.Coverage.current() if measuring else None
    if current is None:
        return [sys.executable, "-m", "lobug", *args]
    data_file = os.path.abspath(current.config.data_file)
    run = ["run", "--parallel-mode", f"--data-file={data_file}", "-m", "lobug"]
    return [sys.executable, "-m", "coverage", *run, *args]


def lobug(*args: str, env: dict[str, str], stdin: str | None = None) -> Ran:
    done = subprocess.run(
        command(*args),
        env={**os.environ, "LOBUG_LOG_LEVEL": "warning", **env},
        input=stdin,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    return Ran(done.returncode, done.stdout, done.stderr)


def ok(*args: str, env: dict[str, str], stdin: str | None = None) -> Ran:
    ran = lobug(*args, env=env, stdin=stdin)
    assert ran.code == 0, f"lobug {' '.join(args)}: {ran.err}"
    return ran
