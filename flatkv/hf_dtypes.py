"""The dtypes an engine keeps a config.json's caches in.

As an engine with ``--dtype auto --kv-cache-dtype auto`` serves the checkpoint: KV and conv
state in the model dtype (bfloat16 when the config names none or names float32, which engines
cast down); the KV cache in FP8 where a ModelOpt quantization_config asks for it; ssm state as
vLLM keeps it: Qwen3.5's ``mamba_ssm_dtype`` and Nemotron-H's ``mamba_ssm_cache_dtype`` (its
class default is float32), the only fields vLLM reads, else the model dtype (Kimi Linear's KDA
state always float32, as vLLM's ``kda_state_dtype``); SGLang reads ``mamba_ssm_dtype`` for any
model (``config_mamba_ssm_dtype``). Each function returns the dtype and a note saying where it
comes from when that is not the config's dtype.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from flatkv.dtypes import DTYPE_FIX, SGLANG_SSM_DTYPES, canonical_dtype
from flatkv.units import quoted_value


def config_dtype(field: str, value: object) -> str:
    """The canonical dtype config.json's ``field`` names; a ValueError naming the field, its
    value once and the dtypes known, where FlatKV does not know it."""
    try:
        return canonical_dtype(value)
    except ValueError:
        raise ValueError(f"config.json {field} = {quoted_value(value)} is an unknown dtype: "
                         f"{DTYPE_FIX}") from None


def served_dtype(*confs: Any) -> tuple[str, str]:
    """The dtype an engine serves the model in, and a note when that is not the config's.

    A float32 checkpoint is served in bfloat16: vLLM's ``--dtype auto`` casts float32 down to
    the platform's first supported dtype (bfloat16 on current GPUs; SGLang to a 2-byte dtype
    too), so its caches are half the bytes the config's dtype would give."""
    for conf in confs:
        value = getattr(conf, "dtype", None)  # transformers 5 maps torch_dtype to dtype
        if value is not None and str(value) != "auto":
            dtype = config_dtype("dtype", value)
            if dtype == "float32":
                return "bfloat16", ("float32 checkpoint served in bfloat16, as engines' dtype "
                                    "'auto' casts it")
            return dtype, ""
    return "bfloat16", ""


# vLLM's names for a ModelOpt checkpoint's kv_cache_quant_algo (vllm.utils.torch_utils
# MODELOPT_TO_VLLM_KV_CACHE_DTYPE_MAP), in FlatKV's dtype names.
_MODELOPT_KV_DTYPES = {"fp8": "float8_e4m3fn"}


def kv_dtype_of(cfg: Mapping[str, Any], model_dtype: str) -> tuple[str, str]:
    """The KV cache dtype with the engine's ``--kv-cache-dtype auto``, and a note when the
    config speaks of KV quantization: a ModelOpt checkpoint whose quantization_config names an
    FP8 KV cache gets one (vLLM's resolve_kv_cache_dtype_string); any other KV scheme keeps the
    model dtype, and the note says so (with how to match an engine run that applies it)."""
    quant = cfg.get("quantization_config")
    if not isinstance(quant, Mapping):
        return model_dtype, ""
    inner = quant.get("quantization", quant)
    inner = inner if isinstance(inner, Mapping) else quant
    # vLLM's order: kv_cache_scheme before kv_cache_quant_algo, the inner block before the outer
    key, given = next(((k, where[k]) for k in ("kv_cache_scheme", "kv_cache_quant_algo")
                       for where in (inner, quant) if where.get(k)), ("", None))
    if given is None:
        return model_dtype, ""
    algo = given
    if isinstance(algo, Mapping):  # {"dynamic": false, "num_bits": 8, "type": "float"}
        is_fp8 = (algo.get("dynamic") is False and algo.get("num_bits") == 8
                  and algo.get("type") == "float")
        algo = "fp8" if is_fp8 else None
    method = str(quant.get("quant_method", ""))
    dtype = _MODELOPT_KV_DTYPES.get(str(algo).lower()) if algo else None
    if method.startswith("modelopt") and dtype is not None:
        return dtype, f"KV cache {dtype} from quantization_config's {key} ({algo})"
    shown = given if isinstance(given, str) else json.dumps(given, sort_keys=True)
    if method.startswith("modelopt"):
        why = "vLLM falls back to the model dtype for it"
    else:
        why = (f"vLLM applies a {method or 'non-ModelOpt'} KV scheme only when told "
               "(--kv-cache-dtype); give the KV dtype to match such a run")
    return model_dtype, f"quantization_config's {key} {shown} not applied: {why}"


# The config fields vLLM takes the ssm state's dtype from, each with the model types whose hook
# reads it (Nemotron-H's field transformers defaults to float32); every other model keeps the
# state in the model dtype (--mamba-ssm-cache-dtype auto), whatever its config says.
_VLLM_SSM_DTYPE_READERS = {
    "mamba_ssm_dtype": ("Qwen3.5", ("qwen3_5", "qwen3_5_text", "qwen3_5_moe",
                                    "qwen3_5_moe_text")),
    "mamba_ssm_cache_dtype": ("Nemotron-H", ("nemotron_h",)),
}


def ssm_dtype_of(text: Any, model_dtype: str, cfg: dict, model_type: str, family: str
                 ) -> tuple[str, str]:
    """The ssm state dtype vLLM keeps and where it comes from: the config entry its hook for
    this model reads, or the default the transformers class fills in (Nemotron-H: float32,
    twice the state of the model dtype); else the model dtype, saying so when the config names
    an ssm dtype vLLM does not read for this model."""
    if family == "kda":
        return "float32", ("vLLM's kda_state_dtype, which keeps Kimi Delta Attention's recurrent "
                           "state in float32 whatever the model dtype")
    if family == "lightning":
        return model_dtype, ("vLLM's linear_attention_state_dtype, which keeps lightning "
                             "attention's state in the model dtype (it refuses a float32 state "
                             "for MiniMax)")
    given = {**cfg, **(cfg.get("text_config") or {})}
    attr = next((f for f, (_, types) in _VLLM_SSM_DTYPE_READERS.items() if model_type in types),
                None)
    value = getattr(text, attr, None) if attr else None
    if value is not None and str(value) != "auto":
        # named as the file writes it: Qwen3.5's in its text_config
        nested = isinstance(cfg.get("text_config"), Mapping) and attr in cfg["text_config"]
        dtype = config_dtype(f"text_config.{attr}" if nested else attr, value)
        whose = "the config's" if attr in given else "transformers' default for"
        return dtype, f"{whose} {attr}"
    ignored = next((f for f in _VLLM_SSM_DTYPE_READERS if f in given), None)
    if ignored:
        reader = _VLLM_SSM_DTYPE_READERS[ignored][0]
        return model_dtype, f"the model dtype (vLLM reads {ignored} only for {reader})"
    return model_dtype, "the model dtype"


def vllm_config_ssm_dtype_of(cfg: Mapping[str, Any], model_type: str, model_dtype: str
                             ) -> str | None:
    """The config's own ``mamba_ssm_cache_dtype`` for a model type whose vLLM hook reads that
    field (Nemotron-H; its VL, Omni and transcribe wrappers' hooks read their text config's,
    which is loaded alone here, so a top-level field is the one read: a nemotron_h config
    with a text_config is refused before this),
    canonical: ``model_dtype`` where it says "auto", which the hook sets as the flag's auto,
    keeping the conv's dtype, the model's (mamba_utils.py _mamba_state_dtype); None where the
    config names none, another model's hook reads no such field, or it names a dtype outside
    vLLM's MambaDType (the model's ssm dtype keeps it, as before). vLLM keeps the ssm state
    in it with --mamba-ssm-cache-dtype auto whatever the model's own ssm dtype is edited to;
    for a config naming none it takes its default (``vllm.ssm_dtype``: 0.34's float32, 0.19's
    float16), which is not recorded here, so that the field says what the config names."""
    field = "mamba_ssm_cache_dtype"
    if model_type not in _VLLM_SSM_DTYPE_READERS[field][1]:
        return None
    if (value := cfg.get(field)) is None:
        return None
    if str(value) == "auto":
        return model_dtype
    dtype = config_dtype(field, value)
    return dtype if dtype in SGLANG_SSM_DTYPES else None  # (vLLM's MambaDType, less auto)


def sglang_ssm_dtype_of(text: Any) -> tuple[str | None, str]:
    """The config's ``mamba_ssm_dtype`` as SGLang reads it (the text config's, spelt exactly
    float32, bfloat16 or float16; anything else it ignores, keeping float32), and a note when
    the config names one SGLang ignores."""
    value = getattr(text, "mamba_ssm_dtype", None)
    if value is None or value in SGLANG_SSM_DTYPES:
        return value, ""
    return None, (f"SGLang ignores mamba_ssm_dtype {quoted_value(value)} (it reads "
                  f"{', '.join(SGLANG_SSM_DTYPES)}) and keeps its ssm state in float32")
