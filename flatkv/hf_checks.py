"""Refusals of a resolved config that transformers reads, but that the engines would not plan
as FlatKV does.

transformers resolves many configs the engines read otherwise: architectures naming another
type's class (the engines pick their code paths by it), a field the engines need where only
transformers' class has a default, a model family's layer lists or windows that vLLM and SGLang
read from other fields than transformers. Planned anyway, such a config would get another
model's figures without a word, so each is refused here, by the field to fix. A config that
transformers itself cannot read is refused earlier, by ``hf_resolve``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flatkv.hf_json import NESTED, as_written, field_of, gives
from flatkv.hf_resolve import (
    FAMILIES,
    LANGUAGE_MODELS,
    READ_AS,
    SERVED_AS,
    by_hand,
    default_class,
    types_by_class,
)
from flatkv.plan import figure_text
from flatkv.units import quoted_value


def check_config(cfg: Mapping[str, Any], model_type: str) -> None:
    """Refuse a config whose architectures name another type's class, or without a field its
    engines need (``_ENGINES_NEED``)."""
    _check_architectures_match(cfg, model_type)
    _check_engines_need(cfg, model_type)


def check_text_config(cfg: Mapping[str, Any], model_type: str, text: Any, resolved: Any) -> None:
    """Refuse a resolved config (``text``: its language model's config, ``resolved`` itself for
    a model without one) whose layers the engines would read otherwise than transformers: one
    family at a time, then a language model or nested config the reader does not take."""
    _check_one_window(text, model_type, cfg)
    _check_bailing_layers(cfg, model_type)
    _check_kimi_layers(cfg, model_type)
    _check_longcat_layers(cfg, model_type)
    _check_language_model(model_type, text, resolved)
    _check_nested_read(cfg, model_type, text, resolved)


def _check_nested_read(cfg: Mapping[str, Any], model_type: str, text: Any, resolved: Any) -> None:
    """A nested config (text_config, llm_config) the class does not read (it keeps it as a plain
    dict, or ignores it) would leave its fields unplanned: refused."""
    if key := next((key for key in NESTED if isinstance(cfg.get(key), Mapping)
                    and (text is resolved or isinstance(text, Mapping))), None):
        article = "an" if key == "llm_config" else "a"
        raise ValueError(f"{model_type} config.json has {article} {key}, which transformers' "
                         f"{model_type} config does not read: move its fields to the top level "
                         "(or remove it)")


def _check_architectures_match(cfg: Mapping[str, Any], model_type: str) -> None:
    """A config's architectures must name a class of its model_type (or of the type it is read
    as, its language model's or its wrapper's): the engines pick their code paths by the class
    (SGLang its state slots a request, vLLM its model), so a Qwen3-Next config that names
    LlamaForCausalLM would get another model's figures. A class the tables do not know (a
    custom model's own) is not judged."""
    architectures = cfg.get("architectures")
    if not isinstance(architectures, list):
        return
    by_class = types_by_class()
    read_as = READ_AS.get(model_type, model_type)
    related = {model_type, read_as, model_type.removesuffix("_text"), f"{model_type}_text"}
    served = {SERVED_AS.get(model_type), default_class(model_type), default_class(read_as)}
    for name in architectures:
        if (not isinstance(name, str) or name not in by_class or name in served
                or related & {t for named in by_class[name]  # MiniMax-M1's class, Text-01's
                              for t in (named, READ_AS.get(named, named))}):
            continue
        own = default_class(model_type) or default_class(read_as)
        fix = (f"architectures [\"{own}\"]" if own else
               f"a class of {model_type}, which transformers names none of")
        raise ValueError(
            f"config.json architectures names {name}, the class of model_type "
            f"\"{by_class[name][0]}\", but its model_type is \"{model_type}\"" +
            (f", whose class is {own}" if own else "") +
            ": the engines pick their code paths by the class, so the figures would be "
            f"another model's; make them agree ({fix}), or fix model_type")


# Fields a model type's engines read with no default of theirs, though transformers' class
# fills one in: without them the class's default plans a model no engine serves.
_ENGINES_NEED: dict[str, tuple[tuple[str, str], ...]] = {
    "kimi_linear": (("linear_attn_config", "vLLM's and SGLang's Kimi Linear read its KDA layers "
                     "and sizes from it (kda_layers, full_attn_layers, num_heads, head_dim, "
                     "short_conv_kernel_size)"),),
    "lfm2_moe": (("layer_types", "vLLM's LFM2-MoE reads each layer's type from it (conv or "
                  "full_attention)"),),
    **dict.fromkeys((t for t, family in FAMILIES.items() if family == "lightning"), ((
        "head_dim", "vLLM's MiniMax sizes lightning attention's state by it "
        "(linear_attention_state_shape takes the config's head_dim, with no fallback)"),)),
    "longcat_flash": (("qk_rope_head_dim", "SGLang's LongcatFlashConfig takes 128 where it is "
                       "missing, transformers (and so vLLM) 64"),),
    "bailing_hybrid": (
        ("layer_group_size", "it places the MLA layers (the last of each group), and the "
         "engines' defaults differ: transformers' 6, vLLM's own BailingMoeV3 config 5, SGLang's "
         "1 (every layer MLA)"),
        ("short_conv_kernel_size", "SGLang's BailingHybridConfig runs Kimi Delta Attention only "
         "where it is given (else its linear layers keep a lightning-style state), while "
         "transformers fills in 4"),
        ("no_kda_lora", "vLLM's BailingMoeV3 refuses a config without it (\"BailingMoeV3 KDA "
         "currently expects no_kda_lora=True\")"),
    ),
}


def _check_engines_need(cfg: Mapping[str, Any], model_type: str) -> None:
    """Refuse a config without a field its engines need (``_ENGINES_NEED``)."""
    for field, why in _ENGINES_NEED.get(model_type, ()):
        if not gives(cfg, field):
            raise ValueError(f"{model_type} config.json has no {field}: {why}; add it as the "
                             "checkpoint's config.json gives it")


def _check_one_window(text: Any, model_type: str, cfg: Mapping[str, Any]) -> None:
    """K-EXAONE (exaone_moe): vLLM slides layer i over ``sliding_windows[i]`` where the config
    gives that list, over ``sliding_window`` otherwise (transformers reads only the latter).
    FlatKV plans one window, so the list must give every sliding layer ``sliding_window``."""
    field, windows = field_of(cfg, "sliding_windows")
    if model_type != "exaone_moe" or windows is None:
        return
    types = list(getattr(text, "layer_types", None) or [])
    window = getattr(text, "sliding_window", None)
    if not isinstance(windows, list) or len(windows) < len(types):
        raise ValueError(f"{model_type} config.json {field} must list a window for each of its "
                         f"{figure_text(len(types))} layers (as vLLM indexes it), got "
                         f"{as_written(windows)}")
    sliding = [i for i, kind in enumerate(types) if kind == "sliding_attention"]
    other = sorted({as_written(windows[i]) for i in sliding if windows[i] != window})
    if other:
        same = len({as_written(windows[i]) for i in sliding}) == 1
        raise ValueError(
            f"{model_type} config.json {field} gives its sliding layers "
            f"{', '.join(other)} where sliding_window is {as_written(window)}: vLLM slides each "
            "layer over its own entry, and FlatKV plans one window for every sliding layer; "
            + (f"a copy with sliding_window {other[0]} and no {field} plans it" if same else
               "it plans no model whose sliding layers differ in window"))


def _check_bailing_layers(cfg: Mapping[str, Any], model_type: str) -> None:
    """Ling-3.0-Flash (bailing_hybrid): the engines agree on its layers only where
    layer_group_size divides num_hidden_layers (past the last whole group vLLM's _is_kda_layer
    makes MLA layers, transformers linear ones, and SGLang refuses to load), and on its MLA
    bytes only without use_mla_nope (SGLang then keeps no rotary part, vLLM does)."""
    if model_type != "bailing_hybrid":
        return
    layers, group = cfg.get("num_hidden_layers"), cfg.get("layer_group_size")
    if type(group) is int and group <= 0:  # Python's modulo would read -6 as 6
        raise ValueError(f"bailing_hybrid config.json layer_group_size = {group} must be "
                         "positive: the last layer of each group is MLA; check the model's "
                         "values")
    if type(layers) is int and type(group) is int and layers % group:
        raise ValueError(
            f"bailing_hybrid config.json num_hidden_layers = {layers} is not a multiple of "
            f"layer_group_size = {group}: vLLM makes the {figure_text(layers % group)} layers past "
            "the last whole group MLA, transformers KDA, and SGLang refuses the model, so its "
            "layers are no one engine's; check the model's values")
    types = cfg.get("layer_types")
    placed = ([] if type(layers) is not int or type(group) is not int else
              ["full_attention" if (i + 1) % group == 0 else "linear_attention"
               for i in range(layers)])
    if placed and types is not None and types != placed:
        raise ValueError(
            f"bailing_hybrid config.json layer_types disagree with layer_group_size = {group}, "
            "by which vLLM and SGLang place the layers (the last of each group MLA, the others "
            "KDA; neither reads layer_types): drop layer_types or make them agree")
    if cfg.get("no_kda_lora") is not True:  # (its absence is _ENGINES_NEED's)
        raise ValueError(f"bailing_hybrid config.json no_kda_lora = "
                         f"{as_written(cfg.get('no_kda_lora'))}: "
                         "vLLM's BailingMoeV3 refuses it (\"BailingMoeV3 KDA currently expects "
                         "no_kda_lora=True\"); check the model's values")
    if cfg.get("use_mla_nope"):
        raise ValueError(
            "bailing_hybrid config.json use_mla_nope is set: SGLang then keeps no rotary part "
            "in its MLA cache (kv_lora_rank a token) while vLLM ignores the field (kv_lora_rank "
            "+ qk_rope_head_dim), so the engines keep different bytes, which FlatKV does not "
            "model; describe the model by hand for one engine's")


def _check_kimi_layers(cfg: Mapping[str, Any], model_type: str) -> None:
    """Kimi Linear: the engines take its KDA layers from linear_attn_config's kda_layers
    (1-based: vLLM's is_kda_layer, SGLang's KimiLinearConfig), transformers' class from
    layer_types where the config gives it too (a config re-saved by transformers 5 does). Where
    the two disagree, the figures would be of layers no engine builds: refused."""
    if model_type != "kimi_linear":
        return
    types, linear = cfg.get("layer_types"), cfg.get("linear_attn_config")
    if not (isinstance(types, list) and isinstance(linear, Mapping)
            and isinstance(kda := linear.get("kda_layers"), list)
            and all(type(i) is int for i in kda)):  # other values: not a list to compare
        return
    typed = [i + 1 for i, kind in enumerate(types) if kind == "linear_attention"]
    if sorted(typed) != sorted(kda):
        raise ValueError(
            f"kimi_linear config.json layer_types makes layers {typed} linear, but "
            f"linear_attn_config's kda_layers is {kda}: vLLM and SGLang read kda_layers, "
            "transformers layer_types; drop layer_types (the checkpoints give none) or make "
            "them agree")


def _check_longcat_layers(cfg: Mapping[str, Any], model_type: str) -> None:
    """LongCat-Flash counts its decoder layers by num_layers. A config.json that also gives
    num_hidden_layers is read two ways: transformers (and so vLLM) takes it as the attention
    count and halves it into num_layers, SGLang's own config as the decoder layers."""
    if model_type == "longcat_flash" and gives(cfg, "num_hidden_layers"):
        raise ValueError(
            "longcat_flash config.json gives num_hidden_layers: transformers (and vLLM) read it "
            "as two attentions a layer and set num_layers to half of it, SGLang as the decoder "
            "layers, so the engines would differ by twice the layers; give num_layers alone")


def _check_language_model(model_type: str, text: Any, resolved: Any) -> None:
    """A wrapper's language model is one its reader takes (``LANGUAGE_MODELS``)."""
    inner = getattr(text, "model_type", None) if text is not resolved else None
    if inner is None or isinstance(text, Mapping):  # a plain dict: the caller refuses it
        return
    takes = LANGUAGE_MODELS.get(model_type, ())
    if inner not in takes:
        raise by_hand(f"{model_type} config.json's text_config is model_type "
                      f"{quoted_value(inner)}, which "
                      f"FlatKV does not read as {model_type}'s language model (it reads "
                      f"{', '.join(takes) or 'none'})")


def refuse_top_level_text_fields(cfg: Mapping[str, Any], used: Mapping[str, int],
                                 model_type: str) -> None:
    """A multimodal config (gemma3, mistral3, qwen3_5, qwen3_vl) keeps its language model's
    sizes in a nested config; the same names at the top level are not read, so a config that
    gives them there would be planned with transformers' defaults without a word."""
    nested = next((key for key in NESTED if isinstance(cfg.get(key), Mapping)), NESTED[0])
    inner = cfg.get(nested) if isinstance(cfg.get(nested), Mapping) else {}
    ignored = [attr for attr, value in used.items()
               if attr in cfg and attr not in inner and cfg[attr] != value]
    if ignored:
        given = ", ".join(f"{attr} = {as_written(cfg[attr])}" for attr in ignored)
        default = ", ".join(f"{attr} {used[attr]:,}" for attr in ignored)
        raise ValueError(
            f"config.json {given} at the top level is not read: {model_type} keeps its language "
            f"model under {nested}, where transformers' defaults stand in ({default}); move "
            f"the field{'s' if len(ignored) > 1 else ''} into {nested}")


def check_heads_cover(heads: int, head_dim: int, d_inner: int, names: tuple[str, ...]) -> None:
    """The Mamba2 heads cover the inner dimension (expand x hidden_size) exactly, as the
    model's conv and ssm states both assume."""
    heads_name, expand_name, head_dim_name = names[:3]
    if d_inner % heads:
        raise ValueError(
            f"config.json {heads_name} = {heads} does not divide {expand_name} x hidden_size = "
            f"{d_inner:,}: the mamba heads would not cover the inner dimension; check the "
            "model's values")
    if heads * head_dim != d_inner:
        # the heads are often what a config leaves to transformers' default: name the count
        fix = (f"; with {head_dim_name} {head_dim}, give {heads_name} {d_inner:,} / {head_dim} "
               f"= {d_inner // head_dim:,} (a config without it gets transformers' default)"
               if d_inner % head_dim == 0 else "")
        raise ValueError(
            f"config.json {heads_name} x {head_dim_name} = {heads} x {head_dim} is not "
            f"{expand_name} x hidden_size = {d_inner:,}: the mamba heads would not cover the "
            f"inner dimension; check the model's values{fix}")


_INDEXER_LAYOUT_KEYS = ("indexer_types", "index_topk_pattern", "index_topk_freq")


def check_indexer_everywhere(text: Any, model_type: str, cfg: Mapping[str, Any]) -> None:
    """Refuse a config whose layers do not all keep the indexer's keys, or that vLLM refuses,
    as vLLM 0.34 reads it (``compute_skip_topk_layers``): layer i reuses an earlier layer's
    top-k, and keeps no keys, where ``indexer_types[i]`` is "shared", else where
    ``index_topk_pattern[i]`` is "S", else where ``max(i - offset + 1, 0) % index_topk_freq``
    is not 0 (``index_skip_topk_offset``, 2 unless given). DeepSeek-V3.2 and GLM-5 as released
    set none of them."""
    n_layers = getattr(text, "num_hidden_layers", 0) or 0
    types = getattr(text, "indexer_types", None)
    pattern = getattr(text, "index_topk_pattern", None)
    freq = getattr(text, "index_topk_freq", None)
    offset = getattr(text, "index_skip_topk_offset", 2)
    if types is not None:
        if (not isinstance(types, (list, tuple)) or len(types) != n_layers
                or not set(types) <= {"full", "shared"}):
            raise ValueError(f"{model_type} config.json indexer_types must hold \"full\" or "
                             f"\"shared\" for each of its {figure_text(n_layers)} layers (as vLLM "
                             "checks it), "
                             f"got {as_written(types)}")
        field = "indexer_types"
        shared = [i for i, kind in enumerate(types) if kind == "shared"]
    elif pattern is not None:
        if not isinstance(pattern, (list, str)):
            raise ValueError(f"{model_type} config.json index_topk_pattern = "
                             f"{as_written(pattern)} must be "
                             "a string or list of \"F\" / \"S\" a layer: fix or remove it")
        field = "index_topk_pattern"
        shared = [i for i in range(min(n_layers, len(pattern))) if pattern[i] == "S"]
    elif freq is not None:
        if isinstance(freq, bool) or not isinstance(freq, int) or freq <= 0:
            raise ValueError(f"{model_type} config.json index_topk_freq = {as_written(freq)} "
                             "must be a positive whole number (as vLLM checks it): fix or "
                             "remove it")
        field = f"index_topk_freq = {freq} (index_skip_topk_offset {offset})"
        shared = [i for i in range(n_layers) if max(i - offset + 1, 0) % freq]
    else:
        return
    if shared:
        # layer indices are names, not counts: bare, as the config's layer lists write them
        listed = ", ".join(map(str, shared[:6])) + (", ..." if len(shared) > 6 else "")
        # the field the config.json gives (transformers' class may derive indexer_types from it)
        given = [key for key in _INDEXER_LAYOUT_KEYS if gives(cfg, key)]
        if given and not field.startswith(given[0]):
            field = f"{given[0]} (as transformers reads it: {field})"
        raise ValueError(
            f"{model_type} config.json {field} leaves {figure_text(len(shared))} of its "
            f"{figure_text(n_layers)} layers "
            f"without the indexer's keys (layer{'s' if len(shared) > 1 else ''} {listed}): "
            "vLLM keeps them only on the others, so its MLA layers differ in bytes per token, "
            "which FlatKV does not model (one KV size for every attention layer); without the "
            "field, a copy plans every layer with the keys, an upper bound")
