"""Every `LOBUG_` setting the package names is documented in docs/configuration.md (issue 43,
item 5). Names are collected from the source of `server/lobug` (`config/__init__.py` reads the
table of variables once; exposure.py, the command line's options and the memory client read a few of
their own), so a setting added anywhere without its line in the guide fails here by name."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "server" / "lobug"
GUIDE = ROOT / "docs" / "configuration.md"
# `LOBUG_EMBED_*` in prose names a family, not a setting: a name ending in `_` is left out.
# `_LOBUG_COMPLETE` is click's shell-completion switch, not one of ours: a name glued to a
# word or an underscore before it is left out.
SETTING = re.compile(r"(?<![A-Za-z0-9_])LOBUG_[A-Z0-9_]*[A-Z0-9]\b")


def settings_named(text: str) -> set[str]:
    return set(SETTING.findall(text))


def settings_in_package() -> set[str]:
    return {name for path in PACKAGE.rglob("*.py") for name in settings_named(path.read_text())}


def test_every_setting_the_package_names_is_in_the_configuration_guide() -> None:
    missing = sorted(settings_in_package() - settings_named(GUIDE.read_text()))
    assert not missing, (
        f"{len(missing)} LOBUG_ setting(s) named in server/lobug but not documented in "
        f"docs/configuration.md: {', '.join(missing)} (add a row to its tables)"
    )


def test_the_collection_finds_settings_and_leaves_families_and_click_switches_out() -> None:
    text = 'os.environ.get("LOBUG_MEMORY_URL"); `LOBUG_EMBED_*`; _LOBUG_COMPLETE=bash_source'
    assert settings_named(text) == {"LOBUG_MEMORY_URL"}
    assert {"LOBUG_HOST", "LOBUG_DB_PATH", "LOBUG_DEVICE_TOKENS"} <= settings_in_package()
