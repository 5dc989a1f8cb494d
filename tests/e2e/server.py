"""Start the real server as a separate process, with the real bundled models."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

START_TIMEOUT_S = 180


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class ServerProcess:
    process: subprocess.Popen[bytes]
    url: str
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        """Stop like Ctrl-C does, and wait for a clean exit."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_server(
    db_path: Path, log_path: Path, extra_env: dict[str, str] | None = None
) -> ServerProcess:
    port = free_port()
    env = {
        **os.environ,
        "LOBUG_DB_PATH": str(db_path),
        "LOBUG_PORT": str(port),
        "LOBUG_LLM_BACKEND": "auto",
        # auto must fall back to the embedded model: point it at a port nobody listens on.
        "OLLAMA_HOST": f"http://127.0.0.1:{free_port()}",
        "LOBUG_LLM_TEMPERATURE": "0",
        "LOBUG_DREAM_AT": "off",  # no nightly dream in the middle of a test
        **(extra_env or {}),
    }
    log = log_path.open("ab")
    process = subprocess.Popen(
        [sys.executable, "-m", "lobug", "serve"], env=env, stdout=log, stderr=subprocess.STDOUT
    )
    log.close()
    server = ServerProcess(process, f"http://127.0.0.1:{port}", log_path)
    wait_until_healthy(server)
    return server


def wait_until_healthy(server: ServerProcess) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"server exited early:\n{server.log()}")
        try:
            if httpx.get(f"{server.url}/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    server.stop()
    raise RuntimeError(f"server did not become healthy:\n{server.log()}")


def wait_for_learning(client: httpx.Client, timeout_s: float = 120) -> dict[str, int]:
    """Poll /health until background memory work is done; return the memory counts."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        counts: dict[str, int] = client.get("/health").json()["memory"]
        if counts["pending_learning"] == 0:
            return counts
        time.sleep(0.3)
    raise AssertionError("background learning did not finish")


def run_with_scratch_files(run: Callable[[Path, Path], bool]) -> bool:
    """`run(db_path, log_path)` in a temporary folder; the server log's tail is printed when
    it returns False."""
    with tempfile.TemporaryDirectory() as folder:
        db_path, log_path = Path(folder) / "memory.db", Path(folder) / "server.log"
        ok = run(db_path, log_path)
        if not ok and log_path.exists():
            print(log_path.read_text(errors="replace")[-4000:])
        return ok
