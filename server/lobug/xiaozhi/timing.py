"""Where a xiaozhi turn's time goes, from the frame that held the last speech to the first
reply audio sent: one log line per turn (INFO, `xiaozhi turn timings:`), which
`scripts/bench_voice.py` reads back for its breakdown. Marks are `time.perf_counter()`
readings; a stage whose marks are missing is left out."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

log = logging.getLogger(__name__)

# The stages, each from the mark before it (the first from `last_voice`), in the order of a turn.
STAGES = (
    ("endpoint", "ended"),  # the endpointing's silence and the words it waited for
    ("stt", "heard"),  # the transcription left once the turn ended
    ("start", "started"),  # the user's message stored, memory, the prompt read, action known
    ("first_sentence", "sentence"),  # the model's first sentence (or clause) written
    ("tts", "pcm"),  # its first sound synthesized
    ("opus", "frame"),  # encoded and its first frame sent
)


@dataclass
class TurnClock:
    """The marks of one turn (`mark`), and the turn's own stage timings (`Server-Timing`'s
    names: `retrieve`, `llm_start`, ...)."""

    marks: dict[str, float] = field(default_factory=dict)
    turn_ms: dict[str, float] = field(default_factory=dict)

    def mark(self, name: str, at: float | None = None, *, again: bool = False) -> None:
        """The first time `name` happened (or, `again`, the latest)."""
        at = time.perf_counter() if at is None else at
        self.marks[name] = at if again else self.marks.get(name, at)

    def stages_ms(self) -> dict[str, float]:
        stages = {}
        previous = self.marks.get("last_voice")
        for stage, mark in STAGES:
            at = self.marks.get(mark)
            if at is None:
                break
            if previous is not None:
                stages[stage] = (at - previous) * 1000
            previous = at
        first = self.marks.get("last_voice")
        if first is not None and "frame" in self.marks:
            stages["total"] = (self.marks["frame"] - first) * 1000
        if first is not None and "words" in self.marks:  # the words heard last, after speech
            stages["words"] = (self.marks["words"] - first) * 1000
        return stages

    def log(self, device: str) -> None:
        turn = {
            k: v
            for k, v in self.turn_ms.items()
            if k in ("retrieve", "llm_start", "stt", "ahead") or k.startswith("retrieve_")
        }
        stages = {**self.stages_ms(), **{f"turn_{k}": v for k, v in turn.items()}}
        if stages:
            shown = " ".join(f"{name}={ms:.1f}" for name, ms in stages.items())
            log.info("xiaozhi turn timings: device=%s %s", device, shown)
