"""A person first (issue 28): `/chat/text` reply times through a real server process on the
default embedded model, while nothing else runs, while background memory work runs, and with
several devices talking at once, printed side by side in one run.

Phases, on one database with ~600 facts (POST /memory/facts), each with fresh devices
talking --turns turns (so that their histories grow alike), each begun once the memory work
before it is done:
  idle        one device sends a turn, then pauses 2 s (its own memory work runs between turns);
              this is also the "one device" of the devices comparison
  background  another device, while a topic rebuild (POST /memory/agents/{agent}/topics/rebuild)
              and a dream (POST /memory/dream/{agent}) run over those facts (started with its
              first turn; the table says whether they were still running at its last)
  4 devices   four devices at once, each sending a turn, then pausing 2 s
`retried`: turns whose reply the reply guard asked for twice (two model calls: the slow ones).
Goals: p95 in the background phase at most 2x idle p95; p95 with four devices at most 3x one
device's.

    .venv/bin/python scripts/bench_person_first.py
    .venv/bin/python scripts/bench_person_first.py --server-code /work/before   # a baseline:
        the server process runs that checkout's server/ folder (this script stays the same)
    .venv/bin/python scripts/bench_person_first.py --threads 1   # cores busy with other work
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

from tests.e2e.server import ServerProcess, start_server, wait_for_learning  # noqa: E402

AGENT = "lobug"
TIMEOUT_S = 1800
# What devices say: statements to learn from and questions, each turn a different one.
TURNS = [
    "I went to the farmers market this morning and bought apples.",
    "What should I cook tonight for dinner with two friends?",
    "My neighbour Clara is learning to play the cello.",
    "Can you suggest a short walk near a river for the weekend?",
    "I started reading a novel about a lighthouse keeper.",
    "How long should I boil an egg for a soft yolk?",
    "Tomorrow I have a dentist appointment at nine.",
    "What is a good way to remember people's birthdays?",
    "My brother Tom moved to a flat near the harbour.",
    "Tell me something cheerful about autumn.",
    "I painted the kitchen wall a pale green colour.",
    "Which houseplants are easy to keep alive?",
]
FIRST = "Alex Clara Sam Noor Jonas Mia Theo Lina Omar Yuki Ana Ben Carla David Elif".split()
FAMILY = "Berger Novak Falko Krusen Martin Sandez Olsson Petrov Rosini Vidal".split()
LIKES = (
    "green tea, jazz records, Italian cooking, chess, hiking in the Alps, old maps, sourdough "
    "bread, watercolour painting, board games, gardening, bird watching, vintage cameras"
).split(", ")
PLACES = ("Berlin", "Porto", "Lyon", "Kyoto", "Oslo", "Vienna", "Seville", "Krakow")
JOBS = ("a nurse", "a teacher", "an engineer", "a baker", "a pilot", "a lawyer", "a chef")


def fact(i: int) -> str:
    """Fact `i` about one of 150 friends: what they like, where they live, what they do."""
    person = f"{FIRST[i % len(FIRST)]} {FAMILY[(i // len(FIRST)) % len(FAMILY)]}"
    shape = i % 3
    if shape == 0:
        return f"The user's friend {person} likes {LIKES[(i // 3) % len(LIKES)]}"
    if shape == 1:
        return f"The user's friend {person} lives in {PLACES[(i // 3) % len(PLACES)]}"
    return f"The user's friend {person} works as {JOBS[(i // 3) % len(JOBS)]}"


@dataclass
class Phase:
    name: str
    seconds: list[float] = field(default_factory=list)
    modelled: list[float] = field(default_factory=list)  # those of turns the model answered
    retried: int = 0  # turns whose reply the reply guard asked for again (two model calls)
    lock: threading.Lock = field(default_factory=threading.Lock)
    note: str = ""

    def add(self, seconds: float, retried: bool, modelled: bool) -> None:
        with self.lock:
            self.seconds.append(seconds)
            self.retried += retried
            if modelled:
                self.modelled.append(seconds)

    def p50(self) -> float:
        return statistics.median(self.seconds)

    def p95(self) -> float:
        return p95(self.seconds)


def p95(seconds: list[float]) -> float:
    ordered = sorted(seconds)
    return ordered[max(0, round(0.95 * len(ordered)) - 1)] if ordered else float("nan")


def say(http: httpx.Client, device: str, text: str) -> tuple[float, bool, bool]:
    """A turn's seconds, whether the reply guard asked the model twice, and whether the
    model answered at all (a statement said back or a question memory answers: not)."""
    started = time.perf_counter()
    answered = http.post("/chat/text", json={"text": text}, headers={"X-Device-Id": device})
    answered.raise_for_status()
    timing = answered.headers.get("server-timing", "")
    return time.perf_counter() - started, "llm_retry" in timing, "llm;" in timing


def talk(url: str, devices: list[str], phase: Phase, turns: int, pause: float) -> None:
    """`devices` at once, each a fresh conversation: a turn, a pause, `turns` times."""

    def one(device: str) -> None:
        with httpx.Client(base_url=url, timeout=TIMEOUT_S) as http:
            for turn in range(turns):
                text = TURNS[(turn + sum(map(ord, device))) % len(TURNS)]
                phase.add(*say(http, device, f"{text} ({device}, turn {turn + 1})"))
                time.sleep(pause)

    talkers = [threading.Thread(target=one, args=(device,)) for device in devices]
    for talker in talkers:
        talker.start()
    for talker in talkers:
        talker.join()


def seed(http: httpx.Client, facts: int) -> float:
    started = time.perf_counter()
    http.post("/memory/agents", json={"name": AGENT}).raise_for_status()
    for i in range(facts):
        http.post(f"/memory/facts/{AGENT}", json={"content": fact(i)}).raise_for_status()
    return time.perf_counter() - started


def background_work(url: str, finished: dict[str, float]) -> list[threading.Thread]:
    """A topic rebuild and a dream, each in its own thread; `finished` gets their seconds."""

    def post(name: str, path: str) -> None:
        started = time.perf_counter()
        with httpx.Client(base_url=url, timeout=TIMEOUT_S) as http:
            http.post(path).raise_for_status()
        finished[name] = time.perf_counter() - started

    jobs = {
        "topic rebuild": f"/memory/agents/{AGENT}/topics/rebuild",
        "dream": f"/memory/dream/{AGENT}?dry_run=false",
    }
    threads = [threading.Thread(target=post, args=job, daemon=True) for job in jobs.items()]
    for thread in threads:
        thread.start()
    return threads


def run(server: ServerProcess, args: argparse.Namespace) -> list[Phase]:
    """The phases, each with fresh devices talking `args.turns` turns (so their histories
    grow alike), each started once the memory work before it is done."""
    with httpx.Client(base_url=server.url, timeout=TIMEOUT_S) as http:
        print(f"seeded {args.facts} facts in {seed(http, args.facts):.0f} s", flush=True)
        say(http, "warm-up", "Hello there.")
        wait_for_learning(http, TIMEOUT_S)
        idle = Phase("idle (one device)")
        talk(server.url, ["alone"], idle, args.turns, args.pause)
        wait_for_learning(http, TIMEOUT_S)
        busy = Phase("topic rebuild + dream")
        finished: dict[str, float] = {}
        jobs = background_work(server.url, finished)
        talk(server.url, ["during-work"], busy, args.turns, args.pause)
        running = [name for name in ("topic rebuild", "dream") if name not in finished]
        for job in jobs:
            job.join()
        busy.note = ", ".join(f"{name} took {s:.0f} s" for name, s in finished.items())
        busy.note += f"; at the last turn still running: {', '.join(running) or 'none'}"
        wait_for_learning(http, TIMEOUT_S)
        four = Phase("4 devices at once")
        talk(server.url, [f"four-{n}" for n in range(1, 5)], four, args.turns, args.pause)
        wait_for_learning(http, TIMEOUT_S)
    return [idle, busy, four]


def report(label: str, phases: list[Phase]) -> None:
    idle, busy, four = phases
    print(f"\n/chat/text reply time, {label} (seconds)")
    print(
        f"{'phase':<24} {'turns':>5} {'p50':>6} {'p95':>6} {'max':>6} {'retried':>7} "
        f"{'model turns':>11} {'their p95':>9}"
    )
    for phase in phases:
        print(
            f"{phase.name:<24} {len(phase.seconds):5d} {phase.p50():6.2f} {phase.p95():6.2f} "
            f"{max(phase.seconds):6.2f} {phase.retried:7d} {len(phase.modelled):11d} "
            f"{p95(phase.modelled):9.2f}  {phase.note}"
        )
    print(
        f"background p95 / idle p95: {busy.p95() / idle.p95():.1f}x (goal <= 2); "
        f"4 devices p95 / one device p95: {four.p95() / idle.p95():.1f}x (goal <= 3)",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--facts", type=int, default=600)
    parser.add_argument("--turns", type=int, default=16, help="turns of one device per phase")
    parser.add_argument("--pause", type=float, default=2.0, help="seconds between a device's turns")
    parser.add_argument("--server-code", type=Path, help="run another checkout's server/ folder")
    parser.add_argument(
        "--threads",
        type=int,
        help="LOBUG_LLM_THREADS for the server (1 where other programs keep the cores busy: "
        "llama.cpp's threads wait for each other, and a reply can take minutes)",
    )
    parser.add_argument("--keep", type=Path, help="a folder to keep the database and log in")
    args = parser.parse_args()
    env = {"LOBUG_SPEECH": "0"}
    label = "this checkout"
    if args.threads:
        env["LOBUG_LLM_THREADS"] = str(args.threads)
        label += f", {args.threads} model thread(s)"
    if args.server_code:
        env["PYTHONPATH"] = str(args.server_code.resolve() / "server")
        label = label.replace("this checkout", f"server code of {args.server_code}")
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        server = start_server(folder / "memory.db", folder / "server.log", env)
        try:
            phases = run(server, args)
        finally:
            server.stop()
    report(label, phases)


if __name__ == "__main__":
    main()
