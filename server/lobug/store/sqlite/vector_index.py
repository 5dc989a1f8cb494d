"""Exact cosine KNN over current fact vectors, held in RAM per agent.

sqlite-vec stays the store of record; this index is rebuilt from it when the store opens
(`add_many`) and kept in sync by the store on every write.

Vectors must be unit length (the embedders return normalised vectors). Nothing is normalised
here: `search` returns dot products, which are cosine similarities only for unit vectors.

Search is exact. A plain float32 matrix-vector product over 100k x 384 reads 153 MB per query
and is bound by memory bandwidth, so large shards also keep an int8 copy of every row (one scale
per row) and search in two steps:

1. score every row on the int8 copy with onnxruntime's MatMulInteger (a uint8 x int8 kernel
   that uses AVX2/AVX-512 VNNI; numpy has no fast integer GEMV), reading a quarter of the
   bytes, in two halves on two threads for large shards (each half also scaled and its best
   rows picked on its own thread: at 1M rows that work was a third of the search). The codes
   are kept column-major, in blocks of `BLOCK_ROWS` rows, so the product is the kernel's fast
   (1, dim) x (dim, rows) shape: the (rows, dim) x (dim, 1) one took ten times longer (30 ms
   against 3 ms for 100k rows on an AVX2 EPYC). Without VNNI the AVX2 kernel adds each pair
   of products in saturating int16 (vpmaddubsw): the query goes in as uint8 `code + 64` with
   codes in +-64, and rows as int8 in +-127, so no pair can exceed 2 * 128 * 127 < 32768 on
   any kernel;
2. re-rank the best `max(64, 8k)` rows exactly in float32.

The quantisation error is bounded per query (Cauchy-Schwarz, below), so the index knows when a
row outside the candidates could still beat the k-th exact score; it then re-ranks every row
whose int8 score is within that bound. Results are therefore the exact top k, not an
approximation, whatever the data looks like; the wider re-rank only costs time.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from lobug.store.sqlite.int8_kernel import int8_kernel

Vector = npt.NDArray[np.float32]
Matrix = npt.NDArray[np.float32]
Ids = npt.NDArray[np.int64]

PREFILTER_MIN_ROWS = 4096
"""Shards smaller than this are scanned in float32 alone: a few MB, quicker than two steps."""

MIN_CANDIDATES = 64
CANDIDATES_PER_HIT = 8
QUERY_LEVELS = 64
_QUERY_OFFSET = 64  # the query goes in as uint8 (code + 64, in 0..128): the kernel wants u8 x s8
BLOCK_ROWS = 16384  # rows per block of column-major codes (6 MB at 384 dimensions)
_SLACK = 1e-5  # float32 rounding in the int8 scores and the exact dot products
_QUANTIZE_CHUNK = 2048


def candidate_count(k: int) -> int:
    """How many int8-scored rows are re-ranked exactly before the error bound is checked."""
    return max(MIN_CANDIDATES, CANDIDATES_PER_HIT * k)


def quantize(
    vectors: Matrix,
) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """Rows -> (int8 codes in +-127, per-row scale, per-row error norm ||x - scale * code||)."""
    codes = np.empty(vectors.shape, dtype=np.int8)
    scales = np.empty(len(vectors), dtype=np.float32)
    errors = np.empty(len(vectors), dtype=np.float32)
    for start in range(0, len(vectors), _QUANTIZE_CHUNK):  # chunks stay in cache
        chunk = slice(start, start + _QUANTIZE_CHUNK)
        rows = vectors[chunk]
        peak = np.maximum(rows.max(axis=1), -rows.min(axis=1))
        scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)[:, None]
        levels = rows / scale
        np.rint(levels, out=levels)
        residual = rows - levels * scale
        errors[chunk] = np.sqrt(np.einsum("ij,ij->i", residual, residual))
        codes[chunk] = levels
        scales[chunk] = scale[:, 0]
    return codes, scales, errors


class _Shard:
    """The vectors of one agent: rows [0, size) of growable arrays, ids beside them; the int8
    codes column-major in blocks (row r is column r % BLOCK_ROWS of block r // BLOCK_ROWS)."""

    def __init__(self, dim: int) -> None:
        self.matrix = np.zeros((16, dim), dtype=np.float32)
        self.code_blocks = [np.zeros((dim, 16), dtype=np.int8)]
        self.code_sums = np.zeros(16, dtype=np.int32)  # each row's sum of codes
        self.scales = np.zeros(16, dtype=np.float32)
        self.ids = np.zeros(16, dtype=np.int64)
        self.size = 0
        self.row_of: dict[int, int] = {}
        # Largest ||x - x_int8|| and ||x|| of any row ever stored. Never lowered on removal:
        # they stay valid upper bounds for the rows that remain.
        self.max_error = 0.0
        self.max_norm = 0.0
        # Facts added one by one (the store's way) whose int8 row is not written yet: quantising
        # one vector costs several times more than storing it, so `_refresh` does them together,
        # before the next prefiltered search or once a chunk has gathered. Ids, not rows, so
        # that removals may move rows.
        self.stale: set[int] = set()

    def add(self, fact_id: int, vector: Vector) -> None:
        """Store one row (an id already here is overwritten); its int8 copy is made lazily."""
        row = self.row_of.get(fact_id)
        if row is None:
            if self.size == len(self.ids):
                self._reserve(self.size + 1)
            row = self.row_of[fact_id] = self.size
            self.ids[row] = fact_id
            self.size += 1
        self.matrix[row] = vector
        self.stale.add(fact_id)
        if len(self.stale) >= _QUANTIZE_CHUNK:
            self._refresh()

    def extend(self, fact_ids: Ids, vectors: Matrix) -> None:
        """Store rows; `fact_ids` are distinct. An id already here is overwritten in place."""
        rows: slice | npt.NDArray[np.int64]
        if self.row_of.keys().isdisjoint(fact_ids.tolist()):  # all new: append
            end = self.size + len(fact_ids)
            rows = slice(self.size, end)
            self.row_of.update(zip(fact_ids.tolist(), range(self.size, end), strict=True))
        else:
            rows = np.empty(len(fact_ids), dtype=np.int64)
            end = self.size
            for i, fact_id in enumerate(fact_ids.tolist()):
                row = self.row_of.get(fact_id)
                if row is None:
                    row = self.row_of[fact_id] = end
                    end += 1
                rows[i] = row
        self._reserve(end)
        self.matrix[rows] = vectors
        self.ids[rows] = fact_ids
        self.size = end
        self._write_int8(rows, vectors)
        if self.stale:
            self.stale.difference_update(fact_ids.tolist())

    def _refresh(self) -> None:
        """Write the int8 rows of the facts added one by one since the last refresh."""
        if self.stale:
            rows = np.fromiter((self.row_of[i] for i in self.stale), np.int64, len(self.stale))
            self._write_int8(rows, self.matrix[rows])
            self.stale.clear()

    def _write_int8(self, rows: slice | npt.NDArray[np.int64], vectors: Matrix) -> None:
        if not len(vectors):
            return
        codes, scales, errors = quantize(vectors)
        if isinstance(rows, slice):
            self._write_code_run(rows.start, codes)
        else:
            self._write_code_rows(rows, codes)
        self.code_sums[rows] = codes.sum(axis=1, dtype=np.int32)
        self.scales[rows] = scales
        self.max_error = max(self.max_error, float(errors.max()))
        squares = float(np.einsum("ij,ij->i", vectors, vectors).max())
        self.max_norm = max(self.max_norm, squares**0.5)

    def _write_code_run(self, first: int, codes: npt.NDArray[np.int8]) -> None:
        """Codes of consecutive rows from `first` on, block by block (a bulk load's way)."""
        done = 0
        while done < len(codes):
            block, column = divmod(first + done, BLOCK_ROWS)
            count = min(len(codes) - done, self.code_blocks[block].shape[1] - column)
            self.code_blocks[block][:, column : column + count] = codes[done : done + count].T
            done += count

    def _write_code_rows(self, rows: npt.NDArray[np.int64], codes: npt.NDArray[np.int8]) -> None:
        blocks = rows // BLOCK_ROWS
        for block in np.unique(blocks).tolist():
            picked = blocks == block
            self.code_blocks[block][:, rows[picked] % BLOCK_ROWS] = codes[picked].T

    def remove(self, fact_id: int) -> bool:
        row = self.row_of.pop(fact_id, None)
        if row is None:
            return False
        self.stale.discard(fact_id)
        last = self.size - 1
        if row != last:
            moved_id = int(self.ids[last])
            self.matrix[row] = self.matrix[last]
            self._code_column(row)[:] = self._code_column(last)
            self.code_sums[row] = self.code_sums[last]
            self.scales[row] = self.scales[last]
            self.ids[row] = moved_id
            self.row_of[moved_id] = row
        self.size = last
        return True

    def _code_column(self, row: int) -> npt.NDArray[np.int8]:
        column: npt.NDArray[np.int8] = self.code_blocks[row // BLOCK_ROWS][:, row % BLOCK_ROWS]
        return column

    def top_k(self, query: Vector, k: int, prefilter_min_rows: int) -> list[tuple[int, float]]:
        if self.size == 0 or k <= 0:
            return []
        k = min(k, self.size)
        if self.size >= max(prefilter_min_rows, 2 * candidate_count(k)):
            rows, scores = self._prefiltered(query, k)
        else:
            rows, scores = self._scan(query)
        best = np.argpartition(-scores, k - 1)[:k] if k < len(rows) else np.arange(len(rows))
        best = best[np.argsort(-scores[best], kind="stable")]
        return [(int(self.ids[rows[i]]), float(scores[i])) for i in best]

    def _scan(self, query: Vector) -> tuple[npt.NDArray[np.intp], Vector]:
        """Every row, scored exactly."""
        return np.arange(self.size), self.matrix[: self.size] @ query

    def _int8_candidates(
        self, query_codes: npt.NDArray[np.int16], query_scale: np.float32, count: int
    ) -> tuple[Vector, npt.NDArray[np.intp]]:
        """Every row's int8 score (its approximate dot product with the query) and the `count`
        rows that score best. Each half of the rows is scored, scaled and has its best picked
        on a thread of its own, while its scores are still in cache."""
        self._refresh()
        approx = np.empty(self.size, dtype=np.float32)
        shifted = (query_codes + _QUERY_OFFSET).astype(np.uint8).reshape(1, -1)
        kernel = int8_kernel()

        def best_of(first_block: int, end_block: int) -> npt.NDArray[np.intp]:
            start, stop = first_block * BLOCK_ROWS, min(end_block * BLOCK_ROWS, self.size)
            raw = kernel.run(self.code_blocks[first_block:end_block], shifted)[: stop - start]
            raw -= _QUERY_OFFSET * self.code_sums[start:stop]
            part = approx[start:stop]
            part[:] = raw
            part *= self.scales[start:stop]
            part *= query_scale
            kept = min(count, len(part))
            return np.argpartition(part, len(part) - kept)[len(part) - kept :] + start

        blocks = -(-self.size // BLOCK_ROWS)
        rows = np.concatenate(kernel.in_halves(best_of, blocks, self.size))
        if len(rows) > count:
            rows = rows[np.argpartition(approx[rows], len(rows) - count)[len(rows) - count :]]
        return approx, rows

    def _prefiltered(self, query: Vector, k: int) -> tuple[npt.NDArray[np.intp], Vector]:
        """Rows that hold the exact top k, scored exactly (see the module docstring)."""
        peak = float(np.abs(query).max())
        if not 0.0 < peak < np.inf:
            return self._scan(query)
        query_scale = np.float32(peak / QUERY_LEVELS)
        query_codes = np.rint(query / query_scale).astype(np.int16)
        query_int8 = query_codes * query_scale
        # For a row x with int8 reconstruction x' and the query's q':
        #   |x.q - x'.q'| = |x.(q - q') + (x - x').q'| <= |x| |q - q'| + |x - x'| |q'|
        slack = (
            self.max_norm * float(np.linalg.norm(query - query_int8))
            + self.max_error * float(np.linalg.norm(query_int8))
            + _SLACK
        )
        count = candidate_count(k)
        approx, rows = self._int8_candidates(query_codes, query_scale, count)
        scores = self.matrix[rows] @ query
        kth = float(np.partition(scores, count - k)[count - k])
        if float(approx[rows].min()) + slack < kth:
            return rows, scores  # no row left out can reach the k-th exact score
        rows = np.flatnonzero(approx >= kth - slack)
        if len(rows) < k or len(rows) * 4 > self.size:
            return self._scan(query)
        return rows, self.matrix[rows] @ query

    def _reserve(self, needed: int) -> None:
        capacity = len(self.ids)
        if needed <= capacity:
            return
        while capacity < needed:
            capacity *= 2
        self.matrix = _resized(self.matrix, capacity, self.size)
        self.code_blocks = _grown_blocks(self.code_blocks, capacity)
        self.code_sums = _resized(self.code_sums, capacity, self.size)
        self.scales = _resized(self.scales, capacity, self.size)
        self.ids = _resized(self.ids, capacity, self.size)


def unit_rows(vectors: Matrix) -> tuple[Matrix, npt.NDArray[np.bool_]]:
    """The rows scaled to unit length, and which of them are not zero (those stay zero)."""
    norms = np.linalg.norm(vectors, axis=1).astype(np.float32)
    kept: npt.NDArray[np.bool_] = norms > 0
    units: Matrix = (vectors / np.where(kept, norms, np.float32(1.0))[:, None]).astype(np.float32)
    return units, kept


def _resized(array: npt.NDArray[Any], capacity: int, keep: int) -> npt.NDArray[Any]:
    grown = np.zeros((capacity, *array.shape[1:]), dtype=array.dtype)
    grown[:keep] = array[:keep]
    return grown


def _grown_blocks(blocks: list[npt.NDArray[np.int8]], capacity: int) -> list[npt.NDArray[np.int8]]:
    """Code blocks holding `capacity` rows (a power of two): one block narrower than
    BLOCK_ROWS while they fit in one, else full blocks; the rows held are kept."""
    dim = blocks[0].shape[0]
    width = min(capacity, BLOCK_ROWS)
    grown = []
    for block in blocks:
        if block.shape[1] == width:
            grown.append(block)
        else:
            wider = np.zeros((dim, width), dtype=np.int8)
            wider[:, : block.shape[1]] = block
            grown.append(wider)
    while len(grown) * width < capacity:
        grown.append(np.zeros((dim, width), dtype=np.int8))
    return grown


class VectorIndex:
    """Thread-safe exact search: `search` returns (fact_id, cosine similarity), best first.

    Vectors must be unit length; see the module docstring."""

    def __init__(self, dim: int, *, prefilter_min_rows: int = PREFILTER_MIN_ROWS) -> None:
        self.dim = dim
        self.prefilter_min_rows = prefilter_min_rows
        self._shards: dict[int, _Shard] = {}
        self._agent_of: dict[int, int] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._agent_of)

    def add(self, agent_id: int, fact_id: int, vector: Vector) -> None:
        """Insert or replace one vector; a fact id held by another agent moves to this one."""
        vector = self._check(vector)
        with self._lock:
            self._move_out(fact_id, agent_id)
            self._shards.setdefault(agent_id, _Shard(self.dim)).add(fact_id, vector)
            self._agent_of[fact_id] = agent_id

    def add_unit(self, agent_id: int, fact_id: int, vector: Vector) -> None:
        """`add` the vector scaled to unit length; a zero vector matches nothing, so it is
        not held (an earlier vector of `fact_id` is dropped)."""
        units, kept = unit_rows(np.asarray(vector, dtype=np.float32).reshape(1, -1))
        if kept[0]:
            self.add(agent_id, fact_id, units[0])
        else:
            self.remove(fact_id)

    def add_many(
        self, agent_ids: npt.ArrayLike, fact_ids: npt.ArrayLike, vectors: npt.ArrayLike
    ) -> None:
        """Bulk `add`: the same result as adding the rows one by one in order, much faster."""
        agents = np.asarray(agent_ids, dtype=np.int64).reshape(-1)
        facts = np.asarray(fact_ids, dtype=np.int64).reshape(-1)
        matrix = np.asarray(vectors, dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[1] != self.dim:
            raise ValueError(f"vectors have shape {matrix.shape}, index has {self.dim} dimensions")
        if not len(agents) == len(facts) == len(matrix):
            raise ValueError("agent_ids, fact_ids and vectors differ in length")
        if not len(facts):
            return
        # A fact id given twice keeps its last row, as sequential adds would.
        _, last_from_end = np.unique(facts[::-1], return_index=True)
        if len(last_from_end) < len(facts):
            keep = np.sort(len(facts) - 1 - last_from_end)
            agents, facts, matrix = agents[keep], facts[keep], matrix[keep]
        fact_list, agent_list = facts.tolist(), agents.tolist()
        with self._lock:
            known = self._agent_of.keys() & fact_list
            for fact_id, agent_id in zip(fact_list, agent_list, strict=True):
                if fact_id in known:
                    self._move_out(fact_id, agent_id)
            groups = np.unique(agents)
            for agent_id in groups.tolist():
                rows = slice(None) if len(groups) == 1 else agents == agent_id
                shard = self._shards.setdefault(agent_id, _Shard(self.dim))
                shard.extend(facts[rows], matrix[rows])
            self._agent_of.update(zip(fact_list, agent_list, strict=True))
            large = any(s.size >= self.prefilter_min_rows for s in self._shards.values())
        if large:
            int8_kernel()  # build it now rather than on the first query

    def remove(self, fact_id: int) -> None:
        with self._lock:
            agent_id = self._agent_of.pop(fact_id, None)
            if agent_id is not None:
                self._shards[agent_id].remove(fact_id)

    def drop_agent(self, agent_id: int) -> None:
        """Forget every vector of one agent."""
        with self._lock:
            shard = self._shards.pop(agent_id, None)
            if shard is not None:
                for fact_id in list(shard.row_of):
                    self._agent_of.pop(fact_id, None)

    def search(self, agent_id: int, query: Vector, k: int) -> list[tuple[int, float]]:
        query = self._check(query)
        with self._lock:
            shard = self._shards.get(agent_id)
            return shard.top_k(query, k, self.prefilter_min_rows) if shard else []

    def similarities(self, fact_ids: Sequence[int], query: Vector) -> dict[int, float]:
        """Dot products of `query` with the stored vectors of these facts (ids not held here
        are left out)."""
        query = self._check(query)
        found: dict[int, float] = {}
        with self._lock:
            for fact_id in fact_ids:
                agent_id = self._agent_of.get(fact_id)
                if agent_id is None:
                    continue
                shard = self._shards[agent_id]
                found[fact_id] = float(shard.matrix[shard.row_of[fact_id]] @ query)
        return found

    def _move_out(self, fact_id: int, agent_id: int) -> None:
        """Drop `fact_id` from another agent's shard before it is stored under `agent_id`."""
        previous = self._agent_of.get(fact_id)
        if previous is not None and previous != agent_id:
            self._shards[previous].remove(fact_id)
            del self._agent_of[fact_id]

    def _check(self, vector: Vector) -> Vector:
        array = np.asarray(vector, dtype=np.float32).reshape(-1)
        if array.shape[0] != self.dim:
            raise ValueError(f"vector has {array.shape[0]} dimensions, index has {self.dim}")
        return array
