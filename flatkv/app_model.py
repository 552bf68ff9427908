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
import re
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from flatkv import presets
from flatkv.jsonfile import parse_json_object
from flatkv.models import (
    FORMAT,
    LAYER_KINDS,
    ModelSpec,
    check_label_name,
    kind_name,
    layer_from_dict,
)
from flatkv.patterns import (
    check_kind_name,
    format_layer_pattern,
    format_pattern,
    parse_layer_pattern,
    parse_pattern,
)
from flatkv.plan import (
    FULL_ATTENTION,
    LAYER_LABELS,
    LINEAR_ATTENTION,
    SLIDING_ATTENTION,
    bound_fix,
    occurrence_index,
)
from flatkv.profile import (
    CARRIED_FIELDS,
    PROFILE_FORMAT,
    WINDOWED,
    CacheProfile,
    architectures_problem,
    counted_kind,
    group_name,
    profile_from_dict,
)
from flatkv.strategies.vllm import mamba_chunk_text
from flatkv.tp_split import PLAIN
from flatkv.units import format_bytes, markdown_literal, parse_named_sizes, sentence_case

CUSTOM = "custom"


CUSTOM_SPEC = "spec"  # the model is the edited specification carried in the URL
DEFAULT_MODEL = "Qwen3-Next-80B-A3B"
# The context assumed for a model that gives no max_model_len (raw bytes, granite-4.0-h-small)
DEFAULT_CONTEXT = 32_768
# what a link carries of a spec; the source says where it came from (a config.json's ssm dtype),
# the notes what engines read differently, the architectures how SGLang pools its sliding layers,
# max_model_len the context vLLM serves it at unless told, mtp_layer_types what its drafter is,
# kv_shared_layer_types the layers SGLang keeps a pool layer for without a cache of their own,
# learnable_sink the dtype SGLang keeps DeepSeek's sparse attention in, edited_from the preset
# an edited model was made from (whose class it may keep on other layers)
_URL_SPEC_FIELDS = ("format", "name", "source", "edited_from", "notes", "model_layers",
                    "attention_heads", "mamba_chunk_size", "max_model_len", "max_model_len_assumed",
                    "max_model_len_typed", "architectures", "kv_dtype",
                    "conv_dtype", "ssm_dtype", "config_mamba_ssm_dtype",
                    "config_mamba_ssm_cache_dtype", "mtp_layer_types",
                    "kv_shared_layer_types", "mtp_modules", "learnable_sink", "kinds",
                    "pattern")
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
    """A ModelSpec from its export JSON (a spec file, or a link's unpacked value), at TP 1. The
    app carries every model but a preset so, a config.json loaded or a model edited included,
    and its TP apart (the sidebar's, a link's tp parameter), and its user never wrote that
    JSON: a TP that does not split it is refused in plain words (its layers and heads), not in
    the JSON's field names (those stay the CLI's, for a --model-file someone wrote); the
    editor words it in its own labels. A tp the JSON holds (a hand-made link's: the app writes
    none) is not read, so it cannot refuse the model in the JSON's words before the plain
    words apply; ``json_tp`` gives it, for the link to say so."""
    data = parse_json_object(text, "model JSON")
    return replace(ModelSpec.from_dict({**data, "tp": 1}), _origin=PLAIN)


def json_tp(text: str) -> object:
    """The tp a model JSON holds (``spec_from_json`` reads it at TP 1), 1 where it holds none."""
    return parse_json_object(text, "model JSON").get("tp", 1)


def spec_to_json(spec: ModelSpec) -> str:
    """Canonical compact JSON of a spec as the app carries it (TP 1: the sidebar's TP applies on
    top; its notes, a caveat the pages show beside the figures, ride along)."""
    data = spec.with_options(tp=1).to_dict()
    return json.dumps({k: data[k] for k in _URL_SPEC_FIELDS if k in data},
                      separators=(",", ":"))


def pack_spec(spec_json: str) -> str:
    """A spec JSON as one URL-safe value (zlib + base64url)."""
    return base64.urlsafe_b64encode(zlib.compress(spec_json.encode(), 9)).decode().rstrip("=")


def check_link_size(spec: ModelSpec) -> None:
    """ValueError when ``spec`` packed for a link (``pack_spec``) is longer than a link may carry
    (``unpack_spec`` refuses it): a page must not write a link that reopens as another model.
    A long name (or a model JSON's long source and notes) is what makes one so."""
    packed = len(pack_spec(spec_to_json(spec)))
    if packed > MAX_SPEC_URL:
        raise ValueError(f"the model packed for the link is {packed:,} characters long, at most "
                         f"{MAX_SPEC_URL:,}: a link could not reopen it: shorten its name (or "
                         "its source and notes, in a model JSON)")


def unpack_spec(text: str) -> str:
    """The spec JSON of ``pack_spec``; ValueError when the value is damaged or too big."""
    if len(text) > MAX_SPEC_URL:
        # a link's bound, not "too large to be real": said as a link's req='5000' is
        raise ValueError(f"spec is {len(text):,} characters long, which is more than "
                         f"{MAX_SPEC_URL:,}: {bound_fix(len(text), 0, MAX_SPEC_URL)}, as the "
                         "links this app writes do")
    damaged = ValueError("spec value is damaged: it is not a model packed by this app (a link "
                         "cut short?); copy the whole link again")
    # none given: the editor's "model JSON is empty: give the model's JSON" is no fix a
    # link's reader can make
    if not text.strip():
        raise ValueError("the link gives no spec, the model it packs: copy the whole link "
                         "again")
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        out = zlib.decompressobj().decompress(raw, 1 << 20).decode()
    except (ValueError, zlib.error, UnicodeDecodeError):
        raise damaged from None
    if not out.strip():  # packed nothing: "eJw" ('x' 'x9c') was "model JSON is empty" too
        raise damaged
    spec_from_json(out)  # validate
    return out


def one_source(upload: bytes | None, pasted: str, what: str) -> bytes | str | None:
    """The one input a load reads: an uploaded file or pasted text, not both (which one the
    user meant is unknowable, and loading the other under the name they typed misleads).
    None when neither is given."""
    if upload is not None and pasted.strip():
        raise ValueError(f"Both an uploaded {what} and pasted text are given: remove the file "
                         "(the x beside its name) or clear the pasted text, then load again.")
    return upload if upload is not None else pasted or None


@lru_cache(maxsize=256)
def profile_for(model: str, spec_json: str | None, tp: int) -> CacheProfile:
    return spec_for(model, spec_json, tp).profile()


def summary_caption(profile: CacheProfile, spec: ModelSpec | None,
                    typed_context: int | None = None) -> str:
    """The Model page's line above its tables (Markdown: names as typed): per TP rank, the
    cache dtypes, the query heads, the length vLLM serves it at unless told (not the context
    typed, which the context field shows; with no length known, what the pages count at),
    what SGLang reads of the config, and what vLLM does with its mamba chunk. ``spec`` None:
    a model given as raw bytes, per rank already."""
    parts = [f"Per TP rank (TP {spec.tp if spec is not None else 'as given'})"]
    if spec is not None:
        parts.append(f"cache dtypes: KV {spec.kv_dtype}" + "".join(
            f", {tensor} {dtype}" for tensor, dtype in spec.state_dtypes().items()))
        if spec.attention_heads:
            parts.append(f"{spec.attention_heads:,} attention heads (a TP must divide them)")
        parts.append(_length_caption(spec, typed_context))
    if shared := len(profile.kv_shared_layer_types):  # raw bytes carry them too
        parts.append(f"{shared:,} more layers read earlier layers' KV (no cache of their "
                     "own; SGLang keeps a pool layer for each)")
    if profile.architectures:
        parts.append(f"architecture: {markdown_literal(', '.join(profile.architectures))}")
    if profile.config_mamba_ssm_dtype:
        parts.append(f"config mamba_ssm_dtype: {profile.config_mamba_ssm_dtype} (SGLang's ssm "
                     "dtype)")
    if profile.config_mamba_ssm_cache_dtype:
        parts.append(f"config mamba_ssm_cache_dtype: {profile.config_mamba_ssm_cache_dtype} "
                     "(vLLM's ssm dtype unless told)")
    # raw bytes name a chunk only where one is given: they have no config to have none
    if (spec is not None or profile.mamba_chunk_size) and (
            chunk := mamba_chunk_text(profile, name=markdown_literal)):
        parts.append(f"mamba chunk: {chunk}")
    return " · ".join(parts) + "."


def _length_caption(spec: ModelSpec, typed_context: int | None) -> str:
    """The summary's max_model_len and where it comes from: assumed (a config with no length
    field), typed in the editor, the config's; or, with none known, what the pages count at."""
    if not spec.max_model_len:
        counted = (f"the {typed_context:,} tokens typed" if typed_context else
                   f"{DEFAULT_CONTEXT:,} tokens until a context is typed on Layout, Budget or "
                   "Compare")
        return f"max_model_len not known (the pages count at {counted})"
    length = f"max_model_len {spec.max_model_len:,} tokens"
    if spec.max_model_len_assumed:
        return (f"{length}, assumed (vLLM's default `--max-model-len` where the config gives no "
                "length: see the note)")
    if spec.max_model_len_typed:
        return f"{length} (typed in the editor: the pages count at it as vLLM's `--max-model-len`)"
    return f"{length} (vLLM's default `--max-model-len`, from the config)"


def _window_span(profile: CacheProfile, label: str, request: str) -> str:
    """The tokens of a request a windowed layer keeps, in words (``request``: "a request" or
    "it", as the sentence has named it)."""
    tokens = profile.window(label)
    if label == SLIDING_ATTENTION:
        return f"the last {tokens:,} tokens" + ("" if request == "it" else f" of {request}")
    whose = "its" if request == "it" else f"{request}'s"
    return f"the tokens of {whose} current {tokens:,}-token chunk"


def windowed_span(profile: CacheProfile) -> str:
    """What a model's sliding or chunked layers keep, in a metric's words ("window", "chunk",
    "window or chunk"); "" where every attention layer keeps every token."""
    return " or ".join(dict.fromkeys(WINDOWED[label].noun for label in profile.windowed_labels))


def kv_bytes_past_window(profile: CacheProfile) -> int:
    """KV bytes a token adds once older than the sliding or chunked layers' span: the layers
    that keep every token alone (gpt-oss-20b: its 12 full-attention layers' 24,576 B of the
    49,152 B all 24 take), what a long request pays a token where a layout frees what leaves
    the window."""
    return profile.kv_bytes_per_token - sum(
        profile.count(label) * profile.kv_bytes_of(label) for label in profile.windowed_labels)


def windowed_kv_note(profile: CacheProfile) -> str:
    """What "KV per token, all layers" leaves unsaid for a model with sliding or chunked
    layers: their share of it is needed for their window (chunk) only, so it is not what every
    token of a long request costs where a layout frees what leaves the window (calculators that
    take it so over-count such a model, SPEC 5; an engine that keeps every token, such as
    SGLang for Gemma 3, does pay it); "" for a model whose attention layers all keep every
    token."""
    windowed = profile.windowed_labels
    if not windowed:
        return ""
    total = profile.kv_bytes_per_token
    full = profile.count(FULL_ATTENTION)
    nouns = windowed_span(profile)
    tail = (f"a layout that frees what falls out of the {nouns} keeps less than "
            f"{format_bytes(total)} a token of a long request (Compare counts what each "
            "layout keeps).")
    if not full and len(windowed) == 1:
        kind = WINDOWED[windowed[0]]
        return (f"Every attention layer here is a {kind.layers[:-1]}: the "
                f"{format_bytes(total)} ({total:,} B) a token adds is needed for "
                f"{_window_span(profile, windowed[0], 'it')} only (their {kind.noun}), "
                f"however long the request: {tail}")
    shares = []
    for label in windowed:
        nbytes = profile.count(label) * profile.kv_bytes_of(label)
        shares.append(f"the {profile.count(label):,} {WINDOWED[label].layers}' "
                      f"{format_bytes(nbytes)} ({nbytes:,} B) is needed for "
                      f"{_window_span(profile, label, 'a request')} only (their "
                      f"{WINDOWED[label].noun})")
    if full:
        full_bytes = full * profile.kv_bytes_of(FULL_ATTENTION)
        shares.append(f"the {full:,} full-attention layers' {format_bytes(full_bytes)} for "
                      "every token of the context")
    return f"Of the {format_bytes(total)} ({total:,} B) a token adds, " + ", ".join(
        shares) + f": {tail}"


def spec_kind_rows(spec: ModelSpec) -> list[dict]:
    """One row per distinct layer geometry of a spec, per TP rank: what the Model page lists
    (its geometry, whole model, is ``spec_geometry_rows``). None where a kind has no such
    figure (an attention kind's state), so the table shows a dash, not a 0 to misread; a
    column no kind fills is left out."""
    rows = []
    for k in spec.summary():
        is_state = bool(k.state_shapes)
        rows.append({
            "name": k.name, "kind": k.kind, "layers": k.count,
            "KV B per token": None if is_state else k.kv_bytes_per_token,
            "state B per layer": k.state_bytes_per_layer if is_state else None,
            **{f"{tensor} shape": " x ".join(map(str, shape))
               for tensor, shape in k.state_shapes.items()},
        })
    return _filled_columns(rows)  # every kind's columns, but none that no kind fills


def spec_geometry_rows(spec: ModelSpec) -> list[dict]:
    """One row per kind: FlatKV's geometry fields (the Model JSON's names, not config.json's)
    for the whole model (heads, dims, window, conv kernel), one column per field any kind has,
    None where a kind has no such field. A column each, not one text cell: a cell of five
    fields was cut off on a laptop's screen."""
    geometries = {k.name: {key: v for key, v in k.geometry.items() if key != "kind"}
                  for k in spec.summary()}
    fields = list(dict.fromkeys(key for g in geometries.values() for key, v in g.items()
                                if v is not None))
    return [{"name": name, **{key: g.get(key) for key in fields}}
            for name, g in geometries.items()]


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
    """A hand-edited profile as the URL and the editor hold it: text fields, validated on use.

    Raw bytes have no layer kinds, so what the planner and the engines read from a model's kinds
    rides along as it is (``CARRIED_FIELDS``; the editor shows the sliding window and the
    chunk, no widget the others): the kernel block size an MLA model's attention
    needs, the config's architectures (SGLang's sliding-window pool), the bytes of one ssm
    element, its dtype (vLLM refuses some), the config's mamba_ssm_dtype (SGLang re-sizes
    the ssm state in its own dtype) and mamba_ssm_cache_dtype (vLLM's NemotronH hook's),
    the state kernel's chunk (vLLM's P in mamba cache mode all), the conv state's rows (vLLM
    widens them per speculative token) and element size (SGLang re-sizes it), the lightning
    indexer's bytes (both engines page such a model by 64 tokens), the chunk of chunked
    attention layers (Llama 4), the KV dtype and the K / V split (SGLang's KV log lines), and
    the bytes a token of a sliding layer where they differ from a full layer's (Gemma 4), and
    the types of the kv-shared layers past the cache layers (SGLang keeps a pool layer each),
    and the config's learnable_sink (SGLang keeps DeepSeek's sparse attention in bfloat16 then),
    and the GDN (KDA) layers' key head dims (vLLM 0.34's prefill kernel, and so whether it keeps
    a prefill checkpoint block).
    """

    layers: str
    kv_bytes_per_slot: int
    state: tuple[tuple[str, int], ...] = ()
    sliding_window: int | None = None
    kernel_block_size: int | None = None
    architectures: tuple[str, ...] = ()
    ssm_element_bytes: int | None = None
    config_mamba_ssm_dtype: str | None = None
    config_mamba_ssm_cache_dtype: str | None = None
    mamba_chunk_size: int | None = None
    conv_rows: int | None = None
    indexer_bytes_per_slot: int | None = None
    attention_chunk_size: int | None = None
    kv_dtype: str | None = None
    kv_tensor_bytes: tuple[int, ...] = ()
    conv_element_bytes: int | None = None
    sliding_kv_bytes_per_slot: int | None = None
    kv_shared_layer_types: tuple[str, ...] = ()
    sliding_kv_tensor_bytes: tuple[int, ...] = ()
    ssm_dtype: str | None = None
    learnable_sink: bool = False
    gdn_key_head_dims: frozenset[int] = frozenset()

    def profile(self, name: str = CUSTOM) -> CacheProfile:
        labels = tuple(parse_layer_pattern(self.layers))
        if LINEAR_ATTENTION in labels and not self.state:  # in the state field's own syntax
            raise ValueError(f"the layers {self.layers!r} have linear (state) layers but no "
                             "state gives their bytes: give the state tensors of one layer "
                             "per TP rank, e.g. conv=49152,ssm=2097152")
        if self.state and LINEAR_ATTENTION not in labels:  # the planner refuses them: say so here
            raise ValueError(f"the layers {self.layers!r} have no linear (state) layer to keep "
                             f"the state tensors {format_state_text(self.state)}: clear the "
                             "state tensors, or add linear layers to the pattern")
        return CacheProfile(
            layer_types=labels,
            kv_bytes_per_slot=self.kv_bytes_per_slot,
            state_const_bytes=dict(self.state),
            name=name,
            **{f: getattr(self, f) for f in CARRIED_FIELDS},
        )

    @classmethod
    def from_profile(cls, profile: CacheProfile) -> RawModel:
        return cls(
            layers=format_layer_pattern(profile.layer_types, short=True),
            kv_bytes_per_slot=profile.kv_bytes_per_slot,
            state=tuple(profile.state_const_bytes.items()),
            **{f: getattr(profile, f) for f in CARRIED_FIELDS},
        )

    def with_kv(self, kv_bytes_per_slot: int) -> RawModel:
        """This model with other KV bytes per token and layer. The KV dtype and the K / V splits
        stay while the bytes are unchanged; else they are dropped (bytes taken as given)."""
        if kv_bytes_per_slot == self.kv_bytes_per_slot:
            return self
        return replace(self, kv_bytes_per_slot=kv_bytes_per_slot, kv_dtype=None,
                       kv_tensor_bytes=(), sliding_kv_tensor_bytes=())

    def with_sliding_kv(self, sliding_kv_bytes_per_slot: int | None) -> RawModel:
        """This model with other bytes a token of a sliding layer (None: the full layers'). Its
        K / V split stays while they are unchanged; else it is dropped."""
        if sliding_kv_bytes_per_slot == self.sliding_kv_bytes_per_slot:
            return self
        return replace(self, sliding_kv_bytes_per_slot=sliding_kv_bytes_per_slot,
                       sliding_kv_tensor_bytes=())

    def with_state(self, state: tuple[tuple[str, int], ...]) -> RawModel:
        """This model with other state tensors. The ssm element size (and its dtype) stays
        while the new ssm tensor is whole elements of it, the conv rows and element size while
        the conv tensor is unchanged; else they are dropped (bytes taken as given)."""
        tensors = dict(state)
        ssm = tensors.get("ssm")
        keep = self.ssm_element_bytes is not None and ssm is not None and (
            ssm % self.ssm_element_bytes == 0)
        same_conv = tensors.get("conv") == dict(self.state).get("conv")
        return replace(self, state=state,
                       ssm_element_bytes=self.ssm_element_bytes if keep else None,
                       ssm_dtype=self.ssm_dtype if keep else None,
                       conv_rows=self.conv_rows if same_conv else None,
                       conv_element_bytes=self.conv_element_bytes if same_conv else None)


# The profile's fields as the raw-bytes editor labels them (its widgets add what 0 means): its
# errors name the fields, and the editor's own refusals these labels
RAW_LABELS = {"layer_types": "Layer pattern", "state_const_bytes": "State tensors",
              "kv_bytes_per_slot": "KV bytes per token per layer",
              "sliding_kv_bytes_per_slot": "Sliding layers' KV bytes",
              "sliding_window": "Sliding window", "attention_chunk_size": "Attention chunk"}
# a field, and the None that a widget of "0 = none" takes as 0
_RAW_FIELD = re.compile(r"\b(" + "|".join(RAW_LABELS) + r")\b( None\b)?")
# what the user typed, echoed in quotes, is theirs: it stays as typed
QUOTED = re.compile(r"""((?<!\w)'[^']*'(?!\w)|"[^"]*")""")
COMMAND_LINE_HINT = re.compile(r" \([^()]*command line\)")
# a hint's "or None when ...": the editor's "0 = the same" / "0 = none" fields take None as 0
_NONE_HINT = re.compile(r"\bor None\b")
_FIELD_ENTRY = re.compile(r"\b(" + "|".join(RAW_LABELS) + r")\['(\w+)'\]")


def in_raw_labels(message: str) -> str:
    """A profile's error with the fields it names as the Model page's raw-bytes editor labels
    them, quoted ("kv_bytes_per_slot is 0" -> '"KV bytes per token per layer" is 0'), outside
    the entries it quotes back; a hint for the command line left out. The profile's messages
    name its fields; tests/test_app_state.py makes each field's errors and checks no field name
    is left (a message reworded past these patterns fails there)."""
    # a field's entry, state_const_bytes['conv'], as the editor writes it: "State tensors" conv
    message = _FIELD_ENTRY.sub(lambda m: f"{m[1]} {m[2]}", message)
    parts = QUOTED.split(COMMAND_LINE_HINT.sub("", message))
    return "".join(part if i % 2 else _NONE_HINT.sub("or 0", _RAW_FIELD.sub(
        lambda m: f'"{RAW_LABELS[m[1]]}"' + (" 0" if m[2] else ""), part))
        for i, part in enumerate(parts))


def parse_state_text(text: str) -> tuple[tuple[str, int], ...]:
    """``conv=49152, ssm=2MiB`` -> ``(("conv", 49152), ("ssm", 2097152))``; empty text -> ()."""
    return tuple(parse_named_sizes(text, field="state tensors").items())


def format_state_text(state: tuple[tuple[str, int], ...] | Mapping[str, int]) -> str:
    items = state.items() if isinstance(state, Mapping) else state
    return ",".join(f"{name}={nbytes}" for name, nbytes in items)


def load_model_json(text: str | bytes) -> ModelSpec | CacheProfile:
    """A model JSON the app exported: a spec (``flatkv-model/1``) or a raw profile
    (``flatkv-profile/1``). Raises ValueError naming what is wrong."""
    data = parse_json_object(text, "model JSON", unique_keys=True)  # a key twice: which?
    if "format" not in data and "model_type" in data:
        raise ValueError(
            f"this is a Hugging Face config.json (model_type {data['model_type']!r}), not a "
            "model JSON: load it under Source: config.json"
        )
    if "format" not in data and (keys := sorted({"kv_bytes_per_slot", "layers"} & set(data))):
        raise ValueError(
            f"this looks like a raw profile ({', '.join(keys)}): add "
            f'"format": "{PROFILE_FORMAT}" to it, as the Model page exports it'
        )
    if data.get("format") == PROFILE_FORMAT:
        return profile_from_dict(data)
    if data.get("format", FORMAT) == FORMAT:
        return ModelSpec.from_dict(data)
    raise ValueError(
        f"model JSON format is {data.get('format')!r}: this "
        "app reads 'flatkv-model/1' and 'flatkv-profile/1' (export one from the Model page); "
        "a Hugging Face config.json goes under Source: config.json"
    )


MLA_KIND_HELP = ("Full-attention layers that keep MLA's latent (one compressed vector a token, "
                 "which the attention expands to K and V) in place of K and V")


def layer_rows(profile: CacheProfile, names: Sequence[str] | None = None) -> list[dict]:
    """One row per cache layer: index, kind (a spec's kind names when given, else as the
    page's counts name it, ``counted_kind``: a raw model's MLA latent too), its group (by its
    kind, as Layout names it: ``group_name``) and occurrence (= its slot), bytes."""
    rows = []
    labels = profile.layer_types
    for i, (label, occ) in enumerate(zip(labels, occurrence_index(labels))):
        is_state = label == LINEAR_ATTENTION
        rows.append(
            {
                "cache layer": i,
                "kind": names[i] if names else counted_kind(label, mla=profile.mla),
                "group": group_name(label, mla=profile.mla),
                "slot": occ,
                "bytes per token": profile.kv_bytes_of(label),
                "state bytes": profile.state_bytes_per_layer if is_state else 0,
            }
        )
    return rows


def kind_summary(profile: CacheProfile) -> list[dict]:
    """Per kind of cache layer, as ``spec_kind_rows`` lists a model's: how many, one layer's
    bytes a token (attention) or state bytes (state), None where a kind has no such figure and
    no column that no kind fills. The totals over all layers are the page's metrics above the
    table, the state tensors its field above it: four columns fit 1000 px."""
    rows = []
    for label in LAYER_LABELS:
        if not (count := profile.count(label)):
            continue
        is_state = label == LINEAR_ATTENTION
        rows.append({
            "kind": counted_kind(label, mla=profile.mla), "layers": count,
            "KV B per token": None if is_state else profile.kv_bytes_of(label),
            "state B per layer": profile.state_bytes_per_layer if is_state else None,
        })
    return _filled_columns(rows)


def _filled_columns(rows: list[dict]) -> list[dict]:
    """``rows`` without the columns no row fills (an attention-only model's state columns)."""
    columns = [key for key in dict.fromkeys(key for row in rows for key in row)
               if any(row.get(key) is not None for row in rows)]
    return [{key: row.get(key) for key in columns} for row in rows]


# --------------------------------------------------------------------------------------------
# The hand editor's draft: a model built kind by kind, valid or not yet.

# Kind types the editor offers -> the geometry a new kind starts from (SPEC section 2 reference
# models: Llama / Nemotron-H attention 8 x 128, gpt-oss window 128, Llama 4's chunk of 8,192,
# DeepSeek-V3 MLA, Qwen3-Next GDN, Nemotron-H Mamba2, Jamba Mamba1, LFM2's short conv, MiniMax-M1's
# lightning attention).
# Every field is then edited by hand.
KIND_TEMPLATES: dict[str, dict[str, Any]] = {
    "full attention": {"kind": "attention", "kv_heads": 8, "head_dim_k": 128,
                       "head_dim_v": 128, "sliding_window": None, "attention_chunk_size": None},
    "sliding attention": {"kind": "attention", "kv_heads": 8, "head_dim_k": 128,
                          "head_dim_v": 128, "sliding_window": 128, "attention_chunk_size": None},
    "chunked attention": {"kind": "attention", "kv_heads": 8, "head_dim_k": 128,
                          "head_dim_v": 128, "sliding_window": None, "attention_chunk_size": 8192},
    "MLA": {"kind": "mla", "kv_lora_rank": 512, "qk_rope_head_dim": 64, "index_head_dim": None},
    "GDN": {"kind": "gdn", "k_heads": 16, "v_heads": 32, "head_dim_k": 128, "head_dim_v": 128,
            "conv_kernel": 4},
    "Mamba2": {"kind": "mamba2", "n_heads": 128, "head_dim": 64, "d_state": 128, "n_groups": 8,
               "conv_kernel": 4},
    "Mamba1": {"kind": "mamba1", "d_inner": 8192, "d_state": 16, "conv_kernel": 4},
    "short conv": {"kind": "short_conv", "channels": 2048, "conv_kernel": 3},
    "lightning": {"kind": "lightning", "heads": 64, "head_dim": 128},
}
DTYPE_FIELDS = ("kv_dtype", "conv_dtype", "ssm_dtype")
# geometry fields a kind may leave out (None); the editor shows none as 0
OPTIONAL_FIELDS = ("sliding_window", "attention_chunk_size", "index_head_dim")
# an editor label shorter than the field's name, where the name would wrap at 1000 px (the
# model's mamba chunk too: "mamba chunk, tokens (0 = none)")
FIELD_LABELS = {"attention_chunk_size": "attention chunk", "mamba_chunk_size": "mamba chunk"}
# the model's own fields that the editor shows under the kinds, as a model file names them
# ("the model's mamba_chunk_size": not the strategy option's flag); tp is the sidebar's TP
_SPEC_FIELD = re.compile(r"(?:\bthe model's )?\b(attention_heads|mamba_chunk_size|max_model_len"
                         r"|tp)\b")


def _check_type_kept(name: str, field: str, value: int | None,
                     geometry: dict[str, Any]) -> None:
    """Refuse an edit that turns a kind named after its layer type into another type (a
    sliding_attention kind's window set to 0: full attention), which the model would refuse
    (``models.check_label_name``) asking for a new name, and the editor renames no kind. A
    geometry that is no layer yet is left for ``to_spec`` to say why."""
    if name not in LAYER_LABELS:
        return
    try:
        label = layer_from_dict(geometry).label
    except ValueError:
        return
    if label != name:
        what = field_label(field)
        raise ValueError(f"kind {name!r} is named after its layer type: {what} {value or 0} "
                         f"would make its layers {label}; keep its {what}, or remove the kind "
                         f"and add a {label} kind under another name")


def field_label(field: str) -> str:
    """A geometry field as the hand editor labels it: ``v_heads`` -> ``v heads``."""
    return FIELD_LABELS.get(field, field.replace("_", " "))


# the letters of a field's label that name a tensor or a format, kept in capitals where the
# editor's widget labels start a sentence ("KV heads", "SSM dtype", "QK rope head dim")
_CAPITALS = {"kv": "KV", "k": "K", "v": "V", "qk": "QK", "ssm": "SSM", "lora": "LoRA"}


def widget_label(label: str) -> str:
    """A field's label (``field_label``, words as a sentence uses them: "kv heads") as the
    hand editor's widget shows it, in sentence case as its other labels ("KV heads", "Head
    dim", "Conv dtype")."""
    words = [_CAPITALS.get(word, word) for word in label.split(" ")]
    return sentence_case(" ".join(words))


def editor_words(message: str, kind_names: Iterable[str] = ()) -> str:
    """A model file's error in the hand editor's words: ``kinds['gdn']: gdn.v_heads = 2 ...``
    -> ``gdn: v heads = 2 ...`` (the kind's name and its fields' labels, as the editor shows
    them, not the model file's keys); a model's check that names a kind's field under the
    kind's name (``kind_names``), ``gdn.k_heads = 16 is not divisible by tp = 3``, -> ``gdn's
    k heads = 16 is not divisible by TP = 3``; the model's own fields by their labels
    (``the model's mamba_chunk_size`` -> ``mamba chunk``)."""
    if "kinds[" in message:  # a kind's own check: its type's fields, after the kind's name
        message = re.sub(r"kinds\['([^']*)'\]: ", r"\1: ", message)
        kinds = "|".join(re.escape(k) for k in LAYER_KINDS)
        field = re.compile(rf"\b()(?:{kinds})\.(\w+)")  # (no owner to name: it leads)
    else:  # a model's check: a field under its kind's name in this model
        names = "|".join(re.escape(n) for n in kind_names) or "(?!)"
        field = re.compile(rf"(?<![\w.])({names})\.(\w+)")

    def in_words(part: str) -> str:
        part = field.sub(lambda m: (f"{m[1]}'s " if m[1] else "") + field_label(m[2]), part)
        return _SPEC_FIELD.sub(lambda m: "TP" if m[1] == "tp" else field_label(m[1]), part)

    # what the user typed, echoed in quotes, stays as typed (a kind named "tp")
    return "".join(part if i % 2 else in_words(part)
                   for i, part in enumerate(QUOTED.split(message)))


def _freeze(geometry: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple(geometry.items())


EDITED = " (edited)"  # what a preset changed by hand is called after its name


# what a draft writes into its spec only when set (the spec's defaults otherwise)
_OPTIONAL_DRAFT_FIELDS = ("attention_heads", "architectures", "config_mamba_ssm_dtype",
                          "config_mamba_ssm_cache_dtype", "mamba_chunk_size", "max_model_len",
                          "max_model_len_assumed", "max_model_len_typed", "mtp_layer_types",
                          "kv_shared_layer_types", "mtp_modules", "learnable_sink", "edited_from")


@dataclass(frozen=True)
class SpecDraft:
    """What the Model page's hand editor holds: named kinds (geometry dicts as exported, ``kind``
    first), a layer pattern over their names, dtypes. Unlike a ModelSpec it may be incomplete (no
    kinds yet, an empty or bad pattern, a kind no layer uses): ``to_spec`` says what is missing.
    """

    name: str = "my model"
    kinds: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = ()
    pattern: str = ""
    kv_dtype: str = "bfloat16"
    conv_dtype: str = "bfloat16"
    ssm_dtype: str = "bfloat16"
    attention_heads: int | None = None  # query heads, which decide the TPs the model takes
    mamba_chunk_size: int | None = None  # the config's chunk (vLLM's P in mamba cache mode all)
    # the config's class names (the architecture field: ``with_architectures``), then what is
    # carried from the model edited (no widget): what SGLang and vLLM read of its config
    architectures: tuple[str, ...] = ()
    config_mamba_ssm_dtype: str | None = None
    config_mamba_ssm_cache_dtype: str | None = None
    max_model_len: int | None = None
    max_model_len_assumed: bool = False  # vLLM's 2,048, the config giving no length
    max_model_len_typed: bool = False  # typed in the editor, not the model's as loaded
    # the length the model was loaded with, whether it was assumed and whether typed (a link
    # reopens a typed one typed; no widget, not written into the spec): what a max model len
    # of 0 goes back to; None: unknown (no config)
    loaded_max_model_len: int | None = None
    loaded_max_model_len_assumed: bool = False
    loaded_max_model_len_typed: bool = False
    mtp_layer_types: tuple[str, ...] = ()  # Step-3.5's sliding drafter: no full MTP layer
    kv_shared_layer_types: tuple[str, ...] = ()  # Gemma 3n's / 4's: SGLang's pool keeps them
    mtp_modules: int | None = None  # the config's num_nextn_predict_layers (0: no MTP module)
    learnable_sink: bool = False  # the config's (SGLang's DSA cache in bfloat16 then)
    # the preset the draft was seeded from (``presets.seeded_from``), carried into every model
    # it builds and their links: its class, kept on other layers, is said to be the preset's
    # (``presets.preset_class_note``), where a config.json's model keeps its own; "" for none
    edited_from: str = ""

    @classmethod
    def from_spec(cls, spec: ModelSpec) -> SpecDraft:
        """The draft of ``spec`` as the editor opens it, seeded from the preset it was made
        from where it was: the models it builds carry no source, so it carries the preset."""
        seed = presets.seeded_from(spec)
        return cls(
            name=spec.name,
            kinds=tuple((n, _freeze(layer.geometry())) for n, layer in spec.kinds.items()),
            pattern=spec.pattern, kv_dtype=spec.kv_dtype, conv_dtype=spec.conv_dtype,
            ssm_dtype=spec.ssm_dtype, attention_heads=spec.attention_heads,
            architectures=spec.architectures, config_mamba_ssm_dtype=spec.config_mamba_ssm_dtype,
            config_mamba_ssm_cache_dtype=spec.config_mamba_ssm_cache_dtype,
            mamba_chunk_size=spec.mamba_chunk_size,
            max_model_len=spec.max_model_len, max_model_len_assumed=spec.max_model_len_assumed,
            max_model_len_typed=spec.max_model_len_typed,
            loaded_max_model_len=spec.max_model_len,
            loaded_max_model_len_assumed=spec.max_model_len_assumed,
            loaded_max_model_len_typed=spec.max_model_len_typed,
            mtp_layer_types=spec.mtp_layer_types,
            kv_shared_layer_types=spec.kv_shared_layer_types,
            mtp_modules=spec.mtp_modules,
            learnable_sink=spec.learnable_sink,
            edited_from=seed.name if seed is not None else "",
        )

    @property
    def kind_names(self) -> list[str]:
        return [n for n, _ in self.kinds]

    def geometry(self, name: str) -> dict[str, Any]:
        return dict(dict(self.kinds)[name])

    def new_kind_name(self, template: str) -> str:
        """``full``, ``mamba2`` ...; ``full_2`` when the name is taken."""
        base = kind_name(layer_from_dict(KIND_TEMPLATES[template]))  # as a preset names it
        name, k = base, 2
        while name in self.kind_names:
            name, k = f"{base}_{k}", k + 1
        return name

    def with_kind(self, template: str, name: str = "") -> SpecDraft:
        """A new kind from ``KIND_TEMPLATES[template]``, named ``name`` (or a free default
        name). An empty pattern becomes the new kind's name, so one kind is a model."""
        if template not in KIND_TEMPLATES:
            raise ValueError(
                f"kind type {template!r} is unknown: pick one of {', '.join(KIND_TEMPLATES)}"
            )
        name = name.strip() or self.new_kind_name(template)
        check_kind_name(name)
        check_label_name(name, layer_from_dict(KIND_TEMPLATES[template]))
        if name in self.kind_names:
            raise ValueError(f"kind name {name!r} is taken: choose another name")
        return replace(self, kinds=(*self.kinds, (name, _freeze(KIND_TEMPLATES[template]))),
                       pattern=self.pattern if self.pattern.strip() else name)

    def without_kind(self, name: str) -> SpecDraft:
        """The draft without kind ``name`` and without its layers in the pattern (a pattern
        that does not parse is left for the user to fix)."""
        if name not in self.kind_names:
            raise ValueError(f"kind {name!r} is not in the model: kinds are {self.kind_names}")
        return replace(self, kinds=tuple((n, g) for n, g in self.kinds if n != name),
                       pattern=pattern_without(self.pattern, name))

    def with_optional(self, field: str, value: int | None) -> SpecDraft:
        """The draft with a whole-number field of the model set (0 or None: none): the query
        heads, the mamba chunk, the max model len. A length typed other than the one loaded is
        typed (no longer the 2,048 vLLM assumes for a config without one); the one loaded, or
        0, is the model's as loaded again, where it came from (its config's, or vLLM's assumed
        2,048: the length vLLM serves it at unless told), and unknown where it was loaded with
        none (a model typed from scratch, with no config). A link reopens a typed length as
        loaded, still typed: its model's length before the edit is not in the link, and 0 must
        not fall to no length at all (the pages would count at 32,768)."""
        if field != "max_model_len":
            return replace(self, **{field: value or None})
        if not value or value == self.loaded_max_model_len:
            return replace(self, max_model_len=self.loaded_max_model_len,
                           max_model_len_assumed=self.loaded_max_model_len_assumed,
                           max_model_len_typed=self.loaded_max_model_len_typed)
        return replace(self, max_model_len=value, max_model_len_assumed=False,
                       max_model_len_typed=True)

    def with_architectures(self, text: str) -> SpecDraft:
        """The draft with the config's architectures typed as ``text``, class names
        comma-separated (``architectures_problem``); empty: none, a model of no class the
        engines list (SGLang's and vLLM's choices for an unnamed model). The class picks the
        engines' pools, defaults and refusals, so a hand-made model names its own, not the one
        of the preset it was made from."""
        names = tuple(a.strip() for a in text.split(",") if a.strip())
        if why := architectures_problem(names):
            # the name at fault is in ``why``, once (before it, the field's text quoted it twice)
            raise ValueError(f"architecture: {why}: type the config.json's "
                             "architectures, comma-separated (e.g. Qwen3NextForCausalLM), or "
                             "clear the field for none")
        return replace(self, architectures=names)

    def with_field(self, name: str, field: str, value: int | None) -> SpecDraft:
        """Kind ``name``'s geometry with ``field`` set (validated by ``to_spec``); an optional
        field of 0 means none (no sliding window or chunk: full attention; no indexer: plain
        MLA)."""
        geometry = self.geometry(name)
        if field in OPTIONAL_FIELDS and not value:
            value = None
        if field == "kind" or field not in LAYER_KINDS[geometry["kind"]].__dataclass_fields__:
            raise ValueError(f"{geometry['kind']} kind {name!r} has no field {field!r}")
        geometry[field] = value
        _check_type_kept(name, field, value, geometry)
        return replace(self, kinds=tuple((n, _freeze(geometry) if n == name else g)
                                         for n, g in self.kinds))

    def to_dict(self) -> dict[str, Any]:
        """The spec export format (``ModelSpec.from_dict``) of this draft; the config's
        learnable_sink only while a layer keeps the indexer (``_keeps_indexer``)."""
        data = {"format": FORMAT, "name": self.name.strip() or "edited model",
                **{d: getattr(self, d) for d in DTYPE_FIELDS},
                "kinds": {n: dict(g) for n, g in self.kinds}, "pattern": self.pattern,
                **{f: list(v) if isinstance(v, tuple) else v for f in _OPTIONAL_DRAFT_FIELDS
                   # an MTP module count of 0 is said (a checkpoint without one), not unset
                   if (v := getattr(self, f)) or (f == "mtp_modules" and v == 0)}}
        if self.learnable_sink and not self._keeps_indexer():
            del data["learnable_sink"]
        return data

    def _keeps_indexer(self) -> bool:
        """Whether a layer of the pattern keeps DeepSeek's lightning indexer (a kind with an
        index_head_dim): without one the sinks of a DSA model loaded with learnable_sink say
        nothing (``ModelSpec`` refuses them there), and an edit that takes the indexer away
        (index_head_dim 0, the kind out of the pattern) drops them rather than fail; a pattern
        that does not parse says so first."""
        try:
            used = set(parse_pattern(self.pattern))
        except ValueError:
            return True
        return any(dict(g).get("index_head_dim") for n, g in self.kinds if n in used)

    def named_for_its_figures(self) -> SpecDraft:
        """A preset's name only on a model with the preset's figures: a changed preset goes by
        "<preset> (edited)", so pages and links never show altered figures under the preset's
        name, and one changed back (or changed in nothing that reaches the cache) by the
        preset's name."""
        preset = self.name.removesuffix(EDITED)
        if preset not in model_names():
            return self
        try:
            ours = replace(self.to_spec().profile(), name=preset)  # the figures, not the name
        except ValueError:  # not a model yet: named once it builds
            return self
        theirs = preset_spec(preset)  # the query heads decide the TPs, the length the context
        same = (ours == replace(theirs.profile(), name=preset)
                and self.attention_heads == theirs.attention_heads
                and self.max_model_len == theirs.max_model_len
                and self.max_model_len_assumed == theirs.max_model_len_assumed
                and self.max_model_len_typed == theirs.max_model_len_typed
                and self.mtp_layer_types == theirs.mtp_layer_types
                and self.kv_shared_layer_types == theirs.kv_shared_layer_types)
        name = preset if same else preset + EDITED
        return self if name == self.name else replace(self, name=name)

    def unbuilt_kind_notes(self) -> list[str]:
        """Why a kind of this draft is not a kind of the model it builds: no layer in the
        pattern names it, or another kind has the same geometry (a model's kinds are its
        distinct geometries, so the two are counted as one under the first name). Said beside
        the editor, else a kind seems to vanish from the summary. Empty while the draft does
        not build (its error says why)."""
        try:
            spec = self.to_spec()
        except ValueError:
            return []
        order = parse_pattern(self.pattern)
        name_of = {layer: name for name, layer in spec.kinds.items()}
        notes = []
        for name in self.kind_names:
            if name in spec.kinds:
                continue
            if name not in order:
                notes.append(f"Kind {name!r} is in no layer: the layer pattern does not name "
                             "it, so it adds nothing to the model.")
            else:
                first = name_of[spec.layers[order.index(name)]]
                notes.append(f"Kinds {first!r} and {name!r} have the same geometry, so the "
                             f"model counts them as one kind, {first!r} (the cache is the "
                             "same).")
        return notes

    def cache_labels(self) -> tuple[str, ...] | None:
        """The types of the draft's cache layers in order; None while it builds no spec."""
        try:
            return replace(self, kv_shared_layer_types=()).to_spec().profile().layer_types
        except ValueError:
            return None

    def kv_shared_kept_from(self, old: SpecDraft) -> SpecDraft:
        """This edit of ``old`` with its kv-shared layers, while the cache layers keep their
        types in order (a window, heads or a name changes none); an edit of which layers there
        are drops them, as they read the layers of the model as loaded."""
        keep = bool(old.kv_shared_layer_types) and (
            (labels := self.cache_labels()) is not None and labels == old.cache_labels())
        return replace(self, kv_shared_layer_types=old.kv_shared_layer_types if keep else ())

    def to_spec(self) -> ModelSpec:
        """The ModelSpec of this draft (TP 1); ValueError says what is missing or wrong."""
        if not self.kinds:
            raise ValueError("the model has no kinds yet: add a kind "
                             f"({', '.join(KIND_TEMPLATES)})")
        if not self.pattern.strip():
            raise ValueError(
                f"the layer pattern is empty: list the layers over the kind names, e.g. "
                f"{format_pattern(self.kind_names * 2)}"
            )
        try:
            return ModelSpec.from_dict(self.to_dict())
        except ValueError as exc:
            raise ValueError(editor_words(str(exc), self.kind_names)) from None


def pattern_without(pattern: str, name: str) -> str:
    """``pattern`` without the layers of kind ``name``, recompacted: ``(mamba2,full)*2`` less
    ``full`` is ``2*mamba2``; "" when no layer is left; unchanged when it does not parse."""
    try:
        names = parse_pattern(pattern)
    except ValueError:
        return pattern
    kept = [n for n in names if n != name]
    return format_pattern(kept) if kept else ""


def state_group_text(spec: ModelSpec | None) -> str:
    """What the planner's state group holds of this model: Layout and Compare name the group
    "state" (``group_name``), as their Formulas do, the plan's JSON by its id, ``linear_attention``
    (every state layer, whatever its kind, as the reference planner names it), where the
    Model page names the model's kinds (Nemotron-H's "mamba2"). Empty for a model without
    state layers, or raw bytes (no kinds known)."""
    if spec is None:
        return ""
    names = spec.layer_names
    kinds = [(count, name, layer.kind) for name, layer in spec.kinds.items()
             if layer.is_state and (count := names.count(name))]
    if not kinds:
        return ""
    held = " and ".join(f"{count:,} {name} layer{'s' if count > 1 else ''}"
                        + (f" ({kind})" if kind != name else "") for count, name, kind in kinds)
    return (f"The state group (`{LINEAR_ATTENTION}` in the plan's JSON) holds every state "
            f"layer, whatever its kind: here the model's {held}.")
