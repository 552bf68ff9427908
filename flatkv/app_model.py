"""The app's model seam: where a model comes from and how it becomes a CacheProfile.

Every page plans a ``CacheProfile``. This module is the one place that knows the sources of a
model: built-in examples (taken from SPEC.md's reference table), a raw profile edited by hand
(layer pattern, KV bytes per slot, state tensors) and the JSON the app exports for a model. When
``flatkv.models`` / ``flatkv.presets`` land, presets and Hugging Face ``config.json`` plug in
here and nothing downstream changes.

No streamlit here: pure functions, tested in tests/test_app_state.py.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from flatkv.patterns import format_layer_pattern, parse_layer_pattern
from flatkv.plan import FULL_ATTENTION, LINEAR_ATTENTION, SLIDING_ATTENTION, occurrence_index
from flatkv.profile import CacheProfile
from flatkv.units import parse_size

CUSTOM = "custom"
PROFILE_FORMAT = "flatkv-profile/1"


def _example(name: str, layers: str, kv: int, state: Mapping[str, int] | None = None,
             window: int | None = None) -> CacheProfile:
    return CacheProfile(
        layer_types=tuple(parse_layer_pattern(layers)),
        kv_bytes_per_slot=kv,
        state_const_bytes=dict(state or {}),
        sliding_window=window,
        name=name,
    )


# Per-rank bytes at TP=1, bf16 unless said; from SPEC.md section 2. The order of layers inside a
# pattern does not change a plan (slot j pairs the j-th layer of every group), only the counts.
EXAMPLES: dict[str, CacheProfile] = {
    p.name: p
    for p in (
        # 12 full + 36 GDN; GDN conv 49,152 B, ssm 32 x 128 x 128 elements in bf16.
        _example("Qwen3-Next-80B-A3B", "(3*linear,full)*12", 2048,
                 {"conv": 49152, "ssm": 1048576}),
        # SPEC section 1 worked example: the same layers with an fp32 ssm state.
        _example("Qwen3.5-like (fp32 ssm)", "(3*linear,full)*12", 2048,
                 {"conv": 49152, "ssm": 2097152}),
        _example("Nemotron-H-8B", "(6*linear,full)*4", 4096, {"conv": 61440, "ssm": 2097152}),
        _example("Jamba-1.5-Mini", "(4*linear,full,3*linear)*4", 4096,
                 {"conv": 49152, "ssm": 262144}),
        # Attention and Mamba2 in every layer: one attention and one state cache layer each.
        _example("Falcon-H1-7B", "(full,linear)*44", 1024, {"conv": 21504, "ssm": 1572864}),
        _example("gpt-oss-20b", "(sliding,full)*12", 2048, window=128),
        _example("Llama-3.1-8B", "full*32", 4096),
        _example("DeepSeek-V3", "full*61", 1152),
    )
}
DEFAULT_MODEL = "Qwen3-Next-80B-A3B"


def model_names() -> list[str]:
    """Names the model picker offers, default first; ``custom`` is the hand-edited profile."""
    return list(EXAMPLES)


def largest_model() -> str:
    """The model with the most cache layers (the app's performance goal is set against it)."""
    return max(EXAMPLES.values(), key=lambda p: len(p.layer_types)).name


@dataclass(frozen=True)
class RawModel:
    """A hand-edited profile as the URL and the editor hold it: text fields, validated on use."""

    layers: str
    kv_bytes_per_slot: int
    state: tuple[tuple[str, int], ...] = ()
    sliding_window: int | None = None

    def profile(self, name: str = CUSTOM) -> CacheProfile:
        return CacheProfile(
            layer_types=tuple(parse_layer_pattern(self.layers)),
            kv_bytes_per_slot=self.kv_bytes_per_slot,
            state_const_bytes=dict(self.state),
            sliding_window=self.sliding_window,
            name=name,
        )

    @classmethod
    def from_profile(cls, profile: CacheProfile) -> RawModel:
        return cls(
            layers=format_layer_pattern(profile.layer_types),
            kv_bytes_per_slot=profile.kv_bytes_per_slot,
            state=tuple(profile.state_const_bytes.items()),
            sliding_window=profile.sliding_window,
        )


def parse_state_text(text: str) -> tuple[tuple[str, int], ...]:
    """``conv=49152, ssm=2MiB`` -> ``(("conv", 49152), ("ssm", 2097152))``; empty text -> ()."""
    out: dict[str, int] = {}
    for part in filter(None, (p.strip() for p in str(text).split(","))):
        name, sep, value = part.partition("=")
        name = name.strip()
        if not sep or not name:
            raise ValueError(
                f"state tensors {text!r}: write name=bytes pairs, e.g. conv=49152,ssm=2097152"
            )
        if name in out:
            raise ValueError(f"state tensors {text!r} name {name!r} twice: give each tensor once")
        out[name] = parse_size(value, field=f"state tensor {name}")
    return tuple(out.items())


def format_state_text(state: tuple[tuple[str, int], ...] | Mapping[str, int]) -> str:
    items = state.items() if isinstance(state, Mapping) else state
    return ",".join(f"{name}={nbytes}" for name, nbytes in items)


def profile_to_dict(profile: CacheProfile) -> dict:
    """The app's JSON for a model (export, and loadable again by ``profile_from_json``)."""
    return {
        "format": PROFILE_FORMAT,
        "name": profile.name,
        "layers": format_layer_pattern(profile.layer_types),
        "kv_bytes_per_slot": profile.kv_bytes_per_slot,
        "state_const_bytes": dict(profile.state_const_bytes),
        "sliding_window": profile.sliding_window,
    }


def profile_from_json(text: str | bytes) -> CacheProfile:
    """Read a model JSON the app exported. Raises ValueError naming what is wrong."""
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"model JSON is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError("model JSON must be an object with 'layers' and 'kv_bytes_per_slot'")
    if data.get("format") != PROFILE_FORMAT:
        raise ValueError(
            f"model JSON format is {data.get('format')!r}: this app reads {PROFILE_FORMAT!r} "
            "(export one from the Model page)"
        )
    state = data.get("state_const_bytes") or {}
    if not isinstance(state, dict):
        raise ValueError("model JSON state_const_bytes must be an object of name: bytes")
    layers = data.get("layers")
    if isinstance(layers, list):
        layers = format_layer_pattern([str(x) for x in layers])
    if not isinstance(layers, str):
        raise ValueError("model JSON layers must be a layer pattern such as 'full*32'")
    return CacheProfile(
        layer_types=tuple(parse_layer_pattern(layers)),
        kv_bytes_per_slot=data.get("kv_bytes_per_slot", 0),
        state_const_bytes=state,
        sliding_window=data.get("sliding_window"),
        name=str(data.get("name") or CUSTOM),
    )


KIND_NAMES = {
    FULL_ATTENTION: "full attention",
    SLIDING_ATTENTION: "sliding attention",
    LINEAR_ATTENTION: "state (linear attention / Mamba)",
}


def layer_rows(profile: CacheProfile) -> list[dict]:
    """One row per cache layer: index, kind, its group and occurrence (= its slot), bytes."""
    rows = []
    labels = profile.layer_types
    for i, (label, occ) in enumerate(zip(labels, occurrence_index(labels))):
        is_state = label == LINEAR_ATTENTION
        rows.append(
            {
                "cache layer": i,
                "kind": KIND_NAMES[label],
                "group": label,
                "slot": occ,
                "bytes per token": 0 if is_state else profile.kv_bytes_per_slot,
                "state bytes": profile.state_bytes_per_layer if is_state else 0,
            }
        )
    return rows


def kind_summary(profile: CacheProfile) -> list[dict]:
    """Per kind of cache layer: how many, bytes per token per layer and over all its layers."""
    out = []
    for label in (FULL_ATTENTION, SLIDING_ATTENTION, LINEAR_ATTENTION):
        n = profile.count(label)
        if not n:
            continue
        is_state = label == LINEAR_ATTENTION
        per_layer_token = 0 if is_state else profile.kv_bytes_per_slot
        per_layer_state = profile.state_bytes_per_layer if is_state else 0
        out.append(
            {
                "kind": KIND_NAMES[label],
                "layers": n,
                "bytes per token per layer": per_layer_token,
                "bytes per token, all layers": per_layer_token * n,
                "state bytes per layer": per_layer_state,
                "state bytes, all layers": per_layer_state * n,
                "tensors": "kv" if not is_state else ", ".join(profile.state_const_bytes),
            }
        )
    return out
