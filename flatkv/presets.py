"""Bundled model presets: ``assets/presets/*.json``, one model specification per file.

A preset is a model specification in the export format of ``ModelSpec.to_dict`` (so a user can
export a spec and load it again the same way); each names its source. Look-ups are by the
preset's name or file stem, case-insensitive.
"""

from __future__ import annotations

import json
from dataclasses import replace
from functools import lru_cache
from pathlib import Path

from flatkv.jsonfile import read_json_file
from flatkv.models import ModelSpec
from flatkv.profile import PROFILE_FORMAT, CacheProfile, profile_from_dict
from flatkv.tp_split import PLAIN
from flatkv.units import quoted

PRESET_DIR = Path(__file__).resolve().parent.parent / "assets" / "presets"


@lru_cache(maxsize=1)
def _index() -> dict[str, tuple[str, Path]]:
    """lower-cased name or stem -> (display name, file); read once per process."""
    index: dict[str, tuple[str, Path]] = {}
    for path in sorted(PRESET_DIR.glob("*.json")):
        try:
            name = json.loads(path.read_text(encoding="utf-8"))["name"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"preset file {path.name} is unreadable: {exc}") from None
        index[name.lower()] = (name, path)
        index.setdefault(path.stem.lower(), (name, path))
    return index


def list_presets() -> list[str]:
    """The display names of all presets, sorted case-insensitively."""
    return sorted({name for name, _ in _index().values()}, key=str.lower)


def preset_name(name: str) -> str | None:
    """The display name of the preset ``name`` calls (display name or file stem, any case), or
    None: ``jamba-1.5-mini`` in a hand-typed link is ``Jamba-1.5-Mini``."""
    entry = _index().get(str(name).strip().lower())
    return None if entry is None else entry[0]


def load_preset(name: str) -> ModelSpec:
    """The preset called ``name`` (display name or file stem, any case)."""
    entry = _index().get(str(name).strip().lower())
    if entry is None:
        raise ValueError(f"unknown preset {quoted(str(name), 40)}: known presets are "
                         f"{', '.join(list_presets())}")
    display, path = entry
    try:
        # its user never saw its file: a TP it refuses is said in plain words
        return replace(ModelSpec.from_dict(json.loads(path.read_text(encoding="utf-8"))),
                       _origin=PLAIN)
    except ValueError as exc:
        raise ValueError(f"preset {display!r} ({path.name}) is invalid: {exc}") from None


def load_model_file(path: str | Path) -> ModelSpec | CacheProfile:
    """A model saved as JSON: a specification (``ModelSpec.to_dict``, the presets' format) or a
    raw profile (``profile_to_dict``: one TP rank's bytes, as the Model page exports a model
    typed by hand), told apart by its format."""
    data = read_json_file(path, unique_keys=True)  # a key twice: which one is meant?
    if data.get("format") == PROFILE_FORMAT:
        return profile_from_dict(data)
    return ModelSpec.from_dict(data)
