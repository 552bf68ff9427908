"""Fields of a resolved config, read so that the model's source line can name them.

The reader takes every size through ``whole_field``: it refuses a missing or non-whole value
by the field's name as config.json writes it (``text_config.num_attention_heads``), and a
``Recorded`` config remembers what was read, so the notes can list the sizes transformers
filled in because the config.json did not give them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flatkv.hf_json import as_written
from flatkv.models import MAX_CONV_KERNEL, MAX_DIM
from flatkv.patterns import MAX_CACHE_LAYERS
from flatkv.plan import bound_fix, bound_refusal, int_text
from flatkv.profile import MAX_CHUNK_SIZE, MAX_WINDOW


class Recorded:
    """A resolved config that remembers the sizes the reader used (through ``whole_field``), so the
    model's source line can name those the config.json did not give: transformers filled them
    in (``{"model_type": "llama"}`` alone is a 32-layer model with 32 KV heads). The layer
    builders note beside them, in ``split_from``, the attribute each figure a TP splits came
    from (layer -> {figure: attribute}), so that a TP refusal names the key they read."""

    def __init__(self, conf: Any, where: str = "", given: Mapping[str, Any] | None = None
                 ) -> None:
        # given: the fields config.json writes at this level (some a class pops once read)
        self.__dict__.update(conf=conf, used={}, split_from={}, where=where, given=given or {})

    def __getattr__(self, name: str) -> Any:
        conf = self.__dict__["conf"]
        try:
            return getattr(conf, name)
        except Exception as exc:  # transformers' AmbiguousGlobalPerLayerAttributeError
            # a field some layers override (Step-3.5's sliding layers' query heads) has a
            # global value too, the model's own: read it, as vLLM reads the config's field
            if type(exc).__name__ != "AmbiguousGlobalPerLayerAttributeError":
                raise
            return vars(conf)[name]


# Kimi Linear's checkpoint keeps its KDA sizes in linear_attn_config, under these names
# (KimiLinearConfig copies them to the attributes read here).
KDA_GIVEN_AS = {"linear_num_heads": "num_heads", "linear_head_dim": "head_dim",
                "linear_conv_kernel_dim": "short_conv_kernel_size"}
# ... and Bailing's, from its top-level fields (before transformers sets head_dim to 64)
BAILING_KDA_GIVEN_AS = {"linear_num_heads": "num_attention_heads", "linear_head_dim": "head_dim",
                        "linear_conv_kernel_dim": "short_conv_kernel_size"}


def given_as(conf: Any, attr: str) -> str:
    """The key config.json gives ``attr`` by, where it gives it otherwise than by the
    attribute's name: an alias of transformers' attribute_map either way (Kimi Linear's
    max_position_embeddings is its model_max_length; Step-3.5's num_key_value_heads its
    num_attention_groups), Kimi Linear's ``linear_attn_config`` entry, Bailing's field its KDA
    size is copied from; else ``attr``. A refusal names the key the user finds in the file."""
    given = conf.given if isinstance(conf, Recorded) else {}
    if attr in given:
        return attr
    aliases = getattr(conf, "attribute_map", None) or {}
    if aliases.get(attr) in given:
        return aliases[attr]
    if alias := next((a for a, target in aliases.items() if target == attr and a in given),
                     None):
        return alias
    linear = given.get("linear_attn_config")
    if isinstance(linear, Mapping) and KDA_GIVEN_AS.get(attr) in linear:
        return f"linear_attn_config.{KDA_GIVEN_AS[attr]}"
    if given.get("model_type") == "bailing_hybrid" and BAILING_KDA_GIVEN_AS.get(attr) in given:
        return BAILING_KDA_GIVEN_AS[attr]
    return attr


def field_name(conf: Any, attr: str) -> str:
    """A field as config.json writes it (``given_as``): ``text_config.num_attention_heads``
    where the model's fields sit in a nested language-model config."""
    return f"{conf.where}{given_as(conf, attr)}" if isinstance(conf, Recorded) else attr


# The most a size read here can be where it is no dimension (at most MAX_DIM): a conv kernel, a
# window or chunk in tokens, a layer count (the bounds ModelSpec's layers check, by their own
# field names)
_MOST = {**dict.fromkeys(("conv_kernel", "linear_conv_kernel_dim", "mamba_d_conv",
                          "conv_L_cache"), MAX_CONV_KERNEL),
         **dict.fromkeys(("sliding_window", "sliding_window_size", "attention_chunk_size"),
                         MAX_WINDOW),
         **dict.fromkeys(("mamba_chunk_size", "chunk_size"), MAX_CHUNK_SIZE),
         **dict.fromkeys(("num_hidden_layers", "num_layers", "num_kv_shared_layers"),
                         MAX_CACHE_LAYERS)}


def whole_field(conf: Any, attr: str, model_type: str, *, default: Any = None,
                minimum: int = 1) -> Any:
    """A whole-number field the model needs, ``minimum`` or more (positive by default)."""
    value = getattr(conf, attr, default)
    field = field_name(conf, attr)
    if value is None:
        raise ValueError(f"{model_type} config.json has no {field}: add it to the config")
    most = _MOST.get(attr, MAX_DIM)  # said here, by its key: the layer built of it names its own
    if (wrong := bound_refusal(value, minimum, most)) is not None:
        shown = int_text(value) if type(value) is int else as_written(value)
        raise ValueError(f"{model_type} config.json {field} = {shown} {wrong}: "
                         f"{bound_fix(value, minimum, most)} in the field")
    if isinstance(conf, Recorded):
        conf.used[attr] = value
    return value



def gemma4_full_fields(text: Any) -> dict[str, str]:
    """Which config.json field gives a Gemma 4 full layer's head_dim and KV heads, as
    transformers' Gemma4TextConfig fills its ``per_layer_config``: global_head_dim (512 where
    absent); num_global_key_value_heads where attention_k_eq_v is set and it is given, else
    the config's num_key_value_heads. A config.json that writes per_layer_config itself gives
    both there."""
    given = text.given if isinstance(text, Recorded) else {}
    if given.get("per_layer_config"):
        return {"head_dim": "per_layer_config head_dim",
                "num_key_value_heads": "per_layer_config num_key_value_heads"}
    global_heads = (getattr(text, "attention_k_eq_v", False)
                    and given.get("num_global_key_value_heads") is not None)
    return {"head_dim": "global_head_dim", "num_key_value_heads": (
        "num_global_key_value_heads" if global_heads else "num_key_value_heads")}
