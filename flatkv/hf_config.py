"""Model specifications from Hugging Face ``config.json`` files.

A config.json is resolved with ``transformers``' own configuration class for its model type
(``AutoConfig.for_model(model_type, **config)``), so defaults, legacy fields (nemotron_h's
``hybrid_override_pattern``, jamba's attention period / offset, qwen3_next's
``full_attention_interval``, granite's ``mamba`` / ``attention`` labels) and multimodal nesting
(qwen3_5's and gemma3's ``text_config``) resolve exactly as the model's code resolves them.
``transformers`` is imported only when needed; a model id or pasted text comes through
``flatkv.hf_hub``.

The steps live beside this module: ``hf_json`` reads and prechecks the JSON, ``hf_resolve``
has transformers resolve it (and names the field to blame where transformers fails),
``hf_checks`` refuses a resolved config the engines would read otherwise, ``hf_fields`` reads a
resolved config's sizes by name, ``hf_dtypes`` chooses the dtypes an engine keeps each cache
in, ``hf_length`` the context length vLLM serves, ``hf_notes`` the caveats shown beside the
figures; this module turns the resolved layers into a ``ModelSpec`` and says in its ``source``
what it read and what transformers filled in.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from flatkv.dtypes import STATE_DTYPES
from flatkv.hf_checks import (
    check_config,
    check_heads_cover,
    check_indexer_everywhere,
    check_text_config,
    refuse_top_level_text_fields,
)
from flatkv.hf_dtypes import (
    kv_dtype_of,
    served_dtype,
    sglang_ssm_dtype_of,
    ssm_dtype_of,
    vllm_config_ssm_dtype_of,
)
from flatkv.hf_fields import (
    BAILING_KDA_GIVEN_AS,
    KDA_GIVEN_AS,
    Recorded,
    field_name,
    gemma4_full_fields,
    whole_field,
)
from flatkv.hf_json import NESTED, as_written, field_of, load_config_dict
from flatkv.hf_length import chunk_size_of, max_model_len_of
from flatkv.hf_notes import model_notes
from flatkv.hf_resolve import (
    FAMILIES,
    SERVED_AS,
    STATE_ONLY,
    default_class,
    resolve_config,
)
from flatkv.hf_resolve import SUPPORTED_MODEL_TYPES as SUPPORTED_MODEL_TYPES  # public here
from flatkv.models import (
    ATTENTION_LABELS,
    MAX_CACHE_LAYERS,
    AttentionLayer,
    CacheLayer,
    GDNLayer,
    LightningLayer,
    Mamba1Layer,
    Mamba2Layer,
    MLALayer,
    ModelSpec,
    ShortConvLayer,
)
from flatkv.profile import check_architectures
from flatkv.tp_split import CONFIG_JSON, HEADS_GCD
from flatkv.units import check_name, control_character, quoted, quoted_value

# Labels transformers gives layers that carry no cache.
_CACHELESS = {"mlp", "moe"}


# --------------------------------------------------------------------------------------------
# Resolving with transformers.


@dataclass(frozen=True)
class _Split:
    """A figure a TP splits as a layer builder read it: its value, and the attribute of the
    resolved config that gave it (a phrase where no one attribute does: Jamba's ``mamba_expand
    x hidden_size``, Gemma 4's ``per_layer_config num_key_value_heads``)."""

    value: int
    attr: str


def _split(text: Any, attr: str, model_type: str) -> _Split:
    """The figure a TP splits that ``attr`` gives, read (and checked) by ``whole_field``."""
    return _Split(whole_field(text, attr, model_type), attr)


_Layer = TypeVar("_Layer", bound=CacheLayer)


def _built(text: Any, layer_class: type[_Layer], **fields: Any) -> _Layer:
    """A ``layer_class`` layer of ``fields``, those a TP splits given as ``_Split``. Which
    attribute gave each is remembered on ``text`` (``Recorded.split_from``), so that a TP
    refusal names the key the builder read (``_config_keys``): no list of names kept beside the
    builders, which a builder reading another attribute would leave naming the old one."""
    try:
        layer = layer_class(**{name: value.value if isinstance(value, _Split) else value
                               for name, value in fields.items()})
    except ValueError as exc:  # the layer's own check names its fields: said by their keys
        said = str(exc)
        for name, value in fields.items():
            if isinstance(value, _Split):
                key = field_name(text, value.attr)
                said = said.replace(f"{layer_class.kind}.{name} ", f"{key} ")
        raise ValueError(f"config.json {said}" if said != str(exc) else said) from None
    if isinstance(text, Recorded):
        text.split_from[layer] = {name: value.attr for name, value in fields.items()
                                  if isinstance(value, _Split)}
    return layer


def _attention(text: Any, model_type: str, window: int | None, *, chunked: bool = False
               ) -> AttentionLayer:
    """An attention layer: sliding over ``window`` tokens where given, chunked (Llama 4's
    attention_chunk_size) where ``chunked``."""
    query = _split(text, "num_attention_heads", model_type)
    if model_type == "zamba2":  # vLLM: one KV head per query head, of attention_head_dim
        head_dim = whole_field(text, "attention_head_dim", model_type)
        return _built(text, AttentionLayer, kv_heads=query, head_dim_k=head_dim,
                      head_dim_v=head_dim)
    kv = (query if getattr(text, "num_key_value_heads", None) is None
          else _split(text, "num_key_value_heads", model_type))
    heads, kv_heads = query.value, kv.value
    if heads % kv_heads:  # grouped-query attention: every KV head serves whole query heads
        raise ValueError(
            f"{model_type} config.json {field_name(text, 'num_attention_heads')} = {heads} is "
            f"not a multiple of {field_name(text, 'num_key_value_heads')} = {kv_heads}: no "
            "engine loads such a model; fix the config"
        )
    head_dim = getattr(text, "head_dim", None)
    if head_dim is None:  # the models' own fallback
        hidden = whole_field(text, "hidden_size", model_type)
        if hidden < heads:
            raise ValueError(f"{model_type} config.json "
                             f"{field_name(text, 'num_attention_heads')} = "
                             f"{heads} is more than {field_name(text, 'hidden_size')} = "
                             f"{hidden}, which it divides into head_dim: fix the config, or "
                             "give head_dim")
        head_dim = hidden // heads
    else:
        head_dim = whole_field(text, "head_dim", model_type)
    chunk = whole_field(text, "attention_chunk_size", model_type) if chunked else None
    return _built(text, AttentionLayer, kv_heads=kv, head_dim_k=head_dim, head_dim_v=head_dim,
                  sliding_window=window, attention_chunk_size=chunk)


def _gemma4_full(text: Any, model_type: str, index: int) -> AttentionLayer:
    """A Gemma 4 full-attention layer as its per-layer config gives it (vLLM's gemma4 reads
    ``per_layer_config[i]``; the fields: gemma4_full_fields). With attention_k_eq_v V is K's
    copy, but vLLM and SGLang store both, so the bytes count K and V."""
    view = text.per_layer_config[index]
    names = gemma4_full_fields(text)
    values = {}
    for attr, field in names.items():
        value = getattr(view, attr, None)
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"{model_type} config.json {field_name(text, field)} = "
                             f"{as_written(value)}: the "
                             "full-attention layers need a positive whole number; fix the "
                             "config")
        values[attr] = value
        if isinstance(text, Recorded) and " " not in field:  # a default is named in the notes
            text.used[field] = value
    heads = whole_field(text, "num_attention_heads", model_type)
    if heads % values["num_key_value_heads"]:
        raise ValueError(
            f"{model_type} config.json {field_name(text, 'num_attention_heads')} = {heads} is "
            f"not a multiple of {field_name(text, names['num_key_value_heads'])} = "
            f"{values['num_key_value_heads']}: no engine loads such a model; fix the config")
    return _built(text, AttentionLayer,
                  kv_heads=_Split(values["num_key_value_heads"], names["num_key_value_heads"]),
                  head_dim_k=values["head_dim"], head_dim_v=values["head_dim"])


def _mimo_v2_layers(text: Any, model_type: str, n_layers: int) -> list[CacheLayer]:
    """MiMo-V2-Flash's layers as vLLM's mimo_v2 builds them: sliding where
    ``hybrid_layer_pattern[i]`` is 1 (transformers' own layer_types are not read), of
    swa_num_key_value_heads x (swa_head_dim + swa_v_head_dim) over sliding_window_size tokens
    (transformers' sliding_window is one more; SGLang 0.5.23's mimo_v2 and its ModelConfig read
    sliding_window_size first too); full ones of num_key_value_heads x (head_dim +
    v_head_dim). K and V differ in width, so a token's bytes are those sums."""
    pattern = getattr(text, "hybrid_layer_pattern", None)
    field = field_name(text, "hybrid_layer_pattern")
    why = "vLLM and SGLang read which layers slide from it (1) and which attend fully (0)"
    if pattern is None:
        raise ValueError(f"{model_type} config.json has no {field}: {why}; add it as the "
                         "checkpoint's config.json gives it")
    if (not isinstance(pattern, list) or len(pattern) != n_layers
            or any(bit not in (0, 1) or isinstance(bit, bool) for bit in pattern)):
        raise ValueError(f"{model_type} config.json {field} = {as_written(pattern)}: {why}, one "
                         f"entry a layer of {n_layers:,}; give it as the checkpoint's "
                         "config.json does")

    def layer(prefix: str, window: int | None) -> AttentionLayer:
        dim = whole_field(text, f"{prefix}head_dim", model_type)
        dim_v = (whole_field(text, f"{prefix}v_head_dim", model_type)
                 if getattr(text, f"{prefix}v_head_dim", None) is not None else dim)
        kv_heads = _split(text, f"{prefix}num_key_value_heads", model_type)
        return _built(text, AttentionLayer, kv_heads=kv_heads, head_dim_k=dim, head_dim_v=dim_v,
                      sliding_window=window)

    full = layer("", None) if 0 in pattern else None
    sliding = (layer("swa_", whole_field(text, "sliding_window_size", model_type))
               if 1 in pattern else None)
    return [sliding if bit else full for bit in pattern]


# The Mamba2 fields of a model type: heads, expand, head dim, d_state, groups, conv kernel.
_MAMBA2_NAMES = {
    "zamba2": ("n_mamba_heads", "mamba_expand", "mamba_headdim", "mamba_d_state",
               "mamba_ngroups", "mamba_d_conv"),
    "mamba2": ("num_heads", "expand", "head_dim", "state_size", "n_groups", "conv_kernel"),
}


def _mla(text: Any, model_type: str) -> MLALayer:
    """The latent KV of an MLA layer (DeepSeek's, Kimi Linear's full layers), with the lightning
    indexer's keys where the config has an index_topk, as vLLM tells DeepSeek-V3.2 apart."""
    indexed = getattr(text, "index_topk", None) is not None
    return MLALayer(kv_lora_rank=whole_field(text, "kv_lora_rank", model_type),
                    qk_rope_head_dim=whole_field(text, "qk_rope_head_dim", model_type),
                    index_head_dim=(whole_field(text, "index_head_dim", model_type)
                                    if indexed else None))


def _conv_kernel(text: Any, attr: str, model_type: str) -> int:
    """A state layer's conv kernel, at least 2 (its conv state keeps kernel - 1 tokens), refused
    by the field config.json gives it in (Kimi Linear's
    linear_attn_config.short_conv_kernel_size, Bailing's short_conv_kernel_size)."""
    kernel = whole_field(text, attr, model_type)
    if kernel >= 2:
        return kernel
    field = field_name(text, attr)
    raise ValueError(f"config.json {field} = {kernel} must be at least 2: the {model_type} "
                     "conv state keeps kernel - 1 tokens; check the model's value")


def _state_layer(text: Any, model_type: str) -> CacheLayer:
    family = FAMILIES[model_type]
    g = lambda attr: whole_field(text, attr, model_type)  # noqa: E731
    split = partial(_split, text, model_type=model_type)  # a figure a TP splits, by its attr
    build = partial(_built, text)
    kernel = partial(_conv_kernel, text, model_type=model_type)
    if family == "lightning":  # vLLM's linear_attention_state_shape(num_attention_heads, tp,
        # head_dim): the query heads, not the KV heads; head_dim with no fallback
        return build(LightningLayer, heads=split("num_attention_heads"), head_dim=g("head_dim"))
    if family == "short_conv":  # vLLM's short_conv_state_shape(hidden_size, conv_L_cache)
        channels = split("hidden_size")
        # LFM3's classes size it by hidden_size alone (vLLM's _short_conv_state_shape)
        if (model_type != "lfm3" and getattr(text, "conv_dim", None) is not None
                and g("conv_dim") != channels.value):
            raise ValueError(
                f"{model_type} config.json {field_name(text, 'conv_dim')} = {g('conv_dim')} is "
                f"not {field_name(text, 'hidden_size')} = "
                f"{channels.value}: vLLM's LFM2 sizes its conv state by conv_dim, SGLang's (and "
                "vLLM's LFM2-MoE) by hidden_size, so the engines would differ; check the "
                "model's values")
        return build(ShortConvLayer, channels=channels, conv_kernel=kernel("conv_L_cache"))
    if family == "kda":
        # vLLM's kda_state_shape: conv (heads x d + 2 x heads x d) / tp by K - 1, recurrent
        # (heads / tp, d, d): GDN's shapes with as many key heads as value heads
        heads, head_dim = split("linear_num_heads"), g("linear_head_dim")
        return build(GDNLayer, k_heads=heads, v_heads=heads, head_dim_k=head_dim,
                     head_dim_v=head_dim, conv_kernel=kernel("linear_conv_kernel_dim"))
    if family == "gdn":
        return build(
            GDNLayer, k_heads=split("linear_num_key_heads"),
            v_heads=split("linear_num_value_heads"),
            head_dim_k=g("linear_key_head_dim"), head_dim_v=g("linear_value_head_dim"),
            conv_kernel=kernel("linear_conv_kernel_dim"),
        )
    if model_type == "nemotron_h":
        return build(
            Mamba2Layer, n_heads=split("mamba_num_heads"), head_dim=g("mamba_head_dim"),
            d_state=g("ssm_state_size"), n_groups=split("n_groups"),
            conv_kernel=kernel("conv_kernel"),
        )
    if model_type in ("zamba2", "mamba2"):
        # vLLM sizes the conv state by expand x hidden_size and the ssm state by heads x head
        # dim (zamba2's transformers class derives the heads from the two)
        names = _MAMBA2_NAMES[model_type]
        heads = split(names[0])
        expand, head_dim, d_state = (g(attr) for attr in names[1:4])
        groups = split(names[4])
        check_heads_cover(heads.value, head_dim, expand * g("hidden_size"),
                          tuple(field_name(text, attr) for attr in names))
        return build(Mamba2Layer, n_heads=heads, head_dim=head_dim, d_state=d_state,
                     n_groups=groups, conv_kernel=kernel(names[-1]))
    if model_type in ("mamba", "falcon_mamba"):  # vLLM's mamba1_state_shape over these
        return build(Mamba1Layer, d_inner=split("intermediate_size"), d_state=g("state_size"),
                     conv_kernel=kernel("conv_kernel"))
    if family == "mamba2":  # granitemoehybrid, bamba, falcon_h1 share the mamba_* names
        return build(
            Mamba2Layer, n_heads=split("mamba_n_heads"), head_dim=g("mamba_d_head"),
            d_state=g("mamba_d_state"), n_groups=split("mamba_n_groups"),
            conv_kernel=kernel("mamba_d_conv"),
        )
    if family == "mamba1":  # no one key gives d_inner: named by the two it is the product of
        expand = g("mamba_expand")
        return build(
            Mamba1Layer,
            d_inner=_Split(expand * g("hidden_size"), "mamba_expand x hidden_size"),
            d_state=g("mamba_d_state"), conv_kernel=kernel("mamba_d_conv"),
        )
    raise ValueError(f"{model_type} has linear_attention layers but no state kind is known")


def _key_of(recorded: Recorded, model_type: str, attr: str, value: int) -> tuple[str, bool]:
    """The config.json key that gave ``attr`` its ``value``, as the file writes it (an alias the
    config class maps to it, Step-3.5's num_attention_groups; Kimi Linear's
    linear_attn_config.num_heads; Bailing's KDA sizes' own fields), and whether the file gives
    it; the attribute's own name where transformers filled it in. A phrase names where the
    file gives it: Jamba's ``mamba_expand x hidden_size``, Gemma 4's ``per_layer_config
    ...``."""
    given, where = recorded.given, recorded.where
    aliases = getattr(recorded.conf, "attribute_map", {})
    names = [attr, *(alias for alias, name in aliases.items() if name == attr)]
    if model_type == "bailing_hybrid" and attr in BAILING_KDA_GIVEN_AS:
        names.append(BAILING_KDA_GIVEN_AS[attr])
    if " " in attr:  # Jamba's product, given where both are; Gemma 4's per_layer_config field
        parts = attr.split(" x ")
        return attr, len(parts) == 1 or all(given.get(part) is not None for part in parts)
    if found := next((name for name in names if given.get(name) == value), None):
        return f"{where}{found}", True
    linear = given.get("linear_attn_config")
    if isinstance(linear, Mapping) and linear.get(KDA_GIVEN_AS.get(attr)) == value:
        return f"{where}linear_attn_config.{KDA_GIVEN_AS[attr]}", True
    return f"{where}{attr}", False


def _config_keys(recorded: Recorded, model_type: str, layers: Sequence[CacheLayer],
                 attention_heads: int | None, heads_note: str
                 ) -> tuple[tuple[tuple[str, str, str, int], tuple[str, bool]], ...]:
    """For ``ModelSpec._config_keys``: each figure a TP splits (its layer type, label, field
    and value), by the config.json key that gave it, so that a TP refused names the key
    (``tp_split.config_words``). The query heads too, unless they are two kinds' greatest
    common divisor (``heads_note`` says so)."""
    keys = [((layer.kind, layer.label, field, getattr(layer, field)),
             _key_of(recorded, model_type, attr, getattr(layer, field)))
            for layer in dict.fromkeys(layers)
            for field, attr in recorded.split_from.get(layer, {}).items()]
    if attention_heads is not None and not heads_note:
        keys.append((("", "", "attention_heads", attention_heads),
                     _key_of(recorded, model_type, "num_attention_heads", attention_heads)))
    return tuple(keys)


def _layers_of(text: Any, model_type: str) -> list[CacheLayer]:
    """Cache layers in model order, from the resolved (text) config: a model whose every layer
    is alike (``_uniform_layers``), else one per entry of its layer types (``_layer_labels``),
    each kind's layer built once (``_labelled_layer``) and repeated."""
    n_layers = whole_field(text, _DECODER_LAYERS.get(model_type, "num_hidden_layers"), model_type)
    if (uniform := _uniform_layers(text, model_type, n_layers)) is not None:
        return uniform
    labels = _layer_labels(text, model_type, n_layers)
    cache: dict[str, CacheLayer | tuple[CacheLayer, ...]] = {}
    layers: list[CacheLayer] = []
    for i, label in enumerate(labels):
        if label in _CACHELESS:
            continue
        if label not in cache:
            cache[label] = _labelled_layer(text, model_type, label, i, len(labels))
        entry = cache[label]
        layers.extend(entry if isinstance(entry, tuple) else (entry,))
    if not layers:
        raise ValueError(f"{model_type} config.json has no cache layers (only MLP / MoE layers)")
    return layers


def _uniform_layers(text: Any, model_type: str, n_layers: int) -> list[CacheLayer] | None:
    """The layers of a model whose config names no layer types because its layers' caches
    follow from its model type alone (MLA, state only, Falcon-H1's attention beside Mamba2 in
    every layer, MiMo-V2-Flash's own pattern); None for a model read by its layer types."""
    if model_type == "longcat_flash":  # two MLA attentions a decoder layer, a cache each
        return [_mla(text, model_type)] * (2 * n_layers)
    if FAMILIES[model_type] == "mla":
        return [_mla(text, model_type)] * n_layers
    if model_type in STATE_ONLY:  # no attention: every layer keeps a state
        return [_state_layer(text, model_type)] * n_layers
    if model_type == "mimo_v2_flash":
        return _mimo_v2_layers(text, model_type, n_layers)
    if model_type == "falcon_h1":  # every layer runs attention and Mamba2 side by side
        return [_attention(text, model_type, None), _state_layer(text, model_type)] * n_layers
    return None


def _layer_labels(text: Any, model_type: str, n_layers: int) -> list[str]:
    """Each layer's type, as vLLM reads the config: Llama 4's from its no_rope_layers, else
    ``layer_types``, else one kind for all ``n_layers``; without the layers that keep no cache
    of their own (Gemma 3n's KV-shared ones)."""
    labels = (_llama4_layer_types(text, model_type) if model_type.startswith("llama4")
              else getattr(text, "layer_types", None))
    if labels is None:
        # llama, mistral, mixtral: one kind for all layers; Mistral-style configs slide them
        # all, unless use_sliding_window is false (a Qwen2-style config relabelled), as vLLM's
        # sliding window reads it
        slides = (getattr(text, "sliding_window", None) is not None
                  and getattr(text, "use_sliding_window", True) is not False)
        labels = ["sliding_attention" if slides else "full_attention"] * n_layers
    labels = list(labels)
    if not labels:
        raise ValueError(f"{model_type} config.json resolves to no layers: set num_hidden_layers")
    # Gemma 3n's last num_kv_shared_layers layers read the KV of an earlier layer of their type
    # (kv_sharing_target_layer_name in vLLM's gemma3n): no cache of their own
    return labels[:len(labels) - _kv_shared_layers(text, model_type, len(labels))]


def _labelled_layer(text: Any, model_type: str, label: str, i: int,
                    n_labels: int) -> CacheLayer | tuple[CacheLayer, ...]:
    """The cache of a layer of type ``label`` (layer ``i`` of ``n_labels``, the first of its
    type, which its errors name), or of Zamba2's hybrid layer its two; a ValueError naming
    the layer where the config cannot give it one, or where FlatKV models no such type."""
    family = FAMILIES[model_type]
    if label == "full_attention":
        return (_mla(text, model_type) if family == "kda"
                else _gemma4_full(text, model_type, i) if model_type.startswith("gemma4")
                else _attention(text, model_type, None))
    if label == "sliding_attention":
        if getattr(text, "sliding_window", None) is None:
            raise ValueError(f"{model_type} layer {i:,} is sliding_attention but sliding_window "
                             "is not set: add sliding_window to the config")
        return _attention(text, model_type, whole_field(text, "sliding_window", model_type))
    if label == "chunked_attention":
        # Llama 4: layer_types as transformers derives it from no_rope_layers (1 = RoPE
        # = chunked, as vLLM's llama4 reads it) and attention_chunk_size
        return _attention(text, model_type, None, chunked=True)
    if label == "linear_attention" and family in ("attention", "mla"):
        field = field_name(text, "layer_types")
        raise ValueError(
            f"{model_type} config.json {field}, entry {i + 1:,} of {n_labels:,}, is "
            f"'linear_attention', but {model_type} has no linear-attention (state) layers: "
            "write its layers as the checkpoint's config.json does (full_attention, "
            "sliding_attention), or fix model_type")
    if label == "linear_attention" or (label == "conv" and family == "short_conv"):
        return _state_layer(text, model_type)
    if label == "hybrid" and model_type == "zamba2":
        # the shared attention block (a KV cache of its own at every use), then Mamba2
        return (_attention(text, model_type, None), _state_layer(text, model_type))
    raise ValueError(
        f"{model_type} layer {i:,} has layer type {quoted_value(label)}, which FlatKV does not "
        "model: known types are full_attention, sliding_attention, chunked_attention, "
        "linear_attention, mlp, moe (hybrid in zamba2, conv in lfm2)")


def _llama4_layer_types(text: Any, model_type: str) -> list[str]:
    """Llama 4's layers as vLLM's llama4 decides them: chunked local attention where
    ``no_rope_layers[i]`` is not 0 (a RoPE layer) and ``attention_chunk_size`` is set, global
    attention elsewhere. vLLM never reads ``layer_types``, so a config whose layer_types say
    otherwise is refused rather than planned as vLLM would not run it."""
    chunk = getattr(text, "attention_chunk_size", None)
    # transformers fills no_rope_layers in (a NoPE layer every 4th) and checks its length
    derived = ["chunked_attention" if flag and chunk else "full_attention"
               for flag in text.no_rope_layers]
    given = getattr(text, "layer_types", None)
    if given is not None and list(given) != derived:
        raise ValueError(
            f"{model_type} config.json {field_name(text, 'layer_types')} disagree with "
            "no_rope_layers and attention_chunk_size, which vLLM's llama4 reads (chunked where "
            "no_rope_layers is 1 and a chunk is set): drop layer_types or make them agree")
    return derived


# The model types whose last num_kv_shared_layers layers read an earlier layer's KV cache
_KV_SHARING = ("gemma3n", "gemma4")


def _kv_shared_layers(text: Any, model_type: str, n_layers: int) -> int:
    """How many of the last layers reuse an earlier layer's KV cache (Gemma 3n's and Gemma 4's
    num_kv_shared_layers), 0 for other models; at least one layer must keep its own."""
    if (not model_type.startswith(_KV_SHARING) or not getattr(text, "num_kv_shared_layers", 0)):
        return 0
    shared = whole_field(text, "num_kv_shared_layers", model_type, minimum=0)
    types = list(getattr(text, "layer_types", None) or [])
    own = n_layers - shared
    if shared < n_layers and (orphans := sorted(set(types[own:]) - set(types[:own]))):
        # a shared layer reads the last own layer of its type: none of that type keeps one
        raise ValueError(
            f"{model_type} config.json {field_name(text, 'num_kv_shared_layers')} = {shared} "
            f"leaves no {', '.join(orphans)} layer a cache of its own for the shared ones of "
            "that type to read (transformers refuses it too): give fewer")
    if shared >= n_layers:
        raise ValueError(f"{model_type} config.json {field_name(text, 'num_kv_shared_layers')} = "
                         f"{shared} leaves none "
                         f"of its {n_layers:,} layers a KV cache of its own: give fewer than "
                         f"{n_layers:,}")
    return shared


def _mtp_layer_types(text: Any, cfg: Mapping[str, Any], model_type: str) -> tuple[str, ...]:
    """The layer types of the model's MTP modules as vLLM builds them, where the config says:
    its ``mtp_layer_types`` (Step-3.5's, split off its layer_types by transformers), else, for
    K-EXAONE, the model's first layer types (vLLM's exaone_moe reads ``mtp_layer_types or
    layer_types`` at the MTP layer's index, from 0); empty otherwise (an MTP module is then one
    full-attention layer, as Qwen3-Next's and DeepSeek-V3's are)."""
    field, given = field_of(cfg, "mtp_layer_types")  # transformers splits a string up
    if given is not None and (not isinstance(given, list)
                              or not all(isinstance(k, str) for k in given)):
        raise ValueError(f"config.json {field} = {as_written(given)} must be a list of layer "
                         "types, one per MTP layer (e.g. [\"sliding_attention\"]): fix or "
                         "remove it")
    kinds = list(getattr(text, "mtp_layer_types", None) or [])
    if not kinds and model_type == "exaone_moe":
        # vLLM's ExaoneMoeMTP builds num_nextn_predict_layers of them, 1 unless given
        modules = getattr(text, "num_nextn_predict_layers", None)
        modules = 1 if modules is None else modules
        types = list(getattr(text, "layer_types", None) or [])
        if isinstance(modules, bool) or not isinstance(modules, int) or not (
                0 <= modules <= len(types)):
            raise ValueError(f"exaone_moe config.json num_nextn_predict_layers = "
                             f"{as_written(modules)}: "
                             f"vLLM reads each MTP layer's type from layer_types at its index, "
                             f"so give a whole number from 0 to its {len(types):,} layers")
        kinds, field = types[:modules], "layer_types"
    if odd := next((k for k in kinds if k not in ATTENTION_LABELS), None):
        raise ValueError(f"config.json {field} gives an MTP layer the type {quoted_value(odd)}: "
                         "an MTP "
                         f"layer is one of {', '.join(ATTENTION_LABELS)}; fix it")
    return tuple(kinds)


# The field a model type counts its decoder layers by, where not num_hidden_layers
_DECODER_LAYERS = {"longcat_flash": "num_layers"}


# SGLang's own Step3p5Config: its full layers' KV groups when the config.json gives none
SGLANG_STEP3P5_GROUPS = 8


def _step3p5_heads(text: Any, cfg: Mapping[str, Any], heads: int | None,
                   layers: Sequence[CacheLayer]) -> tuple[int | None, str]:
    """Step-3.5's query heads a TP must divide, and what the notes say of its sliding layers.

    Its sliding layers have query heads of their own (``attention_other_setting``'s
    ``num_attention_heads``, 96 beside the full layers' 64); engines split both over the
    ranks, so a TP divides their greatest common divisor. vLLM gives every layer the model's
    KV groups (transformers' ``num_key_value_heads``, the config's ``num_attention_groups``);
    SGLang 0.5.23 gives its full layers ``num_attention_groups`` (8 unless given) and its
    sliding ones ``attention_other_setting.num_attention_groups``, which it cannot load
    without. Where the engines' groups differ they keep different bytes a token, which FlatKV
    does not model: refused."""
    conf = vars(text).get("conf", text)  # not recorded: a field the config gives nested
    groups = getattr(conf, "num_key_value_heads", None)
    if groups is None:  # a null (absent, transformers gives 8): not MHA, as it would read
        name = "num_key_value_heads" if "num_key_value_heads" in cfg else "num_attention_groups"
        raise ValueError(f"step3p5 config.json {name} is null: vLLM's Step-3.5 reads the full "
                         f"layers' KV groups from it, SGLang takes {SGLANG_STEP3P5_GROUPS}; "
                         "give the model's value or remove the field")
    kinds = {layer.label for layer in layers if not layer.is_state}
    field, other = field_of(cfg, "attention_other_setting")
    if other is not None and not isinstance(other, Mapping):
        raise ValueError(f"step3p5 config.json {field} = {as_written(other)} must be an object "
                         "(the sliding layers' num_attention_heads and num_attention_groups): "
                         "fix or remove it")
    other = other or {}

    def differs(name: str, theirs: Any, layer_kind: str) -> None:
        if layer_kind in kinds and groups is not None and theirs != groups:
            raise ValueError(
                f"step3p5 config.json {name} = {as_written(theirs)} is not the {groups} KV "
                "groups vLLM gives every layer (num_attention_groups): SGLang gives the "
                f"{layer_kind} layers {as_written(theirs)}, so the engines keep different bytes "
                "a token, which FlatKV does not model (one KV size for every attention layer); "
                "check the model's values")

    given_name, given = field_of(cfg, "num_attention_groups")
    differs(given_name if given is not None else "num_attention_groups (SGLang's default)",
            SGLANG_STEP3P5_GROUPS if given is None else given, "full_attention")
    notes = []
    if "sliding_attention" in kinds:
        missing = [key for key in ("num_attention_heads", "num_attention_groups")
                   if other.get(key) is None]
        if missing:
            notes.append(f"SGLang 0.5.23 reads the sliding layers' "
                         f"{' and '.join(missing)} from {field}, which this config.json does "
                         "not give there: it would not load it; its figures here give them "
                         "the model's.")
        if other.get("num_attention_groups") is not None:
            differs(f"{field}.num_attention_groups", other["num_attention_groups"],
                    "sliding_attention")
        # the sliding layers' query heads, as transformers took them from either field
        sliding = getattr(conf, "num_sliding_attention_heads", None)
        named = (f"{field}.num_attention_heads" if other.get("num_attention_heads") is not None
                 else "num_sliding_attention_heads")
        if sliding is not None and (isinstance(sliding, bool) or not isinstance(sliding, int)
                                    or sliding <= 0 or (groups and sliding % groups)):
            raise ValueError(f"step3p5 config.json {named} = {as_written(sliding)} must be a "
                             f"positive multiple of the {groups} KV groups (the sliding "
                             "layers' query heads): check the model's values")
        if isinstance(sliding, int):
            heads, note = _two_query_heads(heads, sliding)
            if note:
                notes.insert(0, note)
    return heads, " ".join(notes)


def _two_query_heads(full: int | None, sliding: int) -> tuple[int | None, str]:
    """The query heads a TP must divide where sliding layers have their own: their greatest
    common divisor, and a note saying so (none where the two agree)."""
    if full is None or full == sliding:
        return full, ""
    both = math.gcd(full, sliding)
    return both, (f"Its sliding layers have {sliding} query heads and its full layers {full}: "
                  f"a tp must divide both, so {HEADS_GCD} {both:,}, their greatest common "
                  "divisor.")


def _recorded(cfg: Mapping[str, Any], text: Any, resolved: Any) -> Recorded:
    """The language model's resolved config, read through ``Recorded``: its fields named as
    config.json writes them (``text_config.`` ones where a wrapper nests them), the sizes used
    remembered for the notes."""
    nested = "" if text is resolved else next(
        (key for key in NESTED if isinstance(cfg.get(key), Mapping)), "")
    return Recorded(text, f"{nested}." if nested else "", cfg[nested] if nested else cfg)


def _query_heads(recorded: Recorded, model_type: str, layers: Sequence[CacheLayer]
                 ) -> int | None:
    """The model's query heads: engines split them over TP, so they decide which TPs the model
    takes. Read where the model keeps a KV cache (MLA's layers read no head count of their
    own); None for a state-only model."""
    attention_heads = recorded.used.get("num_attention_heads")
    if attention_heads is None and any(not layer.is_state for layer in layers):
        attention_heads = whole_field(recorded, "num_attention_heads", model_type)
    return attention_heads


def _sliding_query_heads(recorded: Recorded, cfg: Mapping[str, Any], model_type: str,
                         heads: int | None, layers: Sequence[CacheLayer]
                         ) -> tuple[int | None, str]:
    """The query heads a TP must divide where sliding layers have heads of their own
    (Step-3.5's, MiMo-V2-Flash's), and what the notes say of them; ``heads`` unchanged and no
    note for other models."""
    if model_type == "step3p5":
        return _step3p5_heads(recorded, cfg, heads, layers)
    if model_type == "mimo_v2_flash" and any(
            layer.sliding_window is not None for layer in layers if not layer.is_state):
        return _two_query_heads(heads,
                                whole_field(recorded, "swa_num_attention_heads", model_type))
    return heads, ""


def _model_layers(text: Any, model_type: str) -> int:
    """The model's decoder layers as its config counts them (LongCat-Flash's num_layers), 0
    where the count is not a number."""
    try:
        return int(getattr(text, _DECODER_LAYERS.get(model_type, "num_hidden_layers"), 0) or 0)
    except (TypeError, ValueError):
        return 0


def last_part(name_or_path: str) -> str:
    """The last part of a Hub id or a local path ("google/gemma-3-27b-it" is "gemma-3-27b-it",
    as the presets name models): one rule for a config's _name_or_path and a Hub model id, so
    a model is named alike however it was loaded; "" for a bare "/"."""
    return name_or_path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1].strip()


def _name_of(cfg: Mapping[str, Any], model_type: str) -> str:
    """The model's name: the last part of the config's _name_or_path (``last_part``), else its
    first architecture ("JambaForCausalLM": a class names the model more closely than a type
    that a family shares), else its model_type. Printed as the title of every table, so
    refused unless it shows as itself (no escape codes, no line break that fakes a line of
    figures)."""
    fallback = (_architectures_of(cfg) or (model_type,))[0]
    given = cfg.get("_name_or_path")
    if not given:
        return fallback
    given = check_name("config.json's _name_or_path", given,
                       fix="give it the model's name or path in printable characters, or drop "
                       "it (the model is then named by its architectures, else model_type)")
    return last_part(given) or fallback


def _source_of(config: dict | str | bytes | Path, model_type: str, source: Any) -> str:
    """The start of the source line: ``source`` where the caller gives one, else the
    config.json read (and the path it was read from)."""
    if source is not None and not isinstance(source, str):
        raise ValueError(f"source is {quoted_value(source)}: give a line of text saying where "
                         "the model "
                         "comes from, or None")
    if source is not None:
        return source
    is_file = isinstance(config, Path) or (
        isinstance(config, str) and not config.lstrip().startswith(("{", "["))
    )
    # a path that holds a control character is quoted, its characters escaped
    where = (f" at {quoted(str(config)) if control_character(str(config)) else config}"
             if is_file else "")
    return f"config.json{where} (model_type {model_type}), resolved with transformers"


def _indexer_dim(layers: Sequence[CacheLayer]) -> int | None:
    """The lightning indexer's key dim where the MLA layers keep its keys, else None."""
    return next((layer.index_head_dim for layer in layers
                 if isinstance(layer, MLALayer) and layer.index_head_dim), None)


def learnable_sink_of(cfg: Mapping[str, Any], model_type: str) -> bool:
    """The config's top-level ``learnable_sink`` (False where it gives none, or null), which
    SGLang 0.5.23 reads as ``bool(getattr(hf_config, "learnable_sink", False))`` for DeepSeek's
    sparse attention (arg_groups/overrides.py 526): with it, bfloat16 on every GPU and no other
    --kv-cache-dtype (527-535). A value other than true or false is refused, where SGLang
    would take any truthy one ("false" in quotes among them) for true."""
    value = cfg.get("learnable_sink")
    if value is None or isinstance(value, bool):
        return bool(value)
    raise ValueError(f"{model_type} config.json learnable_sink = {as_written(value)} must be "
                     "true or false: fix the field")


def _source_clauses(model_type: str, layers: Sequence[CacheLayer], *, n_model: int, shared: int,
                    model_dtype: str, state_dtype: str, dtype_notes: Sequence[str],
                    max_model_len: int | None, length_from: str, ssm_dtype: str, ssm_why: str,
                    sglang_note: str, learnable_sink: bool = False) -> str:
    """What the source line says after where the model comes from, each clause led by "; ":
    states kept in another dtype than the checkpoint's, a context length not read from
    max_position_embeddings, the dtype notes, the caches a layer keeps beside the usual (two
    MLA attentions, KV shared, the indexer's keys) and where the ssm state's dtype comes
    from."""
    clauses = []
    if any(layer.is_state for layer in layers) and state_dtype != model_dtype:
        clauses.append(f"states kept in bfloat16 beside the {model_dtype} checkpoint: no engine "
                       "keeps a state in 1-byte elements")
    # said where it is not the usual field (the smallest of several, a rope scaling)
    if max_model_len is not None and length_from != "max_position_embeddings":
        clauses.append(f"max_model_len {max_model_len:,} from {length_from}")
    clauses += [note for note in dtype_notes if note]
    if model_type == "longcat_flash":
        clauses.append(f"each of its {n_model} layers runs two MLA attentions, each with a cache "
                       "of its own (vLLM's self_attn.0 and .1; SGLang's num_attention_layers = "
                       "2 x num_hidden_layers)")
    if shared > 0:
        clauses.append(f"its last {shared} layers read an earlier layer's KV "
                       "(num_kv_shared_layers, vLLM's kv_sharing_target_layer_name): no cache of "
                       "their own")
    if indexer := _indexer_dim(layers):
        clauses.append(f"each MLA layer keeps the lightning indexer's keys too, {indexer} fp8 B "
                       "and a float32 scale per 128 a token (vLLM's DeepseekV32IndexerCache), in "
                       "the same pages")
        if learnable_sink:
            clauses.append("learnable attention sinks (learnable_sink), for which SGLang keeps "
                           "the sparse attention's cache in bfloat16 on every GPU")
    if any("ssm" in layer.state_shapes(1) for layer in layers):  # where its dtype comes from
        clauses.append(f"ssm state {ssm_dtype} from {ssm_why}")
        if sglang_note:
            clauses.append(sglang_note)
    return "".join(f"; {clause}" for clause in clauses)


def spec_from_hf_config(
    config: dict | str | bytes | Path, *, name: str | None = None, source: str | None = None
) -> ModelSpec:
    """A ModelSpec (TP 1, dtypes from the config) from a config.json dict, text or path."""
    cfg = load_config_dict(config)
    resolved = resolve_config(cfg)
    model_type = cfg["model_type"]
    check_config(cfg, model_type)
    text = resolved.get_text_config() if hasattr(resolved, "get_text_config") else resolved
    check_text_config(cfg, model_type, text, resolved)
    recorded = _recorded(cfg, text, resolved)
    layers = _layers_of(recorded, model_type)
    model_dtype, dtype_note = served_dtype(text, resolved)
    # a state-only model has no KV cache for a quantization_config to change
    kv_dtype, kv_note = (kv_dtype_of(cfg, model_dtype)
                         if any(not layer.is_state for layer in layers) else (model_dtype, ""))
    attention_heads = _query_heads(recorded, model_type, layers)
    mtp_types = _mtp_layer_types(text, cfg, model_type)
    attention_heads, heads_note = _sliding_query_heads(recorded, cfg, model_type,
                                                       attention_heads, layers)
    n_model = _model_layers(text, model_type)
    name = _name_of(cfg, model_type) if name is None else name
    source = _source_of(config, model_type, source)
    if text is not resolved:
        refuse_top_level_text_fields(cfg, recorded.used, model_type)
    # an fp8 checkpoint's states: in bfloat16, as no engine keeps a state in 1-byte elements
    state_dtype = model_dtype if model_dtype in STATE_DTYPES else "bfloat16"
    ssm_dtype, ssm_why = ssm_dtype_of(text, state_dtype, cfg, model_type, FAMILIES[model_type])
    sglang_ssm_dtype, sglang_note = sglang_ssm_dtype_of(text)
    # read through recorded: a chunk transformers' defaults give is named in the notes
    chunk = (chunk_size_of(recorded, model_type) if any(layer.is_state for layer in layers)
             else None)
    length = max_model_len_of(recorded, model_type)  # assumed: vLLM's 2,048, with a warning
    max_model_len, assumed = length.tokens, length.assumed
    # Gemma 3n's layers past its cache layers read an earlier layer's KV (_kv_shared_layers)
    shared = n_model - len(layers) if model_type.startswith(_KV_SHARING) else 0
    # read where the layers keep the indexer's keys: SGLang reads it for DeepSeek's sparse
    # attention alone
    indexed = _indexer_dim(layers)
    learnable_sink = bool(indexed) and learnable_sink_of(cfg, model_type)
    if indexed:
        check_indexer_everywhere(text, model_type, cfg)
    source += _source_clauses(model_type, layers, n_model=n_model, shared=shared,
                              model_dtype=model_dtype, state_dtype=state_dtype,
                              dtype_notes=(dtype_note, kv_note), max_model_len=max_model_len,
                              length_from=length.source, ssm_dtype=ssm_dtype, ssm_why=ssm_why,
                              sglang_note=sglang_note, learnable_sink=learnable_sink)
    architectures, defaulted = _architectures_or_default(cfg, model_type)
    # Kimi Delta Attention layers keep GDN's state shapes: named for what they are
    kind_names = tuple((layer, "kda") for layer in dict.fromkeys(layers)
                       if FAMILIES[model_type] == "kda" and layer.is_state)
    return ModelSpec(
        _kind_names=kind_names, _origin=CONFIG_JSON,
        _config_keys=_config_keys(recorded, model_type, layers, attention_heads, heads_note),
        name=name, layers=tuple(layers), kv_dtype=kv_dtype, conv_dtype=state_dtype,
        ssm_dtype=ssm_dtype, tp=1, source=source,
        model_layers=n_model if 0 < n_model <= MAX_CACHE_LAYERS else None,
        architectures=architectures, config_mamba_ssm_dtype=sglang_ssm_dtype,
        config_mamba_ssm_cache_dtype=vllm_config_ssm_dtype_of(cfg, model_type, state_dtype),
        attention_heads=attention_heads,
        mamba_chunk_size=chunk,
        max_model_len=max_model_len,
        max_model_len_assumed=assumed,
        mtp_layer_types=mtp_types,
        mtp_modules=field_of(cfg, "num_nextn_predict_layers")[1],
        learnable_sink=learnable_sink,
        # the shared layers' types, by transformers' layer_types (SGLang keeps a pool layer each)
        kv_shared_layer_types=tuple(list(getattr(text, "layer_types", None) or [])[-shared:])
        if shared > 0 else (),
        # a caveat on every engine's figures, shown beside them (not only in the source line)
        notes=model_notes(cfg, model_type, text, recorded, layers, defaulted=defaulted,
                          heads_note=heads_note, shared=shared, n_model=n_model,
                          mtp_types=mtp_types, architectures=architectures, kv_dtype=kv_dtype,
                          assumed_length=max_model_len if assumed else None),
    )


def _architectures_of(cfg: Mapping[str, Any]) -> tuple[str, ...]:
    """The config's ``architectures`` (engines choose code paths by them: SGLang its
    sliding-window pool), empty when the config has none."""
    names = cfg.get("architectures")
    if names is None:
        return ()
    try:
        return check_architectures(names)
    except ValueError:
        raise ValueError(f"config.json architectures = {as_written(names)} must be a list of "
                         "class names (e.g. [\"GptOssForCausalLM\"]): fix it or drop the "
                         "field") from None


def _architectures_or_default(cfg: Mapping[str, Any], model_type: str
                              ) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The config's architectures, or where it gives none (a config written from transformers'
    defaults) transformers' class for its type (a multimodal wrapper's own, else its causal
    LM's), which a checkpoint would name: the engines pick code paths by it (SGLang its
    sliding-window pool, vLLM its mamba cache mode fallback, Cohere2's window). Beside them,
    the entry for the notes' "Not in the config.json" list; empty when the config names them,
    or when transformers has no class to name."""
    if given := _architectures_of(cfg):
        return given, ()
    if model_type in SERVED_AS:
        name = SERVED_AS[model_type]
        return (name,), (f"architectures [\"{name}\"] (the class the engines serve {model_type} "
                         "by, and pick code paths by)",)
    name = default_class(model_type)
    if name is None:
        return (), ()
    return (name,), (f"architectures [\"{name}\"] (its class for {model_type}, which the "
                     "engines pick code paths by)",)


