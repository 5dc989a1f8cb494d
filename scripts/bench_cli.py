"""Wall time of local memory commands (`lobug facts list`, `lobug stats`, ...) on a small
database, as a person runs them (`python -m lobug`, a new process each time): the median of
`--runs` runs, for this checkout and, with `--baseline DIR`, beside another checkout's
`server/` folder in the same sitting (say `git archive 8deef6e server | tar -x -C /tmp/base`).

    python scripts/bench_cli.py --baseline /tmp/base --runs 10
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COMMANDS = (("facts", "list"), ("stats",), ("audit",), ("search", "bees", "--mode", "keyword"))


def seed(db: Path, server: Path) -> None:
    """A few facts and messages, written with the checkout's own code (the bundled
    embedding model)."""
    script = (
        "from lobug.backends.embedded import LocalEmbedder\n"
        "from lobug.store.sqlite.engine import SQLiteStore\n"
        f"store = SQLiteStore({str(db)!r})\n"
        "store.bind_embedding(LocalEmbedder.model, 384)\n"
        "for i in range(20):\n"
        "    store.append_message('lobug', 'kitchen', 'user', f'I keep bees, hive {i}')\n"
        "store.close()\n"
    )
    run_python(["-c", script], server, db)


def run_python(args: list[str], server: Path, db: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(server), "LOBUG_DB_PATH": str(db)}
    env["LOBUG_LOG_LEVEL"] = "warning"
    started = time.perf_counter()
    subprocess.run([sys.executable, *args], env=env, check=True, capture_output=True)
    return time.perf_counter() - started


def medians(trees: dict[str, Path], runs: int) -> dict[str, dict[str, float]]:
    """Each tree on a database of its own; the trees' runs taken in turn, so that a machine
    busy for a while slows them alike."""
    with tempfile.TemporaryDirectory() as folder:
        dbs = {name: Path(folder) / f"{name}.db" for name in trees}
        for name, server in trees.items():
            seed(dbs[name], server)
            run_python(["-m", "lobug", "facts", "add", "The user keeps bees"], server, dbs[name])
        times: dict[str, dict[str, list[float]]] = {name: {} for name in trees}
        for command in COMMANDS:
            for _ in range(runs):
                for name, server in trees.items():
                    took = run_python(["-m", "lobug", *command], server, dbs[name])
                    times[name].setdefault(" ".join(command), []).append(took)
    return {
        name: {key: statistics.median(found) for key, found in by_command.items()}
        for name, by_command in times.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="another checkout's server/ folder")
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    trees = {"this": REPO / "server"}
    if args.baseline:
        trees = {"baseline": args.baseline.resolve(), **trees}
    found = medians(trees, args.runs)
    print(f"median wall time of {args.runs} runs, seconds")
    print(f"{'command':32}" + "".join(f"{name:>10}" for name in found))
    for command in COMMANDS:
        key = " ".join(command)
        print(f"{key:32}" + "".join(f"{found[name][key]:10.3f}" for name in found))


if __name__ == "__main__":
    main()
