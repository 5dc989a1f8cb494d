"""Soak: a bounded run of mixed traffic against a real server on loopback.

Simulated devices talk (`/chat/text`, now and then `/chat/audio` with a piper-spoken question),
report sensors every few seconds and send the odd malformed request; memory clients store,
search and ask for context through `/memory`, update a block, and use the OpenAI-compatible
proxy. Prints requests, outcomes by class, p50/p95 latency per endpoint, the server's RSS and
the database size at the start and end. Fails (exit 1) on any 5xx or connection error, on a
malformed request that is not refused with a 4xx, or when RSS in the second half climbs more
than 64 MiB above the first half's peak (model buffers and llama.cpp's prompt cache,
`LOBUG_LLM_PROMPT_CACHE_MIB`, fill up early and then stay).

    make soak                 # 10 minutes
    make soak MINUTES=2
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from tests.e2e.server import run_with_scratch_files, start_server

from lobug.audio import encode_wav
from lobug.backends.speech import PiperTTS

QUESTION = "What is the weather like on the moon today?"
MEMORY_AGENT = "soak"
RSS_GROWTH_LIMIT_MIB = 64.0
TOPICS = "tea hiking jazz chess sailing pottery astronomy gardening".split()


@dataclass
class Stats:
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    outcomes: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def call(
        self,
        client: httpx.Client,
        name: str,
        method: str,
        path: str,
        *,
        expect: Callable[[int], bool] = lambda status: status < 300,
        **kwargs: object,
    ) -> httpx.Response | None:
        started = time.perf_counter()
        try:
            response = client.request(method, path, **kwargs)  # type: ignore[arg-type]
        except httpx.HTTPError as exc:
            self.note(name, f"{type(exc).__name__}", None, failed=True)
            return None
        elapsed = (time.perf_counter() - started) * 1000
        status = response.status_code
        self.note(name, f"{status // 100}xx", elapsed, failed=status >= 500 or not expect(status))
        return response

    def note(self, name: str, outcome: str, elapsed: float | None, *, failed: bool) -> None:
        with self.lock:
            self.outcomes[outcome] += 1
            if elapsed is not None:
                self.latencies[name].append(elapsed)
            if failed:
                self.failures.append(f"{name}: {outcome}")


def device(name: str, url: str, wav: bytes, stats: Stats, stop: threading.Event, seed: int) -> None:
    rng = random.Random(seed)
    headers = {"X-Device-Id": name}
    with httpx.Client(base_url=url, timeout=120, headers=headers) as client:
        turn = 0
        while not stop.is_set():
            turn += 1
            stats.call(client, "sensors", "POST", "/context/sensors", json=sensor_reading(rng))
            roll = rng.random()
            if roll < 0.15:
                files = {"audio": ("recording.wav", wav, "audio/wav")}
                stats.call(client, "chat/audio", "POST", "/chat/audio", files=files)
            elif roll < 0.25:
                stats.call(
                    client,
                    "malformed",
                    "POST",
                    "/chat/text",
                    content=rng.choice([b"{not json", b'{"text": 5}', b'{"text": ""}', b"[]"]),
                    expect=lambda status: 400 <= status < 500,
                )
            else:
                text = f"{name} turn {turn}: I have been into {rng.choice(TOPICS)} lately."
                stats.call(client, "chat/text", "POST", "/chat/text", json={"text": text})
            stop.wait(rng.uniform(4.0, 10.0))


def sensor_reading(rng: random.Random) -> dict[str, object]:
    return {
        "orientation": rng.choice(["face_up", "upright", "face_down"]),
        "is_moving": rng.random() < 0.3,
        "is_shaking": False,
        "tap_detected": rng.random() < 0.1,
        "accel_x": rng.uniform(-1, 1),
        "accel_y": rng.uniform(-1, 1),
        "accel_z": 1.0,
    }


def memory_program(url: str, stats: Stats, stop: threading.Event, seed: int) -> None:
    rng = random.Random(seed)
    with httpx.Client(base_url=url, timeout=120) as client:
        stats.call(client, "memory/agents", "POST", "/memory/agents", json={"name": MEMORY_AGENT})
        block = {"agent_name": MEMORY_AGENT, "label": f"notes{seed}", "value": "start"}
        stats.call(
            client,
            "memory/blocks",
            "POST",
            "/memory/memory-blocks",
            json=block,
            expect=lambda status: status in (200, 409),
        )
        n = 0
        while not stop.is_set():
            n += 1
            topic = rng.choice(TOPICS)
            content = f"program {seed} note {n}: the user mentioned {topic}"
            message = {"agent_name": MEMORY_AGENT, "role": "user", "content": content}
            stats.call(client, "memory/messages", "POST", "/memory/messages", json=message)
            query = {"agent_name": MEMORY_AGENT, "query": f"what about {topic}?"}
            stats.call(client, "memory/search", "POST", "/memory/messages/search", json=query)
            if n % 5 == 0:
                stats.call(
                    client,
                    "memory/context",
                    "POST",
                    f"/memory/context/{MEMORY_AGENT}",
                    json={"query": topic},
                )
                stats.call(
                    client,
                    "memory/blocks",
                    "PUT",
                    f"/memory/memory-blocks/{MEMORY_AGENT}/notes{seed}",
                    json={"value": f"last topic: {topic}"},
                )
            if n % 20 == 0:
                chat = {"model": "lobug", "messages": [{"role": "user", "content": f"{topic}?"}]}
                stats.call(client, "v1/chat", "POST", "/v1/chat/completions", json=chat)
            stop.wait(rng.uniform(0.2, 0.6))


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def db_mib(db_path: Path) -> float:
    files = [db_path, db_path.with_name(db_path.name + "-wal")]
    return sum(f.stat().st_size for f in files if f.exists()) / 2**20


def spoken_question() -> bytes:
    tts = PiperTTS()
    pcm = np.concatenate(list(tts.synthesize(QUESTION)))
    return encode_wav(pcm, tts.sample_rate)


def run(db_path: Path, log_path: Path, *, seconds: float, devices: int, programs: int) -> bool:
    wav = spoken_question()
    server = start_server(db_path, log_path)
    stats, stop = Stats(), threading.Event()
    try:
        wait_for_speech(server.url)
        warm_up(server.url, wav)
        pid = server.process.pid
        rss_start, db_start = rss_mib(pid), db_mib(db_path)
        workers = [
            threading.Thread(target=device, args=(f"soak{i}", server.url, wav, stats, stop, i))
            for i in range(devices)
        ] + [
            threading.Thread(target=memory_program, args=(server.url, stats, stop, 100 + i))
            for i in range(programs)
        ]
        for worker in workers:
            worker.start()
        started = time.monotonic()
        samples: list[tuple[float, float]] = []
        while (elapsed := time.monotonic() - started) < seconds:
            samples.append((elapsed, rss_mib(pid)))
            time.sleep(min(10.0, max(0.5, seconds / 20)))
        stop.set()
        for worker in workers:
            worker.join(timeout=180)
        samples.append((time.monotonic() - started, rss_mib(pid)))
        rss_end, db_end = samples[-1][1], db_mib(db_path)
    finally:
        stop.set()
        server.stop()
    return report(stats, seconds, (rss_start, rss_end), (db_start, db_end), samples)


def warm_up(url: str, wav: bytes) -> None:
    """One request of each heavy kind, so model buffers exist before RSS is first measured."""
    with httpx.Client(base_url=url, timeout=300) as client:
        client.post("/chat/audio", files={"audio": ("recording.wav", wav, "audio/wav")})
        client.post("/chat/text", json={"text": "Tell me a long story about the sea, please."})
        client.post("/memory/agents", json={"name": MEMORY_AGENT})
        client.post(
            "/memory/messages",
            json={"agent_name": MEMORY_AGENT, "role": "user", "content": "warming up " * 50},
        )
        while client.get("/health").json()["memory"]["pending_learning"]:
            time.sleep(0.5)


def wait_for_speech(url: str, timeout_s: float = 180) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if httpx.get(f"{url}/health", timeout=5).json().get("speech", {}).get("ready"):
            return
        time.sleep(0.5)
    raise RuntimeError("speech models did not load")


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def report(
    stats: Stats,
    seconds: float,
    rss: tuple[float, float],
    db: tuple[float, float],
    samples: list[tuple[float, float]],
) -> bool:
    total = sum(stats.outcomes.values())
    print(f"\nSoak: {seconds:.0f} s, {total} requests ({total / seconds:.1f}/s)")
    print(f"outcomes: {dict(sorted(stats.outcomes.items()))}")
    print(f"{'endpoint':>16} {'n':>6} {'p50 ms':>9} {'p95 ms':>9}")
    for name, values in sorted(stats.latencies.items()):
        print(
            f"{name:>16} {len(values):6d} {statistics.median(values):9.1f} "
            f"{percentile(values, 0.95):9.1f}"
        )
    first = [value for at, value in samples if at < seconds / 2]
    second = [value for at, value in samples if at >= seconds / 2]
    growth = max(0.0, max(second) - max(first)) if first and second else 0.0
    print(f"server RSS: {rss[0]:.0f} MiB at start (after warm-up), {rss[1]:.0f} MiB at end")
    print("  samples (s: MiB): " + ", ".join(f"{at:.0f}: {value:.0f}" for at, value in samples))
    print(
        f"  second half above the first half's peak: {growth:.1f} MiB "
        f"(limit {RSS_GROWTH_LIMIT_MIB:.0f})"
    )
    print(f"database: {db[0]:.2f} MiB at start, {db[1]:.2f} MiB at end (with WAL)")
    failures = Counter(stats.failures)
    print(f"failures: {dict(failures) or 'none'}")
    ok = not failures and growth <= RSS_GROWTH_LIMIT_MIB and total > 0
    print("PASS" if ok else "FAIL")
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--devices", type=int, default=4)
    parser.add_argument("--programs", type=int, default=2)
    args = parser.parse_args()
    ok = run_with_scratch_files(
        lambda db_path, log_path: run(
            db_path,
            log_path,
            seconds=args.minutes * 60,
            devices=args.devices,
            programs=args.programs,
        )
    )
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
