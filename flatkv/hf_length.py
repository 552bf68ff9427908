"""The context length and state chunk vLLM reads off a resolved config.

``max_model_len_of`` is vLLM's ``--max-model-len`` default (the length FlatKV's budgets and
vLLM's startup check use); ``chunk_size_of`` the state kernel's chunk, which sets how many
tokens a Mamba layer's prefix-cache checkpoints lie apart.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from flatkv.hf_fields import Recorded, field_name, given_as, whole_field
from flatkv.hf_json import as_written, rope_by_layer_type
from flatkv.models import ASSUMED_MAX_MODEL_LEN
from flatkv.plan import int_text
from flatkv.units import MAX_TOKENS

# The config fields vLLM reads a model's length from (the smallest given wins, but Cohere's
# model_max_length overrides them), and the rope types whose factor it does not apply to that
# length (vllm ModelConfig's _get_and_verify_max_len, 0.30 and later: yarn's
# max_position_embeddings is scaled already, as transformers' yarn assumes); Gemma 3's length
# is scaled already too, so no factor applies to it. LongRoPE models (Phi-3 128k, Phi-4-mini)
# are served at original_max_position_embeddings unless told (vLLM 0.12 and later).
LENGTH_FIELDS = ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length",
                 "model_max_length", "max_sequence_length", "max_seq_length", "seq_len",
                 "max_target_positions")
# The length vLLM assumes where the resolved config gives none of those fields (its
# _get_and_verify_max_len, config/model.py 2623-2640, with a warning; rope scaling then applies
# as to a length given; a --max-model-len told is taken as it is, never refused); SGLang
# 0.5.23's get_context_length returns the same 2,048, silently and unscaled
# (utils/hf_transformers/common.py 677-694), and refuses a longer --context-length unless
# allowed. Only state models' config classes lack every field (mamba, falcon_mamba, mamba2):
# transformers fills the others' in. (ASSUMED_MAX_MODEL_LEN lives in models: its past-length
# text names SGLang's unscaled 2,048.)
ASSUMED_FROM = "vLLM's assumed length (the config.json gives none)"
_UNSCALED_ROPE_TYPES = ("default", "llama3")  # LongRoPE and yarn's: their own branches
# The types whose length vLLM before 0.30 scaled (yarn: original_max_position_embeddings x
# factor; the others: the length x factor) and 0.30 and later do not
_SCALED_BEFORE_0_30 = ("yarn", "deepseek_yarn", "deepseek_llama_scaling")
_YARN_SCALED_BEFORE = "0.30"


@dataclass(frozen=True)
class ModelLength:
    """``max_model_len_of``'s answer: the length (tokens), where it comes from in words (the
    field's name, or how vLLM derives it; the source line shows it), and whether it is vLLM's
    assumed ASSUMED_MAX_MODEL_LEN (the config gives no length field). ``assumed`` is said,
    not read back off ``source``: the words are for people and may change."""

    tokens: int
    source: str
    assumed: bool


def max_model_len_of(text: Any, model_type: str) -> ModelLength:
    """The context vLLM serves the model at unless told (its --max-model-len default), and
    where it comes from, as a current vLLM derives it: the smallest length field of the
    resolved config (class defaults included), times the rope scaling factor of the types that
    scale it (linear, dynamic); a LongRoPE model's original_max_position_embeddings. Its source
    is the field's name where the length is that field's as given. Where vLLM before 0.30
    served a yarn model at another length, the source says so: a reviewer may hold an older
    log. Where the config gives no length, vLLM's assumed ASSUMED_MAX_MODEL_LEN (it warns),
    scaled as a given one: ``assumed`` is then true (the source starts with ASSUMED_FROM). A
    length that is no token count is refused."""
    lengths = {}
    for attr in LENGTH_FIELDS:
        value = getattr(text, attr, None)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_TOKENS:
            said = int_text(value) if type(value) is int else as_written(value)
            raise ValueError(f"config.json {field_name(text, attr)} is {said}: give the "
                             "model's context length "
                             f"as a positive whole number of tokens (at most {MAX_TOKENS:,}), "
                             "e.g. 131072")
        lengths[attr] = value
        if isinstance(text, Recorded):  # a transformers default is named in the notes
            text.used[attr] = value
    if lengths:
        # Command-R / Cohere: model_max_length, where given, is the length whatever the others say
        chosen = "model_max_length" if "model_max_length" in lengths else min(
            lengths, key=lengths.__getitem__)
        length = lengths[chosen]
        attr = given_as(text, chosen)
    else:  # vLLM assumes a length, then scales it as a given one
        length, attr = ASSUMED_MAX_MODEL_LEN, ASSUMED_FROM
    assumed = not lengths
    rope = getattr(text, "rope_parameters", None) or getattr(text, "rope_scaling", None)
    if isinstance(rope, Mapping) and (by_type := rope_by_layer_type(rope)) is not None:
        # one per layer type: the full-attention layers' decide the length
        rope = by_type.get("full_attention") or next(iter(by_type.values()))
    rope_type = rope.get("rope_type", rope.get("type")) if isinstance(rope, Mapping) else None
    factor = rope.get("factor") if isinstance(rope, Mapping) else None
    if rope_type in ("longrope", "su"):
        original = getattr(text, "original_max_position_embeddings", None)
        if type(original) is int and 1 <= original <= MAX_TOKENS and original != length:
            return ModelLength(original, f"original_max_position_embeddings, vLLM's default "
                               f"for a LongRoPE model ({attr} {length:,} needs "
                               "--max-model-len)", False)  # a length given
        return ModelLength(length, attr, assumed)
    if rope_type in _SCALED_BEFORE_0_30:
        return ModelLength(length, _yarn_before(rope, rope_type, factor, length, attr), assumed)
    if (rope_type in (None, *_UNSCALED_ROPE_TYPES) or factor is None
            or model_type.startswith("gemma3")):
        return ModelLength(length, attr, assumed)
    # a whole-number factor is exact and unbounded: compared, never turned into a float
    shown = int_text(factor) if type(factor) is int else as_written(factor)
    if not _positive_number(factor):
        raise ValueError(f"config.json rope scaling's factor is {shown}: give the {rope_type} "
                         "scaling factor as a positive number, e.g. 4.0")
    if not _within_tokens(length, factor):  # length x factor past any length, exactly
        raise ValueError(f"config.json rope scaling's factor is {shown}: {attr} {length:,} "
                         f"times it is past {MAX_TOKENS:,} tokens; give the {rope_type} scaling "
                         "factor the model was trained with, e.g. 4.0")
    derived = int(length * factor)  # as vLLM multiplies it (and truncates); at most 2**40 here
    return ModelLength(derived, f"{attr} {length:,} x {rope_type} factor {factor:g}, as vLLM "
                       "derives it", assumed)


def _positive_number(factor: Any) -> bool:
    """A rope factor that scales a length: a finite number above 0 (not a bool)."""
    return (not isinstance(factor, bool) and isinstance(factor, (int, float))
            and (not isinstance(factor, float) or math.isfinite(factor)) and factor > 0)


def _within_tokens(base: int, factor: int | float) -> bool:
    """``base`` x ``factor`` is at most MAX_TOKENS, compared exactly (no float overflow)."""
    return factor < Fraction(MAX_TOKENS + 1, base)


def _yarn_before(rope: Mapping[str, Any], rope_type: str, factor: Any, length: int,
                 attr: str) -> str:
    """Where a yarn model's length comes from, naming the other length vLLM before 0.30
    served it at where that differs (yarn: original_max_position_embeddings x factor;
    deepseek_yarn and deepseek_llama_scaling: the length x factor), as a reviewer's log may
    be an older one's."""
    base_attr = "original_max_position_embeddings" if rope_type == "yarn" else attr
    base = rope.get(base_attr) if rope_type == "yarn" else length
    usable = (_positive_number(factor) and not isinstance(base, bool)
              and isinstance(base, int) and 1 <= base <= MAX_TOKENS
              and _within_tokens(base, factor))
    if not usable or int(base * factor) == length:
        return attr
    return (f"{attr}, as vLLM {_YARN_SCALED_BEFORE} and later derive it (releases before "
            f"scaled it by {rope_type}'s factor: {base_attr} {base:,} x {factor:g} = "
            f"{int(base * factor):,})")


def chunk_size_of(text: Any, model_type: str) -> int | None:
    """The state kernel's chunk as vLLM's ``get_mamba_chunk_size`` reads the resolved config
    (class defaults included): ``mamba_chunk_size`` (Bamba, Falcon-H1, Granite), else
    ``chunk_size`` (Mamba2, Nemotron-H, Zamba2); None without either (Mamba1, GDN), where vLLM
    takes 2,048."""
    for attr in ("mamba_chunk_size", "chunk_size"):
        if getattr(text, attr, None) is not None:  # whole and positive: hf_json prechecked it
            return whole_field(text, attr, model_type)  # at most MAX_CHUNK_SIZE
    return None
