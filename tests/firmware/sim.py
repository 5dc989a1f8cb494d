"""scripts/device_sim.py loaded as a module (scripts/ is not a package), and the firmware's
golden wire samples it is checked against."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
SIM_PATH = ROOT / "scripts" / "device_sim.py"
GOLDEN = ROOT / "firmware" / "test" / "golden"
GOLDEN_BOUNDARY = "lobug-0123456789abcdef"


def load_device_sim() -> ModuleType:
    spec = importlib.util.spec_from_file_location("device_sim", SIM_PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being created
    spec.loader.exec_module(module)
    return module


device_sim = load_device_sim()


def golden(name: str) -> bytes:
    return (GOLDEN / name).read_bytes()
