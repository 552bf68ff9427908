"""Shared test fixtures: the reference planner, loaded by file path (tests only)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
REFERENCE_PATH = SHARED / "reference" / "flat_memory_plan.py"


def load_reference():
    """The reference planner module from ``../shared/reference`` (beside the checkout)."""
    if not REFERENCE_PATH.is_file():
        pytest.fail(f"reference planner not found at {REFERENCE_PATH}: check out shared/ beside "
                    "the repository")
    name = "flatkv_reference_planner"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, REFERENCE_PATH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def reference():
    return load_reference()
