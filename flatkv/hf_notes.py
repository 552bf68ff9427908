"""The notes a model read from a config.json carries: caveats on every engine's figures.

The source line says what was read; a note says where the figures may not be the model's: sizes
or a layer pattern transformers' defaults filled in, a layer split the engines read otherwise
than transformers, layers or a drafter FlatKV does not model, a dtype vLLM picks by the GPU. The
pages show the notes beside the figures, so each builder here returns a sentence or nothing, and
``model_notes`` joins them in the order they are shown.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from flatkv.dtypes import dtype_bytes
from flatkv.hf_fields import BAILING_KDA_GIVEN_AS, KDA_GIVEN_AS, gemma4_full_fields
from flatkv.hf_json import NESTED, gives
from flatkv.hf_length import ASSUMED_MAX_MODEL_LEN, LENGTH_FIELDS
from flatkv.hf_resolve import FAMILIES, STATE_ONLY
from flatkv.models import AttentionLayer, CacheLayer, mtp_layers_not_full
from flatkv.plan import CHUNKED_ATTENTION
from flatkv.units import count_text


def model_notes(cfg: Mapping[str, Any], model_type: str, text: Any, recorded: Any,
                layers: list[CacheLayer], *, defaulted: Sequence[str], heads_note: str,
                shared: int, n_model: int, mtp_types: Sequence[str],
                architectures: tuple[str, ...], kv_dtype: str,
                assumed_length: int | None = None) -> str:
    """The model's notes, each a caveat on every engine's figures (shown beside them, not only
    in the source line): ``text`` is the resolved language model's config, ``recorded`` the
    same read through ``Recorded`` (the sizes used); ``heads_note`` what the query heads say,
    ``shared`` the last layers that share KV, ``n_model`` the model's layers,
    ``assumed_length`` the max_model_len vLLM assumes where the config gives none."""
    return " ".join(note for note in (_not_given_note(cfg, recorded.used,
                                                      getattr(text, "attribute_map", {}),
                                                      defaulted),
                                      assumed_length_note(assumed_length),
                                      _pattern_note(cfg, model_type, layers),
                                      heads_note,
                                      _window_split_note(text, model_type, cfg),
                                      _kv_shared_note(shared, n_model, model_type),
                                      _gemma4_note(recorded, model_type, layers),
                                      _mtp_layers_note(mtp_types),
                                      _llama4_sglang_note(layers, model_type),
                                      _fp8_kv_note(architectures, kv_dtype))
                    if note)


def _not_given_note(cfg: Mapping[str, Any], used: Mapping[str, int],
                    aliases: Mapping[str, str], defaulted: Sequence[str] = ()) -> str:
    """The sizes the reader used that the config.json does not hold (at its top level or in
    its text_config / llm_config): transformers supplied them. A caveat on every figure (a
    thin config such as {"model_type": "llama"} plans as LlamaConfig's 32 layers of 32 heads),
    so it goes in the notes, which the pages show beside the figures. Sizes only: a layer
    pattern that comes from a class default (qwen3_next's full_attention_interval 4) is not
    named. ``aliases``: the config class's attribute_map (Kimi Linear's max_position_embeddings
    is its model_max_length). ``defaulted``: other fields filled in, as they are to be named
    (the architectures)."""
    given = dict(cfg)
    for key in NESTED:
        if isinstance(cfg.get(key), Mapping):
            given.update(cfg[key])
    for alias, attr in aliases.items():  # a field given by either name (Step-3.5's KV heads
        # are its num_attention_groups, transformers' num_key_value_heads)
        if alias not in given and attr in given:
            given[alias] = given[attr]
        elif attr not in given and alias in given:
            given[attr] = given[alias]
    if isinstance(linear := given.get("linear_attn_config"), Mapping):
        given.update({attr: linear[key] for attr, key in KDA_GIVEN_AS.items() if key in linear})
    elif given.get("model_type") == "bailing_hybrid":  # its KDA sizes, as transformers copies
        given.update({attr: given[key] for attr, key in BAILING_KDA_GIVEN_AS.items()
                      if key in given})
    hidden, heads = given.get("hidden_size"), given.get("num_attention_heads")
    if isinstance(hidden, int) and isinstance(heads, int) and heads > 0:
        # derived from the config, as the models do (a "head_dim": null too)
        if given.get("head_dim") is None:
            given["head_dim"] = hidden // heads
        if given.get("attention_head_dim") is None:  # zamba2: attention over 2 x hidden
            given["attention_head_dim"] = 2 * hidden // heads
    # an alias read beside the field it names is one size (Bailing's max_position_embeddings is
    # its model_max_length): named once, by the alias config.json writes; Bailing's KDA sizes by
    # the config fields they are copied from
    named = dict(BAILING_KDA_GIVEN_AS) if given.get("model_type") == "bailing_hybrid" else {}
    used = dict(used)
    for alias, attr in aliases.items():
        if alias in used and attr in used:
            del used[alias]
            if given.get(attr) != used[attr]:
                named[attr] = alias
    missing = [f"{named.get(attr, attr)} {value:,}" for attr, value in used.items()
               if given.get(attr) != value] + list(defaulted)
    if not missing:
        return ""
    return (f"Not in the config.json, so transformers' defaults: {', '.join(missing)}; check "
            "them against the model's config.")


def assumed_length_note(length: int | None) -> str:
    """Where the config gives no length field, the 2,048 vLLM assumes (times a rope factor,
    as it scales a given length) in its own warning's words: every figure counts a request at
    it until a context is typed, so the note names the fix. SGLang 0.5.23 assumes 2,048 too,
    silently and unscaled; vLLM takes any --max-model-len told, SGLang refuses a longer
    --context-length unless allowed. Empty where a length is given (``length`` None)."""
    if length is None:
        return ""
    scaled = length != ASSUMED_MAX_MODEL_LEN
    return (f"The config.json gives no length field ({', '.join(LENGTH_FIELDS[:5])}, ...), "
            "so vLLM warns \"The model's config.json does not contain any of the keys to "
            "determine the original maximum length of the model. Assuming the model's maximum "
            f"length is {ASSUMED_MAX_MODEL_LEN}.\""
            + (f" and scales it by the rope factor to {length:,}" if scaled else "")
            + f"; SGLang 0.5.23 assumes {ASSUMED_MAX_MODEL_LEN:,} too, silently"
            + (f" and unscaled (type {ASSUMED_MAX_MODEL_LEN:,} for its figures)" if scaled else "")
            + f". The figures count a request at {length:,} tokens (vLLM's \"Maximum "
            f"concurrency for {length:,} tokens per request\") until a context is typed: type "
            "the context you serve at (vLLM takes any --max-model-len; SGLang refuses a "
            f"--context-length above {ASSUMED_MAX_MODEL_LEN:,} unless "
            "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1), or "
            "add max_position_embeddings to the config.json.")


# The fields a supported config gives its layer pattern in (some its class pops, so they are
# listed here, not read off the class)
_PATTERN_KEYS = (
    "layer_types", "layers_block_type", "hybrid_override_pattern", "full_attention_interval",
    "sliding_window_pattern", "_sliding_window_pattern", "attn_layer_period", "attn_layer_offset",
    "attn_layer_indices", "hybrid_layer_ids", "linear_attn_config", "attn_type_list",
    "decoder_attention_types", "no_rope_layers", "no_rope_layer_interval", "full_attn_idxs",
    "global_attn_every_n_layers", "hybrid_layer_pattern", "layer_group_size",
)


# ... and those only qwen2 / qwen3 read their pattern from (_WINDOW_SPLIT_TYPES)
_WINDOW_SPLIT_KEYS = ("use_sliding_window", "max_window_layers")


# Types whose pattern the architecture fixes (Falcon-H1: attention and Mamba2 in every layer;
# Gemma 2: sliding and full layers in turn), so their configs give none
_FIXED_PATTERN_TYPES = ("falcon_h1", "gemma2")


def _pattern_note(cfg: Mapping[str, Any], model_type: str, layers: list[CacheLayer]) -> str:
    """A layer pattern the config.json does not give, so transformers' class default made it
    (a granite-4.0-h config without layer_types reads as 40 Mamba2 layers): named where the
    pattern decides the model, a hybrid type's or one that came out of more than one kind."""
    keys = _PATTERN_KEYS + (_WINDOW_SPLIT_KEYS if model_type in _WINDOW_SPLIT_TYPES else ())
    if model_type in _FIXED_PATTERN_TYPES or any(gives(cfg, key) for key in keys):
        return ""
    counts: dict[str, int] = {}
    for layer in layers:
        counts[layer.label] = counts.get(layer.label, 0) + 1
    hybrid_type = (FAMILIES[model_type] not in ("attention", "mla")
                   and model_type not in STATE_ONLY)
    if not hybrid_type and len(counts) < 2:
        return ""
    made = " + ".join(f"{count} {label}" for label, count in counts.items())
    return (f"No layer pattern in the config.json ({', '.join(_PATTERN_KEYS[:4])} or the like), "
            f"so transformers' {model_type} default: {made} cache layers; check it against the "
            "model's config.")


# model types whose transformers config slides the layers from max_window_layers on when
# use_sliding_window is set; the engines read the same fields otherwise (see _window_split_note)
_WINDOW_SPLIT_TYPES = ("qwen2", "qwen3", "qwen2_vl", "qwen2_5_vl")


def _window_split_note(text: Any, model_type: str, cfg: Mapping[str, Any]) -> str:
    """Where engines part from transformers' layer_types for a Qwen2/Qwen3 config that sets
    use_sliding_window: transformers slides layers max_window_layers.. num_hidden_layers - 1;
    vLLM gives every layer one window (its Qwen2Model asserts max_window_layers ==
    num_hidden_layers when the layers differ, and reads a uniform window when they do not);
    SGLang's qwen2 / qwen3 attention takes no window. No released checkpoint sets it, so the
    plan follows transformers and says so rather than guess an engine. A config that lists its
    layer_types is planned as listed, and needs no note."""
    split = getattr(text, "max_window_layers", None)
    layers = getattr(text, "num_hidden_layers", None)
    if (model_type not in _WINDOW_SPLIT_TYPES or "layer_types" in cfg
            or not getattr(text, "use_sliding_window", False)
            or getattr(text, "sliding_window", None) is None
            or not (isinstance(split, int) and isinstance(layers, int))):
        return ""
    if split >= layers:
        ours, vllm = "no layer slides", "; vLLM slides every layer"
    elif split == 0:
        ours, vllm = "every layer slides", "; vLLM too"
    else:
        ours = f"layers {split} to {layers - 1} slide"
        vllm = "; vLLM refuses the split (max_window_layers must equal num_hidden_layers)"
    return (f"use_sliding_window with max_window_layers {split}: {ours}, as transformers reads "
            f"it{vllm}; SGLang slides no layer. Every layout here plans the layers as "
            "transformers reads them")


def _gemma4_note(text: Any, model_type: str, layers: Sequence[CacheLayer]) -> str:
    """Where a Gemma 4's full layers take their heads from, and what attention_k_eq_v does to
    the bytes (nothing: both engines store V beside K); empty for other models."""
    if not model_type.startswith("gemma4"):
        return ""
    full = next((layer for layer in layers if isinstance(layer, AttentionLayer)
                 and layer.sliding_window is None), None)
    if full is None:
        return ""
    k_eq_v = bool(getattr(text, "attention_k_eq_v", False))
    fields = gemma4_full_fields(text)
    return (f"Its full-attention layers keep {full.kv_heads} KV heads x {full.head_dim_k} "
            f"({fields['head_dim']} and {fields['num_key_value_heads']}), its sliding ones the "
            "config's head_dim and num_key_value_heads."
            + (" attention_k_eq_v makes V a copy of K, but vLLM and SGLang store both, so both "
               "count." if k_eq_v else ""))


def _kv_shared_note(shared: int, n_model: int, model_type: str) -> str:
    """What SGLang's pool keeps for a model whose last ``shared`` layers share KV (Gemma 3n,
    Gemma 4: a pool layer each, storing nothing); empty without such layers."""
    if shared <= 0:
        return ""
    model = "Gemma 4" if model_type.startswith("gemma4") else "Gemma 3n"
    return (f"SGLang's {model} shares the KV too, but its pool keeps a layer for each of its "
            f"{n_model} layers (its layer ids count every model layer), the {shared} shared ones "
            f"storing nothing: its figures here count all {n_model}, vLLM's the "
            f"{n_model - shared} that keep a cache.")


def _mtp_layers_note(kinds: Sequence[str]) -> str:
    """Where the MTP modules' layers are not full attention (Step-3.5's three sliding ones):
    FlatKV does not model that drafter ("Add an MTP layer" adds full-attention ones only);
    empty otherwise."""
    if not (other := mtp_layers_not_full(kinds)):
        return ""
    return (f"Its {count_text(len(kinds), 'MTP layer')} "
            f"{'are' if len(kinds) > 1 else 'is'} {', '.join(other)}, kept only when drafting, "
            "which FlatKV does not model: \"Add an MTP layer\" (--mtp-layer) adds "
            "full-attention ones only.")


def _llama4_sglang_note(layers: list[CacheLayer], model_type: str) -> str:
    """SGLang's hybrid SWA pool takes Llama 4's every 4th layer as full attention and the
    others as chunked, whatever the config says: a note where this model's layers differ."""
    if not model_type.startswith("llama4"):
        return ""
    chunked = [layer.label == CHUNKED_ATTENTION for layer in layers]
    if chunked == [(i + 1) % 4 != 0 for i in range(len(layers))]:
        return ""
    return ("SGLang takes every 4th layer as global attention and the others as chunked, "
            "whatever no_rope_layers says (its get_hybrid_layer_ids): its figures here follow "
            "this config's layers, not SGLang's")


# vLLM classes whose KV cache vLLM keeps in fp8 on some GPUs unless --kv-cache-dtype is given,
# with the releases and GPUs (GlmMoeDsaForCausalLM's verify_and_update_config, 0.32 and later)
_FP8_KV_ON_GPUS = {"GlmMoeDsaForCausalLM": ("0.32", "SM 10.x GPUs (B200, B300, GB200)")}


def _fp8_kv_note(architectures: tuple[str, ...], kv_dtype: str) -> str:
    """Where vLLM stores the model's KV cache in fp8 by the GPU it runs on, a note: the figures
    here keep the config's KV dtype, which such a log does not."""
    if dtype_bytes(kv_dtype) == 1:
        return ""
    for arch in architectures:
        if arch in _FP8_KV_ON_GPUS:
            since, gpus = _FP8_KV_ON_GPUS[arch]
            return (f"vLLM {since} and later keep {arch}'s KV cache in fp8 (fp8_e4m3) on {gpus} "
                    f"unless --kv-cache-dtype is given (\"Using fp8 kv-cache for {arch} on "
                    "SM10x\"): set the KV dtype to fp8 to match such a log.")
    return ""
