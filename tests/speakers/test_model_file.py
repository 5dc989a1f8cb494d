"""The speaker model read out of the moonshine-voice wheel (`lobug.speakers.model_file`)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from lobug.speakers import model_file
from lobug.speakers.embedder import WeSpeakerEmbedder
from lobug.speakers.model_file import ModelMissing, model_bytes


@pytest.mark.models
def test_the_model_is_found_without_importing_its_package_and_checked() -> None:
    import sys

    blob = model_bytes()
    assert hashlib.sha256(blob).hexdigest() == model_file.SHA256
    assert blob[4:8] == b"ORTM"  # an ONNX Runtime format model
    assert "moonshine_voice" not in sys.modules


def test_a_file_that_is_not_the_library_is_refused(tmp_path: Path) -> None:
    fake = tmp_path / "libmoonshine.so"
    fake.write_bytes(b"not an ELF library")
    with pytest.raises(ModelMissing, match="not a 64-bit ELF"):
        model_bytes(fake)


@pytest.mark.models
def test_an_embedding_is_a_unit_vector_of_256_and_too_little_audio_is_refused() -> None:
    embedder = WeSpeakerEmbedder(threads=1)
    rng = np.random.default_rng(0)
    embedding = embedder.embed((rng.standard_normal(24_000) * 0.1).astype(np.float32))
    assert embedding.shape == (256,) and embedding.dtype == np.float32
    assert np.isclose(np.linalg.norm(embedding), 1.0, atol=1e-5)
    with pytest.raises(ValueError, match="too little audio"):
        embedder.embed(np.zeros(2_000, dtype=np.float32))
