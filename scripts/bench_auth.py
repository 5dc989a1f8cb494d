"""Token check timing: is a near-miss token answered any slower than a far miss?

Serves the real token gate (`lobug.api.auth.TokenGate`) with uvicorn on loopback, in front of a
trivial app, and times many requests of each kind over keep-alive HTTP, interleaved so drift
hits all kinds alike. The check compares against every device and admin token with
`hmac.compare_digest`, so the medians should differ by noise only.

    .venv/bin/python scripts/bench_auth.py
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import httpx
from starlette.responses import PlainTextResponse
from starlette.types import Receive, Scope, Send

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from tests.live import LiveServer

from lobug.api.auth import TokenGate

TOKEN = "k3V9q2LmZx81RfTa0pWs"
ADMIN_TOKEN = "Qa7Lm2Zx81RfTa0pWsk3"
VALID = ("valid (200)", "valid admin (200)")
KINDS = {
    "no token": {},
    "wrong length": {"Authorization": "Bearer short"},
    "differs at first char": {"Authorization": "Bearer X" + TOKEN[1:]},
    "differs at last char": {"Authorization": "Bearer " + TOKEN[:-1] + "X"},
    "valid (200)": {"Authorization": f"Bearer {TOKEN}"},
    "valid admin (200)": {"Authorization": f"Bearer {ADMIN_TOKEN}"},
}


async def ok(scope: Scope, receive: Receive, send: Send) -> None:
    await PlainTextResponse("ok")(scope, receive, send)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2000)
    args = parser.parse_args()
    gate = TokenGate(
        ok,
        device_tokens=(TOKEN, "another-configured-token"),
        admin_tokens=(ADMIN_TOKEN,),
        open_role="device",
    )
    server = LiveServer(gate)
    times: dict[str, list[float]] = {kind: [] for kind in KINDS}
    try:
        with httpx.Client(base_url=server.url) as client:
            for _ in range(args.rounds):
                for kind, headers in KINDS.items():
                    started = time.perf_counter()
                    client.get("/chat/text", headers=headers)
                    times[kind].append((time.perf_counter() - started) * 1e6)
    finally:
        server.stop()
    print(f"Token check over HTTP, {args.rounds} requests each (microseconds)")
    print(f"{'request':>24} {'median':>8} {'p95':>8}")
    for kind, values in times.items():
        values.sort()
        p95 = values[int(0.95 * len(values))]
        print(f"{kind:>24} {statistics.median(values):8.0f} {p95:8.0f}")
    misses = [statistics.median(times[k]) for k in KINDS if k not in VALID]
    print(f"  spread of the four refusals' medians: {max(misses) - min(misses):.0f} us\n")


if __name__ == "__main__":
    main()
