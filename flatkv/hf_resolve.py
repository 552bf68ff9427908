"""A config.json resolved by transformers, as the model's own code resolves it.

The first step of reading a config.json: its model_type told apart from what FlatKV cannot read
(a FlatKV file, a wrapper whose text_config is the model, a type not modelled yet), its fields
rewritten where the engines read them otherwise than transformers' class (MiniMax's
attn_type_list, EXAONE 4's "LLLG"), then read by ``AutoConfig.for_model``. Transformers fails on
a bad field without naming it, so its errors are put in config terms here, down to the one field
to blame. The refusals made while reading (layer-pattern fields that disagree, Kimi Linear's
layer lists, a layer count the pattern contradicts) sit here too; those of a resolved config are
``hf_checks``'.
"""

from __future__ import annotations

import difflib
import re
import textwrap
import warnings
from collections.abc import Callable, Mapping
from functools import partial
from itertools import product
from typing import Any

from flatkv.hf_fields import KDA_GIVEN_AS
from flatkv.hf_json import (
    NESTED,
    ROPE_NUMBERS,
    WHOLE_FIELDS,
    as_written,
    levels,
    prechecked,
    rope_parts,
)
from flatkv.models import FORMAT
from flatkv.profile import PROFILE_FORMAT
from flatkv.units import quoted, quoted_value

# model_type -> how its cache layers are read (see hf_config._layers_of). Attention models list
# their layers in layer_types (gemma2/3, cohere2, olmo3, smollm3, gpt_oss) or slide every layer
# when the config sets a model-wide sliding_window (mistral, phi3), as vLLM reads them.
FAMILIES: dict[str, str] = {
    "llama": "attention",
    "mistral": "attention",
    "mistral3": "attention",  # multimodal: the language model is its text_config
    "mixtral": "attention",
    "phi3": "attention",
    "qwen2": "attention",
    "qwen2_vl": "attention",  # multimodal: the language model is its text_config
    "qwen2_5_vl": "attention",
    "qwen3": "attention",
    "qwen3_moe": "attention",
    "qwen3_vl": "attention",
    "qwen3_vl_moe": "attention",
    "gemma2": "attention",
    "gemma3": "attention",
    "gemma3_text": "attention",
    "gemma3n": "attention",  # its last num_kv_shared_layers layers keep no cache of their own
    "gemma3n_text": "attention",
    # Gemma 4: full layers of other heads (per_layer_config) than the sliding ones, and kv-shared
    # last layers as Gemma 3n's
    "gemma4": "attention",
    "gemma4_text": "attention",
    # Gemma 4 Unified (encoder-free vision): Gemma 4's language model, which vLLM and SGLang
    # run as Gemma 4's (Gemma4ForCausalLM over its text_config)
    "gemma4_unified": "attention",
    "gemma4_unified_text": "attention",
    # MiMo-V2-Flash: sliding layers of their own heads and dims (swa_*), by hybrid_layer_pattern
    "mimo_v2_flash": "attention",
    "cohere2": "attention",
    "olmo2": "attention",
    "olmo3": "attention",
    "smollm3": "attention",
    "llama4": "attention",  # chunked local attention with global NoPE layers (Llama 4)
    "llama4_text": "attention",
    "glm4": "attention",
    "glm4_moe": "attention",
    "granite": "attention",
    "granitemoe": "attention",
    "gpt_oss": "attention",
    # GQA throughout, as vLLM builds them (its own model class, or its transformers backend)
    "minimax_m2": "attention",
    "exaone4": "attention",  # layer_types, or a sliding_window_pattern such as "LLLG"
    "apertus": "attention",
    "seed_oss": "attention",
    "ernie4_5": "attention",
    "ernie4_5_moe": "attention",
    "olmoe": "attention",
    "gemma": "attention",
    "cohere": "attention",
    "nemotron": "attention",
    "phi": "attention",  # one KV head a query head unless told (transformers' and vLLM's)
    "phimoe": "attention",  # a model-wide sliding_window slides every layer, as mixtral's
    "starcoder2": "attention",  # likewise
    "arcee": "attention",
    "hunyuan_v1_dense": "attention",
    "hunyuan_v1_moe": "attention",
    "granitemoeshared": "attention",
    "hy_v3": "attention",  # its MTP layers keep a cache only when drafting (not modelled)
    "afmoe": "attention",  # layer_types of sliding and full layers
    "flex_olmo": "attention",
    # layer_types of sliding and full layers (vLLM slides only the layers they mark)
    "granite_swa": "attention",
    "granitemoe_swa": "attention",
    "cohere2_moe": "attention",  # vLLM 0.29+ keep a token more than its window, as cohere2's
    "exaone_moe": "attention",  # K-EXAONE: EXAONE 4's layers, a window a layer in vLLM
    "step3p5": "attention",  # Step-3.5: sliding layers with query heads of their own
    "deepseek_v2": "mla",
    "deepseek_v3": "mla",
    "kimi_k2": "mla",
    "deepseek_v32": "mla",  # MLA with the lightning indexer's key cache
    "glm4_moe_lite": "mla",  # GLM-4.7-Flash
    "glm_moe_dsa": "mla",  # GLM-5: DeepSeek-V3.2's MLA and indexer (vLLM's deepseek_v32)
    "kimi_k25": "mla",  # multimodal: its text_config is a DeepSeek-V3
    "longcat_flash": "mla",  # two MLA attentions a decoder layer, each with a cache
    "qwen3_next": "gdn",
    "qwen3_5": "gdn",
    "qwen3_5_text": "gdn",
    "qwen3_5_moe": "gdn",
    "qwen3_5_moe_text": "gdn",
    "olmo_hybrid": "gdn",
    "kimi_linear": "kda",  # Kimi Delta Attention layers with MLA full layers
    # Ling-3.0-Flash (BailingMoeV3): KDA layers with an MLA layer closing each layer_group_size
    # (transformers copies the KDA sizes to linear_*, then sets head_dim to qk_rope_head_dim)
    "bailing_hybrid": "kda",
    "nemotron_h": "mamba2",
    "granitemoehybrid": "mamba2",
    "bamba": "mamba2",
    "falcon_h1": "mamba2",
    "zamba2": "mamba2",
    "jamba": "mamba1",
    "lfm2": "short_conv",  # gated short convolutions ("conv" layers) with attention
    "lfm2_moe": "short_conv",
    "lfm3": "short_conv",  # LFM2's conv layers beside full and sliding attention
    "mamba": "mamba1",
    "falcon_mamba": "mamba1",
    "mamba2": "mamba2",
    # lightning (linear) attention layers with full attention: MiniMax-Text-01 / M1 ship their
    # own config classes; transformers' minimax is the -hf conversion of the same model
    "minimax": "lightning",
    "minimax_m1": "lightning",
    "minimax_text_01": "lightning",
}


# Attention-free model types: every layer is a state layer (no KV cache, no token history).
STATE_ONLY = ("mamba", "falcon_mamba", "mamba2")


SUPPORTED_MODEL_TYPES: tuple[str, ...] = tuple(sorted(FAMILIES))


def _nearest_types(model_type: str) -> list[str]:
    """The (up to 3) model types FlatKV reads nearest to ``model_type`` by spelling."""
    return difflib.get_close_matches(model_type, SUPPORTED_MODEL_TYPES, n=3)


# Where the model types FlatKV reads are listed in full: for the command line, the README's
# section on its flag; on the Model page, its expander of them above the Load button, so above
# the error (``TYPES_LISTED_ON_PAGE`` names it), as a browser's reader has no README open.
TYPES_LISTED = "listed in full in the README under --hf-config"
TYPES_LISTED_ON_PAGE = "Model types FlatKV reads"


def _supported_text(model_type: str | None = None, *, listed: str = TYPES_LISTED) -> str:
    """How many model types FlatKV reads and where they are ``listed`` (all of them in an error
    made it a wall of 90 names), with the nearest to ``model_type`` by spelling."""
    near = _nearest_types(model_type) if model_type else []
    return (f"FlatKV reads {len(SUPPORTED_MODEL_TYPES)} model types, {listed}"
            + (f"; nearest by spelling: {', '.join(near)}" if near else ""))


def _supported_texts(model_type: str | None = None) -> tuple[str, str]:
    """``_supported_text`` for the command line, then for the Model page."""
    return (_supported_text(model_type),
            _supported_text(model_type, listed=f"listed under {TYPES_LISTED_ON_PAGE!r} above"))


# Model types transformers does not know, read with the configuration class of the model they
# are built on (Kimi K2 ships DeepSeek-V3's architecture under its own name; MiniMax-Text-01
# and M1 the architecture transformers reads as minimax, their layers named in attn_type_list).
READ_AS = {"kimi_k2": "deepseek_v3", "minimax_m1": "minimax", "minimax_text_01": "minimax"}


# Model types FlatKV knows but cannot plan yet: each keeps a cache a profile does not hold (one
# KV size for every attention layer, no compressed or second cache a layer). A config of one is
# refused with this reason, not with the list of supported types and advice that does not fit.
# Model types whose layers FlatKV plans, but whose config.json it does not read yet: described
# by hand, they plan.
_MISTRAL_LARGE4_WHY = ("Mistral Large 4's config.json: vLLM 0.34 serves the model from Mistral's "
                       "params.json, whose nope, kv_sharing and dsa fields it reads instead, and "
                       "SGLang 0.5.23 not at all (without KV sharing its layers are DeepSeek-V3.2's"
                       ": MLA of kv_lora_rank + qk_rope_head_dim with the indexer's keys)")


_NOT_READ_YET: dict[str, str] = {
    "mistral_large4": _MISTRAL_LARGE4_WHY,
    "mistral_large4_text": _MISTRAL_LARGE4_WHY,
}


_GLM5_NEXT_WHY = ("GLM-5.3-Flash's MLA layers keep no rotary part (qk_rope_head_dim 0), the "
                  "indexer's keys one row per index_kpool tokens, and in vLLM a ring of recent "
                  "keys per request beside Kimi Delta Attention layers")


_MINIMAX_M3_WHY = ("MiniMax-M3's sparse layers (sparse_attention_config's sparse_attention_freq, "
                   "transformers' minimax_m3_sparse layers) keep the indexer's keys (one head, "
                   "not split over TP; SGLang also its values) beside K and V, so its full "
                   "layers differ in bytes a token")


_QWEN4_EXP_WHY = ("Qwen4-Exp's vLLM sizes its pages by the larger of its GDN state and a "
                  "short-conv state for PLE (hidden_size x hc_count channels by "
                  "(ple_conv_kernel_size - 1) x ngram_size rows and a row a drafted token, "
                  "whole on every rank) that it keeps even where ple_layer_ids is empty, and its "
                  "QSA layers (indexer_n_heads) keep compressed keys and a ring per request")


_NOT_MODELED_YET: dict[str, str] = {
    "qwen4_exp": _QWEN4_EXP_WHY,
    "qwen4_exp_text": _QWEN4_EXP_WHY,
    "glm5_next": _GLM5_NEXT_WHY,
    "glm5_next_text": _GLM5_NEXT_WHY,
    "deepseek_v4": ("DeepSeek-V4's layers keep compressed caches (compressed_sparse_attention "
                    "and heavily_compressed_attention, by compress_rates) beside a sliding "
                    "window"),
    "hy_v4": ("HY-V4's indexed MLA layers keep the indexer's keys only where indexer_types "
              "says full, so its layers differ in bytes a token"),
}


# MiniMax-M3: its language model is minimax_m2's dense GQA where no layer is sparse (the Hub's
# config.json names its text_config minimax_m2), which the text_config redirect reads exactly.
_MINIMAX_M3 = ("minimax_m3_vl", "minimax_m3_vl_text")


def _minimax_m3_sparse(cfg: Mapping[str, Any]) -> bool:
    """Whether a MiniMax-M3 config has a sparse layer, as transformers reads one (a nonzero
    ``sparse_attention_config.sparse_attention_freq`` entry, or a minimax_m3_sparse layer
    type) at its top level or in its text_config."""
    for level in (cfg, cfg.get("text_config")):
        if not isinstance(level, Mapping):
            continue
        sparse = level.get("sparse_attention_config")
        freq = sparse.get("sparse_attention_freq") if isinstance(sparse, Mapping) else None
        if isinstance(freq, list) and any(freq):
            return True
        types = level.get("layer_types")
        if isinstance(types, list) and "minimax_m3_sparse" in types:
            return True
    return False


# Where a model by hand of the layers FlatKV does plan comes close, and how close
_NEAREST_BY_HAND = {
    "qwen4_exp": ("by hand, Qwen3.5's GDN and full layers of its sizes plan it exactly where its "
                  "GDN state's page is the larger (to TP 4 with its defaults), QSA is off and "
                  "ple_layer_ids is empty"),
}


_NEAREST_BY_HAND["qwen4_exp_text"] = _NEAREST_BY_HAND["qwen4_exp"]


def _not_modeled_text(model_type: str, why: str) -> str:
    return (f"model_type {quoted_value(model_type)} is not supported yet: {why}, which FlatKV "
            "does not "
            "model (one KV size for full layers and one for sliding ones, one cache a layer); "
            + _NEAREST_BY_HAND.get(model_type, "no model by hand plans it exactly either, as it "
                                   "keeps those sizes too"))


# Where FlatKV does not read a config.json, the way out is to describe the model by hand: the
# words are shared (BY_HAND_ADVICE), how is each front end's. The library raises a ConfigError
# (``by_hand``) that carries both: BY_HAND in its message, the command line's (and the Python
# caller's) how, and BY_HAND_ON_PAGE in its ``on_page``, the Model page's, which the page shows
# (``on_the_model_page``).
BY_HAND_ADVICE = "describe the model by hand instead"
BY_HAND = (f"{BY_HAND_ADVICE} (the Model page's 'Edit by hand', or `python -m flatkv model "
           "--preset NAME --export` edited and read back with --model-file)")
BY_HAND_ON_PAGE = (f"{BY_HAND_ADVICE}: pick the preset nearest it under Preset above, then "
                   "change what differs under Edit by hand")


class ConfigError(ValueError):
    """A config.json refused where the way out is each front end's own: ``str()`` is the
    command line's (and a Python caller's) message, unchanged; ``on_page`` the Model page's,
    which names no command, flag or README section, but what to do on the page. Carried
    whole, where the page once rewrote the command line's text and missed any it did not
    match."""

    def __init__(self, message: str, on_page: str) -> None:
        super().__init__(message)
        self.on_page = on_page


def by_hand(problem: str, *, on_page: str | None = None, lead: str = "") -> ConfigError:
    """``problem`` (``on_page`` where the page words it otherwise), then the way to describe the
    model by hand instead (``lead`` before it: another way out, ending "or ")."""
    return ConfigError(f"{problem}; {lead}{BY_HAND}",
                       f"{problem if on_page is None else on_page}; {lead}{BY_HAND_ON_PAGE}")


def on_the_model_page(exc: ValueError) -> str:
    """A config.json error in the Model page's words: a ``ConfigError``'s own for the page,
    any other's message as it is (it names the field to fix, the same on either front end)."""
    return exc.on_page if isinstance(exc, ConfigError) else str(exc)


# Types whose engines serve them by a class of their own, not transformers' (which neither
# registers: BailingHybridForCausalLM)
SERVED_AS = {"bailing_hybrid": "BailingMoeV3ForCausalLM",
             # Gemma 4 Unified's language model alone: vLLM runs it as Gemma 4's, which
             # SGLang's hybrid SWA list holds (no Gemma4UnifiedForCausalLM is on it)
             "gemma4_unified_text": "Gemma4ForCausalLM"}


# The language models a wrapper's reader takes under its text_config, by the wrapper's type
# (a mistral3 whose text_config is a mistral4, MLA, would read as GQA heads it does not have; a
# gemma3n_text would lose its own KV sharing rule, keyed on its type)
LANGUAGE_MODELS = {
    "mistral3": ("mistral", "ministral", "ministral3", "mixtral", "llama"),
    "gemma3": ("gemma3_text",), "gemma3n": ("gemma3n_text",), "llama4": ("llama4_text",),
    "gemma4": ("gemma4_text",), "gemma4_unified": ("gemma4_unified_text",),
    "qwen3_5": ("qwen3_5_text",), "qwen3_5_moe": ("qwen3_5_moe_text",),
    "qwen3_vl": ("qwen3_vl_text",), "qwen3_vl_moe": ("qwen3_vl_moe_text",),
    "qwen2_vl": ("qwen2_vl_text",), "qwen2_5_vl": ("qwen2_5_vl_text",),
    "kimi_k25": ("deepseek_v3", "kimi_k2"),
}


# Architectures of types transformers does not know, by the type FlatKV reads them as.
_OWN_ARCHITECTURES = {"MiniMaxM1ForCausalLM": "minimax_m1",
                      "MiniMaxText01ForCausalLM": "minimax_text_01",
                      # the class both engines serve bailing_hybrid by (transformers names
                      # BailingHybridForCausalLM, which neither registers)
                      "BailingMoeV3ForCausalLM": "bailing_hybrid"}


def types_by_class() -> dict[str, list[str]]:
    """The types FlatKV reads that each class serves, in transformers' causal-LM then image-text
    tables' order (Llama4ForCausalLM is llama4's and llama4_text's), FlatKV's own first."""
    try:
        from transformers.models.auto import modeling_auto
    except ImportError:  # pragma: no cover - transformers is a runtime dependency
        return {}
    # only the types read here: several share a class (LlamaForCausalLM is exaone's too)
    by_class = {name: [model_type] for name, model_type in _OWN_ARCHITECTURES.items()}
    for table in (modeling_auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
                  modeling_auto.MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES):
        for model_type, names in table.items():
            if model_type in FAMILIES:
                for name in (names,) if isinstance(names, str) else names:
                    by_class.setdefault(name, []).append(model_type)
    return by_class


def _model_type_named(architectures: Any) -> tuple[str, str] | None:
    """(architecture, model_type) for the first of a config's ``architectures`` that names a
    type FlatKV reads (vLLM picks a model by its architectures; transformers by model_type),
    from transformers' causal-LM and image-text model tables; None where none does."""
    if not isinstance(architectures, list):
        return None
    by_class = types_by_class()
    return next(((a, by_class[a][0]) for a in architectures
                 if isinstance(a, str) and a in by_class), None)


def default_class(model_type: str) -> str | None:
    """transformers' class for ``model_type``, as its checkpoints name it: a multimodal
    wrapper's own (Llama4ForConditionalGeneration, which SGLang's sliding-window list holds),
    not its language model's; else its causal LM's; None where it names none."""
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES,
    )

    return next((found for mapping in (MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES,
                                       MODEL_FOR_CAUSAL_LM_MAPPING_NAMES)
                 if isinstance(found := mapping.get(model_type), str)), None)


def _causal_lm_class(model_type: str) -> str:
    """The language-model class of ``model_type`` as a config's architectures list
    (``["LlamaForCausalLM"]``), or a description where transformers names none."""
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    name = SERVED_AS.get(model_type) or MODEL_FOR_CAUSAL_LM_MAPPING_NAMES.get(model_type)
    return f'["{name}"]' if isinstance(name, str) else "naming its language model's class"


def resolve_config(cfg: Mapping[str, Any]) -> Any:
    """The transformers configuration object of ``cfg`` (lazy import; errors become ValueError):
    its model_type told apart from what FlatKV cannot read, its fields checked before
    transformers sees them, then read by transformers, whose errors are put in config terms."""
    model_type = _readable_model_type(cfg)
    if model_type in LANGUAGE_MODELS and "text_config" in cfg and cfg["text_config"] is None:
        raise ValueError(  # transformers reads a null as none given: its defaults, every size
            f"config.json text_config is null: {model_type} keeps its language model's config "
            "there, and transformers would plan its default language model instead; give the "
            "text_config as the checkpoint's config.json does")
    cfg = prechecked(cfg)
    _check_one_pattern(cfg, model_type)
    _check_kimi_lists(cfg, model_type)
    conf = _auto_config(cfg, model_type)
    _check_layer_count(cfg, conf)
    return conf


def _readable_model_type(cfg: Any) -> str:
    """``cfg``'s model_type, one FlatKV reads; otherwise why not, and what to load instead (a
    FlatKV file, the text_config alone, a type to set)."""
    if not isinstance(cfg, Mapping):
        raise ValueError(f"config is {type(cfg).__name__}: give the config.json as a dict")
    model_type = cfg.get("model_type")
    if model_type is None or model_type == "":
        if cfg.get("format") == FORMAT:
            raise ValueError(f"this is a FlatKV model file (format {FORMAT!r}), not a "
                             "config.json: load it as a model file (the Model page's Model "
                             "JSON, or --model-file)")
        if cfg.get("format") == PROFILE_FORMAT:
            raise ValueError(f"this is a FlatKV raw profile (format {PROFILE_FORMAT!r}), not a "
                             "config.json: load it under the Model page's Model JSON (on the "
                             "command line, give its fields as --layers, --kv-bytes-per-slot "
                             "and --state)")
        if isinstance(cfg.get("spec"), Mapping) and cfg["spec"].get("format") == FORMAT:
            raise ValueError("this is a model report (`model --json`), not a config.json: its "
                             "\"spec\" entry is a model file (--model-file)")
        if named := _model_type_named(cfg.get("architectures")):
            architecture, named_type = named
            raise ValueError(f"config.json has no model_type: its architectures name "
                             f"{architecture}, which is model_type \"{named_type}\": add "
                             f"\"model_type\": \"{named_type}\" to it")
        said = "config.json has no model_type: cannot tell how to read it; add the model's own"
        cli, page = _supported_texts()
        raise ConfigError(f"{said} ({cli})", f"{said} ({page})")
    if not isinstance(model_type, str):
        raise ValueError(
            f"config.json model_type = {as_written(model_type)} must be a string such as "
            "\"llama\": fix the field"
        )
    if model_type not in FAMILIES:
        inner = cfg.get("text_config")
        inner_type = inner.get("model_type") if isinstance(inner, Mapping) else None
        if inner_type is not None and not isinstance(inner_type, str):
            raise ValueError(f"config.json text_config.model_type = {as_written(inner_type)} must "
                             "be a string such as \"llama\": fix the field")
        if model_type in _MINIMAX_M3 and _minimax_m3_sparse(cfg):
            raise ValueError(_not_modeled_text(model_type, _MINIMAX_M3_WHY))
        if model_type in _MINIMAX_M3 and inner_type not in FAMILIES:
            raise ValueError(
                f"model_type {quoted_value(model_type)} without sparse layers is MiniMax-M2's "
                "dense model "
                "(GQA in every layer): load a copy of its text_config alone with \"model_type\": "
                "\"minimax_m2\", the wrapper's dtype and quantization_config copied into it")
        for kind in (model_type, inner_type):
            if kind in _NOT_READ_YET:
                raise by_hand(f"model_type {quoted_value(kind)} is not read yet: FlatKV plans "
                              "its layers, "
                              f"but does not read {_NOT_READ_YET[kind]}")
            if kind in _NOT_MODELED_YET:
                raise ValueError(_not_modeled_text(kind, _NOT_MODELED_YET[kind]))
        if inner_type in FAMILIES:
            raise ValueError(
                f"model_type {quoted_value(model_type)} is not read here, but its text_config "
                "(model_type "
                f"{quoted_value(inner_type)}) is: load a copy of the text_config alone (the "
                "language model keeps the KV cache the engines page), with the wrapper's dtype "
                "and quantization_config copied into it, and architectures "
                f"{_causal_lm_class(inner_type)}")
        # the llama hint is for a model of attention alone: not where the nearest types by
        # spelling all keep state (mamba3: mamba, mamba2, jamba)
        near = _nearest_types(model_type)
        as_llama = ("a model of full attention alone (no sliding window) whose config names "
                    "num_key_value_heads (without it llama reads one KV head per query head) "
                    "reads as llama: set \"model_type\": \"llama\" in a copy; or "
                    if not near or any(FAMILIES[t] == "attention" for t in near) else "")
        cli, page = _supported_texts(model_type)
        said = f"model_type {quoted_value(model_type)} is not supported"
        raise by_hand(f"{said} ({cli})", on_page=f"{said} ({page})", lead=as_llama)
    return model_type


_FIELD_ERROR = re.compile(r"Validation error for field '(?P<field>\w+)': \w+: (?P<why>.+)")


# its strict check of a null: "Field 'num_key_value_heads' expected int, got NoneType ..."
_NULL_FIELD = re.compile(r"expected (?P<expected>\w+)\W.*got NoneType")


_JSON_KINDS = {"int": "a whole number", "float": "a number", "str": "a string",
               "bool": "true/false", "list": "a list", "dict": "an object",
               "list[str]": "a list of strings", "list[int]": "a list of whole numbers",
               "PreTrainedConfig": "an object", "NoneType": "null"}


# the types its strict check takes: "expected int, got list", or a union's "doesn't match any
# type in (list[str], <class 'NoneType'>)"
_EXPECTED = re.compile(r"expected (?P<one>\w+), got|match any type in \((?P<union>[^)]*)\)")


def _field_error_text(cfg: Mapping[str, Any], model_type: str, where: str, field: str,
                      why: str) -> str:
    """transformers' strict check of one field (``why``: "Field 'vocab_size' expected int, got
    list (value: [['lots']])", in Python's names) in the config's: the value as the file writes
    it and the kinds of JSON value the field takes."""
    level = cfg.get(where.rstrip(".")) if where else cfg
    given = (f" = {as_written(level[field])}"
             if isinstance(level, Mapping) and field in level else "")
    takes = "a value of the kind the checkpoint's config.json gives"
    if expected := _EXPECTED.search(why):
        names = [re.sub(r"<class '(?:\w+\.)*(\w+)'>", r"\1", t.strip())
                 for t in (expected["one"] or expected["union"]).split(",")]
        kinds = list(dict.fromkeys(_JSON_KINDS.get(n, "an object") for n in names))
        takes = " or ".join(kinds)
    return (f"config.json {where}{field}{given} is not a value transformers' {model_type} "
            f"config takes: give {takes}, or remove the field")


# Attributes transformers derives from an entry of a nested object of config.json, by where the
# file gives it: Step-3.5's sliding layers' query heads, Kimi Linear's KDA sizes
_DERIVED_FROM = {"num_sliding_attention_heads": ("attention_other_setting", "num_attention_heads"),
                 **{attr: ("linear_attn_config", key) for attr, key in KDA_GIVEN_AS.items()}}


def _given_where(cfg: Mapping[str, Any], field: str) -> tuple[str, str]:
    """Where config.json gives the attribute ``field`` transformers refused (a prefix such as
    ``text_config.``, and the key): its own key at the top level or in a nested language-model
    config, else the nested entry transformers derives it from."""
    if field in cfg:
        return "", field
    nested = next((key for key in NESTED
                   if isinstance(cfg.get(key), Mapping) and field in cfg[key]), None)
    if nested:
        return f"{nested}.", field
    outer, inner = _DERIVED_FROM.get(field, ("", ""))
    if isinstance(cfg.get(outer), Mapping) and inner in cfg[outer]:
        return f"{outer}.", inner
    return "", field


# A class check that failed in Python's words on a value of the wrong kind, not the check's own
# ("'>' not supported between instances of 'str' and 'int'", "object of type 'int' has no
# len()"): the field to blame is searched for instead
_PYTHONS_WORDS = re.compile(r"not supported between instances of|unsupported operand type|"
                            r"object (?:of type '\w+' )?(?:is not|has no)|can't multiply")


def _default_count_said(cfg: Mapping[str, Any], why: str) -> str:
    """Where transformers' check compares a layer count the config.json does not give (its
    class default, 32 for LFM2) with a layer pattern it gives: a clause saying so, else ""."""
    if "`num_hidden_layers`" not in why or any(
            "num_hidden_layers" in level for _, level in levels(cfg)):
        return ""
    return ("; the config.json gives no num_hidden_layers, so that is transformers' default: add "
            "the model's")


# transformers' rope checks name the rope "`rope_parameters`" whatever field the file gives it in
_ROPE_SAID = re.compile(r"`rope_parameters`'s (?P<key>\w+)(?: field)?")


def _in_config_words(cfg: Mapping[str, Any], why: str) -> str:
    """transformers' words with its rope named by the field the config.json gives it in
    (``rope_scaling.short_factor``, not "`rope_parameters`'s short_factor field"), without the
    closing full stop a clause of FlatKV's follows."""
    def place(match: re.Match[str]) -> str:
        key = match["key"]
        return next((f"{where}{field}.{inner}{key}" for where, level in levels(cfg)
                     for field in ("rope_scaling", "rope_parameters")
                     if isinstance(level.get(field), Mapping)
                     for inner, part in rope_parts(level[field]) if key in part),
                    match[0])
    said = _ROPE_SAID.sub(place, why).rstrip()
    return said if said.endswith(" ...") else said.removesuffix(".")  # (" ...": cut short)


def _not_together_text(cfg: Mapping[str, Any], model_type: str, why: str,
                       null_to_blame: Callable[[str, str], bool]) -> str:
    """A class check of transformers that fields disagree (``why``, its own words, kept whole:
    they give the figures compared) with a fix in FlatKV's (``_fix_clause``)."""
    why = _in_config_words(cfg, why)
    said = f"this {model_type} config.json does not hold together: {why}"
    if default := _default_count_said(cfg, why):  # a fix of its own: add the count
        return f"{said}{default}"
    return f"{said}; {_fix_clause(cfg, why, null_to_blame)}"


def _fix_clause(cfg: Mapping[str, Any], why: str,
                null_to_blame: Callable[[str, str], bool]) -> str:
    """What to do about transformers' refusal ``why`` (which names fields, their values, but no
    fix): fix the config.json's fields it names, by their paths; else those the file gives as
    null, which the class fills in for itself (Falcon-H1's mamba_d_ssm, from mamba_expand x
    hidden_size), where ``null_to_blame(where, key)``: the config builds without it alone (a
    rope_scaling of null, as most checkpoints give it, was blamed for a Llama's 1,000,000
    heads); else its fields in general."""
    # transformers names a nested config's field by its key alone, a rope's entry by the path
    # _in_config_words gave it (not by its type: "rope type" is no field)
    paths = [(key, f"{where}{key}", True) for where, level in levels(cfg) for key in level]
    paths += [(path, path, False) for where, level in levels(cfg)
              for field in ("rope_scaling", "rope_parameters")
              if isinstance(level.get(field), Mapping)
              for inner, part in rope_parts(level[field])
              for path in (f"{where}{field}.{inner}{key}" for key in part
                           if key not in ("rope_type", "type"))]
    named = [(path, removable) for key, path, removable in paths
             if re.search(rf"(?<![\w.]){re.escape(key)}(?!\w|\.\w)", why)]
    nulls = [f"{where}{key}" for where, level in levels(cfg) for key, value in level.items()
             if value is None and null_to_blame(where, key)]
    if len(named) > 1:
        fields = [path for path, _ in named]
        return (f"fix {', '.join(fields[:-1])} and {fields[-1]} in config.json to the "
                "checkpoint's values so they agree, or remove the one that is wrong")
    if named:  # (a rope's entry its type needs is fixed, not removed)
        (path, removable), = named
        return (f"fix {path} in config.json to the checkpoint's value"
                f"{', or remove it' if removable else ''}")
    if nulls:
        one = len(nulls) == 1
        return (f"config.json gives {', '.join(nulls)} as null, which transformers fills in "
                f"for itself: give {'it' if one else 'them'} the checkpoint's "
                f"value{'' if one else 's'}")
    return "fix the fields it names in config.json to the checkpoint's values, or remove them"


def _culprit_text(culprit: tuple[str, Any], model_type: str) -> str:
    """The refusal of the one field ``_culprit`` found to blame."""
    key, value = culprit
    return (f"config.json {key} = {as_written(value)} is not a value transformers' "
            f"{model_type} config takes: fix or remove the field")


_CLASS_ERROR = re.compile(r"Class validation error for validator '\w+': \w+: (?P<why>.+)")


def _auto_config(cfg: Mapping[str, Any], model_type: str) -> Any:
    """transformers' configuration of ``cfg`` read as ``model_type`` (or the type FlatKV reads
    it as), quietly; its errors named by the field to fix."""
    try:
        from transformers import AutoConfig
        from transformers.utils import logging as hf_logging
    except ImportError as exc:  # pragma: no cover - transformers is a runtime dependency
        raise ValueError(f"reading a config.json needs transformers: {exc}") from None
    kwargs = {k: v for k, v in cfg.items() if k != "model_type"}
    for key in ("torch_dtype", "dtype"):  # "torch.bfloat16" is FlatKV's, not transformers'
        if isinstance(kwargs.get(key), str):
            kwargs[key] = kwargs[key].removeprefix("torch.")
    kwargs = _lightning_layer_types(model_type, kwargs)
    kwargs = _exaone_layer_types(model_type, kwargs)
    read_as = READ_AS.get(model_type, model_type)
    verbosity = hf_logging.get_verbosity()
    # its errors too: "Can't set layer_types ..." prints the whole config before it raises
    hf_logging.set_verbosity(hf_logging.CRITICAL)
    try:
        # quietly: its deprecation warnings (Kimi Linear's rope_scaling) would break the CLI's
        # one-line errors and notes on stderr. A filter of transformers' own warnings, set
        # again each time (no duplicate is kept): catch_warnings would restore the filters of
        # another session's thread
        warnings.filterwarnings("ignore", module=r"transformers(\.|$)")
        conf = AutoConfig.for_model(read_as, **kwargs)
    except Exception as exc:  # transformers raises many kinds; the user needs one message
        text = textwrap.shorten(" ".join(str(exc).split()), 300, placeholder=" ...")

        def null_to_blame(where: str, key: str) -> bool:
            return (_default_given(read_as, where, key)
                    or _builds(AutoConfig, read_as, _without(kwargs, where, key)))
        field = _FIELD_ERROR.search(text)  # transformers 5's strict dataclass checks
        if field:
            where, name = _given_where(cfg, field["field"])
            if null := _NULL_FIELD.search(field["why"]):  # Python's names, not the config's
                kind = _JSON_KINDS.get(null["expected"], "a value of another kind")
                raise ValueError(f"config.json {where}{name} is null, which "
                                 f"transformers' {model_type} config does not take: give "
                                 f"{kind} or remove the field") from None
            raise ValueError(_field_error_text(cfg, model_type, where, name,
                                               field["why"])) from None
        check = _CLASS_ERROR.search(text)
        if check:
            # a null size overrides the class default, and its check computes with None
            nulls = _nulls_to_blame(AutoConfig, read_as, kwargs) if "NoneType" in text else []
            if nulls:
                one = len(nulls) == 1
                whole = all("rope_" not in name for name in nulls)  # the others: sizes
                raise ValueError(f"config.json {' and '.join(nulls)} {'is' if one else 'are'} "
                                 f"null: transformers' {model_type} config computes with "
                                 f"{'it' if one else 'them'}; give a "
                                 f"{'whole number' if whole else 'number'} or remove the "
                                 f"field{'' if one else 's'}") from None
            if bad := _bad_layer_type(cfg, model_type, check["why"]):
                raise ValueError(bad) from None
            if _PYTHONS_WORDS.search(check["why"]) and (
                    culprit := _culprit(AutoConfig, read_as, kwargs)):
                raise ValueError(_culprit_text(culprit, model_type)) from None
            raise ValueError(_not_together_text(cfg, model_type, check["why"],
                                                null_to_blame)) from None
        if missing := _missing_rope_text(cfg, text):
            raise ValueError(missing) from None
        culprit = _culprit(AutoConfig, read_as, kwargs)
        if culprit is not None:
            # (its error is Python's: "'bool' object is not iterable", no setter of a property)
            raise ValueError(_culprit_text(culprit, model_type)) from None
        raise ValueError(_unread_text(cfg, exc, text, model_type, null_to_blame)) from None
    finally:
        hf_logging.set_verbosity(verbosity)
    return conf


# transformers' KeyError for a rope that lacks a number its type needs
_ROPE_MISSING = re.compile(r"Missing required keys in `rope_parameters` for "
                           r"'rope_type'='(?P<type>[^']*)': \{(?P<keys>[^}]*)\}")


def _missing_rope_text(cfg: Mapping[str, Any], text: str) -> str | None:
    """transformers' refusal of a rope that lacks a number its type needs (llama3's
    low_freq_factor, yarn's factor) in config terms: the rope field that lacks it, by its path,
    and the keys to add; None for any other error. (The whole rope_scaling was named as "not a
    value transformers takes", which left the key to add unsaid.)"""
    match = _ROPE_MISSING.search(text)
    if match is None:
        return None
    keys = sorted(key.strip(" '\"") for key in match["keys"].split(","))
    place = next((f"{where}{field}{'.' + inner.rstrip('.') if inner else ''}"
                  for where, level in levels(cfg) for field in ("rope_scaling", "rope_parameters")
                  if isinstance(level.get(field), Mapping)
                  for inner, part in rope_parts(level[field]) if not set(keys) <= set(part)),
                 "rope_scaling")
    it = "it" if len(keys) == 1 else "them"
    return (f"config.json {place} has no {', '.join(keys)}: {match['type']} rope scaling needs "
            f"{it}; add {it} as the model's config.json gives {it}")


_NO_SETTER = re.compile(r"property '(?P<field>\w+)' of '\w+' object has no setter")


def _unread_text(cfg: Mapping[str, Any], exc: Exception, text: str, model_type: str,
                 null_to_blame: Callable[[str, str], bool]) -> str:
    """Why transformers failed where no one field is to blame: its own words where they are
    its message (a ValueError of its checks), a field its class derives (a property it cannot
    set), never Python's ("KeyError: 9223372036854775808", "'bool' object is not iterable"),
    which say nothing of the config."""
    said = f"transformers could not read this {model_type} config.json"
    if type(exc) is ValueError or type(exc).__name__.endswith("ValidationError"):
        why = _in_config_words(cfg, text)
        return f"{said}: {why}; {_fix_clause(cfg, why, null_to_blame)}"
    if derived := _NO_SETTER.search(text):
        return (f"{said}: its class derives {derived['field']} from other fields; remove "
                f"{derived['field']} and check the others against the checkpoint's config.json")
    return (f"{said}, and no one field of it is to blame: compare its fields with the "
            "checkpoint's config.json")


# transformers' check of a layer list it reads under another name (nemotron_h's
# layers_block_type): "`layers_block_type` contains invalid types: {'foo'}. Must be one of: ..."
_INVALID_TYPES = re.compile(r"`(?P<field>\w+)` contains invalid types: \{(?P<bad>[^}]*)\}")


def _bad_layer_type(cfg: Mapping[str, Any], model_type: str, why: str) -> str:
    """Where transformers refused a ``layer_types`` (or ``layers_block_type``) entry (its
    message lists every label it knows, cut short, or Python's set of those it refused): the
    entry, its index and the labels beside it in that list, which are the spellings this model
    type takes; "" when the refusal is another."""
    if invalid := _INVALID_TYPES.search(why):
        # (its list as the config gives it: nemotron_h reads a layer_types as layers_block_type)
        fields, known = (invalid["field"], "layer_types"), None
        refused = {t.strip().strip("'\"") for t in invalid["bad"].split(",")}
    elif "`layer_types` entries must be in" in why:
        from transformers import configuration_utils

        # the labels it takes, and the older spellings it renames (granite's mamba / attention)
        fields, refused = ("layer_types",), set()
        known = {*configuration_utils.ALLOWED_LAYER_TYPES,
                 *getattr(configuration_utils, "_LEGACY_LAYER_TYPE_REMAP", {})}
    else:
        return ""
    for (where, level), field in product(levels(cfg), fields):
        labels = level.get(field)
        if not isinstance(labels, list):
            continue
        for i, label in enumerate(labels):
            named = isinstance(label, str)
            # (a null entry is Python's None in its set of those refused)
            if (label in refused if named else label is None and "None" in refused) or (
                    known is not None and not (named and label in known)):
                others = ", ".join(x if isinstance(x, str) else as_written(x)
                                   for x in dict.fromkeys(x for x in labels if x != label))
                beside = f" (the others in it: {others})" if others else ""
                return (f"config.json {where}{field}, entry {i + 1:,} of {len(labels):,}, "
                        f"is {as_written(label)}, which transformers' "
                        f"{model_type} config does not take{beside}: write the layer's type as "
                        "the checkpoint's config.json does")
    return ""


# MiniMax's configs say which layers are lightning attention in attn_type_list; vLLM's
# MiniMaxText01Model reads it first, then decoder_attention_types, then layer_types.
_ATTN_TYPE_LISTS = ("attn_type_list", "decoder_attention_types")


_ATTN_TYPES = {0: "linear_attention", 1: "full_attention"}


def _lightning_layer_types(model_type: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    """A MiniMax config's layer list as transformers' minimax class reads it: ``layer_types``
    from ``attn_type_list`` (0 lightning attention, 1 full), which vLLM reads before it. A
    MiniMax-Text-01 / M1 config (its own class, not transformers') with neither is refused:
    vLLM would make every layer full attention, transformers alternate them."""
    if FAMILIES.get(model_type) != "lightning":
        return kwargs
    key = next((k for k in _ATTN_TYPE_LISTS if kwargs.get(k)), None)  # vLLM's `or`: [] is none
    if key is None:
        if model_type != "minimax" and kwargs.get("layer_types") is None:
            raise ValueError(
                f"{model_type} config.json has no attn_type_list: vLLM's MiniMax reads which "
                "layers are lightning attention from it (0 linear, 1 full) and makes every layer "
                "full attention without it; add it as the checkpoint's config.json gives it")
        return kwargs
    values = kwargs[key]
    # a list or an object in the list is no entry (and no key of _ATTN_TYPES: a TypeError)
    if not isinstance(values, list) or any(
            isinstance(v, bool) or not isinstance(v, (int, float)) or v not in _ATTN_TYPES
            for v in values):
        shown = as_written(values)
        raise ValueError(f"config.json {key} = {shown} must be a list of 0 (lightning "
                         "attention) and 1 (full attention), one per layer, as vLLM's MiniMax "
                         "reads it: fix the field")
    layers = kwargs.get("num_hidden_layers")
    if isinstance(layers, int) and len(values) != layers:
        raise ValueError(f"config.json {key} has {len(values)} entries but num_hidden_layers = "
                         f"{layers}: give one per layer (0 lightning attention, 1 full)")
    return {**kwargs, "layer_types": [_ATTN_TYPES[v] for v in values]}


# EXAONE 4's sliding_window_pattern letters: a local (sliding) or a global layer
_EXAONE_LETTERS = {"L": "sliding_attention", "G": "full_attention"}


def _exaone_layer_types(model_type: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    """A sliding_window_pattern written as letters ("LLLG", EXAONE 4.0) repeated over the
    layers as layer_types, which vLLM reads (transformers' class takes only a number there
    when it derives them), and an EXAONE 4 without a sliding window all full attention (the
    class would divide by a pattern of 0); a config that lists its layer_types keeps them.
    Others unchanged."""
    pattern = kwargs.get("sliding_window_pattern")
    if (model_type == "exaone4" and "sliding_window" in kwargs and kwargs["sliding_window"] is None
            and kwargs.get("layer_types") is None
            and isinstance(layers := kwargs.get("num_hidden_layers"), int)):
        return {**kwargs, "layer_types": ["full_attention"] * layers}
    if not isinstance(pattern, str):
        return kwargs
    if not pattern or set(pattern) - set(_EXAONE_LETTERS):
        raise ValueError(f"config.json sliding_window_pattern = {quoted(pattern)}: write it as "
                         "letters L (sliding) and G (global, full attention), e.g. \"LLLG\", "
                         "or a whole number")
    if kwargs.get("layer_types") is not None:
        return kwargs
    layers = kwargs.get("num_hidden_layers")
    if layers is None:
        raise ValueError(f"config.json sliding_window_pattern = {quoted(pattern)} needs "
                         "num_hidden_layers to repeat it over: add it, or layer_types")
    kinds = [_EXAONE_LETTERS[pattern[i % len(pattern)]] for i in range(layers)]
    return {**kwargs, "layer_types": kinds}


def _builds(auto_config: Any, read_as: str, kwargs: dict[str, Any]) -> bool:
    try:
        auto_config.for_model(read_as, **kwargs)
    except Exception:  # noqa: BLE001 - any failure means "still broken"
        return False
    return True


def _default_given(read_as: str, where: str, key: str) -> bool:
    """Whether the config class of ``read_as`` (its ``where`` level's: ``text_config.``, a
    sub-config) has a default for ``key`` other than None, which a null in the file overrides
    (Falcon-H1's mamba_d_ssm, 1,024); a null of a field whose default is None, or that the
    class has no parameter for (a rope_scaling of null, as most checkpoints give it), is as
    the field left out."""
    import inspect

    from transformers import CONFIG_MAPPING

    # (its lazy mapping's get gives None for a type it holds: indexed, as AutoConfig does)
    cls: Any = CONFIG_MAPPING[read_as] if read_as in CONFIG_MAPPING else None  # noqa: SIM401
    for part in filter(None, where.split(".")):
        cls = (getattr(cls, "sub_configs", None) or {}).get(part)
    if cls is None:
        return False
    param = inspect.signature(cls.__init__).parameters.get(key)
    return param is not None and param.default not in (None, inspect.Parameter.empty)


def _without(kwargs: dict[str, Any], outer: str, key: str) -> dict[str, Any]:
    """``kwargs`` without the field ``key`` of the level ``outer`` (``""``, ``text_config.``,
    ``rope_scaling.`` or ``text_config.rope_scaling.``), which the class then defaults."""
    if not outer:
        return {k: v for k, v in kwargs.items() if k != key}
    *above, nested = outer.rstrip(".").split(".")
    inner = above[0] if above else nested
    level = kwargs[inner] if above else kwargs
    if above:  # text_config.rope_scaling.<key>
        return {**kwargs, inner: {**level, nested: {
            k: v for k, v in level[nested].items() if k != key}}}
    return {**kwargs, nested: {k: v for k, v in kwargs[nested].items() if k != key}}


def _nulls_to_blame(auto_config: Any, read_as: str, kwargs: dict[str, Any]) -> list[str]:
    """The null size fields (``text_config.`` ones named so) transformers computed with: those
    whose removal alone (the class default) lets the config build, else every null one. A
    field its class takes as None (Falcon-H1's mamba_d_ssm) is no culprit."""
    nulls = [(outer, key) for outer, level in levels(kwargs)
             for key in WHOLE_FIELDS if key in level and level[key] is None]
    # a rope number given as null (yarn's original_max_position_embeddings), which the class
    # divides by: rope_scaling.original_max_position_embeddings
    nulls += [(f"{outer}{rope}.", key) for outer, level in levels(kwargs)
              for rope in ("rope_scaling", "rope_parameters")
              if isinstance(level.get(rope), Mapping)
              for key in ROPE_NUMBERS if key in level[rope] and level[rope][key] is None]

    blamed = [f"{outer}{key}" for outer, key in nulls
              if _builds(auto_config, read_as, _without(kwargs, outer, key))]
    return blamed or [f"{outer}{key}" for outer, key in nulls]


def _culprit(auto_config: Any, read_as: str, kwargs: dict[str, Any]) -> tuple[str, Any] | None:
    """The one field of a config transformers failed on without naming it (a ``layer_types`` of
    5, a ``hybrid_override_pattern`` list): one whose removal lets the config build, as
    ``text_config.dtype`` for a nested one, and within an object the one entry to blame
    (``rope_scaling.short_factor``, ``vision_config.head_dim``); None when no single field
    is to blame."""
    builds = partial(_builds, auto_config, read_as)
    for outer in NESTED:  # a nested field first: dropping all of text_config would build too
        inner = kwargs.get(outer)
        if isinstance(inner, Mapping):
            found = _blame_within(inner, lambda part, inner=inner, outer=outer: builds(
                {**kwargs, outer: part}), f"{outer}.")
            if found is not None:
                return found
    return _blame_within(kwargs, builds)


def _blame_within(level: Mapping[str, Any], builds: Callable[[dict[str, Any]], bool],
                  where: str = "") -> tuple[str, Any] | None:
    """The entry of ``level`` whose removal alone lets the config build (``builds`` the config
    with ``level`` replaced), by its path below ``where``; in an object, the object's own entry
    to blame, where one is."""
    # within an object, not its type: a rope without one builds as the default rope
    keys = [k for k in level if not (where and k in ("rope_type", "type"))]
    key = _one_to_blame(keys, lambda drop: builds(
        {k: v for k, v in level.items() if k not in drop}))
    if key is None:
        return None
    inner = level[key]
    if isinstance(inner, Mapping) and inner:
        found = _blame_within(inner, lambda part: builds({**level, key: part}), f"{where}{key}.")
        if found is not None:
            return found
    return f"{where}{key}", inner


def _one_to_blame(keys: list[str], builds_without: Callable[[set[str]], bool]) -> str | None:
    """The key whose removal alone lets the config build, found by halving the suspects: about
    2 log2(n) builds, each reading the whole config, where trying each key in turn took n (a
    config padded with 5,000 keys took 90 s). None when no single key is to blame."""
    suspects = keys
    while len(suspects) > 1:
        first, second = suspects[:len(suspects) // 2], suspects[len(suspects) // 2:]
        if builds_without(set(first)):
            suspects = first
        elif builds_without(set(second)):
            suspects = second
        else:
            return None  # the blame is split across both halves
    return suspects[0] if suspects and builds_without(set(suspects)) else None


# The fields a type's class reads as one layer pattern: transformers' attribute_map makes
# layer_types and layers_block_type one attribute (granitemoehybrid's layers_block_type wins
# over layer_types, nemotron_h's layer_types over layers_block_type), and nemotron_h takes
# hybrid_override_pattern only where neither is given. A config giving two that disagree
# would be planned by whichever the class happens to keep, without a word.
_ONE_PATTERN = {"nemotron_h": ("hybrid_override_pattern", "layers_block_type", "layer_types"),
                "granitemoehybrid": ("layer_types", "layers_block_type")}


# nemotron_h's pattern letters and the older layer names, as transformers reads them
_PATTERN_LABELS = {"M": "linear_attention", "*": "full_attention", "-": "mlp", "E": "moe"}


_OLDER_LABELS = {"mamba": "linear_attention", "attention": "full_attention"}


def _pattern_labels(key: str, value: Any) -> list[str] | None:
    """The layer labels a pattern field gives, in transformers' names; None for a value that is
    no pattern (its own checks refuse it)."""
    if key == "hybrid_override_pattern":
        return ([_PATTERN_LABELS.get(letter, letter) for letter in value]
                if isinstance(value, str) else None)
    if not isinstance(value, list) or not all(isinstance(label, str) for label in value):
        return None
    return [_OLDER_LABELS.get(label, label) for label in value]


def _check_one_pattern(cfg: Mapping[str, Any], model_type: str) -> None:
    """Two fields one class reads as the same layer pattern (``_ONE_PATTERN``) must agree: a
    checkpoint re-saved with its pattern in a second field keeps working, one whose fields
    disagree is refused."""
    given = [(key, labels) for key in _ONE_PATTERN.get(model_type, ())
             if (labels := _pattern_labels(key, cfg.get(key))) is not None]
    for (key, labels), (other, theirs) in zip(given, given[1:]):
        if labels != theirs:
            def counts(kinds: list[str]) -> str:
                return ", ".join(f"{kinds.count(kind)} {kind}" for kind in dict.fromkeys(kinds))
            raise ValueError(
                f"config.json {key} ({counts(labels)}) and {other} ({counts(theirs)}) give "
                f"different layers, and transformers' {model_type} config keeps one of them "
                "without a word: make them agree, or give only one")


def _check_layer_count(cfg: Mapping[str, Any], conf: Any) -> None:
    """A num_hidden_layers the config gives must be the layers its pattern gives: nemotron_h
    counts its layer_types and drops the 52 a config says for the 3 its layer_types list."""
    for where, given in levels(cfg):
        resolved = getattr(conf, where[:-1], None) if where else conf
        said, counted = given.get("num_hidden_layers"), getattr(resolved, "num_hidden_layers",
                                                                 None)
        if isinstance(said, int) and isinstance(counted, int) and said != counted:
            raise ValueError(
                f"config.json {where}num_hidden_layers = {said} but its layer pattern "
                f"(layer_types / hybrid_override_pattern) has {counted} layers: make them agree"
            )


def _check_kimi_lists(cfg: Mapping[str, Any], model_type: str) -> None:
    """Kimi Linear's linear_attn_config lists its full and KDA layers by number (1-based):
    transformers' class makes one layer of each entry, so a layer in both, listed twice, past
    the last (0 is the last, by Python's indexing) or in neither would be planned wrong or
    fail on a layer_types the config does not hold; named by the list to fix."""
    linear = cfg.get("linear_attn_config")
    if model_type != "kimi_linear" or not isinstance(linear, Mapping):
        return
    layers = cfg.get("num_hidden_layers")
    if layers is None:
        from transformers import KimiLinearConfig

        layers = KimiLinearConfig.num_hidden_layers
    lists = {}
    for key in ("full_attn_layers", "kda_layers"):
        numbers = linear.get(key)
        field = f"config.json linear_attn_config.{key}"
        if numbers is None and key in linear:  # transformers fails on it naming the other list
            raise ValueError(f"{field} is null, which transformers does not read as absent: "
                             "list its layer numbers (1-based) or remove the field")
        if numbers is None:
            continue
        if not isinstance(numbers, list) or any(type(i) is not int for i in numbers):
            raise ValueError(f"{field} = {textwrap.shorten(repr(numbers), 60, placeholder=' ...')}"
                             " must be a list of layer numbers (1-based): fix the field")
        twice = sorted({i for i in numbers if numbers.count(i) > 1})
        if twice:
            raise ValueError(f"{field} = {textwrap.shorten(repr(numbers), 60, placeholder=' ...')}"
                             f" lists layer{'s' if len(twice) > 1 else ''} "
                             f"{', '.join(map(str, twice))} twice: list each layer once")
        if type(layers) is int and (out := [i for i in numbers if not 1 <= i <= layers]):
            raise ValueError(f"{field} has {', '.join(map(str, out))}, past the model's layers "
                             f"1 to {layers} (num_hidden_layers; the list counts from 1): fix "
                             "the field")
        lists[key] = set(numbers)
    if len(lists) < 2:
        return
    both = sorted(lists["full_attn_layers"] & lists["kda_layers"])
    if both:
        plural = "s" if len(both) > 1 else ""
        raise ValueError(f"config.json linear_attn_config lists layer{plural}"
                         f" {', '.join(map(str, both))} in both full_attn_layers and kda_layers: "
                         "give each layer one kind")
    neither = (sorted(set(range(1, layers + 1)) - lists["full_attn_layers"] - lists["kda_layers"])
               if type(layers) is int and cfg.get("layer_types") is None else [])
    if neither:
        shown = textwrap.shorten(", ".join(map(str, neither)), 60, placeholder=" ...")
        plural = "s" if len(neither) > 1 else ""
        raise ValueError(f"config.json linear_attn_config lists layer{plural}"
                         f" {shown} in neither full_attn_layers nor kda_layers: list each of "
                         f"layers 1 to {layers} (num_hidden_layers) in one of them")
