"""Run `lobug` as a subprocess (`python -m lobug`, the console script's code) and read its
answer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

TIMEOUT_S = 120


@dataclass
class Ran:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        assert self.code == 0, self.err
        return json.loads(self.out)


def lobug(*args: str, env: dict[str, str], stdin: str | None = None) -> Ran:
    done = subprocess.run(
        [sys.executable, "-m", "lobug", *args],
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
