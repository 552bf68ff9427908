"""Reading a config.json before transformers does.

A config.json comes as a dict, pasted text, uploaded bytes or a path. Before transformers' class
resolves it, its sizes, whole numbers, dtypes, rope and layer pattern are checked here, because
transformers fails on a bad one without naming the field (a division by zero, an empty tensor,
a torch AttributeError), or takes 1.5 as a period without a word.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flatkv.hf_dtypes import config_dtype
from flatkv.jsonfile import parse_json_object, read_json_file
from flatkv.models import MAX_CACHE_LAYERS, MAX_DIM
from flatkv.plan import bound_fix, bound_refusal, int_text
from flatkv.profile import MAX_CHUNK_SIZE, MAX_WINDOW
from flatkv.units import quoted


def load_config_dict(config: dict | str | bytes | Path) -> dict[str, Any]:
    """A config.json as a dict, from a dict, pasted JSON text, uploaded bytes, or a path."""
    if isinstance(config, Mapping):
        return dict(config)
    if isinstance(config, (bytes, bytearray)):  # an upload: always JSON, never a path
        return parse_json_object(bytes(config), "uploaded config.json")
    if isinstance(config, str) and config.lstrip().startswith(("{", "[")):
        return parse_json_object(config, "pasted config.json")
    if isinstance(config, (str, Path)):
        path = Path(config)
        try:
            is_file, exists = path.is_file(), path.exists()
        except (OSError, ValueError):  # a NUL byte or an over-long name
            is_file = exists = False
        if exists and not is_file:
            raise ValueError(f"config.json at {quoted(str(path))} is not a file (a directory, "
                             "pipe or device): give the path of the config.json file")
        if not is_file:
            raise ValueError(
                f"config.json not found at {quoted(str(path))}: give a path to a file, the JSON "
                "text, or a model id"
            )
        return read_json_file(path)
    raise ValueError(f"config must be a dict, JSON text or a path, got {type(config).__name__}")


def as_written(value: Any, width: int = 60) -> str:
    """A config.json value as the file writes it (true, null, NaN, Infinity, [1, 2]), not as
    Python does (True, None, nan, inf): an error names what the user sees in the file. A string
    is quoted as the other messages quote names; past ``width`` characters, its start."""
    try:
        text = repr(value) if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):  # (a config is JSON: only a caller's dict holds others)
        text = repr(value)
    return text if len(text) <= width else f"{text[:width]} ..."


# Where multimodal configs keep the language model's own config.
NESTED = ("text_config", "llm_config")


def levels(cfg: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """The config and its nested language-model configs, each with the prefix its fields are
    named by in messages (``""``, ``"text_config."``)."""
    return [("", cfg)] + [(f"{key}.", cfg[key]) for key in NESTED
                          if isinstance(cfg.get(key), Mapping)]


def gives(cfg: Mapping[str, Any], key: str) -> bool:
    """Whether the config.json gives ``key`` a value (at its top level or in its text_config /
    llm_config): a null is none given, the class default stands."""
    return any(level.get(key) is not None for _, level in levels(cfg))


def field_of(cfg: Mapping[str, Any], key: str) -> tuple[str, Any]:
    """``key``'s value as the config.json gives it (top level first, then its text_config /
    llm_config), with the name a message calls it by; (key, None) where none is given."""
    return next(((f"{where}{key}", level[key]) for where, level in levels(cfg)
                 if level.get(key) is not None), (key, None))


def _precheck_sizes(cfg: Mapping[str, Any], where: str = "") -> None:
    """Refuse absurd layer counts before transformers builds per-layer lists from them (MTP
    layers too: Step-3.5's config lists num_hidden_layers + num_nextn_predict_layers, and at
    2**63 grew without end)."""
    for key in ("num_hidden_layers", "n_layer", "num_layers", "num_nextn_predict_layers"):
        value = cfg.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > MAX_CACHE_LAYERS:
            raise ValueError(
                f"config.json {where}{key} = {int_text(value)} "
                f"{bound_refusal(value, maximum=MAX_CACHE_LAYERS)}: "
                f"{bound_fix(value, maximum=MAX_CACHE_LAYERS)} in the field"
            )
    for key in ("layer_types", "layers_block_type", "hybrid_override_pattern"):
        value = cfg.get(key)
        if isinstance(value, (list, str)) and len(value) > MAX_CACHE_LAYERS:
            raise ValueError(
                f"config.json {where}{key} has {len(value):,} entries, too many to be real: "
                f"give {MAX_CACHE_LAYERS:,} or fewer in the field"
            )


# Sizes and layer-pattern fields that must be whole numbers, at least 1 (0 for an offset), where
# a config gives them: transformers would divide by zero, build empty tensors, or take 1.5 as a
# period, before saying anything useful.
WHOLE_FIELDS = dict.fromkeys((
    "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "head_dim", "hidden_size",
    "linear_num_key_heads", "linear_num_value_heads", "linear_key_head_dim",
    "linear_value_head_dim", "linear_conv_kernel_dim", "mamba_num_heads", "mamba_head_dim",
    "ssm_state_size", "n_groups", "conv_kernel", "expand", "mamba_n_heads", "mamba_d_head",
    "mamba_d_state", "mamba_n_groups", "mamba_d_conv", "mamba_expand", "mamba_d_ssm",
    "n_mamba_heads", "mamba_ngroups", "kv_lora_rank", "qk_rope_head_dim", "sliding_window",
    "attention_chunk_size", "global_head_dim", "num_global_key_value_heads",
    "swa_num_key_value_heads", "swa_head_dim", "swa_v_head_dim", "v_head_dim",
    "sliding_window_size", "full_attention_interval", "sliding_window_pattern", "attn_layer_period",
    "mamba_chunk_size", "chunk_size",
), 1) | {"attn_layer_offset": 0, "max_window_layers": 0, "num_nextn_predict_layers": 0}


# The most a whole field can be: a window or chunk in tokens, else a head count, dim or period.
_WHOLE_MOST = {"sliding_window": MAX_WINDOW, "attention_chunk_size": MAX_WINDOW,
               "sliding_window_size": MAX_WINDOW,
               "mamba_chunk_size": MAX_CHUNK_SIZE, "chunk_size": MAX_CHUNK_SIZE}


# Whole fields a null does not default, and the model types where (None: all): Gemma 4's
# global_head_dim null is a head_dim of None; Step-3.5's num_nextn_predict_layers null is added
# to its layer count (transformers' TypeError, "no one field to blame"), where DeepSeek's reads
# as no MTP layers.
_NO_NULL: dict[str, frozenset[str] | None] = {
    "global_head_dim": None, "num_nextn_predict_layers": frozenset({"step3p5"})}


def _precheck_whole(cfg: Mapping[str, Any], where: str = "") -> None:
    for key, least in WHOLE_FIELDS.items():
        value = cfg.get(key)
        if value is None and key in cfg and key in _NO_NULL and (
                _NO_NULL[key] is None or cfg.get("model_type") in _NO_NULL[key]):
            raise ValueError(f"config.json {where}{key} is null, which transformers passes on "
                             "as the size itself (no size) instead of taking its default: give "
                             "a whole number or remove the field")
        if value is None or value == "auto":  # null: the class default; mamba_d_head "auto"
            continue
        if key == "sliding_window_pattern" and isinstance(value, str):
            continue  # EXAONE 4's letters, read by hf_resolve._exaone_layer_types
        most = _WHOLE_MOST.get(key, MAX_DIM)
        if (wrong := bound_refusal(value, least, most)) is not None:
            # transformers' own message names a dataclass, not the field
            shown = int_text(value) if type(value) is int else as_written(value)
            raise ValueError(f"config.json {where}{key} = {shown} {wrong}: "
                             f"{bound_fix(value, least, most)}, or remove the field")


def _precheck_dtype(cfg: Mapping[str, Any], where: str = "") -> None:
    """Name a dtype field FlatKV cannot size before transformers fails on it without the
    field's name (a torch_dtype of "float128" is an AttributeError of torch there)."""
    for key in ("torch_dtype", "dtype"):
        value = cfg.get(key)
        if value is not None and not isinstance(value, str):
            raise ValueError(f"config.json {where}{key} = {as_written(value)} must be a dtype "
                             "name such as \"bfloat16\": fix or remove the field")
        if isinstance(value, str) and value != "auto":
            config_dtype(f"{where}{key}", value)


# Rope types engines build ("su" and "mrope" are older names vLLM renames; Gemma 4's full layers
# are "proportional"), and the rope fields that are numbers. A type that is no name, or one of
# these in other case ("Llama3", "YARN"), would still have its factor multiply the model's
# length (vLLM's length rule reads any type but four) though no engine builds it: refused, like
# a rope field that is no number (null: not given), which transformers fails on unnamed. Other
# names pass, as new types come with new models; the length's source line names the type.
_ROPE_TYPES = ("default", "linear", "dynamic", "ntk", "yarn", "deepseek_yarn", "longrope",
               "llama3", "mllama4", "su", "mrope", "proportional")
ROPE_NUMBERS = ("factor", "original_max_position_embeddings", "low_freq_factor",
                 "high_freq_factor", "beta_fast", "beta_slow", "attention_factor", "mscale",
                 "mscale_all_dim", "alpha", "rope_theta", "partial_rotary_factor")
# the numbers transformers compares without a check of its own when a type is given
_ROPE_NEEDS = {"llama3": ("factor", "low_freq_factor", "high_freq_factor",
                          "original_max_position_embeddings")}


def rope_by_layer_type(rope: Mapping[str, Any]) -> dict[str, Mapping[str, Any]] | None:
    """transformers 5's rope kept per layer type (``{"full_attention": {...}, ...}``), or None
    for one rope of the whole model."""
    if {"rope_type", "type"} & set(rope) or not rope or not all(
            isinstance(v, Mapping) for v in rope.values()):
        return None
    return dict(rope)


def rope_parts(rope: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """A rope field's ropes, each with the path a message names it by below the field: the
    whole (``""``), or transformers 5's one per layer type (``"full_attention."``)."""
    by_type = rope_by_layer_type(rope)
    return [("", rope)] if by_type is None else [
        (f"{kind}.", part) for kind, part in by_type.items() if isinstance(part, Mapping)]


def _precheck_rope(cfg: Mapping[str, Any], where: str = "") -> None:
    for key in ("rope_scaling", "rope_parameters"):
        rope = cfg.get(key)
        if rope is None:
            continue
        if not isinstance(rope, Mapping):
            raise ValueError(f"config.json {where}{key} = {as_written(rope)} must be an object "
                             "such as {\"rope_type\": \"yarn\", \"factor\": 4.0}: fix or "
                             "remove the field")
        for inner, part in rope_parts(rope):
            for field in ("rope_type", "type"):
                value = part.get(field)
                if isinstance(value, str) and not value.strip():
                    raise ValueError(f"config.json {where}{key}.{inner}{field} = {value!r} is "
                                     f"no rope type: use a name such as "
                                     f"{', '.join(_ROPE_TYPES[:6])}, or remove the field")
                if value is None or (isinstance(value, str) and (
                        value in _ROPE_TYPES or value.lower() not in _ROPE_TYPES)):
                    continue
                hint = (f"{value.lower()!r}: rope types are lowercase" if isinstance(value, str)
                        else f"a name such as {', '.join(_ROPE_TYPES[:6])}")
                raise ValueError(f"config.json {where}{key}.{inner}{field} = {as_written(value)} "
                                 f"is not a rope type vLLM builds: use {hint}")
            rope_type = part.get("rope_type", part.get("type"))
            if rope_type in ("longrope", "su"):
                _precheck_rope_lists(part, f"{where}{key}.{inner}", rope_type)
            for field in ROPE_NUMBERS:
                value = part.get(field)
                if value is None and field in part and field in _ROPE_NEEDS.get(rope_type, ()):
                    raise ValueError(f"config.json {where}{key}.{inner}{field} is null: "
                                     f"{rope_type} rope scaling needs it as a number: give "
                                     "the model's value")
                if value is not None and (isinstance(value, bool)
                                          or not isinstance(value, (int, float))):
                    raise ValueError(f"config.json {where}{key}.{inner}{field} = "
                                     f"{as_written(value)} must be a number: fix or remove "
                                     "the field")
                if isinstance(value, float) and not math.isfinite(value):
                    raise ValueError(f"config.json {where}{key}.{inner}{field} = "
                                     f"{as_written(value)} must be a finite number: fix or "
                                     "remove the field")
                if field == "original_max_position_embeddings" and value is not None and (
                        value < 1):  # a length (transformers' yarn divides by it)
                    raise ValueError(f"config.json {where}{key}.{inner}{field} = "
                                     f"{as_written(value)} must be a positive length in "
                                     "tokens: fix or remove the field")


def _precheck_rope_lists(rope: Mapping[str, Any], where: str, rope_type: str) -> None:
    """A longrope's short_factor and long_factor, lists of a number per rotary frequency, by
    their own paths: transformers failed on a number or null there in Python's words ("object of
    type 'int' has no len()"), which left the whole rope_scaling named; its check of their
    length, which needs the head size, is its own."""
    for field in ("short_factor", "long_factor"):
        if field not in rope:
            continue
        value = rope[field]
        if value is None:
            raise ValueError(f"config.json {where}{field} is null: {rope_type} rope scaling needs "
                             "it as a list of numbers, one a rotary frequency: give the "
                             "checkpoint's list")
        if not isinstance(value, list):
            raise ValueError(f"config.json {where}{field} = {as_written(value)} must be a list "
                             f"of numbers, one a rotary frequency ({rope_type} rope scaling): "
                             "give the checkpoint's list")
        for i, number in enumerate(value):
            if isinstance(number, bool) or not isinstance(number, (int, float)) or (
                    not math.isfinite(number)):
                raise ValueError(f"config.json {where}{field}, entry {i + 1:,} of "
                                 f"{len(value):,}, is {as_written(number)}: give a finite "
                                 "number, as the checkpoint's list does")


# transformers 5 writes floats JSON cannot hold (nemotron_h's and falcon_h1's time_step_limit
# Infinity) as {"__float__": "Infinity"}; its own file reader turns them back into floats, and
# so must a config given to it as a dict.
_FLOAT_TAGS = {"Infinity": float("inf"), "-Infinity": float("-inf"), "NaN": float("nan")}


def _special_floats(value: Any) -> Any:
    if isinstance(value, Mapping):
        if set(value) == {"__float__"} and value["__float__"] in _FLOAT_TAGS:
            return _FLOAT_TAGS[value["__float__"]]
        return {k: _special_floats(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_special_floats(v) for v in value]
    return value


_PATTERN_LETTERS = {"M": "Mamba", "*": "attention", "-": "MLP", "E": "MoE"}


def _precheck_pattern(cfg: Mapping[str, Any]) -> None:
    """Name the letter of a nemotron_h hybrid_override_pattern transformers would fail on."""
    pattern = cfg.get("hybrid_override_pattern")
    if not isinstance(pattern, str):
        return
    for i, letter in enumerate(pattern):
        if letter not in _PATTERN_LETTERS:
            known = ", ".join(f"{k} ({v})" for k, v in _PATTERN_LETTERS.items())
            raise ValueError(
                f"config.json hybrid_override_pattern has {letter!r} at position {i}: use "
                f"{known}"
            )




def _precheck_layer_list(cfg: Mapping[str, Any], where: str = "") -> None:
    """A layer_types of text or an object, which transformers iterates (its letters, its keys)
    without a word: "x" was refused as "`layer_types` entries must be in (...)", "" and {} as
    "`num_hidden_layers` (32) must be equal to the number of `layer_types` (0)", a count of
    layers the config never gave. (A number or true fails in transformers' own check.)"""
    value = cfg.get("layer_types")
    if isinstance(value, (str, Mapping)):
        raise ValueError(f"config.json {where}layer_types = {as_written(value)} must be a list "
                         "of the layers' types, one a layer (such as [\"full_attention\", "
                         "\"sliding_attention\"]): fix or remove the field")


def prechecked(cfg: Mapping[str, Any]) -> Mapping[str, Any]:
    """``cfg`` with its special floats read, once its sizes, whole numbers, dtypes, rope and
    layer pattern pass the checks transformers would make less clearly (or not at all)."""
    for key in NESTED:  # a nested config is an object, or absent
        if cfg.get(key) is not None and not isinstance(cfg[key], Mapping):
            raise ValueError(f"config.json {key} = {as_written(cfg[key])} must be an object (the "
                             "language model's config): fix or remove it")
    cfg = _special_floats(cfg)  # the checks below read {"__float__": "NaN"} as the float it is
    for where, level in levels(cfg):
        _precheck_sizes(level, where)
        _precheck_whole(level, where)
        _precheck_dtype(level, where)
        _precheck_rope(level, where)
        _precheck_layer_list(level, where)
    _precheck_pattern(cfg)
    return cfg
