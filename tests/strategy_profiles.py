"""Cache profiles the strategy tests use, per TP rank, from SPEC section 2 (and the budgets
those tests share).

Kept in one place so they are easy to swap for the model layer's presets / config.json specs
(``ModelSpec.profile()``) once it lands: each helper returns a plain ``CacheProfile``.
"""

from __future__ import annotations

from flatkv.profile import CacheProfile
from flatkv.strategies.base import StrategyResult

FULL, SLIDING, LINEAR = "full_attention", "sliding_attention", "linear_attention"
CHUNKED = "chunked_attention"

# 44.59 GiB, vLLM's "Available KV cache memory" for the anchor: floor(44.59 * 2**30)
# = floor(47,878,147,932.16).
ANCHOR_BUDGET = 47_878_147_932
ANCHOR_CONTEXT = 262_144


def qwen3_next_tp2() -> CacheProfile:
    """Qwen3-Next-80B-A3B, TP=2, bf16: 12 x (3 GDN + 1 full); 1 kv head x 256 x 2 (K, V) x 2 B
    = 1,024 B/token; conv 24,576 B and ssm 524,288 B per GDN layer (SPEC 2, vLLM run log)."""
    return CacheProfile(
        layer_types=(LINEAR, LINEAR, LINEAR, FULL) * 12,
        kv_bytes_per_slot=1024,
        state_const_bytes={"conv": 24_576, "ssm": 524_288},
        name="Qwen3-Next-80B-A3B (TP=2)",
    )


def nemotron_h_8b() -> CacheProfile:
    """Nemotron-H-8B: 4 attention layers (8 x 128 -> 4,096 B/token) and 24 Mamba2 layers (conv
    61,440 B, ssm 2,097,152 B); MLP layers carry no cache. Order: 6 Mamba then 1 attention."""
    return CacheProfile(
        layer_types=((LINEAR,) * 6 + (FULL,)) * 4,
        kv_bytes_per_slot=4096,
        state_const_bytes={"conv": 61_440, "ssm": 2_097_152},
        name="Nemotron-H-8B",
    )


def gpt_oss_20b() -> CacheProfile:
    """gpt-oss-20b: 24 layers alternating sliding (window 128) and full, 8 x 64 -> 2,048 B."""
    return CacheProfile(
        layer_types=(SLIDING, FULL) * 12,
        kv_bytes_per_slot=2048,
        sliding_window=128,
        name="gpt-oss-20b",
    )


def llama4_scout() -> CacheProfile:
    """Llama-4-Scout-17B-16E: 48 layers, every 4th global (NoPE), the others chunked local
    attention over chunks of 8,192; 8 x 128 -> 4,096 B/token."""
    return CacheProfile(
        layer_types=(CHUNKED, CHUNKED, CHUNKED, FULL) * 12,
        kv_bytes_per_slot=4096,
        attention_chunk_size=8192,
        architectures=("Llama4ForConditionalGeneration",),
        name="Llama-4-Scout-17B-16E",
    )


def llama_31_8b() -> CacheProfile:
    """Llama-3.1-8B: 32 full-attention layers, 8 x 128 -> 4,096 B/token."""
    return CacheProfile(layer_types=(FULL,) * 32, kv_bytes_per_slot=4096, name="Llama-3.1-8B")


def pure_mamba() -> CacheProfile:
    """A state-only model (24 Mamba2 layers with Nemotron-H's state, no attention)."""
    return CacheProfile(
        layer_types=(LINEAR,) * 24,
        kv_bytes_per_slot=0,
        state_const_bytes={"conv": 61_440, "ssm": 2_097_152},
        name="pure Mamba2",
    )


# SPEC section 1's worked example: 12 x (3 GDN + 1 full), KV 2,048 B a token, state 2,146,304 B
QWEN35 = CacheProfile((("linear_attention",) * 3 + ("full_attention",)) * 12, 2048,
                      {"conv": 49152, "ssm": 2097152})
STATE_ROW = 49152 + 2097152  # 2,146,304
P = 1056  # ceil(2,146,304 / 2,048) = 1,048 -> multiple of 16
KV_ROW = 2048 * P  # 2,162,688
BLOCK_BYTES = 12 * (KV_ROW + STATE_ROW) + 24 * STATE_ROW  # 103,219,200


def vllm_at_80gb(profile: CacheProfile, **options):
    """vLLM's layout of ``profile`` in 80 GB at 32,768 tokens, with ``options`` set."""
    from flatkv.strategies import StrategyOptions, run_strategy
    return run_strategy("vllm", profile, budget_bytes=80 * 10**9, context_tokens=32_768,
                        options=StrategyOptions(**options))


# Budgets and a config the strategy tests share (test_strategies.py, test_sglang.py)
GIB8 = 8 * 2**30
GPT_OSS_BUDGET = 10_552 * 24 * 16 * 2048  # a pool of 10,552 flat page ids at P = 16

# Llama 4 Scout: 36 chunked layers (chunks of 8,192) and 12 global ones, 4,096 B a token each.
LLAMA4_BUDGET = 60 * 2**30  # 64,424,509,440 B

# Mamba-Codestral-7B's config.json shape (Mamba2ForCausalLM, which SGLang 0.5.23 serves with its
# pure-SSM Mamba2 model): 64 layers of 128 heads x 64, state 128, 8 groups, conv kernel 4
MAMBA2_ONLY = {"architectures": ["Mamba2ForCausalLM"], "model_type": "mamba2",
               "hidden_size": 4096, "num_hidden_layers": 64, "num_heads": 128, "head_dim": 64,
               "expand": 2, "state_size": 128, "n_groups": 8, "conv_kernel": 4,
               "vocab_size": 32768, "torch_dtype": "bfloat16"}


def bd(result: StrategyResult) -> dict[str, int]:
    return dict(result.breakdown)


def assert_presets_lose_nothing_to_int8(strategy: str, budget: int) -> None:
    """No preset's own KV dtype is int8, which neither engine keeps a cache in, and the fix an
    engine's int8 refusal names (fp8) serves every preset its column serves as it stands, so
    the refusal costs no preset its column nor the engine checks a row."""
    from flatkv.presets import list_presets, load_preset
    from flatkv.strategies import run_strategy

    for name in list_presets():
        spec = load_preset(name)
        assert spec.profile().kv_dtype != "int8"
        served = run_strategy(strategy, spec.profile(), budget_bytes=budget).applies
        assert run_strategy(strategy, spec.with_options(kv_dtype="fp8").profile(),
                            budget_bytes=budget).applies == served
