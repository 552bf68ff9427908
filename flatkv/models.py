"""Model specifications: the cache layers of a model, and the bytes they take per TP rank.

Users think in models (heads, head dims, Mamba geometry, dtypes, tensor parallelism), the planner
in bytes per slot. A ``ModelSpec`` holds the first and reduces to the second through
``ModelSpec.profile()`` (a ``flatkv.profile.CacheProfile``), using the formulas of SPEC.md §2.

Cache layers, not model layers: an MLP / MoE-only layer carries no cache and is not listed; a
Falcon-H1 layer carries attention KV *and* Mamba state and is listed as two cache layers.

Kinds (``kind`` -> class):
    attention  full, sliding-window or chunked attention (MHA / GQA / MQA), K and V head dims
               may differ
    mla        multi-head latent attention (DeepSeek V2/V3): one latent + rope key per token,
               and V3.2's lightning indexer keys where index_head_dim is set
    gdn        gated delta net (qwen3_next, qwen3_5, olmo_hybrid linear attention; Kimi Delta
               Attention too, kimi_linear and bailing_hybrid, whose state shapes are GDN's):
               conv + ssm state
    mamba2     Mamba2 (nemotron_h, granitemoehybrid, falcon_h1, bamba, zamba2, mamba2): conv +
               ssm state
    mamba1     Mamba1 (jamba, mamba, falcon_mamba): conv + ssm state
    short_conv gated short convolution (lfm2, lfm2_moe, lfm3): conv state only
    lightning  lightning attention (MiniMax-Text-01 / M1): ssm state only

(the config.json model types each kind serves: ``hf_resolve.FAMILIES``)

The export format (``to_dict`` / ``from_dict``, also the preset format) names each distinct layer
geometry once under ``kinds`` and lists the layer order as a compact pattern over those names,
e.g. ``(3*gdn,full)*12``: a UI can edit the pattern as text or as a list of runs.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import MISSING, dataclass, field, fields, replace
from typing import Any, ClassVar

from flatkv.dtypes import canonical_dtype, check_config_ssm_dtype, check_state_dtype, dtype_bytes
from flatkv.patterns import MAX_CACHE_LAYERS, check_kind_name, format_pattern, parse_pattern
from flatkv.plan import (
    CHUNKED_ATTENTION,
    FULL_ATTENTION,
    LINEAR_ATTENTION,
    SLIDING_ATTENTION,
    check_int,
)
from flatkv.plan import state_const_bytes as _state_const_bytes
from flatkv.profile import (
    MAX_CHUNK_SIZE,
    MAX_WINDOW,
    NAME_FIX,
    SPARSE_MLA_KERNEL_BLOCK_SIZE,
    WINDOWED,
    CacheProfile,
    check_architectures,
)
from flatkv.tp_split import (
    GROUPS,
    HEADS_GCD,
    MODEL_FILE,
    REPLICATE,
    SHOWN_TP,
    SplitRefusal,
    TPSplitError,
    in_model,
    words_for,
)
from flatkv.units import (
    MAX_TOKENS,
    check_name,
    control_character,
    names_text,
    quoted,
    quoted_names,
    quoted_value,
)

FORMAT = "flatkv-model/1"

# The layer types an MTP module's layer may have (its attention, as its config lists it)
ATTENTION_LABELS = (FULL_ATTENTION, SLIDING_ATTENTION, CHUNKED_ATTENTION)

# Sanity caps: a value past these is a typo or a hostile file, not a model.
MAX_TP = 1024
# SHOWN_TP (tp_split): an error that a tp does not split a model lists the ones up to it that do
MAX_DIM = 1 << 20  # any head count, head dim, state dim or latent rank
MAX_CONV_KERNEL = 64
# The smallest kernel block vLLM runs a dense MLA model's attention on: 16. vLLM 0.31 to 0.34
# pick the first backend of cuda.py's _get_backend_priorities that takes the block size, and
# some MLA backend of kernel blocks of multiples of 16 runs on every GPU: FLASH_ATTN_MLA
# (Hopper's first, bf16) and TRITON_MLA (every GPU's fallback, fp8 too from SM 8.9), so a
# block of 16, 32 or 48 runs as it is. FlashMLA's 64 (Hopper's pick where FLASH_ATTN_MLA is
# missing) and CUTLASS MLA's 128 (Blackwell) are --kernel-block-size 64 / 128. DeepSeek-V3.2's
# sparse MLA pages by FlashMLA sparse's 64 (``SPARSE_MLA_KERNEL_BLOCK_SIZE``).
MLA_KERNEL_BLOCK_SIZE = 16


# The least a kind's field takes where it is not 1: a conv kernel keeps K - 1 rows of state
FIELD_MINIMUMS = {"conv_kernel": 2}


def _check_dim(where: str, value: object, *, minimum: int = 1, maximum: int = MAX_DIM) -> int:
    """A model dimension: a whole number in [minimum, maximum] (``plan.check_int``)."""
    return check_int(where, value, minimum=minimum, maximum=maximum,
                     hint="check the model's value")


def _split(layer: CacheLayer, field_name: str, tp: int) -> int:
    """``layer``'s ``field_name`` over tp, for a dimension tensor parallelism shards; an uneven
    split is a ``TPSplitError``."""
    value = getattr(layer, field_name)
    if value % tp:
        raise TPSplitError(SplitRefusal(field_name, value, tp, kind=layer.kind,
                                        layer_kind=layer.kind, label=layer.label))
    return value // tp


class CacheLayer:
    """What every cache-layer kind answers, per TP rank.

    History kinds (attention, MLA) have ``kv_bytes_per_slot`` > 0 and no state; state kinds have
    ``state_shapes`` (``{"conv": (...), "ssm": (...)}``) and ``kv_bytes_per_slot`` 0.
    """

    kind: ClassVar[str] = ""
    is_state: ClassVar[bool] = False

    @property
    def label(self) -> str:
        """The planner's label (``plan.LAYER_LABELS``): linear_attention for a state kind, else
        full_attention, or sliding / chunked attention as ``AttentionLayer`` says."""
        return LINEAR_ATTENTION if self.is_state else FULL_ATTENTION

    def kv_bytes_per_slot(self, tp: int, kv_dtype: str) -> int:
        """Bytes one token adds to this layer's KV on one TP rank (0 for state layers)."""
        return 0

    def kv_tensor_bytes(self, tp: int, kv_dtype: str) -> tuple[int, ...]:
        """``kv_bytes_per_slot`` split by the tensors an engine keeps for this layer (empty for
        state layers): what SGLang's "KV Cache is allocated" line sizes one by one."""
        return ()

    def kv_bytes_note(self, tp: int, kv_dtype: str) -> str:
        """How ``kv_bytes_per_slot`` adds up, where heads x dims x dtype do not tell it; ""
        elsewhere."""
        return ""

    def state_shapes(self, tp: int) -> dict[str, tuple[int, ...]]:
        """Per-TP-rank shapes of this layer's state tensors, in row order (empty for attention)."""
        return {}

    def state_bytes(self, tp: int, conv_dtype: str, ssm_dtype: str) -> dict[str, int]:
        """Bytes of each state tensor of this layer on one TP rank (empty for attention)."""
        shapes = self.state_shapes(tp)
        if not shapes:
            return {}
        return _state_const_bytes(
            shapes.get("conv"), dtype_bytes(conv_dtype), shapes.get("ssm"),
            dtype_bytes(ssm_dtype)
        )

    def geometry(self) -> dict[str, Any]:
        """The fields of this kind, as exported (``kind`` first)."""
        return {"kind": self.kind, **{f.name: getattr(self, f.name) for f in fields(self)}}

    def _validate(self) -> None:
        """Every field a positive size; a conv kernel at least 2 (its state keeps K - 1 rows)
        and at most MAX_CONV_KERNEL."""
        for f in fields(self):
            if f.name == "conv_kernel":
                _check_dim(f"{self.kind}.conv_kernel", self.conv_kernel,
                           minimum=FIELD_MINIMUMS["conv_kernel"], maximum=MAX_CONV_KERNEL)
            else:
                _check_dim(f"{self.kind}.{f.name}", getattr(self, f.name))


@dataclass(frozen=True)
class AttentionLayer(CacheLayer):
    """Full, sliding-window or chunked attention: ``kv_heads * (head_dim_k + head_dim_v)`` per
    token. A sliding layer keeps its last ``sliding_window`` tokens; a chunked one (Llama 4's
    chunked local attention) the tokens of its own chunk of ``attention_chunk_size``.

    Per TP rank the KV heads are split by tp, or replicated (one head per rank) when there are
    fewer heads than ranks, as vLLM and SGLang do.
    """

    kv_heads: int
    head_dim_k: int
    head_dim_v: int
    sliding_window: int | None = None
    attention_chunk_size: int | None = None

    kind: ClassVar[str] = "attention"

    def __post_init__(self) -> None:
        _check_dim("attention.kv_heads", self.kv_heads)
        _check_dim("attention.head_dim_k", self.head_dim_k)
        _check_dim("attention.head_dim_v", self.head_dim_v)
        for name in (windowed.field for windowed in WINDOWED.values()):
            if getattr(self, name) is not None:
                _check_dim(f"attention.{name}", getattr(self, name), maximum=MAX_WINDOW)
        if self.sliding_window is not None and self.attention_chunk_size is not None:
            raise ValueError(
                f"attention has sliding_window = {self.sliding_window} and attention_chunk_size"
                f" = {self.attention_chunk_size}: a layer is sliding or chunked, give one")

    @property
    def label(self) -> str:
        if self.sliding_window is not None:
            return SLIDING_ATTENTION
        return FULL_ATTENTION if self.attention_chunk_size is None else CHUNKED_ATTENTION

    def kv_heads_per_rank(self, tp: int) -> int:
        """KV heads on one rank: split over tp, or replicated (1 a rank) when tp is more."""
        check_int("tp", tp, minimum=1, maximum=MAX_TP)
        if self.kv_heads >= tp:
            return _split(self, "kv_heads", tp)
        if tp % self.kv_heads:
            raise TPSplitError(SplitRefusal("kv_heads", self.kv_heads, tp, REPLICATE,
                                            kind=self.kind, layer_kind=self.kind,
                                            label=self.label))
        return 1

    def kv_bytes_per_slot(self, tp: int, kv_dtype: str) -> int:
        return sum(self.kv_tensor_bytes(tp, kv_dtype))

    def kv_tensor_bytes(self, tp: int, kv_dtype: str) -> tuple[int, ...]:
        """K and V, each ``heads x head_dim x element``: two tensors a layer."""
        heads, element = self.kv_heads_per_rank(tp), dtype_bytes(kv_dtype)
        return heads * self.head_dim_k * element, heads * self.head_dim_v * element


@dataclass(frozen=True)
class MLALayer(CacheLayer):
    """Multi-head latent attention: ``kv_lora_rank + qk_rope_head_dim`` per token, not split.

    With ``index_head_dim`` (DeepSeek-V3.2's lightning indexer) each token also keeps an
    indexer key of ``index_head_dim`` fp8 bytes with a float32 scale per 128 (vLLM's
    DeepseekV32IndexerCache, SGLang's index_k buffer: 132 B at 128), in the same pages: vLLM
    puts both caches of every layer in one group of one block size, so they count as one row
    per token. Such a model's fp8 latent is vLLM's fp8_ds_mla (FlashMLA sparse) and SGLang's:
    the latent in fp8 with a float32 scale per 128, the rope part in bfloat16 (656 B at 512 +
    64), where a plain MLA layer keeps 576 fp8 bytes."""

    kv_lora_rank: int
    qk_rope_head_dim: int
    index_head_dim: int | None = None

    kind: ClassVar[str] = "mla"

    def __post_init__(self) -> None:
        _check_dim("mla.kv_lora_rank", self.kv_lora_rank)
        _check_dim("mla.qk_rope_head_dim", self.qk_rope_head_dim)
        if self.index_head_dim is not None:
            _check_dim("mla.index_head_dim", self.index_head_dim)

    @property
    def indexer_bytes_per_slot(self) -> int | None:
        """The indexer's key bytes a token (fp8 whatever the KV dtype), None without one."""
        if self.index_head_dim is None:
            return None
        return self.index_head_dim + self.index_head_dim // 128 * 4

    def _latent(self, kv_dtype: str) -> tuple[int, str]:
        """A token's latent bytes and their sum in words: an indexed layer's fp8 latent is
        fp8_ds_mla's (a float32 scale per 128, the rope part in bfloat16)."""
        rank, rope, element = self.kv_lora_rank, self.qk_rope_head_dim, dtype_bytes(kv_dtype)
        if self.index_head_dim is not None and element == 1:
            return (rank + rank // 128 * 4 + rope * 2,
                    f"{rank} + {rank // 128} x 4 + {rope} x 2")
        return (rank + rope) * element, f"({rank} + {rope}) x {element}"

    def kv_bytes_per_slot(self, tp: int, kv_dtype: str) -> int:
        return self._latent(kv_dtype)[0] + (self.indexer_bytes_per_slot or 0)

    @property
    def dsa_raw_fp8_bytes_per_slot(self) -> int | None:
        """An indexed layer's bytes a token with the latent raw in fp8 (``kv_lora_rank +
        qk_rope_head_dim`` bytes, no scales) beside the indexer's keys, whatever the KV dtype:
        SGLang's trtllm DSA layout (``CacheProfile.dsa_raw_fp8_bytes_per_slot``); None
        without an indexer."""
        if self.indexer_bytes_per_slot is None:
            return None
        return self.kv_lora_rank + self.qk_rope_head_dim + self.indexer_bytes_per_slot

    def kv_tensor_bytes(self, tp: int, kv_dtype: str) -> tuple[int, ...]:
        """One latent tensor a layer; the indexer keys count with it, as SGLang's DSA pool logs
        both in one figure."""
        return (self.kv_bytes_per_slot(tp, kv_dtype),)

    def kv_bytes_note(self, tp: int, kv_dtype: str) -> str:
        """An indexed layer's bytes a token: the latent (fp8_ds_mla's in fp8) and the keys."""
        if self.index_head_dim is None:
            return ""
        latent, terms = self._latent(kv_dtype)
        keys, indexer = self.index_head_dim, self.indexer_bytes_per_slot
        what = (" (fp8 with a float32 scale per 128, its rope part in bfloat16: vLLM's "
                "fp8_ds_mla, SGLang's alike)" if dtype_bytes(kv_dtype) == 1 else "")
        return (f"{latent + indexer:,} B a token = {terms} = {latent:,} B of latent{what} + "
                f"{keys} + {keys // 128} x 4 = {indexer} B of the indexer's keys (fp8 with a "
                "float32 scale per 128, whatever the KV dtype)")


@dataclass(frozen=True)
class GDNLayer(CacheLayer):
    """Gated delta net state per TP rank.

    conv ``((2*k_heads*d_k + v_heads*d_v) / tp, K-1)``; ssm ``(v_heads/tp, d_k, d_v)``.
    """

    k_heads: int
    v_heads: int
    head_dim_k: int
    head_dim_v: int
    conv_kernel: int

    kind: ClassVar[str] = "gdn"
    is_state: ClassVar[bool] = True

    def __post_init__(self) -> None:
        self._validate()
        if self.v_heads % self.k_heads:  # each key head serves whole value heads
            raise ValueError(f"gdn.v_heads = {self.v_heads:,} is not a multiple of gdn.k_heads = "
                             f"{self.k_heads:,}: no engine loads such a model; check the model's "
                             "values")

    def state_shapes(self, tp: int) -> dict[str, tuple[int, ...]]:
        k_heads = _split(self, "k_heads", tp)
        v_heads = _split(self, "v_heads", tp)
        conv_dim = 2 * k_heads * self.head_dim_k + v_heads * self.head_dim_v
        return {
            "conv": (conv_dim, self.conv_kernel - 1),
            "ssm": (v_heads, self.head_dim_k, self.head_dim_v),
        }


@dataclass(frozen=True)
class Mamba2Layer(CacheLayer):
    """Mamba2 state per TP rank.

    conv ``((n_heads*head_dim + 2*n_groups*d_state) / tp, K-1)``;
    ssm ``(n_heads/tp, head_dim, d_state)``.

    When tp does not divide n_groups, a single group is replicated up to tp (one per rank), as
    vLLM's and SGLang's MambaMixer2 do; any other group count must be divisible by tp (their
    assert: ``n_groups % tp == 0 or n_groups == 1``).
    """

    n_heads: int
    head_dim: int
    d_state: int
    n_groups: int
    conv_kernel: int

    kind: ClassVar[str] = "mamba2"
    is_state: ClassVar[bool] = True

    def __post_init__(self) -> None:
        self._validate()
        if self.n_heads % self.n_groups:  # each group serves whole heads
            raise ValueError(f"mamba2.n_heads = {self.n_heads:,} is not a multiple of "
                             f"mamba2.n_groups = {self.n_groups:,}: no engine loads such a model; "
                             "check the model's values")

    @property
    def d_inner(self) -> int:
        return self.n_heads * self.head_dim

    def groups_at(self, tp: int) -> int:
        """n_groups after replication for tp (all ranks together): SPEC's "raised to tp when tp
        does not divide it" holds for one group only, as vLLM's MambaMixer2 asserts ("If tensor
        parallel world size does not divide num_groups, then num_groups must equal 1")."""
        if self.n_groups % tp == 0:
            return self.n_groups
        if self.n_groups == 1:
            return tp
        raise TPSplitError(SplitRefusal("n_groups", self.n_groups, tp, GROUPS, kind=self.kind,
                                        layer_kind=self.kind))

    def state_shapes(self, tp: int) -> dict[str, tuple[int, ...]]:
        heads = _split(self, "n_heads", tp)
        conv_dim = (self.d_inner + 2 * self.groups_at(tp) * self.d_state) // tp
        return {
            "conv": (conv_dim, self.conv_kernel - 1),
            "ssm": (heads, self.head_dim, self.d_state),
        }


@dataclass(frozen=True)
class Mamba1Layer(CacheLayer):
    """Mamba1 state per TP rank: conv ``(d_inner/tp, K-1)``; ssm ``(d_inner/tp, d_state)``.

    d_inner is expand * hidden_size.
    """

    d_inner: int
    d_state: int
    conv_kernel: int

    kind: ClassVar[str] = "mamba1"
    is_state: ClassVar[bool] = True

    def __post_init__(self) -> None:
        self._validate()

    def state_shapes(self, tp: int) -> dict[str, tuple[int, ...]]:
        d_inner = _split(self, "d_inner", tp)
        return {"conv": (d_inner, self.conv_kernel - 1), "ssm": (d_inner, self.d_state)}


@dataclass(frozen=True)
class ShortConvLayer(CacheLayer):
    """A gated short convolution (LFM2's conv layers): a conv state and no ssm state, per TP
    rank ``(channels / tp, K-1)``, as vLLM's short_conv_state_shape over hidden_size and
    conv_L_cache (SGLang keeps the same, as a Mamba2 state with an empty ssm)."""

    channels: int
    conv_kernel: int

    kind: ClassVar[str] = "short_conv"
    is_state: ClassVar[bool] = True

    def __post_init__(self) -> None:
        self._validate()

    def state_shapes(self, tp: int) -> dict[str, tuple[int, ...]]:
        return {"conv": (_split(self, "channels", tp), self.conv_kernel - 1)}


@dataclass(frozen=True)
class LightningLayer(CacheLayer):
    """Lightning attention (MiniMax-Text-01 / M1's linear attention): a recurrent state of
    ``(heads / tp, head_dim, head_dim)`` per TP rank and no conv state, as vLLM's
    linear_attention_state_shape over num_attention_heads (query heads) and head_dim."""

    heads: int
    head_dim: int

    kind: ClassVar[str] = "lightning"
    is_state: ClassVar[bool] = True

    def __post_init__(self) -> None:
        self._validate()

    def state_shapes(self, tp: int) -> dict[str, tuple[int, ...]]:
        return {"ssm": (_split(self, "heads", tp), self.head_dim, self.head_dim)}


LAYER_KINDS: dict[str, type[CacheLayer]] = {
    cls.kind: cls for cls in (AttentionLayer, MLALayer, GDNLayer, Mamba2Layer, Mamba1Layer,
                              ShortConvLayer, LightningLayer)
}

# Each kind's required fields as a bundled preset gives them (Llama-3.1-8B, DeepSeek-V3.2,
# Kimi-Linear, Falcon-H1, Jamba-1.5, LFM2, MiniMax-M1): the example an error about a layer's
# fields gives as the fix
EXAMPLE_GEOMETRY: dict[str, dict[str, int]] = {
    "attention": {"kv_heads": 8, "head_dim_k": 128, "head_dim_v": 128},
    "mla": {"kv_lora_rank": 512, "qk_rope_head_dim": 64},
    "gdn": {"k_heads": 32, "v_heads": 32, "head_dim_k": 128, "head_dim_v": 128,
            "conv_kernel": 4},
    "mamba2": {"n_heads": 24, "head_dim": 128, "d_state": 256, "n_groups": 1, "conv_kernel": 4},
    "mamba1": {"d_inner": 8192, "d_state": 16, "conv_kernel": 4},
    "short_conv": {"channels": 2048, "conv_kernel": 3},
    "lightning": {"heads": 64, "head_dim": 128},
}


def example_layer(kind: str = "attention") -> str:
    """A cache layer of ``kind`` as a model file writes it, for a message's fix."""
    return json.dumps({"kind": kind, **EXAMPLE_GEOMETRY[kind]})


# The smallest model file, for the fix of a message about one's top-level fields
EXAMPLE_KINDS = f'{{"full": {example_layer()}}}'
EXAMPLE_PATTERN = '"32*full"'
SPEC_EXAMPLES = {
    "name": ("the model's name", '"custom"'),
    "kinds": ("its cache-layer geometries by name", EXAMPLE_KINDS),
    "pattern": ("its layers in order, over the kinds' names", EXAMPLE_PATTERN),
}
# ... and of its text fields
_TEXT_EXAMPLES = {"source": '"meta-llama/Llama-3.1-8B config.json"',
                  "notes": '"KV cache in FP8 as served."',
                  "edited_from": '"Qwen3-Next-80B-A3B"'}


def _per_kind_text(per_kind: Mapping[str, int | Mapping[str, int]], limit: int = 6) -> str:
    """Each kind's bytes as an error shows them: ``full: 4,096 B; full2: 2,048 B`` (a state
    kind's tensors joined, ``gdn: conv 24,576 B + ssm 1,048,576 B``). At most ``limit`` kinds,
    one of each size first (those that differ), then how many more: 256 kinds made a line of
    12 KB."""
    def text(value: int | Mapping[str, int]) -> str:
        if isinstance(value, Mapping):
            return " + ".join(f"{tensor} {size:,} B" for tensor, size in value.items())
        return f"{value:,} B"
    firsts: dict[str, str] = {}  # each size's first kind
    for kind, value in per_kind.items():
        firsts.setdefault(text(value), kind)
    picked = list(dict.fromkeys([*firsts.values(), *per_kind]))[:limit]
    more = len(per_kind) - len(picked)
    return "; ".join(f"{kind}: {text(value)}" for kind, value in per_kind.items()
                     if kind in picked) + (f"; and {more:,} more kind{'s' * (more > 1)}"
                                           if more else "")


# The max_model_len both engines assume for a config.json with no length field (vLLM's
# _get_and_verify_max_len, then times a rope factor; SGLang's get_context_length, unscaled):
# hf_length reads it
ASSUMED_MAX_MODEL_LEN = 2048


def past_max_model_len_text(max_model_len: int, code: Callable[[str], str] = str,
                            assumed: bool = False) -> str:
    """What the engines do with a context past the model's max_model_len, for the app (``code``
    wraps a flag in a Markdown code span; it starts the sentence) and the CLI (plain, after
    "the context is") alike. ``assumed``: the length is the 2,048 both engines assume for a
    config without one (vLLM's times a rope factor, SGLang's not), which vLLM does not hold a
    --max-model-len told to (it returns it before any check) but SGLang does, at its own
    unscaled ASSUMED_MAX_MODEL_LEN."""
    if assumed:
        return (f"past the {max_model_len:,} tokens assumed for this model (its config gives "
                f"no length): vLLM takes any {code('--max-model-len')} told, SGLang refuses a "
                f"{code('--context-length')} above {ASSUMED_MAX_MODEL_LEN:,} unless "
                f"{code('SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1')}")
    return (f"past this model's {max_model_len:,} tokens: vLLM refuses a "
            f"{code('--max-model-len')} above the length its config gives unless "
            f"{code('VLLM_ALLOW_LONG_MAX_MODEL_LEN=1')}, SGLang a {code('--context-length')} "
            f"unless {code('SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1')}")


def layer_from_dict(data: object, *, where: str = "layer") -> CacheLayer:
    """A cache layer from ``{"kind": ..., <fields>}``; unknown kinds or fields are errors."""
    if not isinstance(data, Mapping):
        raise ValueError(f"{where} {quoted_value(data)} must be an object with a 'kind': give "
                         f"one such as {example_layer()}")
    kind = data.get("kind")
    cls = LAYER_KINDS.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ValueError(f"{where}.kind = {quoted_value(kind)} is unknown: use one of "
                         f"{list(LAYER_KINDS)}")
    names = [f.name for f in fields(cls)]
    unknown = sorted(set(data) - set(names) - {"kind"})
    if unknown:
        raise ValueError(f"{where} ({kind}) has unknown {names_text('field', unknown)}: fields "
                         f"are {', '.join(names)}")
    required = [f.name for f in fields(cls) if f.default is MISSING]  # those without defaults
    missing = [n for n in required if n not in data]
    if missing:
        raise ValueError(f"{where} ({kind}) is missing {names_text('field', missing)}: give "
                         f"{', '.join(required)}, e.g. {example_layer(kind)}")
    try:
        return cls(**{n: data[n] for n in names if n in data})
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None


# --------------------------------------------------------------------------------------------
# The model specification.

_BASE_NAMES = {
    "attention": "full",
    "mla": "mla",
    "gdn": "gdn",
    "mamba2": "mamba2",
    "mamba1": "mamba1",
    "short_conv": "conv",
    "lightning": "lightning",
}


def kind_name(layer: CacheLayer) -> str:
    """The name a spec gives a kind of layer unless told otherwise: full, sliding, chunked, mla,
    gdn, mamba2, mamba1, conv, lightning (presets, config.json imports and the Model page's new
    kinds alike)."""
    if layer.label in WINDOWED:
        return WINDOWED[layer.label].name
    return _BASE_NAMES[layer.kind]


@dataclass(frozen=True)
class KindSummary:
    """One distinct cache-layer geometry of a model, per TP rank (what the UI tabulates)."""

    name: str
    kind: str
    label: str
    count: int
    geometry: dict[str, Any]
    kv_bytes_per_token: int  # one layer, one token; 0 for state kinds
    state_shapes: dict[str, tuple[int, ...]]
    state_bytes: dict[str, int]  # one layer; empty for attention kinds

    @property
    def state_bytes_per_layer(self) -> int:
        return sum(self.state_bytes.values())


def _checked_layers(layers: object) -> tuple[CacheLayer, ...]:
    """``layers`` as a tuple of one to MAX_CACHE_LAYERS cache layers, or the ValueError that
    names what it is instead."""
    if isinstance(layers, (str, bytes)) or not isinstance(layers, Iterable):
        raise ValueError(f"layers {quoted_value(layers)} must be a list of cache layers: give "
                         f"one such as [{example_layer()}]")
    layers = tuple(layers)
    if not layers:
        raise ValueError("layers is empty: a model needs at least one cache layer")
    if len(layers) > MAX_CACHE_LAYERS:
        raise ValueError(
            f"layers holds {len(layers):,} cache layers, too many to be real: give "
            f"{MAX_CACHE_LAYERS:,} or fewer"
        )
    for i, layer in enumerate(layers):
        if not isinstance(layer, CacheLayer):
            raise ValueError(f"layers[{i}] {quoted_value(layer)} must be a cache layer: give one "
                             f"such as layer_from_dict({example_layer()})")
    return layers


@dataclass(frozen=True)
class ModelSpec:
    """A model's cache layers, dtypes and tensor parallelism; reduces to a CacheProfile.

    name: what the UI and CLI call it. layers: one CacheLayer per cache layer, in model order.
    kv_dtype / conv_dtype / ssm_dtype: canonical dtype names (aliases accepted). tp: tensor
    parallel size; every byte count is per TP rank. source: where the numbers come from.
    model_layers: the model's own layer count when it differs from the cache layers (MLP-only
    layers, Falcon-H1's double layers); informational. notes: free text (caveats).
    architectures: the config's ``architectures`` class names, empty when unknown (a model
    typed by hand); SGLang chooses its sliding-window pool by them.
    config_mamba_ssm_dtype: SGLang's: the config's ``mamba_ssm_dtype`` when it names a dtype
    SGLang reads, else None; SGLang keeps the ssm state in it, vLLM's figures never read it
    (``ssm_dtype`` is the model's, from the model dtype or the config field vLLM's hook reads:
    Qwen3.5's mamba_ssm_dtype, Nemotron-H's mamba_ssm_cache_dtype).
    config_mamba_ssm_cache_dtype: vLLM's: a config.json's own ``mamba_ssm_cache_dtype`` where vLLM's
    hook for the model reads it (Nemotron-H), else None: vLLM keeps the ssm state in it with
    --mamba-ssm-cache-dtype auto, whatever ``ssm_dtype`` is edited to
    (``CacheProfile.config_mamba_ssm_cache_dtype``).
    attention_heads: the config's ``num_attention_heads`` (query heads), None when unknown. No
    cache holds query heads, but engines split them over the ranks and refuse a tp that does
    not divide them (vLLM: "Total number of attention heads (28) must be divisible by tensor
    parallel size (8)"), so such a tp is refused here too. A model whose layers differ in
    query heads (Step-3.5: 64 full, 96 sliding) gives their greatest common divisor.
    mamba_chunk_size: the config's ``mamba_chunk_size`` (or ``chunk_size``) of a state model,
        None when it has none or is unknown; vLLM aligns P to it in mamba cache mode all.
    max_model_len: the context vLLM serves the model at unless told (its --max-model-len
        default: the config's max_position_embeddings, times a rope scaling factor where one
        applies), None when unknown; its log's "Maximum concurrency for N tokens per request"
        is at this N, and it refuses a longer --max-model-len unless allowed.
    max_model_len_assumed: True where the config gives no length and max_model_len is the
        2,048 vLLM assumes (with a warning; SGLang assumes it too): a guess every figure at it
        rests on, so the pages say so, and vLLM takes a longer --max-model-len as told.
    max_model_len_typed: True where max_model_len was typed (the Model page's hand editor), not
        read off a config: the pages say where the length they count at comes from.
    mtp_layer_types: the layer types of the model's MTP modules where its config lists them
        (Step-3.5's three ``sliding_attention``), else empty: an MTP module is then one
        full-attention layer (Qwen3-Next's, DeepSeek-V3's), which ``with_mtp_layer`` adds.
    mtp_modules: the config's num_nextn_predict_layers where it gives one (the MTP modules its
        checkpoint holds), else None. 0 says the checkpoint has none: ``with_mtp_layer`` then
        says the engines' MTP drafting does not start on it.
    kv_shared_layer_types: the layer types of the layers past ``layers`` that read an earlier
        layer's KV (Gemma 3n's and Gemma 4's last num_kv_shared_layers), else empty: no cache
        of their own, but SGLang keeps a pool layer for each (``CacheProfile``'s field).
    learnable_sink: the config's ``learnable_sink`` (learnable attention sinks in DeepSeek's
        sparse attention), False where it gives none. SGLang 0.5.23 reads it (``getattr(
        hf_config, "learnable_sink", False)``, arg_groups/overrides.py 526) and then keeps the
        DSA cache in bfloat16 on any GPU and refuses any other --kv-cache-dtype (527-535); the
        profile carries it where an MLA layer keeps the indexer's keys
        (``CacheProfile.learnable_sink``).
    edited_from: the bundled preset a model made in the Model page's editor was seeded from
        (its name), "" for any other: a config.json's, one typed from scratch. Its class is
        then the preset's, which the editor keeps until changed, so the page and the CLI's
        ``model`` say where its layers are no longer that preset's
        (``presets.preset_class_note``); a model seeded from a config.json keeps its own.
    """

    name: str
    layers: tuple[CacheLayer, ...]
    kv_dtype: str = "bfloat16"
    conv_dtype: str = "bfloat16"
    ssm_dtype: str = "bfloat16"
    tp: int = 1
    source: str = ""
    model_layers: int | None = None
    notes: str = ""
    architectures: tuple[str, ...] = ()
    config_mamba_ssm_dtype: str | None = None
    config_mamba_ssm_cache_dtype: str | None = None
    attention_heads: int | None = None
    mamba_chunk_size: int | None = None
    max_model_len: int | None = None
    max_model_len_assumed: bool = False
    max_model_len_typed: bool = False
    mtp_layer_types: tuple[str, ...] = ()
    kv_shared_layer_types: tuple[str, ...] = ()
    mtp_modules: int | None = None
    learnable_sink: bool = False
    edited_from: str = ""
    _kind_names: tuple[tuple[CacheLayer, str], ...] = field(
        default=(), repr=False, compare=False
    )
    # where the spec came from, which words a TP it refuses (``tp_split.words_for``): a preset
    # in plain words, a config.json by its keys, a model file (or an edit) by its field names;
    # not exported: a spec written out is a model file
    _origin: str = field(default=MODEL_FILE, repr=False, compare=False)
    # a config.json's: (layer type, label, field, figure) of each figure a TP splits -> (the
    # key that gave it, whether the file writes it); the query heads' type and label empty. By
    # what the figure is, not by the layer object: a layer replaced after loading (a dtype, a
    # head dim edited) keeps the keys of the figures it keeps, and a figure changed finds none,
    # never the key of a value the file did not give (``tp_refusal``)
    _config_keys: tuple[tuple[tuple[str, str, str, int], tuple[str, bool]], ...] = field(
        default=(), repr=False, compare=False
    )

    def __post_init__(self) -> None:
        """Check and normalise every field in the order its errors should surface: the name and
        text first (source, notes, architectures, the config's ssm dtype), then the layers,
        sizes, length flags and layer-type lists, last the kind names and the checks that need
        them (heads, the TP split)."""
        check_name("name", self.name, fix=NAME_FIX)
        self._check_text()
        object.__setattr__(self, "architectures", check_architectures(self.architectures))
        check_config_ssm_dtype(self.config_mamba_ssm_dtype)
        check_config_ssm_dtype(self.config_mamba_ssm_cache_dtype, "config_mamba_ssm_cache_dtype")
        object.__setattr__(self, "layers", _checked_layers(self.layers))
        self._check_dtypes_and_sizes()
        self._check_length_flags()
        self._check_sink()
        self._check_layer_type_lists()
        if self.mtp_modules is not None:
            check_int("mtp_modules", self.mtp_modules, maximum=MAX_CACHE_LAYERS,
                      hint="the config's num_nextn_predict_layers, or leave it out")
        object.__setattr__(self, "_kind_names", self._named_kinds())
        self._check_heads_and_split()

    def _check_text(self) -> None:
        """source, notes and edited_from are strings printable as they are: they are printed
        beside the figures (notes on stderr, their line breaks joined), edited_from in the
        warning ``presets.preset_class_note`` gives."""
        for attr in ("source", "notes", "edited_from"):
            if not isinstance(getattr(self, attr), str):
                raise ValueError(f"{attr} {quoted_value(getattr(self, attr))} must be a string: "
                                 "give text, e.g. "
                                 f"{_TEXT_EXAMPLES[attr]}, or leave it out")
            if (bad := control_character(getattr(self, attr), allow="\n\t")) is not None:
                raise ValueError(f"{attr} is {quoted(getattr(self, attr))}: it holds the "
                                 f"control character {bad!r}, which a terminal would act on "
                                 "rather than show: give it in printable characters")

    def _check_dtypes_and_sizes(self) -> None:
        """Canonical dtype names (the state ones among those a state tensor may take), and the
        TP and optional dimensions within their bounds."""
        for attr in ("kv_dtype", "conv_dtype", "ssm_dtype"):
            try:
                object.__setattr__(self, attr, canonical_dtype(getattr(self, attr)))
            except ValueError as exc:
                raise ValueError(f"{attr}: {exc}") from None
        for tensor, dtype in self.state_dtypes().items():  # the state tensors it keeps
            check_state_dtype(f"{tensor}_dtype", dtype)
        check_int("tp", self.tp, minimum=1, maximum=MAX_TP,
                  hint="the number of GPUs the model is split over")
        if self.model_layers is not None:
            _check_dim("model_layers", self.model_layers, maximum=MAX_CACHE_LAYERS)
        if self.attention_heads is not None:
            _check_dim("attention_heads", self.attention_heads)
        if self.mamba_chunk_size is not None:  # "the model's": not the strategy option's flag
            _check_dim("the model's mamba_chunk_size", self.mamba_chunk_size,
                       maximum=MAX_CHUNK_SIZE)
        if self.max_model_len is not None:
            _check_dim("max_model_len", self.max_model_len,
                       maximum=MAX_TOKENS)

    def _check_length_flags(self) -> None:
        """max_model_len_assumed and max_model_len_typed are booleans, each only beside a
        max_model_len, and not both: a length typed is not assumed."""
        for flag in ("max_model_len_assumed", "max_model_len_typed"):
            if not isinstance(getattr(self, flag), bool):
                raise ValueError(f"{flag} is {quoted_value(getattr(self, flag))}: give true or "
                                 "false")
        if self.max_model_len_assumed and self.max_model_len is None:
            raise ValueError("max_model_len_assumed is true without a max_model_len: give the "
                             "length assumed (vLLM's 2048) or drop max_model_len_assumed")
        if self.max_model_len_typed and self.max_model_len is None:
            raise ValueError("max_model_len_typed is true without a max_model_len: give the "
                             "length typed or drop max_model_len_typed")
        if self.max_model_len_typed and self.max_model_len_assumed:
            raise ValueError("max_model_len_assumed and max_model_len_typed are both true: a "
                             "length typed is not assumed; drop max_model_len_assumed")

    def _check_sink(self) -> None:
        """learnable_sink true only where an MLA layer keeps the lightning indexer's keys, as a
        raw profile's (``CacheProfile._check_indexer``): the sinks are DeepSeek's sparse
        attention's, which nothing else reads, so true without an indexer would be carried and
        exported as if it said something, while the profile drops it. A boolean, first."""
        if not isinstance(self.learnable_sink, bool):
            raise ValueError(f"learnable_sink is {quoted_value(self.learnable_sink)}: give true "
                             "or false")
        if self.learnable_sink and not any(isinstance(layer, MLALayer) and layer.index_head_dim
                                           for layer in self.layers):
            raise ValueError("learnable_sink is true beside no MLA kind with an index_head_dim: "
                             "learnable attention sinks are DeepSeek's sparse attention's "
                             "alone, so give the indexer's index_head_dim too, or leave "
                             "learnable_sink out without an indexer")

    def _check_layer_type_lists(self) -> None:
        """mtp_layer_types and kv_shared_layer_types as tuples of attention labels."""
        for field_name, whose in (("mtp_layer_types", "the MTP modules'"),
                                  ("kv_shared_layer_types", "the kv-shared layers'")):
            labels = getattr(self, field_name)
            if (isinstance(labels, str) or not isinstance(labels, Iterable)
                    or not all(label in ATTENTION_LABELS for label in labels)):
                raise ValueError(f"{field_name} is {quoted_value(labels)}: give {whose} layer "
                                 f"types, each one of {', '.join(ATTENTION_LABELS)}, or none")
            object.__setattr__(self, field_name, tuple(labels))

    def _named_kinds(self) -> tuple[tuple[CacheLayer, str], ...]:
        """A name for each distinct geometry, in order of first appearance: the names already
        given (``_kind_names``) kept, others ``kind_name``'s, numbered past a clash."""
        names: dict[CacheLayer, str] = dict(self._kind_names)
        used = set(names.values())
        for layer in dict.fromkeys(self.layers):
            if layer not in names:
                base = kind_name(layer)
                name, k = base, 2
                while name in used:
                    name, k = f"{base}_{k}", k + 1
                names[layer] = name
                used.add(name)
        return tuple((layer, names[layer]) for layer in dict.fromkeys(self.layers))

    def _check_heads_and_split(self) -> None:
        """Each attention kind's KV heads divide the query heads (a KV head serves a whole
        group of them), and every kind splits over the TP; a TP that does not is refused with
        those that do."""
        for layer, name in self._kind_names:
            if (isinstance(layer, AttentionLayer) and self.attention_heads is not None
                    and self.attention_heads % layer.kv_heads):
                raise ValueError(
                    f"attention_heads = {self.attention_heads:,} is not a multiple of "
                    f"{name}.kv_heads = {layer.kv_heads:,}: no engine loads such a model; check "
                    "the model's heads, or leave attention_heads unset (0 in the Model page's "
                    "editor)")
        if (refusal := self.tp_refusal(self.tp)) is not None:
            raise TPSplitError(refusal, words_for(refusal, self._origin))

    def tp_refusal(self, tp: int) -> SplitRefusal | None:
        """Why ``tp`` ranks do not split this model, with the TPs up to SHOWN_TP that do (and
        the config.json key of the figure, where one gave it); None where they split it."""
        refusal = self._split_refusal(tp)
        if refusal is None:
            return None
        key, given = dict(self._config_keys).get(
            (refusal.layer_kind, refusal.label, refusal.field, refusal.value), (None, True))
        fits = tuple(t for t in range(1, SHOWN_TP + 1) if self._split_refusal(t) is None)
        return replace(refusal, model=self.name, fits=fits, config_key=key,
                       config_key_given=given, heads_gcd=(refusal.field == "attention_heads"
                                                          and HEADS_GCD in self.notes))

    def _split_refusal(self, tp: int) -> SplitRefusal | None:
        """The first layer kind that does not split over ``tp``, under the kind's name in this
        model (``full``, not the type's ``attention``), as the Model page and the spec JSON
        name it; then the query heads, which no cache holds but every attention layer splits.
        None where every one splits."""
        for layer, name in self._kind_names:
            try:
                layer.kv_bytes_per_slot(tp, self.kv_dtype)
                layer.state_bytes(tp, self.conv_dtype, self.ssm_dtype)
            except TPSplitError as exc:
                return in_model(exc.refusal, kind=name, label=layer.label, model=self.name)
        if self.attention_heads is not None and self.attention_heads % tp:
            return SplitRefusal("attention_heads", self.attention_heads, tp, model=self.name)
        return None

    @property
    def gdn_key_head_dims(self) -> frozenset[int]:
        """The key head dims of its GDN layers: vLLM picks its GDN prefill kernel by them
        (``vllm.gdn_checkpoint_on``)."""
        return frozenset(layer.head_dim_k for layer in self.layers
                         if isinstance(layer, GDNLayer))

    def splits_over(self, tp: int) -> bool:
        """Whether the model splits over ``tp`` ranks: every cache layer kind (heads, groups)
        and the query heads."""
        try:
            return self._split_refusal(tp) is None
        except ValueError:  # a tp past MAX_TP splits nothing
            return False

    # ---- views ---------------------------------------------------------------------------

    @property
    def kinds(self) -> dict[str, CacheLayer]:
        """Name -> geometry of each distinct cache layer, in first-appearance order."""
        return {name: layer for layer, name in self._kind_names}

    @property
    def layer_names(self) -> list[str]:
        """The kind name of each cache layer, in order."""
        lookup = dict(self._kind_names)
        return [lookup[layer] for layer in self.layers]

    @property
    def pattern(self) -> str:
        """The layer order as a compact pattern over kind names, e.g. ``(3*gdn,full)*12``."""
        return format_pattern(self.layer_names)

    @property
    def layer_types(self) -> tuple[str, ...]:
        """The reference label of each cache layer."""
        return tuple(layer.label for layer in self.layers)

    def count(self, label: str) -> int:
        return self.layer_types.count(label)

    # ---- bytes ---------------------------------------------------------------------------

    def kv_bytes_per_slot(self) -> int:
        """Bytes one token adds to one full (or chunked) attention layer on one TP rank, to a
        sliding one where every attention layer slides; 0 without attention."""
        return self._kv_sizes()[0]

    def sliding_kv_bytes_per_slot(self) -> int | None:
        """Bytes one token adds to one sliding layer where they differ from a full layer's
        (Gemma 4), else None."""
        return self._kv_sizes()[1]

    def _kv_sizes(self) -> tuple[int, int | None]:
        """(``kv_bytes_per_slot()``, ``sliding_kv_bytes_per_slot()``), read once."""
        others, sliding = self._kv_bytes_by_window()
        if others is None:
            return sliding or 0, None
        return others, sliding if sliding not in (None, others) else None

    def _kv_bytes_by_window(self) -> tuple[int | None, int | None]:
        """(bytes a token of a full or chunked layer, of a sliding layer), None where the model
        has no such layer. The planner and the engines take one size for each: kinds of one
        window that differ (two full kinds of other heads) are an error."""
        sizes: list[int | None] = []
        for sliding in (False, True):
            per_kind = {name: layer.kv_bytes_per_slot(self.tp, self.kv_dtype)
                        for name, layer in self.kinds.items()
                        if not layer.is_state and (layer.label == SLIDING_ATTENTION) == sliding}
            if len(set(per_kind.values())) > 1:
                which = "sliding" if sliding else "full and chunked"
                raise ValueError(
                    f"attention layers of {quoted(self.name)} differ in bytes per token "
                    f"({_per_kind_text(per_kind)}): "
                    f"the planner takes one size for {which} layers; give those kinds the same "
                    "geometry")
            sizes.append(next(iter(per_kind.values()), None))
        return sizes[0], sizes[1]

    def state_const_bytes(self) -> dict[str, int]:
        """State tensor -> bytes of one state layer on one TP rank; empty without state layers."""
        per_kind = {
            name: layer.state_bytes(self.tp, self.conv_dtype, self.ssm_dtype)
            for name, layer in self.kinds.items()
            if layer.is_state
        }
        distinct = {tuple(v.items()) for v in per_kind.values()}
        if len(distinct) > 1:
            raise ValueError(
                f"state layers of {quoted(self.name)} differ in state bytes "
                f"({_per_kind_text(per_kind)}): the planner "
                "takes one state_const_bytes; give all state kinds the same geometry"
            )
        return dict(distinct.pop()) if distinct else {}

    def state_dtypes(self) -> dict[str, str]:
        """The dtype of each state tensor the model keeps, in row order: conv and ssm, each
        where a state layer keeps one (no ssm in a short conv, no conv in lightning attention);
        empty without state layers. The dtype of a tensor it does not keep says nothing. (The
        tensors a layer keeps are the same at any TP: read at TP 1, where every head splits.)"""
        kept = {tensor for layer in self.kinds.values() for tensor in layer.state_shapes(1)}
        return {tensor: dtype for tensor, dtype in (("conv", self.conv_dtype),
                                                    ("ssm", self.ssm_dtype)) if tensor in kept}

    def sliding_window(self) -> int | None:
        return self._one_window(SLIDING_ATTENTION)

    def attention_chunk_size(self) -> int | None:
        return self._one_window(CHUNKED_ATTENTION)

    def _one_window(self, label: str) -> int | None:
        """The one window (or chunk) of this model's ``label`` layers, None without them."""
        windowed = WINDOWED[label]
        windows = {getattr(layer, windowed.field) for layer in self.kinds.values()
                   if isinstance(layer, AttentionLayer)} - {None}
        if len(windows) > 1:
            spans = " and ".join(f"{w:,}" for w in sorted(windows))  # not a list's [4096, 8192]
            raise ValueError(
                f"{windowed.name} layers of {quoted(self.name)} have different {windowed.noun}s "
                f"({spans} tokens): the planner takes one {windowed.field}; give those kinds "
                f"the same {windowed.noun}"
            )
        return windows.pop() if windows else None

    def profile(self) -> CacheProfile:
        """The per-TP-rank CacheProfile the planner and the engine strategies consume, with
        the profile at TP ``tp // D`` for each D > 1 dividing the TP where the model splits over
        that TP (SGLang's attention DP runs its attention and state layers over that many
        ranks; 8 KV heads split over TP 48 and 8, not over 48 // 16 = 3)."""
        at_attention_tp = tuple((d, replace(self, tp=self.tp // d)._profile())
                                for d in range(2, self.tp + 1)
                                if self.tp % d == 0 and self.splits_over(self.tp // d))
        return replace(self._profile(), attention_dp_profiles=at_attention_tp)

    def _mla_kernel_block_size(self) -> int | None:
        """The kernel block vLLM runs the model's MLA on, None without MLA layers: FlashMLA
        sparse's 64 where they keep DeepSeek-V3.2's indexer keys, else the 16 of the MLA
        backends that run any GPU (``MLA_KERNEL_BLOCK_SIZE``)."""
        mla = [layer for layer in self.kinds.values() if isinstance(layer, MLALayer)]
        if not mla:
            return None
        sparse = any(layer.indexer_bytes_per_slot for layer in mla)
        return SPARSE_MLA_KERNEL_BLOCK_SIZE if sparse else MLA_KERNEL_BLOCK_SIZE

    def _profile(self) -> CacheProfile:
        """The profile at this TP alone."""
        has_state = any(layer.is_state for layer in self.kinds.values())
        state = self.state_const_bytes()
        # the K / V split when every attention kind has the same one, else none (the dtype
        # stays)
        kv, sliding_kv = self._kv_sizes()
        kv_split = self._kv_splits(kv, sliding=False)
        # the sliding layers' own split where their bytes differ (Gemma 4): SGLang logs it
        sliding_split = self._kv_splits(sliding_kv, sliding=True) if sliding_kv else set()
        # the MLA layer with the lightning indexer's keys, where one has them
        indexed = next((layer for layer in self.kinds.values() if isinstance(layer, MLALayer)
                        and layer.indexer_bytes_per_slot), None)
        return CacheProfile(
            layer_types=self.layer_types,
            kv_bytes_per_slot=kv,
            sliding_kv_bytes_per_slot=sliding_kv,
            state_const_bytes=state,
            sliding_window=self.sliding_window(),
            attention_chunk_size=self.attention_chunk_size(),
            name=self.name,
            kernel_block_size=self._mla_kernel_block_size(),
            ssm_element_bytes=dtype_bytes(self.ssm_dtype) if "ssm" in state else None,
            ssm_dtype=self.ssm_dtype if "ssm" in state else None,
            conv_element_bytes=dtype_bytes(self.conv_dtype) if "conv" in state else None,
            architectures=self.architectures,
            config_mamba_ssm_dtype=self.config_mamba_ssm_dtype if has_state else None,
            config_mamba_ssm_cache_dtype=self.config_mamba_ssm_cache_dtype if has_state else None,
            mamba_chunk_size=self.mamba_chunk_size if has_state else None,
            conv_rows=self.conv_rows(),
            indexer_bytes_per_slot=indexed and indexed.indexer_bytes_per_slot,
            dsa_raw_fp8_bytes_per_slot=indexed and indexed.dsa_raw_fp8_bytes_per_slot,
            learnable_sink=self.learnable_sink,  # only beside the indexer (_check_sink)
            gdn_key_head_dims=self.gdn_key_head_dims,
            kv_dtype=self.kv_dtype if kv_split else None,
            kv_tensor_bytes=next(iter(kv_split)) if len(kv_split) == 1 else (),
            kv_shared_layer_types=self.kv_shared_layer_types,
            sliding_kv_tensor_bytes=(next(iter(sliding_split)) if kv_split
                                     and len(sliding_split) == 1 else ()),
            tp=self.tp,
        )

    def _kv_splits(self, nbytes: int, *, sliding: bool) -> set[tuple[int, ...]]:
        """The K / V splits of the attention kinds whose token takes ``nbytes`` (the sliding
        kinds alone with ``sliding``): one where the profile can carry it."""
        return {layer.kv_tensor_bytes(self.tp, self.kv_dtype) for layer in self.kinds.values()
                if not layer.is_state and (not sliding or layer.label == SLIDING_ATTENTION)
                and layer.kv_bytes_per_slot(self.tp, self.kv_dtype) == nbytes}

    def conv_rows(self) -> int | None:
        """The conv state's rows (K - 1) when every state kind is one whose conv vLLM widens
        per speculative token (GDN, Mamba2, and the short conv since vLLM PR #50272), else
        None."""
        states = [layer for layer in self.kinds.values() if layer.is_state]
        if not states or not all(
                isinstance(layer, (GDNLayer, Mamba2Layer, ShortConvLayer)) for layer in states):
            return None
        rows = {layer.conv_kernel - 1 for layer in states}
        return rows.pop() if len(rows) == 1 else None

    def summary(self) -> list[KindSummary]:
        """One row per distinct cache-layer geometry: count, per-token and per-layer bytes."""
        names = self.layer_names
        return [
            KindSummary(
                name=name,
                kind=layer.kind,
                label=layer.label,
                count=names.count(name),
                geometry=layer.geometry(),
                kv_bytes_per_token=layer.kv_bytes_per_slot(self.tp, self.kv_dtype),
                state_shapes=layer.state_shapes(self.tp),
                state_bytes=layer.state_bytes(self.tp, self.conv_dtype, self.ssm_dtype),
            )
            for name, layer in self.kinds.items()
        ]

    def kv_bytes_notes(self) -> list[str]:
        """``kind: how its bytes a token add up`` for each kind whose heads x dims x dtype do
        not tell it (DeepSeek-V3.2's indexed MLA), for the Model page and the model report."""
        return [f"{name}: {note}" for layer, name in self._kind_names
                if (note := layer.kv_bytes_note(self.tp, self.kv_dtype))]

    def replication_note(self) -> str | None:
        """Why an attention kind keeps more bytes per token than ``kv_heads / TP`` suggests:
        with fewer KV heads than TP ranks, each rank holds one whole head (replicated, as vLLM
        does). None where no kind has fewer; for the Model page and the model report."""
        heads = sorted({layer.kv_heads for layer in self.layers
                        if isinstance(layer, AttentionLayer) and layer.kv_heads < self.tp})
        if not heads:
            return None
        each = "; ".join(f"{h} KV head{'s' if h > 1 else ''} over TP {self.tp}: each rank holds "
                         f"1, each head sits on {self.tp // h} ranks" for h in heads)
        return (f"Fewer KV heads than TP ranks ({each}): kv_heads per rank = max(1, kv_heads // "
                "tp), each head replicated, so such a kind's KV bytes per token above are one "
                "whole head's.")

    def kv_bytes_per_token_all_layers(self) -> int:
        """Bytes one token adds across all attention cache layers of one TP rank (the
        profile's, one formula for the Model page and the model report)."""
        return self.profile().kv_bytes_per_token

    def state_bytes_per_request(self) -> int:
        """Bytes of one request's state across all state cache layers of one TP rank."""
        return self.profile().state_bytes_per_request

    # ---- changes -------------------------------------------------------------------------

    def with_options(
        self,
        *,
        tp: int | None = None,
        kv_dtype: str | None = None,
        conv_dtype: str | None = None,
        ssm_dtype: str | None = None,
        name: str | None = None,
    ) -> ModelSpec:
        """A copy with the given options changed (None keeps the current value); re-validated."""
        changes: dict[str, Any] = {
            key: value
            for key, value in (
                ("tp", tp), ("kv_dtype", kv_dtype), ("conv_dtype", conv_dtype),
                ("ssm_dtype", ssm_dtype), ("name", name),
            )
            if value is not None
        }
        return replace(self, **changes)

    @classmethod
    def from_pattern(
        cls, *, name: str, kinds: Mapping[str, CacheLayer], pattern: str, **options: Any
    ) -> ModelSpec:
        """A spec from named geometries and a layer pattern over their names."""
        if not isinstance(kinds, Mapping) or not kinds:
            raise ValueError("kinds must name at least one cache-layer geometry")
        for name_of_kind, layer in kinds.items():
            check_kind_name(name_of_kind)
            if not isinstance(layer, CacheLayer):
                raise ValueError(f"kinds[{quoted(name_of_kind)}] {quoted_value(layer)} must be "
                                 f"a cache layer: give one such as {example_layer()}")
            check_label_name(name_of_kind, layer)
        order = parse_pattern(pattern)
        unknown = sorted(set(order) - set(kinds))
        if unknown:
            raise ValueError(
                f"layer pattern names unknown {names_text('kind', unknown)}: known kinds are "
                f"{quoted_names(list(kinds))}"
            )
        # Keep the caller's names: first name given for each geometry.
        names: dict[CacheLayer, str] = {}
        for given in dict.fromkeys(order):
            names.setdefault(kinds[given], given)
        layers = tuple(kinds[n] for n in order)
        return cls(name=name, layers=layers, _kind_names=tuple(names.items()), **options)

    # ---- export --------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The preset / export format (JSON-ready); ``from_dict(to_dict())`` is an equal spec."""
        out: dict[str, Any] = {"format": FORMAT, "name": self.name}
        if self.source:
            out["source"] = self.source
        if self.edited_from:
            out["edited_from"] = self.edited_from
        if self.notes:
            out["notes"] = self.notes
        if self.model_layers is not None:
            out["model_layers"] = self.model_layers
        if self.attention_heads is not None:
            out["attention_heads"] = self.attention_heads
        if self.mamba_chunk_size is not None:
            out["mamba_chunk_size"] = self.mamba_chunk_size
        if self.max_model_len is not None:
            out["max_model_len"] = self.max_model_len
        if self.max_model_len_assumed:
            out["max_model_len_assumed"] = True
        if self.max_model_len_typed:
            out["max_model_len_typed"] = True
        if self.architectures:
            out["architectures"] = list(self.architectures)
        if self.mtp_layer_types:
            out["mtp_layer_types"] = list(self.mtp_layer_types)
        if self.kv_shared_layer_types:
            out["kv_shared_layer_types"] = list(self.kv_shared_layer_types)
        if self.mtp_modules is not None:
            out["mtp_modules"] = self.mtp_modules
        if self.learnable_sink:
            out["learnable_sink"] = True
        out.update(tp=self.tp, kv_dtype=self.kv_dtype, conv_dtype=self.conv_dtype,
                   ssm_dtype=self.ssm_dtype)
        for key in ("config_mamba_ssm_dtype", "config_mamba_ssm_cache_dtype"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        out.update(
            kinds={name: layer.geometry() for name, layer in self.kinds.items()},
            pattern=self.pattern,
        )
        return out

    @classmethod
    def from_dict(cls, data: object) -> ModelSpec:
        """A spec from the export format, validated field by field with clear errors."""
        if not isinstance(data, Mapping):
            raise ValueError(
                f"a model specification ({type(data).__name__}) must be a JSON object: give "
                f'one such as {{"name": "custom", "kinds": {EXAMPLE_KINDS}, "pattern": '
                f"{EXAMPLE_PATTERN}}} (`model --export` writes one)"
            )
        allowed = {
            "format", "name", "source", "notes", "model_layers", "tp", "kv_dtype",
            "conv_dtype", "ssm_dtype", "kinds", "pattern", "architectures",
            "config_mamba_ssm_dtype", "config_mamba_ssm_cache_dtype", "attention_heads",
            "mamba_chunk_size", "max_model_len", "max_model_len_assumed", "max_model_len_typed",
            "mtp_layer_types", "kv_shared_layer_types", "mtp_modules", "learnable_sink",
            "edited_from",
        }
        unknown = sorted(set(data) - allowed)
        if isinstance(data.get("spec"), Mapping) and "kv_bytes_per_slot" in data:
            raise ValueError("this is a model report (`model --json`), not a model file: its "
                             "\"spec\" entry is one, or write one with `model --export`")
        if unknown:
            raise ValueError(
                f"model specification has unknown {names_text('field', unknown)}: fields are "
                f"{', '.join(sorted(allowed))}"
            )
        fmt = data.get("format", FORMAT)
        if fmt != FORMAT:
            raise ValueError(f"format = {quoted_value(fmt)} is not supported: this version reads "
                             f'{FORMAT!r}; give "format": "{FORMAT}" or leave it out')
        for key, (what, example) in SPEC_EXAMPLES.items():
            if key not in data:
                raise ValueError(f"model specification is missing {key!r}: add {what}, e.g. "
                                 f'"{key}": {example}')
        # a name of another type would print as its repr (a title "{'a': 1}")
        check_name("model specification name", data["name"], fix=NAME_FIX)
        kinds_data = data["kinds"]
        if not isinstance(kinds_data, Mapping) or not kinds_data:
            raise ValueError(
                "kinds must be a non-empty object of name -> geometry, e.g. "
                '{"full": {"kind": "attention", "kv_heads": 8, "head_dim_k": 128, '
                '"head_dim_v": 128}}'
            )
        if len(kinds_data) > MAX_CACHE_LAYERS:
            raise ValueError(f"kinds has {len(kinds_data):,} entries, too many to be real: give "
                             f"{MAX_CACHE_LAYERS:,} or fewer, one per distinct layer geometry")
        kinds = {
            name: layer_from_dict(geom, where=f"kinds[{quoted(name)}]")
            for name, geom in kinds_data.items()
        }
        options = {
            key: data[key]
            for key in ("source", "notes", "model_layers", "tp", "kv_dtype", "conv_dtype",
                        "ssm_dtype", "architectures", "config_mamba_ssm_dtype",
                        "config_mamba_ssm_cache_dtype", "attention_heads", "mamba_chunk_size",
                        "max_model_len", "max_model_len_assumed", "max_model_len_typed",
                        "mtp_layer_types", "kv_shared_layer_types", "mtp_modules", "learnable_sink",
                        "edited_from")
            if key in data
        }
        return cls.from_pattern(name=data["name"], kinds=kinds, pattern=data["pattern"], **options)


def check_label_name(name: str, layer: CacheLayer) -> None:
    """Refuse a kind named after another kind's layer label (a full-attention kind named
    ``linear_attention``): the pages print kind names beside the labels engines read (a
    config's layer_types, the planner's groups), and the two would say opposite things."""
    labels = (*ATTENTION_LABELS, LINEAR_ATTENTION)
    if name in labels and name != layer.label:
        raise ValueError(f"kind name {quoted(name)} names another layer type: this kind's layers "
                         f"are {layer.label}; name it {layer.label!r} or a name that is no "
                         "layer type")


MTP_SUFFIX = " + MTP layer"
# What figures with drafted tokens leave out until the drafter's layers are in the model
DRAFTER_NOT_COUNTED = (
    "A drafter's own KV layers are not counted until they are added to the model: an MTP "
    "module (Qwen3-Next, Qwen3.5, DeepSeek-V3) is one more full-attention layer, which vLLM "
    "groups with the model's (Qwen3-Next: groups of 13).")


def mtp_layers_not_full(mtp_layer_types: Iterable[str]) -> list[str]:
    """The layer types of a model's MTP modules that are not full attention (Step-3.5's
    sliding ones), sorted: a drafter "Add an MTP layer" does not model; empty where every MTP
    layer is full attention, or none is listed."""
    return sorted(set(mtp_layer_types) - {FULL_ATTENTION})


# A checkpoint whose config says num_nextn_predict_layers = 0 holds no MTP module, and both
# engines' MTP drafting fails on it: vLLM's DeepSeekMTP and Qwen3NextMTP build no layer, then
# take the draft step modulo 0 layers; SGLang's DeepSeek NextN loader asserts "Only 1 nextn
# layer is supported". A separate drafter (EAGLE) runs on it (SGLang takes a 0 as no MTP
# layers), whose one attention layer is what the added layer counts: kept, with this note.
NO_MTP_MODULE = (
    "This checkpoint has none (config.json num_nextn_predict_layers = 0): vLLM's and SGLang's "
    "MTP drafting do not start on it, so the layer counts such a drafter's; for MTP drafting, "
    "use a checkpoint that ships its MTP module.")


def with_mtp_layer(spec: ModelSpec) -> ModelSpec:
    """``spec`` with one more cache layer shaped as its last full-attention layer: the
    attention of an MTP module (Qwen3-Next's, Qwen3.5's, DeepSeek-V3's), whose KV the engine
    keeps in the same pool. vLLM groups it with the model's full-attention layers (equal
    specs). Raises ValueError for a model without a full-attention layer."""
    if other := mtp_layers_not_full(spec.mtp_layer_types):
        raise ValueError(f"{spec.name}'s MTP layers are {', '.join(other)} (its config's "
                         "mtp_layer_types): an added MTP layer is one full-attention layer, "
                         "which is not this drafter, so FlatKV adds none")
    full = [layer for layer in spec.layers if isinstance(layer, MLALayer) or (
        isinstance(layer, AttentionLayer) and layer.label == FULL_ATTENTION)]
    if not full:
        raise ValueError(f"{spec.name} has no full-attention layer: an MTP module's attention "
                         "needs one to copy")
    # A model without MTP modules (Llama) drafts with a one-layer EAGLE head shaped as its own
    # attention, whose KV the engine keeps in the same pool: the added layer stands for that too.
    note = ("An MTP module's attention layer added after the model's, shaped as its last "
            "full-attention layer: its KV shares the pool. Without an MTP module, it stands for "
            "a one-layer drafter's (EAGLE's) attention of that shape.")
    if spec.mtp_modules == 0:
        note += f" {NO_MTP_MODULE}"
    # a sentence after the model's notes, which may end without a stop
    before = spec.notes.rstrip()
    if before and not before.endswith((".", "!", "?")):
        before += "."
    return replace(spec, name=spec.name + MTP_SUFFIX, layers=(*spec.layers, full[-1]),
                   notes=f"{before} {note}".strip())
