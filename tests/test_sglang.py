"""SGLang's strategy (flatkv/strategies/sglang/) against numbers derived by hand from SPEC
section 3.2 and SGLang 0.5.23's own code: its state and token pools, its hybrid SWA pool, the
start-up log it prints, speculative decoding, --max-running-requests / --max-mamba-cache-size,
--disable-radix-cache, chunked prefill and attention DP. Apart from test_strategies.py, which
keeps the other layouts and the checks every layout shares; as there, each expected value is
written as the arithmetic that produces it.
"""

from __future__ import annotations

import re
from dataclasses import replace
from fractions import Fraction

import pytest
from strategy_profiles import (
    ANCHOR_BUDGET,
    ANCHOR_CONTEXT,
    CHUNKED,
    FULL,
    GIB8,
    GPT_OSS_BUDGET,
    LINEAR,
    LLAMA4_BUDGET,
    MAMBA2_ONLY,
    SLIDING,
    assert_presets_lose_nothing_to_int8,
    bd,
    gpt_oss_20b,
    llama4_scout,
    llama_31_8b,
    nemotron_h_8b,
    pure_mamba,
    qwen3_next_tp2,
)

from flatkv.hf_config import spec_from_hf_config
from flatkv.presets import load_preset
from flatkv.profile import CacheProfile
from flatkv.strategies import CATEGORIES, StrategyOptions, StrategyResult, run_strategy
from flatkv.strategies.base import CHUNKED_PREFILL_OFF
from flatkv.strategies.sglang import (
    DRAFTER_KV_LAYERLESS_LINE,
    DRAFTER_KV_LINE,
    SPECULATIVE_NOT_MODELLED,
    budget_of_next_slot,
    lazy_overlap_refusal,
    logged_strategy,
    no_buffer_refusal,
    page_size,
    sglang_default_chunked_prefill,
    sglang_default_page,
    sglang_gpu_note,
    sglang_window,
    slots_per_request,
    sm100_backend,
    sm100_page,
    sm100_refusal,
    ssm_dtype,
    told_buffer_refusal,
    track_interval_changes_nothing,
)
from flatkv.strategies.sglang_log import NO_DRAFT_BUFFERS_LINE, NO_LAYERLESS_KV_LINE


def test_sglang_qwen3_next():
    r = run_strategy("sglang", qwen3_next_tp2(), budget_bytes=ANCHOR_BUDGET,
                     context_tokens=ANCHOR_CONTEXT)
    pool = ANCHOR_BUDGET * 9 // 19  # r / (1 + r) with r = 9/10
    slot = 36 * 548_864
    slots = pool // slot
    assert slots == 1_147
    kv_memory = ANCHOR_BUDGET - slots * slot
    tokens = kv_memory // (12 * 1024)
    assert r.extras["state_slots"] == slots
    assert r.extras["request_state_slots"] == 1_146  # slot 0 is SGLang's padding slot
    assert r.extras["running_request_cap"] == 1_146 // 3 == 382
    # raw bytes name no architecture: SGLang's no_buffer 3 (5 for Qwen3NextForCausalLM)
    assert ("running cap = max_mamba_cache_size // S = 1,146 // 3 = 382 (S: the state slots a "
            "running request holds, SGLang's mamba ratio, 3, the no_buffer count, for a model "
            "that names no architecture (5 for those SGLang serves with its extra_buffer radix "
            "cache); max_running_requests is at most this)") in r.formulas
    assert ("state slots = state pool // (36 layers x 548,864 B) = 22,679,122,704 // 19,759,104 = "
            "1,147, one of them the padding slot: max_mamba_cache_size = 1,147 - 1 = 1,146 for "
            "requests") in r.formulas
    assert r.capacity_tokens == tokens == 2_051_957
    assert r.concurrency == Fraction(tokens, ANCHOR_CONTEXT)  # 7.83 < 382: KV binds
    assert r.extras["binding_limit"] == "kv tokens"
    # KV binds: at the 7 requests that run, 7 x 3 slots are in use and the other 1,146 - 21
    # idle (the padding slot is SGLang's own), a slice of their own
    assert bd(r)["state"] == (slots - (1_146 - 7 * 3)) * slot
    assert bd(r)["idle_pool"] == (1_146 - 7 * 3) * slot
    assert bd(r)["kv_history"] == tokens * 12 * 1024
    assert bd(r)["unused"] == kv_memory - tokens * 12 * 1024
    # the KV pool gets what the slots leave, as SGLang's _handle_max_mamba_cache returns it;
    # SPEC 3.2's shorthand, (budget - state pool) // 12,288, gives 1,256 tokens fewer
    assert (ANCHOR_BUDGET - pool) // (12 * 1024) == 2_050_701
    assert (f"KV memory = budget - slots x slot bytes = 47,878,147,932 - {slots * slot:,} = "
            f"{kv_memory:,} (the slots' bytes, not the whole state pool: its "
            f"{pool - slots * slot:,} B short of one more slot go to the KV pool, as in SGLang's "
            "_handle_max_mamba_cache)") in r.formulas


def test_sglang_start_up_log_of_the_anchors_bytes_as_given():
    # SGLang's pool lines (memory_pool.py, MambaPool and _finalize_allocation_log): sizes in
    # GiB it calls GB, the state tensors for max_mamba_cache_size + 1 slots (its padding slot),
    # each KV layer's K and V for #tokens + one page (slot 0's page) rows. The anchor's bytes
    # as given (bf16 ssm, as SGLANG_MAMBA_SSM_DTYPE=bfloat16 would keep them; its default
    # float32 is tests/test_anchor.py's): 1,147 slots of 36 x 548,864 B, the rest in tokens
    profile = replace(qwen3_next_tp2(), kv_dtype="bfloat16", kv_tensor_bytes=(512, 512))
    r = run_strategy("sglang", profile, budget_bytes=ANCHOR_BUDGET, context_tokens=ANCHOR_CONTEXT)
    assert ANCHOR_BUDGET * 9 // 19 // (36 * 548_864) == 1_147
    assert (ANCHOR_BUDGET - 1_147 * 36 * 548_864) // 12_288 == 2_051_957
    conv = 1_147 * 36 * 24_576  # 1,014,792,192 B = 0.945 GiB
    ssm = 1_147 * 36 * 524_288  # 21,648,900,096 B = 20.162 GiB
    k = 12 * (2_051_957 + 1) * 512  # 12,607,229,952 B = 11.741 GiB
    assert (conv / 2**30, ssm / 2**30, k / 2**30) == pytest.approx((0.9451, 20.1621, 11.7414),
                                                                   abs=1e-4)
    # first its warning (resolve_max_num_reqs): 1,146 request slots // 3 = 382 running, under
    # int(2,051,957 / 262,144 x 512) = 4,007
    assert (1_146 // 3, int(2_051_957 / 262_144 * 512)) == (382, 4_007)
    assert r.extras["log_lines"] == [
        "max_running_requests is capped to 382 by the mamba state cache "
        "(max_mamba_cache_size=1146, 3 state slots per request). To raise it: increase "
        "--mamba-full-memory-ratio or --max-mamba-cache-size, or halve the state size with "
        "--mamba-ssm-dtype bfloat16.",
        "Mamba Cache is allocated. max_mamba_cache_size: 1146, conv_state size: 0.95GB, "
        "ssm_state size: 20.16GB ",
        "KV Cache is allocated. dtype: torch.bfloat16, #tokens: 2051957, K size: 11.74 GB, "
        "V size: 11.74 GB",
        # then its scheduler's (on TP rank 0): the token pool, the chunk, the 382 running and
        # the context; max_prefill_tokens is not modelled
        "max_total_num_tokens=2051957, chunked_prefill_size=8192, max_prefill_tokens=..., "
        "max_running_requests=382, context_len=262144",
    ]
    # raw bytes name no K / V split or dtype: the state line and the scheduler's (and, with no
    # context, no max_running_requests to warn of, nor to give: elided, as context_len is)
    raw = run_strategy("sglang", qwen3_next_tp2(), budget_bytes=ANCHOR_BUDGET)
    assert raw.extras["log_lines"] == [
        r.extras["log_lines"][1], "max_total_num_tokens=2051957, chunked_prefill_size=8192, "
        "max_prefill_tokens=..., max_running_requests=..., context_len=..."]


def test_sglang_start_up_log_of_its_hybrid_swa_pool_and_of_mla():
    profile = replace(gpt_oss_20b(), kv_dtype="bfloat16", kv_tensor_bytes=(1024, 1024))
    r = run_strategy("sglang", profile, budget_bytes=GPT_OSS_BUDGET)
    full = GPT_OSS_BUDGET * 5 // (9 * 12 * 2048)  # as in test_gpt_oss_sglang_swa_pools
    swa = full * 4 // 5
    assert (full, swa) == (187_591, 150_072)
    size = (12 * (full + 1) * 1024, 12 * (swa + 1) * 1024)  # K (or V) of each sub-pool
    assert [round(b / 2**30, 4) for b in size] == [2.1468, 1.7174]
    assert r.extras["log_lines"] == [
        "Use sliding window memory pool. full_layer_tokens=187591, swa_layer_tokens=150072",
        # SWAKVPool builds its full sub-pool, then its sliding one, each labelled (0.5.17 on)
        "Full KV Cache is allocated. dtype: torch.bfloat16, #tokens: 187591, K size: 2.15 GB, "
        "V size: 2.15 GB",
        "SWA KV Cache is allocated. dtype: torch.bfloat16, #tokens: 150072, K size: 1.72 GB, "
        "V size: 1.72 GB",
        # K and V of both sub-pools: 2 x (2.1468 + 1.7174) GiB
        "SWAKVPool mem usage: 7.73 GB, swa size: 150072, full size: 187591",
        # its scheduler's: max_total_num_tokens the full pool (no context: the rest elided)
        "max_total_num_tokens=187591, chunked_prefill_size=8192, max_prefill_tokens=..., "
        "max_running_requests=..., context_len=...",
    ]
    assert round(2 * sum(size) / 2**30, 4) == 7.7285
    # pages of 64: each sub-pool's layers a page of 64 more, 12 x 64 x 2,048 B x 2 = 3 MiB in
    # all, which moves the summary from 11.17 to 11.18 GB here
    paged = run_strategy("sglang", profile, budget_bytes=12 * 10**9,
                         options=StrategyOptions(sglang_page_size=64))
    full, swa = paged.capacity_tokens, paged.extras["swa_tokens"]
    # 12e9 // (24,576 + 0.8 x 24,576) = 271,267 tokens, 271,232 in pages; 0.8 x that 216,985,
    # 216,960 in pages
    assert (full, swa) == (int(12e9 // 44_236.8) // 64 * 64, 216_960) == (271_232, 216_960)
    assert f"{(full + swa) * 12 * 2048 / 2**30:.2f}" == "11.17"
    assert paged.extras["log_lines"][-2] == (
        f"SWAKVPool mem usage: {(full + swa + 2 * 64) * 12 * 2048 / 2**30:.2f} GB, swa size: "
        "216960, full size: 271232") == (
        "SWAKVPool mem usage: 11.18 GB, swa size: 216960, full size: 271232")
    # bytes typed by hand name no K / V split: the sub-pools' lines are left out (said), the
    # split and the summary (K + V of both) are not
    raw = run_strategy("sglang", gpt_oss_20b(), budget_bytes=GPT_OSS_BUDGET)
    assert raw.extras["log_lines"] == [r.extras["log_lines"][0], *r.extras["log_lines"][-2:]]
    assert raw.extras["log_left_out"] == [
        "no KV Cache lines: they need the K / V split and KV dtype, which bytes typed by hand "
        "(or attention layer kinds whose K / V splits differ) do not give"]
    # MLA keeps one latent tensor a layer: one figure, rows of #tokens + a page of 64 (V3.2's
    # NSA page), the indexer keys (132 B a token) counted in it
    v32 = load_preset("deepseek-v3.2").profile()
    assert (v32.kv_tensor_bytes, v32.kv_dtype) == ((576 * 2 + 132,), "bfloat16")
    mla = run_strategy("sglang", v32, budget_bytes=10 * 2**30)
    tokens = 10 * 2**30 // (61 * 1284) // 64 * 64
    assert mla.capacity_tokens == tokens == 137_088
    assert round(61 * (tokens + 64) * 1284 / 2**30, 4) == 10.0045
    assert mla.extras["log_lines"] == [
        "KV Cache is allocated. dtype: torch.bfloat16, #tokens: 137088, KV size: 10.00 GB",
        "max_total_num_tokens=137088, chunked_prefill_size=8192, max_prefill_tokens=..., "
        "max_running_requests=..., context_len=..."]


def test_sglang_without_its_hybrid_swa_pool_keeps_every_token_in_every_layer():
    # SGLang splits the pools only for the architectures on its list; for the others (Gemma
    # 2 / 3, Mistral) a sliding layer keeps every token. gpt-oss-20b's 24 layers at 10 GB:
    # 10**10 // (24 x 2,048) = 203,450 tokens, L per request. With the split a full-pool token
    # costs 2,048 x (12 + 0.8 x 12) = 44,236.8 B: 10**10 // 44,236.8 = 226,056 (226,056.7)
    one = StrategyOptions(sglang_swa_pool=False)
    r = run_strategy("sglang", gpt_oss_20b(), budget_bytes=10**10, context_tokens=131_072,
                     options=one)
    assert r.capacity_tokens == r.logged_tokens == 10**10 // (24 * 2048) == 203_450
    assert r.concurrency == Fraction(203_450, 131_072) and "swa_tokens" not in r.extras
    assert r.formulas[0].startswith("no hybrid SWA pool (as the SGLang sliding-window pool option "
                                    "sets it): the 12 sliding layers keep every token")
    assert r.extras["sglang_swa_pool"] is False
    split = run_strategy("sglang", gpt_oss_20b(), budget_bytes=10**10, context_tokens=131_072)
    assert split.capacity_tokens == 10**10 * 5 // (2048 * 108) == 226_056
    assert split.extras["sglang_swa_pool"] is True
    # sliding layers only (Mistral-like): a request holds L tokens, not its window; SGLang
    # gives no model without full layers a sliding pool, and forced on it holds the window
    mistral = CacheProfile(layer_types=(SLIDING,) * 32, kv_bytes_per_slot=4096,
                           sliding_window=4096)
    kept = run_strategy("sglang", mistral, budget_bytes=2**30, context_tokens=32_768)
    windowed = run_strategy("sglang", mistral, budget_bytes=2**30, context_tokens=32_768,
                            options=StrategyOptions(sglang_swa_pool=True))
    assert kept.concurrency == Fraction(2**30 // (32 * 4096), 32_768)
    assert "no full-attention layer beside the sliding ones" in kept.formulas[0]
    assert windowed.concurrency == Fraction(2**30 // (32 * 4096), 4095 + 8192)


def gemma3_12b_like(architectures: tuple[str, ...]) -> CacheProfile:
    """Gemma-3-12B's cache: 48 layers, five sliding (window 1,024) to one full, 8 KV heads x
    256 -> 8,192 B per token per layer."""
    return CacheProfile(layer_types=((SLIDING,) * 5 + (FULL,)) * 8, kv_bytes_per_slot=8192,
                        sliding_window=1024, architectures=architectures)


def test_sglang_picks_its_sliding_pool_by_the_configs_architectures():
    # Gemma 3 is not on SGLang's hybrid SWA list: one pool, every token in all 48 layers.
    # 40 GiB // (48 x 8,192) = 109,226 tokens; at 32,768 per request 3.33 requests
    gemma = run_strategy("sglang", gemma3_12b_like(("Gemma3ForConditionalGeneration",)),
                         budget_bytes=40 * 2**30, context_tokens=32_768)
    assert gemma.capacity_tokens == 40 * 2**30 // (48 * 8192) == 109_226
    assert gemma.concurrency == Fraction(109_226, 32_768)
    assert "swa_tokens" not in gemma.extras
    assert gemma.formulas[0].startswith("no hybrid SWA pool (Gemma3ForConditionalGeneration "
                                        "is not on SGLang's hybrid SWA list")
    # the same layers under an architecture on the list (or none named, full and sliding
    # layers) get the split: full = 40 GiB // (8,192 x (8 + 0.8 x 40)) = 131,072 (exactly:
    # 40 GiB / 327,680 B), swa = floor(0.8 x 131,072) = 104,857 (104,857.6)
    for named in (("GptOssForCausalLM",), ()):
        split = run_strategy("sglang", gemma3_12b_like(named), budget_bytes=40 * 2**30,
                             context_tokens=32_768)
        assert split.capacity_tokens == 40 * 2**30 * 5 // (8192 * (5 * 8 + 4 * 40)) == 131_072
        assert split.extras["swa_tokens"] == 131_072 * 4 // 5 == 104_857
    # an explicit option wins over the architecture
    forced = run_strategy("sglang", gemma3_12b_like(("Gemma3ForCausalLM",)),
                          budget_bytes=40 * 2**30, context_tokens=32_768,
                          options=StrategyOptions(sglang_swa_pool=True))
    assert forced.capacity_tokens == 131_072


def test_sglang_kimi_linear_state_does_not_read_the_configs_ssm_dtype():
    # KimiLinearCacheParams takes mamba2_state_dtype() without the config: float32 whatever
    # the config's mamba_ssm_dtype says; the env variable (the option) still sets it
    kimi = replace(load_preset("Kimi-Linear-48B-A3B").profile(),
                   config_mamba_ssm_dtype="bfloat16")
    options = StrategyOptions()
    assert ssm_dtype(kimi, options) == (
        "float32", "SGLang's default ssm dtype: its KimiLinearForCausalLM state does not read "
        "the config's mamba_ssm_dtype")
    assert ssm_dtype(replace(kimi, config_mamba_ssm_dtype=None), options) == (
        "float32", "SGLang's default ssm dtype")
    assert ssm_dtype(kimi, StrategyOptions(sglang_ssm_dtype="bf16"))[0] == "bfloat16"
    # another architecture reads it
    assert ssm_dtype(replace(kimi, architectures=("Qwen3NextForCausalLM",)), options) == (
        "bfloat16", "the config's mamba_ssm_dtype")
    # Granite 4.0-H's config builds Mamba2CacheParams without a dtype (SGLang 0.5.23): unread
    granite = replace(load_preset("granite-4.0-h-small").profile(),
                      config_mamba_ssm_dtype="bfloat16")
    assert ssm_dtype(granite, options) == (
        "float32", "SGLang's default ssm dtype: its GraniteMoeHybridForCausalLM state does not "
        "read the config's mamba_ssm_dtype")


def test_sglang_keeps_the_ssm_state_in_float32_unless_told():
    # SGLang's mamba2_state_dtype: ssm float32 unless the config's mamba_ssm_dtype or
    # SGLANG_MAMBA_SSM_DTYPE says otherwise; vLLM keeps the model's (bf16 for Qwen3-Next).
    # SPEC 2, TP 2: conv 24,576 B; ssm (32 / 2) x 128 x 128 = 262,144 elements

    profile = load_preset("Qwen3-Next-80B-A3B").with_options(tp=2).profile()
    assert profile.ssm_element_bytes == 2
    assert profile.state_const_bytes == {"conv": 24_576, "ssm": 262_144 * 2}
    r = run_strategy("sglang", profile, budget_bytes=ANCHOR_BUDGET, context_tokens=ANCHOR_CONTEXT)
    layer = 24_576 + 262_144 * 4
    slots = ANCHOR_BUDGET * 9 // 19 // (36 * layer)
    assert (r.extras["sglang_ssm_dtype"], r.extras["state_layer_bytes"]) == ("float32", layer)
    assert r.extras["state_slots"] == slots == 587
    assert r.capacity_tokens == (ANCHOR_BUDGET - slots * 36 * layer) // (12 * 1024) == 2_050_805
    assert r.formulas[0] == (
        "state bytes per layer = conv 24,576 B + ssm 262,144 elements x 4 B (float32: SGLang's "
        "default ssm dtype) = 1,073,152 (the model's 2-byte ssm elements take 524,288 B)")
    # told bfloat16 (the env variable or the config), it matches the model's bytes: the raw
    # profile's figures of test_sglang_qwen3_next, whose bytes are taken as given
    told = run_strategy("sglang", profile, budget_bytes=ANCHOR_BUDGET,
                        context_tokens=ANCHOR_CONTEXT,
                        options=StrategyOptions(sglang_ssm_dtype="bf16"))
    raw = run_strategy("sglang", qwen3_next_tp2(), budget_bytes=ANCHOR_BUDGET,
                       context_tokens=ANCHOR_CONTEXT)
    assert told.extras["state_slots"] == raw.extras["state_slots"] == 1_147
    assert told.capacity_tokens == raw.capacity_tokens == 2_051_957
    assert told.formulas[0].endswith(
        "x 2 B (bfloat16: SGLANG_MAMBA_SSM_DTYPE, as the option sets it) = 548,864")
    # the same model from a config whose mamba_ssm_dtype is bfloat16: SGLang reads it, so the
    # default is bfloat16 and the figures are the told ones; the option still overrides it
    from_config = replace(profile, config_mamba_ssm_dtype="bfloat16")
    by_config = run_strategy("sglang", from_config, budget_bytes=ANCHOR_BUDGET,
                             context_tokens=ANCHOR_CONTEXT)
    assert (by_config.extras["state_slots"], by_config.capacity_tokens) == (1_147, 2_051_957)
    assert by_config.extras["sglang_ssm_dtype_source"] == "the config's mamba_ssm_dtype"
    overridden = run_strategy("sglang", from_config, budget_bytes=ANCHOR_BUDGET,
                              context_tokens=ANCHOR_CONTEXT,
                              options=StrategyOptions(sglang_ssm_dtype="float32"))
    assert (overridden.extras["state_slots"], overridden.capacity_tokens) == (587, 2_050_805)
    assert raw.formulas[0] == (
        "state bytes per layer = conv 24,576 B + ssm 524,288 B = 548,864 as given (raw bytes: "
        "the conv and ssm dtypes are unknown, so SGLang's bfloat16 conv and float32 ssm are "
        "not applied)")
    # vLLM is not touched by it
    assert run_strategy("vllm", profile, budget_bytes=ANCHOR_BUDGET).num_blocks == 7_162


def test_sglang_keeps_the_conv_state_in_bfloat16_whatever_the_models():
    # SGLang 0.5.23's mamba2_state_dtype: conv in SGLANG_MAMBA_CONV_DTYPE, bfloat16 unless
    # set. Nemotron-H-8B with its conv state in float32 (as vLLM's --mamba-cache-dtype
    # float32 keeps it): 128 x 64 + 2 x 8 x 128 = 10,240 channels x 3 rows = 30,720 elements,
    # 61,440 B in SGLang's bfloat16 (122,880 B in the model's float32); ssm 1,048,576 elements
    # x 4 B (float32, SGLang's default) = 4,194,304 B; 24 Mamba2 layers a slot
    spec = load_preset("Nemotron-H-8B")
    budget = 40 * 2**30
    conv32 = spec.with_options(conv_dtype="float32").profile()
    assert (conv32.state_const_bytes["conv"], conv32.conv_element_bytes) == (122_880, 4)
    r = run_strategy("sglang", conv32, budget_bytes=budget)
    slot = 24 * (61_440 + 4_194_304)
    assert r.extras["state_tensor_bytes"] == {"conv": 61_440, "ssm": 4_194_304}
    assert r.extras["state_slots"] == budget * 9 // 19 // slot == 199  # 198 for requests
    assert r.formulas[0] == (
        "state bytes per layer = conv 30,720 elements x 2 B (bfloat16: SGLang's conv dtype, "
        "SGLANG_MAMBA_CONV_DTYPE's default) + ssm 1,048,576 elements x 4 B (float32: SGLang's "
        "default ssm dtype) = 4,255,744 (the model's 4-byte conv elements take 122,880 B; the "
        "model's 2-byte ssm elements take 2,097,152 B)")
    # the log line: 199 slots x 24 layers x 61,440 B = 293,437,440 B = 0.27 GiB of conv
    assert any(line.startswith("Mamba Cache is allocated. max_mamba_cache_size: 198, "
                               "conv_state size: 0.27GB, ssm_state size: 18.66GB")
               for line in r.extras["log_lines"])
    # in bfloat16 (the preset's) SGLang's conv is the model's: the same state slots
    bf16 = run_strategy("sglang", spec.profile(), budget_bytes=budget)
    assert bf16.extras["state_tensor_bytes"] == {"conv": 61_440, "ssm": 4_194_304}
    assert bf16.extras["state_slots"] == 199
    assert bf16.formulas[0].startswith("state bytes per layer = conv 61,440 B + ssm 1,048,576 ")


def test_sglang_ssm_dtype_is_one_sglang_has():
    with pytest.raises(ValueError, match="sglang_ssm_dtype is 'int8': SGLang keeps the ssm "
                       "state in one of float32, bfloat16, float16"):
        StrategyOptions(sglang_ssm_dtype="int8")


def test_sglang_ratio_and_slots_options():
    opts = StrategyOptions(mamba_full_memory_ratio=0.5, sglang_slots_per_request=5)
    r = run_strategy("sglang", qwen3_next_tp2(), budget_bytes=ANCHOR_BUDGET, options=opts)
    slots = ANCHOR_BUDGET * 1 // 3 // (36 * 548_864)  # 0.5 / 1.5 = 1/3
    assert r.extras["state_slots"] == slots == 807
    assert r.extras["running_request_cap"] == (807 - 1) // 5 == 161


def test_sglang_page_size_rounds_the_pool_and_each_request_to_pages():
    # Llama-3.1-8B: 32 layers x 4,096 B = 131,072 B per token; 10**10 B hold 76,293 tokens
    budget = 10**10
    one = run_strategy("sglang", llama_31_8b(), budget_bytes=budget, context_tokens=1000)
    assert one.capacity_tokens == 76_293 and one.max_concurrency == 76.293  # 76,293 / 1,000
    # page 64: the pool keeps whole pages, 76,288 tokens = 1,192 pages; a request of 1,000
    # tokens holds ceil(1,000 / 64) = 16 of them: 1,192 / 16 = 74.5 requests, not 76.288
    paged = run_strategy("sglang", llama_31_8b(), budget_bytes=budget, context_tokens=1000,
                         options=StrategyOptions(sglang_page_size=64))
    assert paged.capacity_tokens == 76_288 and paged.max_concurrency == 74.5
    assert "kv pages / ceil(L / 64) = 1,192 / 16" in "\n".join(paged.formulas)


def test_sglang_static_split_counts_idle_slots_and_whole_pages():
    # Qwen3-Next TP 2, 1 GiB, L = 1,000: state pool 2**30 x 9 // 19 = 508,614,548 B holds 25
    # slots of 36 x 548,864 B; KV memory 2**30 - 25 x 19,759,104 = 579,764,224 B
    slot = 36 * 548_864
    kv_memory = 2**30 - 25 * slot
    assert kv_memory == 579_764_224
    one = run_strategy("sglang", qwen3_next_tp2(), budget_bytes=2**30, context_tokens=1000)
    # 47,181 tokens; slot 0 pads, so (25 - 1) // 3 = 8 requests run (the cap binds) and hold
    # all 24 request slots; 47,181 - 8 x 1,000 tokens sit idle
    assert one.capacity_tokens == kv_memory // 12_288 == 47_181
    assert one.extras["binding_limit"] == "running cap" and one.max_concurrency == 8
    assert one.extras["idle_state_bytes_at_context"] == 0
    assert one.extras["idle_kv_bytes_at_context"] == (47_181 - 8_000) * 12_288
    # 5 slots a request: 24 // 5 = 4 run, 24 - 4 x 5 = 4 request slots sit idle
    five = run_strategy("sglang", qwen3_next_tp2(), budget_bytes=2**30, context_tokens=1000,
                        options=StrategyOptions(sglang_slots_per_request=5))
    assert five.max_concurrency == 4
    assert five.extras["idle_state_bytes_at_context"] == 4 * slot
    # page 64: 737 whole pages = 47,168 tokens; a request holds ceil(1,000 / 64) = 16 pages
    paged = run_strategy("sglang", qwen3_next_tp2(), budget_bytes=2**30, context_tokens=1000,
                         options=StrategyOptions(sglang_page_size=64))
    assert paged.capacity_tokens == 737 * 64 == 47_168
    idle_tokens = 47_168 - 8 * 16 * 64
    assert idle_tokens == 38_976
    assert paged.extras["idle_kv_bytes_at_context"] == idle_tokens * 12_288
    text = "\n".join(paged.formulas)
    # every printed equation holds: the division first, then the whole pages
    assert "579,764,224 // 12,288 = 47,181, 47,168 in whole pages of 64" in text
    assert "and 38,976 kv tokens (478,937,088 B) sit idle" in text


def test_sglang_concurrency_keeps_the_page_counts_it_divides():
    # gpt-oss-20b, page 64, L = 131,072: full pool pages / 2,048 pages per request, unreduced
    # as every layout's units / units per request (15,170 / 2,048, not 7,585 / 1,024)
    r = run_strategy("sglang", gpt_oss_20b(), budget_bytes=40 * 2**30, context_tokens=131_072,
                     options=StrategyOptions(sglang_page_size=64))
    # a full-pool token costs 2,048 x (12 + 0.8 x 12) = 44,236.8 B (221,184 / 5)
    full_raw = 40 * 2**30 * 5 // 221_184  # 970,903.7
    full = full_raw // 64 * 64
    assert (full_raw, full) == (970_903, 970_880)
    swa = full * 4 // 5  # from the full pool in whole pages: 776,704 is 12,136 pages
    assert r.capacity_tokens == full and r.extras["swa_tokens"] == swa == 776_704
    assert (r.concurrency_numerator, r.concurrency_denominator) == (full // 64, 2_048)
    assert (r.concurrency_numerator, r.concurrency_denominator) == (15_170, 2_048)
    text = "\n".join(r.formulas)
    assert ("bytes per full-pool token = F x (n_full + r_swa x n_swa) = 2,048 x (12 + 0.8 x 12) "
            "= 44,236.8\n") in text
    assert ("full tokens = KV memory // that = 42,949,672,960 // 44,236.8 = 970,903, 970,880 in "
            "whole pages of 64\n") in text
    assert ("swa tokens = floor(r_swa x full) = floor(0.8 x 970,880) = 776,704\n") in text
    # SGLang's KV tensors hold a page more than the pool (slot 0's dummy writes), outside its
    # sizing: 64 tokens x 2,048 B x 24 layers
    assert ": 64 x 2,048 x 24 layers = 3,145,728 B past the pools, which its sizing leaves out" in (
        text)
    # at page 1 no cut: floor(0.8 x 970,903) = 776,722 (776,722.4)
    one = run_strategy("sglang", gpt_oss_20b(), budget_bytes=40 * 2**30, context_tokens=131_072)
    assert one.extras["swa_tokens"] == 970_903 * 4 // 5 == 776_722
    assert "floor(0.8 x 970,903) = 776,722" in "\n".join(one.formulas)


def test_sglang_with_one_pool_and_no_state_takes_no_least_of_one_limit():
    # full attention only: the kv tokens are the one limit, 80e9 // 131,072 = 610,351 tokens
    # (Llama-3.1-8B: 32 layers x 8 heads x 128 x 2 x 2 B), 4.66 requests of 131,072
    llama = CacheProfile(layer_types=("full_attention",) * 32, kv_bytes_per_slot=4_096)
    r = run_strategy("sglang", llama, budget_bytes=80 * 10**9, context_tokens=131_072)
    assert 80 * 10**9 // 131_072 == 610_351
    assert "max_concurrency = kv tokens / L = 610,351 / 131,072 = 4.66" in r.formulas


def test_sglang_divides_the_memory_by_one_full_pool_token():
    # SGLang's HybridSWAPoolConfigurator (since April 2026), SPEC 3.2: full = memory // (F x
    # n_full + r_swa x F x n_swa). gpt-oss-20b at TP 2 in fp8: 512 B per token per layer, so a
    # full-pool token costs 512 x 21.6 = 11,059.2 B: 3,000,012,345 // 11,059.2 = 271,268
    # (271,268.3) full and floor(0.8 x 271,268) = 217,014 (217,014.4) swa tokens. The older
    # set_num_token_hybrid counted whole tokens of all 24 layers first (3,000,012,345 //
    # 12,288 = 244,141) and split those: floor(244,141 x 24 / 21.6) = 271,267.
    profile = replace(gpt_oss_20b(), kv_bytes_per_slot=512)
    r = run_strategy("sglang", profile, budget_bytes=3_000_012_345, context_tokens=100_001)
    assert r.capacity_tokens == r.logged_tokens == 3_000_012_345 * 5 // (512 * 108) == 271_268
    assert r.extras["swa_tokens"] == 271_268 * 4 // 5 == 217_014
    # the swa pool is r_swa times the full pool in whole pages, not its unrounded tokens: at
    # page 64, 64,483,354,767 // 44,236.8 = 1,457,685 full tokens, 1,457,664 in whole pages;
    # floor(0.8 x 1,457,664) = 1,166,131, so 1,166,080 (0.8 x 1,457,685 would give 1,166,144)
    paged = run_strategy("sglang", gpt_oss_20b(), budget_bytes=64_483_354_767,
                         options=StrategyOptions(sglang_page_size=64))
    assert paged.capacity_tokens == 64_483_354_767 * 5 // 221_184 // 64 * 64 == 1_457_664
    assert paged.extras["swa_tokens"] == 1_457_664 * 4 // 5 // 64 * 64 == 1_166_080


def test_sglang_pools_and_their_floor_in_sglangs_own_float_arithmetic():
    # gpt-oss-20b at page 64: 320 full tokens of 44,236.8 B are 14,155,776 B exactly, but
    # SGLang's float cell (2,048 x 12 + 0.8 x 2,048 x 12) is a hair over 44,236.8, so
    # 14,155,776 // it is 319.99...: 319 tokens, 256 in whole pages, swa 192 = W + page:
    # refused. The budget named is the next byte, which SGLang starts with (320 and 256).
    page64 = StrategyOptions(sglang_page_size=64)
    cell = 2048 * 12 + 0.8 * 2048 * 12
    assert Fraction(cell) > Fraction(442_368, 10) and int(14_155_776 // cell) == 319
    r = run_strategy("sglang", gpt_oss_20b(), budget_bytes=14_155_776, options=page64)
    assert not r.applies
    assert "; a budget of 14,155,777 B or more has them" in r.reason
    ok = run_strategy("sglang", gpt_oss_20b(), budget_bytes=14_155_777, options=page64)
    assert ok.applies and (ok.capacity_tokens, ok.extras["swa_tokens"]) == (320, 256)
    # at 44,236,800 B (1,000 cells of 44,236.8 exactly) that float cell gives 999 tokens, and
    # the formula says why rather than print a false division
    r = run_strategy("sglang", gpt_oss_20b(), budget_bytes=44_236_800)
    assert r.capacity_tokens == 999 and r.extras["swa_tokens"] == 799  # floor(0.8 x 999)
    assert ("= 999 (SGLang's float cell, 44236.800000000003, is a hair off; exact arithmetic "
            "gives 1,000)") in "\n".join(r.formulas)
    # a ratio whose float falls short: 2,048 x (12 + 0.57 x 12) = 38,584.32 B a token, and
    # 1,003,194,880 B hold 26,000 of them; 0.57 x 26,000 is 14,820 exactly, but the float
    # 0.57 (0.56999...) gives 14,819.99..., so SGLang's swa pool is 14,819
    low = StrategyOptions(swa_full_tokens_ratio=0.57)
    r = run_strategy("sglang", gpt_oss_20b(), budget_bytes=1_003_194_880, options=low)
    assert (r.capacity_tokens, r.extras["swa_tokens"]) == (26_000, 14_819)
    assert ("floor(0.57 x 26,000) = 14,819 (SGLang's float of 0.57 is a hair off; exact "
            "arithmetic gives 14,820)") in "\n".join(r.formulas)
    # past 2**53 B a float budget can round up past the memory: the exact count, never a
    # pool larger than the budget (3 x 2**58 - 1 B, r_swa 1: 49,152 B a token)
    huge = run_strategy("sglang", gpt_oss_20b(), budget_bytes=3 * 2**58 - 1,
                        options=StrategyOptions(swa_full_tokens_ratio=1))
    # 49,152 = 3 x 2**14, so 3 x 2**58 B is 2**44 tokens exactly and a byte less is 2**44 - 1
    # = 17,592,186,044,415 of them, the pool (2**44 - 1) x 49,152 = 3 x 2**58 - 49,152 B and
    # 49,151 B unused; a float of 3 x 2**58 - 1 is 3 x 2**58 and would give 2**44
    assert (huge.capacity_tokens, huge.extras["swa_tokens"]) == (2**44 - 1, 17_592_186_044_415)
    assert bd(huge) == {**dict.fromkeys(CATEGORIES, 0), "kv_history": 3 * 2**58 - 49_152,
                        "unused": 49_151}


def test_sglang_refuses_a_swa_pool_that_holds_no_request():
    # SGLang will not start when its swa pool holds window + page_size tokens or fewer ("SWA
    # pool ... cannot hold even one request"), the window as its model reports it: gpt-oss's
    # get_attention_sliding_window_size is sliding_window - 1 = 127. gpt-oss-20b (24 x 2,048
    # B): at page 1, 128 swa tokens or fewer. A budget of 7,122,124 B: 7,122,124 // 44,236.8
    # = 160 full tokens (160.99), floor(0.8 x 160) = 128 swa tokens, refused; 129 swa tokens
    # need ceil(129 / 0.8) = 162 full tokens (floor(0.8 x 161) is 128), ceil(162 x 44,236.8)
    # = ceil(7,166,361.6) = 7,166,362 B.
    oss = replace(gpt_oss_20b(), architectures=("GptOssForCausalLM",))
    small = run_strategy("sglang", oss, budget_bytes=7_122_124)
    assert not small.applies
    assert small.reason == (
        "SGLang refuses to start: "
        "the swa pool (128 tokens) cannot hold one request: it needs more than the window "
        "(sliding_window - 1 = 127) + page size 1 tokens in it; a budget of 7,166,362 B or "
        "more has them, as does a larger SGLang sliding/full tokens ratio "
        "(--swa-full-tokens-ratio)")
    enough = run_strategy("sglang", oss, budget_bytes=7_166_362)
    assert enough.applies and (enough.capacity_tokens, enough.extras["swa_tokens"]) == (162, 129)
    assert not run_strategy("sglang", oss, budget_bytes=7_166_361).applies
    # at r_swa 1 (the app's largest) a full-pool token costs 2,048 x 24 = 49,152 B and 129
    # swa tokens need 129 x 49,152 = 6,340,608 B; a larger ratio is not offered as the fix
    even = StrategyOptions(swa_full_tokens_ratio=1)
    refused = run_strategy("sglang", oss, budget_bytes=6_340_607, options=even)
    assert refused.reason.endswith("; a budget of 6,340,608 B or more has them")
    assert run_strategy("sglang", oss, budget_bytes=6_340_608, options=even).applies
    # page 16, r_swa 0.5 (SGLang 0.5.23 run on 11,400,000 B: full 304, swa 144 tokens): a
    # token costs 2,048 x (12 + 0.5 x 12) = 36,864 B, 11,400,000 // 36,864 = 309 -> 304 in
    # whole pages, floor(0.5 x 304) = 152 -> 144; 144 > 127 + 16 = 143, so it starts
    half = StrategyOptions(swa_full_tokens_ratio=0.5, sglang_page_size=16)
    r = run_strategy("sglang", oss, budget_bytes=11_400_000, options=half)
    assert r.applies and (r.capacity_tokens, r.extras["swa_tokens"]) == (304, 144)
    # a model whose SGLang window is the config's (Step-3.5, MiMo-V2, Llama 4's chunk; one
    # typed by hand): the floor is sliding_window + page size, 130 swa tokens at page 1
    for same in (gpt_oss_20b(), replace(oss, architectures=("Step3p5ForCausalLM",))):
        assert sglang_window(same) == (128, "sliding_window = 128")
        assert not run_strategy("sglang", same, budget_bytes=7_166_362).applies
    # sliding layers alone in SGLang's pool (forced on): no full pool, so no such floor, as in
    # SGLang's all-SWA path; 4 layers x 4,096 B: 1,638,400 // 16,384 = 100 tokens
    alone = CacheProfile(layer_types=(SLIDING,) * 4, kv_bytes_per_slot=4096,
                         sliding_window=4096)
    r = run_strategy("sglang", alone, budget_bytes=1_638_400,
                     options=StrategyOptions(sglang_swa_pool=True))
    assert r.applies and r.extras["swa_tokens"] == 100


def test_sglang_state_pool_in_sglangs_own_float_arithmetic():
    # Qwen3-Next TP 2: a slot is 36 x 548,864 = 19,759,104 B. At r = 0.1 the state pool is
    # budget x 0.1 / 1.1 = budget / 11 exactly; 1,086,750,720 B = 11 x 5 x 19,759,104 gives
    # exactly 98,795,520 B = 5 slots, but SGLang computes it in floats (rest GiB x 0.1 / 1.1,
    # then (pool - slot) // slot + 1 slots): 98,795,519.99999999, so 4 slots, 3 for requests
    # (one pads), 1 running request at S = 3. (The engine check's --random seed 1113 found it:
    # SGLang refused a Qwen3-Next of 3 slots a request where FlatKV counted 5 slots.)
    budget, slot = 1_086_750_720, 19_759_104
    assert budget == 11 * 5 * slot and int(budget * 0.1 / 1.1) == 5 * slot - 1
    tenth = StrategyOptions(mamba_full_memory_ratio="0.1")
    r = run_strategy("sglang", qwen3_next_tp2(), budget_bytes=budget, options=tenth)
    x = r.extras
    assert (x["state_pool_bytes"], x["state_slots"], x["request_state_slots"]) == (
        98_795_519, 4, 3)
    # its formula line is true as SGLang computes it, and says the exact quotient beside it
    assert ("state pool = budget x r / (1 + r) = 1,086,750,720 x 0.1 / (1 + 0.1) = 98,795,519 "
            "in SGLang's float arithmetic, 98,795,520 in exact arithmetic: SGLang holds what "
            "its floats give") in r.formulas
    # the KV pool gets the rest: (1,086,750,720 - 4 x 19,759,104) // (12 x 1,024) = 82,008
    assert x["kv_tokens"] == (budget - 4 * slot) // (12 * 1024) == 82_008
    # the fifth slot comes a byte later: (budget + 1) / 11 = 98,795,520.09... B
    assert budget_of_next_slot(r, qwen3_next_tp2()) == budget + 1
    more = run_strategy("sglang", qwen3_next_tp2(), budget_bytes=budget + 1, options=tenth)
    assert more.extras["state_slots"] == 5
    # there floats and exact arithmetic agree (98,795,520.09... both ways down): no remark
    assert ("state pool = budget x r / (1 + r) = 1,086,750,721 x 0.1 / (1 + 0.1) = 98,795,520"
            in more.formulas)


def test_sglang_too_small_for_one_request_names_the_budget_that_fits():
    # Qwen3-Next TP 2: a slot is 36 layers x 548,864 B = 19,759,104 B; 3 slots per running
    # request and SGLang's padding slot need a state pool of 4 x 19,759,104 = 79,036,416 B,
    # which is budget x 0.9 / 1.9 from a budget of 79,036,416 x 19 / 9 = 166,854,656 B (exact)
    r = run_strategy("sglang", qwen3_next_tp2(), budget_bytes=10**8, context_tokens=1000)
    assert not r.applies
    assert r.reason == (
        "SGLang refuses to start: "
        "the state pool (47,368,421 B) holds 2 slots of 19,759,104 B, fewer than 4: one "
        "running request needs 3 and one is kept for padding; a budget of 166,854,656 B "
        "or more holds them")
    assert run_strategy("sglang", qwen3_next_tp2(), budget_bytes=166_854_656).applies
    assert not run_strategy("sglang", qwen3_next_tp2(), budget_bytes=166_854_655).applies


def test_sglang_refusal_with_s_set_names_the_most_slots_per_request_its_pool_holds():
    # Qwen3-Next TP 2, a slot 36 x 548,864 = 19,759,104 B. S told 40 at 3 x 10**8 B: the pool
    # int(3 x 10**8 x 0.9 / 1.9) = 142,105,263 B holds 142,105,263 // 19,759,104 = 7 slots,
    # one the padding slot: 6 for requests, so S = 6 is the most one request can hold
    def sglang(budget: int, **options) -> StrategyResult:
        return run_strategy("sglang", qwen3_next_tp2(), budget_bytes=budget,
                            context_tokens=1000, options=StrategyOptions(**options))

    r = sglang(3 * 10**8, sglang_slots_per_request=40)
    assert r.reason == (
        "SGLang refuses to start: "
        "the state pool (142,105,263 B) holds 7 slots of 19,759,104 B, fewer than 41: one "
        "running request needs 40 and one is kept for padding; a budget of 1,710,260,224 "
        "B or more holds them, or SGLang slots per request (--sglang-slots-per-request) of 6, "
        "the most this state pool holds")
    assert sglang(3 * 10**8, sglang_slots_per_request=6).applies
    assert not sglang(3 * 10**8, sglang_slots_per_request=7).applies
    # at 10**8 B: 47,368,421 // 19,759,104 = 2 slots, 1 for requests: S = 1
    assert sglang(10**8, sglang_slots_per_request=3).reason.endswith(
        "holds them, or SGLang slots per request (--sglang-slots-per-request) of 1, the most "
        "this state pool holds")
    assert sglang(10**8, sglang_slots_per_request=1).applies
    # S left to SGLang (its own 3 here) is not the user's to lower: no such clause
    assert "--sglang-slots-per-request" not in sglang(10**8).reason
    # a pool of the padding slot alone (5 x 10**7 B: 23,684,210 B, 1 slot) or none holds no S
    for budget in (5 * 10**7, 10**6):
        assert "--sglang-slots-per-request" not in sglang(
            budget, sglang_slots_per_request=3).reason
    # drafting 3 (D = 4) at 10**9 B: the state budget 10**9 x 0.9 / 1.9 = 473,684,210.5 B
    # less the padding slot's 1 + D slots (5 x 19,759,104 = 98,795,520) is 18.97 slots, and
    # K = int(18.97 / (1 + D / S)) >= S while S + D <= 18.97: S = 14 (K = 14, 14.76 down),
    # not 15 (K = int(14.98) = 14)
    drafted = sglang(10**9, sglang_slots_per_request=40, speculative_tokens=3)
    assert drafted.reason.endswith("or SGLang slots per request (--sglang-slots-per-request) "
                                   "of 14, the most this state pool holds")
    assert sglang(10**9, sglang_slots_per_request=14, speculative_tokens=3).extras[
        "request_state_slots"] == 14
    assert not sglang(10**9, sglang_slots_per_request=15, speculative_tokens=3).applies
    # told --max-mamba-cache-size 3 beside S = 5: M // S = 0 requests; S = 3 gives 3 // 3 = 1
    told = sglang(40 << 30, sglang_slots_per_request=5, sglang_max_mamba_cache_size=3)
    assert told.reason == (
        "SGLang refuses to start: --max-mamba-cache-size 3 gives fewer request slots than the 5 "
        "one running request holds (S); give at least 5, or SGLang slots per request "
        "(--sglang-slots-per-request) of 3, the most this state pool holds")
    assert sglang(40 << 30, sglang_slots_per_request=3, sglang_max_mamba_cache_size=3).applies


@pytest.mark.parametrize(("budget", "holds"), [
    # state pool int(budget x 0.9 / 1.9) over slots of 36 x 548,864 = 19,759,104 B:
    # 10**6 -> 473,684 B, 0 slots; 5 x 10**7 -> 23,684,210 B, 1 slot; 10**8 -> 47,368,421 B, 2
    (10**6, "holds 0 slots of"), (5 * 10**7, "holds 1 slot of"), (10**8, "holds 2 slots of")])
def test_sglang_state_pool_refusal_counts_its_slots_in_words(budget, holds):
    # it read "holds 1 slot(s)": the count is at hand, so the noun agrees with it
    r = run_strategy("sglang", qwen3_next_tp2(), budget_bytes=budget, context_tokens=1000)
    assert r.reason.startswith(
        f"SGLang refuses to start: the state pool ({budget * 9 // 19:,} B) {holds} 19,759,104 B")
    assert "(s)" not in r.reason


@pytest.mark.parametrize("page", [1, 64])
@pytest.mark.parametrize("ratio", [Fraction(9, 10), Fraction(1, 100), Fraction(1000)])
def test_sglang_budget_it_names_holds_a_request(page, ratio):
    # whichever pool runs short, the budget the reason names applies (a sliding + full + state
    # model was once told 36,588 B, which failed again on its KV pool)
    mixed = CacheProfile(layer_types=(SLIDING, FULL, LINEAR), kv_bytes_per_slot=2048,
                         sliding_window=128, state_const_bytes={"conv": 4096, "ssm": 8192})
    options = StrategyOptions(sglang_page_size=page, mamba_full_memory_ratio=ratio)
    for profile in (mixed, qwen3_next_tp2(), gpt_oss_20b(), llama_31_8b(), pure_mamba()):
        for budget in (1, 1_000, 40_000, 10**6, 10**8):
            r = run_strategy("sglang", profile, budget_bytes=budget, options=options)
            if r.applies:
                continue
            named = int(re.search(r"a budget of ([\d,]+) B or more", r.reason)[1].replace(",", ""))
            assert named > budget
            assert run_strategy("sglang", profile, budget_bytes=named, options=options).applies


def test_nemotron_sglang():
    r = run_strategy("sglang", nemotron_h_8b(), budget_bytes=GIB8, context_tokens=32_768)
    slot = 24 * (61_440 + 2_097_152)
    slots = GIB8 * 9 // 19 // slot
    assert slots == 78
    tokens = (GIB8 - slots * slot) // (4 * 4096)
    assert r.capacity_tokens == r.logged_tokens == tokens == 277_652  # max_total_num_tokens
    assert r.extras["running_request_cap"] == (78 - 1) // 3 == 25  # slot 0 pads
    assert r.concurrency == Fraction(tokens, 32_768)


def test_gpt_oss_sglang_swa_pools():
    r = run_strategy("sglang", gpt_oss_20b(), budget_bytes=GPT_OSS_BUDGET,
                     context_tokens=131_072)
    per_layer_set = 12 * 2048
    # full = mem / (F n_full + 0.8 F n_swa) = mem x 5 / (5 + 4) / (12 x 2,048)
    full = GPT_OSS_BUDGET * 5 // (9 * per_layer_set)
    swa = full * 4 // 5
    assert r.capacity_tokens == full
    assert r.extras["swa_tokens"] == swa
    assert r.concurrency == min(Fraction(full, 131_072), Fraction(swa, 127 + 8_192))
    # full binds (1.43 requests): at the 1 that runs, its window of 127 + 8,192 tokens is in
    # use and the rest of the sliding pool idle, its own slice of the budget
    idle = swa - 1 * (127 + 8_192)
    assert r.extras["binding_limit"] == "kv tokens" and idle == 141_753
    assert bd(r)["kv_history"] == (full + swa - idle) * per_layer_set
    assert bd(r)["idle_pool"] == idle * per_layer_set
    assert (f"idle_pool = sliding pool {idle * per_layer_set:,} B idle at 1 request (the KV "
            "pool binds: its remainder, under a request, stays in use)") in r.formulas
    assert (f"kv_history = {(full + swa) * per_layer_set:,} - kv idle {idle * per_layer_set:,}"
            f" = {(full + swa - idle) * per_layer_set:,}") in r.formulas
    # past the full pool's 187,591 tokens not one request runs: the pools drawn as reserved
    none = run_strategy("sglang", gpt_oss_20b(), budget_bytes=GPT_OSS_BUDGET,
                        context_tokens=full + 1)
    # the full pool's 187,591 tokens over a request of 187,592: one token short
    assert none.concurrency == Fraction(187_591, 187_592) and bd(none)["idle_pool"] == 0
    assert bd(none)["kv_history"] == (full + swa) * per_layer_set
    assert (f"static split: not one request of {full + 1:,} tokens fits, so none runs; the "
            "pools are drawn as reserved") in none.formulas
    assert not any(f.startswith("idle_pool") for f in none.formulas)
    # pages of 16 at L = 100,000: full 226,056 // 16 = 14,128 pages, swa int(226,048 x 0.8) =
    # 180,838 // 16 = 11,302 pages; a request holds ceil(100,000 / 16) = 6,250 full pages and
    # ceil((128 - 1 + 8,192) / 16) = 520 sliding ones, so 2 run (the full pool binds)
    paged = run_strategy("sglang", gpt_oss_20b(), budget_bytes=10**10, context_tokens=100_000,
                         options=StrategyOptions(sglang_page_size=16))
    assert paged.capacity_tokens == 14_128 * 16 and paged.extras["swa_tokens"] == 11_302 * 16
    assert int(paged.concurrency) == 2 and paged.extras["binding_limit"] == "kv tokens"
    idle_full, idle_swa = 14_128 * 16 - 2 * 6_250 * 16, 11_302 * 16 - 2 * 520 * 16
    assert (idle_full, idle_swa) == (26_048, 164_192)
    assert paged.extras["idle_swa_tokens_at_context"] == idle_swa
    assert (f"static split at 2 requests: 26,048 kv tokens ({idle_full * 2048 * 12:,} B) and "
            f"164,192 swa tokens ({idle_swa * 2048 * 12:,} B) sit idle") in paged.formulas


def test_llama4_sglang_keeps_chunked_layers_in_its_swa_pool():
    ctx = 131_072
    r = run_strategy("sglang", llama4_scout(), budget_bytes=LLAMA4_BUDGET, context_tokens=ctx)
    assert r.extras["sglang_swa_pool"] is True  # Llama4ForConditionalGeneration is listed
    # full = mem / (F x 12 + 0.8 x F x 36) = mem x 5 / (5 x 12 + 4 x 36) / F
    full = LLAMA4_BUDGET * 5 // ((5 * 12 + 4 * 36) * 4096)
    assert full == 385_505
    assert r.capacity_tokens == full and r.extras["swa_tokens"] == full * 4 // 5 == 308_404
    # a request holds L full tokens and min(C + S, L) chunked ones
    assert r.concurrency == min(Fraction(full, ctx), Fraction(308_404, 8192 + 8192))
    assert any("hybrid SWA pool: the 36 chunked layers keep their chunk in a token pool of "
               "their own" in f for f in r.formulas)
    # the static split at the requests that run: 2 (full pool binds) hold 2 x L full tokens and
    # 2 x 16,384 chunked ones; the rest of each pool sits idle
    idle_full, idle_swa = 385_505 - 2 * ctx, 308_404 - 2 * 16_384
    assert (idle_full, idle_swa) == (123_361, 275_636)
    assert r.extras["idle_kv_bytes_at_context"] == idle_full * 4096 * 12
    assert r.extras["idle_swa_bytes_at_context"] == idle_swa * 4096 * 36 == 40_644_182_016
    assert ("static split at 2 requests: 123,361 kv tokens (6,063,439,872 B) and 275,636 swa "
            "tokens (40,644,182,016 B) sit idle") in r.formulas
    # one request of 250,000 tokens runs (385,505 / 250,000 = 1.54), in the singular
    one = run_strategy("sglang", llama4_scout(), budget_bytes=LLAMA4_BUDGET,
                       context_tokens=250_000)
    idle_full, idle_swa = 385_505 - 250_000, 308_404 - 16_384
    assert (f"static split at 1 request: {idle_full:,} kv tokens ({idle_full * 4096 * 12:,} B) "
            f"and {idle_swa:,} swa tokens ({idle_swa * 4096 * 36:,} B) sit idle") in one.formulas
    # a small chunked pool binds: r_swa 0.05 leaves it 0.05 x full tokens over C + S a request
    small = run_strategy("sglang", llama4_scout(), budget_bytes=LLAMA4_BUDGET, context_tokens=ctx,
                         options=StrategyOptions(swa_full_tokens_ratio="0.05"))
    full = LLAMA4_BUDGET * 20 // ((20 * 12 + 36) * 4096)
    assert small.capacity_tokens == full == 1_139_756
    assert small.extras["swa_tokens"] == int(full * 0.05) == 56_987
    assert small.concurrency == Fraction(56_987, 8192 + 8192)  # 3.48, under 1,139,756 / L
    # 3 run when the chunked pool binds: 56,987 - 3 x 16,384 = 7,835 of it idle
    split = next(f for f in small.formulas if f.startswith("static split"))
    assert split.startswith("static split at 3 requests: ")
    assert split.endswith(f"and 7,835 swa tokens ({7_835 * 4096 * 36:,} B) sit idle")
    one_pool = run_strategy("sglang", llama4_scout(), budget_bytes=LLAMA4_BUDGET,
                            context_tokens=ctx, options=StrategyOptions(sglang_swa_pool=False))
    assert one_pool.capacity_tokens == LLAMA4_BUDGET // (48 * 4096) == 327_680


def test_sglang_refuses_sliding_and_chunked_layers_together():
    both = CacheProfile(layer_types=(SLIDING, CHUNKED, FULL), kv_bytes_per_slot=4096,
                        sliding_window=128, attention_chunk_size=8192)
    r = run_strategy("sglang", both, budget_bytes=LLAMA4_BUDGET, context_tokens=4096)
    assert not r.applies
    assert "holds one kind of windowed layer" in r.reason
    # vLLM groups them apart: 1 sliding, 1 chunked, 1 full group, each its own page count
    v = run_strategy("vllm", both, budget_bytes=LLAMA4_BUDGET, context_tokens=4096)
    assert v.concurrency == Fraction(LLAMA4_BUDGET // (16 * 4096), 256 + (256 + 1) + 256)


def test_sglang_logs_max_running_requests_from_its_token_pool():
    # _resolve_max_num_reqs without --max-running-requests: int(T / context_len x 512) kept to
    # 2,048..4,096, at most T // 2; Llama-3.1-8B's pool at the anchor's budget is
    # 47,878,147,932 // (32 x 4,096) = 365,281 tokens
    def running(context, budget=ANCHOR_BUDGET):
        return run_strategy("sglang", llama_31_8b(), budget_bytes=budget,
                            context_tokens=context).extras["max_running_requests"]

    assert ANCHOR_BUDGET // (32 * 4096) == 365_281
    assert int(365_281 / 8192 * 512) == 22_830 and running(8192) == 4096  # the ceiling
    assert int(365_281 / 262_144 * 512) == 713 and running(262_144) == 2048  # the floor
    assert running(262_144, budget=3000 * 32 * 4096) == 3000 // 2 == 1500  # half the pool
    r = run_strategy("sglang", llama_31_8b(), budget_bytes=ANCHOR_BUDGET, context_tokens=8192)
    assert ("max_running_requests = min(max(min(int(T / context_len x 512), 4,096), 2,048), "
            "T // 2) = min(4,096, 182,640) = 4,096 (SGLang's log, T the token pool 365,281, "
            "context_len 8,192: a cap on requests at once)") in r.formulas


def test_sglang_serves_no_jamba():
    # SGLang has no Jamba model class: Compare says so rather than sizing pools it never builds;
    # the same layers under another architecture (or none) are sized
    jamba = load_preset("Jamba-1.5-Mini").profile()
    assert jamba.architectures == ("JambaForCausalLM",)
    r = run_strategy("sglang", jamba, budget_bytes=LLAMA4_BUDGET, context_tokens=4096)
    assert not r.applies
    assert r.reason == ("SGLang has no Jamba model (none in its releases up to 0.5.23, October "
                        "2026; feature request #1190 is open): compare vLLM's layout")
    assert run_strategy("sglang", replace(jamba, architectures=()), budget_bytes=LLAMA4_BUDGET,
                        context_tokens=4096).applies
    assert run_strategy("vllm", jamba, budget_bytes=LLAMA4_BUDGET, context_tokens=4096).applies


@pytest.mark.parametrize(("arch", "name"), [("BambaForCausalLM", "Bamba"),
                                            ("Zamba2ForCausalLM", "Zamba2"),
                                            ("OlmoHybridForCausalLM", "OLMo Hybrid")])
def test_sglang_serves_no_state_hybrid_it_has_no_model_for(arch, name):
    # SGLang 0.5.23 has no model file for these, and its transformers fallback refuses them
    # (is_backend_compatible() is False): a helper running SGLang's loader saw it refuse Bamba
    # and Zamba2, where FlatKV had sized their pools
    hybrid = replace(qwen3_next_tp2(), architectures=(arch,))
    r = run_strategy("sglang", hybrid, budget_bytes=ANCHOR_BUDGET, context_tokens=4096)
    assert not r.applies
    assert r.reason == (f"SGLang has no {name} model (none in its releases up to 0.5.23, "
                        "October 2026), and its fallback to the transformers implementation "
                        "refuses it: compare vLLM's layout")
    assert run_strategy("vllm", hybrid, budget_bytes=ANCHOR_BUDGET, context_tokens=4096).applies


def test_sglang_serves_no_minimax_lightning_model():
    # SGLang 0.5.23 has no MiniMax-Text-01 / M1 model, and transformers no class of their
    # names (sglang_check.py runs its loader's resolve_transformers_arch: "Cannot find model
    # module"); its reason used to be that MambaPool keeps a conv state for every state layer,
    # which SGLang's lightning-attention hybrids (Bailing V2.5, MiniCPM: Mamba2StateShape with
    # conv_kernel=1, an empty conv tensor) contradict
    m1 = load_preset("MiniMax-M1").profile()
    assert m1.conv_free_state and m1.architectures == ("MiniMaxM1ForCausalLM",)
    said = ("SGLang has no MiniMax-Text-01 / M1 model (none in its releases up to 0.5.23, "
            "October 2026; its MiniMax lightning-attention PRs were closed unmerged), and its "
            "fallback to the transformers implementation finds no class of that name: compare "
            "vLLM's layout")
    for arch in ("MiniMaxM1ForCausalLM", "MiniMaxText01ForCausalLM"):
        r = run_strategy("sglang", replace(m1, architectures=(arch,)), budget_bytes=ANCHOR_BUDGET,
                         context_tokens=4096)
        assert not r.applies and r.reason == said
    # the same layers under no architecture: a conv-free state FlatKV does not model in SGLang
    r = run_strategy("sglang", replace(m1, architectures=()), budget_bytes=ANCHOR_BUDGET,
                     context_tokens=4096)
    assert not r.applies
    assert r.reason.startswith("the state layers keep no conv state: FlatKV does not model such "
                               "a state in SGLang (SGLang 0.5.23 keeps lightning attention's in "
                               "its MambaPool beside an empty conv tensor")
    assert "serves no such model" not in r.reason
    assert run_strategy("vllm", m1, budget_bytes=ANCHOR_BUDGET, context_tokens=4096).applies


def test_sglang_keeps_a_float16_kda_state_as_any_other():
    # SGLang 0.5.23 takes --mamba-ssm-dtype float16 for KDA (no check refuses it on an H100),
    # and without it keeps Kimi's ssm state in float32 whatever the model's dtype: the float16
    # profile's figures are the float32 one's, 73,728 + 524,288 x 4 = 2,170,880 B a layer
    kimi = load_preset("Kimi-Linear-48B-A3B")
    half, fp32 = (run_strategy("sglang", kimi.with_options(ssm_dtype=d).profile(),
                               budget_bytes=40 * 2**30, context_tokens=32_768)
                  for d in ("float16", "float32"))
    assert half.applies and half.extras["state_layer_bytes"] == 2_170_880
    assert (half.num_blocks, half.max_concurrency) == (fp32.num_blocks, fp32.max_concurrency)


# ------------------------------------------------------------------------------------------
# SGLang with sliding layers: block bytes count both pools.
def test_sglang_block_bytes_include_the_swa_pool():
    r = run_strategy("sglang", gpt_oss_20b(), budget_bytes=GPT_OSS_BUDGET)
    # page size 1: 12 full + 12 sliding layers x 2,048 B
    assert r.block_bytes == 24 * 2048
    assert (r.extras["full_page_bytes"], r.extras["swa_page_bytes"]) == (12 * 2048, 12 * 2048)
    assert sum(bd(r).values()) == GPT_OSS_BUDGET


def test_sglang_speculative_decoding_by_hand():
    # Qwen3-Next TP 2 as raw bytes (no architecture: S = 3, no radix-cache extra buffer), 2
    # tokens drafted a step: SGLang verifies D = 2 + 1 = 3 (topk 1). A slot is 36 x 548,864 =
    # 19,759,104 B. The state budget is 47,878,147,932 x 0.9 / 1.9 = 22,679,122,704.63 B (its
    # floats); K = int((22,679,122,704.63 - 19,759,104 x (1 + 3)) // (19,759,104 x (1 + 3 / 3)))
    # = int(22,600,086,288.63 // 39,518,208) = 571 request slots, 572 with the padding slot.
    # The buffers are reserved for min(48, 571 // 3) + 1 = 49 requests: 19,759,104 x 49 x 3 =
    # 2,904,588,288 B. KV memory = 47,878,147,932 - 572 x 19,759,104 - 2,904,588,288 =
    # 33,671,352,156 B, so 33,671,352,156 // (12 x 1,024) = 2,740,181 tokens, and
    # max_running_requests = min(48, 2,740,181 // 2, 190) = 48. Without drafting the pool keeps
    # 22,679,122,704 // 19,759,104 = 1,147 slots and the KV pool (47,878,147,932 - 1,147 x
    # 19,759,104) // 12,288 = 2,051,957 tokens: the joint solve keeps half the slots and
    # reserves buffers for 49 requests only, so the rest of the state budget goes to KV.
    budget, slot = ANCHOR_BUDGET, 36 * 548_864
    drafted = StrategyOptions(speculative_tokens=2)
    r = run_strategy("sglang", qwen3_next_tp2(), budget_bytes=budget,
                     context_tokens=ANCHOR_CONTEXT, options=drafted)
    x = r.extras
    assert (budget, slot) == (47_878_147_932, 19_759_104)
    assert (x["sglang_draft_tokens"], x["slots_per_request"], x["state_slots"],
            x["request_state_slots"], x["running_request_cap"]) == (3, 3, 572, 571, 190)
    assert x["draft_buffer_bytes"] == slot * 49 * 3 == 2_904_588_288
    assert x["kv_tokens"] == (budget - 572 * slot - 2_904_588_288) // 12_288 == 2_740_181
    assert x["max_running_requests"] == 48
    assert r.concurrency == Fraction(2_740_181, 262_144)  # the KV pool binds at 262,144
    assert sum(nbytes for _, nbytes in r.breakdown) == budget
    assert r.bytes_of("unused") == budget - 2_740_181 * 12_288 - 572 * slot - 2_904_588_288
    assert ("max_mamba_cache_size K = int((state budget - slot x (1 + D)) // (slot x (1 + D / "
            "S))) = int((22,679,122,704.63158 - 19,759,104 x 4) // (19,759,104 x (1 + 3 / 3)))"
            " = 571; state slots = K + 1 = 572 (one the padding slot), 36 layers x 548,864 B = "
            "19,759,104 B each") in r.formulas
    assert ("draft-token buffers = slot x (min(max_running_requests, K // S) + 1) x D = "
            "19,759,104 x (min(48, 571 // 3) + 1) x 3 = 19,759,104 x 49 x 3 = 2,904,588,288 "
            "(SGLang reserves") in "\n".join(r.formulas)
    assert DRAFTER_KV_LINE in r.formulas
    assert "speculative_not_modelled" not in x
    # raw bytes name no conv rows: MambaPool's own allocation of the buffers is not told
    assert "draft_buffers_allocated" not in x and NO_DRAFT_BUFFERS_LINE in x["log_left_out"]
    plain = run_strategy("sglang", qwen3_next_tp2(), budget_bytes=budget,
                         context_tokens=ANCHOR_CONTEXT)
    assert plain.extras["state_slots"] == 22_679_122_704 // slot == 1_147
    assert plain.extras["kv_tokens"] == (budget - 1_147 * slot) // 12_288 == 2_051_957


def test_sglang_speculative_decoding_on_qwen3_next_as_its_log_prints_it():
    # Qwen3-Next-80B-A3B at TP 1, 40 GiB, N = 3 (D = 4, SGLang's own choice for it), S = 5
    # (extra_buffer with overlap). A layer's state: conv 49,152 B (3 rows of 8,192 bf16) + ssm
    # 524,288 x 4 B (float32) = 2,146,304 B; a slot of 36 layers 77,266,944 B. K = int((40 GiB
    # x 0.9 / 1.9 - 77,266,944 x 5) // (77,266,944 x 1.8)) = int(19,958,247,208.4 //
    # 139,080,499.2) = 143; buffers for min(48, 143 // 5 = 28) + 1 = 29 requests. The state
    # cap 28 binds max_running_requests, which MambaPool's buffers then take + 1 = 29 rows of:
    # ssm 36 x 29 x 4 x 2,097,152 = 8,757,706,752 B and conv windows of 4 + 3 - 1 = 6 rows,
    # 36 x 29 x 16,384 x 6 = 102,629,376 B (bench/sglang_check.py sets these beside SGLang's
    # own MambaPool, built on the meta device)
    r = run_strategy("sglang", load_preset("Qwen3-Next-80B-A3B").profile(),
                     budget_bytes=40 << 30, context_tokens=32_768,
                     options=StrategyOptions(speculative_tokens=3))
    x = r.extras
    assert (x["state_slot_bytes"], x["request_state_slots"], x["running_request_cap"]) == (
        77_266_944, 143, 28)
    assert x["draft_buffer_bytes"] == 77_266_944 * 29 * 4
    assert x["kv_tokens"] == ((40 << 30) - 144 * 77_266_944 - 77_266_944 * 29 * 4) // 24_576
    assert x["max_running_requests"] == 28
    assert x["draft_buffers_allocated"] == 8_757_706_752 + 102_629_376
    assert x["log_lines"][1] == (
        "Mamba Cache is allocated. max_mamba_cache_size: 143, conv_state size: 0.24GB, "
        "ssm_state size: 10.12GB intermediate_ssm_state_cache size: 8.16GB "
        "intermediate_conv_window_cache size: 0.10GB ")
    assert x["log_lines"][0].startswith("max_running_requests is capped to 28 by the mamba state")


def test_sglang_speculative_edge_and_next_slot_are_least_budgets():
    # the least budget SGLang starts Qwen3-Next TP 1 at with N = 3 (found by bisecting SGLang's
    # own code in bench/sglang_check.py): K = 5 slots, one request of S = 5
    qwen, drafted = load_preset("Qwen3-Next-80B-A3B").profile(), StrategyOptions(
        speculative_tokens=3)
    edge = 2_283_667_457
    assert run_strategy("sglang", qwen, budget_bytes=edge, options=drafted).applies
    below = run_strategy("sglang", qwen, budget_bytes=edge - 1, options=drafted)
    assert not below.applies and below.reason.endswith(
        f"a budget of {edge:,} B or more holds them")
    r = run_strategy("sglang", qwen, budget_bytes=edge, options=drafted)
    step = budget_of_next_slot(r, qwen)
    more = run_strategy("sglang", qwen, budget_bytes=step, options=drafted)
    assert more.extras["request_state_slots"] == r.extras["request_state_slots"] + 1
    less = run_strategy("sglang", qwen, budget_bytes=step - 1, options=drafted)
    assert less.extras["request_state_slots"] == r.extras["request_state_slots"]


def test_sglang_says_where_it_does_not_model_drafting():
    # a state model beside a hybrid SWA pool: figures without speculative decoding, and the
    # note that says so (state layers alone are modelled: their test below)
    mixed = CacheProfile(layer_types=(SLIDING, FULL, LINEAR), kv_bytes_per_slot=2048,
                         sliding_window=128, state_const_bytes={"conv": 4096, "ssm": 8192})
    for profile in (mixed,):
        plain = run_strategy("sglang", profile, budget_bytes=10**9, context_tokens=4096)
        told = run_strategy("sglang", profile, budget_bytes=10**9, context_tokens=4096,
                            options=StrategyOptions(speculative_tokens=2))
        assert told.formulas[0] == SPECULATIVE_NOT_MODELLED
        assert told.extras["speculative_not_modelled"] is True
        assert told.breakdown == plain.breakdown and told.capacity_tokens == plain.capacity_tokens
        assert "speculative_not_modelled" not in plain.extras
    # a model without state keeps its pools (no draft-token state to keep)
    llama = run_strategy("sglang", llama_31_8b(), budget_bytes=10**10, context_tokens=4096,
                         options=StrategyOptions(speculative_tokens=2))
    assert "speculative_not_modelled" not in llama.extras
    assert "sglang_draft_tokens" not in llama.extras


def test_sglang_refuses_more_drafted_tokens_than_its_track_interval():
    # extra_buffer asserts --mamba-track-interval (256) >= D: 255 drafted (D 256) start, 256 not
    qwen = load_preset("Qwen3-Next-80B-A3B").profile()
    assert run_strategy("sglang", qwen, budget_bytes=1 << 40,
                        options=StrategyOptions(speculative_tokens=255)).applies
    r = run_strategy("sglang", qwen, budget_bytes=1 << 40,
                     options=StrategyOptions(speculative_tokens=256))
    assert r.reason == (
        "SGLang refuses to start: "
        "its extra_buffer radix cache needs the track interval, 256 tokens "
        "(--mamba-track-interval, SGLang's default), at least the 257 tokens verified a step "
        "(256 drafted + 1): draft at most 255 tokens a step, or set --mamba-track-interval 257")
    # told 512, it takes up to 511 drafted; at page 64 the interval it offers is whole pages
    assert run_strategy("sglang", qwen, budget_bytes=1 << 40, options=StrategyOptions(
        speculative_tokens=256, sglang_mamba_track_interval=512)).applies
    r = run_strategy("sglang", qwen, budget_bytes=1 << 40, options=StrategyOptions(
        speculative_tokens=600, sglang_mamba_track_interval=512, sglang_page_size=64))
    assert r.reason == (
        "SGLang refuses to start: "
        "its extra_buffer radix cache needs the track interval, 512 tokens "
        "(--mamba-track-interval 512), at least the 601 tokens verified a step (600 drafted "
        "+ 1): draft at most 511 tokens a step, or set --mamba-track-interval 640")


def test_sglang_takes_a_page_size_its_told_track_interval_takes():
    # SGLang asserts mamba_track_interval % page_size == 0 (mamba_hook.py 134-135): at 512
    # pages of 512 start (refused at the default 256), 384 does not divide 512
    qwen = load_preset("Qwen3-Next-80B-A3B").profile()
    at_512 = StrategyOptions(sglang_page_size=512, sglang_mamba_track_interval=512)
    default = run_strategy("sglang", qwen, budget_bytes=40 << 30,
                           options=replace(at_512, sglang_mamba_track_interval=256))
    told = run_strategy("sglang", qwen, budget_bytes=40 << 30, options=at_512)
    assert not default.applies and told.applies
    # the interval sizes nothing: pages of 512 at 512 hold what pages of 256 at 256 hold,
    # in whole pages of 512 (the pool's tokens rounded down to them)
    at_256 = run_strategy("sglang", qwen, budget_bytes=40 << 30,
                          options=StrategyOptions(sglang_page_size=256))
    assert told.logged_tokens == at_256.logged_tokens // 512 * 512
    assert told.extras["request_state_slots"] == at_256.extras["request_state_slots"]
    # 384 takes whole chunks (8,448 = 22 x 384) but does not divide 512: refused, naming the
    # interval as told and both fixes (768, the least multiple of 384 past 512)
    r = run_strategy("sglang", qwen, budget_bytes=40 << 30, options=replace(
        at_512, sglang_page_size=384, sglang_chunked_prefill_size=8448))
    assert r.reason == (
        "SGLang refuses to start: "
        "its extra_buffer radix cache snapshots Qwen3NextForCausalLM's state every 512 "
        "tokens (--mamba-track-interval 512), which the page size must divide: 384 does not; "
        "set a page size that divides 512 (1, 2, 4, ..., 512), or --mamba-track-interval 768")
    # 96 divides 384 but neither divides the state's chunk (FLA's 64, Qwen3-Next's config
    # giving none) nor is a multiple of it (overrides.mamba_cache_chunk_size 1919-1921)
    r = run_strategy("sglang", qwen, budget_bytes=40 << 30, options=StrategyOptions(
        sglang_page_size=96, sglang_mamba_track_interval=384, sglang_chunked_prefill_size=8064))
    assert r.reason == (
        "SGLang refuses to start: "
        "its extra_buffer radix cache caches Qwen3NextForCausalLM's state at its chunk "
        "of 64 tokens, which the page size must divide or be a multiple of (\"either "
        "chunk_size or page_size must be divisible by the other\"): 96 is neither; set a page "
        "size that divides both 384 and 64 or is a multiple of 64 dividing 384 (1, 2, 4, 8, "
        "16, 32, 64, 128, 192, 384)")  # all ten: "1, 2, 4, ..., 384" read as powers of two
    # 6,720 = 64 x 105: the powers of two to 64 and 64 x 3, 5, 7, 15, 21, 35, 105, fourteen
    # pages, cut around an "e.g." (its last two say the steps are not doublings)
    r = run_strategy("sglang", qwen, budget_bytes=40 << 30, options=StrategyOptions(
        sglang_page_size=96, sglang_mamba_track_interval=6720, sglang_chunked_prefill_size=8064))
    assert r.reason.endswith("or is a multiple of 64 dividing 6,720 (e.g. 1, 2, 4, ..., "
                             "2,240, 6,720)")
    # on a B200 told no page SGLang's Qwen3-Next override picks TensorRT-LLM's 64 drafting
    # whatever the interval (model_overrides/qwen3_5.py 40-48), which an interval of 32 then
    # refuses
    b200 = sglang_default_page("B200 192GB", qwen, StrategyOptions(
        sglang_mamba_track_interval=32, speculative_tokens=3))
    assert b200.page == 64
    r = run_strategy("sglang", qwen, budget_bytes=40 << 30, options=StrategyOptions(
        sglang_page_size=64, sglang_mamba_track_interval=32))
    assert r.reason.endswith("set a page size that divides 32 (1, 2, 4, ..., 32), or "
                             "--mamba-track-interval 64")
    # without the extra buffer (radix cache off) the interval is not checked
    assert run_strategy("sglang", qwen, budget_bytes=40 << 30, options=replace(
        at_512, sglang_page_size=384, sglang_chunked_prefill_size=8448,
        sglang_disable_radix_cache=True)).applies


def test_sglang_refuses_a_mamba2_track_interval_under_its_chunk():
    # Mamba2AttnBackend asserts mamba_track_interval >= mamba_chunk_size with the extra
    # buffer (hybrid_linear_attn_backend.py 1081-1083): Nemotron-H-8B's chunk is 128
    nemotron = load_preset("Nemotron-H-8B").profile()
    assert nemotron.mamba_chunk_size == 128
    r = run_strategy("sglang", nemotron, budget_bytes=40 << 30,
                     options=StrategyOptions(sglang_mamba_track_interval=64))
    assert r.reason == (
        "SGLang refuses to start: "
        "its Mamba2 backend needs the track interval, 64 tokens (--mamba-track-interval "
        "64), at least NemotronHForCausalLM's mamba chunk of 128 tokens with its extra_buffer "
        "radix cache (\"mamba_track_interval (64) must be >= mamba_chunk_size (128)\"): set "
        "--mamba-track-interval 128")
    assert run_strategy("sglang", nemotron, budget_bytes=40 << 30,
                        options=StrategyOptions(sglang_mamba_track_interval=128)).applies
    # no_buffer (overlap off at page 1) runs no such check; a GDN model (Qwen3-Next) neither
    assert run_strategy("sglang", nemotron, budget_bytes=40 << 30, options=StrategyOptions(
        sglang_mamba_track_interval=64, sglang_overlap_schedule=False)).applies
    assert run_strategy("sglang", load_preset("Qwen3-Next-80B-A3B").profile(),
                        budget_bytes=40 << 30,
                        options=StrategyOptions(sglang_mamba_track_interval=64)).applies


# what SGLang's checks say of the 256 they take for a Mamba2 model that gives no chunk: "its"
# before it in a refusal, which opens naming SGLang, "SGLang's" in a formula
STAND_IN = ("config class default for a Mamba2 model, standing in for a chunk the model does "
            "not give")


def test_sglang_says_its_mamba2_chunk_of_256_stands_in_for_one_the_model_does_not_give():
    # Nemotron-H-8B typed by hand without its chunk (its config's 128): SGLang's Mamba2 config
    # classes default chunk_size to 256 (configs/nemotron_h.py 41), which its checks then take
    nemotron = load_preset("Nemotron-H-8B").profile()
    hand = replace(nemotron, mamba_chunk_size=None)

    def sglang(profile: CacheProfile, **options) -> StrategyResult:
        return run_strategy("sglang", profile, budget_bytes=40 << 30,
                            options=StrategyOptions(**options))

    # interval 128 clears the model's 128 but not the 256 standing in: refused, and it says so
    r = sglang(hand, sglang_mamba_track_interval=128)
    assert r.reason == (
        "SGLang refuses to start: "
        "its Mamba2 backend needs the track interval, 128 tokens (--mamba-track-interval "
        f"128), at least a mamba chunk of 256 tokens (its {STAND_IN}) with its extra_buffer radix "
        "cache (\"mamba_track_interval (128) must be >= mamba_chunk_size (256)\"): set "
        "--mamba-track-interval 256")
    assert sglang(nemotron, sglang_mamba_track_interval=128).applies
    # page 96 at interval 384: neither divides 256 nor is a multiple of it
    r = sglang(hand, sglang_page_size=96, sglang_mamba_track_interval=384,
               sglang_chunked_prefill_size=8064)
    assert r.reason.startswith(
        "SGLang refuses to start: "
        "its extra_buffer radix cache caches NemotronHForCausalLM's state at a chunk of "
        f"256 tokens (its {STAND_IN}), which the page size must divide")
    # where the checks pass (SGLang's 256 >= 256, page 1 divides it), a formula says which
    # chunk they took; none where the model gives its own, or no extra buffer checks it
    line = (f"mamba chunk = 256 tokens (SGLang's {STAND_IN}), which SGLang's extra_buffer "
            "radix cache checks the track interval, 256 tokens (--mamba-track-interval, "
            "SGLang's default), and the page size, 1, against; set the model's mamba chunk "
            "where its config gives another")
    assert line in sglang(hand).formulas
    assert not [f for f in sglang(nemotron).formulas if "mamba chunk" in f]
    assert not [f for f in sglang(hand, sglang_overlap_schedule=False).formulas
                if "mamba chunk" in f]  # no_buffer at page 1
    # Qwen3-Next's 64 is FLA's, SGLang's own for a GDN config (which gives none): no stand-in
    qwen = load_preset("Qwen3-Next-80B-A3B").profile()
    assert qwen.mamba_chunk_size is None
    assert STAND_IN not in "\n".join(sglang(qwen).formulas)


def test_sglang_track_interval_refusals_write_the_flag_as_typed():
    # the interval a refusal offers is a flag value to copy: 1024, as SGLang's and FlatKV's
    # --mamba-track-interval read it (int("1,024") is refused by both), not 1,024
    qwen = load_preset("Qwen3-Next-80B-A3B").profile()
    r = run_strategy("sglang", qwen, budget_bytes=40 << 30,
                     options=StrategyOptions(sglang_page_size=1024))
    assert r.reason.endswith("set a page size that divides 256 (1, 2, 4, ..., 256), or "
                             "--mamba-track-interval 1024")
    # one token is one token
    nemotron = load_preset("Nemotron-H-8B").profile()
    r = run_strategy("sglang", nemotron, budget_bytes=40 << 30,
                     options=StrategyOptions(sglang_mamba_track_interval=1))
    assert r.reason.startswith("SGLang refuses to start: its Mamba2 backend needs the "
                               "track interval, 1 token "
                               "(--mamba-track-interval 1), at least")
    r = run_strategy("sglang", load_preset("Qwen3-Next-80B-A3B").profile(),
                     budget_bytes=40 << 30, options=StrategyOptions(
                         sglang_mamba_track_interval=2, speculative_tokens=3))
    assert r.reason.endswith("(3 drafted + 1): draft at most 1 token a step, or set "
                             "--mamba-track-interval 4")
    # an interval of 1 takes no drafted token at all: not "draft at most 0 tokens"
    r = run_strategy("sglang", load_preset("Qwen3-Next-80B-A3B").profile(),
                     budget_bytes=40 << 30, options=StrategyOptions(
                         sglang_mamba_track_interval=1, speculative_tokens=1))
    assert r.reason.endswith("(1 drafted + 1): turn drafting off, or set "
                             "--mamba-track-interval 2")
    # the interval offered past a page it does not take clears the Mamba2 chunk too: at page
    # 16 an interval of 40 is refused, and 48 (the next whole pages) is under Nemotron-H-8B's
    # chunk of 128, which SGLang's Mamba2 backend then refuses: 128 is offered
    r = run_strategy("sglang", nemotron, budget_bytes=40 << 30, options=StrategyOptions(
        sglang_page_size=16, sglang_mamba_track_interval=40))
    assert r.reason.endswith("set a page size that divides 40 (1, 2, 4, 8), or "
                             "--mamba-track-interval 128")


def test_sglang_track_interval_changes_nothing_where_both_it_and_256_pass_the_checks():
    # the interval sizes no pool or slot (state.py's comment, SGLang 0.5.23): where SGLang runs
    # its extra buffer and neither the interval set nor its default 256 is refused, the
    # figures are the default's; where either is refused, it decides whether SGLang starts
    qwen = load_preset("Qwen3-Next-80B-A3B").profile()
    nemotron = load_preset("Nemotron-H-8B").profile()  # Mamba2 backend, chunk 128
    assert track_interval_changes_nothing(qwen, StrategyOptions(sglang_mamba_track_interval=512))
    # at the default itself nothing is set; without the extra buffer (no_buffer at page 1
    # with overlap off, or the radix cache off) the option is idle for another reason
    for options in (StrategyOptions(), StrategyOptions(sglang_mamba_track_interval=512,
                                                       sglang_overlap_schedule=False),
                    StrategyOptions(sglang_mamba_track_interval=512,
                                    sglang_disable_radix_cache=True),
                    # pages of 512 start at 512, not at 256 (512 does not divide 256)
                    StrategyOptions(sglang_mamba_track_interval=512, sglang_page_size=512),
                    # 256 drafted is D = 257 tokens a step: over 256, within 512
                    StrategyOptions(sglang_mamba_track_interval=512, speculative_tokens=256),
                    # 64 is under Nemotron-H-8B's chunk of 128: refused
                    StrategyOptions(sglang_mamba_track_interval=64)):
        assert not track_interval_changes_nothing(nemotron, options)
    assert track_interval_changes_nothing(nemotron, StrategyOptions(
        sglang_mamba_track_interval=128))  # 128 >= its chunk, as 256 is


@pytest.mark.parametrize("name", ["Qwen3-Next-80B-A3B", "Nemotron-H-8B", "granite-4.0-h-small"])
def test_sglang_track_interval_said_to_change_nothing_leaves_every_figure(name):
    # wherever it is said to change nothing, the whole result (figures, formulas, log lines,
    # reason) is the default interval's, and somewhere it is said
    profile = load_preset(name).profile()
    said = 0
    for page in (1, 64, 512):
        for interval in (64, 128, 512, 1024):
            for drafted in (0, 3, 256):
                base = StrategyOptions(sglang_page_size=page, speculative_tokens=drafted,
                                       sglang_chunked_prefill_size=8192 // page * page)
                options = replace(base, sglang_mamba_track_interval=interval)
                if not track_interval_changes_nothing(profile, options):
                    continue
                said += 1
                assert (run_strategy("sglang", profile, budget_bytes=40 << 30,
                                     context_tokens=32_768, options=options).to_dict()
                        == run_strategy("sglang", profile, budget_bytes=40 << 30,
                                        context_tokens=32_768, options=base).to_dict())
    assert said


@pytest.mark.parametrize("value, said", [
    (0, "0 must be positive: give 1 or more;"), (-256, "-256 must be positive: give 1 or more;"),
    (2**41, "2,199,023,255,552 is too large to be real: give 1,099,511,627,776 or less;"),
    (256.0, "256.0 (float) must be a whole number: give 1 or more;"),
    (True, "True (bool) must be a whole number: give 1 or more;")])
def test_sglang_mamba_track_interval_out_of_bounds(value, said):
    with pytest.raises(ValueError) as err:
        StrategyOptions(sglang_mamba_track_interval=value)
    assert str(err.value).startswith(f"sglang_mamba_track_interval {said}")
    assert "SGLang's --mamba-track-interval" in str(err.value)


def test_sglang_refuses_a_prefill_chunk_of_part_pages():
    # check_server_args asserts chunked_prefill_size % page_size == 0: 1,000 tokens are 125
    # pages of 8 but 15.6 of 64; the assumed 8,192 is 2,730.7 pages of 3
    gpt = gpt_oss_20b()
    eight = StrategyOptions(sglang_page_size=8, sglang_chunked_prefill_size=1000)
    assert run_strategy("sglang", gpt, budget_bytes=40 * 2**30, options=eight).applies
    r = run_strategy("sglang", gpt, budget_bytes=40 * 2**30,
                     options=replace(eight, sglang_page_size=64))
    assert r.reason == (
        "SGLang refuses to start: "
        "it takes a prefill chunk of whole pages only (\"chunked_prefill_size must be "
        "divisible by page_size\"): 1,000 tokens is not a multiple of the page size 64; set "
        "--chunked-prefill-size to a multiple of 64 (such as 1,024) or -1 (chunked prefill off) or "
        "a page size that divides 1,000")
    r = run_strategy("sglang", llama_31_8b(), budget_bytes=40 * 2**30,
                     options=StrategyOptions(sglang_page_size=3))
    assert "8,192 tokens is not a multiple of the page size 3" in r.reason
    assert "(such as 8,193)" in r.reason  # 2,731 pages of 3
    # DeepSeek-V3.2's sparse attention runs page 64 whatever the option: a chunk of 1,000 is
    # refused at the option's page 1 too
    dsv32 = load_preset("DeepSeek-V3.2").profile()
    r = run_strategy("sglang", dsv32, budget_bytes=40 * 2**30,
                     options=StrategyOptions(sglang_chunked_prefill_size=1000))
    assert r.reason.endswith(
        "1,000 tokens is not a multiple of the page size 64; set --chunked-prefill-size to a "
        "multiple of 64 (such as 1,024) or -1 (chunked prefill off): DeepSeek's sparse "
        "attention pages by 64 tokens whatever --page-size says")


def test_sglangs_float_cell_prints_as_the_float_reads():
    from flatkv.strategies.sglang import bytes_text
    # 8,192 x 6 + 0.8 x 16,384 x 34: 494,796.80000000005 in float, shown as 494,796.8
    cell = 8_192 * 6 + 0.8 * (16_384 * 34)
    assert bytes_text(cell) == "494,796.8" and bytes_text(49_152.0) == "49,152"
    assert bytes_text(44_236.8) == "44,236.8"


@pytest.mark.parametrize(("preset", "slots", "pool", "cap", "running"), [
    # SGLang 0.5.23's own sizing, run by a helper at 40 GiB and 32,768 tokens: the classes
    # its extra_buffer radix cache serves hold 3 + 2 tracking slots a request
    ("Qwen3-Next-80B-A3B", 5, 262, 52, 52),
    ("Falcon-H1-7B", 5, 144, 28, 28),
    ("Nemotron-H-8B", 5, 198, 39, 39),
    ("granite-4.0-h-small", 5, 132, 26, 26),
    ("Kimi-Linear-48B-A3B", 5, 467, 93, 93),
    # LFM2 runs no_buffer: 3, and its 248,345 request slots cap nothing under 4,096
    ("LFM2-1.2B", 3, 248_345, 82_781, 4_096),
])
def test_sglang_holds_its_own_state_slots_a_request_by_model_class(preset, slots, pool, cap,
                                                                   running):
    r = run_strategy("sglang", load_preset(preset).profile(), budget_bytes=40 * 2**30,
                     context_tokens=32_768)
    assert r.extras["slots_per_request"] == slots
    assert r.extras["request_state_slots"] == pool
    assert r.extras["running_request_cap"] == pool // slots == cap
    assert r.extras["max_running_requests"] == running
    capped = [line for line in r.extras["log_lines"] if line.startswith("max_running")]
    assert capped == ([] if running == 4_096 else [
        f"max_running_requests is capped to {cap} by the mamba state cache "
        f"(max_mamba_cache_size={pool}, {slots} state slots per request). To raise it: "
        "increase --mamba-full-memory-ratio or --max-mamba-cache-size, or halve the state "
        "size with --mamba-ssm-dtype bfloat16."])
    # told, it holds what it is told
    told = run_strategy("sglang", load_preset(preset).profile(), budget_bytes=40 * 2**30,
                        context_tokens=32_768, options=StrategyOptions(sglang_slots_per_request=3))
    assert told.extras["running_request_cap"] == pool // 3


@pytest.mark.parametrize(("preset", "pool", "tokens_at_64"), [
    # SGLang 0.5.23's own sizing, run by a helper at 40 GiB and 32,768 tokens with
    # --disable-overlap-schedule: same pools, 3 + 1 tracking slot at page 64
    ("Qwen3-Next-80B-A3B", 262, 920_704),
    ("Nemotron-H-8B", 198, 1_380_864),
    ("Falcon-H1-7B", 144, 504_704),
    ("Kimi-Linear-48B-A3B", 467, 2_806_272),
])
def test_sglang_without_overlap_scheduling_holds_fewer_tracking_slots(preset, pool,
                                                                      tokens_at_64):
    # the "auto" strategy keeps the extra buffer at a page size over 1, with one tracking slot
    # (get_mamba_tracking_slots(overlap=False)); at page size 1 it runs no_buffer: 3 slots
    profile = load_preset(preset).profile()
    for page, slots in ((64, 4), (1, 3)):
        off = StrategyOptions(sglang_overlap_schedule=False, sglang_page_size=page)
        r = run_strategy("sglang", profile, budget_bytes=40 * 2**30, context_tokens=32_768,
                         options=off)
        assert r.extras["slots_per_request"] == slots == slots_per_request(profile, off)[0]
        assert r.extras["request_state_slots"] == pool
        assert r.extras["max_running_requests"] == pool // slots
        if page == 64:
            assert r.capacity_tokens == tokens_at_64
    assert slots_per_request(profile, StrategyOptions(sglang_overlap_schedule=False,
                                                      sglang_page_size=64))[1].endswith(
        "its extra_buffer radix cache (page size 64), 3 + 1 tracking slot without overlap "
        "scheduling")


LAZY = StrategyOptions(sglang_mamba_radix_cache_strategy="extra_buffer_lazy")


def test_sglang_extra_buffer_lazy_holds_one_tracking_slot():
    # --mamba-radix-cache-strategy extra_buffer_lazy: get_mamba_tracking_slots(lazy=True) is 1
    # (allocation_sizing.py 17-18), so _calculate_mamba_ratio is 3 + 1 = 4, not 3 + 2 = 5.
    # Qwen3-Next-80B-A3B at TP 1, 40 GiB, 32,768 tokens: the state pool is r / (1 + r) of the
    # budget whatever S is, 263 slots (262 for requests) and 920,754 tokens either way;
    # max_running_requests = min(4,096, 920,754 // 2, 262 // S): 262 // 5 = 52 auto, 262 // 4 =
    # 65 lazy. Nemotron-H-8B: 198 request slots, 198 // 5 = 39 -> 198 // 4 = 49.
    for preset, request_slots, tokens, auto_running, lazy_running in (
            ("Qwen3-Next-80B-A3B", 262, 920_754, 52, 65),
            ("Nemotron-H-8B", 198, 1_380_874, 39, 49)):
        profile = load_preset(preset).profile()
        for options, slots, running in ((StrategyOptions(), 5, auto_running),
                                        (LAZY, 4, lazy_running)):
            x = run_strategy("sglang", profile, budget_bytes=40 << 30, context_tokens=32_768,
                             options=options).extras
            assert (x["slots_per_request"], x["request_state_slots"], x["kv_tokens"],
                    x["max_running_requests"]) == (slots, request_slots, tokens, running)
            assert running == request_slots // slots
    qwen = load_preset("Qwen3-Next-80B-A3B").profile()
    assert slots_per_request(qwen, LAZY) == (4, (
        "4 for Qwen3NextForCausalLM: its extra_buffer_lazy radix cache, 3 + 1 tracking slot "
        "(the second allocated only when a request needs it)"))
    # drafting N = 3 (D = 4) moves the pools too: K = int((40 GiB x 0.9 / 1.9 - 77,266,944 x 5)
    # // (77,266,944 x (1 + 4 / 4))) = int(19,958,247,208.4 // 154,533,888) = 129 (143 at S =
    # 5, over 77,266,944 x 1.8); buffers for min(48, 129 // 4 = 32) + 1 = 33 requests,
    # 77,266,944 x 33 x 4 = 10,199,236,608 B; KV (42,949,672,960 - 130 x 77,266,944 -
    # 10,199,236,608) // 24,576 = 22,705,733,632 // 24,576 = 923,898 tokens (930,186 at S = 5)
    x = run_strategy("sglang", qwen, budget_bytes=40 << 30, context_tokens=32_768,
                     options=replace(LAZY, speculative_tokens=3)).extras
    assert (x["request_state_slots"], x["running_request_cap"], x["max_running_requests"]) == (
        129, 32, 32)
    assert x["draft_buffer_bytes"] == 77_266_944 * 33 * 4 == 10_199_236_608
    assert x["kv_tokens"] == ((40 << 30) - 130 * 77_266_944 - 10_199_236_608) // 24_576 == 923_898
    # with the radix cache off SGLang reads no strategy (mamba_extra_buffer_lazy_of): S = 1;
    # a told S wins over it, as over SGLang's own
    assert slots_per_request(qwen, replace(LAZY, sglang_disable_radix_cache=True))[0] == 1
    assert slots_per_request(qwen, replace(LAZY, sglang_slots_per_request=7))[0] == 7


def test_the_slots_per_request_help_names_each_s_sglang_picks_a_told_strategy_included():
    # the help named auto's S alone (5, 4, 3, 1), not what a told strategy holds: each S it
    # names, derived here from slots_per_request on Qwen3-Next
    from flatkv.engine_options import engine_help

    said = " ".join(engine_help("sglang_slots_per_request").split())
    qwen = load_preset("Qwen3-Next-80B-A3B").profile()
    for options, slots, words in (
            (StrategyOptions(), 5, "SGLang 0.5.23's own: 5"),
            (StrategyOptions(sglang_overlap_schedule=False, sglang_page_size=64), 4,
             "those five-slot models hold 4 (3 + 1 tracking slot) at a page size over 1"),
            (StrategyOptions(sglang_overlap_schedule=False), 3, "3 (no_buffer) at page size 1"),
            (LAZY, 4, "extra_buffer_lazy (overlap on) holds 4"),
            (StrategyOptions(sglang_overlap_schedule=False,
                             sglang_mamba_radix_cache_strategy="extra_buffer"), 4,
             "extra_buffer 4 at page size 1 without overlap"),
            (StrategyOptions(sglang_disable_radix_cache=True), 1, "disable-radix-cache, 1")):
        assert slots_per_request(qwen, options)[0] == slots
        assert words in said, words


def test_sglang_refuses_extra_buffer_lazy_where_sglang_does():
    def reason(profile: CacheProfile, **options) -> str:
        return run_strategy("sglang", profile, budget_bytes=40 << 30, context_tokens=32_768,
                            options=replace(LAZY, **options)).reason

    qwen = load_preset("Qwen3-Next-80B-A3B").profile()
    # _calculate_mamba_ratio asserts overlap scheduling (kv_cache_configurator.py 3073-3076),
    # at page 1 and 64 alike (told, the strategy is not "auto": no fall back to no_buffer)
    for page in (1, 64):
        assert reason(qwen, sglang_overlap_schedule=False, sglang_page_size=page) == (
            "SGLang refuses to start: "
            "--mamba-radix-cache-strategy extra_buffer_lazy needs overlap scheduling "
            "(\"Lazy extra buffer requires overlap schedule (--disable-overlap-schedule is "
            "incompatible)\"): turn overlap scheduling on, or leave the strategy auto")
    # LFM2 is on SGLang's mamba radix cache list without the extra buffer
    # (validate_mamba_extra_buffer's first assert); Llama keeps no mamba radix cache
    # (handle_mamba_radix_cache's ValueError), nor does a model of state layers alone
    assert reason(load_preset("LFM2-1.2B").profile()) == (
        "SGLang refuses to start: "
        "it runs Lfm2ForCausalLM's state with its no_buffer radix cache only (\"extra_buffer "
        "is not supported for Lfm2ForCausalLM; use no_buffer.\"), not "
        "--mamba-radix-cache-strategy extra_buffer_lazy: leave the strategy auto")
    assert reason(load_preset("Llama-3.1-8B").profile()) == (
        "SGLang refuses to start: "
        "it keeps no mamba radix cache for LlamaForCausalLM, so it takes no "
        "--mamba-radix-cache-strategy extra_buffer_lazy (\"--mamba-radix-cache-strategy "
        "extra_buffer_lazy needs mamba state, got LlamaForCausalLM.\"): leave the strategy auto")
    codestral = replace(pure_mamba(), architectures=("Mamba2ForCausalLM",))
    assert "needs mamba state, got Mamba2ForCausalLM" in reason(codestral)
    # a model typed without an architecture: SGLang's list cannot be read for it
    assert told_buffer_refusal(qwen3_next_tp2(), LAZY) == (
        "it takes --mamba-radix-cache-strategy extra_buffer_lazy only for the architectures "
        "of its extra-buffer list (Qwen3-Next, Qwen3.5, Kimi Linear, Falcon-H1, Granite 4.0-H, "
        "Nemotron-H), and this model names none: leave the strategy auto, or load the model's "
        "config")
    assert told_buffer_refusal(llama_31_8b(), LAZY) == (
        "it keeps no mamba radix cache for this model, so it takes no "
        "--mamba-radix-cache-strategy extra_buffer_lazy (it needs mamba state): leave the "
        "strategy auto")  # raw bytes: no architecture to quote SGLang's message with
    # the radix cache off: the strategy is unread, nothing refused, whatever the overlap
    off = replace(LAZY, sglang_disable_radix_cache=True, sglang_overlap_schedule=False)
    assert told_buffer_refusal(load_preset("LFM2-1.2B").profile(), off) is None
    assert lazy_overlap_refusal(off) is None
    assert run_strategy("sglang", qwen, budget_bytes=40 << 30, options=off).applies
    # a value SGLang has not: its four named
    with pytest.raises(ValueError, match="sglang_mamba_radix_cache_strategy is 'lazy': give one "
                       "of SGLang's --mamba-radix-cache-strategy values, auto, no_buffer, "
                       "extra_buffer, extra_buffer_lazy "):
        StrategyOptions(sglang_mamba_radix_cache_strategy="lazy")


def test_sglang_told_extra_buffer_and_no_buffer():
    # SGLang keeps a told strategy whatever the overlap and page (overrides.py 477 resolves
    # "auto" alone). Qwen3-Next-80B-A3B at TP 1, 40 GiB, 32,768 tokens: the state pool is
    # 42,949,672,960 x 0.9 / 1.9 = 20,344,581,928 B whatever S, int(20,344,581,928 /
    # 77,266,944) = 263 slots (262 for requests), KV (42,949,672,960 - 263 x 77,266,944) //
    # 24,576 = 920,754 tokens; Nemotron-H-8B 20,344,581,928 // 102,137,856 = 199 (198), and
    # 1,380,874 tokens. Without overlap scheduling at page 1, auto runs no_buffer, 3 slots a
    # request (262 // 3 = 87, 198 // 3 = 66 running); extra_buffer told runs the extra buffer
    # there, 3 + get_mamba_tracking_slots(overlap=False) = 3 + 1 = 4 (262 // 4 = 65,
    # 198 // 4 = 49); no_buffer told is auto's 3; with overlap, extra_buffer is auto's 3 + 2
    # (262 // 5 = 52, 198 // 5 = 39)
    assert 42_949_672_960 * 9 // 19 == 20_344_581_928
    assert (20_344_581_928 // 77_266_944, 20_344_581_928 // 102_137_856) == (263, 199)
    assert (42_949_672_960 - 263 * 77_266_944) // 24_576 == 920_754
    off = StrategyOptions(sglang_overlap_schedule=False)
    for preset, request_slots, tokens in (("Qwen3-Next-80B-A3B", 262, 920_754),
                                          ("Nemotron-H-8B", 198, 1_380_874)):
        profile = load_preset(preset).profile()
        for strategy, overlap, slots in (("auto", False, 3), ("extra_buffer", False, 4),
                                         ("no_buffer", False, 3), ("extra_buffer", True, 5)):
            x = run_strategy("sglang", profile, budget_bytes=40 << 30, context_tokens=32_768,
                             options=replace(off, sglang_overlap_schedule=overlap,
                                             sglang_mamba_radix_cache_strategy=strategy)).extras
            running = {3: request_slots // 3, 4: request_slots // 4, 5: request_slots // 5}
            assert (x["slots_per_request"], x["request_state_slots"], x["kv_tokens"],
                    x["max_running_requests"]) == (slots, request_slots, tokens, running[slots])
    assert (262 // 3, 262 // 4, 262 // 5, 198 // 3, 198 // 4, 198 // 5) == (87, 65, 52, 66, 49, 39)
    qwen = load_preset("Qwen3-Next-80B-A3B").profile()
    told = replace(off, sglang_mamba_radix_cache_strategy="extra_buffer")
    assert slots_per_request(qwen, told) == (4, (
        "4 for Qwen3NextForCausalLM: its extra_buffer radix cache (--mamba-radix-cache-strategy "
        "extra_buffer), 3 + 1 tracking slot without overlap scheduling"))
    # SGLang's server_args logs "auto" as the cache it picks, a told one as told
    assert [logged_strategy(qwen, o) for o in (StrategyOptions(), off, told)] == [
        "extra_buffer", "no_buffer", "extra_buffer"]
    assert logged_strategy(load_preset("Llama-3.1-8B").profile(), off) == "auto"
    # on a B200 told no page the extra buffer told, not overlap, picks the override's
    # TensorRT-LLM at 64 (model_overrides/qwen3_5.py 39-44; Nemotron-H's runs it whatever, which
    # no_buffer refuses: none said)
    for name in ("Qwen3-Next-80B-A3B", "Nemotron-H-8B"):
        hybrid = load_preset(name).profile()
        assert sglang_default_page("B200 192GB", hybrid, told).page == 64
        assert sglang_default_page("B200 192GB", hybrid, StrategyOptions(
            sglang_mamba_radix_cache_strategy="no_buffer")) is None
    # the extra buffer told runs its checks where auto's no_buffer runs none: Nemotron-H's
    # Mamba2 backend takes no track interval under its chunk (64 < 128)
    nemotron = load_preset("Nemotron-H-8B").profile()
    assert run_strategy("sglang", nemotron, budget_bytes=40 << 30,
                        options=replace(off, sglang_mamba_track_interval=64)).applies
    assert run_strategy("sglang", nemotron, budget_bytes=40 << 30, options=replace(
        told, sglang_mamba_track_interval=64)).reason.endswith(
        "(\"mamba_track_interval (64) must be >= mamba_chunk_size (128)\"): set "
        "--mamba-track-interval 128")


def test_sglang_refuses_told_extra_buffer_and_no_buffer_where_sglang_does():
    def reason(preset: str, strategy: str, **options) -> str:
        return run_strategy("sglang", load_preset(preset).profile(), budget_bytes=40 << 30,
                            context_tokens=32_768, options=StrategyOptions(
                                sglang_mamba_radix_cache_strategy=strategy, **options)).reason

    # no_buffer told: validate_mamba_no_buffer's page, then its overlap (only auto turns
    # overlap off itself); LFM2's too
    for preset, arch in (("Qwen3-Next-80B-A3B", "Qwen3NextForCausalLM"),
                         ("Nemotron-H-8B", "NemotronHForCausalLM")):
        assert reason(preset, "no_buffer") == (
            "SGLang refuses to start: "
            "its no_buffer radix cache (--mamba-radix-cache-strategy no_buffer) runs "
            "without overlap scheduling only (\"no_buffer do not support overlap schedule.\"), "
            "which it turns off itself only where auto picks no_buffer: turn overlap "
            "scheduling off "
            "(--disable-overlap-schedule), or leave the strategy auto")
        assert reason(preset, "no_buffer", sglang_overlap_schedule=False,
                      sglang_page_size=64) == (
            "SGLang refuses to start: "
            f"it runs {arch}'s state with its no_buffer radix cache, which takes page size 1 "
            "only (\"no_buffer only supports page_size=1\"), not 64: set the SGLang page size to "
            "1 or leave the strategy auto")
    assert "no_buffer do not support overlap schedule" in reason("LFM2-1.2B", "no_buffer")
    assert reason("LFM2-1.2B", "no_buffer", sglang_overlap_schedule=False) == ""
    # extra_buffer told: on LFM2 ("use no_buffer") and Llama ("needs mamba state"), as lazy
    assert reason("LFM2-1.2B", "extra_buffer") == (
        "SGLang refuses to start: "
        "it runs Lfm2ForCausalLM's state with its no_buffer radix cache only (\"extra_buffer "
        "is not supported for Lfm2ForCausalLM; use no_buffer.\"), not "
        "--mamba-radix-cache-strategy extra_buffer: leave the strategy auto")
    assert reason("Llama-3.1-8B", "extra_buffer") == (
        "SGLang refuses to start: "
        "it keeps no mamba radix cache for LlamaForCausalLM, so it takes no "
        "--mamba-radix-cache-strategy extra_buffer (\"--mamba-radix-cache-strategy "
        "extra_buffer needs mamba state, got LlamaForCausalLM.\"): leave the strategy auto")
    # no_buffer on a model without a mamba radix cache is unread (handle_mamba_radix_cache
    # returns), as is either with the radix cache off
    llama = load_preset("Llama-3.1-8B").profile()
    assert no_buffer_refusal(llama, StrategyOptions(
        sglang_mamba_radix_cache_strategy="no_buffer")) is None
    assert reason("Llama-3.1-8B", "no_buffer") == ""
    radix_off = StrategyOptions(sglang_disable_radix_cache=True)
    for strategy in ("extra_buffer", "no_buffer"):
        told = replace(radix_off, sglang_mamba_radix_cache_strategy=strategy)
        assert told_buffer_refusal(load_preset("LFM2-1.2B").profile(), told) is None
        assert no_buffer_refusal(load_preset("Qwen3-Next-80B-A3B").profile(), told) is None


def test_sglang_refuses_page_sizes_its_mamba_radix_cache_does_not_take():
    # LFM2 runs no_buffer, which SGLang 0.5.23 starts at page size 1 only
    lfm2 = load_preset("LFM2-1.2B").profile()
    assert run_strategy("sglang", lfm2, budget_bytes=40 * 2**30).applies
    r = run_strategy("sglang", lfm2, budget_bytes=40 * 2**30,
                     options=StrategyOptions(sglang_page_size=64))
    assert r.reason == (
        "SGLang refuses to start: "
        "it runs Lfm2ForCausalLM's state with its no_buffer radix cache, which takes page "
        "size 1 only (\"no_buffer only supports page_size=1\"), not 64: set the SGLang page "
        "size to 1")
    # the extra buffer snapshots every --mamba-track-interval (256) tokens: 48 and 512 do not
    # divide it, 16, 64 and 256 do
    qwen = load_preset("Qwen3-Next-80B-A3B").profile()
    for page in (16, 64, 256):
        assert run_strategy("sglang", qwen, budget_bytes=40 * 2**30,
                            options=StrategyOptions(sglang_page_size=page)).applies
    for page in (48, 512):
        r = run_strategy("sglang", qwen, budget_bytes=40 * 2**30,
                         options=StrategyOptions(sglang_page_size=page))
        # 512 is a multiple of the state's chunk (64), so a track interval of 512 takes it;
        # 48 is not (SGLang's chunk check refuses it at any interval): no interval offered
        assert r.reason == (
            "SGLang refuses to start: "
            "its extra_buffer radix cache snapshots Qwen3NextForCausalLM's state every "
            "256 tokens (--mamba-track-interval, SGLang's default), which the page size must "
            f"divide: {page} does not; set a page size that divides 256 (1, 2, 4, ..., 256)"
            + (", or --mamba-track-interval 512" if page == 512 else ""))
    # on a B200 told no page: TensorRT-LLM's backends, page 64, but where a model override
    # picks another backend, whose page stays 1 (arg_groups/model_overrides/*.py): LFM2 and a
    # Granite 4.0-H with mamba layers flashinfer, Falcon-H1 triton, an MLA model DeepSeek's
    # override does not name (Kimi Linear) get_default_attn_backend's flashinfer
    b200 = "B200 192GB"
    assert sglang_default_page(b200, lfm2) is None
    assert sglang_default_page(b200, gpt_oss_20b()).page == 64
    for name in ("Falcon-H1-7B", "granite-4.0-h-small", "Kimi-Linear-48B-A3B"):
        assert sglang_default_page(b200, load_preset(name).profile()) is None, name
    assert sglang_default_page(b200, load_preset("DeepSeek-V3").profile()).page == 64
    # Qwen3-Next's override reads the strategy told, "auto" not yet resolved (the radix-cache
    # pass runs after it: model_hook.py 223-225, 232-234, 737), so at the defaults it keeps
    # triton at 1, overlap scheduling or not; Nemotron-H's runs TensorRT-LLM at 64, whose
    # no_buffer (overlap off) then refuses it (none said)
    qwen3_next, nemotron_h = (load_preset(name).profile()
                              for name in ("Qwen3-Next-80B-A3B", "Nemotron-H-8B"))
    off = StrategyOptions(sglang_overlap_schedule=False)
    assert sglang_default_page(b200, qwen3_next) is None
    assert sglang_default_page(b200, qwen3_next, off) is None
    assert sglang_default_page(b200, nemotron_h).page == 64
    assert sglang_default_page(b200, nemotron_h, off) is None
    # DeepSeek's sparse attention runs at page 64 whatever is asked: a state hybrid of it on
    # the extra-buffer list holds 3 + 1 without overlap scheduling even when page 1 is asked
    nsa_hybrid = replace(qwen, indexer_bytes_per_slot=132)
    off = StrategyOptions(sglang_overlap_schedule=False)
    assert page_size(nsa_hybrid, off) == 64 and page_size(qwen, off) == 1
    assert (slots_per_request(nsa_hybrid, off)[0], slots_per_request(qwen, off)[0]) == (4, 3)
    # attention-only models and those SGLang keeps no radix cache of state for take any page
    # (with a prefill chunk of whole pages: 8,160 = 170 x 48)
    page_48 = StrategyOptions(sglang_page_size=48, sglang_chunked_prefill_size=8160)
    assert run_strategy("sglang", gpt_oss_20b(), budget_bytes=40 * 2**30, options=page_48).applies
    assert run_strategy("sglang", pure_mamba(), budget_bytes=40 * 2**30, options=page_48).applies


def test_sglang_b200_backend_with_speculative_decoding():
    """SGLang 0.5.23 on a B200 with --speculative-algorithm (topk 1), told no backend, as
    bench/sglang_check.py's B200 rows run its resolution: get_default_attn_backend keeps
    TensorRT-LLM only at a page of one token (is_no_spec_infer_or_topk_one, utils/common.py
    3960-3966), else flashinfer; Qwen3-Next's override picks TensorRT-LLM at 64 whenever a
    speculative algorithm is set (qwen3_5.py 40-48), triton at 1 past a page of one; Nemotron-H's
    sets the extra_buffer radix cache itself (nemotron_h.py 123-135), so overlap off starts."""
    b200 = "B200 192GB"
    qwen3_next, nemotron_h, llama = (load_preset(name).profile() for name in (
        "Qwen3-Next-80B-A3B", "Nemotron-H-8B", "Llama-3.1-8B"))
    drafting = StrategyOptions(speculative_tokens=3)
    off = replace(drafting, sglang_overlap_schedule=False)
    # Qwen3-Next: triton without drafting (above), TensorRT-LLM at 64 with it, overlap on or
    # off (page 64 then resolves "auto" to extra_buffer: 3 + 1 slots without overlap)
    assert sm100_backend(qwen3_next, StrategyOptions()) == "triton"
    for options in (drafting, off):
        assert sm100_backend(qwen3_next, options) == "trtllm_mha"
        assert sglang_default_page(b200, qwen3_next, options).page == 64
    assert slots_per_request(qwen3_next, replace(off, sglang_page_size=64))[0] == 4
    # a told no_buffer refuses the page 64 drafting picks (mamba_hook.py 157): sm100_refusal says so
    assert sm100_backend(qwen3_next, replace(
        off, sglang_mamba_radix_cache_strategy="no_buffer")) is None
    # Intern-S2-Mobius, on qwen3_5.py's list but given no extra buffer (no_buffer, as
    # NO_BUFFER_ARCHITECTURES): drafting's page 64 refused, the radix cache off runs it
    mobius = replace(qwen3_next, architectures=("InternS2MobiusForConditionalGeneration",))
    assert sm100_backend(mobius, drafting) is None
    assert sm100_backend(mobius, replace(drafting, sglang_disable_radix_cache=True)) == (
        "trtllm_mha")
    assert sm100_backend(mobius, StrategyOptions()) == "triton"
    # a page of 16 told: get_default_attn_backend's flashinfer, so the override's triton
    assert sm100_backend(qwen3_next, replace(drafting, sglang_page_size=16)) == "triton"
    assert sm100_backend(llama, replace(drafting, sglang_page_size=16)) == "flashinfer"
    assert sm100_backend(llama, replace(drafting, sglang_page_size=64)) == "flashinfer"
    assert sm100_backend(llama, drafting) == "trtllm_mha"
    assert sglang_default_page(b200, llama, drafting).page == 64
    # Nemotron-H: overlap off refuses TensorRT-LLM without drafting; drafting sets the extra
    # buffer (and a page told past 1 picks it too: overrides.py 477-482)
    assert sm100_backend(nemotron_h, replace(off, speculative_tokens=0)) is None
    assert sm100_backend(nemotron_h, off) == "trtllm_mha"
    assert sglang_default_page(b200, nemotron_h, off).page == 64
    assert sm100_backend(nemotron_h, replace(off, speculative_tokens=0,
                                             sglang_page_size=16)) == "trtllm_mha"


def test_sglang_b200_backend_reads_mla_by_the_latent_not_by_a_kernel_block():
    """get_default_attn_backend picks by use_mla_backend (model_override_base.py 302-340:
    trtllm_mha for MHA on SM100, flashinfer for MLA), which FlatKV reads as MLA's latent
    (CacheProfile.mla), as vLLM's strategy does: Llama-3.1-8B's K and V given a kernel block of
    32 (a JSON, a link's model_kernel) was read as MLA, flashinfer at a page of one token, no
    default page; it runs TensorRT-LLM's MHA at 64, as Llama told none. DeepSeek-V3 keeps
    TensorRT-LLM's MLA at 64, Kimi Linear (a latent, no DeepSeek override) flashinfer."""
    b200 = "B200 192GB"
    llama = load_preset("Llama-3.1-8B").profile()
    kernel_32 = replace(llama, kernel_block_size=32)
    assert not kernel_32.mla
    assert sm100_backend(kernel_32, StrategyOptions()) == "trtllm_mha"
    assert sglang_default_page(b200, kernel_32) == sglang_default_page(b200, llama)
    assert sglang_default_page(b200, kernel_32).page == 64
    ds3, kimi = (load_preset(name).profile() for name in ("DeepSeek-V3", "Kimi-Linear-48B-A3B"))
    assert (sm100_backend(ds3, StrategyOptions()), sglang_default_page(b200, ds3).page) == (
        "trtllm_mla", 64)
    assert (sm100_backend(kimi, StrategyOptions()), sglang_default_page(b200, kimi)) == (
        "flashinfer", None)


def test_sglang_b200_default_page_of_a_model_of_state_layers_alone():
    """A model of state layers alone (SGLang's PURE_SSM_ARCHITECTURES) takes
    get_default_attn_backend's TensorRT-LLM on a B200 (its attention arch SSM, neither MLA nor
    K and V of differing widths), so _mla_backend_page_constraints moves its page of 1 to 64
    (overrides.py 1176-1185), as bench/sglang_check.py's B200 rows find."""
    assert sm100_backend(pure_mamba(), StrategyOptions()) == "trtllm_mha"
    assert sglang_default_page("B200 192GB", pure_mamba()).page == 64
    assert sglang_default_page("H100 80GB", pure_mamba()) is None


def test_sglang_b200_page_in_place_of_the_page_told():
    """On a B200 SGLang 0.5.23 runs another page than some told ones, as bench/sglang_check.py's
    B200 rows find: TensorRT-LLM's MLA backend takes 32 or 64 alone and its MHA backend 16, 32,
    64 or 128 (_mla_backend_page_constraints, overrides.py 1155-1187: others become 64);
    Qwen3-Next's override sets 64 for TensorRT-LLM, else triton's 1, whatever is told
    (model_overrides/qwen3_5.py 45-48). The note names the page, which moves the figures."""
    b200 = "B200 192GB"
    ds3, qwen3_next, llama = (load_preset(name).profile() for name in (
        "DeepSeek-V3", "Qwen3-Next-80B-A3B", "Llama-3.1-8B"))
    told_16 = StrategyOptions(sglang_page_size=16)
    assert sglang_default_page(b200, ds3, told_16) == (64, (
        "SGLang 0.5.23 on a B200 runs pages of 64 tokens where told a page size of 16 "
        "(TensorRT-LLM's MLA backend takes pages of 32 or 64 tokens alone)"))
    assert sglang_default_page(b200, ds3, replace(told_16, sglang_page_size=32)) is None
    assert sglang_default_page("H100 80GB", ds3, told_16) is None
    # DeepSeek-V3's latent, (512 + 64) x 2 B a layer, 61 layers: 70,272 B a token; 10 GiB hold
    # 152,797 tokens, 152,784 in pages of 16, 152,768 in the 64 SGLang runs
    assert ds3.kv_bytes_per_slot * 61 == 1_152 * 61 == 70_272
    for page, tokens in ((16, 152_784), (64, 152_768)):
        r = run_strategy("sglang", ds3, budget_bytes=10 * 2**30,
                         options=replace(told_16, sglang_page_size=page))
        assert r.capacity_tokens == 10 * 2**30 // 70_272 // page * page == tokens
    assert sglang_default_page(b200, llama, replace(told_16, sglang_page_size=8)).page == 64
    assert sglang_default_page(b200, llama, told_16) is None
    assert sm100_page(llama, "trtllm_mha", 128) == 128 and sm100_page(llama, "fa4", 64) == 128
    # Qwen3-Next: triton at 1 (no extra buffer, radix cache on, no drafting), told 16 or 64;
    # the radix cache off picks TensorRT-LLM, at 64 whatever is told
    for page in (16, 64):
        default = sglang_default_page(b200, qwen3_next, StrategyOptions(sglang_page_size=page))
        assert default == (1, (
            f"SGLang 0.5.23 on a B200 runs pages of 1 token where told a page size of {page} "
            "(the model's override runs triton at 1 token a page whatever page size is told, "
            "model_overrides/qwen3_5.py 45-48)"))
    radix_off = replace(told_16, sglang_disable_radix_cache=True)
    assert sm100_backend(qwen3_next, radix_off) == "trtllm_mha"
    assert sglang_default_page(b200, qwen3_next, radix_off).page == 64
    assert sglang_default_page(b200, qwen3_next, replace(radix_off, sglang_page_size=64)) is None
    # DeepSeek-V3.2 runs its sparse attention backend ("dsa", deepseek_v2.py 99-104)
    assert sm100_backend(load_preset("DeepSeek-V3.2").profile(), StrategyOptions()) == "dsa"


def test_sglang_b200_runs_longcat_flash_as_its_deepseek_family():
    """SGLang 0.5.23's DeepSeek-family override (model_overrides/deepseek_v2.py 37-50) covers
    LongCat-Flash too: on a B200 its MLA runs TensorRT-LLM's MLA backend, at pages of 64 where
    told none (it ran FlashInfer at 1 here), and with an indexer (index_topk) its sparse
    attention stores the raw fp8 layout, 56 caches x (576 + 132) B a token: 40 GiB hold
    1,083,264 tokens in pages of 64, as SGLang's own resolution gives them (a check run as
    bench/sglang_check.py's B200 rows: its side 1,083,264 where these said 597,312)."""
    from test_hf_config import LONGCAT_FLASH

    b200 = "B200 192GB"
    dense = spec_from_hf_config(LONGCAT_FLASH).profile()
    assert sm100_backend(dense, StrategyOptions()) == "trtllm_mla"
    assert sglang_default_page(b200, dense, StrategyOptions()).page == 64
    indexed = spec_from_hf_config({**LONGCAT_FLASH, "index_topk": 2048,
                                   "index_head_dim": 128}).profile()
    assert indexed.dsa_raw_fp8_bytes_per_slot == 576 + 132
    r = run_strategy("sglang", indexed, budget_bytes=40 << 30,
                     options=StrategyOptions(gpu_compute_capability=(10, 0)))
    assert r.logged_tokens == (40 << 30) // (56 * 708) // 64 * 64 == 1_083_264


def test_sglang_b200_refusal_of_no_buffer_beside_tensorrt_llm():
    """Nemotron-H on a B200 without overlap scheduling, drafting or a page told: its override
    runs TensorRT-LLM's MHA backend and "auto" resolves to no_buffer, which refuses it
    (mamba_hook.py 156-163), as bench/sglang_check.py's B200 rows find; overlap on, the
    extra_buffer told or the radix cache off start it; a told no_buffer refuses it whatever,
    drafting for the page the override sets beside it (as the check finds)."""
    b200, nemotron_h = "B200 192GB", load_preset("Nemotron-H-8B").profile()
    off = StrategyOptions(sglang_overlap_schedule=False)
    assert sm100_refusal(b200, nemotron_h, off) == (
        "SGLang 0.5.23 on a B200 would not start this model with these options (\"no_buffer "
        "do not support trtllm_mha attention backend.\", mamba_hook.py 161-163): the model's "
        "override runs TensorRT-LLM's MHA backend there, which its no_buffer mamba radix "
        "cache refuses; overlap scheduling on, the extra_buffer strategy (where the model "
        "takes it) or the radix cache off starts it; the figures shown are of these settings, "
        "which it would not run")
    assert sm100_refusal("H100 80GB", nemotron_h, off) is None
    for starts in (StrategyOptions(), replace(off, sglang_disable_radix_cache=True),
                   replace(off, sglang_mamba_radix_cache_strategy="extra_buffer"),
                   replace(off, sglang_page_size=16)):
        assert sm100_refusal(b200, nemotron_h, starts) is None
    # a told no_buffer refuses it whatever; drafting, Nemotron-H's override sets page 64 too,
    # which the no_buffer check refuses first (mamba_hook.py 157)
    no_buffer = StrategyOptions(sglang_mamba_radix_cache_strategy="no_buffer")
    assert sm100_refusal(b200, nemotron_h, replace(no_buffer, sglang_overlap_schedule=False)) == (
        sm100_refusal(b200, nemotron_h, off).replace("overlap scheduling on, ", ""))
    # beside overlap scheduling SGLang fails on it first (mamba_hook.py 158-160), which the
    # strategy's own refusal quotes: no B200 note beside it
    assert not run_strategy("sglang", nemotron_h, budget_bytes=40 << 30,
                            options=no_buffer).applies
    assert "(\"no_buffer do not support overlap schedule.\")" in run_strategy(
        "sglang", nemotron_h, budget_bytes=40 << 30, options=no_buffer).reason
    assert sm100_refusal(b200, nemotron_h, no_buffer) is None
    assert sm100_refusal(b200, nemotron_h, replace(no_buffer, speculative_tokens=3)).startswith(
        "SGLang 0.5.23 on a B200 would not start this model with these options (\"no_buffer "
        "only supports page_size=1.\", mamba_hook.py 157): the model's override runs "
        "TensorRT-LLM's MHA backend there, at pages of more than a token, which its no_buffer "
        "mamba radix cache refuses;")
    assert sm100_refusal(b200, load_preset("Llama-3.1-8B").profile(), off) is None


def test_sglang_drafting_without_state_moves_only_max_running_requests_to_48():
    # Llama-3.1-8B at 40 GiB, 4,096-token requests: a token is 32 layers x 4,096 B = 131,072
    # B, so 42,949,672,960 // 131,072 = 327,680 tokens either way. Without drafting SGLang
    # logs max_running_requests = min(max(min(int(327,680 / 4,096 x 512), 4,096), 2,048),
    # 327,680 // 2) = 4,096; with 3 tokens drafted its EAGLE hook resets it to 48, so min(48,
    # 163,840) = 48 (bench/sglang_check.py sets this beside SGLang's resolve_max_num_reqs)
    llama = load_preset("Llama-3.1-8B").profile()

    def sglang(**options):
        return run_strategy("sglang", llama, budget_bytes=40 << 30, context_tokens=4_096,
                            options=StrategyOptions(**options))

    plain, drafted = sglang(), sglang(speculative_tokens=3)
    assert plain.extras["kv_tokens"] == drafted.extras["kv_tokens"] == 327_680
    assert plain.max_concurrency == drafted.max_concurrency == 80
    assert plain.extras["max_running_requests"] == 4_096
    assert drafted.extras["max_running_requests"] == 48
    assert "max_running_requests = min(48, T // 2) = min(48, 163,840) = 48" in "\n".join(
        drafted.formulas)
    from flatkv.strategy_notes import sglang_start_up_log_text

    # its scheduler's line gives each, and the note says where each comes from
    assert [r.extras["log_lines"][-1] for r in (plain, drafted)] == [
        f"max_total_num_tokens=327680, chunked_prefill_size=8192, max_prefill_tokens=..., "
        f"max_running_requests={running}, context_len=4096" for running in (4_096, 48)]
    assert "max_running_requests is the 48 its speculative hook sets, or fewer where the " \
        "pools hold fewer" in sglang_start_up_log_text(drafted)
    assert "max_running_requests is SGLang's own, from the token pool over context_len (the " \
        "context here, as --context-length);" in sglang_start_up_log_text(plain)


@pytest.mark.parametrize("value, said", [
    (0, "sglang_max_running_requests 0 must be positive: give 1 or more"),
    (-3, "sglang_max_running_requests -3 must be positive: give 1 or more"),
    (2.5, "sglang_max_running_requests 2.5 (float) must be a whole number: give 1 or more"),
    (True, "sglang_max_running_requests True (bool) must be a whole number: give 1 or more"),
    ("8", "sglang_max_running_requests '8' (str) must be a whole number: give 1 or more"),
])
def test_sglang_max_running_requests_is_checked(value, said):
    # the fix in words: what to give, or leave unset (it read "; SGLang's --max-running-
    # requests, or leave it unset", naming the flag but not what it wants)
    with pytest.raises(ValueError, match=re.escape(
            said + "; the requests SGLang runs at once (its --max-running-requests), or "
            "leave it unset for SGLang's own")):
        StrategyOptions(sglang_max_running_requests=value)


def test_sglang_told_max_running_requests_without_state():
    # Llama-3.1-8B at 40 GiB: a token is 32 layers x 4,096 B = 131,072 B, so the pool is
    # 42,949,672,960 // 131,072 = 327,680 tokens, told or not (resolve_max_num_reqs reads the
    # told figure after the pools are sized). Told 100: max_running_requests = min(100, 327,680
    # // 2 = 163,840) = 100 at any context, drafting or not (the EAGLE hook sets 48 only where
    # none is told). Told 1,000,000: min(1,000,000, 163,840) = 163,840, and SGLang warns that
    # the KV pool reduced it (bench/sglang_check.py sets these beside SGLang's own code)
    llama = load_preset("Llama-3.1-8B").profile()
    tokens = (40 << 30) // (32 * 4_096)

    def sglang(context=4_096, **options):
        return run_strategy("sglang", llama, budget_bytes=40 << 30, context_tokens=context,
                            options=StrategyOptions(**options))

    plain = sglang()
    assert tokens == 327_680 and plain.extras["max_running_requests"] == 4_096
    for context in (4_096, 262_144, None):
        for drafted in (0, 3):
            told = sglang(context, sglang_max_running_requests=100, speculative_tokens=drafted)
            assert told.extras["kv_tokens"] == tokens
            assert told.extras["max_running_requests"] == min(100, tokens // 2) == 100
            assert told.extras["running_requests_told"] is True
            assert "running_cap_from_speculative_hook" not in told.extras
    told = sglang(sglang_max_running_requests=100)
    assert told.max_concurrency == plain.max_concurrency == tokens // 4_096 == 80
    assert ("max_running_requests = min(--max-running-requests 100, T // 2) = min(100, 163,840) "
            "= 100 (SGLang's log, T the token pool 327,680; as told, whatever the context)"
            ) in told.formulas
    # no warning: the KV line, then the scheduler's with the 100 told
    assert told.extras["log_lines"] == [
        "KV Cache is allocated. dtype: torch.bfloat16, #tokens: 327680, K size: 20.00 GB, "
        "V size: 20.00 GB",
        "max_total_num_tokens=327680, chunked_prefill_size=8192, max_prefill_tokens=..., "
        "max_running_requests=100, context_len=4096"]
    from flatkv.strategy_notes import sglang_speculative_text, sglang_start_up_log_text

    assert ("max_running_requests is --max-running-requests as told, or fewer where the pools "
            "hold fewer, whatever the context") in sglang_start_up_log_text(told)
    assert "runs at most 100 requests at once, as --max-running-requests tells it" in \
        sglang_speculative_text(llama, 3, StrategyOptions(sglang_max_running_requests=100))
    many = sglang(sglang_max_running_requests=1_000_000)
    assert many.extras["max_running_requests"] == tokens // 2 == 163_840
    assert many.extras["log_lines"][0] == (
        "max_running_requests was reduced from the requested 1000000 to 163840 (per dp worker) "
        "due to the available KV cache capacity.")


def test_sglang_told_max_running_requests_on_a_state_hybrid():
    # Qwen3-Next-80B-A3B at TP 1, 40 GiB, S = 5: a slot is 36 layers x (49,152 + 2,097,152) =
    # 77,266,944 B; the state pool int(42,949,672,960 x 0.9 / 1.9) = 20,344,581,928 B holds
    # 263 slots (262 for requests, cap 262 // 5 = 52), the KV pool (42,949,672,960 - 263 x
    # 77,266,944) // (12 layers x 2,048 B) = 920,754 tokens. Without drafting the told figure
    # moves no pool (_handle_max_mamba_cache reads it only with the radix cache off): told 20,
    # max_running_requests = min(20, 460,377, 52) = 20; told 100, min(100, 460,377, 52) = 52,
    # where SGLang warns that the state pool caps it
    qwen, slot = load_preset("Qwen3-Next-80B-A3B").profile(), 36 * (49_152 + 2_097_152)
    budget = 40 << 30
    pool = budget * 9 // 19

    def sglang(context=32_768, **options):
        return run_strategy("sglang", qwen, budget_bytes=budget, context_tokens=context,
                            options=StrategyOptions(**options))

    plain = sglang()
    assert (slot, pool, pool // slot) == (77_266_944, 20_344_581_928, 263)
    tokens = (budget - 263 * slot) // 24_576
    assert tokens == 920_754
    for told, running in ((20, 20), (100, 52)):
        for context in (2_048, 32_768, 262_144):
            r = sglang(context, sglang_max_running_requests=told)
            x = r.extras
            assert (x["state_slots"], x["kv_tokens"]) == (263, tokens)
            assert x["running_request_cap"] == 262 // 5 == 52
            assert x["max_running_requests"] == min(told, tokens // 2, 52) == running
    assert plain.extras["max_running_requests"] == 52  # min(4,096, 460,377, 52)
    # told 20: no warning, the scheduler's line gives it
    assert [line for line in sglang(sglang_max_running_requests=20).extras["log_lines"]
            if "max_running_requests" in line] == [
        "max_total_num_tokens=920754, chunked_prefill_size=8192, max_prefill_tokens=..., "
        "max_running_requests=20, context_len=32768"]
    capped = sglang(sglang_max_running_requests=100)
    assert capped.extras["log_lines"][0].startswith(
        "max_running_requests is capped to 52 by the mamba state cache (max_mamba_cache_size=262,"
        " 5 state slots per request)")
    assert ("max_running_requests = min(--max-running-requests 100, T // 2, running cap) = "
            "min(100, 460,377, 52) = 52") in "\n".join(capped.formulas)


def test_sglang_told_max_running_requests_sizes_the_draft_token_buffers():
    # Qwen3-Next-80B-A3B at TP 1, 40 GiB, N = 3 (D = 4), S = 5: K = 143 whatever is told (the
    # joint solve of test_sglang_speculative_decoding_on_qwen3_next_as_its_log_prints_it), cap
    # 143 // 5 = 28. Told 20, SGLang reserves the buffers for min(20, 28) + 1 = 21 requests,
    # not the hook's min(48, 28) + 1 = 29: 77,266,944 x 21 x 4 = 6,490,423,296 B, and the KV pool
    # gets (42,949,672,960 - 144 x 77,266,944 - 6,490,423,296) // 24,576 = 1,030,794 tokens;
    # max_running_requests = min(20, 515,397, 28) = 20, and MambaPool's buffers take 21 rows:
    # ssm 36 x 21 x 4 x 2,097,152 = 6,341,787,648 B, conv windows 36 x 21 x 16,384 x 6 =
    # 74,317,824 B. Told 100 reserves min(100, 28) + 1 = 29, as the hook's 48 does
    qwen, slot = load_preset("Qwen3-Next-80B-A3B").profile(), 77_266_944
    budget = 40 << 30

    def sglang(**options):
        return run_strategy("sglang", qwen, budget_bytes=budget, context_tokens=32_768,
                            options=StrategyOptions(speculative_tokens=3, **options))

    r = sglang(sglang_max_running_requests=20)
    x = r.extras
    assert (x["request_state_slots"], x["running_request_cap"]) == (143, 28)
    assert x["draft_buffer_bytes"] == slot * 21 * 4 == 6_490_423_296
    assert x["kv_tokens"] == (budget - 144 * slot - 6_490_423_296) // 24_576 == 1_030_794
    assert x["max_running_requests"] == 20
    assert x["draft_buffers_allocated"] == 6_341_787_648 + 74_317_824 == 6_416_105_472
    assert r.max_concurrency == 20  # min(1,030,794 / 32,768, min(28, 20)): the told cap binds
    assert ("draft-token buffers = slot x (min(max_running_requests, K // S) + 1) x D = "
            "77,266,944 x (min(20, 143 // 5) + 1) x 4 = 77,266,944 x 21 x 4 = 6,490,423,296 "
            "(SGLang reserves this much; max_running_requests is 20, as --max-running-requests "
            "tells it)") in r.formulas
    hook, many = sglang(), sglang(sglang_max_running_requests=100)
    assert many.extras["draft_buffer_bytes"] == hook.extras["draft_buffer_bytes"] == slot * 29 * 4
    assert many.extras["kv_tokens"] == hook.extras["kv_tokens"]
    assert many.extras["max_running_requests"] == hook.extras["max_running_requests"] == 28
    assert sum(nbytes for _, nbytes in r.breakdown) == budget
    from flatkv.strategy_notes import sglang_speculative_text

    assert "for up to 20 running requests (--max-running-requests), in buffers" in \
        sglang_speculative_text(qwen, 3, StrategyOptions(sglang_max_running_requests=20))
    assert "for up to 48 running requests (its speculative default), in buffers" in \
        sglang_speculative_text(qwen, 3)


def test_sglang_max_mamba_cache_size_is_checked():
    with pytest.raises(ValueError, match=re.escape(
            "sglang_max_mamba_cache_size 0 must be positive: give 1 or more; the state slots for "
            "requests (SGLang's --max-mamba-cache-size), or leave it unset")):
        StrategyOptions(sglang_max_mamba_cache_size=0)
    with pytest.raises(ValueError, match=r"sglang_max_mamba_cache_size 1\.5 \(float\) must be a "
                       "whole number: give 1 or more"):
        StrategyOptions(sglang_max_mamba_cache_size=1.5)
    with pytest.raises(ValueError, match=r"sglang_max_mamba_cache_size 1,073,741,825 is too "
                       r"large to be real: give 1,073,741,824 or less"):  # MAX_MAMBA_CACHE_SIZE
        StrategyOptions(sglang_max_mamba_cache_size=2**30 + 1)


def test_sglang_slots_per_request_is_checked_as_the_other_counts():
    # one loop checks SGLang's three counts (slots per request, running requests, state slots)
    with pytest.raises(ValueError, match=re.escape(
            "sglang_slots_per_request 0 must be positive: give 1 or more, or leave it unset for "
            "SGLang's own (3, or 5 with its extra buffer)")):
        StrategyOptions(sglang_slots_per_request=0)
    with pytest.raises(ValueError, match=re.escape(
            "sglang_slots_per_request 1,025 is too large to be real: give 1,024 or less")):
        StrategyOptions(sglang_slots_per_request=1025)
    assert StrategyOptions(sglang_slots_per_request=1024).sglang_slots_per_request == 1024


def test_sglang_told_mamba_cache_size_fixes_the_state_slots():
    # Qwen3-Next-80B-A3B at TP 1, 40 GiB, S = 5, told 100 slots (_handle_max_mamba_cache's
    # first branch): 100 + 1 = 101 slots of 77,266,944 B = 7,803,961,344 B whatever r, the KV
    # pool (42,949,672,960 - 7,803,961,344) // 24,576 = 1,430,082 tokens, the cap 100 // 5 =
    # 20, so max_running_requests = min(4,096, 715,041, 20) = 20, capped by the state pool
    qwen, slot, budget = load_preset("Qwen3-Next-80B-A3B").profile(), 77_266_944, 40 << 30

    def sglang(budget=budget, **options):
        return run_strategy("sglang", qwen, budget_bytes=budget, context_tokens=32_768,
                            options=StrategyOptions(sglang_max_mamba_cache_size=100, **options))

    for ratio in (0.9, 0.5):
        r = sglang(mamba_full_memory_ratio=ratio)
        x = r.extras
        assert (x["state_slots"], x["request_state_slots"], x["running_request_cap"]) == (
            101, 100, 20)
        assert x["kv_tokens"] == (budget - 101 * slot) // 24_576 == 1_430_082
        assert x["max_running_requests"] == 20
        assert bd(r)["state"] + bd(r)["idle_pool"] + bd(r)["kv_history"] + bd(r)["unused"] \
            == budget
    assert ("state slots = --max-mamba-cache-size + 1 = 100 + 1 = 101 (one the padding slot), "
            "36 layers x 2,146,304 B = 77,266,944 B each: SGLang takes the told size whatever the "
            "budget (its --mamba-full-memory-ratio goes unread)") in r.formulas
    assert r.extras["log_lines"][0].startswith("max_running_requests is capped to 20 by the "
                                               "mamba state cache (max_mamba_cache_size=100,")
    assert budget_of_next_slot(r, qwen) is None  # more budget moves the KV pool alone
    # the least budget: the slots and two tokens (at most T // 2 run; with one, none does and
    # SGLang refuses), 101 x 77,266,944 + 2 x 24,576 = 7,804,010,496 B
    least = 101 * slot + 2 * 24_576
    assert sglang(least).extras["kv_tokens"] == 2
    short = sglang(least - 1)
    assert not short.applies and short.reason.endswith(
        f"a budget of {least:,} B or more holds more, as does a smaller --max-mamba-cache-size")
    # no token at all: the fix is fewer told slots, not the ratio SGLang leaves unread
    none = sglang(101 * slot + 24_575)
    assert not none.applies and none.reason.endswith(
        "the KV pool (24,575 B) holds no page of 1 token: a budget of 7,804,010,496 B or more "
        "holds one, as does a smaller --max-mamba-cache-size")
    assert "--mamba-full-memory-ratio" not in none.reason
    # more slots than the budget holds, or fewer than one request's S: refused
    many = run_strategy("sglang", qwen, budget_bytes=budget, context_tokens=32_768,
                        options=StrategyOptions(sglang_max_mamba_cache_size=1000))
    assert not many.applies and many.reason.endswith(
        f"a budget of {1001 * slot + 2 * 24_576:,} B or more, or a smaller "
        "--max-mamba-cache-size, leaves some")
    few = run_strategy("sglang", qwen, budget_bytes=budget, context_tokens=32_768,
                       options=StrategyOptions(sglang_max_mamba_cache_size=4))
    assert not few.applies and few.reason.endswith("one running request holds (S); give at least 5")


def test_sglang_told_mamba_cache_size_sizes_the_draft_token_buffers():
    # the same, 3 tokens drafted (D = 4): buffers for min(48, 100 // 5) + 1 = 21 requests,
    # 77,266,944 x 21 x 4 = 6,490,423,296 B, the KV pool (42,949,672,960 - 7,803,961,344 -
    # 6,490,423,296) // 24,576 = 1,165,986 tokens; told 8 running requests too, min(8, 20) + 1
    # = 9: 77,266,944 x 9 x 4 = 2,781,609,984 B and (42,949,672,960 - 7,803,961,344 -
    # 2,781,609,984) // 24,576 = 1,316,898 tokens, max_running_requests min(8, 658,449, 20) = 8
    qwen, slot, budget = load_preset("Qwen3-Next-80B-A3B").profile(), 77_266_944, 40 << 30

    def sglang(**options):
        return run_strategy("sglang", qwen, budget_bytes=budget, context_tokens=32_768,
                            options=StrategyOptions(sglang_max_mamba_cache_size=100,
                                                    speculative_tokens=3, **options))

    r = sglang()
    assert r.extras["draft_buffer_bytes"] == slot * 21 * 4 == 6_490_423_296
    assert r.extras["kv_tokens"] == (budget - 101 * slot - 6_490_423_296) // 24_576 == 1_165_986
    assert r.extras["max_running_requests"] == 20
    assert ("draft-token buffers = slot x (min(max_running_requests, M // S) + 1) x D = "
            "77,266,944 x (min(48, 100 // 5) + 1) x 4 = 77,266,944 x 21 x 4 = 6,490,423,296"
            ) in "\n".join(r.formulas)
    eight = sglang(sglang_max_running_requests=8)
    assert eight.extras["draft_buffer_bytes"] == slot * 9 * 4 == 2_781_609_984
    assert eight.extras["kv_tokens"] == (budget - 101 * slot - 2_781_609_984) // 24_576 \
        == 1_316_898
    assert eight.extras["max_running_requests"] == 8
    assert sum(nbytes for _, nbytes in eight.breakdown) == budget


def test_sglang_told_mamba_cache_size_on_state_layers_alone():
    # SGLang's _handle_max_mamba_cache takes the told M whatever the layers: M + 1 slots of
    # 24 x 2,158,592 = 51,806,208 B; its token pool is context_len tokens over no layers
    # (4,096), so max_running_requests = min(2,048, 4,096 // 2, 100 // 3) = 33
    slot = 24 * (61_440 + 2_097_152)
    told = run_strategy("sglang", pure_mamba(), budget_bytes=40 << 30, context_tokens=4096,
                        options=StrategyOptions(sglang_max_mamba_cache_size=100))
    assert told.extras["state_slots"] == 101 and told.extras["mamba_cache_size_told"] is True
    assert told.extras["running_request_cap"] == 100 // 3 == 33
    assert told.extras["max_running_requests"] == 33
    assert dict(told.breakdown)["unused"] == (40 << 30) - 101 * slot == 37_717_245_952
    # the slots must leave a byte: SGLang refuses where rest memory is 0 GiB or less
    # (kv_cache_configurator.py 3043: "Loaded weights leave no GPU memory for the KV cache")
    assert 101 * slot == 5_232_427_008
    at = run_strategy("sglang", pure_mamba(), budget_bytes=101 * slot, context_tokens=4096,
                      options=StrategyOptions(sglang_max_mamba_cache_size=100))
    assert not at.applies and "a budget of 5,232,427,009 B or more" in at.reason
    assert run_strategy("sglang", pure_mamba(), budget_bytes=101 * slot + 1, context_tokens=4096,
                        options=StrategyOptions(sglang_max_mamba_cache_size=100)).applies


def test_sglang_state_layers_alone_split_the_budget_as_hybrids_do():
    # A slot: 64 layers x (conv (8,192 + 2 x 8 x 128) channels x 3 rows x 2 B (bfloat16) =
    # 61,440 + ssm 128 x 64 x 128 x 4 B (float32) = 4,194,304) = 64 x 4,255,744 = 272,367,616.
    # SGLang keeps budget x 0.9 / 1.9 for them, no attention layers or not:
    # 42,949,672,960 x 9 / 19 = 20,344,581,928 -> 74 slots (74 x 272,367,616 =
    # 20,155,203,584), 73 for requests, 73 // 3 = 24 running; its token pool of no layers holds
    # context_len = 32,768 tokens, so max_running_requests = min(2,048, 16,384, 24) = 24
    profile = spec_from_hf_config(MAMBA2_ONLY).profile()
    slot = 64 * (10_240 * 3 * 2 + 128 * 64 * 128 * 4)
    r = run_strategy("sglang", profile, budget_bytes=40 << 30, context_tokens=32_768)
    x = r.extras
    assert x["state_slot_bytes"] == slot == 272_367_616
    assert x["state_pool_bytes"] == 42_949_672_960 * 9 // 19 == 20_344_581_928
    assert (x["state_slots"], x["request_state_slots"], x["running_request_cap"]) == (74, 73, 24)
    assert x["kv_tokens"] == 32_768 and x["max_running_requests"] == 24
    # its log's max_total_num_tokens: the pool of no layers, no token history
    assert r.logged_tokens == 32_768 and r.capacity_tokens is None
    assert dict(r.breakdown)["kv_history"] == 0
    assert dict(r.breakdown)["unused"] == 42_949_672_960 - 74 * slot == 22_794_469_376
    # a request of 32,768 tokens holds the whole token pool: one runs, 70 slots sit idle
    assert r.concurrency == 1 and x["binding_limit"] == "token pool"
    assert x["idle_state_bytes_at_context"] == (73 - 3) * slot
    assert ("max_concurrency = min(token pool T tokens / L = 32,768 / 32,768, running cap 24) "
            "= 1.00 (token pool binds)") in r.formulas
    assert x["log_lines"][0].startswith("max_running_requests is capped to 24 by the mamba state "
                                        "cache (max_mamba_cache_size=73, 3 state slots")
    assert x["log_left_out"] == [NO_LAYERLESS_KV_LINE]
    # 12,345,678,901 x 9 / 19 = 5,847,952,637 -> 21 slots, 20 for requests, 6 running
    small = run_strategy("sglang", profile, budget_bytes=12_345_678_901, context_tokens=32_768)
    assert (small.extras["state_slots"], small.extras["max_running_requests"]) == (21, 6)
    # the config's mamba_ssm_dtype goes unread: Mamba2Config builds its cache params without it
    bf16 = spec_from_hf_config({**MAMBA2_ONLY, "mamba_ssm_dtype": "bfloat16"}).profile()
    assert run_strategy("sglang", bf16, budget_bytes=40 << 30).extras["state_slot_bytes"] == slot


def test_sglang_state_layers_alone_token_pool_is_the_context():
    # T = context_len in whole pages whatever the budget: at 2 tokens T // 2 = 1 request; at 1
    # token, or page 64 over 63 tokens (T = 0), none, and SGLang refuses ("state cache is too
    # small to serve any requests"); a told --max-running-requests is cut by T // 2 too
    profile = spec_from_hf_config(MAMBA2_ONLY).profile()

    def run(context, page=1, **options):
        return run_strategy("sglang", profile, budget_bytes=40 << 30, context_tokens=context,
                            options=StrategyOptions(sglang_page_size=page, **options))

    assert run(2).extras["max_running_requests"] == 2 // 2 == 1
    for context, page in ((1, 1), (63, 64)):
        # T: 1 token in pages of 1, and 63 // 64 = 0 pages of 64; T // 2 = 0 requests either way
        tokens = 63 // 64 * 64 if page == 64 else 1
        refused = run(context, page)
        assert not refused.applies and refused.reason == (
            "SGLang refuses to start: "
            f"the token pool holds {tokens} token{'' if tokens == 1 else 's'} (a model "
            "without attention layers gets context_len tokens, in whole pages of "
            f"{page}): at most T // 2 = 0 requests run, none with state (\"state cache is "
            "too small to serve any requests\"); a context of "
            f"{max(2, page)} tokens or more holds more")
    assert run(1000, 64).extras["kv_tokens"] == 1000 // 64 * 64 == 960
    assert run(1000, 64, sglang_max_running_requests=20).extras["max_running_requests"] \
        == min(20, 960 // 2, 24) == 20
    told = run(32_768, sglang_max_running_requests=100)
    assert told.extras["max_running_requests"] == 24  # the state cap binds, and SGLang warns
    assert told.extras["log_lines"][0].startswith("max_running_requests is capped to 24")
    # without a context the pool (context_len) is unknown: the slots alone, no running figure
    alone = run_strategy("sglang", profile, budget_bytes=40 << 30)
    assert alone.applies and alone.extras["state_slots"] == 74
    assert "max_running_requests" not in alone.extras and "kv_tokens" not in alone.extras


def test_sglang_drafting_on_state_layers_alone():
    # Mamba-Codestral's shape in 40 GiB, 3 drafted (D = 4, S = 3): SGLang's joint solve as for
    # a hybrid, K = int((42,949,672,960 x 0.9 / 1.9 - 272,367,616 x 5) // (272,367,616 x (1 +
    # 4 / 3))) = int(18,982,743,848.42 // 635,524,437.33) = 29, so 30 slots; buffers for
    # min(48, 29 // 3) + 1 = 10 requests, 272,367,616 x 10 x 4 = 10,894,704,640 B;
    # max_running_requests = min(48, 32,768 // 2, 9) = 9. Its token pool stays context_len
    slot = 272_367_616
    profile = spec_from_hf_config(MAMBA2_ONLY).profile()
    r = run_strategy("sglang", profile, budget_bytes=40 << 30, context_tokens=32_768,
                     options=StrategyOptions(speculative_tokens=3))
    x = r.extras
    assert "speculative_not_modelled" not in x
    assert (x["state_slots"], x["request_state_slots"], x["running_request_cap"]) == (30, 29, 9)
    assert x["draft_buffer_bytes"] == slot * 10 * 4 == 10_894_704_640
    assert x["max_running_requests"] == 9 and x["kv_tokens"] == 32_768
    # MambaPool allocates for 9 + 1 requests: ssm 64 x 10 x 4 x 4,194,304 = 10,737,418,240 B
    # and conv windows 64 x 10 x 10,240 channels x (4 + 3 - 1) rows x 2 B = 78,643,200 B
    assert x["draft_buffers_allocated"] == 10_737_418_240 + 78_643_200
    assert dict(r.breakdown)["unused"] == (40 << 30) - 30 * slot - 10_894_704_640
    assert DRAFTER_KV_LAYERLESS_LINE in r.formulas
    # told --max-running-requests 4: buffers for min(4, 9) + 1 = 5 requests, 4 running
    told = run_strategy("sglang", profile, budget_bytes=40 << 30, context_tokens=32_768,
                        options=StrategyOptions(speculative_tokens=3,
                                                sglang_max_running_requests=4))
    assert told.extras["draft_buffer_bytes"] == slot * 5 * 4
    assert told.extras["max_running_requests"] == 4


def test_sglang_drafting_on_a_profile_of_conv_rows_but_no_architecture():
    # found by hypothesis (test_strategies_properties): a profile that gives its conv rows but
    # names no architecture raised IndexError where the formula asked whether it is KDA's. One
    # state layer, a conv of 2 rows of 1 B, 1 token drafted (D = 2), context 2: T = 2 tokens,
    # max_running_requests = min(48, 2 // 2) = 1; MambaPool's conv windows for 1 + 1 requests
    # are D + K - 2 = 3 rows: 1 layer x 2 x 3 x 1 B = 6 B, no ssm
    profile = CacheProfile(("linear_attention",), 0, {"conv": 2}, conv_rows=2)
    r = run_strategy("sglang", profile, budget_bytes=1 << 30, context_tokens=2,
                     options=StrategyOptions(speculative_tokens=1))
    assert r.applies and r.extras["max_running_requests"] == 1
    assert r.extras["draft_buffers_allocated"] == 6
    assert any("intermediate ssm 0 B + conv windows 6 B = 6 B" in f
               and "D + K - 2 rows shared" in f for f in r.formulas)


# tiiuae/falcon-mamba-7b's config.json shape (FalconMambaForCausalLM) and state-spaces/
# mamba-2.8b-hf's (MambaForCausalLM): SGLang 0.5.23 serves both as pure Mamba1 models
FALCON_MAMBA = {"architectures": ["FalconMambaForCausalLM"], "model_type": "falcon_mamba",
                "hidden_size": 4096, "intermediate_size": 8192, "num_hidden_layers": 64,
                "state_size": 16, "conv_kernel": 4, "torch_dtype": "bfloat16"}


MAMBA_28B = {"architectures": ["MambaForCausalLM"], "model_type": "mamba", "hidden_size": 2560,
             "intermediate_size": 5120, "num_hidden_layers": 64, "state_size": 16,
             "conv_kernel": 4, "torch_dtype": "float32"}


def test_sglang_mamba1_models_of_state_layers_alone():
    # SGLang lays Mamba1's state out full-rank (configs/mamba.py's _mamba1_cache_params:
    # Mamba2StateShape.create_full_rank): conv (d_inner, K - 1) in bfloat16, ssm (d_inner, 1,
    # d_state) in float32. Falcon-Mamba: 64 x (8,192 x 3 x 2 = 49,152 + 8,192 x 16 x 4 =
    # 524,288) = 64 x 573,440 = 36,700,160 B a slot; 42,949,672,960 x 9 / 19 = 20,344,581,928
    # -> 554 slots, 553 for requests, 553 // 3 = 184 running at 2,048 tokens (T // 2 = 1,024)
    falcon = spec_from_hf_config(FALCON_MAMBA).profile()
    r = run_strategy("sglang", falcon, budget_bytes=40 << 30, context_tokens=2048)
    x = r.extras
    assert x["state_slot_bytes"] == 64 * (49_152 + 524_288) == 36_700_160
    assert 20_344_581_928 // 36_700_160 == 554
    assert (x["state_slots"], x["request_state_slots"], x["slots_per_request"]) == (554, 553, 3)
    assert x["kv_tokens"] == 2048 and x["max_running_requests"] == min(2048, 1024, 184) == 184
    # mamba-2.8b: 64 x (5,120 x 3 x 2 = 30,720 + 5,120 x 16 x 4 = 327,680) = 22,937,600 B (the
    # model's float32 conv kept in SGLang's bfloat16); 20,344,581,928 // 22,937,600 = 886 slots
    mamba = spec_from_hf_config(MAMBA_28B).profile()
    m = run_strategy("sglang", mamba, budget_bytes=40 << 30, context_tokens=2048).extras
    assert m["state_slot_bytes"] == 64 * (30_720 + 327_680) == 22_937_600
    assert (m["state_slots"], m["max_running_requests"]) == (886, 885 // 3) == (886, 295)
    # their config's mamba_ssm_dtype goes unread (MambaConfig / FalconMambaConfig build their
    # cache params without it); SGLANG_MAMBA_SSM_DTYPE bfloat16 halves the ssm: 64 x (49,152 +
    # 262,144) = 19,922,944 B, 20,344,581,928 // 19,922,944 = 1,021 slots
    for config, slot in ((FALCON_MAMBA, 36_700_160), (MAMBA_28B, 22_937_600)):
        told = spec_from_hf_config({**config, "mamba_ssm_dtype": "bfloat16"}).profile()
        base = spec_from_hf_config(config).profile()
        assert [run_strategy("sglang", p, budget_bytes=40 << 30).extras["state_slot_bytes"]
                for p in (told, base)] == [slot, slot]  # the float32 slots above
    env = run_strategy("sglang", falcon, budget_bytes=40 << 30,
                       options=StrategyOptions(sglang_ssm_dtype="bfloat16")).extras
    assert env["state_slot_bytes"] == 19_922_944 and env["state_slots"] == 1_021


def test_sglang_refuses_drafting_on_a_mamba1_model():
    # its Mamba1 mixer asserts it never verifies drafted tokens (layers/attention/mamba/
    # mamba1.py 230-232), so it serves Falcon-Mamba and Mamba without speculative decoding only
    for config, arch in ((FALCON_MAMBA, "FalconMambaForCausalLM"),
                         (MAMBA_28B, "MambaForCausalLM")):
        profile = spec_from_hf_config(config).profile()
        r = run_strategy("sglang", profile, budget_bytes=40 << 30, context_tokens=2048,
                         options=StrategyOptions(speculative_tokens=1))
        assert not r.applies
        assert r.reason == ("SGLang refuses to start: "
                            f"its Mamba1 mixer, which runs {arch}, verifies no drafted "
                            "tokens (\"Mamba-1 (Falcon-Mamba) does not support speculative "
                            "decoding yet\"): set speculative tokens to 0")
    # a Mamba2 model of state layers alone drafts (test_sglang_drafting_on_state_layers_alone);
    # without a context its max_running_requests, and so the buffers MambaPool allocates for
    # them, are unknown, its reservation not: D = 2, K = int((20,344,581,928 - 272,367,616 x
    # 3) // (272,367,616 x (1 + 2 / 3))) = int(19,527,479,080 // 453,946,026.67) = 43, buffers
    # for min(48, 43 // 3) + 1 = 15 requests of D slots
    mamba2 = run_strategy("sglang", spec_from_hf_config(MAMBA2_ONLY).profile(),
                          budget_bytes=40 << 30, options=StrategyOptions(speculative_tokens=1))
    assert mamba2.applies and "draft_buffers_allocated" not in mamba2.extras
    assert mamba2.extras["draft_buffer_bytes"] == 272_367_616 * 15 * 2 == 8_171_028_480
    assert any("unknown without a context" in f for f in mamba2.formulas)


def _sglang_radix_off(profile: CacheProfile, budget: int = 40 << 30, context: int = 32_768,
                      **options) -> StrategyResult:
    return run_strategy("sglang", profile, budget_bytes=budget, context_tokens=context,
                        options=StrategyOptions(sglang_disable_radix_cache=True, **options))


def test_sglang_disable_radix_cache_on_qwen3_next():
    # Qwen3-Next-80B-A3B at TP 1, 40 GiB, context 32,768 (figures of
    # test_sglang_told_max_running_requests_on_a_state_hybrid): a slot is 36 layers x 2,146,304
    # = 77,266,944 B, a token 12 layers x 2,048 = 24,576 B. With its radix cache (extra_buffer,
    # S = 5): 263 slots, 920,754 tokens, max_running_requests min(4,096, 460,377, 262 // 5 = 52)
    # = 52. --disable-radix-cache sets SGLang's mamba ratio to 1 (kv_cache_configurator.py
    # 3063-3064), and without max_running_requests the pools stay as the budget splits them:
    # 263 slots, 920,754 tokens, but min(4,096, 460,377, 262 // 1) = 262 running, which SGLang
    # warns the state caps (1 state slot per request).
    qwen, slot, token = load_preset("Qwen3-Next-80B-A3B").profile(), 77_266_944, 24_576
    budget = 40 << 30
    on = run_strategy("sglang", qwen, budget_bytes=budget, context_tokens=32_768)
    off = _sglang_radix_off(qwen)
    for r, s, running in ((on, 5, 52), (off, 1, 262)):
        x = r.extras
        assert (x["state_slots"], x["kv_tokens"], x["slots_per_request"]) == (263, 920_754, s)
        assert x["max_running_requests"] == x["running_request_cap"] == running
    assert off.extras["log_lines"][0] == (
        "max_running_requests is capped to 262 by the mamba state cache "
        "(max_mamba_cache_size=262, 1 state slots per request). To raise it: increase "
        "--mamba-full-memory-ratio or --max-mamba-cache-size, or halve the state size with "
        "--mamba-ssm-dtype bfloat16.")
    assert slots_per_request(qwen, StrategyOptions(sglang_disable_radix_cache=True)) == (
        1, "1 with --disable-radix-cache: no cached or tracked states, its mamba ratio is 1 "
        "(kv_cache_configurator.py 3063-3064)")
    # told N = 64 ("mamba_pool.from_max_running_requests", 3325-3336): the state is N + 1 = 65
    # slots whatever the budget, the KV pool (42,949,672,960 - 65 x 77,266,944) // 24,576 =
    # 37,927,321,600 // 24,576 = 1,543,266 tokens (920,754 with the radix cache, whose told N
    # moves no pool); max_running_requests min(64, 771,633, 64 // 1) = 64, no warning
    told = _sglang_radix_off(qwen, sglang_max_running_requests=64)
    x = told.extras
    assert (x["state_slots"], x["request_state_slots"]) == (65, 64)
    assert x["kv_tokens"] == (budget - 65 * slot) // token == 1_543_266
    assert x["max_running_requests"] == 64 and x["state_from_running_requests"] is True
    assert budget_of_next_slot(told, qwen) is None  # the budget moves the KV pool alone
    assert x["log_lines"][0].startswith("Mamba Cache is allocated. max_mamba_cache_size: 64,")
    assert ("state slots = max_running_requests + 1 = 64 + 1 = 65 (one the padding slot; "
            "max_running_requests as --max-running-requests tells it), 36 layers x 2,146,304 B "
            "= 77,266,944 B each: with --disable-radix-cache SGLang sizes the state from it "
            "whatever the budget (_handle_max_mamba_cache, "
            "\"mamba_pool.from_max_running_requests\"; its --mamba-full-memory-ratio goes "
            "unread)") in told.formulas
    assert run_strategy("sglang", qwen, budget_bytes=budget, context_tokens=32_768,
                        options=StrategyOptions(sglang_max_running_requests=64)
                        ).extras["kv_tokens"] == 920_754
    # drafting N = 3 (D = 4): the hook's 48 is max_running_requests, so 49 slots and buffers
    # for 49 requests, 77,266,944 x 49 x 4 = 15,144,321,024 B (3337-3345); the KV pool
    # (42,949,672,960 - 49 x 77,266,944 - 15,144,321,024) // 24,576 = 977,346; running 48
    drafted = _sglang_radix_off(qwen, speculative_tokens=3)
    x = drafted.extras
    assert x["state_slots"] == 49 and x["draft_buffer_bytes"] == slot * 49 * 4 == 15_144_321_024
    assert x["kv_tokens"] == (budget - 49 * slot - 15_144_321_024) // token == 977_346
    assert x["max_running_requests"] == 48
    # told --max-mamba-cache-size still wins (3303-3309), at S = 1: 101 slots, cap 100
    sized = _sglang_radix_off(qwen, sglang_max_mamba_cache_size=100).extras
    assert (sized["state_slots"], sized["running_request_cap"]) == (101, 100)
    # N's slots past the budget: SGLang finds no memory for the KV cache
    assert _sglang_radix_off(qwen, sglang_max_running_requests=10**6).reason == (
        "SGLang refuses to start: "
        "the 1,000,001 state slots (--max-running-requests (with --disable-radix-cache) "
        "1,000,000 + 1) of 77,266,944 B take 77,267,021,266,944 B, the whole budget of "
        "42,949,672,960 B or more: no memory is left for the KV cache; a budget of "
        "77,267,021,316,096 B or more, or a smaller --max-running-requests, leaves some")
    # 77,267,021,266,944 + two tokens' 49,152 B: one request's pages, T // 2 >= 1
    assert 1_000_001 * slot + 2 * token == 77_267_021_316_096


def test_sglang_disable_radix_cache_sizes_the_swa_pool_from_its_request_cap():
    # gpt-oss-20b at 40 GiB: 12 full and 12 sliding layers of 2,048 B a token (24,576 B a
    # pool's token), window 128, which SGLang's model reports as 127. With its radix cache the
    # pools split by r_swa 0.8: 970,903 full and 776,722 swa tokens. --disable-radix-cache
    # with --max-running-requests N sizes the swa pool from compute_swa_request_cap
    # (pool_configurator.py 924-968): (W + 128 x D + P + decode) x N + chunks x 8,192 + P
    # (D 1, decode a page, two prefill chunks in flight with overlap scheduling, one without),
    # the full pool the rest (1005-1032).
    gpt, token = load_preset("gpt-oss-20b").profile(), 24_576
    budget = 40 << 30
    on = run_strategy("sglang", gpt, budget_bytes=budget, context_tokens=32_768,
                      options=StrategyOptions(sglang_max_running_requests=64)).extras
    assert (on["kv_tokens"], on["swa_tokens"]) == (970_903, 776_722)
    assert "swa_request_cap" not in _sglang_radix_off(gpt).extras  # no N: the ratio's pools
    # page 1, overlap on: (127 + 128 + 1 + 1) x 64 + 2 x 8,192 + 1 = 32,833 swa tokens; full
    # (42,949,672,960 - 32,833 x 24,576) // 24,576 = 1,714,793; running min(64, 857,396)
    r = _sglang_radix_off(gpt, sglang_max_running_requests=64)
    x = r.extras
    assert x["swa_request_cap"] == x["swa_tokens"] == 257 * 64 + 2 * 8_192 + 1 == 32_833
    assert x["kv_tokens"] == (budget - 32_833 * token) // token == 1_714_793
    assert x["max_running_requests"] == 64
    # its configurator logs no split line: the KV lines come first
    assert x["log_lines"][0].startswith("Full KV Cache is allocated. dtype: torch.bfloat16, "
                                        "#tokens: 1714793,")
    # 24,576 x (1,714,793 + 1) + 24,576 x (32,833 + 1) = 42,950,516,736 B: 40.00 GiB
    assert x["log_lines"][-2:] == [
        "SWAKVPool mem usage: 40.00 GB, swa size: 32833, full size: 1714793",
        "max_total_num_tokens=1714793, chunked_prefill_size=8192, max_prefill_tokens=..., "
        "max_running_requests=64, context_len=32768"]
    # page 64, overlap off: (127 + 128 + 64 + 64) x 64 + 8,192 + 64 = 32,768 (512 pages); full
    # 42,949,672,960 // 24,576 - 32,768 = 1,714,858, 1,714,816 in whole pages
    x = _sglang_radix_off(gpt, sglang_max_running_requests=64, sglang_page_size=64,
                          sglang_overlap_schedule=False).extras
    assert x["swa_tokens"] == 383 * 64 + 8_192 + 64 == 32_768 and x["kv_tokens"] == 1_714_816
    # drafting N = 1 (D = 2) with no N told: the hook's 48; page 64 without overlap, decode D
    # in whole pages (64): (127 + 256 + 64 + 64) x 48 + 8,192 + 64 = 32,784, 32,832 in pages;
    # with overlap 2 x D = 4 at page 1: (127 + 256 + 1 + 4) x 48 + 2 x 8,192 + 1 = 35,009
    x = _sglang_radix_off(gpt, speculative_tokens=1, sglang_page_size=64,
                          sglang_overlap_schedule=False).extras
    assert (x["swa_request_cap"], x["swa_tokens"]) == (511 * 48 + 8_256, 32_832)
    assert x["max_running_requests"] == 48
    assert _sglang_radix_off(gpt, speculative_tokens=1).extras["swa_tokens"] == 35_009
    # a smaller prefill chunk (SGLang's --chunked-prefill-size) moves it:
    # 257 x 8 + 2 x 2,048 + 1 = 6,153; a B200's own 16,384: 257 x 8 + 2 x 16,384 + 1 = 34,825;
    # vLLM's max_batched_tokens does not (8,192 assumed: 257 x 8 + 2 x 8,192 + 1 = 18,441)
    assert _sglang_radix_off(gpt, sglang_max_running_requests=8,
                             sglang_chunked_prefill_size=2_048).extras["swa_tokens"] == 6_153
    assert _sglang_radix_off(gpt, sglang_max_running_requests=8,
                             sglang_chunked_prefill_size=16_384).extras["swa_tokens"] == 34_825
    assert _sglang_radix_off(gpt, sglang_max_running_requests=8,
                             max_batched_tokens=2_048).extras["swa_tokens"] == 18_441
    # a cap past the budget leaves no full page: (257 x 10**7 + 16,385) x 24,576 B > 40 GiB
    assert _sglang_radix_off(gpt, sglang_max_running_requests=10**7).reason == (
        "SGLang refuses to start: "
        "its SWA request cap (2,570,016,385 tokens for max_running_requests 10,000,000, "
        "with --disable-radix-cache) leaves no page of the full KV pool in the 42,949,672,960 "
        "B; a budget of 63,160,722,702,336 B or more, or a smaller "
        "--max-running-requests, leaves one")
    assert (2_570_016_385 + 1) * token == 63_160_722_702_336  # the cap and one full token


def test_sglang_disable_radix_cache_holds_its_request_caps_requests_in_the_sliding_pool():
    # gpt-oss-20b at 40 GiB, context 32,768, --disable-radix-cache with N = 7: the request cap
    # sizes the sliding pool, (127 + 128 x 1 + 1 + 1) x 7 + 2 x 8,192 + 1 = 18,184 tokens, for
    # 7 requests (pool_configurator.py 924-968); full (42,949,672,960 - 18,184 x 24,576) //
    # 24,576 = 1,729,442. The radix cache off, SGLang frees a request's sliding tokens behind
    # its window before each chunk and once it decodes 128 past it (schedule_batch.py
    # 4047-4122, mem_cache/common.py 108-111), and prefills one chunked request at a time
    # (scheduler.py 4324-4327), so the pool holds each request's 257 live tokens and the two
    # chunks in flight once. Charging each request a whole chunk beside its window (min(127 +
    # 8,192, L) = 8,319, as with the radix cache) gave 18,184 / 8,319 = 2.19: now (18,184 - 2 x
    # 8,192 - 1) / min(32,768, 257) = 1,799 / 257 = 7, what SGLang sized it for, and the swa
    # pool binds before the full pool's 1,729,442 / 32,768 = 52.78
    gpt = load_preset("gpt-oss-20b").profile()
    r = _sglang_radix_off(gpt, sglang_max_running_requests=7)
    assert (r.extras["swa_tokens"], r.extras["kv_tokens"]) == (18_184, 1_729_442)
    assert r.concurrency == 7 and r.extras["binding_limit"] == "swa tokens"
    assert ("max_concurrency = min(kv tokens / L = 1,729,442 / 32,768, (swa tokens - 2 x "
            "chunked prefill - P) / min(L in whole pages, W + 128 x D + P + decode) = (18,184 - "
            "2 x 8,192 - 1) / min(32,768, 127 + 128 x 1 + 1 + 1) = 1,799 / 257) = 7.00 (swa "
            "tokens binds)") in r.formulas
    assert any(f.startswith("swa span = min(L, W + 128 x D + P + decode), 2 chunks in flight "
                            "(decode: a page): with --disable-radix-cache SGLang frees")
               for f in r.formulas)
    # the chunks in flight are in use, not idle: 18,184 - 16,385 - 7 x 257 = 0
    assert r.extras["idle_swa_tokens_at_context"] == 0
    # without overlap scheduling one chunk: 257 x 7 + 8,192 + 1 = 9,992, (9,992 - 8,193) / 257
    r = _sglang_radix_off(gpt, sglang_max_running_requests=7, sglang_overlap_schedule=False)
    assert r.extras["swa_tokens"] == 9_992 and r.concurrency == 7
    # page 64: (127 + 128 + 64 + 64) x 7 + 2 x 8,192 + 64 = 19,129, 19,136 in whole pages;
    # (19,136 - 16,384 - 64) / 383 = 2,688 / 383 = 7.02 (the pages' rounding)
    r = _sglang_radix_off(gpt, sglang_max_running_requests=7, sglang_page_size=64)
    assert r.extras["swa_tokens"] == 19_136 and r.concurrency == Fraction(2_688, 383)
    # a request shorter than its live window holds its own tokens: at L = 200, 1,799 / 200
    r = _sglang_radix_off(gpt, context=200, sglang_max_running_requests=7)
    assert r.concurrency == Fraction(1_799, 200)
    assert r.extras["idle_swa_tokens_at_context"] == 1_799 - 8 * 200 == 199
    # N = 64: 32,833 swa tokens hold (32,833 - 16,385) / 257 = 64; the full pool binds at
    # 1,714,793 / 32,768 = 52.33
    r = _sglang_radix_off(gpt, sglang_max_running_requests=64)
    assert r.concurrency == Fraction(1_714_793, 32_768) and r.extras["binding_limit"] == (
        "kv tokens")
    assert "(32,833 - 2 x 8,192 - 1) / min(32,768, 127 + 128 x 1 + 1 + 1) = 16,448 / 257" in (
        " ".join(r.formulas))
    # no N: the ratio's pools (776,722 swa), which hold (776,722 - 16,385) / 257 = 2,958.5 live
    # windows; the full pool binds at 29.63 as with the radix cache, but the swa idle differs:
    # 776,722 - 16,385 - 29 x 257 = 752,884 tokens (with the radix cache 776,722 - 29 x 8,319 =
    # 535,471)
    r = _sglang_radix_off(gpt)
    assert r.concurrency == Fraction(970_903, 32_768)
    assert r.extras["idle_swa_tokens_at_context"] == 752_884
    on = run_strategy("sglang", gpt, budget_bytes=40 << 30, context_tokens=32_768)
    assert 776_722 - 29 * 8_319 == 535_471
    assert on.extras["idle_swa_tokens_at_context"] == 535_471
    # drafting 1 token (D = 2), the hook's 48, overlap on: decode 2 x D = 4, a request's live
    # window 127 + 256 + 1 + 4 = 388, the pool 388 x 48 + 2 x 8,192 + 1 = 35,009: 48 again
    r = _sglang_radix_off(gpt, speculative_tokens=1)
    assert r.extras["swa_tokens"] == 35_009
    assert "(35,009 - 2 x 8,192 - 1) / min(32,768, 127 + 128 x 2 + 1 + 4) = 18,624 / 388" in (
        " ".join(r.formulas)) and 18_624 == 48 * 388
    # chunked prefill off: the ratio sizes the pool and each request is charged its prompt
    # (test_sglang_chunked_prefill_off_holds_a_whole_prompt_in_the_sliding_pool), radix or not
    off = _sglang_radix_off(gpt, sglang_max_running_requests=7,
                            sglang_chunked_prefill_size=CHUNKED_PREFILL_OFF)
    assert off.concurrency == Fraction(776_720, 32_767)


def test_sglang_chunked_prefill_off_admits_no_prompt_its_reservation_does_not_fit():
    # gpt-oss-20b at 40 GiB, chunked prefill off: 776,722 swa tokens (page 1). At L = 776,722
    # the prompt is 776,721 tokens and SGLang reserves max(776,721 - 127, 0) + min(776,721 + 1,
    # 127) + 1 = 776,722 (estimate_swa_kv_tokens, prefill_budget.py 27-57), which is not under
    # the 776,722 free (prefill_budget.py 250-254: needed < remaining_swa; with no chunk limit
    # no smaller chunk, 267-268): SGLang runs none, where swa / L = 1 showed one. At L =
    # 776,721 it reserves 776,721 < 776,722: one runs, (776,722 - 2) / 776,720 = 1
    gpt = load_preset("gpt-oss-20b").profile()

    def off(context, **options):
        chunk = CHUNKED_PREFILL_OFF
        return run_strategy("sglang", gpt, budget_bytes=40 << 30, context_tokens=context,
                            options=StrategyOptions(sglang_chunked_prefill_size=chunk, **options))

    r = off(776_722)
    assert r.concurrency == Fraction(776_720, 776_721) and r.extras["binding_limit"] == (
        "swa tokens")
    assert ("static split: not one request of 776,722 tokens fits, so none runs; the pools are "
            "drawn as reserved") in r.formulas
    assert off(776_721).concurrency == 1
    # page 64: a prompt of 776,720 in whole pages is 776,768 (12,137 pages), over the pool's
    # 776,704: none; reserved p + P, so the k-th runs while k x p + 64 < swa
    r = off(776_722, sglang_page_size=64)
    assert r.extras["swa_tokens"] == 776_704
    assert r.concurrency == Fraction(776_704 - 64 - 1, 776_768)
    # a prompt under the window: L = 100, prompt 99, output 1, reserves min(99 + 1, 127) + 1 =
    # 101, so (776,722 - (101 - 99) - 1) / 99 = 7,845.6, under the full pool's 970,903 / 100
    r = off(100)
    assert "(776,722 - 2 - 1) / 99 = 776,719 / 99" in " ".join(r.formulas)
    assert r.concurrency == Fraction(776_719, 99)


def test_sglang_disable_radix_cache_lifts_the_mamba_radix_cache_checks():
    # no mamba radix cache, so neither no_buffer's page size 1 nor the extra buffer's track
    # interval applies (model_hook.py 1059-1066): LFM2 starts at page 64, Qwen3-Next at 48
    # (with a prefill chunk of whole pages, 8,160 = 170 x 48); and on a B200 told no page,
    # Qwen3-Next's override keeps TensorRT-LLM at 64 without overlap scheduling
    # (model_overrides/qwen3_5.py 40-45), as Nemotron-H's does
    lfm2, qwen = (load_preset(name).profile() for name in ("LFM2-1.2B", "Qwen3-Next-80B-A3B"))
    for profile, page in ((lfm2, 64), (qwen, 48)):
        told = {"sglang_page_size": page, "sglang_chunked_prefill_size": 8160 if page == 48
                else None}
        refused = run_strategy("sglang", profile, budget_bytes=40 << 30,
                               options=StrategyOptions(**told))
        assert refused.reason == "SGLang refuses to start: " + (
            "it runs Lfm2ForCausalLM's state with its no_buffer radix cache, which takes "
            "page size 1 only (\"no_buffer only supports page_size=1\"), not 64: set the SGLang "
            "page size to 1" if page == 64 else
            "its extra_buffer radix cache snapshots Qwen3NextForCausalLM's state every "
            "256 tokens (--mamba-track-interval, SGLang's default), which the page size must "
            "divide: 48 does not; set a page size that divides 256 (1, 2, 4, ..., 256)")
        assert _sglang_radix_off(profile, **told).applies
    b200 = "B200 192GB"
    for name in ("Qwen3-Next-80B-A3B", "Nemotron-H-8B"):
        hybrid = load_preset(name).profile()
        assert sglang_default_page(b200, hybrid, StrategyOptions(
            sglang_overlap_schedule=False)) is None
        assert sglang_default_page(b200, hybrid, StrategyOptions(
            sglang_overlap_schedule=False, sglang_disable_radix_cache=True)).page == 64
    with pytest.raises(ValueError, match=r"^sglang_disable_radix_cache is 'yes': give False"):
        StrategyOptions(sglang_disable_radix_cache="yes")


def test_sglang_default_chunked_prefill_by_gpu_memory():
    # SGLang 0.5.23's handle_gpu_memory_settings (arg_groups/memory_hook.py 87-177), told no
    # --chunked-prefill-size, on nvidia-smi's memory.total in MiB: under 20 GiB 2,048, under 35
    # and 60 GiB 4,096, under 90 and 160 GiB 8,192, else 16,384 (bench/sglang_check.py runs the
    # hook itself on each preset). The presets: H100 81,559 MiB, A100 81,920, H200 143,771: 8,192;
    # B200 183,359: 16,384; A100 40GB 40,960, L40S 46,068, RTX 4090 24,564: 4,096
    from flatkv.budget import GPU_PRESETS, MiB

    assert {name: sglang_default_chunked_prefill(b) for name, b in GPU_PRESETS.items()} == {
        "H100 80GB": 8192, "H200 141GB": 8192, "B200 192GB": 16384, "A100 80GB": 8192,
        "A100 40GB": 4096, "L40S 48GB": 4096, "RTX 4090 24GB": 4096}
    # the tiers' edges: a bound is the next tier's
    assert [sglang_default_chunked_prefill(m * MiB) for m in (
        20 * 1024 - 1, 20 * 1024, 60 * 1024 - 1, 60 * 1024, 160 * 1024 - 1, 160 * 1024)] == [
        2048, 4096, 4096, 8192, 8192, 16384]
    # a GPU not known (a KV cache budget, vLLM's blocks): an 80 GB Hopper's assumed
    assert sglang_default_chunked_prefill(None) == 8192
    # the helps say the tiers in words, from the same table
    from flatkv.strategies.sglang import chunked_prefill_tiers_text

    assert chunked_prefill_tiers_text() == ("2,048 under 20 GiB, 4,096 under 60 GiB, 8,192 "
                                            "under 160 GiB, 16,384 above")


def test_sglang_chunked_prefill_size_sizes_a_sliding_request_not_max_batched_tokens():
    # gpt-oss-20b (12 full + 12 sliding layers of W 128, 2,048 B a token a layer: 24,576 B a
    # token in each pool) on a B200 at 0.9: 173,039,262,105 B for the cache, split at the ratio
    # 0.8: full 3,911,658 tokens (173,039,262,105 / (24,576 x 1.8)), swa 0.8 x as many =
    # 3,129,326. At L = 16,384 a request holds L full tokens and min(127 + chunk, L) sliding ones
    gpt = load_preset("gpt-oss-20b").profile()

    def sglang(**options):
        return run_strategy("sglang", gpt, budget_bytes=173_039_262_105, context_tokens=16_384,
                            options=StrategyOptions(**options))

    told = sglang(sglang_chunked_prefill_size=16_384)  # the B200's own
    assert (told.extras["kv_tokens"], told.extras["swa_tokens"]) == (3_911_658, 3_129_326)
    # 16,384: min(127 + 16,384, 16,384) = 16,384 sliding tokens; 3,129,326 / 16,384 = 190.99
    # binds before the full pool's 3,911,658 / 16,384 = 238.75
    assert told.max_concurrency == pytest.approx(3_129_326 / 16_384)
    assert ("max_concurrency = min(kv tokens / L = 3,911,658 / 16,384, swa tokens / min(W - 1 "
            "+ 16,384, L) = 3,129,326 / 16,384) = 190.99 (swa tokens binds)") in told.formulas
    # 8,192 (an H100's or H200's, and the one assumed where none is told): 127 + 8,192 = 8,319
    # sliding tokens, 3,129,326 / 8,319 = 376.17, so the full pool binds at 238.75
    for assumed in (sglang(), sglang(sglang_chunked_prefill_size=8_192)):
        assert assumed.max_concurrency == pytest.approx(3_911_658 / 16_384)
    # vLLM's max_batched_tokens is not SGLang's chunk: 16,384 of it leaves SGLang at 238.75
    assert sglang(max_batched_tokens=16_384).max_concurrency == pytest.approx(3_911_658 / 16_384)
    with pytest.raises(ValueError, match="sglang_chunked_prefill_size"):
        StrategyOptions(sglang_chunked_prefill_size=0)


def test_sglang_chunked_prefill_off_holds_a_whole_prompt_in_the_sliding_pool():
    # gpt-oss-20b at 40 GiB (12 full + 12 sliding layers of W 128, 24,576 B a token in each
    # pool): full floor(42,949,672,960 / (2,048 x (12 + 0.8 x 12))) = 970,903, swa floor(0.8 x
    # 970,903) = 776,722. At L = 32,768 with SGLang's 8,192 chunk a request holds min(127 +
    # 8,192, L) = 8,319 sliding tokens: 776,722 / 8,319 = 93.37, so the full pool binds at
    # 970,903 / 32,768 = 29.63. With chunked prefill off (--chunked-prefill-size -1) SGLang
    # prefills the whole prompt in one forward (scheduler.py 1372-1373 holds no chunk;
    # schedule_policy.py 1627-1633 admits it past max_prefill_tokens). A request of context
    # 32,768 brings at most a 32,767-token prompt (tokenizer_manager.py 1338: a prompt under the
    # context length, so one output token at least), and SGLang admits it only where
    # estimate_swa_kv_tokens(32,767, 1) = max(32,767 - 127, 0) + min(32,767 + 1, 127) + 1 =
    # 32,768 is under the pool's free tokens (prefill_budget.py 250-254: needed <
    # remaining_swa): the k-th while (k - 1) x 32,767 + 32,768 < 776,722, so k <= (776,722 -
    # 1 - 1) / 32,767 = 776,720 / 32,767 = 23.70, and the sliding pool binds
    gpt = load_preset("gpt-oss-20b").profile()

    def sglang(**options):
        return run_strategy("sglang", gpt, budget_bytes=40 << 30, context_tokens=32_768,
                            options=StrategyOptions(**options))

    assert sglang().max_concurrency == pytest.approx(970_903 / 32_768)
    off = sglang(sglang_chunked_prefill_size=CHUNKED_PREFILL_OFF)
    assert (off.extras["kv_tokens"], off.extras["swa_tokens"]) == (970_903, 776_722)
    assert off.concurrency == Fraction(776_720, 32_767)
    assert off.extras["binding_limit"] == "swa tokens"
    assert ("swa span = p = L - 1 in whole pages = 32,767, admitted with its reservation "
            "32,768 (estimate_swa_kv_tokens of p and 1 output token, window 127): with chunked "
            "prefill off a request's whole prompt goes into the sliding pool in one forward, "
            "and SGLang admits it only while the pool's free tokens exceed its reservation"
            ) in off.formulas
    assert ("max_concurrency = min(kv tokens / L = 970,903 / 32,768, (swa tokens - "
            "(reservation - p) - 1) / p = (776,722 - 1 - 1) / 32,767 = 776,720 / 32,767) = "
            "23.70 (swa tokens binds)") in off.formulas
    # 23 run: 970,903 - 23 x 32,768 = 217,239 full tokens idle, 776,722 - 23 x 32,767 =
    # 23,081 swa
    assert off.extras["idle_swa_tokens_at_context"] == 23_081
    assert off.extras["idle_kv_bytes_at_context"] == 217_239 * 24_576
    # --disable-radix-cache with N = 64: with chunked prefill on the request cap sizes the
    # sliding pool (32,833 tokens, test_sglang_disable_radix_cache_sizes_the_swa_pool_from_its_
    # request_cap); off, SWARequestCapPoolConfigurator.is_applicable says no (an unchunked
    # prefill writes the whole prompt into the SWA pool, pool_configurator.py 994-1000), and
    # the ratio's pools stay, a formula saying why
    capped = _sglang_radix_off(gpt, sglang_max_running_requests=64)
    assert capped.extras["swa_tokens"] == 32_833
    r = _sglang_radix_off(gpt, sglang_max_running_requests=64,
                          sglang_chunked_prefill_size=CHUNKED_PREFILL_OFF)
    assert "swa_request_cap" not in r.extras
    assert (r.extras["kv_tokens"], r.extras["swa_tokens"]) == (970_903, 776_722)
    assert r.extras["max_running_requests"] == 64
    assert any(f.startswith("swa tokens by r_swa, not SGLang's SWA request cap") and
               "chunked prefill is off" in f for f in r.formulas)
    assert not any("r_swa, not SGLang's SWA request cap" in f for f in capped.formulas)
    # no chunk, so no chunk of whole pages to check (validation_hook.py 243: > 0 only): page
    # 48 starts, where the 8,192 default (170 x 48 + 32) is refused
    assert "whole pages only" in sglang(sglang_page_size=48).reason
    assert sglang(sglang_page_size=48, sglang_chunked_prefill_size=CHUNKED_PREFILL_OFF).applies
    # -1 alone stands for it; SGLang's 0 (or -2) is the command line's to map
    for bad in (0, -2, -1.0):
        with pytest.raises(ValueError, match=r"^sglang_chunked_prefill_size .* must be .*; -1 "
                                             r"turns "
                           r"chunked prefill off \(SGLang reads 0 or less so\)"):
            StrategyOptions(sglang_chunked_prefill_size=bad)


def test_sglang_attention_dp_runs_one_group_at_attention_tp():
    # --attn-dp-size D (SGLang's --enable-dp-attention --dp-size D): attention over TP / D
    # ranks (runtime_context.derive_attn_tp_size), the chunk and told requests over D
    def run(name, tp, d, **more):
        return run_strategy("sglang", load_preset(name).with_options(tp=tp).profile(),
                            budget_bytes=40 * 2**30, context_tokens=32_768,
                            options=StrategyOptions(sglang_attn_dp_size=d, **more))

    # Llama-3.1-8B: 8 KV heads of 128 x (K + V) x 2 B = 512 B a head, 32 layers. TP 8 keeps
    # one head a rank; attention DP 2 runs TP 4 (2 heads), DP 8 runs TP 1 (all 8)
    for d, heads in ((1, 1), (2, 2), (8, 8)):
        r = run("Llama-3.1-8B", 8, d)
        assert r.capacity_tokens == r.logged_tokens == 40 * 2**30 // (32 * heads * 512)
    assert [run("Llama-3.1-8B", 8, d).capacity_tokens for d in (1, 2, 8)] == [
        2_621_440, 1_310_720, 327_680]
    # 32,768-token requests: 80, 40 and 10 of them; max_running_requests int(T / L x 512)
    # kept in [2,048, 4,096]: 4,096 each (DP 8: 327,680 / 32,768 x 512 = 5,120)
    r = run("Llama-3.1-8B", 8, 8)
    assert (r.concurrency_numerator // r.concurrency_denominator,
            r.extras["max_running_requests"]) == (10, 4096)
    # DeepSeek-V3's MLA latent (512 + 64) x 2 B x 61 layers = 70,272 B a token is whole on
    # every rank: 42,949,672,960 // 70,272 = 611,191 tokens at any D
    assert {run("DeepSeek-V3", 8, d).capacity_tokens for d in (1, 2, 8)} == {611_191}
    # ... but a told --max-running-requests 100 counts all groups: max(1, 100 // D) a group
    assert [run("DeepSeek-V3", 8, d, sglang_max_running_requests=100)
            .extras["max_running_requests"] for d in (1, 2, 8)] == [100, 50, 12]
    assert run("DeepSeek-V3", 8, 8, sglang_max_running_requests=3
               ).extras["max_running_requests"] == 1  # max(1, 3 // 8)
    # the scheduler line prints the group's chunk: 8,192 // 8 = 1,024
    assert run("Llama-3.1-8B", 8, 8, sglang_chunked_prefill_size=8192).extras[
        "scheduler_line"].startswith("max_total_num_tokens=327680, chunked_prefill_size=1024,")
    # gpt-oss-20b's sliding requests hold W - 1 + chunk: the group's chunk, 8,192 // 2 = 4,096
    # (its 8 KV heads of 64 at TP 2 and TP 1 differ too: DP 2 at TP 2 is TP 1's figures)
    halved = run("gpt-oss-20b", 2, 2, sglang_chunked_prefill_size=8192)
    at_tp1 = run("gpt-oss-20b", 1, 1, sglang_chunked_prefill_size=4096)
    assert (halved.capacity_tokens, halved.concurrency_numerator,
            halved.concurrency_denominator) == (at_tp1.capacity_tokens,
                                                at_tp1.concurrency_numerator,
                                                at_tp1.concurrency_denominator)
    # refusals: D must divide the TP (SGLang asserts it); a group's chunk must be whole pages
    # (1,024 // 8 = 128 tokens at page 256); a group's M // D = 4 // 8 = 0 state slots
    assert run("Llama-3.1-8B", 8, 3).reason == (
        "SGLang refuses to start: "
        "attention DP 3 does not divide TP 8 (\"tp_size must be divisible by "
        "attn_dp_size * attn_cp_size\"): give an attention DP size that divides the TP (1, 2, "
        "4 or 8)")
    assert run("Llama-3.1-8B", 1, 2).reason.endswith("divides the TP (or raise the TP)")
    assert run("Llama-3.1-8B", 8, 8, sglang_page_size=256,
               sglang_chunked_prefill_size=1024).reason.startswith(
        "SGLang refuses to start: "
        "with attention DP 8 it prefills chunks of chunked_prefill_size // 8 = 1,024 // 8 "
        "= 128 tokens")
    assert "a multiple of 8 x 256 = 2,048" in run(
        "Llama-3.1-8B", 8, 8, sglang_page_size=256, sglang_chunked_prefill_size=1024).reason
    assert run("Qwen3-Next-80B-A3B", 8, 8, sglang_max_mamba_cache_size=4).reason.startswith(
        "SGLang refuses to start: "
        "with attention DP 8 a group keeps --max-mamba-cache-size 4 // 8 = 0 state slots")
    # ... and a chunk under D tokens is chunked prefill off (SGLang reads 4 // 8 = 0 so, and
    # its line prints the 0); -1 told stays -1 (-1 // 8)
    off = run("Llama-3.1-8B", 8, 8, sglang_chunked_prefill_size=4)
    assert off.extras["scheduler_line"].startswith(
        "max_total_num_tokens=327680, chunked_prefill_size=0,")
    assert run("Llama-3.1-8B", 8, 8, sglang_chunked_prefill_size=-1).extras[
        "scheduler_line"].startswith("max_total_num_tokens=327680, chunked_prefill_size=-1,")
    assert "prefill chunk 4 // 8 = 0, chunked prefill off" in off.formulas[0]
    # the note on drafting says each group's share of the hook's 48: 48 // 8 = 6
    from flatkv.strategy_notes import sglang_speculative_text

    llama = load_preset("Llama-3.1-8B").with_options(tp=8).profile()
    assert sglang_speculative_text(llama, 3, StrategyOptions(sglang_attn_dp_size=8)) == (
        "SGLang keeps the same pools for a model without state layers, and runs at most 48 "
        "requests at once, max(1, 48 // 8) = 6 in each of its 8 attention-DP groups (its "
        "speculative hook's reset of max_running_requests, which its log and these figures "
        "show).")
    assert run("Llama-3.1-8B", 8, 8, speculative_tokens=3).extras["max_running_requests"] == 6
    # 8 KV heads (query heads unchecked) split over TP 48, 6 ranks a head, but not over
    # 48 / 16 = 3 ranks, where SGLang's QKVParallelLinear asserts they divide (linear.py
    # 1139-1144): DP 16 is refused, DP 6 runs TP 8, one head a rank (2,621,440 tokens)
    wide = replace(load_preset("Llama-3.1-8B"), attention_heads=None).with_options(tp=48)
    assert [d for d, _ in wide.profile().attention_dp_profiles] == [2, 3, 6, 12, 24, 48]
    dp = [run_strategy("sglang", wide.profile(), budget_bytes=40 * 2**30,
                       options=StrategyOptions(sglang_attn_dp_size=d)) for d in (16, 6)]
    assert dp[0].reason == (
        "SGLang refuses to start: "
        "with attention DP 16 it splits attention over TP 48 / 16 = 3 ranks, which the "
        "model's heads do not split over (its attention layers would not load): give an "
        "attention DP size that leaves a TP the heads split over")
    assert dp[1].capacity_tokens == 2_621_440
    # a profile of bytes alone names no heads: refused, not guessed
    raw = CacheProfile(layer_types=("full_attention",) * 2, kv_bytes_per_slot=512)
    refused = run_strategy("sglang", raw, budget_bytes=2**30,
                           options=StrategyOptions(sglang_attn_dp_size=2))
    assert refused.reason.startswith("attention DP 2 is not modelled for a profile of bytes")


def test_sglang_attention_dp_says_a_groups_share_of_the_speculative_hooks_48():
    # Qwen3-Next-80B-A3B at TP 4, attention DP 4, 3 tokens drafted, radix cache off: the hook's
    # 48 is max(1, 48 // 4) = 12 running requests a group, its state 12 + 1 = 13 slots; the
    # formulas and the note say it is a group's share, not "the 48"
    from flatkv.strategy_notes import sglang_start_up_log_text

    r = run_strategy("sglang", load_preset("Qwen3-Next-80B-A3B").with_options(tp=4).profile(),
                     budget_bytes=40 << 30, context_tokens=32_768,
                     options=StrategyOptions(sglang_attn_dp_size=4, speculative_tokens=3,
                                             sglang_disable_radix_cache=True))
    assert (r.extras["max_running_requests"], r.extras["state_slots"]) == (48 // 4, 48 // 4 + 1)
    text = "\n".join(r.formulas)
    assert ("state slots = max_running_requests + 1 = 12 + 1 = 13 (one the padding slot; "
            "max_running_requests a group's share of the 48 its speculative hook sets, 12)"
            ) in text
    assert "a group's share of the 48 its speculative hook sets, 12, whatever the context)" in text
    assert "the 48 its speculative hook resets it to" not in text
    assert ("max_running_requests is a group's share (// 4) of the 48 its speculative hook "
            "sets, or fewer where the pools hold fewer;") in sglang_start_up_log_text(r)


def test_sglang_state_pool_starved_by_a_small_ratio_names_a_larger_one():
    # granite-4.0-h-small: a state slot is 152,819,712 B; one running request holds S = 5 and
    # SGLang keeps a padding slot: 6 x 152,819,712 = 916,918,272 B of state pool. From 10 GB at
    # r = 1e-06 the pool is 10**10 x r / (1 + r) = 9,999 B, 0 slots; the fuzzed page named only
    # a budget (a petabyte at r = 1e-06 on an H100), not the ratio that starved it
    granite = load_preset("granite-4.0-h-small").profile()

    def sglang(ratio: Fraction, budget: int) -> StrategyResult:
        return run_strategy("sglang", granite, budget_bytes=budget,
                            options=StrategyOptions(mamba_full_memory_ratio=ratio))

    starved = sglang(Fraction(1, 10**6), 10**10)
    assert starved.reason.startswith(
        "SGLang refuses to start: the state pool (9,999 B) holds 0 slots of 152,819,712 B")
    # r = 0.1 gives 10**10 / 11 = 909,090,909 B, 5 slots, still short; SGLang's own 0.9 gives
    # 10**10 x 9 / 19 = 4,736,842,105 B, 30 slots: the least of the two that holds them is 0.9
    assert not sglang(Fraction(1, 10), 10**10).applies
    assert sglang(Fraction(9, 10), 10**10).applies
    assert starved.reason.endswith(
        "or more holds them, as does a larger SGLang mamba/full memory ratio "
        "(--mamba-full-memory-ratio), e.g. 0.9")
    # from 1 GB even 0.9 leaves 10**9 x 9 / 19 = 473,684,210 B, 3 slots: only a budget does
    assert sglang(Fraction(1, 10**6), 10**9).reason.endswith("B or more holds them")
    # and at SGLang's own ratio the ratio is not named (a larger one is no fix it would take)
    assert sglang(Fraction(9, 10), 10**9).reason.endswith("B or more holds them")


def test_on_a_blackwell_sglang_stores_dsa_raw_in_fp8_and_these_figures_take_it():
    # SGLang 0.5.23 on a B200 (compute capability 10) keeps DeepSeek-V3.2's DSA cache in
    # fp8_e4m3 told no --kv-cache-dtype (overrides.py 532-535) on its trtllm DSA backends
    # (713-719), which store the raw latent, kv_lora_rank + qk_rope_head_dim = 512 + 64 fp8 B
    # with no scales (calculate_mla_kv_cache_dim), beside the index keys' 128 + 128 // 128 x 4
    # = 132 B: 61 x 708 = 43,188 B a token, so 40 GiB holds 994,481 tokens, 994,432 in pages of
    # 64, where a Hopper's bfloat16 (61 x ((512 + 64) x 2 + 132) = 78,324 B) holds 548,352
    from flatkv.strategies.sglang import NSA_FP8_NOTE, sglang_dsa, sm100_dsa_layout

    v32 = load_preset("DeepSeek-V3.2").profile()
    raw = 512 + 64 + 128 + 128 // 128 * 4
    assert v32.dsa_raw_fp8_bytes_per_slot == raw == 708
    assert (40 << 30) // (61 * raw) == 994_481 and 994_481 // 64 * 64 == 994_432
    blackwell = StrategyOptions(gpu_compute_capability=(10, 0))
    for options, tokens, row in ((StrategyOptions(), 548_352, 1_284), (blackwell, 994_432, raw)):
        r = run_strategy("sglang", v32, budget_bytes=40 << 30, context_tokens=32_768,
                         options=options)
        assert r.logged_tokens == (40 << 30) // (61 * row) // 64 * 64 == tokens
        # a page of 64 tokens over 61 layers; int(T / 32,768 x 512) past SGLang's 4,096 cap
        assert r.block_size == 64 and r.block_bytes == 64 * 61 * row
        assert r.extras["max_running_requests"] == 4_096
    # the model's fp8 (scaled on a Hopper: 512 + 4 x 4 + 64 x 2 + 132 = 788 B) runs the same
    # trtllm backends on a Blackwell: 708 B too
    fp8 = load_preset("DeepSeek-V3.2").with_options(kv_dtype="fp8").profile()
    assert fp8.kv_bytes_per_slot == 512 + 4 * 4 + 64 * 2 + 132 == 788
    on_b200 = run_strategy("sglang", fp8, budget_bytes=40 << 30, options=blackwell)
    assert on_b200.logged_tokens == 994_432
    # the scaled layout's formula on a Hopper alone; the raw layout's on a Blackwell alone
    on_h100 = run_strategy("sglang", fp8, budget_bytes=40 << 30)
    assert on_h100.logged_tokens == (40 << 30) // (61 * 788) // 64 * 64
    assert NSA_FP8_NOTE in on_h100.formulas and NSA_FP8_NOTE not in on_b200.formulas
    assert not [f for f in on_h100.formulas if f.startswith("on a Blackwell GPU")]
    assert [f for f in on_b200.formulas if f.startswith("on a Blackwell GPU")] == [
        "on a Blackwell GPU SGLang 0.5.23 keeps DeepSeek's sparse attention in fp8_e4m3 where "
        "no --kv-cache-dtype is told, on its trtllm DSA backends, which store the latent raw, "
        "with no scales, beside the indexer's keys: 576 + 132 = 708 B a token a layer, in "
        "place of the 788 of the model's float8_e4m3fn (calculate_mla_kv_cache_dim, "
        "kv_cache_configurator.py 3425-3440); told --kv-cache-dtype bfloat16 it keeps 1,284 B, "
        "as on a Hopper"]
    # the profile the pools are sized by, and the formula that says why
    formulas: list[str] = []
    stored = sglang_dsa(v32, blackwell, formulas)
    assert (stored.kv_bytes_per_slot, stored.kv_dtype, stored.kv_tensor_bytes) == (
        708, "float8_e4m3fn", (708,))
    assert formulas == [
        "on a Blackwell GPU SGLang 0.5.23 keeps DeepSeek's sparse attention in fp8_e4m3 where "
        "no --kv-cache-dtype is told, on its trtllm DSA backends, which store the latent raw, "
        "with no scales, beside the indexer's keys: 576 + 132 = 708 B a token a layer, in "
        "place of the 1,284 of the model's bfloat16 (calculate_mla_kv_cache_dim, "
        "kv_cache_configurator.py 3425-3440); told --kv-cache-dtype bfloat16 it keeps 1,284 B, "
        "as on a Hopper"]
    # not on a Hopper, nor for dense MLA (DeepSeek-V3), nor raw bytes in fp8, which say no
    # latent (its scaled 788 B, 40 GiB // (61 x 788) = 893,519 -> 893,504 tokens); in bfloat16
    # the dtype names it, (1,284 - 132) / 2 = 576, so bytes alone store the raw 708 B too
    ds3 = load_preset("DeepSeek-V3").profile()
    custom = replace(fp8, dsa_raw_fp8_bytes_per_slot=None)
    assert (40 << 30) // (61 * 788) // 64 * 64 == 893_504
    for profile, options in ((v32, StrategyOptions()), (ds3, blackwell), (custom, blackwell)):
        assert sglang_dsa(profile, options, formulas) is profile
    assert run_strategy("sglang", custom, budget_bytes=40 << 30, options=blackwell
                        ).logged_tokens == 893_504
    assert sglang_dsa(replace(v32, dsa_raw_fp8_bytes_per_slot=None), blackwell,
                      []).kv_bytes_per_slot == 708
    # the GPU note states the dtype and bytes, and that the figures take them
    assert sm100_dsa_layout("B200 192GB", v32, StrategyOptions()) == (
        "SGLang 0.5.23 on a B200 keeps DeepSeek's sparse attention in fp8_e4m3 where no "
        "--kv-cache-dtype is told, on its trtllm DSA backends, which store the raw latent "
        "beside the index keys, 576 + 132 = 708 B a token a layer (kv_cache_configurator.py "
        "3425-3440): these figures are that layout's (told bfloat16 it keeps 1,284 B, as on a "
        "Hopper)")
    assert sm100_dsa_layout("H100 80GB", v32, StrategyOptions()) is None
    assert sm100_dsa_layout("B200 192GB", ds3, StrategyOptions()) is None
    # told on a Blackwell beside a budget of no GPU preset (--sglang-blackwell, the sidebar's
    # box): the same words, the GPU named as a Blackwell one (the figures took the layout, and
    # nothing said so)
    told = StrategyOptions(gpu_compute_capability=(10, 0))
    assert sm100_dsa_layout("", v32, told) == sm100_dsa_layout(
        "B200 192GB", v32, StrategyOptions()).replace("on a B200", "on a Blackwell GPU")
    assert sm100_dsa_layout("", ds3, told) is None


def test_on_an_sm8x_gpu_sglang_keeps_dsa_as_on_a_hopper():
    # SGLang 0.5.23 reads the compute capability for DeepSeek's sparse attention only to split
    # SM 10 from the rest: told no --kv-cache-dtype it picks bfloat16 below SM 10
    # (_dsa_kv_cache_dtype_default, arg_groups/overrides.py 532-535), runs flashmla_sparse / fa3
    # for bfloat16 and flashmla_kv for fp8_e4m3 below SM 10 (_dsa_split_backend_resolution,
    # 713-726; neither is trtllm, so calculate_mla_kv_cache_dim keeps the scaled layout), and
    # its one SM 8.x start-up check (SM 8.9 for TileLang's fp8 cache, 579-582) reads only a
    # told tilelang backend. So an A100 (8.0) or an L40S / RTX 4090 (8.9) start it with a
    # Hopper's bytes: bfloat16's 61 x ((512 + 64) x 2 + 132) = 78,324 B a token, 548,352
    # tokens in 40 GiB (pages of 64); fp8's scaled 61 x 788 B, 893,504; fp8_e5m2 refused on
    # any GPU (bench/sglang_check.py check_sm8x_dsa: 64 settings, 0 mismatches)
    v32 = load_preset("DeepSeek-V3.2")
    assert (40 << 30) // (61 * 1_284) // 64 * 64 == 548_352
    assert (40 << 30) // (61 * 788) // 64 * 64 == 893_504
    for kv_dtype, tokens in (("bfloat16", 548_352), ("fp8", 893_504)):
        profile = v32.with_options(kv_dtype=kv_dtype).profile()
        on = {capability: run_strategy(
            "sglang", profile, budget_bytes=40 << 30, context_tokens=32_768,
            options=StrategyOptions(gpu_compute_capability=capability))
            for capability in ((8, 0), (8, 9), (9, 0), None)}
        for r in on.values():
            assert r.applies and r.logged_tokens == tokens and r.block_size == 64
            assert r.formulas == on[None].formulas
    refused = run_strategy("sglang", v32.with_options(kv_dtype="float8_e5m2").profile(),
                           budget_bytes=40 << 30,
                           options=StrategyOptions(gpu_compute_capability=(8, 0)))
    assert not refused.applies and "DeepSeek DSA only supports bf16/bfloat16 or fp8_e4m3" in (
        refused.reason)


def test_on_an_sm8x_gpu_the_notes_say_sglangs_dsa_kernels_are_not_checked_at_start_up():
    # the figures above are the Hopper layout SGLang's start-up takes on SM 8.x, but its
    # FlashMLA sparse kernels and the indexer's deep_gemm.fp8_mqa_logits (dsa/utils.py 499-504,
    # called though deep_gemm_wrapper/configurer.py 38-40 turns DeepGEMM off below SM 9) are
    # Hopper / Blackwell kernels: the GPU note says the server may fail at its first forward
    # pass there, naming the GPU preset or the architecture told; nothing on SM 9 / 10, none
    # said, a model without DeepSeek's indexer, or fp8_e5m2 (refused: the refusal says more)
    from flatkv.strategies.sglang import sglang_gpu_note, sm8x_dsa_kernels

    v32 = load_preset("DeepSeek-V3.2").profile()
    for gpu, capability, named in (("A100 80GB", (8, 0), "A100 80GB"),
                                   ("L40S 48GB", (8, 9), "L40S 48GB"),
                                   ("", (8, 0), "Ampere GPU (SM 8.0)"),
                                   ("", (8, 9), "Ada GPU (SM 8.9)")):
        note = sglang_gpu_note(gpu, v32, StrategyOptions(gpu_compute_capability=capability))
        assert note == sm8x_dsa_kernels(gpu, v32,
                                        StrategyOptions(gpu_compute_capability=capability))
        assert note.startswith(f"SGLang 0.5.23 starts DeepSeek's sparse attention on the "
                               f"{named} as on a Hopper, and these figures are that layout's")
        assert note.endswith("so it may fail at its first forward pass there (FlatKV has not "
                             "run it on one)")
    # the CLI's notes name the GPU preset without its capability in the options
    assert sm8x_dsa_kernels("A100 80GB", v32, StrategyOptions()).startswith(
        "SGLang 0.5.23 starts DeepSeek's sparse attention on the A100 80GB")
    for gpu, capability in (("H100 80GB", (9, 0)), ("", (9, 0)), ("", None), ("B200 192GB", None)):
        assert sm8x_dsa_kernels(gpu, v32,
                                StrategyOptions(gpu_compute_capability=capability)) is None
    on_a100 = StrategyOptions(gpu_compute_capability=(8, 0))
    for profile in (load_preset("DeepSeek-V3").profile(),
                    load_preset("Qwen3-Next-80B-A3B").profile(),
                    load_preset("DeepSeek-V3.2").with_options(kv_dtype="float8_e5m2").profile()):
        assert sm8x_dsa_kernels("A100 80GB", profile, on_a100) is None


def test_on_a_blackwell_sglang_told_bfloat16_keeps_dsa_in_bfloat16():
    # told --kv-cache-dtype bfloat16 (FlatKV: the KV dtype bfloat16 beside sglang_kv_cache_dtype
    # bfloat16; that dtype alone stands for SGLang's auto) SGLang 0.5.23 keeps DeepSeek-V3.2's
    # DSA cache in bfloat16 on a B200 too (_dsa_kv_cache_dtype_default leaves a told dtype,
    # overrides.py 532-544; flashmla_sparse prefill, trtllm decode of the 2-byte latent):
    # 61 x ((512 + 64) x 2 + 132) = 61 x 1,284 = 78,324 B a token, so 40 GiB holds
    # 548,359 tokens, 548,352 in pages of 64, a Hopper's figure, where auto's raw fp8
    # 61 x 708 holds 994,432
    from flatkv.strategies.sglang import blackwell_dsa_bytes, sglang_dsa, sm100_dsa_layout

    v32 = load_preset("DeepSeek-V3.2").profile()
    row = (512 + 64) * 2 + 128 + 128 // 128 * 4
    assert v32.kv_bytes_per_slot == row == 1_284
    assert (40 << 30) // (61 * row) == 548_359 and 548_359 // 64 * 64 == 548_352
    told = StrategyOptions(gpu_compute_capability=(10, 0), sglang_kv_cache_dtype="bfloat16")
    for options, tokens in ((told, 548_352), (replace(told, sglang_kv_cache_dtype="auto"),
                                              (40 << 30) // (61 * 708) // 64 * 64),
                            (replace(told, gpu_compute_capability=None), 548_352)):
        r = run_strategy("sglang", v32, budget_bytes=40 << 30, context_tokens=32_768,
                         options=options)
        assert r.logged_tokens == tokens
    assert (40 << 30) // (61 * 708) // 64 * 64 == 994_432
    formulas: list[str] = []
    assert sglang_dsa(v32, told, formulas) is v32 and blackwell_dsa_bytes(v32, told) is None
    assert formulas == [
        "on a Blackwell GPU SGLang 0.5.23 told --kv-cache-dtype bfloat16 keeps DeepSeek's "
        "sparse attention in bfloat16, as on a Hopper (_dsa_kv_cache_dtype_default, "
        "overrides.py 532-544): 1,152 + 132 = 1,284 B a token a layer, not the raw fp8 576 + "
        "132 = 708 B its auto picks there"]
    assert sm100_dsa_layout("B200 192GB", v32, told) == (
        "SGLang 0.5.23 on a B200 told --kv-cache-dtype bfloat16 keeps DeepSeek's sparse "
        "attention in bfloat16, 1,152 + 132 = 1,284 B a token a layer, as on a Hopper: these "
        "figures are that layout's (told none, it keeps fp8_e4m3 there, the raw 576 + 132 = "
        "708 B)")
    # the KV dtype fp8 is told fp8_e4m3 itself: bfloat16 beside it changes nothing (708 B)
    fp8 = load_preset("DeepSeek-V3.2").with_options(kv_dtype="fp8").profile()
    assert blackwell_dsa_bytes(fp8, told) == 708
    assert run_strategy("sglang", fp8, budget_bytes=40 << 30, options=told
                        ).logged_tokens == 994_432
    # GLM-5's 78 layers alike: 40 GiB // (78 x 1,284) = 428,844, 428,800 in pages of 64
    glm5 = spec_from_hf_config({
        "architectures": ["GlmMoeDsaForCausalLM"], "model_type": "glm_moe_dsa",
        "num_hidden_layers": 78, "num_attention_heads": 64, "kv_lora_rank": 512,
        "qk_rope_head_dim": 64, "index_head_dim": 128, "index_topk": 2048,
        "max_position_embeddings": 202_752, "torch_dtype": "bfloat16"}, name="GLM-5").profile()
    assert (40 << 30) // (78 * 1_284) // 64 * 64 == 428_800
    assert run_strategy("sglang", glm5, budget_bytes=40 << 30, options=told
                        ).logged_tokens == 428_800
    # SGLang's "bf16" is read as bfloat16; its fp8 values are the KV dtype itself
    assert StrategyOptions(sglang_kv_cache_dtype="bf16").sglang_kv_cache_dtype == "bfloat16"
    with pytest.raises(ValueError) as error:
        StrategyOptions(sglang_kv_cache_dtype="fp8_e4m3")
    assert str(error.value) == (
        "sglang_kv_cache_dtype is 'fp8_e4m3': give auto (SGLang's default, for which the KV "
        "dtype bfloat16 stands) or bfloat16 (SGLang's --kv-cache-dtype bfloat16 told); its "
        "fp8_e4m3 and fp8_e5m2 are the KV dtype itself (fp8, e5m2)")


def test_on_a_blackwell_a_float16_dsa_model_told_bfloat16_keeps_bfloat16_too():
    # SGLang takes no float16 --kv-cache-dtype (its choices, fields/model.py 209-218: auto,
    # fp8_e5m2, fp8_e4m3, mxfp8, bf16, bfloat16, nvfp4, fp4_mx_block16), so the KV dtype
    # float16 stands for its auto as bfloat16 does: on a B200 auto stores DeepSeek-V3.2 raw in
    # fp8, 61 x 708 B a token, 994,432 tokens in 40 GiB; told bfloat16 it keeps bfloat16,
    # 61 x ((512 + 64) x 2 + 132) = 61 x 1,284 B, as float16's 2 B elements, 548,352 tokens
    from flatkv.engine_options import ENGINE_OPTIONS, acting_engine_options, idle_engine_option

    f16 = load_preset("DeepSeek-V3.2").with_options(kv_dtype="float16").profile()
    assert f16.kv_bytes_per_slot == (512 + 64) * 2 + 132 == 1_284
    assert (40 << 30) // (61 * 1_284) // 64 * 64 == 548_352
    assert (40 << 30) // (61 * 708) // 64 * 64 == 994_432
    told = StrategyOptions(gpu_compute_capability=(10, 0), sglang_kv_cache_dtype="bfloat16")
    for options, tokens in ((told, 548_352), (replace(told, sglang_kv_cache_dtype="auto"),
                                              994_432)):
        assert run_strategy("sglang", f16, budget_bytes=40 << 30,
                            options=options).logged_tokens == tokens
    assert "sglang_kv_cache_dtype" in acting_engine_options(f16, told, ("sglang",))
    # float32, which SGLang cannot be told either, stands for its auto alike: told bfloat16
    # moves it from auto's raw fp8 (994,432) to bfloat16's 548,352 on a Blackwell too
    (option,) = [o for o in ENGINE_OPTIONS if o.field == "sglang_kv_cache_dtype"]
    f32 = load_preset("DeepSeek-V3.2").with_options(kv_dtype="float32").profile()
    assert idle_engine_option(option, f32, told) == ""
    assert "sglang_kv_cache_dtype" in acting_engine_options(f32, told, ("sglang",))
    for options, tokens in ((told, 548_352), (replace(told, sglang_kv_cache_dtype="auto"),
                                              994_432)):
        assert run_strategy("sglang", f32, budget_bytes=40 << 30,
                            options=options).logged_tokens == tokens
    fp8 = load_preset("DeepSeek-V3.2").with_options(kv_dtype="fp8").profile()
    assert idle_engine_option(option, fp8, told) == (
        "the KV dtype is float8_e4m3fn, which SGLang is told as it is; bfloat16 told parts "
        "from its auto beside the KV dtype bfloat16, float16 or float32 alone")


def test_sglang_keeps_a_float32_or_float16_dsa_model_in_bfloat16_or_fp8():
    # SGLang takes no float32 or float16 --kv-cache-dtype (fields/model.py 209-218), so a
    # DeepSeek-V3.2 in either runs its auto, which _dsa_kv_cache_dtype_default resolves to
    # bfloat16 below SM 10 and fp8_e4m3 on a B200 (overrides.py 532-535), then asserts one of
    # the two (541-544): whatever the model's dtype. On an H100 80GB (85,520,809,984 B x 0.9 =
    # 76,968,728,985 B) bfloat16's 61 x ((512 + 64) x 2 + 132) = 61 x 1,284 B a token holds
    # 982,696 tokens, 982,656 in pages of 64, where the model's float32, 61 x ((512 + 64) x 4
    # + 132) = 61 x 2,436, was sized at 517,952 (in torch.float32, which SGLang never logs);
    # FlatKV's own flat layout keeps float32: 517,973 tokens, 517,968 in blocks of 16
    from flatkv.budget import GPU_PRESETS
    from flatkv.strategies.sglang import sglang_dsa, sglang_dsa_stored

    budget = GPU_PRESETS["H100 80GB"] * 9 // 10
    assert budget == 85_520_809_984 * 9 // 10 == 76_968_728_985
    assert budget // (61 * 1_284) == 982_696 and 982_696 // 64 * 64 == 982_656
    assert budget // (61 * 2_436) == 517_973 and 517_973 // 16 * 16 == 517_968
    # its KV line: 61 layers x (982,656 + a page of 64) rows x 1,284 B = 71.68 GiB
    assert f"{61 * (982_656 + 64) * 1_284 / 2**30:.2f}" == "71.68"
    hopper = StrategyOptions()
    for dtype, own in (("float32", (512 + 64) * 4 + 132), ("float16", (512 + 64) * 2 + 132)):
        profile = load_preset("DeepSeek-V3.2").with_options(kv_dtype=dtype).profile()
        assert profile.kv_bytes_per_slot == own and own in (2_436, 1_284)
        assert sglang_dsa_stored(profile, hopper) == ("bfloat16", 1_284)
        r = run_strategy("sglang", profile, budget_bytes=budget, context_tokens=163_840,
                         options=hopper)
        assert r.logged_tokens == 982_656
        assert r.extras["log_lines"][0] == (
            "KV Cache is allocated. dtype: torch.bfloat16, #tokens: 982656, KV size: 71.68 GB")
        assert ("SGLang 0.5.23 keeps DeepSeek's sparse attention in bfloat16 or fp8_e4m3, "
                f"whatever the model's dtype: it takes no {dtype} --kv-cache-dtype, so the "
                f"model's {dtype} runs its auto, which keeps bfloat16 below compute capability "
                "10 (_dsa_kv_cache_dtype_default, overrides.py 532-544): 1,152 + 132 = 1,284 B "
                f"a token a layer in bfloat16, in place of the {own:,} of the model's {dtype}; "
                "FlatKV's own layouts keep the model's dtype") in r.formulas
        formulas: list[str] = []
        stored = sglang_dsa(profile, hopper, formulas)
        assert (stored.kv_bytes_per_slot, stored.kv_dtype, stored.kv_tensor_bytes) == (
            1_284, "bfloat16", (1_284,))
    f32 = load_preset("DeepSeek-V3.2").with_options(kv_dtype="float32").profile()
    flat = run_strategy("flat", f32, budget_bytes=budget, context_tokens=163_840)
    assert flat.capacity_tokens == 517_968
    # bfloat16 and fp8 are SGLang's own off a Blackwell: nothing in their place
    for dtype in ("bfloat16", "fp8"):
        profile = load_preset("DeepSeek-V3.2").with_options(kv_dtype=dtype).profile()
        assert sglang_dsa_stored(profile, hopper) is None
        assert sglang_dsa(profile, hopper, []) is profile
    # on a B200 (192,265,846,784 B x 0.9 = 173,039,262,105 B) auto keeps the raw fp8 576 + 132
    # = 708 B for float32 too: 4,006,651 tokens, 4,006,592 in pages of 64; told bfloat16,
    # bfloat16's 1,284: 2,209,275, 2,209,216 (float32 was sized at auto's fp8 there)
    b200 = GPU_PRESETS["B200 192GB"] * 9 // 10
    assert b200 == 173_039_262_105
    assert b200 // (61 * 708) // 64 * 64 == 4_006_592
    assert b200 // (61 * 1_284) // 64 * 64 == 2_209_216
    blackwell = StrategyOptions(gpu_compute_capability=(10, 0))
    told = replace(blackwell, sglang_kv_cache_dtype="bfloat16")
    for dtype in ("float32", "float16"):
        profile = load_preset("DeepSeek-V3.2").with_options(kv_dtype=dtype).profile()
        assert sglang_dsa_stored(profile, blackwell) == ("fp8_e4m3", 708)
        assert sglang_dsa_stored(profile, told) == ("bfloat16", 1_284)
        for options, tokens, logged in ((blackwell, 4_006_592, "float8_e4m3fn"),
                                        (told, 2_209_216, "bfloat16")):
            r = run_strategy("sglang", profile, budget_bytes=b200, options=options)
            assert r.logged_tokens == tokens
            assert r.extras["log_lines"][0].startswith(
                f"KV Cache is allocated. dtype: torch.{logged}, #tokens: {tokens}, ")
    formulas = []
    sglang_dsa(f32, told, formulas)
    assert formulas == [
        "on a Blackwell GPU SGLang 0.5.23 told --kv-cache-dtype bfloat16 keeps DeepSeek's "
        "sparse attention in bfloat16, as on a Hopper (_dsa_kv_cache_dtype_default, "
        "overrides.py 532-544): 1,152 + 132 = 1,284 B a token a layer, in place of the 2,436 "
        "of the model's float32, not the raw fp8 576 + 132 = 708 B its auto picks there"]


def test_sglang_keeps_an_exported_float32_or_float16_dsa_model_in_bfloat16_too():
    # The Model page's raw-bytes export of DeepSeek-V3.2 (flatkv-profile/1: its bytes, KV
    # dtype, latent split, indexer keys and architecture, no raw fp8 width) in float32 was
    # sized at its own 61 x 2,436 B, 40 GiB // 148,596 = 289,036 -> 289,024 tokens logged in
    # torch.float32, which SGLang never logs for DSA, while the preset of the same bytes is
    # sized in bfloat16 (cc42162). The dtype names the latent's elements, (2,436 - 132) / 4 =
    # 576, so bfloat16 keeps 576 x 2 + 132 = 1,284 B: 40 GiB // (61 x 1,284) = 548,359 ->
    # 548,352 tokens, the preset's. float16's 1,284 B were logged torch.float16
    from flatkv.profile import profile_from_dict, profile_to_dict
    from flatkv.strategies.sglang import sglang_dsa_stored

    assert (40 << 30) // (61 * 2_436) // 64 * 64 == 289_024
    assert (2_436 - 132) // 4 * 2 + 132 == 1_284
    assert (40 << 30) // (61 * 1_284) == 548_359 and 548_359 // 64 * 64 == 548_352
    hopper = StrategyOptions()
    for dtype in ("float32", "float16"):
        preset = load_preset("DeepSeek-V3.2").with_options(kv_dtype=dtype).profile()
        export = profile_from_dict(profile_to_dict(preset))
        assert (export.dsa_raw_fp8_bytes_per_slot, export.kv_dtype, export.indexer_bytes_per_slot,
                export.architectures) == (None, dtype, 132, ("DeepseekV32ForCausalLM",))
        assert sglang_dsa_stored(export, hopper) == ("bfloat16", 1_284)
        r = run_strategy("sglang", export, budget_bytes=40 << 30, context_tokens=163_840,
                         options=hopper)
        assert r.logged_tokens == r.capacity_tokens == 548_352
        assert r.extras["log_lines"][0] == (
            "KV Cache is allocated. dtype: torch.bfloat16, #tokens: 548352, KV size: 40.00 GB")
        assert r.extras["log_lines"] == run_strategy(
            "sglang", preset, budget_bytes=40 << 30, context_tokens=163_840,
            options=hopper).extras["log_lines"]
    # bfloat16 and fp8 exports are SGLang's own dtypes: as given; without the architecture
    # (a raw model of bytes alone) SGLang's DeepSeek family is not known: as given too
    for dtype in ("bfloat16", "fp8"):
        export = profile_from_dict(profile_to_dict(
            load_preset("DeepSeek-V3.2").with_options(kv_dtype=dtype).profile()))
        assert sglang_dsa_stored(export, hopper) is None
    f32 = profile_from_dict(profile_to_dict(
        load_preset("DeepSeek-V3.2").with_options(kv_dtype="float32").profile()))
    assert sglang_dsa_stored(replace(f32, architectures=()), hopper) is None


def test_sglang_refuses_fp8_e5m2_for_dsa_on_any_gpu():
    # _dsa_kv_cache_dtype_default asserts bfloat16 or fp8_e4m3 for DeepSeek's sparse attention
    # on every CUDA GPU (overrides.py 541-544): the KV dtype float8_e5m2 (--kv-cache-dtype
    # fp8_e5m2) does not start, on a Hopper or a Blackwell; dense MLA (DeepSeek-V3) takes it,
    # 512 + 64 B a token a layer
    from flatkv.profile import profile_from_dict, profile_to_dict
    from flatkv.strategies.sglang import dsa_dtype_refusal, sm100_dsa_layout

    e5m2 = load_preset("DeepSeek-V3.2").with_options(kv_dtype="fp8_e5m2").profile()
    refusal = ("DeepSeek's sparse attention in the KV dtype float8_e5m2 (--kv-cache-dtype "
               "fp8_e5m2) is refused by 0.5.23: \"DeepSeek DSA only supports "
               "bf16/bfloat16 or fp8_e4m3 kv_cache_dtype\" (_dsa_kv_cache_dtype_default, "
               "overrides.py 541-544, on any GPU); set the KV dtype to float8_e4m3fn (fp8; "
               "--kv-cache-dtype fp8_e4m3) or bfloat16")
    assert dsa_dtype_refusal(e5m2) == refusal
    for options in (StrategyOptions(), StrategyOptions(gpu_compute_capability=(10, 0))):
        r = run_strategy("sglang", e5m2, budget_bytes=40 << 30, options=options)
        # the column's reason opens as a start refusal's (Compare's "won't start")
        assert (r.applies, r.reason) == (False, f"SGLang refuses to start: {refusal}")
    assert sm100_dsa_layout("B200 192GB", e5m2, StrategyOptions()) is None
    ds3 = load_preset("DeepSeek-V3").with_options(kv_dtype="fp8_e5m2").profile()
    assert dsa_dtype_refusal(ds3) is None
    assert ds3.kv_bytes_per_slot == 512 + 64
    assert run_strategy("sglang", ds3, budget_bytes=40 << 30).applies
    # bytes given alone (an export: no latent width) that carry the dtype are refused alike,
    # as SGLang reads the architecture, the indexer and the dtype, not the width; they were
    # sized at their 61 x 788 B a token, 40 GiB // 48,068 = 893,504 tokens in pages of 64
    exported = profile_from_dict(profile_to_dict(e5m2))
    assert exported.dsa_raw_fp8_bytes_per_slot is None and exported.kv_dtype == "float8_e5m2"
    assert dsa_dtype_refusal(exported) == refusal
    for options in (StrategyOptions(), StrategyOptions(gpu_compute_capability=(10, 0))):
        r = run_strategy("sglang", exported, budget_bytes=40 << 30, options=options)
        assert (r.applies, r.reason) == (False, f"SGLang refuses to start: {refusal}")
    # ... but with no dtype, or no architecture of SGLang's DeepSeek family, taken as given
    undtyped = {k: v for k, v in profile_to_dict(e5m2).items()
                if k not in ("kv_dtype", "kv_tensor_bytes")}
    assert dsa_dtype_refusal(profile_from_dict(undtyped)) is None
    assert dsa_dtype_refusal(replace(exported, architectures=())) is None
    assert dsa_dtype_refusal(replace(exported, architectures=("LlamaForCausalLM",))) is None
    for dtype in ("bfloat16", "fp8"):
        assert dsa_dtype_refusal(load_preset("DeepSeek-V3.2").with_options(
            kv_dtype=dtype).profile()) is None


# SGLang 0.5.23's refusal of a KV cache in int8, for any model: its --kv-cache-dtype choices
# (fields/model.py 209-218) and its --dtype choices (173) name no int8, and
# configure_kv_cache_dtype raises for any other (kv_cache_dtype.py 90); it opens as a start
# refusal's, as vLLM's does (Compare's "won't start")
SGLANG_INT8_REFUSAL = (
    "SGLang refuses to start: "
    "no KV cache in int8 in 0.5.23: neither its --kv-cache-dtype (auto, fp8_e5m2, "
    "fp8_e4m3, mxfp8, bf16, bfloat16, nvfp4, fp4_mx_block16: fields/model.py 209-218) nor its "
    "--dtype (auto, half, float16, bfloat16, float, float32: 173) names it (\"Unsupported "
    "kv_cache_dtype\": configure_kv_cache_dtype, kv_cache_dtype.py 90), so no run of it stores "
    "this cache in int8; set the KV dtype to float8_e4m3fn (fp8) or bfloat16")


def test_sglang_refuses_an_int8_cache_for_any_model_and_runs_the_fix():
    # FlatKV sized an int8 column as fp8's bytes and logged "dtype: torch.int8", which SGLang
    # never logs: on an H100 80GB (76,968,728,985 B for the cache) Llama-3.1-8B at 32 layers x
    # 8 heads x (128 + 128) x 1 B = 65,536 B a token held 76,968,728,985 // 65,536 = 1,174,449
    # tokens, DeepSeek-V3 at 61 x 576 = 35,136 B a token 2,190,594, DeepSeek-V3.2 at 61 x 788
    # = 48,068 B 1,601,246, 1,601,216 in pages of 64. Each is refused now, on a Hopper and a
    # Blackwell, and the fix it names (fp8, then bfloat16) runs those very figures
    from flatkv.budget import GPU_PRESETS
    from flatkv.profile import profile_from_dict, profile_to_dict
    from flatkv.strategies.sglang import dsa_dtype_refusal, sglang_kv_dtype_refusal

    budget = GPU_PRESETS["H100 80GB"] * 9 // 10
    assert budget == 76_968_728_985
    fixed = {"Llama-3.1-8B": (32 * 8 * 256, 1_174_449, 1),
             "DeepSeek-V3": (61 * 576, 2_190_594, 1),
             "DeepSeek-V3.2": (61 * 788, 1_601_216, 64)}
    for name, (token_bytes, tokens, page) in fixed.items():
        assert budget // token_bytes // page * page == tokens
        int8 = load_preset(name).with_options(kv_dtype="int8").profile()
        assert int8.kv_dtype == "int8"
        assert sglang_kv_dtype_refusal(int8) == SGLANG_INT8_REFUSAL
        for options in (StrategyOptions(), StrategyOptions(gpu_compute_capability=(10, 0))):
            r = run_strategy("sglang", int8, budget_bytes=budget, options=options)
            assert (r.applies, r.reason, r.logged_tokens) == (False, SGLANG_INT8_REFUSAL, None)
        # FlatKV's own layouts keep int8, a planner's choice
        assert run_strategy("flat", int8, budget_bytes=budget).applies
        # an export carries the dtype and is refused alike; bytes with no dtype are as given
        exported = profile_from_dict(profile_to_dict(int8))
        assert sglang_kv_dtype_refusal(exported) == SGLANG_INT8_REFUSAL
        undtyped = profile_from_dict({k: v for k, v in profile_to_dict(int8).items()
                                      if k not in ("kv_dtype", "kv_tensor_bytes")})
        assert sglang_kv_dtype_refusal(undtyped) is None
        # the fix: fp8 (SGLang's fp8_e4m3), the same bytes, logged as SGLang logs them
        fp8 = run_strategy("sglang", load_preset(name).with_options(kv_dtype="fp8").profile(),
                           budget_bytes=budget)
        assert (fp8.applies, fp8.logged_tokens) == (True, tokens)
        assert fp8.extras["log_lines"][0].startswith(
            f"KV Cache is allocated. dtype: torch.float8_e4m3fn, #tokens: {tokens}, ")
        bf16 = load_preset(name).with_options(kv_dtype="bfloat16").profile()
        assert sglang_kv_dtype_refusal(bf16) is None
        assert run_strategy("sglang", bf16, budget_bytes=budget).applies
    # every preset the column serves runs in the fix, so no preset loses its column to int8
    # unless it is refused as it stands (no preset's default KV dtype is int8)
    assert_presets_lose_nothing_to_int8("sglang", budget)
    # DeepSeek's sparse attention alone refuses fp8_e5m2; int8 is not its refusal's
    ds32 = load_preset("DeepSeek-V3.2")
    assert dsa_dtype_refusal(ds32.with_options(kv_dtype="int8").profile()) is None
    assert dsa_dtype_refusal(ds32.with_options(kv_dtype="fp8_e5m2").profile()).startswith(
        "DeepSeek's sparse attention in the KV dtype float8_e5m2 (--kv-cache-dtype fp8_e5m2) "
        "is refused by 0.5.23: ")


def test_sglang_int8_refusal_leaves_no_blackwell_layout_and_names_it_in_the_idle_note():
    from flatkv.engine_options import ENGINE_OPTIONS, idle_engine_option
    from flatkv.strategies.sglang import sm100_dsa_layout

    int8 = load_preset("DeepSeek-V3.2").with_options(kv_dtype="int8").profile()
    assert sm100_dsa_layout("B200 192GB", int8, StrategyOptions()) is None
    # told --kv-cache-dtype bfloat16, the idle note says SGLang refuses that KV dtype, int8
    # (any model) as fp8_e5m2 (DeepSeek's sparse attention)
    (option,) = [o for o in ENGINE_OPTIONS if o.field == "sglang_kv_cache_dtype"]
    told = StrategyOptions(gpu_compute_capability=(10, 0), sglang_kv_cache_dtype="bfloat16")
    e5m2 = load_preset("DeepSeek-V3.2").with_options(kv_dtype="fp8_e5m2").profile()
    for profile, dtype in ((int8, "int8"), (e5m2, "float8_e5m2")):
        assert idle_engine_option(option, profile, told) == (
            f"SGLang does not start this model in the KV dtype {dtype} (its refusal says why); "
            "bfloat16 told parts from its auto beside the KV dtype bfloat16, float16 or "
            "float32 alone")
    unnamed = replace(int8, kv_dtype=None, kv_tensor_bytes=())
    assert idle_engine_option(option, unnamed, told) == (
        "the model names no KV dtype; bfloat16 told parts from its auto beside the KV dtype "
        "bfloat16, float16 or float32 alone")


def test_on_a_blackwell_dsa_bytes_given_alone_are_taken_as_given_and_said_so():
    # DeepSeek-V3.2 as bytes alone (an export, a link's raw model: no kv_lora_rank to read, so
    # no dsa_raw_fp8_bytes_per_slot) keeps its 61 x 1,284 B a token on a B200 too, where
    # SGLang stores the raw 576 + 132: the GPU note and a formula line say the figures are the
    # bytes given, and how to get that layout's (its note said nothing; before the figures
    # took the layout, it said "not modelled"). In fp8 (the scaled 656 + 132 = 788 B) the
    # dtype names no latent width; in bfloat16, float16 or float32 it does (test below)
    from flatkv.profile import profile_from_dict, profile_to_dict
    from flatkv.strategies.sglang import sglang_dsa, sm100_dsa_layout

    given = profile_from_dict(profile_to_dict(
        load_preset("DeepSeek-V3.2").with_options(kv_dtype="fp8").profile()))
    assert (given.indexer_bytes_per_slot, given.dsa_raw_fp8_bytes_per_slot,
            given.kv_bytes_per_slot) == (132, None, 788)
    said = ("keeps DeepSeek's sparse attention in fp8_e4m3 where no --kv-cache-dtype is told, on "
            "its trtllm DSA backends, which store the raw latent, kv_lora_rank + "
            "qk_rope_head_dim fp8 B with no scales, beside the index keys "
            "(kv_cache_configurator.py 3425-3440): bytes given alone say no latent width, so "
            "these figures take the 788 B a token a layer given; give the model (a preset or "
            "its config.json) for that layout's figures")
    assert sm100_dsa_layout("B200 192GB", given, StrategyOptions()) == (
        f"SGLang 0.5.23 on a B200 {said}")
    assert sm100_dsa_layout("H100 80GB", given, StrategyOptions()) is None
    formulas: list[str] = []
    blackwell = StrategyOptions(gpu_compute_capability=(10, 0))
    assert sglang_dsa(given, blackwell, formulas) is given
    assert formulas == [f"on a Blackwell GPU SGLang 0.5.23 {said}"]
    r = run_strategy("sglang", given, budget_bytes=40 << 30, options=blackwell)
    assert r.logged_tokens == (40 << 30) // (61 * 788) // 64 * 64 == 893_504
    assert f"on a Blackwell GPU SGLang 0.5.23 {said}" in r.formulas
    # DeepSeek-V3's dense MLA given alone: no indexer, nothing said
    ds3 = profile_from_dict(profile_to_dict(load_preset("DeepSeek-V3").profile()))
    assert sm100_dsa_layout("B200 192GB", ds3, StrategyOptions()) is None
    assert sglang_dsa(ds3, blackwell, formulas) is ds3 and len(formulas) == 1


def test_sglang_gpu_note_is_the_refusal_the_dsa_layout_or_the_page_in_place_of_the_told():
    """One note a GPU, as Compare and the CLI word it: on a B200 Nemotron-H without overlap
    scheduling is refused (text), DeepSeek-V3.2's DSA dtype and bytes there are said (text),
    DeepSeek-V3 told 16 runs 64 (a page); told 32, or on an H100, nothing, as the page SGLang
    runs is never the page told."""
    b200 = "B200 192GB"
    nemotron_h, v32, ds3 = (load_preset(name).profile() for name in (
        "Nemotron-H-8B", "DeepSeek-V3.2", "DeepSeek-V3"))
    off = StrategyOptions(sglang_overlap_schedule=False)
    assert sglang_gpu_note(b200, nemotron_h, off) == sm100_refusal(b200, nemotron_h, off)
    assert sglang_gpu_note(b200, v32, StrategyOptions()).startswith(
        "SGLang 0.5.23 on a B200 keeps DeepSeek's sparse attention in fp8_e4m3")
    assert sglang_gpu_note(b200, ds3, StrategyOptions(sglang_page_size=16)).page == 64
    for page in (32, 64):
        assert sglang_gpu_note(b200, ds3, StrategyOptions(sglang_page_size=page)) is None
    assert sglang_gpu_note(b200, ds3, StrategyOptions()).page == 64
    for model in (nemotron_h, v32, ds3):
        assert sglang_gpu_note("H100 80GB", model, off) is None


def test_sglang_keeps_dsa_with_learnable_sinks_in_bfloat16_on_a_blackwell_too():
    # SGLang 0.5.23's _dsa_kv_cache_dtype_default reads bool(getattr(hf_config,
    # "learnable_sink", False)) (overrides.py 526): with it, auto picks fp8_e4m3 on compute
    # capability 10 no more ("fp8_e4m3" if major >= 10 and not has_attention_sinks else
    # "bfloat16", 532-535) and _dsa_split_backend_resolution runs flashmla_sparse (644-663),
    # no trtllm raw layout. DeepSeek-V3.2 on the B200 preset (192,265,846,784 B x 0.9 =
    # 173,039,262,105 B): auto stores the raw fp8 61 x (576 + 132) = 61 x 708 = 43,188 B a
    # token, 4,006,651 tokens, 4,006,592 in pages of 64; told bfloat16 61 x (1,152 + 132) =
    # 61 x 1,284 = 78,324 B, 2,209,275 tokens, 2,209,216. The same config with learnable_sink
    # true was sized at auto's 4,006,592: it is bfloat16's 2,209,216, told or not
    from test_hf_config import DEEPSEEK_V32_SINKS

    from flatkv.budget import GPU_PRESETS
    from flatkv.engine_options import acting_engine_options
    from flatkv.strategies.sglang import blackwell_dsa_bytes, sglang_dsa, sm100_dsa_layout

    budget = GPU_PRESETS["B200 192GB"] * 9 // 10
    assert budget == 192_265_846_784 * 9 // 10 == 173_039_262_105
    assert budget // (61 * 708) == 4_006_651 and 4_006_651 // 64 * 64 == 4_006_592
    assert budget // (61 * 1_284) == 2_209_275 and 2_209_275 // 64 * 64 == 2_209_216
    blackwell = StrategyOptions(gpu_compute_capability=(10, 0))
    told = replace(blackwell, sglang_kv_cache_dtype="bfloat16")
    v32 = load_preset("DeepSeek-V3.2").profile()
    sinks = spec_from_hf_config(DEEPSEEK_V32_SINKS, name="DeepSeek-V3.2 sinks").profile()
    assert (sinks.learnable_sink, v32.learnable_sink) == (True, False)
    assert sinks.kv_bytes_per_slot == v32.kv_bytes_per_slot == 1_284
    assert sinks.dsa_raw_fp8_bytes_per_slot == 708

    def tokens(profile: CacheProfile, options: StrategyOptions) -> int:
        return run_strategy("sglang", profile, budget_bytes=budget, context_tokens=163_840,
                            options=options).logged_tokens

    assert (tokens(v32, blackwell), tokens(v32, told)) == (4_006_592, 2_209_216)
    # with the sinks: bfloat16 at auto and told, on a Blackwell as on a Hopper
    for options in (blackwell, told, StrategyOptions()):
        assert tokens(sinks, options) == 2_209_216
    assert blackwell_dsa_bytes(sinks, blackwell) is None
    formulas: list[str] = []
    assert sglang_dsa(sinks, blackwell, formulas) is sinks
    layout = ("keeps DeepSeek's sparse attention with learnable attention sinks (the config's "
              "learnable_sink) in bfloat16 on its flashmla_sparse DSA backends "
              "(_dsa_kv_cache_dtype_default picks fp8_e4m3 at compute capability 10 only "
              "without them, overrides.py 526-535; _dsa_split_backend_resolution 644-663): "
              "1,152 + 132 = 1,284 B a token a layer")
    assert formulas == [f"on a Blackwell GPU SGLang 0.5.23 {layout}, not the raw fp8 576 + 132 "
                        "= 708 B its auto picks there without them"]
    assert sm100_dsa_layout("B200 192GB", sinks, StrategyOptions()) == (
        f"SGLang 0.5.23 on a B200 {layout}, as on a Hopper: these figures are that layout's "
        "(without them, told none, it keeps fp8_e4m3 there, the raw 576 + 132 = 708 B)")
    assert sm100_dsa_layout("H100 80GB", sinks, StrategyOptions()) is None
    # its start-up log's KV line is bfloat16's, not fp8's raw layout
    r = run_strategy("sglang", sinks, budget_bytes=budget, context_tokens=163_840,
                     options=blackwell)
    assert r.extras["log_lines"][0].startswith(
        "KV Cache is allocated. dtype: torch.bfloat16, #tokens: 2209216, KV size: ")
    # a model in float16 (SGLang's auto too) is kept in bfloat16 alike, in place of its own
    f16 = spec_from_hf_config(DEEPSEEK_V32_SINKS).with_options(kv_dtype="float16").profile()
    assert tokens(f16, blackwell) == 2_209_216
    # SGLang's --kv-cache-dtype bfloat16 changes nothing there: auto keeps bfloat16 too
    assert "sglang_kv_cache_dtype" in acting_engine_options(v32, told, ("sglang",))
    assert "sglang_kv_cache_dtype" not in acting_engine_options(sinks, told, ("sglang",))


def test_sglang_keeps_an_exported_float32_dsa_model_with_sinks_in_bfloat16_on_a_blackwell():
    # The Model page's raw-bytes export (flatkv-profile/1: no raw fp8 width) of DeepSeek-V3.2
    # with learnable_sink in float32 was sized on a Blackwell at its own 61 x 2,436 B, 40 GiB
    # // 148,596 = 289,036 -> 289,024 tokens logged torch.float32 (float16's 1,284 B logged
    # torch.float16), while the config it came from is sized at bfloat16's 548,352: with the
    # sinks SGLang's auto keeps bfloat16 on a Blackwell too (overrides.py 532-535), and the
    # dtype names the latent's elements, (2,436 - 132) / 4 = 576, so 576 x 2 + 132 = 1,284 B,
    # 40 GiB // (61 x 1,284) = 548,359 -> 548,352 tokens, as off a Blackwell
    from test_hf_config import DEEPSEEK_V32_SINKS

    from flatkv.profile import profile_from_dict, profile_to_dict
    from flatkv.strategies.sglang import sglang_dsa, sglang_dsa_stored

    assert (40 << 30) // (61 * 2_436) // 64 * 64 == 289_024
    assert (40 << 30) // (61 * 1_284) // 64 * 64 == 548_352
    blackwell = StrategyOptions(gpu_compute_capability=(10, 0))
    spec = spec_from_hf_config(DEEPSEEK_V32_SINKS, name="DeepSeek-V3.2 sinks")
    for dtype, own in (("float32", "2,436"), ("float16", "1,284")):
        model = spec.with_options(kv_dtype=dtype).profile()
        export = profile_from_dict(profile_to_dict(model))
        assert (export.learnable_sink, export.dsa_raw_fp8_bytes_per_slot) == (True, None)
        assert sglang_dsa_stored(export, blackwell) == ("bfloat16", 1_284)
        runs = [run_strategy("sglang", p, budget_bytes=40 << 30, context_tokens=163_840,
                             options=blackwell) for p in (export, model)]
        assert [r.logged_tokens for r in runs] == [548_352, 548_352]
        assert runs[0].extras["log_lines"] == runs[1].extras["log_lines"]
        assert runs[0].extras["log_lines"][0] == (
            "KV Cache is allocated. dtype: torch.bfloat16, #tokens: 548352, KV size: 40.00 GB")
        formulas: list[str] = []
        sglang_dsa(export, blackwell, formulas)
        assert formulas == [
            "on a Blackwell GPU SGLang 0.5.23 keeps DeepSeek's sparse attention with learnable "
            "attention sinks (the config's learnable_sink) in bfloat16 on its flashmla_sparse "
            "DSA backends (_dsa_kv_cache_dtype_default picks fp8_e4m3 at compute capability 10 "
            "only without them, overrides.py 526-535; _dsa_split_backend_resolution 644-663): "
            f"1,152 + 132 = 1,284 B a token a layer, in place of the {own} of the model's "
            f"{dtype}, not the raw fp8 576 + 132 = 708 B its auto picks there without them"]
        # the config's own line: the export's dtype names its latent's 576 elements
        model_formulas: list[str] = []
        sglang_dsa(model, blackwell, model_formulas)
        assert formulas == model_formulas
    # without the sinks the dtype gives the raw fp8 width of bytes alone on a Blackwell too
    # ((2,436 - 132) / 4 = 576 elements, 576 + 132 = 708 B): the preset's layout
    plain = profile_from_dict(profile_to_dict(
        load_preset("DeepSeek-V3.2").with_options(kv_dtype="float32").profile()))
    assert sglang_dsa_stored(plain, blackwell) == ("fp8_e4m3", 708)


def test_sglang_refuses_dsa_with_learnable_sinks_in_fp8_on_any_gpu():
    # told any --kv-cache-dtype but auto, bf16 or bfloat16, _dsa_kv_cache_dtype_default raises
    # for learnable DSA attention sinks (overrides.py 527-531), before its dtype assertion
    # (541-544), on a Hopper and a Blackwell alike: fp8_e4m3 (FlatKV's KV dtype fp8), which
    # was sized on a B200 at auto's raw 708 B (4,006,592 tokens) and on a Hopper at the scaled
    # 61 x 788 B, and fp8_e5m2 in these words, not the assertion's
    from test_hf_config import DEEPSEEK_V32_SINKS

    from flatkv.strategies.sglang import dsa_dtype_refusal, sm100_dsa_layout

    spec = spec_from_hf_config(DEEPSEEK_V32_SINKS, name="DeepSeek-V3.2 sinks")
    for dtype, name, told in (("fp8", "float8_e4m3fn", "fp8_e4m3"),
                              ("fp8_e5m2", "float8_e5m2", "fp8_e5m2")):
        profile = spec.with_options(kv_dtype=dtype).profile()
        refusal = (f"DeepSeek's sparse attention with learnable attention sinks (the config's "
                   f"learnable_sink) in the KV dtype {name} (--kv-cache-dtype {told}) is refused "
                   "by 0.5.23: \"Learnable DSA attention sinks require a bfloat16 KV cache; got "
                   f"kv_cache_dtype={told}.\" (_dsa_kv_cache_dtype_default, overrides.py "
                   "526-531, on any GPU); set the KV dtype to bfloat16, which its auto keeps "
                   "for such a model on every GPU")
        assert dsa_dtype_refusal(profile) == refusal
        for options in (StrategyOptions(), StrategyOptions(gpu_compute_capability=(10, 0))):
            r = run_strategy("sglang", profile, budget_bytes=173_039_262_105, options=options)
            # opened as a start refusal's: Compare's "won't start"
            assert (r.applies, r.reason) == (False, f"SGLang refuses to start: {refusal}")
        assert sm100_dsa_layout("B200 192GB", profile, StrategyOptions()) is None
    # the fix starts it: bfloat16, 2,209,216 tokens on the B200 preset
    fixed = run_strategy("sglang", spec.with_options(kv_dtype="bfloat16").profile(),
                         budget_bytes=173_039_262_105, context_tokens=163_840,
                         options=StrategyOptions(gpu_compute_capability=(10, 0)))
    assert fixed.logged_tokens == 2_209_216
    # without the sinks fp8_e4m3 starts (the raw 708 B on a B200), as before
    plain = load_preset("DeepSeek-V3.2").with_options(kv_dtype="fp8").profile()
    assert dsa_dtype_refusal(plain) is None
    assert run_strategy("sglang", plain, budget_bytes=173_039_262_105, context_tokens=163_840,
                        options=StrategyOptions(gpu_compute_capability=(10, 0))
                        ).logged_tokens == 4_006_592


def test_sglang_b200_backend_of_an_mla_architecture_given_as_bytes_alone():
    """SGLang's use_mla_backend reads the architecture: DeepSeek-V3 given as bytes with no K / V
    split (a raw model file naming DeepseekV3ForCausalLM) runs TensorRT-LLM's MLA backend on a
    B200 as the preset does, whose page of 64 a told 16 is raised to, not the MHA backend."""
    deepseek = load_preset("DeepSeek-V3").profile()
    told_16 = StrategyOptions(gpu_compute_capability=(10, 0), sglang_page_size=16)
    assert deepseek.mla and sm100_backend(deepseek, told_16) == "trtllm_mla"
    bytes_alone = replace(deepseek, kv_tensor_bytes=(), kv_dtype=None)
    assert not bytes_alone.mla
    assert sm100_backend(bytes_alone, told_16) == "trtllm_mla"
    assert sglang_default_page("B200 192GB", bytes_alone, told_16).page == 64
