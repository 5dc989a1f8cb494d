"""Run `lobug` and read its answer: in this process by default (click's test runner, `env` set
for the call: the command's own code, traced by the tests' coverage), or with `process=True` as
a subprocess (`python -m lobug`, the console script's code), for what only a process shows: its
exit code as the shell sees it, a model loaded by the command itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

from click.testing import CliRunner

TIMEOUT_S = 300  # the in-process chat loads the real model: slow on 2 busy cores
QUIET = {"LOBUG_LOG_LEVEL": "warning"}


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
    parallel mode beside the tests' own data, which pytest-cov combines at the end."""
    measuring = sys.modules.get("coverage")
    current = measuring.Coverage.current() if measuring else None
    if current is None:
        return [sys.executable, "-m", "lobug", *args]
    data_file = os.path.abspath(current.config.data_file)
    run = ["run", "--parallel-mode", f"--data-file={data_file}", "-m", "lobug"]
    return [sys.executable, "-m", "coverage", *run, *args]


def lobug(*args: str, env: dict[str, str], stdin: str | None = None, process: bool = False) -> Ran:
    if process:
        return in_a_process(args, env, stdin)
    from lobug.cli import cli

    # An exception no handler of the command answers is raised here, as the bug it is.
    result = CliRunner().invoke(
        cli, list(args), input=stdin, env={**QUIET, **env}, catch_exceptions=False
    )
    return Ran(result.exit_code, result.stdout, result.stderr)


def in_a_process(args: tuple[str, ...], env: dict[str, str], stdin: str | None) -> Ran:
    done = subprocess.run(
        command(*args),
        env={**os.environ, **QUIET, **env},
        input=stdin,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    return Ran(done.returncode, done.stdout, done.stderr)


def ok(*args: str, env: dict[str, str], stdin: str | None = None, process: bool = False) -> Ran:
    ran = lobug(*args, env=env, stdin=stdin, process=process)
    assert ran.code == 0, f"lobug {' '.join(args)}: {ran.err}"
    return ran
