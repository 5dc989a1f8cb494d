"""A .gguf model's weights written again in another quantization, with gguf-py (llama.cpp's
own Python library for the format; imported only here, only while a file is written).

Why: llama.cpp reads a prompt with matrix-matrix kernels that exist for some quantizations
only (Q8_0 and Q4_0 on an AVX2 CPU; Q4_0 is repacked at load). SmolLM2-135M ships as Q4_1,
which has none: its Q8_0 copy reads prompts about twice as fast (docs/benchmarks.md).
Everything but the weights' encoding stays: the metadata, the tokenizer, the tensors'
names, shapes and order; tensors stored as floats (the norms) are copied as they are.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

# Raise when what `requantize` writes for the same source changes (a marker beside each
# written file records it, and a file written by another version is written again).
VERSION = 1


def requantize(source: Path, target: Path, form: str) -> None:
    """Write `source`'s model to `target` with its quantized weights in `form` ("Q4_0",
    "Q8_0"): into a temporary file beside `target`, renamed into place once complete."""
    import numpy as np
    from gguf import GGMLQuantizationType, GGUFReader, GGUFWriter, LlamaFileType
    from gguf.quants import dequantize, quantize

    wanted = GGMLQuantizationType[form]
    reader = GGUFReader(source)
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    os.close(handle)
    try:
        architecture = reader.fields["general.architecture"].contents()
        writer = GGUFWriter(temporary, architecture)
        for name, field in reader.fields.items():
            if name.startswith("GGUF.") or name == "general.architecture":
                continue  # the header's own fields, which the writer writes itself
            if name == "general.file_type" and f"MOSTLY_{form}" in LlamaFileType.__members__:
                writer.add_file_type(LlamaFileType[f"MOSTLY_{form}"])
                continue
            sub_type = field.types[-1] if len(field.types) > 1 else None
            writer.add_key_value(name, field.contents(), field.types[0], sub_type=sub_type)
        for tensor in reader.tensors:
            shape = tuple(int(n) for n in reversed(tensor.shape))  # numpy's order
            kind = tensor.tensor_type
            if _kept_as_is(kind, wanted, shape[-1]):
                writer.add_tensor(tensor.name, tensor.data, raw_dtype=kind)
                continue
            weights = dequantize(tensor.data, kind).reshape(shape).astype(np.float32)
            packed = quantize(weights, wanted)
            writer.add_tensor(tensor.name, packed, raw_shape=packed.shape, raw_dtype=wanted)
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
        writer.close()
        os.replace(temporary, target)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


def _kept_as_is(kind: Any, wanted: Any, row: int) -> bool:
    """Floats (norms, biases), weights already in the wanted form, and rows the wanted
    form's blocks do not divide are copied byte for byte."""
    from gguf import GGML_QUANT_SIZES, GGMLQuantizationType

    floats = (GGMLQuantizationType.F32, GGMLQuantizationType.F16, GGMLQuantizationType.BF16)
    block, _ = GGML_QUANT_SIZES[wanted]
    return kind in floats or kind == wanted or row % block != 0
