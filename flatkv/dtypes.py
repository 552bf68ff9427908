"""Cache dtypes: canonical names, the aliases people type, and bytes per element.

KV, conv-state and ssm-state dtypes are chosen separately, and every number of bytes in FlatKV
is an exact integer, so a dtype is reduced here to its canonical name and its element size.
Names follow torch (``bfloat16``, ``float8_e4m3fn``); aliases cover what engines and configs write
(``bf16``, ``fp8``, ``torch.float32``, ``half``).
"""

from __future__ import annotations

from flatkv.units import quoted_value

DTYPE_BYTES: dict[str, int] = {
    "float32": 4,
    "bfloat16": 2,
    "float16": 2,
    "float8_e4m3fn": 1,
    "float8_e5m2": 1,
    "int8": 1,
}

KNOWN_DTYPES: tuple[str, ...] = tuple(DTYPE_BYTES)

# Alias -> canonical name. Keys are lower-case; lookups strip a leading "torch.".
DTYPE_ALIASES: dict[str, str] = {
    "fp32": "float32",
    "f32": "float32",
    "float": "float32",
    "bf16": "bfloat16",
    "fp16": "float16",
    "f16": "float16",
    "half": "float16",
    # vLLM's --kv-cache-dtype fp8 means e4m3 on CUDA.
    "fp8": "float8_e4m3fn",
    "float8": "float8_e4m3fn",
    "fp8_e4m3": "float8_e4m3fn",
    "fp8_e4m3fn": "float8_e4m3fn",
    "float8_e4m3": "float8_e4m3fn",
    "e4m3": "float8_e4m3fn",
    "fp8_e5m2": "float8_e5m2",
    "e5m2": "float8_e5m2",
    "i8": "int8",
}

# What to give instead of a dtype canonical_dtype does not know: the names and aliases it takes
DTYPE_FIX = (f"use one of {', '.join(KNOWN_DTYPES)} "
             f"(aliases: {', '.join(sorted(DTYPE_ALIASES))})")


# The dtypes SGLang keeps a state layer's ssm tensor in: what its SGLANG_MAMBA_SSM_DTYPE and a
# config's ``mamba_ssm_dtype`` may name (it ignores anything else, keeping float32).
SGLANG_SSM_DTYPES = ("float32", "bfloat16", "float16")
# The dtypes engines keep a conv or ssm state in: vLLM's mamba cache dtypes (auto, the model's,
# float32, float16, bfloat16) and SGLang's; no engine keeps a state in 1-byte elements.
STATE_DTYPES = SGLANG_SSM_DTYPES


def check_state_dtype(field: str, name: object) -> str:
    """The canonical name of a conv or ssm state dtype ``field`` gives; ValueError naming the
    field where it is unknown or one no engine keeps a state in (fp8, int8)."""
    dtype = canonical_dtype(name)
    if dtype not in STATE_DTYPES:
        raise ValueError(f"{field} is {dtype}: no engine keeps a state in it (vLLM's and "
                         f"SGLang's state dtypes are {', '.join(STATE_DTYPES)}); give one of "
                         "those")
    return dtype


# The config fields an engine's hook reads the ssm state's dtype from, by the model field that
# keeps it: SGLang's ``mamba_ssm_dtype`` (any model), vLLM's NemotronH ``mamba_ssm_cache_dtype``
CONFIG_SSM_FIELDS = {"config_mamba_ssm_dtype": "mamba_ssm_dtype as SGLang reads it",
                     "config_mamba_ssm_cache_dtype": "mamba_ssm_cache_dtype as vLLM's NemotronH "
                                                     "hook reads it"}


def check_config_ssm_dtype(value: object, field: str = "config_mamba_ssm_dtype") -> str | None:
    """``value`` as the config's ssm dtype ``field`` keeps (``CONFIG_SSM_FIELDS``: one of
    SGLANG_SSM_DTYPES, spelt as the engines spell them), or None; raises ValueError naming the
    field otherwise."""
    if value is not None and value not in SGLANG_SSM_DTYPES:
        raise ValueError(f"{field} is {quoted_value(value)}: give the config's "
                         f"{CONFIG_SSM_FIELDS[field]} ({', '.join(SGLANG_SSM_DTYPES)}), "
                         "or None when the config names none")
    return value


def canonical_dtype(name: object) -> str:
    """The canonical dtype name of ``name`` (a name, an alias or a torch dtype).

    Raises ValueError naming the value and listing the known names and aliases.
    """
    text = str(name).strip().lower() if name is not None else ""
    if text.startswith("torch."):
        text = text[len("torch."):]
    if text in DTYPE_BYTES:
        return text
    if text in DTYPE_ALIASES:
        return DTYPE_ALIASES[text]
    shown = quoted_value(name)  # a pasted page, or a list holding one, by its start
    raise ValueError(f"unknown dtype {shown}: {DTYPE_FIX}")


# What engines' flags call a canonical dtype, where they do not use its name: vLLM's and
# SGLang's --kv-cache-dtype fp8 (e4m3 on CUDA) and fp8_e5m2.
ENGINE_DTYPE_NAMES = {"float8_e4m3fn": "fp8", "float8_e5m2": "fp8_e5m2"}


# The KV dtype FlatKV plans in that neither engine keeps a cache in: FlatKV's own layouts store
# 1-byte int8 elements (a planner's choice), but no --kv-cache-dtype nor --dtype of vLLM 0.31 to
# 0.34 or SGLang 0.5.23 names a plain int8 cache (``unstored_kv_dtype_refusal``), so an engine
# column in it would size a run that engine cannot do
UNSTORED_KV_DTYPE = "int8"
# What to give instead, which both engines keep as it is (fp8 is their e4m3): a KV dtype of the
# same 1-byte elements, or the 2-byte one every model runs
UNSTORED_KV_FIX = "set the KV dtype to float8_e4m3fn (fp8) or bfloat16"
# What the KV dtype's field says of it where it is offered (the CLI's --kv-dtype, the Model
# page's picker), so the engine columns' refusal is no surprise
UNSTORED_KV_HELP = (f"{UNSTORED_KV_DTYPE} is FlatKV's layouts' alone: vLLM and SGLang keep no "
                    "cache in it")


def unstored_kv_dtype_refusal(kv_dtype: str | None, release: str, why: str) -> str | None:
    """Why an engine's ``release`` ("0.5.23", "0.31 to 0.34") cannot run a KV cache of
    ``kv_dtype``, None where it is not ``UNSTORED_KV_DTYPE``: ``why`` is the engine's own
    reason, its flags' choices with the source lines that list them, and the refusal ends with
    ``UNSTORED_KV_FIX``. One wording for each engine column, as the dtype and the fix are the
    same for both. It names the release, not the engine: the caller opens it with
    ``base.refuses_to_start``, which names the engine once."""
    if kv_dtype != UNSTORED_KV_DTYPE:
        return None
    return (f"no KV cache in {UNSTORED_KV_DTYPE} in {release}: {why}, so no run of it stores "
            f"this cache in {UNSTORED_KV_DTYPE}; {UNSTORED_KV_FIX}")


def dtype_label(name: str) -> str:
    """A canonical dtype as a picker shows it, with the engines' flag name where it differs:
    ``float8_e4m3fn (fp8)``."""
    flag = ENGINE_DTYPE_NAMES.get(name)
    return f"{name} ({flag})" if flag else name


def dtype_bytes(name: object) -> int:
    """Bytes per element of dtype ``name`` (any name ``canonical_dtype`` accepts)."""
    return DTYPE_BYTES[canonical_dtype(name)]
