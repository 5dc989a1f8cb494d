"""A .gguf model written again in another quantization (`requantize`): on small files made
here with gguf-py, and a bundled model run in another form than its file's, written once
into the models folder (`bundled_models.model_file`)."""

from __future__ import annotations

import dataclasses
import hashlib
import re
from pathlib import Path

import numpy as np
import pytest
from gguf import GGMLQuantizationType, GGUFReader, GGUFWriter, LlamaFileType
from gguf.quants import dequantize, quantize

from lobug.backends import requantize as requantizing
from lobug.backends.base import BackendUnavailable
from lobug.backends.bundled_models import (
    DEFAULT_CHAT_MODEL,
    BundledModel,
    Chunk,
    RunForm,
    bundled_model,
    bundled_model_at,
    joined_file,
    marker_of,
    model_file,
)
from lobug.backends.requantize import requantize

Q4_1, Q8_0 = GGMLQuantizationType.Q4_1, GGMLQuantizationType.Q8_0


def small_model(path: Path, seed: int = 7) -> dict[str, np.ndarray]:
    """A .gguf with a Q4_1 weight, an F32 norm and a few metadata fields, like a model's;
    the weights as written (dequantized), by name."""
    rng = np.random.default_rng(seed)
    writer = GGUFWriter(path, "llama")
    writer.add_name("tiny test model")
    writer.add_file_type(LlamaFileType.MOSTLY_Q4_1)
    writer.add_uint32("llama.block_count", 1)
    writer.add_token_list(["<s>", "hello", "world"])
    weight = quantize(rng.standard_normal((8, 64)).astype(np.float32), Q4_1)
    norm = rng.standard_normal(64).astype(np.float32)
    writer.add_tensor("blk.0.attn_q.weight", weight, raw_shape=weight.shape, raw_dtype=Q4_1)
    writer.add_tensor("blk.0.attn_norm.weight", norm)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return {"blk.0.attn_q.weight": dequantize(weight, Q4_1), "blk.0.attn_norm.weight": norm}


def fields(reader: GGUFReader) -> dict[str, object]:
    return {name: f.contents() for name, f in reader.fields.items() if not name.startswith("GGUF.")}


def test_the_weights_are_the_same_to_within_q8_0s_step_and_the_rest_is_kept(
    tmp_path: Path,
) -> None:
    written = small_model(tmp_path / "tiny.Q4_1.gguf")

    requantize(tmp_path / "tiny.Q4_1.gguf", tmp_path / "tiny.Q8_0.gguf", "Q8_0")

    source, copy = GGUFReader(tmp_path / "tiny.Q4_1.gguf"), GGUFReader(tmp_path / "tiny.Q8_0.gguf")
    assert [t.name for t in copy.tensors] == [t.name for t in source.tensors]
    weight, norm = copy.tensors
    assert weight.tensor_type == Q8_0 and norm.tensor_type == GGMLQuantizationType.F32
    assert bytes(norm.data) == written["blk.0.attn_norm.weight"].tobytes()  # copied as is
    original = written["blk.0.attn_q.weight"]
    step = np.abs(original.reshape(-1, 32)).max(axis=1) / 127  # Q8_0: 32 weights share a scale
    error = np.abs(dequantize(weight.data, Q8_0) - original).reshape(-1, 32).max(axis=1)
    # half a step, and the scale's float16 rounding (2**-11 of it) times up to 127 steps
    assert (error <= step * (0.5 + 127 * 2**-11)).all()
    assert error.max() > 0  # it is another encoding, not a copy of the bytes
    assert fields(copy) == {**fields(source), "general.file_type": LlamaFileType.MOSTLY_Q8_0}


def test_rows_the_wanted_blocks_do_not_divide_are_copied_byte_for_byte(tmp_path: Path) -> None:
    small_model(tmp_path / "tiny.gguf")  # rows of 64 weights; Q4_K's blocks hold 256

    requantize(tmp_path / "tiny.gguf", tmp_path / "same.gguf", "Q4_K")

    source, copy = GGUFReader(tmp_path / "tiny.gguf"), GGUFReader(tmp_path / "same.gguf")
    assert [(t.tensor_type, bytes(t.data)) for t in copy.tensors] == [
        (t.tensor_type, bytes(t.data)) for t in source.tensors
    ]


def test_a_file_that_is_no_model_fails_and_leaves_nothing_behind(tmp_path: Path) -> None:
    (tmp_path / "not.gguf").write_bytes(b"GGUF but nothing more")
    (tmp_path / "models").mkdir()

    with pytest.raises(ValueError, match="version"):
        requantize(tmp_path / "not.gguf", tmp_path / "models" / "out.gguf", "Q8_0")

    assert list((tmp_path / "models").iterdir()) == []


@pytest.fixture
def run_as_q8(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> BundledModel:
    """A bundled model whose Q4_1 file ships whole in a fake installed package, run as Q8_0."""
    package = tmp_path / "site" / "lobug_test_whole_model"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("raise ImportError('never run')\n")
    small_model(package / "tiny.Q4_1.gguf")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    data = (package / "tiny.Q4_1.gguf").read_bytes()
    return BundledModel(
        name="tiny",
        title="Tiny Q4_1",
        file_name="tiny.Q4_1.gguf",
        sha256=hashlib.sha256(data).hexdigest(),
        size=len(data),
        chunks=(Chunk("lobug-test-whole-model", "tiny.Q4_1.gguf"),),
        licence="Apache-2.0",
        source="here",
        install="make tiny",
        run_as=RunForm("Q8_0", "tiny.Q8_0.gguf"),
    )


def test_a_model_run_in_another_form_is_written_once_into_the_models_folder(
    run_as_q8: BundledModel, tmp_path: Path
) -> None:
    models = tmp_path / "models"
    assert joined_file(run_as_q8, models) is None

    path = model_file(run_as_q8, models)
    first = path.stat()
    again = model_file(run_as_q8, models)

    assert path == again == models / "tiny.Q8_0.gguf" == joined_file(run_as_q8, models)
    assert GGUFReader(path).tensors[0].tensor_type == Q8_0
    assert (again.stat().st_ino, again.stat().st_mtime_ns) == (first.st_ino, first.st_mtime_ns)
    assert sorted(p.name for p in models.iterdir()) == ["tiny.Q8_0.gguf", "tiny.Q8_0.gguf.verified"]


def test_a_damaged_package_file_is_a_clear_error_naming_what_to_reinstall(
    run_as_q8: BundledModel, tmp_path: Path
) -> None:
    (tmp_path / "site" / "lobug_test_whole_model" / "tiny.Q4_1.gguf").write_bytes(b"GGUF?")

    with pytest.raises(BackendUnavailable, match=re.escape("lobug-test-whole-model (`make tiny`)")):
        model_file(run_as_q8, tmp_path / "models")

    assert not list((tmp_path / "models").glob("*"))


def test_a_copy_changed_or_written_by_another_version_is_written_again(
    run_as_q8: BundledModel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    models = tmp_path / "models"
    path = model_file(run_as_q8, models)
    good = path.read_bytes()
    path.write_bytes(b"X" * len(good))  # the marker no longer holds
    assert joined_file(run_as_q8, models) is None
    assert model_file(run_as_q8, models).read_bytes() == good

    monkeypatch.setattr(requantizing, "VERSION", requantizing.VERSION + 1)
    assert joined_file(run_as_q8, models) is None
    written_before = marker_of(path).read_text()
    assert model_file(run_as_q8, models).read_bytes() == good
    assert marker_of(path).read_text() != written_before


def test_the_default_runs_as_q8_0_written_from_the_package_file() -> None:
    tiny = bundled_model(DEFAULT_CHAT_MODEL)
    assert tiny.run_as == RunForm("Q8_0", "SmolLM2-135M-Instruct.Q8_0.gguf")
    assert bundled_model_at(Path("/anywhere") / tiny.run_as.file_name) is tiny
    plain = dataclasses.replace(tiny, run_as=None)
    assert model_file(plain).name == tiny.file_name  # the package's own file, as published

    path = model_file(tiny)  # `make` wrote it (`lobug models prepare`)

    reader = GGUFReader(path)
    assert fields(reader)["general.file_type"] == LlamaFileType.MOSTLY_Q8_0
    weights = [t for t in reader.tensors if t.name.endswith(".weight") and len(t.shape) == 2]
    assert weights and {t.tensor_type for t in weights} == {Q8_0}
