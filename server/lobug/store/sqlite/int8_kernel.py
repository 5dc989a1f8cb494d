"""The int8 kernel of the vector index: a uint8 query times int8 column-major blocks of
codes, exactly, in onnxruntime's MatMulInteger (see `vector_index`)."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from lobug.backends.base import cpu_session

T = TypeVar("T")

SPLIT_MIN_ROWS = 32768  # below this, handing half the rows to a thread is not worth it


class Int8Kernel:
    """A uint8 (1, dim) query times int8 (dim, n) blocks of codes -> int32 (sum of n,), in
    onnxruntime.

    Large inputs are cut in two halves (by blocks) scored at once, one on a helper thread
    (onnxruntime releases the GIL). Each session call runs on one thread: onnxruntime's own
    thread pool was slower than one thread for this shape, and when another process holds a
    core the two halves take little longer than one call over all rows."""

    def __init__(self) -> None:
        self._session = cpu_session(_matmul_integer_model(), threads=1)
        parallel = (os.cpu_count() or 1) > 1
        self._helper = ThreadPoolExecutor(1, "vector-index") if parallel else None

    def in_halves(self, task: Callable[[int, int], T], blocks: int, rows: int) -> list[T]:
        """`task(first_block, end_block)` over blocks [0, blocks): for `rows` that are worth
        it, as two halves at once, the second on the helper thread; else in one call."""
        half = blocks // 2
        if self._helper is None or not half or rows < SPLIT_MIN_ROWS:
            return [task(0, blocks)]
        second = self._helper.submit(task, half, blocks)
        return [task(0, half), second.result()]

    def run(
        self, blocks: Sequence[npt.NDArray[np.int8]], query: npt.NDArray[np.uint8]
    ) -> npt.NDArray[np.int32]:
        """`blocks` scored on this thread; `query` has the shape (1, dim)."""
        scores = [self._session.run(None, {"query": query, "codes": b})[0] for b in blocks]
        result: npt.NDArray[np.int32] = np.concatenate(scores, axis=1).reshape(-1)
        return result


def int8_kernel() -> Int8Kernel:
    return _kernel_of_process(os.getpid())


@functools.cache
def _kernel_of_process(pid: int) -> Int8Kernel:
    """One kernel per process: a forked child must not use its parent's helper thread."""
    return Int8Kernel()


# The one-node ONNX model is written as protobuf bytes by hand (field numbers from onnx.proto)
# so that the `onnx` package, with its dependencies and a third of a second of import time, is
# not needed for a graph this small.
_UINT8, _INT8, _INT32 = 2, 3, 6  # onnx.TensorProto.DataType


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        if not value:
            out.append(byte)
            return bytes(out)
        out.append(byte | 0x80)


def _field(number: int, value: int | str | bytes) -> bytes:
    if isinstance(value, int):
        return _varint(number << 3) + _varint(value)
    data = value.encode() if isinstance(value, str) else value
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def _tensor_info(name: str, elem_type: int, dims: tuple[int | str, ...]) -> bytes:
    """ValueInfoProto(name, type=TypeProto(tensor_type=(elem_type, shape)))."""
    # TensorShapeProto.Dimension: dim_value = 1, dim_param = 2.
    shape = b"".join(_field(1, _field(1 if isinstance(d, int) else 2, d)) for d in dims)
    tensor = _field(1, elem_type) + _field(2, shape)
    return _field(1, name) + _field(2, _field(1, tensor))


@functools.cache
def _matmul_integer_model() -> bytes:
    """ModelProto for scores = MatMulInteger(query, codes), opset 13."""
    # NodeProto: input = 1, output = 2, op_type = 4.
    node = _field(1, "query") + _field(1, "codes") + _field(2, "scores")
    node += _field(4, "MatMulInteger")
    # GraphProto: node = 1, name = 2, input = 11, output = 12.
    graph = _field(1, node) + _field(2, "int8_gemv")
    graph += _field(11, _tensor_info("query", _UINT8, (1, "dim")))
    graph += _field(11, _tensor_info("codes", _INT8, ("dim", "rows")))
    graph += _field(12, _tensor_info("scores", _INT32, (1, "rows")))
    # ModelProto: ir_version = 1, graph = 7, opset_import = 8 (OperatorSetIdProto: version = 2).
    return _field(1, 8) + _field(7, graph) + _field(8, _field(2, 13))
