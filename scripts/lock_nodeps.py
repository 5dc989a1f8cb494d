"""Write the hash-pinned lock of requirements-nodeps.txt (`make lock` runs it).

pip-compile cannot lock a requirement without resolving its dependencies, and the packages in
requirements-nodeps.txt are installed without theirs (their declared dependencies would compile
llama.cpp). So each pinned line is downloaded alone and locked with the sha256 of the file pip
chose, for `pip install --no-deps --require-hashes -r requirements-nodeps.lock`.

Usage: python scripts/lock_nodeps.py requirements-nodeps.txt requirements-nodeps.lock
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tempfile
from pathlib import Path

HEADER = (
    "# Written by `make lock` (scripts/lock_nodeps.py) from requirements-nodeps.txt: do not edit.\n"
    "# Installed with `pip install --no-deps --require-hashes -r requirements-nodeps.lock`.\n"
)


def pinned_lines(path: Path) -> list[str]:
    """The `name==version` lines of a requirements file, comments and blanks left out."""
    lines = (line.split("#", 1)[0].strip() for line in path.read_text().splitlines())
    pins = [line for line in lines if line]
    for pin in pins:
        if "==" not in pin:
            raise SystemExit(f"{path}: {pin!r} is not pinned with ==")
    return pins


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def locked_line(pin: str) -> str:
    """`pin --hash=sha256:...` for the one file pip downloads for it on this machine."""
    with tempfile.TemporaryDirectory() as folder:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "-d", folder, pin],
            check=True,
        )
        (downloaded,) = Path(folder).iterdir()
        return f"{pin} \\\n    --hash=sha256:{sha256_of(downloaded)}\n"


def main(source: str, target: str) -> None:
    lines = [locked_line(pin) for pin in pinned_lines(Path(source))]
    Path(target).write_text(HEADER + "".join(lines))


if __name__ == "__main__":
    main(*sys.argv[1:3])
