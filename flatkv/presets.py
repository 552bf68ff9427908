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
from flatkv.models import CacheLayer, ModelSpec, with_mtp_layer
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


def _layers_of(preset: ModelSpec) -> tuple[tuple[CacheLayer, ...], ...]:
    """A preset's cache layers, and those with its MTP layer added where it takes one (the
    Model page adds it to the model, which an edit then carries)."""
    try:
        return preset.layers, with_mtp_layer(preset).layers
    except ValueError:  # no full-attention layer, or an MTP drafter of other layers
        return (preset.layers,)


@lru_cache(maxsize=1)
def _bundled() -> tuple[ModelSpec, ...]:
    """Every bundled preset, read once per process."""
    return tuple(load_preset(name) for name in list_presets())


def _presets_of_class(architectures: tuple[str, ...]) -> tuple[ModelSpec, ...]:
    """The bundled presets of the config class ``architectures``."""
    return tuple(p for p in _bundled() if p.architectures == architectures)


def seeded_from(spec: ModelSpec) -> ModelSpec | None:
    """The bundled preset ``spec`` was made from: the one its ``edited_from`` names (the Model
    page's editor writes it into a model drafted from a preset), else the one whose source it
    carries (each preset names its own config: a preset as bundled, its MTP layer added, or
    exported and loaded again); None for any other model: a config.json's (another size of a
    preset's family: Llama-3.1-70B's is Llama-3.1-8B's class, by right), one typed from
    scratch, an ``edited_from`` naming no bundled preset (one since renamed)."""
    if spec.edited_from:
        name = preset_name(spec.edited_from)
        return next((p for p in _bundled() if p.name == name), None)
    return next((p for p in _bundled() if spec.source and p.source == spec.source), None)


def preset_class_note(spec: ModelSpec) -> str:
    """Why ``spec``'s architectures may not describe it: it was made from a bundled preset
    (``seeded_from``), kept its class, and its cache layers are no preset of that class's (a
    preset edited by hand keeps the preset's class, and vLLM and SGLang choose their pools,
    defaults and refusals by the class: a hand-made hybrid under Qwen3NextForCausalLM gets
    Qwen3-Next's engine figures). "" where they may: a model made from no preset (a config.json
    as loaded and edited names its own class), the class changed, or a preset's layers (its
    dtypes, lengths or name changed, its MTP layer added). Said on the Model page and by the
    CLI's ``model`` alike; the caller adds where to change it."""
    seed = seeded_from(spec)
    if seed is None or not spec.architectures or spec.architectures != seed.architectures:
        return ""
    same = _presets_of_class(spec.architectures)
    if any(spec.layers in _layers_of(p) for p in same):
        return ""
    names = " and ".join(p.name for p in same)
    theirs = "; ".join(  # the same pattern: what differs is in the kinds
        f"{p.name}'s kinds differ in heads, dims or state" if p.pattern == spec.pattern
        else f"{p.name}'s {p.pattern}, {len(p.layers):,}" for p in same)
    return (f"architecture {', '.join(spec.architectures)} is the class of the "
            f"preset{'s' if len(same) > 1 else ''} {names}, whose layers these are not "
            f"({spec.pattern}, {len(spec.layers):,} cache layers; {theirs}): vLLM and SGLang "
            "choose their pools, defaults and refusals by the class, so every engine's figures "
            f"here are a {spec.architectures[0]}'s")
