"""Skills (seed 002): how-to documents an operator gives the assistant, one per directory.

Each directory listed in `LOBUG_SKILLS_DIRS` holds `<name>/SKILL.md` files that open with a
front matter naming the skill and saying what it is for:

    ---
    name: sourdough
    description: How to feed a sourdough starter and bake a loaf.
    ---
    (the skill's text)

Every agent gets the names and descriptions as a read-only memory block (`skills`, always in
its prompt), and a skill's whole text enters a turn's prompt when the turn is about it: it
names the skill, or its words come close to the description (cosine similarity at least
`MIN_SIMILARITY`). A file without a name or a description, unreadable or not UTF-8, is
skipped with a warning; so is a second skill of a name already found (the directory listed
first wins). Skills are read once, when the server starts; their descriptions are embedded
the first time a turn needs them.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lobug.store.models import Vector

log = logging.getLogger(__name__)

SKILL_FILE = "SKILL.md"
BLOCK_LABEL = "skills"
# How close a turn must come to a skill's description for the skill to enter its prompt.
MIN_SIMILARITY = 0.5
# At most this many skills enter one turn's prompt, the closest first.
MAX_SKILLS_PER_TURN = 2
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)(.*)\Z", re.DOTALL)
_FIELD = re.compile(r"^([A-Za-z_][\w-]*)[ \t]*:[ \t]*(.*)$")


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    text: str
    path: Path

    def mentioned_in(self, text: str) -> bool:
        """Whether `text` names the skill ("sourdough", "meal-plan" as "meal plan")."""
        words = r"[\s_-]+".join(re.escape(w) for w in re.split(r"[\s_-]+", self.name) if w)
        return words != "" and re.search(rf"\b{words}\b", text, re.IGNORECASE) is not None


class SkillFileError(ValueError):
    """A SKILL.md that is no skill; the message says why."""


def parse_skill(text: str, path: Path) -> Skill:
    """A SKILL.md's skill. Raises SkillFileError when its front matter lacks a field."""
    found = _FRONT_MATTER.match(text)
    if found is None:
        raise SkillFileError("no front matter between --- lines")
    fields = front_matter_fields(found[1])
    name, description = fields.get("name", ""), fields.get("description", "")
    if not name or not description:
        raise SkillFileError("the front matter needs a name and a description")
    return Skill(name, description, found[2].strip(), path)


def front_matter_fields(block: str) -> dict[str, str]:
    """`key: value` lines (YAML-ish: one line each, quotes around a value dropped)."""
    fields = {}
    for line in block.splitlines():
        matched = _FIELD.match(line.strip())
        if matched:
            fields[matched[1].lower()] = " ".join(matched[2].strip().strip("'\"").split())
    return fields


def load_skills(directories: Sequence[Path]) -> list[Skill]:
    """The skills of `directories`, by name, the first directory's first; malformed ones are
    skipped with a warning."""
    skills: dict[str, Skill] = {}
    for directory in directories:
        if not directory.is_dir():
            log.warning("skills directory %s does not exist; skipped", directory)
            continue
        for path in sorted(directory.glob(f"*/{SKILL_FILE}")):
            skill = read_skill(path)
            if skill is None:
                continue
            if skill.name in skills:
                log.warning(
                    "skill %r of %s already found in %s; skipped",
                    skill.name,
                    path,
                    skills[skill.name].path,
                )
                continue
            skills[skill.name] = skill
    return list(skills.values())


def read_skill(path: Path) -> Skill | None:
    try:
        return parse_skill(path.read_text(encoding="utf-8"), path)
    except (OSError, UnicodeDecodeError, SkillFileError) as exc:
        log.warning("skill file %s skipped: %s", path, exc)
        return None


def skill_section(skill: Skill) -> str:
    """A skill's whole text as a prompt section. Unlike stored memories it is not quoted as
    data: the operator wrote it, to instruct."""
    return f'[Skill "{skill.name}"] (how to do this, from the operator)\n{skill.text}'


class SkillLibrary:
    """The skills every agent has: their catalog block, and those a turn is about."""

    def __init__(
        self, skills: Sequence[Skill], embed_batch: Callable[[list[str]], list[Vector]]
    ) -> None:
        self.skills = tuple(skills)
        self._embed_batch = embed_batch
        self._vectors: np.ndarray | None = None
        self._lock = threading.Lock()

    def catalog(self) -> tuple[tuple[str, str], ...]:
        """The read-only memory block naming every skill: `(label, value)`; none without
        skills."""
        if not self.skills:
            return ()
        lines = [f"- {skill.name}: {skill.description}" for skill in self.skills]
        return ((BLOCK_LABEL, "\n".join(lines)),)

    def about(self, text: str, vector: Vector | None) -> tuple[Skill, ...]:
        """The skills `text` is about: named in it, or close to it by meaning, closest first;
        at most `MAX_SKILLS_PER_TURN`."""
        if not self.skills or not text.strip():
            return ()
        scores = self._similarities(vector)
        chosen = [
            (1.0 + score if skill.mentioned_in(text) else score, skill)
            for skill, score in zip(self.skills, scores, strict=True)
            if skill.mentioned_in(text) or score >= MIN_SIMILARITY
        ]
        chosen.sort(key=lambda pair: -pair[0])
        return tuple(skill for _, skill in chosen[:MAX_SKILLS_PER_TURN])

    def _similarities(self, vector: Vector | None) -> list[float]:
        vectors = self._description_vectors() if vector is not None else None
        if vectors is None or vector is None:
            return [0.0] * len(self.skills)
        query = np.asarray(vector, dtype=np.float32)
        norm = float(np.linalg.norm(query))
        return [float(s) for s in vectors @ (query / norm if norm else query)]

    def _description_vectors(self) -> np.ndarray | None:
        """The descriptions' unit vectors, embedded once; None while the embedder fails."""
        with self._lock:
            if self._vectors is None:
                try:
                    found = self._embed_batch([s.description for s in self.skills])
                except Exception:
                    log.warning("embedding skill descriptions failed", exc_info=True)
                    return None
                matrix = np.asarray(found, dtype=np.float32)
                norms = np.linalg.norm(matrix, axis=1, keepdims=True)
                self._vectors = matrix / np.where(norms == 0, 1.0, norms)
            return self._vectors
