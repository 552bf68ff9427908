"""The app's model seam: where a model comes from and how it becomes a CacheProfile.

Every page plans a ``CacheProfile``. This module is the one place that knows the sources of a
model: the bundled presets (``flatkv.presets``), a model specification (``flatkv.models``) loaded
from a Hugging Face ``config.json``, from the spec JSON the app exports, or edited by hand, and a
raw profile (layer pattern, KV bytes per slot, state tensors) for what no spec describes. It also
packs an edited spec into one URL value, so a link carries it.

No streamlit here: pure functions, tested in tests/test_app_state.py.
"""

from __future__ import annotations

import base64
import json
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from flatkv import presets
from flatkv.jsonfile import parse_json_object
from flatkv.models import ModelSpec
from flatkv.patterns import format_layer_pattern, parse_layer_pattern
from flatkv.plan import FULL_ATTENTION, LINEAR_ATTENTION, SLIDING_ATTENTION, occurrence_index
from flatkv.profile import CacheProfile
from flatkv.units import parse_size

CUSTOM = "custom"
PROFILE_FORMAT = "flatkv-profile/1"


CUSTOM_SPEC = "spec"  # the model is the edited specification carried in the URL
DEFAULT_MODEL = "Qwen3-Next-80B-A3B"
_URL_SPEC_FIELDS = ("format", "name", "model_layers", "kv_dtype", "conv_dtype", "ssm_dtype",
                    "kinds", "pattern")
MAX_SPEC_URL = 8192  # characters of a packed spec in a link


def model_names() -> list[str]:
    """Names the model picker offers: the bundled presets."""
    return presets.list_presets()


def largest_model() -> str:
    """The preset with the most cache layers (the app's performance goal is set against it)."""
    return max(model_names(), key=lambda n: len(presets.load_preset(n).layer_types))


@lru_cache(maxsize=256)
def preset_spec(name: str) -> ModelSpec:
    return presets.load_preset(name)


@lru_cache(maxsize=256)
def spec_from_json(text: str) -> ModelSpec:
    """A ModelSpec from its export JSON (a spec file, or a link's unpacked value)."""
    return ModelSpec.from_dict(parse_json_object(text, "model JSON"))


def spec_to_json(spec: ModelSpec) -> str:
    """Canonical compact JSON of a spec as the app carries it (no source / notes, TP 1: the
    sidebar's TP applies on top)."""
    data = spec.with_options(tp=1).to_dict()
    return json.dumps({k: data[k] for k in _URL_SPEC_FIELDS if k in data},
                      separators=(",", ":"))


def pack_spec(spec_json: str) -> str:
    """A spec JSON as one URL-safe value (zlib + base64url)."""
    return base64.urlsafe_b64encode(zlib.compress(spec_json.encode(), 9)).decode().rstrip("=")


def unpack_spec(text: str) -> str:
    """The spec JSON of ``pack_spec``; ValueError when the value is damaged or too big."""
    if len(text) > MAX_SPEC_URL:
        raise ValueError(f"spec is {len(text):,} characters long: at most {MAX_SPEC_URL:,}")
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        out = zlib.decompressobj().decompress(raw, 1 << 20).decode()
    except (ValueError, zlib.error, UnicodeDecodeError) as exc:
        raise ValueError(f"spec value is damaged ({exc})") from None
    spec_from_json(out)  # validate
    return out


@lru_cache(maxsize=256)
def profile_for(model: str, spec_json: str | None, tp: int) -> CacheProfile:
    return spec_for(model, spec_json, tp).profile()


def spec_kind_rows(spec: ModelSpec) -> list[dict]:
    """One row per distinct layer geometry of a spec, per TP rank: what the Model page lists."""
    rows = []
    for k in spec.summary():
        geometry = {key: v for key, v in k.geometry.items() if key != "kind" and v is not None}
        rows.append({
            "name": k.name,
            "kind": k.kind,
            "layers": k.count,
            "geometry": ", ".join(f"{key} {v}" for key, v in geometry.items()),
            "KV bytes per token": k.kv_bytes_per_token,
            "state shapes": "; ".join(f"{n} {tuple(sh)}" for n, sh in k.state_shapes.items()),
            "state bytes per layer": k.state_bytes_per_layer,
        })
    return rows


def spec_for(model: str, spec_json: str | None, tp: int) -> ModelSpec:
    """The ModelSpec of a preset name or an edited spec, at tensor-parallel size ``tp``."""
    if model == CUSTOM_SPEC:
        if not spec_json:
            raise ValueError("model is an edited spec but none was given: load or edit a model")
        spec = spec_from_json(spec_json)
    else:
        spec = preset_spec(model)
    return spec.with_options(tp=tp) if spec.tp != tp else spec


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


def load_model_json(text: str | bytes) -> ModelSpec | CacheProfile:
    """A model JSON the app exported: a spec (``flatkv-model/1``) or a raw profile
    (``flatkv-profile/1``). Raises ValueError naming what is wrong."""
    data = parse_json_object(text, "model JSON")
    if data.get("format") == PROFILE_FORMAT:
        return profile_from_dict(data)
    if data.get("format", "flatkv-model/1") == "flatkv-model/1":
        return ModelSpec.from_dict(data)
    raise ValueError(
        f"model JSON format is {data.get('format')!r}: this "
        "app reads 'flatkv-model/1' and 'flatkv-profile/1' (export one from the Model page); "
        "a Hugging Face config.json goes under Source: config.json"
    )


def profile_from_dict(data: dict) -> CacheProfile:
    """A raw profile from its export dict (``profile_to_dict``)."""
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


def layer_rows(profile: CacheProfile, names: Sequence[str] | None = None) -> list[dict]:
    """One row per cache layer: index, kind (a spec's kind names when given), its group and
    occurrence (= its slot), bytes."""
    rows = []
    labels = profile.layer_types
    for i, (label, occ) in enumerate(zip(labels, occurrence_index(labels))):
        is_state = label == LINEAR_ATTENTION
        rows.append(
            {
                "cache layer": i,
                "kind": names[i] if names else KIND_NAMES[label],
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
