"""Skills from `LOBUG_SKILLS_DIRS`: read from a temporary directory, named in every prompt's
`skills` block, and whole in the prompt of a turn about one (and not of an unrelated turn)."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from lobug.app import create_app
from lobug.backends import Backends
from lobug.config import ConfigError, MemoryConfig, Settings
from lobug.memory.assembly import ContextRequest, assemble
from lobug.memory.manager import MemoryManager
from lobug.memory.skills import SkillLibrary, load_skills, parse_skill
from lobug.store.protocol import Store
from tests.fakes import FakeChat, FakeEmbedder

SOURDOUGH = """---
name: sourdough
description: "Feed a sourdough starter and bake sourdough bread"
---
Feed the starter with equal weights of flour and water, wait until it doubles, then mix.
"""
TAXES = """---
name: tax-return
description: Fill in the yearly tax return forms
---
Gather the payslips first.
"""


def write_skill(directory: Path, folder: str, text: str) -> None:
    (directory / folder).mkdir(parents=True)
    (directory / folder / "SKILL.md").write_text(text, encoding="utf-8")


@pytest.fixture
def skills_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "skills"
    write_skill(directory, "sourdough", SOURDOUGH)
    write_skill(directory, "tax-return", TAXES)
    return directory


def test_skills_are_read_from_their_directories(skills_dir: Path, tmp_path: Path) -> None:
    other = tmp_path / "more"
    write_skill(other, "sourdough", SOURDOUGH.replace("Feed a", "Another"))
    write_skill(other, "knots", "---\nname: knots\ndescription: Tie sailing knots\n---\nBowline.")
    skills = load_skills([skills_dir, other])
    assert [s.name for s in skills] == ["sourdough", "tax-return", "knots"]
    assert skills[0].description == "Feed a sourdough starter and bake sourdough bread"
    assert skills[0].text.startswith("Feed the starter")


@pytest.mark.parametrize(
    "text",
    [
        "no front matter at all",
        "---\nname: lonely\n---\nno description",
        "---\ndescription: no name\n---\n",
        "---\nname: open\ndescription: never closed\n",
    ],
)
def test_a_malformed_skill_is_skipped_with_a_warning(
    tmp_path: Path, text: str, caplog: pytest.LogCaptureFixture
) -> None:
    write_skill(tmp_path, "bad", text)
    write_skill(tmp_path, "good", TAXES)
    with caplog.at_level(logging.WARNING, logger="lobug.memory.skills"):
        skills = load_skills([tmp_path])
    assert [s.name for s in skills] == ["tax-return"]
    assert "bad/SKILL.md skipped" in caplog.text


def test_a_file_that_is_not_utf8_and_a_missing_directory_are_skipped(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "latin").mkdir()
    (tmp_path / "latin" / "SKILL.md").write_bytes(b"---\nname: caf\xe9\n---\n")
    with caplog.at_level(logging.WARNING, logger="lobug.memory.skills"):
        assert load_skills([tmp_path, tmp_path / "nowhere"]) == []
    assert "latin/SKILL.md skipped" in caplog.text and "does not exist" in caplog.text


def test_a_turn_naming_a_skill_or_near_its_description_gets_it(skills_dir: Path) -> None:
    embedder = FakeEmbedder()
    library = SkillLibrary(load_skills([skills_dir]), embedder.embed_batch)
    about = "How do I feed a sourdough starter and bake bread?"
    assert [s.name for s in library.about(about, embedder.embed(about))] == ["sourdough"]
    assert [s.name for s in library.about("help with my tax return", None)] == ["tax-return"]
    unrelated = "What is the capital of Peru?"
    assert library.about(unrelated, embedder.embed(unrelated)) == ()
    ((label, value),) = library.catalog()
    assert label == "skills" and "- tax-return: Fill in the yearly tax return forms" in value


def test_skill_front_matter_drops_quotes() -> None:
    skill = parse_skill(SOURDOUGH, Path("SKILL.md"))
    assert (skill.name, skill.description) == (
        "sourdough",
        "Feed a sourdough starter and bake sourdough bread",
    )


@pytest.mark.both_engines
def test_the_skill_enters_the_prompt_of_a_turn_about_it_only(
    store: Store, fake_embedder: FakeEmbedder, skills_dir: Path
) -> None:
    config = MemoryConfig(skills_dirs=(skills_dir,))
    memory = MemoryManager(store, FakeChat(), fake_embedder, config)

    about = memory.retrieve_context("lobug", "How do I feed my sourdough starter to bake bread?")
    prompt = "\n".join(about.prompt_sections())
    assert '[Skill "sourdough"]' in prompt and "equal weights of flour and water" in prompt
    assert '"skills": "- sourdough: Feed a sourdough starter' in prompt  # the catalog block

    unrelated = memory.retrieve_context("lobug", "What is the capital of Peru?")
    prompt = "\n".join(unrelated.prompt_sections())
    assert "[Skill" not in prompt and "equal weights" not in prompt
    assert "- tax-return: Fill in the yearly tax return forms" in prompt  # always named

    budgeted = assemble(memory, "lobug", "sourdough please", ContextRequest(1000, 0, topics=True))
    assert "equal weights of flour and water" in budgeted.prompt
    skills = next(section for section in budgeted.sections if section.name == "skills")
    assert skills.tokens > 0


def test_a_device_turn_about_a_skill_gets_it_and_the_context_api_names_it(
    settings: Settings, backends: Backends, fake_chat: FakeChat, skills_dir: Path
) -> None:
    with_skills = settings.with_overrides(memory=MemoryConfig(skills_dirs=(skills_dir,)))
    with TestClient(create_app(with_skills, backends)) as client:
        client.post("/chat/text", json={"text": "How do I feed my sourdough starter?"})
        about = "\n".join(m["content"] for m in fake_chat.chat_requests()[-1])
        client.post("/chat/text", json={"text": "What is the capital of Peru?"})
        unrelated = "\n".join(m["content"] for m in fake_chat.chat_requests()[-1])
        context = client.post("/memory/context/lobug", json={"query": "sourdough"}).json()
    assert "equal weights of flour and water" in about and "- sourdough:" in about
    assert "equal weights" not in unrelated and "- sourdough:" in unrelated
    assert context["skills"] == ["sourdough"]


def test_the_skills_directories_setting_is_path_separated(tmp_path: Path) -> None:
    raw = os.pathsep.join([str(tmp_path / "a"), str(tmp_path / "b")])
    settings = Settings.from_env({"LOBUG_SKILLS_DIRS": raw, "LOBUG_MIN_FACT_CONFIDENCE": "0.7"})
    assert settings.memory.skills_dirs == (tmp_path / "a", tmp_path / "b")
    assert settings.memory.min_fact_confidence == 0.7


def test_a_confidence_out_of_range_is_refused() -> None:
    with pytest.raises(ConfigError, match="LOBUG_MIN_FACT_CONFIDENCE"):
        Settings.from_env({"LOBUG_MIN_FACT_CONFIDENCE": "1.5"})
