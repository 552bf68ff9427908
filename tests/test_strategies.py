"""Strategies against numbers derived by hand from SPEC sections 2 and 3.

Each expected value is written as the arithmetic that produces it (from the SPEC formulas and
the profile's bytes), so a reader can check it without running the code.
"""

from __future__ import annotations

import json
import re
from dataclasses import fields, replace
from fractions import Fraction
from pathlib import Path

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
from test_hf_config import BAILING as BAILING_CONFIG

from flatkv.budget import GPU_COMPUTE_CAPABILITIES
from flatkv.hf_config import spec_from_hf_config
from flatkv.log_check import MISSING, SAME, check_log
from flatkv.plan import plan_tensors
from flatkv.presets import load_preset
from flatkv.profile import CacheProfile
from flatkv.strategies import (
    CATEGORIES,
    STRATEGIES,
    StrategyOptions,
    StrategyResult,
    compare,
    logged_as,
    model_blocker,
    run_strategy,
)
from flatkv.strategies.base import EXTRAS, request_pages
from flatkv.strategies.sglang_log import NO_SWA_SPLIT_LINE
from flatkv.strategies.vllm import block_bytes as vllm_block_bytes
from flatkv.strategies.vllm import (
    checkpoint_blocks_kept,
    flashkda_refusal,
    mla_dtype_refusal,
    runs_all_as_align,
)
from flatkv.strategies.vllm import ssm_dtype as vllm_ssm_dtype
from flatkv.strategies.vllm_log import (
    ALL_AS_ALIGN_LOG,
    CURRENT_LOG,
    MODE_ALL_DEPRECATED_LOG,
    MODE_ALL_V1_RUNNER_DRAFTING_LOG,
    MODE_ALL_V1_RUNNER_LOG,
    mode_all_log,
    warmup_lines,
)
from flatkv.strategies.vllm_releases import (
    NULL_BLOCK_CHECKED_SINCE,
    checkpoints_kept,
    last_served_text,
    null_block_checked,
    release_key,
)
from flatkv.strategy_notes import WONT_START, why_not_label

# ------------------------------------------------------------------------------------------
# The anchor: vLLM's own log for Qwen3-Next-80B-A3B-Instruct, --tp 2, bf16, 44.59 GiB.


def test_anchor_budget_is_floor_of_44_59_gib():
    assert ANCHOR_BUDGET == 4459 * 2**30 // 100


def test_vllm_anchor_matches_vllm_log():
    r = run_strategy("vllm", qwen3_next_tp2(), budget_bytes=ANCHOR_BUDGET,
                     context_tokens=ANCHOR_CONTEXT)
    assert r.applies
    assert r.block_size == 544  # "Setting attention block size to 544 tokens"
    assert round(r.extras["state_padding_fraction"], 4) == 0.0149  # "Padding ... by 1.49%"
    assert r.num_blocks == 7_162
    assert r.older_logged_tokens == 973_760  # "GPU KV cache size: 973,760 tokens"
    assert r.logged_tokens == int(7_162 / 485 * 262_144) == 3_871_083  # current vLLM's line
    assert r.capacity_tokens == (7_162 - 3) * 544  # beside one request's 3 state pages
    assert round(r.max_concurrency, 2) == 14.77  # "Maximum concurrency ... 14.77x"
    d = r.to_dict()
    assert (d["block_size"], d["num_blocks"], d["older_logged_tokens"]) == (544, 7_162, 973_760)
    assert d["logged_tokens"] == 3_871_083
    assert round(d["state_padding_fraction"], 4) == 0.0149
    assert round(d["max_concurrency"], 2) == 14.77
    json.dumps(d)  # JSON-ready


def test_vllm_older_log_counts_max_model_len_when_a_state_block_is_shorter_than_p():
    # Mode none sizes a state group's block at max_model_len; the older log line multiplies by
    # the smallest block size of any group, so a context under P = 544 is what it counts.
    r = run_strategy("vllm", qwen3_next_tp2(), budget_bytes=ANCHOR_BUDGET, context_tokens=500)
    assert r.num_blocks == 7_162  # the budget alone fixes the blocks
    assert r.older_logged_tokens == 7_162 // 4 * 500 == 895_000
    assert r.logged_tokens == int(7_162 / 4 * 500) == 895_250  # 4 blocks per request
    longer = run_strategy("vllm", qwen3_next_tp2(), budget_bytes=ANCHOR_BUDGET,
                          context_tokens=544)
    assert longer.older_logged_tokens == 7_162 // 4 * 544 == 973_760  # min(P, L) = P


def test_vllm_older_log_only_for_options_vllm_0_19_ran():
    # (a) 0.19's defaults (mode none, no checkpoint block): SPEC 3.1's anchor log, 973,760
    qwen = replace(qwen3_next_tp2(), architectures=("Qwen3NextForCausalLM",))
    def run(**options):
        return run_strategy("vllm", qwen, budget_bytes=ANCHOR_BUDGET,
                            context_tokens=ANCHOR_CONTEXT, options=StrategyOptions(**options))
    assert run().older_logged_tokens == 7_162 // 4 * 544 == 973_760
    assert "older_log_none" not in run().extras
    # (b) align with a prefill checkpoint block (GDN on FlashInfer, vLLM 0.33+): A = lcm(16,
    # 64), P = 64 x ceil(548,864 / (64 x 1,024)) = 576, 6,764 blocks; 0.19 kept no such block,
    # so no older figure (nor its two-line form for a log check), and the math says why
    ckpt = run(mamba_cache_mode="align", prefill_checkpoint_blocks=1)
    assert (ckpt.block_size, ckpt.num_blocks) == (64 * -(-548_864 // 65_536), 6_764) == (
        576, ANCHOR_BUDGET // (576 * 1_024) // 12)
    assert ckpt.logged_tokens == int(6_764 / (-(-262_144 // 576) + 3 * 3) * 262_144) == 3_813_208
    why = ("vLLM 0.19 and earlier had no prefill checkpoint blocks (vLLM 0.33 and later keep "
           "them)")
    assert ckpt.older_logged_tokens is None and ckpt.extras["older_log_none"] == why
    assert f"older_logged_tokens: none, {why}" in ckpt.formulas
    assert ckpt.to_dict()["older_logged_tokens"] is None
    assert all("0.19" not in name for forms in ckpt.extras["log_line_forms"].values()
               for name, _ in forms)
    # a Mamba2 model's block came in 0.32; other modes ignore the option: the figure stays
    nemotron = run_strategy("vllm", replace(nemotron_h_8b(), architectures=(
        "NemotronHForCausalLM",)), budget_bytes=ANCHOR_BUDGET, context_tokens=ANCHOR_CONTEXT,
        options=StrategyOptions(mamba_cache_mode="align", prefill_checkpoint_blocks=1))
    assert nemotron.extras["older_log_none"] == why.replace("0.33", "0.32")
    assert run(prefill_checkpoint_blocks=1).older_logged_tokens == 973_760
    # (c) mode all: 0.19.0 runs it (its config/cache.py:25, MambaCacheMode), falling back to
    # align for a class without SupportsMambaPrefixCaching (models/config.py:447-456): stays.
    # Qwen3-Next runs it as align without checkpoint blocks (0.31, the last release with all):
    # the anchor's P and blocks, whatever the checkpoint option says
    assert run(mamba_cache_mode="all").older_logged_tokens == 973_760
    assert run(mamba_cache_mode="all", prefill_checkpoint_blocks=1).older_logged_tokens == 973_760
    # a model no release before 0.31 serves (LFM3, after mode all): none, and why
    lfm3 = run_strategy("vllm", replace(qwen, architectures=("Lfm3ForCausalLM",)),
                        budget_bytes=ANCHOR_BUDGET, context_tokens=ANCHOR_CONTEXT)
    assert lfm3.older_logged_tokens is None
    assert lfm3.extras["older_log_none"] == ("vLLM 0.19 and earlier do not serve "
                                              "Lfm3ForCausalLM (vLLM 0.19's model registry "
                                              "has no such class)")


@pytest.mark.parametrize("arch", [
    # Qwen3.5's text-only class (a qwen3_5_text config without architectures defaults to it)
    # and the MoE's; Ling-3.0's; Kimi-K3's; attention-only classes 0.34 serves, 0.19 not
    "Qwen3_5ForCausalLM", "Qwen3_5MoeForCausalLM", "BailingMoeV3ForCausalLM",
    "KimiK3ForConditionalGeneration", "Glm5NextForConditionalGeneration"])
def test_vllm_older_log_none_for_a_class_vllm_0_19_does_not_serve(arch):
    # vLLM 0.19.0's registry (model_executor/models/registry.py) has none of these, so it
    # logged no "GPU KV cache size" of such a model: the current figure stays, the older none
    qwen = qwen3_next_tp2()
    r = run_strategy("vllm", replace(qwen, architectures=(arch,)), budget_bytes=ANCHOR_BUDGET,
                     context_tokens=ANCHOR_CONTEXT)
    assert r.applies and r.older_logged_tokens is None
    assert r.extras["older_log_none"] == (f"vLLM 0.19 and earlier do not serve {arch} (vLLM "
                                          "0.19's model registry has no such class)")
    assert f"older_logged_tokens: none, {r.extras['older_log_none']}" in r.formulas


def test_vllm_older_log_of_a_class_vllm_0_19_serves():
    # Qwen3.5's preset class, Qwen3_5ForConditionalGeneration, is in 0.19.0's registry
    # (registry.py:515): the anchor's figure stays on that class, and so does a model whose
    # architectures name a served class after one not (vLLM serves it by the first its
    # registry holds)
    qwen = qwen3_next_tp2()
    for archs in (("Qwen3_5ForConditionalGeneration",),
                  ("Qwen3_5ForCausalLM", "Qwen3_5ForConditionalGeneration")):
        r = run_strategy("vllm", replace(qwen, architectures=archs), budget_bytes=ANCHOR_BUDGET,
                         context_tokens=ANCHOR_CONTEXT)
        assert r.older_logged_tokens == 7_162 // 4 * 544 == 973_760
    # Cohere2's dense class is 0.19's, its MoE's not, on Llama-3.1-8B's shapes (128 KiB a
    # token, block 16: 40 GiB // 2 MiB = 20,480 blocks of 16 tokens)
    llama = load_preset("Llama-3.1-8B").profile()
    dense, moe = (run_strategy("vllm", replace(llama, architectures=(arch,)),
                               budget_bytes=GIB40, context_tokens=32_768)
                  for arch in ("Cohere2ForCausalLM", "Cohere2MoeForCausalLM"))
    assert dense.older_logged_tokens == GIB40 // (16 * 131_072) * 16 == 327_680
    assert moe.applies and moe.older_logged_tokens is None


@pytest.mark.parametrize(("name", "why"), [
    # the release each class's block came in (GDN's on FlashInfer, Mamba2's MambaMixer2)
    ("Qwen3-Next-80B-A3B", "(vLLM 0.33 and later keep them)"),
    ("Nemotron-H-8B", "(vLLM 0.32 and later keep them)"),
    # Jamba's MambaMixer (Mamba1) takes MambaSpec's default, num_prefill_checkpoint_blocks 0,
    # in every release up to 0.34: it said 0.32 and later keep them
    ("Jamba-1.5-Mini", "(no vLLM release up to 0.34 keeps them for JambaForCausalLM)"),
    # raw layers name no class: both classes' releases, where it said 0.32 alone
    (None, "(vLLM 0.32 and later keep them for a Mamba2 class, 0.33 and later for a GDN "
           "class; this model names no class)"),
])
def test_vllm_older_log_checkpoint_words_name_the_class_release(name, why):
    profile = load_preset(name).profile() if name else qwen3_next_tp2()
    assert bool(profile.architectures) == bool(name)
    r = run_strategy("vllm", profile, budget_bytes=ANCHOR_BUDGET, context_tokens=65_536,
                     options=StrategyOptions(mamba_cache_mode="align",
                                             prefill_checkpoint_blocks=1))
    assert r.older_logged_tokens is None
    assert r.extras["older_log_none"] == ("vLLM 0.19 and earlier had no prefill checkpoint "
                                          "blocks " + why)


def test_vllm_keeps_a_kda_prefill_checkpoint_block_where_its_prefill_runs_on_flashkda():
    # vLLM 0.34: Kimi-Linear's config has no use_full_rank_gate, so its KDA layers are
    # KimiGatedDeltaNetAttention, Triton alone, MambaSpec's default: no checkpoint block on any
    # GPU. Kimi-K3's KimiK3DeltaAttention and Glm5Next's KDA keep one where FlashKDA runs: SM
    # 9.x, 10.x (12.x), head dim 128, bfloat16 (a float16 KV cache is a float16 model)
    spec = load_preset("Kimi-Linear-48B-A3B")
    kimi = spec.profile()
    assert kimi.gdn_key_head_dims == {128} and kimi.architectures == ("KimiLinearForCausalLM",)
    assert {checkpoint_blocks_kept(kimi, c) for c in GPU_COMPUTE_CAPABILITIES.values()} == {0}
    assert checkpoint_blocks_kept(kimi, None) == 0
    for arch, since in (("KimiK3ForConditionalGeneration", "0.31"),
                        ("KimiK31ForConditionalGeneration", "0.31"),
                        ("Glm5NextForCausalLM", "0.32"),
                        ("Glm5NextForConditionalGeneration", "0.32")):
        kda = replace(kimi, architectures=(arch,))
        assert {gpu for gpu, c in GPU_COMPUTE_CAPABILITIES.items()
                if checkpoint_blocks_kept(kda, c)} == {"H100 80GB", "H200 141GB",
                                                       "B200 192GB"}, arch
        assert checkpoint_blocks_kept(kda, (12, 0)) == 1  # FlashKDA's SM 12.x too
        assert checkpoint_blocks_kept(kda, None) is None  # the GPU decides: not known
        # FlashKDA takes heads of 128 in bfloat16 on any GPU (kimi_k3/nvidia/kda.py 370-386,
        # glm5next/common/kda.py 141-164): heads of 64 or a float16 model (its KV cache's
        # dtype under --kv-cache-dtype auto) prefill on Triton on every GPU, so 0 checkpoint
        # blocks with no GPU said too, not "not known"
        half = replace(spec.with_options(kv_dtype="float16").profile(), architectures=(arch,))
        for never in (replace(kda, gdn_key_head_dims={64}), half):
            assert {checkpoint_blocks_kept(never, c) for c in (
                None, (12, 0), *GPU_COMPUTE_CAPABILITIES.values())} == {0}, arch
        # dims not known (raw bytes: this very model exported and loaded back, heads of 128)
        # are no refusal: 0 on a GPU told, as for GDN, and not known with no GPU said; it read
        # "on Triton on every GPU: this model's KDA heads are not known"
        unknown = replace(kda, gdn_key_head_dims=())
        assert {checkpoint_blocks_kept(unknown, c) for c in (
            (12, 0), *GPU_COMPUTE_CAPABILITIES.values())} == {0}, arch
        assert checkpoint_blocks_kept(unknown, None) is None
        assert flashkda_refusal(unknown) == ""
        told = run_strategy("vllm", kda, budget_bytes=ANCHOR_BUDGET, context_tokens=65_536,
                            options=StrategyOptions(mamba_cache_mode="align",
                                                    prefill_checkpoint_blocks=1))
        # (0.19 served none of these classes, so that comes first: its registry has none)
        assert told.extras["older_log_none"] == (f"vLLM 0.19 and earlier do not serve {arch} "
                                                 "(vLLM 0.19's model registry has no such "
                                                 "class)")
        assert checkpoints_kept(kda) == f"vLLM {since} and later keep them"
    # the figures on the H100 80GB x 0.9 (76,968,728,985 B), align, block 64, 1,048,576
    # tokens: a KDA state of 3 x 12,288 x 2 B conv + 32 x 128 x 128 x 4 B ssm = 2,170,880 B
    # pads an MLA page of 1,152 B a token: P = 128 x cdiv(2,170,880, 128 x 1,152) = 1,920;
    # blocks of 7 pages (3 KDA groups of 7 layers, 1 MLA), 76,968,728,985 // (7 x 1,920 x
    # 1,152) = 4,971; a request cdiv(1,048,576, 1,920) = 547 MLA pages and 3 groups x 2 state
    # pages, + 3 with Kimi-K3's checkpoint block: Kimi-Linear's 4,971 x 1,048,576 // 553,
    # as vLLM 0.34 logs it (no block kept), Kimi-K3's // 556
    assert 3 * 12_288 * 2 + 32 * 128 * 128 * 4 == 2_170_880
    assert 128 * -(-2_170_880 // (128 * 1_152)) == 1_920 and -(-1_048_576 // 1_920) == 547
    h100 = 76_968_728_985
    assert h100 // (7 * 1_920 * 1_152) == 4_971
    for profile, kept, tokens in ((kimi, 0, 4_971 * 1_048_576 // 553),
                                  (replace(kimi, architectures=(
                                      "KimiK3ForConditionalGeneration",)), 1,
                                   4_971 * 1_048_576 // 556)):
        assert checkpoint_blocks_kept(profile, (9, 0)) == kept
        r = run_strategy("vllm", profile, budget_bytes=h100, context_tokens=1_048_576,
                         options=StrategyOptions(block_size=64, mamba_cache_mode="align",
                                                 prefill_checkpoint_blocks=kept))
        assert (r.block_size, r.num_blocks, r.logged_tokens) == (1_920, 4_971, tokens)
    assert (4_971 * 1_048_576 // 553, 4_971 * 1_048_576 // 556) == (9_425_807, 9_374_948)


# vLLM 0.19's own layout, its wheel (vllm==0.19.0) read: model_executor/models/config.py:200-317
# (HybridAttentionMambaModelConfig) makes a hybrid's P max(--block-size, a x cdiv(state page,
# a x attention bytes a token)), a = 16, an MLA model's 64 (config.py:206-218), in mamba cache
# mode all lcm(chunk, a) (config.py:261-265); its "GPU KV cache size" is num_blocks // groups x
# the smallest group block (v1/core/kv_cache_utils.py:1297-1319) of that layout.
GIB40 = 40 * 2**30


def _older(name: str, **options) -> StrategyResult:
    return run_strategy("vllm", load_preset(name).profile(), budget_bytes=GIB40,
                        context_tokens=32_768, options=StrategyOptions(**options))


def test_vllm_older_log_takes_vllm_0_19s_p_above_the_block_size():
    # --block-size 64: current releases page by A = 64, P = 64 x cdiv(548,864, 64 x 1,024) =
    # 576 (6,764 blocks); 0.19 aligns to 16 and keeps the larger of it and the block size:
    # max(64, 16 x cdiv(548,864, 16 x 1,024) = 544) = 544, the anchor's 7,162 blocks, so its
    # log reads the anchor's 973,760 (it said 6,764 // 4 x 576 = 974,016)
    r = run_strategy("vllm", qwen3_next_tp2(), budget_bytes=ANCHOR_BUDGET,
                     context_tokens=ANCHOR_CONTEXT, options=StrategyOptions(block_size=64))
    assert (r.block_size, r.num_blocks) == (576, ANCHOR_BUDGET // (576 * 1024) // 12) == (
        576, 6_764)
    assert r.extras["older_block_size"] == 544
    assert r.older_logged_tokens == ANCHOR_BUDGET // (544 * 1024) // 12 // 4 * 544 == 973_760
    assert ("vLLM 0.19's P = max(block_size 64, a x cdiv(state page 548,864 B, a x 1,024 B)) = "
            "544, a = 16 (its kernel alignment), as its HybridAttentionMambaModelConfig sizes it; "
            "its "
            f"num_blocks = {ANCHOR_BUDGET:,} // 557,056 // 12 = 7,162") in r.formulas
    # where 0.19's P is the current one, nothing is said: the anchor at block 16
    anchor = run_strategy("vllm", qwen3_next_tp2(), budget_bytes=ANCHOR_BUDGET,
                          context_tokens=ANCHOR_CONTEXT)
    assert "older_block_size" not in anchor.extras and anchor.older_logged_tokens == 973_760


def test_vllm_older_log_of_drafted_conv_rows_is_vllm_0_19s():
    # Falcon-H1-7B: FalconH1's config shape passes no num_spec in 0.19 (falcon_h1.py:529-560),
    # so P is sized from 21,504 + 1,572,864 = 1,594,368 B: 16 x cdiv(1,594,368, 16 x 1,024) =
    # 1,568, a page of 1,605,632 B, while its MambaMixer2 layers keep the drafted rows
    # (mamba_mixer2.py:492,902-911), 7,168 B each (21,504 / 3 rows)
    one = _older("Falcon-H1-7B", mamba_cache_mode="align", speculative_tokens=1)
    assert 1_594_368 + 7_168 <= 1_568 * 1_024  # one row fits: P is 1,568 either way
    assert (one.block_size, one.num_blocks) == (1_568, GIB40 // (1_568 * 1_024) // 44) == (
        1_568, 607)
    assert one.older_logged_tokens == 607 // 2 * 1_568 == 475_104
    # two rows do not: 1,608,704 B past the 1,605,632 B page, so 0.19 fails at start-up
    # (MambaSpec.page_size_bytes asserts page_size_padded >= page_size,
    # v1/kv_cache_interface.py:283-290; vLLM issue #57721); 0.32+ size P with the rows: 1,584
    two = _older("Falcon-H1-7B", mamba_cache_mode="align", speculative_tokens=2)
    assert two.block_size == 16 * -(-(1_594_368 + 2 * 7_168) // (16 * 1_024)) == 1_584
    assert two.older_logged_tokens is None  # it said 601 // 2 x 1,584 = 475,200
    assert two.extras["older_log_none"] == (
        "vLLM 0.19 and earlier do not start: vLLM 0.19's P = max(block_size 16, a x cdiv(state "
        "page 1,594,368 B, a x 1,024 B)) = 1,568, a = 16 (its kernel alignment), as its "
        "HybridAttentionMambaModelConfig sizes it, and its page (1,605,632 B) does not hold the "
        "state its layers keep with the 2 drafted conv rows (1,608,704 B; "
        "MambaSpec.page_size_bytes asserts it fits)")
    # granite-4.0-h-small: 16 x cdiv(2,147,840, 16 x 4,096) = 528, a 2,162,688 B page, which
    # one drafted row (16,896 B) already outgrows (granitemoehybrid.py:618-640)
    granite = _older("granite-4.0-h-small", speculative_tokens=1)
    assert granite.older_logged_tokens is None
    assert "(2,164,736 B; MambaSpec" in granite.extras["older_log_none"]
    # in mode all the layout is 0.31's, whose P leaves the rows out as 0.19's does: lcm(128, 16)
    # x cdiv(1,594,368, 128 x 1,024) = 1,664, which holds them; the figure stands
    drafted_all = _older("Falcon-H1-7B", mamba_cache_mode="all", speculative_tokens=2)
    assert (drafted_all.block_size, drafted_all.num_blocks) == (1_664, 572)
    assert drafted_all.older_logged_tokens == 572 // 2 * 1_664 == 475_904


def test_vllm_older_log_of_kimi_linear_is_vllm_0_19s():
    # Kimi Linear's MLA hybrid: 0.19 aligns P to 64 (config.py:206-210, 128 on CUTLASS MLA);
    # current releases to 128. State 73,728 + 2,097,152 = 2,170,880 B, 1,152 B a token:
    # 64 x cdiv(2,170,880, 64 x 1,152) = 64 x 30 = 1,920 = 128 x 15, the same P; 20 KDA + 7
    # MLA layers in 4 groups of 7; 40 GiB // (1,920 x 1,152) // 7 = 2,774 blocks
    kimi = _older("Kimi-Linear-48B-A3B")
    assert (kimi.block_size, kimi.num_blocks) == (1_920, GIB40 // (1_920 * 1_152) // 7) == (
        1_920, 2_774)
    assert kimi.older_logged_tokens == 2_774 // 4 * 1_920 == 1_330_560
    assert "older_block_size" not in kimi.extras
    # drafted tokens: 0.34 sizes P from the widened conv (5 rows, 122,880 B): 128 x
    # cdiv(2,220,032, 128 x 1,152) = 2,048; 0.19's kda_state_shape leaves num_spec unused
    # (layers/mamba/mamba_utils.py:203-233), so its P and figure stay (it said 2,600 // 4 x
    # 2,048 = 1,331,200)
    drafted = _older("Kimi-Linear-48B-A3B", speculative_tokens=2)
    assert (drafted.block_size, drafted.num_blocks) == (2_048, 2_600)
    assert drafted.extras["older_block_size"] == 1_920
    assert drafted.older_logged_tokens == 1_330_560
    # told a bfloat16 recurrent state (--mamba-ssm-cache-dtype bfloat16): 0.34 keeps it, P =
    # 128 x cdiv(73,728 + 1,048,576, 128 x 1,152) = 1,024; 0.19's kda_state_dtype keeps float32
    # whatever is told (mamba_utils.py:90-96), so its P and figure are the float32 ones
    told = run_strategy("vllm", load_preset("Kimi-Linear-48B-A3B").profile(), budget_bytes=GIB40,
                        context_tokens=32_768, options=StrategyOptions(vllm_ssm_dtype="bfloat16"))
    assert told.block_size == 128 * -(-(73_728 + 1_048_576) // (128 * 1_152)) == 1_024
    assert told.extras["older_block_size"] == 1_920
    assert told.older_logged_tokens == 1_330_560  # it said num_blocks // 4 x 1,024 = 1,331,200
    assert ("vLLM 0.19's P = max(block_size 16, a x cdiv(state page 2,170,880 B, a x 1,152 B)) "
            "= 1,920, a = 64 (its MLA alignment), as its HybridAttentionMambaModelConfig sizes "
            "it, the ssm "
            "state in float32, not the bfloat16 told (its kda_state_dtype); its num_blocks = "
            "42,949,672,960 // 2,211,840 // 7 = 2,774") in told.formulas


def test_vllm_older_log_in_mode_all_is_vllm_0_19s():
    # 0.19 has mode all (config/cache.py:25) and aligns P to lcm(chunk, 16) (config.py:261-265):
    # Nemotron-H-8B's chunk 128, its ssm state in float16 (0.19's NemotronH hook: the config's,
    # else float16, models/config.py:483-500), 61,440 + 128 x 64 x 128 x 2 = 2,158,592 B:
    # 128 x cdiv(2,158,592, 128 x 4,096) = 640, 40 GiB // (640 x 4,096) // 4 = 4,096 blocks;
    # 0.31 and 0.34 keep it in float32 (4,255,744 B): 128 x cdiv(4,255,744, 128 x 4,096) =
    # 1,152, 40 GiB // (1,152 x 4,096) // 4 = 2,275 blocks
    nemotron = _older("Nemotron-H-8B", mamba_cache_mode="all")
    assert (nemotron.block_size, nemotron.num_blocks) == (1_152, 2_275)
    assert 40 * 2**30 // (1_152 * 4_096) // 4 == 2_275
    assert nemotron.older_logged_tokens == 4_096 // 7 * 640 == 374_400
    assert 40 * 2**30 // (640 * 4_096) // 4 == 4_096
    assert nemotron.extras["older_block_size"] == 640
    # at --block-size 1024 0.19 keeps 1,024 for attention and snapshots state every 640
    # tokens (mamba_block_size, config.py:265), which 1,024 is no multiple of: its hybrid
    # coordinator refuses (kv_cache_coordinator.py:402-405); 0.31 pages both by
    # lcm(128, 1,024) x cdiv(4,255,744, 1,024 x 4,096) = 2,048 (its float32 state)
    wide = _older("Nemotron-H-8B", mamba_cache_mode="all", block_size=1024)
    assert wide.block_size == 2048 and wide.older_logged_tokens is None
    assert wide.extras["older_log_none"].endswith(
        "its state block a x cdiv(...) = 640 (mamba_block_size), which block_size 1,024 is no "
        "multiple of (HybridKVCacheCoordinator asserts \"block_size must be divisible by "
        "hash_block_size\")")
    # Falcon-H1-7B (chunk 128): 0.31 takes c = lcm(128, 1,024), P = 2,048; 0.19 max(1,024,
    # 128 x cdiv(1,594,368, 128 x 1,024) = 1,664) = 1,664, 40 GiB // (1,664 x 1,024) // 44 =
    # 572 blocks (it said 465 // 2 x 2,048 = 475,136)
    falcon = _older("Falcon-H1-7B", mamba_cache_mode="all", block_size=1024)
    assert (falcon.block_size, falcon.num_blocks) == (2_048, 465)
    assert falcon.older_logged_tokens == 572 // 2 * 1_664 == 475_904


def test_vllm_anchor_by_hand():
    r = run_strategy("vllm", qwen3_next_tp2(), budget_bytes=ANCHOR_BUDGET,
                     context_tokens=ANCHOR_CONTEXT)
    state = 24_576 + 524_288  # 548,864
    p = 16 * -(-state // (16 * 1024))  # 16 x 34
    page = p * 1024
    assert (p, page) == (544, 557_056)
    assert r.extras["state_padding_exact"] == [page - state, state]
    assert (r.extras["group_size"], r.extras["num_groups"]) == (12, 4)
    assert r.block_bytes == 12 * page
    assert r.num_blocks == ANCHOR_BUDGET // page // 12
    assert r.older_logged_tokens == r.num_blocks // 4 * p
    assert r.capacity_tokens == (r.num_blocks - 3) * p
    # one request: ceil(262,144 / 544) = 482 full pages + 1 page in each of 3 state groups
    assert (r.concurrency_numerator, r.concurrency_denominator) == (7_162, 482 + 3)
    # ownership in proportion 482:1:1:1 of 7,162 ids: 7,162 x 482 / 485 = 7,117.7 and
    # 3 x 14.77; largest remainders give the state groups 15 each, full 7,162 - 45 = 7,117
    assert r.extras["owned_units"] == {
        "full_attention": 7_117, "linear_attention.0": 15, "linear_attention.1": 15,
        "linear_attention.2": 15,
    }
    assert bd(r) == {
        "kv_history": 7_117 * 12 * page,
        "state": 45 * 12 * state,
        "row_padding": 0,
        "state_page_padding": 45 * 12 * (page - state),
        "padding_layers": 0,
        "dead_weight": 0,
        "idle_pool": 0,
        "unused": ANCHOR_BUDGET - 7_162 * 12 * page,
    }


def test_vllm_capacity_formula_line_states_its_numbers():
    r = run_strategy("vllm", qwen3_next_tp2(), budget_bytes=ANCHOR_BUDGET,
                     context_tokens=ANCHOR_CONTEXT)
    assert ("capacity_tokens = N x P, N = (7,162 - 3 state groups x 1 page per request, "
            "mode none) // 1 attention group = 7,159; 7,159 x 544 = 3,894,496") in r.formulas


def test_vllm_without_a_context_still_checks_a_one_token_request():
    # vLLM always has a max_model_len (the model's when none is given), so one token's pages
    # in its 4 groups (3 state, 1 attention), a block of 12 pages of 557,056 B each, must fit
    # beside the null block: 4 x 6,684,672 = 26,738,688 B, so 5 blocks = 33,423,360 B at least
    block = 12 * 557_056
    tiny = run_strategy("vllm", qwen3_next_tp2(), budget_bytes=5 * block - 1,
                        context_tokens=None)
    assert not tiny.applies and tiny.reason == (
        "vLLM refuses to start: one request of 1 token (the least any max_model_len asks; no "
        "context given) needs 26,738,688 B of KV cache (25.50 MiB: its pages in every group, "
        "12 layers a page, at P 544), more than the 33,423,359 B (31.87 MiB) available less "
        "the 6,684,672 B block it holds back as its null block (\"To serve at least one "
        "request with the model's max seq len\"); not even one token fits: give a budget of "
        "at least 33,423,360 B")
    least = run_strategy("vllm", qwen3_next_tp2(), budget_bytes=5 * block, context_tokens=None)
    assert (least.num_blocks, least.capacity_tokens) == (5, (5 - 3) * 544)


def test_vllm_names_a_one_token_context_in_the_singular():
    # a context of 1 token given: the same 4 pages of 6,684,672 B as no context (above), named
    # as the context given, "1 token"
    block = 12 * 557_056
    one = run_strategy("vllm", qwen3_next_tp2(), budget_bytes=5 * block - 1, context_tokens=1)
    assert not one.applies and one.reason.startswith(
        "vLLM refuses to start: one request of 1 token needs 26,738,688 B of KV cache")


def test_vllm_at_exactly_one_block_has_no_memory_for_the_cache_blocks():
    # vLLM 0.34 checks the budget less the null block's one block (check_enough_kv_cache_memory,
    # kv_cache_planning.py): at exactly one block, 6,684,672 - 6,684,672 = 0 B, which it refuses
    # as "No available memory for the cache blocks" (available_memory <= 0) before it sizes any
    # request; the least budget is still 5 blocks (the one-token request beside the null block).
    # It raises while the engine starts: a start refusal, which Compare labels "won't start"
    block = 12 * 557_056
    for context in (None, 65):
        one = run_strategy("vllm", qwen3_next_tp2(), budget_bytes=block, context_tokens=context)
        assert why_not_label(one) == WONT_START, context
        assert not one.applies and one.reason.startswith(
            "vLLM refuses to start: the budget of 6,684,672 B holds num_blocks = 6,684,672 // "
            "557,056 // 12 = 1 and vLLM needs at least 2 (\"No available memory for the cache "
            "blocks\")"), context
        assert one.reason.endswith("give at least 33,423,360 B"), context


def test_flat_capacity_floors_at_zero_when_the_state_pages_outnumber_the_blocks():
    # Falcon-H1-7B drafting 2 tokens: a request holds 1 + 2 state pages (mode none), and 2
    # blocks hold fewer; our layout has no start-up check, so it plans 0 tokens and says why
    profile = load_preset("Falcon-H1-7B").profile()
    options = StrategyOptions(speculative_tokens=2)
    block = run_strategy("flat", profile, budget_bytes=10**11, options=options).block_bytes
    tiny = run_strategy("flat", profile, budget_bytes=2 * block, options=options)
    assert (tiny.num_blocks, tiny.capacity_tokens) == (2, 0)
    assert ("capacity_tokens = N x P, N = max(0, (2 - 1 state group x 3 pages per request, "
            "mode none, 2 speculative) // 1 attention group) (not even the state pages fit) "
            "= 0; 0 x 1,568 = 0") in tiny.formulas


def test_vllm_align_mode_holds_two_state_pages_per_group():
    r = run_strategy("vllm", qwen3_next_tp2(), budget_bytes=ANCHOR_BUDGET,
                     context_tokens=ANCHOR_CONTEXT,
                     options=StrategyOptions(mamba_cache_mode="align"))
    assert (r.concurrency_numerator, r.concurrency_denominator) == (7_162, 482 + 3 * 2)


def test_vllm_mla_fallback_reads_mla_by_the_latent_not_by_a_kernel_block():
    # TRITON_MLA's multiples of 16 are an MLA model's fallback (vLLM's selector reads use_mla):
    # Llama-3.1-8B's K and V given a kernel block of 32 (a JSON, a link's model_kernel) ran a
    # block size of 48 and was refused 24 naming TRITON_MLA. Its backend's 32 is taken as
    # given: 48 is no multiple of it (give 32 or 64); 24 under it is no multiple of 16 either,
    # which no backend of vLLM 0.34 takes (it ran at A = 32 before): refused, give 32; 16 under
    # it runs at A = 32 (vLLM's own pick), 32 layers x 32 x 4,096 B = 4,194,304 B a block,
    # 42,949,672,960 // 4,194,304 = 10,240 blocks
    llama = replace(load_preset("Llama-3.1-8B").profile(), kernel_block_size=32)
    assert (llama.mla, llama.kv_tensor_bytes) == (False, (2_048, 2_048))
    at = {block: run_strategy("vllm", llama, budget_bytes=40 << 30,
                              options=StrategyOptions(block_size=block)) for block in (16, 24, 48)}
    assert at[48].reason == (
        "vLLM refuses to start: its attention backend pages by multiples of 32 tokens, and "
        "block size 48 is none (\"No valid attention backend found ... block_size not "
        "supported\"): give 32 or 64")
    assert at[24].reason == (
        "vLLM refuses to start: its attention backend pages by multiples of 32 tokens, and "
        "block size 24 is none (\"No valid attention backend found ... block_size not "
        "supported\"): give 32")
    assert (at[16].block_size, at[16].block_bytes, at[16].num_blocks) == (
        32, 32 * 32 * 4_096, (40 << 30) // (32 * 32 * 4_096)) == (32, 4_194_304, 10_240)
    # DeepSeek-V3 (its latent, kernel block 16) unchanged: 24 refused naming TRITON_MLA, 48 runs
    # at 61 x 48 x 1,152 = 3,373,056 B a block
    ds3 = load_preset("DeepSeek-V3").profile()
    odd = run_strategy("vllm", ds3, budget_bytes=40 << 30, options=StrategyOptions(block_size=24))
    assert odd.reason.startswith("vLLM refuses to start: TRITON_MLA, the MLA backend of the "
                                 "least kernel block on every GPU, pages by multiples of 16")
    r = run_strategy("vllm", ds3, budget_bytes=40 << 30, options=StrategyOptions(block_size=48))
    assert (r.block_size, r.block_bytes, r.num_blocks) == (
        48, 61 * 48 * 1_152, (40 << 30) // 3_373_056) == (48, 3_373_056, 12_733)


def test_vllm_kernel_block_size_changes_p():
    # A = 32: P = 32 x cdiv(548,864, 32 x 1,024) = 32 x 17 = 544; A = 64: 64 x 9 = 576
    for a, p in ((32, 32 * 17), (64, 64 * 9)):
        r = run_strategy("vllm", qwen3_next_tp2(), budget_bytes=ANCHOR_BUDGET,
                         options=StrategyOptions(kernel_block_size=a))
        assert r.block_size == p
        assert r.num_blocks == ANCHOR_BUDGET // (p * 1024) // 12


def test_vllm_refuses_a_block_size_off_the_kernel_block_and_logs_p_only_when_it_grows():
    # vLLM 0.34 picks each layer's backend by the block size told: block 24 (or 1,000) is no
    # multiple of the kernel block 16, so no backend is valid, hybrid or not
    llama = CacheProfile(layer_types=(FULL,) * 32, kv_bytes_per_slot=131_072, name="llama")
    for profile in (qwen3_next_tp2(), llama):
        for block, fixes in ((24, "16 or 32"), (1_000, "992 or 1,008")):
            odd = run_strategy("vllm", profile, budget_bytes=GIB8,
                               options=StrategyOptions(block_size=block))
            assert not odd.applies and odd.reason == (
                "vLLM refuses to start: its attention backend pages by multiples of 16 tokens, "
                f"and block size {block:,} is none (\"No valid attention backend found ... "
                f"block_size not supported\"): give {fixes}")
    assert run_strategy("vllm", llama, budget_bytes=GIB8,
                        options=StrategyOptions(block_size=48)).block_size == 48
    # a dense MLA model (FlashMLA's 64 its own) still has TRITON_MLA, multiples of 16, on every
    # GPU: block 96 runs at P 96 (FLASH_ATTN_MLA or TRITON_MLA), block 24 none takes
    mla = CacheProfile(layer_types=(FULL,) * 61, kv_bytes_per_slot=1_152, name="mla",
                       kernel_block_size=64, kv_tensor_bytes=(1_152,), kv_dtype="bfloat16")
    assert run_strategy("vllm", mla, budget_bytes=GIB8,
                        options=StrategyOptions(block_size=96)).block_size == 96
    odd = run_strategy("vllm", mla, budget_bytes=GIB8, options=StrategyOptions(block_size=24))
    assert odd.reason == (
        "vLLM refuses to start: TRITON_MLA, the MLA backend of the least kernel block on every "
        "GPU, pages by multiples of 16 tokens, and block size 24 is none (\"No valid attention "
        "backend found ... block_size not supported\"): give 16 or 32")
    # under 16 too: told --block-size 8 vLLM 0.34's selector checks every MLA backend against
    # 8 (TRITON_MLA's MultipleOf(16) the least) and none is valid, so it raises. It ran at
    # P 16 instead, and on a Blackwell the note called that "P 16 is a block size told"
    for block in (1, 8):
        for gpu in (None, (10, 0)):
            small = run_strategy("vllm", mla, budget_bytes=GIB8, options=StrategyOptions(
                block_size=block, gpu_compute_capability=gpu))
            assert not small.applies and small.reason == (
                "vLLM refuses to start: TRITON_MLA, the MLA backend of the least kernel block "
                f"on every GPU, pages by multiples of 16 tokens, and block size {block} is none "
                "(\"No valid attention backend found ... block_size not supported\"): give 16")
    # told the kernel (a run pinned to FlashMLA), 96 is no multiple of its 64
    pinned = run_strategy("vllm", mla, budget_bytes=GIB8,
                          options=StrategyOptions(block_size=96, kernel_block_size=64))
    assert pinned.reason.startswith("vLLM refuses to start: its attention backend pages by "
                                    "multiples of 64 tokens, and block size 96 is none")
    # block 544 is P already: vLLM logs no change, and the why quotes none
    at_p = run_strategy("vllm", qwen3_next_tp2(), budget_bytes=ANCHOR_BUDGET,
                        options=StrategyOptions(block_size=544))
    assert at_p.block_size == 544 and "Setting attention block size" not in at_p.why_block_size
    assert at_p.why_block_size.endswith("whose attention page covers the state page")
    # block 32 grows to 544 (32 x cdiv(548,864, 32 x 1,024) = 32 x 17): logged
    grown = run_strategy("vllm", qwen3_next_tp2(), budget_bytes=ANCHOR_BUDGET,
                         options=StrategyOptions(block_size=32))
    assert grown.why_block_size.endswith("(\"Setting attention block size to 544 tokens\")")


def test_vllm_fails_deepseek_v3_2_told_32s_on_a_blackwell_at_its_indexer():
    # On SM 10 vLLM 0.34's selector takes a told 32 (or 96) for DeepSeek-V3.2 on
    # FLASHINFER_MLA_SPARSE (MultipleOf(32): mla/flashinfer_mla_sparse.py 96-97), but the
    # worker's select_common_block_size (v1/worker/utils.py 508-549) finds no kernel block
    # serving it and the indexer's keys, DEEPSEEK_V32_INDEXER's 64 alone (mla/indexer.py
    # 237-238): "No common block size for 32 (FLASHINFER_MLA_SPARSE: [MultipleOf(32)];
    # DEEPSEEK_V32_INDEXER: [64])." (bench/vllm_check.py check_told_blocks). 48 and 16s
    # off 32s find no backend there either (FLASHMLA_SPARSE's 64s, FLASHINFER_MLA_SPARSE's
    # 32s); 128 runs at 128: 61 x 128 x 1,284 = 10,025,472 B a block, 40 GiB // it = 4,284
    sparse = load_preset("DeepSeek-V3.2").profile()

    def told(block):
        return run_strategy("vllm", sparse, budget_bytes=40 << 30, options=StrategyOptions(
            block_size=block, gpu_compute_capability=(10, 0)))

    for block, fixes in ((32, "give 64 (what it picks when not told)"),
                         (96, "give 64 (what it picks when not told) or 128")):
        assert not told(block).applies and told(block).reason == (
            f"vLLM fails at start-up: told --block-size {block} on SM 10.0 (B200) it runs "
            "DeepSeek-V3.2's sparse MLA on FLASHINFER_MLA_SPARSE, which pages by multiples of 32 "
            "tokens, but its indexer's keys (DEEPSEEK_V32_INDEXER) page by 64 alone, and no "
            f"kernel block serves both (\"No common block size for {block} ... "
            f"DEEPSEEK_V32_INDEXER: [64])\"): {fixes}")
    assert told(48).reason.startswith("vLLM refuses to start: its FlashMLA sparse backend")
    assert (told(128).block_size, told(128).num_blocks) == (
        128, (40 << 30) // (61 * 128 * 1_284)) == (128, 4_284)


def test_vllm_says_deepseek_v3_2_at_block_16_reads_as_no_block_told():
    # FlatKV's default 16 stands for vLLM told no --block-size (P 64); vLLM 0.34 told 16
    # refuses it on a Hopper, and the first formula line says so (CLI and app show the
    # formulas), on any GPU said; not at 64, nor for a dense MLA model at 16
    sparse = load_preset("DeepSeek-V3.2").profile()
    note = ("block size 16 read as no --block-size told: vLLM then picks 64, FlashMLA sparse's "
            "(these figures); told --block-size 16, vLLM 0.34 refuses DeepSeek-V3.2's sparse MLA "
            "on a Hopper (\"No valid attention backend found ... block_size not supported\"; a "
            "Blackwell's sparse backends page by 64s and 32s alike): leave --block-size out of "
            "vLLM's command line to match these figures")
    for capability in (None, (9, 0), (10, 0)):
        at16 = run_strategy("vllm", sparse, budget_bytes=40 << 30, options=StrategyOptions(
            gpu_compute_capability=capability))
        assert (at16.block_size, at16.formulas[0]) == (64, note)
    at64 = run_strategy("vllm", sparse, budget_bytes=40 << 30,
                        options=StrategyOptions(block_size=64))
    dense = run_strategy("vllm", load_preset("DeepSeek-V3").profile(), budget_bytes=40 << 30)
    assert note not in at64.formulas and not any("read as no --block-size" in f
                                                 for f in dense.formulas)


def test_vllm_refuses_a_block_size_no_backend_takes_under_the_kernel_block_too():
    # vLLM 0.34's selector checks every backend against a --block-size told, as each attention
    # layer is built (before a hybrid's block is aligned), and every CUDA backend pages by 16s
    # or more: told 1 or 8 no backend is valid ("No valid attention backend found"), for full
    # attention, gpt-oss's sinks and sliding layers, and a GDN hybrid alike. FlatKV ran them at
    # A = max(16, block) = 16 (a Qwen3-Next P of 544) before
    for name in ("Llama-3.1-8B", "gpt-oss-20b", "Qwen3-Next-80B-A3B"):
        profile = load_preset(name).profile()
        for block in (1, 8):
            small = run_strategy("vllm", profile, budget_bytes=40 << 30,
                                 options=StrategyOptions(block_size=block))
            assert not small.applies and small.reason == (
                "vLLM refuses to start: its attention backend pages by multiples of 16 tokens, "
                f"and block size {block} is none (\"No valid attention backend found ... "
                "block_size not supported\"): give 16")
    # DeepSeek-V3.2's sparse MLA backends page by 64s (32s on a Blackwell's
    # FLASHINFER_MLA_SPARSE): told 8, 24, 32 or 48, which no Hopper backend takes, vLLM raises
    # as above (FlatKV ran 8 and 24 at 64, and 32 and 48 until 2026-12-07); FlatKV's default 16
    # alone reads as none told, at 64: 61 layers x 64 x 1,284 B = 5,012,736 B a block, 40 GiB
    # // it = 8,568; no GPU said is a Hopper
    sparse = load_preset("DeepSeek-V3.2").profile()
    assert sparse.kv_bytes_per_slot == 1_284
    for block in (8, 24, 32, 48):
        for capability in (None, (9, 0)):
            odd = run_strategy("vllm", sparse, budget_bytes=40 << 30, options=StrategyOptions(
                block_size=block, gpu_compute_capability=capability))
            assert not odd.applies and odd.reason == (
                "vLLM refuses to start: its FlashMLA sparse backend (DeepSeek-V3.2's sparse MLA) "
                f"pages by multiples of 64 tokens, and block size {block} is none (\"No valid "
                "attention backend found ... block_size not supported\"): give 64 (what it picks "
                "when not told)")
    read = run_strategy("vllm", sparse, budget_bytes=40 << 30, options=StrategyOptions())
    assert (read.block_size, read.block_bytes, read.num_blocks) == (
        64, 61 * 64 * 1_284, (40 << 30) // (61 * 64 * 1_284)) == (64, 5_012_736, 8_568)
    # a smaller kernel block told is a backend of its own, taken as given: 8 runs at 8
    own = run_strategy("vllm", load_preset("Llama-3.1-8B").profile(), budget_bytes=40 << 30,
                       options=StrategyOptions(block_size=8, kernel_block_size=8))
    assert (own.block_size, own.block_bytes) == (8, 32 * 8 * 4_096)
    # a model of state layers alone builds no attention layer, so nothing refuses its block
    # and vLLM keeps it (no backend to raise it to): P 8, not max(16, 8) = 16 as before; one
    # group of 24 Mamba2 layers, 8 GiB // (24 x 2,158,592) = 165 blocks whatever P is
    mamba = run_strategy("vllm", pure_mamba(), budget_bytes=GIB8, context_tokens=4096,
                         options=StrategyOptions(block_size=8, mamba_cache_mode="align"))
    assert (mamba.block_size, mamba.num_blocks) == (8, GIB8 // (61_440 + 2_097_152) // 24) == (
        8, 165)


def test_vllm_one_mtp_layer_makes_groups_of_13():
    # The README's speculative-decoding example: an MTP layer is one more full-attention layer;
    # 13 full vs 36 GDN layers: 36 >= 1.5 x 13, so group_size = 13 and three GDN groups of 12
    # (one padding layer each); a block id now costs 13 pages, not 12
    base = qwen3_next_tp2()
    mtp = CacheProfile(layer_types=(*base.layer_types, FULL),
                       kv_bytes_per_slot=base.kv_bytes_per_slot,
                       state_const_bytes=base.state_const_bytes)
    r = run_strategy("vllm", mtp, budget_bytes=ANCHOR_BUDGET)
    assert r.extras["group_size"] == 13
    assert r.extras["padding_layers_per_type"] == {FULL: 0, LINEAR: 3}
    assert r.block_size == 544  # the state page sets P as before
    assert r.num_blocks == ANCHOR_BUDGET // (544 * 1024) // 13


# ------------------------------------------------------------------------------------------
# Qwen3-Next (GDN hybrid), the other strategies at the anchor budget.


def test_flat_qwen3_next():
    r = run_strategy("flat", qwen3_next_tp2(), budget_bytes=ANCHOR_BUDGET,
                     context_tokens=ANCHOR_CONTEXT)
    # equalizer: ceil(548,864 / 1,024) = 536 slots -> 16 x ceil(536 / 16) = 544
    block = 12 * 544 * 1024 + 36 * 548_864
    assert (r.block_size, r.block_bytes) == (544, block)
    assert block == 26_443_776
    assert r.num_blocks == ANCHOR_BUDGET // block == 1_810
    # capacity: the state group holds one request's page (mode none), full the other 1,809 ids
    assert r.capacity_tokens == (1_810 - 1) * 544 == 984_096
    assert (r.concurrency_numerator, r.concurrency_denominator) == (1_810, 482 + 1)
    # ownership 1:482 (groups in order of appearance: linear first): 1,810 / 483 = 3.75 -> 4
    assert r.extras["owned_units"] == {"linear_attention": 4, "full_attention": 1_806}
    own_full, own_state = 12 * 544 * 1024, 36 * 548_864
    assert bd(r) == {
        "kv_history": 1_806 * own_full,
        "state": 4 * own_state,
        "row_padding": 0,
        "state_page_padding": 0,
        "padding_layers": 0,
        "dead_weight": 1_806 * own_state + 4 * own_full,
        "idle_pool": 0,
        "unused": ANCHOR_BUDGET - 1_810 * block,
    }


def test_per_component_qwen3_next_pays_the_same_bytes_as_flat():
    flat = run_strategy("flat", qwen3_next_tp2(), budget_bytes=ANCHOR_BUDGET)
    per = run_strategy("per-component", qwen3_next_tp2(), budget_bytes=ANCHOR_BUDGET)
    assert per.extras["tensors"] == 12 + 36 * 2
    assert (per.block_size, per.block_bytes, per.num_blocks) == (
        flat.block_size, flat.block_bytes, flat.num_blocks
    )
    # reserved bytes per block (a draft model's KV) shrink the blocks
    reserved = 1_000_000
    per_r = run_strategy("per-component", qwen3_next_tp2(), budget_bytes=ANCHOR_BUDGET,
                         options=StrategyOptions(reserved_bytes_per_block=reserved))
    assert per_r.block_bytes == 26_443_776 + reserved
    assert per_r.num_blocks == ANCHOR_BUDGET // (26_443_776 + reserved)


def test_vllm_refuses_to_start_when_one_request_does_not_fit():
    # vLLM's start check: one request of max_model_len, its pages in every group, a page
    # group_size layers wide, against the budget less one block (the null block its pool holds
    # back; vLLM 0.29+, PR #47272). Llama-3.1-8B: 32 layers x cdiv(L, 16) pages of 65,536 B, a
    # block 32 x 65,536 = 2,097,152 B. At 1 GiB, 512 blocks: a request of 8,192 tokens needs
    # all 512 (2**30 B), one more than the 511 left beside the null block
    block, budget = 32 * 65_536, 2**30
    exact = run_strategy("vllm", llama_31_8b(), budget_bytes=budget, context_tokens=8_192)
    assert not exact.applies
    assert exact.reason.endswith("its estimated maximum model length is 8,176: give a context "
                                 f"of at most 8,176 or a budget of at least {2**30 + block:,} B")
    fits = run_strategy("vllm", llama_31_8b(), budget_bytes=budget + block, context_tokens=8_192)
    assert fits.applies and fits.num_blocks == 513 and fits.concurrency == Fraction(513, 512)
    assert run_strategy("vllm", llama_31_8b(), budget_bytes=budget,
                        context_tokens=511 * 16).applies
    refused = run_strategy("vllm", llama_31_8b(), budget_bytes=budget, context_tokens=131_072)
    assert not refused.applies
    assert refused.reason.startswith(
        f"vLLM refuses to start: one request of 131,072 tokens needs {32 * 8_192 * 65_536:,} B "
        "of KV cache (16.00 GiB: its pages in every group, 32 layers a page, at P 16), more "
        "than the 1,073,741,824 B (1.00 GiB) available less the 2,097,152 B block it holds "
        "back as its null block")
    assert refused.reason.endswith("its estimated maximum model length is 8,176: give a "
                                   "context of at most 8,176 or a budget of at least "
                                   f"{17_179_869_184 + block:,} B")
    # a budget of under two blocks asks for what then starts: one request's 32 x 8,192 pages
    # of 65,536 B beside the null block, not two blocks (which a second refusal would follow)
    tiny = run_strategy("vllm", llama_31_8b(), budget_bytes=2**20, context_tokens=131_072)
    assert tiny.reason.endswith(
        f"and one request of 131,072 tokens needs {32 * 8_192 * 65_536:,} B beside the null "
        f"block's {block:,} B; give at least {32 * 8_192 * 65_536 + block:,} B")
    assert run_strategy("vllm", llama_31_8b(), budget_bytes=32 * 8_192 * 65_536 + block,
                        context_tokens=131_072).concurrency == Fraction(8_193, 8_192)
    # one block fits: vLLM holds it back as the null block and refuses by the request check
    one = run_strategy("vllm", llama_31_8b(), budget_bytes=block + block // 2,
                       context_tokens=8_192)
    assert one.reason.startswith("vLLM refuses to start: one request of 8,192 tokens needs "
                                 f"{2**30:,} B of KV cache")
    # without a context, two blocks
    assert run_strategy("vllm", llama_31_8b(), budget_bytes=2**20,
                        context_tokens=None).reason.endswith(f"give at least {2 * block:,} B")
    # gpt-oss-20b at 3 GiB, L 131,072: groups of 12 layers, blocks of 12 x 16 x 2,048 =
    # 393,216 B, 8,192 of them; a sliding group holds cdiv(128 - 1 + 8,192, 16) + 1 = 521
    # blocks whatever L beyond 8,319, the full group cdiv(L, 16): cdiv(L, 16) + 521 <= 8,191
    # up to cdiv(L, 16) = 7,670
    r = run_strategy("vllm", gpt_oss_20b(), budget_bytes=3 * 2**30, context_tokens=131_072)
    assert f"needs {(12 * 8_192 + 12 * 521) * 32_768:,} B" in r.reason
    assert f"estimated maximum model length is {7_670 * 16:,}:" in r.reason
    assert run_strategy("vllm", gpt_oss_20b(), budget_bytes=3 * 2**30,
                        context_tokens=7_670 * 16).applies
    assert not run_strategy("vllm", gpt_oss_20b(), budget_bytes=3 * 2**30,
                            context_tokens=7_670 * 16 + 1).applies
    # padding layers count (vLLM's _max_memory_usage_bytes_from_groups): 3 full + 5 sliding
    # layers make groups of 3, the sliding ones in 2 groups (one padding layer). At L 1,024 a
    # request needs 64 full pages + 2 x (cdiv(1,024, 16) + 1) = 194 blocks of 3 x 16 x 1,024 B:
    # 9,535,488 B, where its layers alone hold (3 x 64 + 5 x 65) x 16,384 = 8,470,528 B; with
    # the null block, 195 blocks' bytes
    uneven = CacheProfile(layer_types=(FULL,) * 3 + (SLIDING,) * 5, kv_bytes_per_slot=1024,
                          sliding_window=128)
    fits = run_strategy("vllm", uneven, budget_bytes=195 * 49_152, context_tokens=1_024)
    assert fits.applies and fits.concurrency == Fraction(195, 194)
    short = run_strategy("vllm", uneven, budget_bytes=195 * 49_152 - 1, context_tokens=1_024)
    assert "needs 9,535,488 B of KV cache" in short.reason
    # Qwen3-Next TP 2 at P 1,024 (pages of 1 MiB): 30 MiB holds 30 // 12 = 2 blocks of the
    # 4 groups, but a request of one token needs a page in each of the 48 layers, and the
    # null block 12 more
    huge = run_strategy("vllm", qwen3_next_tp2(), budget_bytes=30 * 2**20, context_tokens=1,
                        options=StrategyOptions(block_size=1_024))
    assert huge.reason.endswith("not even one token fits: give a budget of at least "
                                f"{60 * 2**20:,} B")


def test_lcm_qwen3_next():
    r = run_strategy("lcm", qwen3_next_tp2(), budget_bytes=ANCHOR_BUDGET,
                     context_tokens=ANCHOR_CONTEXT)
    full, state = 12 * 16 * 1024, 36 * 548_864  # payloads at P = 16
    k_full = state // full
    assert k_full == 100
    parent = max(k_full * full, state)  # already a multiple of 256
    assert parent % 256 == 0
    assert (r.block_size, r.block_bytes) == (16, parent)
    assert r.num_blocks == ANCHOR_BUDGET // parent - 1
    assert r.extras["pages_per_parent"] == {"linear_attention": 1, "full_attention": 100}
    assert r.extras["padding_fraction"]["full_attention"] == pytest.approx(
        (parent / 100 - full) / full
    )
    # one request: 1 state parent + 16,384 full pages / 100 per parent
    assert r.concurrency == Fraction(r.num_blocks, 1) / (1 + Fraction(16_384, 100))
    # capacity: the state group holds one request's page (1 parent, mode none), the full group
    # the other parents' 100 pages each: 47,878,147,932 // 19,759,104 = 2,423 parents, one null
    assert parent == 19_759_104 and r.num_blocks == 2_422
    assert r.capacity_tokens == (2_422 - 1) * 100 * 16 == 3_873_600
    assert bd(r)["dead_weight"] == 0
    owned = r.extras["owned_units"]
    assert bd(r)["row_padding"] == owned["full_attention"] * (parent - 100 * full)
    assert bd(r)["unused"] == ANCHOR_BUDGET - r.num_blocks * parent  # includes the null parent


ALIASED_STATE_REASON = (
    "the model has state layers: aliasing needs every group to be KV history "
    "with rows of one size, and a state row is constant per page while a history row grows "
    "with P (unequal groups: see lcm)")


def test_aliased_does_not_apply_to_state_hybrids():
    r = run_strategy("aliased", qwen3_next_tp2(), budget_bytes=ANCHOR_BUDGET)
    assert not r.applies
    assert r.reason == ALIASED_STATE_REASON
    assert r.num_blocks is None and r.breakdown == ()


# ------------------------------------------------------------------------------------------
# Nemotron-H-8B (Mamba2 hybrid), 8 GiB, 32k context.


def test_nemotron_flat_and_vllm():
    prof = nemotron_h_8b()
    state = 61_440 + 2_097_152  # 2,158,592 = 527 x 4,096 exactly
    assert -(-state // 4096) == 527
    flat = run_strategy("flat", prof, budget_bytes=GIB8, context_tokens=32_768)
    block = 4 * 528 * 4096 + 24 * state  # P = 16 x ceil(527 / 16) = 528
    assert (flat.block_size, flat.block_bytes, flat.num_blocks) == (528, block, GIB8 // block)
    assert flat.num_blocks == 142
    assert flat.capacity_tokens == (142 - 1) * 528  # 1 state page for the one request
    assert (flat.concurrency_numerator, flat.concurrency_denominator) == (142, 63 + 1)

    vllm = run_strategy("vllm", prof, budget_bytes=GIB8, context_tokens=32_768)
    page = 528 * 4096  # P = 16 x cdiv(2,158,592, 65,536) = 16 x 33
    assert vllm.block_size == 528
    # group_size = min(4, 24) = 4 (24 is not under 1.5 x 4): 1 attention + 6 state groups
    assert (vllm.extras["group_size"], vllm.extras["num_groups"]) == (4, 7)
    assert vllm.num_blocks == GIB8 // page // 4 == 992
    assert vllm.older_logged_tokens == 992 // 7 * 528
    assert vllm.logged_tokens == 992 * 32_768 // (63 + 6) == 471_099  # max concurrency x L
    assert vllm.capacity_tokens == (992 - 6) * 528  # one request's page in each state group
    assert flat.logged_tokens is None  # our layouts log nothing of their own
    assert (vllm.concurrency_numerator, vllm.concurrency_denominator) == (992, 63 + 6)
    assert vllm.extras["state_padding_exact"] == [page - state, state]


def test_nemotron_lcm():
    r = run_strategy("lcm", nemotron_h_8b(), budget_bytes=GIB8, context_tokens=32_768)
    attn, state = 4 * 16 * 4096, 24 * (61_440 + 2_097_152)
    assert state // attn == 197
    parent = 256 * -(-max(197 * attn, state) // 256)
    assert r.block_bytes == parent == state
    assert r.num_blocks == GIB8 // parent - 1 == 164
    assert r.extras["padding_fraction"]["full_attention"] == pytest.approx(
        parent / (197 * attn) - 1
    )


# ------------------------------------------------------------------------------------------
# gpt-oss-20b (sliding window): aliasing doubles capacity (SPEC 3.3: 168,832 vs 84,416).


def test_gpt_oss_aliasing_doubles_capacity():
    flat = run_strategy("flat", gpt_oss_20b(), budget_bytes=GPT_OSS_BUDGET)
    aliased = run_strategy("aliased", gpt_oss_20b(), budget_bytes=GPT_OSS_BUDGET)
    assert flat.block_bytes == 24 * 16 * 2048 and flat.num_blocks == 10_552
    assert aliased.block_bytes == 12 * 16 * 2048 and aliased.num_blocks == 21_104
    assert flat.capacity_tokens == 84_416  # 10,552 // 2 x 16
    assert aliased.capacity_tokens == 168_832  # 21,104 // 2 x 16
    assert bd(flat)["dead_weight"] == bd(flat)["kv_history"] == GPT_OSS_BUDGET // 2
    assert bd(aliased) == {**dict.fromkeys(CATEGORIES, 0), "kv_history": GPT_OSS_BUDGET}


def test_gpt_oss_concurrency_and_vllm():
    ctx = 131_072
    # per request: 131,072 / 16 = 8,192 full pages; sliding ceil(min(127 + 8,192, L) / 16) + 1
    per_request = 8_192 + (-(-(127 + 8_192) // 16) + 1)
    assert per_request == 8_192 + 521
    aliased = run_strategy("aliased", gpt_oss_20b(), budget_bytes=GPT_OSS_BUDGET,
                           context_tokens=ctx)
    assert (aliased.concurrency_numerator, aliased.concurrency_denominator) == (
        21_104, per_request
    )
    vllm = run_strategy("vllm", gpt_oss_20b(), budget_bytes=GPT_OSS_BUDGET, context_tokens=ctx)
    # group_size 12 (12 vs 12), page 16 x 2,048: a block id is one group's 12 pages
    assert vllm.block_bytes == 12 * 16 * 2048
    assert vllm.num_blocks == GPT_OSS_BUDGET // (16 * 2048) // 12 == 21_104
    assert vllm.capacity_tokens == vllm.older_logged_tokens == 168_832  # no state: they agree
    # current vLLM logs max concurrency x L: sliding pages are few per request, so more
    assert vllm.logged_tokens == 21_104 * ctx // per_request == 317_473
    assert vllm.concurrency == aliased.concurrency
    lcm = run_strategy("lcm", gpt_oss_20b(), budget_bytes=GPT_OSS_BUDGET, context_tokens=ctx)
    assert lcm.block_bytes == 12 * 16 * 2048  # K = 1 for both equal groups
    assert lcm.num_blocks == 21_104 - 1  # one null parent
    assert lcm.capacity_tokens == (21_103 // 2) * 16


def test_chunked_pages_per_request_are_the_chunk_and_a_step_without_a_page_more():
    # vLLM's ChunkedLocalAttentionSpec: cdiv(min(C + max_batched_tokens, L), P), no +1 block as
    # a SlidingWindowSpec's W - 1 + S has
    options = StrategyOptions()
    assert options.max_batched_tokens == 8192
    assert request_pages(CHUNKED, 131_072, 16, options, 8192) == (8192 + 8192) // 16 == 1024
    assert request_pages(SLIDING, 131_072, 16, options, 8192) == 1024 + 1  # 16,383 / 16 + 1
    assert request_pages(CHUNKED, 1000, 16, options, 8192) == 63  # ceil(1,000 / 16): L binds
    # one-token pages tell C from W - 1: 8,192 + 8,192 against 8,191 + 8,192 and a page more
    assert request_pages(CHUNKED, 131_072, 1, options, 8192) == 16_384
    assert request_pages(SLIDING, 131_072, 1, options, 8192) == 16_383 + 1
    with pytest.raises(ValueError, match="attention_chunk_size is not set"):
        request_pages(CHUNKED, 1000, 16, options, None)


def test_llama4_vllm_groups_chunked_layers_and_holds_a_chunk_of_pages_per_request():
    ctx = 131_072
    r = run_strategy("vllm", llama4_scout(), budget_bytes=LLAMA4_BUDGET, context_tokens=ctx)
    # group_size 12 (36 >= 1.5 x 12): 3 chunked groups and 1 full, one page 16 x 4,096 B
    assert [g["kind"] for g in r.extras["groups"]].count(CHUNKED) == 3
    assert [g["kind"] for g in r.extras["groups"]].count(FULL) == 1
    assert r.block_size == 16 and r.block_bytes == 12 * 16 * 4096 == 786_432
    assert r.num_blocks == LLAMA4_BUDGET // (16 * 4096) // 12 == 81_920
    # a request: 8,192 full pages, and (8,192 + 8,192) / 16 = 1,024 in each chunked group
    per_request = ctx // 16 + 3 * 1024
    assert r.concurrency == Fraction(81_920, per_request) == Fraction(80, 11)
    assert r.logged_tokens == 81_920 * ctx // per_request == 953_250
    assert r.capacity_tokens == 81_920 // 4 * 16  # every group's pages counted as history
    assert any("pages per request, chunked attention: ceil(min(8,192 + 8,192, 131,072) / 16) "
               "= 1,024" in f for f in r.formulas)
    # without its hybrid manager vLLM allocates the chunked layers as full attention, one group
    # of 48: 2.5 requests
    off = StrategyOptions(vllm_hybrid_manager=False)
    one_group = run_strategy("vllm", llama4_scout(), budget_bytes=LLAMA4_BUDGET,
                             context_tokens=ctx, options=off)
    assert one_group.block_bytes == 48 * 16 * 4096
    assert one_group.num_blocks == LLAMA4_BUDGET // (16 * 4096) // 48 == 20_480
    assert one_group.concurrency == Fraction(20_480, ctx // 16) == Fraction(5, 2)
    assert one_group.formulas[0] == (
        "hybrid KV cache manager off (--disable-hybrid-kv-cache-manager): the 36 chunked layers "
        "are allocated as full attention, every token kept (vLLM's _promote_local_kv_cache_specs)"
        ", all 48 layers in one group")
    full = replace(llama4_scout(), layer_types=(FULL,) * 48, attention_chunk_size=None)
    assert run_strategy("vllm", full, budget_bytes=LLAMA4_BUDGET,
                        context_tokens=ctx).breakdown == one_group.breakdown
    # drafted tokens keep no state pages here; vLLM's EAGLE-family drafters turn the manager off
    # for chunked layers, which the formulas say (the figures stay the manager's)
    drafted = run_strategy("vllm", llama4_scout(), budget_bytes=LLAMA4_BUDGET,
                           context_tokens=ctx, options=StrategyOptions(speculative_tokens=2))
    assert drafted.concurrency == r.concurrency
    assert drafted.formulas[0].startswith(
        "with speculative decoding: vLLM turns its hybrid KV cache manager off for chunked "
        "local attention when the drafter reads the target's hidden states")


def test_vllm_without_its_hybrid_manager_keeps_every_token_or_does_not_start():
    off = StrategyOptions(vllm_hybrid_manager=False)
    # gpt-oss-20b: 24 layers of 2,048 B in one group; a request holds 131,072 / 16 pages
    gpt = run_strategy("vllm", gpt_oss_20b(), budget_bytes=GPT_OSS_BUDGET,
                       context_tokens=131_072, options=off)
    assert gpt.num_blocks == GPT_OSS_BUDGET // (16 * 2048) // 24
    assert gpt.concurrency == Fraction(gpt.num_blocks, 8192)
    # a state hybrid: vLLM cannot make its layers one kind
    qwen = run_strategy("vllm", qwen3_next_tp2(), budget_bytes=ANCHOR_BUDGET, options=off)
    assert not qwen.applies
    assert qwen.reason.startswith(
        "with its hybrid KV cache manager off (--disable-hybrid-kv-cache-manager) vLLM does not "
        "start on a model whose layers cannot all be allocated as one kind (\"Failed to promote "
        "local KV cache specs to one unified type\"): state layers keep no token history")
    # sliding and chunked layers without full ones cannot be promoted either
    windows = CacheProfile(layer_types=(SLIDING, CHUNKED), kv_bytes_per_slot=4096,
                           sliding_window=128, attention_chunk_size=8192)
    assert "sliding and chunked layers without full ones" in run_strategy(
        "vllm", windows, budget_bytes=GIB8, options=off).reason
    # a model of one kind is the same either way, and the formulas say so
    plain = run_strategy("vllm", llama_31_8b(), budget_bytes=GIB8, context_tokens=8192)
    same = run_strategy("vllm", llama_31_8b(), budget_bytes=GIB8, context_tokens=8192,
                        options=off)
    assert same.concurrency == plain.concurrency and same.breakdown == plain.breakdown
    assert same.formulas[0].endswith("no change, every cache layer of this model is of one kind")
    # Mamba alone is one kind too
    assert run_strategy("vllm", pure_mamba(), budget_bytes=GIB8, options=off).applies
    with pytest.raises(ValueError, match="vllm_hybrid_manager is 0: give True"):
        StrategyOptions(vllm_hybrid_manager=0)


def test_vllm_names_the_releases_that_serve_a_dropped_architecture():
    # vLLM 0.34's registry lists MiniMax-M1 (and Bamba, MiniMax-Text-01) as previously supported,
    # last in 0.23.0: the figures stand, as a log of it comes from such a release, and say so
    m1 = load_preset("MiniMax-M1").profile()
    said = ("vLLM serves MiniMaxM1ForCausalLM up to 0.23.0 only, so a log of it comes from such "
            "a release: later ones refuse it, their model registry listing it as previously "
            "supported")
    r = run_strategy("vllm", m1, budget_bytes=40 * 2**30, context_tokens=100_000)
    assert r.applies and r.formulas[0] == said
    # the same layers under no architecture are current vLLM's, with nothing said
    plain = run_strategy("vllm", replace(m1, architectures=()), budget_bytes=40 * 2**30,
                         context_tokens=100_000)
    assert plain.formulas == r.formulas[1:] and plain.num_blocks == r.num_blocks == 2_048
    # a refusal says it after its reason; each dropped architecture has its release
    refused = run_strategy("vllm", m1, budget_bytes=40 * 2**30, context_tokens=10_240_000)
    assert not refused.applies and refused.reason.endswith(f" ({said})")
    assert last_served_text(replace(m1, architectures=("BambaForCausalLM",))).startswith(
        "vLLM serves BambaForCausalLM up to 0.23.0 only")
    assert last_served_text(replace(m1, architectures=("Plamo2ForCausalLM",))).startswith(
        "vLLM serves Plamo2ForCausalLM up to 0.26.0 only")
    assert last_served_text(load_preset("Qwen3-Next-80B-A3B").profile()) == ""


def test_vllm_sizes_window_pages_by_async_schedulings_tokens_in_flight():
    # gpt-oss-20b in 40 GiB at 131,072 tokens, block size 64 as vLLM 0.34's default: pages of
    # 64 x 2,048 B, 42,949,672,960 // 131,072 // 12 layers a group = 27,306 blocks. A request
    # holds 2,048 full pages and, with async scheduling's 2 x 8,192 tokens in flight (vLLM
    # 0.26 and later), ceil(min(127 + 16,384, 131,072) / 64) + 1 = 259 sliding ones (131 with
    # one step's 8,192): 27,306 / 2,307 = 11.84x, "GPU KV cache size: 1,551,387 tokens"
    gpt = load_preset("gpt-oss-20b").profile()
    one, two = (run_strategy("vllm", gpt, budget_bytes=40 * 2**30, context_tokens=131_072,
                             options=StrategyOptions(block_size=64, vllm_async_scheduling=a))
                for a in (False, True))
    assert one.num_blocks == two.num_blocks == 40 * 2**30 // (64 * 2_048) // 12 == 27_306
    assert -(-(127 + 16_384) // 64) + 1 == 259 and -(-(127 + 8_192) // 64) + 1 == 131
    assert Fraction(two.concurrency_numerator, two.concurrency_denominator) == Fraction(
        27_306, 2_048 + 259)
    assert Fraction(one.concurrency_numerator, one.concurrency_denominator) == Fraction(
        27_306, 2_048 + 131)
    assert two.logged_tokens == int(27_306 / 2_307 * 131_072) == 1_551_387
    assert two.formulas[0] == (
        "tokens in flight 2 x 8,192 = 16,384 in the window pages below: async scheduling keeps "
        "2 batches in flight, and vLLM 0.26 and later size a windowed request's pages by them "
        "(max_in_flight_tokens)")
    assert "pages per request, sliding attention: ceil(min(128 - 1 + 16,384, 131,072) / 64) + 1 " \
        "= 259" in "\n".join(two.formulas)
    # a model without windows reads nothing of it
    llama = load_preset("Llama-3.1-8B").profile()
    assert run_strategy("vllm", llama, budget_bytes=2**34, options=StrategyOptions(
        vllm_async_scheduling=True)).formulas == run_strategy(
        "vllm", llama, budget_bytes=2**34).formulas
    # with the hybrid manager off the windows keep every token, as full attention: nothing
    # to size by the tokens in flight, and nothing said of them
    off = StrategyOptions(block_size=64, vllm_hybrid_manager=False)
    assert run_strategy("vllm", gpt, budget_bytes=40 * 2**30, context_tokens=131_072,
                        options=replace(off, vllm_async_scheduling=True)).formulas == (
        run_strategy("vllm", gpt, budget_bytes=40 * 2**30, context_tokens=131_072,
                     options=off).formulas)
    with pytest.raises(ValueError, match="vllm_async_scheduling is 1: give True"):
        StrategyOptions(vllm_async_scheduling=1)


def test_vllm_keeps_a_token_more_in_cohere2s_windows():
    # Command R7B (cohere2): 24 sliding layers of window 4,096 and 8 full, 8 KV heads of 128
    r7b = spec_from_hf_config({
        "model_type": "cohere2", "architectures": ["Cohere2ForCausalLM"],
        "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
        "hidden_size": 4096, "sliding_window": 4096, "sliding_window_pattern": 4}).profile()
    assert (r7b.count("sliding_attention"), r7b.count("full_attention")) == (24, 8)
    # vLLM 0.29+ passes sliding_window + 1 (commandr.py): with 8,193 tokens a step a request
    # holds ceil((4,096 + 8,193) / 16) + 1 = 770 sliding pages, not ceil((4,095 + 8,193) / 16)
    # + 1 = 769; 131,072 tokens of full attention are 8,192 pages
    options = StrategyOptions(max_batched_tokens=8_193)
    cohere = run_strategy("vllm", r7b, budget_bytes=40 * 2**30, context_tokens=131_072,
                          options=options)
    plain = run_strategy("vllm", replace(r7b, architectures=()), budget_bytes=40 * 2**30,
                         context_tokens=131_072, options=options)
    assert cohere.num_blocks == plain.num_blocks
    assert plain.concurrency_denominator == 8_192 + 769 * 3  # 3 sliding groups of 8 layers
    assert cohere.concurrency_denominator == 8_192 + 770 * 3
    assert cohere.formulas[0] == (
        "sliding window 4,096 + 1 = 4,097 tokens: vLLM 0.29 and later run Cohere2ForCausalLM's "
        "sliding layers over sliding_window + 1 tokens, as the model was trained (earlier "
        "releases over the window as given)")
    assert "sliding attention: ceil(min(4,097 - 1 + 8,193, 131,072) / 16) + 1 = 770" in (
        "\n".join(cohere.formulas))
    assert not plain.formulas[0].startswith("sliding window")
    # the MoE class as much (cohere2_moe.py)
    moe = run_strategy("vllm", replace(r7b, architectures=("Cohere2MoeForCausalLM",)),
                       budget_bytes=40 * 2**30, context_tokens=131_072, options=options)
    assert moe.concurrency_denominator == cohere.concurrency_denominator
    assert moe.formulas[0].startswith("sliding window 4,096 + 1 = 4,097 tokens: vLLM 0.29 and "
                                      "later run Cohere2MoeForCausalLM's sliding layers")
    # with the hybrid manager off no layer keeps a window: nothing to widen, nothing said
    off = replace(options, vllm_hybrid_manager=False)
    assert run_strategy("vllm", r7b, budget_bytes=40 * 2**30, context_tokens=131_072,
                        options=off).formulas == run_strategy(
        "vllm", replace(r7b, architectures=()), budget_bytes=40 * 2**30,
        context_tokens=131_072, options=off).formulas


def test_vllm_pages_an_mla_hybrid_by_a_multiple_of_128():
    # Kimi Linear (MLA full layers, 1,152 B a token; KDA state 73,728 + 2,097,152 B): vLLM 0.27
    # and later raise A to 128 for an MLA hybrid. With 2 drafted tokens the conv state is
    # 122,880 B, the state 2,220,032 B: 128 x cdiv(2,220,032, 128 x 1,152) = 128 x 16 = 2,048
    # (16 x cdiv(2,220,032, 16 x 1,152) = 16 x 121 = 1,936 without the rule); without drafts
    # 1,920 (16 x 120 without the rule)
    kimi = load_preset("Kimi-Linear-48B-A3B").profile()
    drafted = run_strategy("vllm", kimi, budget_bytes=40 * 2**30, context_tokens=131_072,
                           options=StrategyOptions(speculative_tokens=2))
    assert -(-2_220_032 // (128 * 1_152)) * 128 == drafted.block_size == 2_048
    assert ("A = max(kernel block size 16 (the model's own), block_size 16) = 16, raised to "
            "128: an MLA hybrid's block is a multiple of 128 (vLLM 0.27 and later, for its MLA "
            "decode kernels)") in drafted.why_block_size
    assert run_strategy("vllm", kimi, budget_bytes=40 * 2**30).block_size == 1_920
    # an MLA model without state keeps its 16 (DeepSeek-V3)
    assert run_strategy("vllm", load_preset("DeepSeek-V3").profile(),
                        budget_bytes=40 * 2**30).block_size == 16


# Kimi Linear's float32 figures at 40 GiB = 42,949,672,960 B: 20 KDA + 7 MLA layers (1,152 B a
# token), group_size 7, A 128 (an MLA hybrid's); state 73,728 + 524,288 x 4 = 2,170,880 B, P =
# 128 x cdiv(2,170,880, 128 x 1,152 = 147,456) = 128 x 15 = 1,920, a block 7 x 1,920 x 1,152 =
# 15,482,880 B, 2,774 blocks. Told bfloat16: 73,728 + 524,288 x 2 = 1,122,304 B, P = 128 x 8 =
# 1,024, a block 7 x 1,024 x 1,152 = 8,257,536 B, 5,201 blocks (vLLM's own code: the same)
KIMI_FLOAT32 = (1_920, 15_482_880, 2_774)
KIMI_BFLOAT16 = (1_024, 8_257_536, 5_201)


def test_kimi_linear_figures_by_hand():
    budget = 40 * 2**30
    assert -(-2_170_880 // 147_456) == 15 and 7 * 1_920 * 1_152 == 15_482_880
    assert budget // 15_482_880 == 2_774
    assert -(-1_122_304 // 147_456) == 8 and 7 * 1_024 * 1_152 == 8_257_536
    assert budget // 8_257_536 == 5_201


def test_vllm_keeps_a_kda_state_in_float32_untold_whatever_the_models_dtype():
    # vLLM 0.34's kda_state_dtype keeps KDA's recurrent state in float32 with
    # --mamba-ssm-cache-dtype auto (mamba_utils.py 148-149), whatever the model's dtype: a Kimi
    # Linear made bfloat16 or float16 by hand runs float32 (no refusal: its auto would start),
    # raw bytes of 2-byte elements too; the formula line says so and names the flag
    kimi = load_preset("Kimi-Linear-48B-A3B")
    budget = 40 * 2**30
    half = kimi.with_options(ssm_dtype="float16").profile()
    for dtype, profile in (("bfloat16", kimi.with_options(ssm_dtype="bfloat16").profile()),
                           ("float16", half), ("2-byte elements", replace(half, ssm_dtype=None))):
        assert profile.state_const_bytes["ssm"] == 524_288 * 2
        r = run_strategy("vllm", profile, budget_bytes=budget, context_tokens=32_768)
        assert (r.applies, r.block_size, r.block_bytes, r.num_blocks) == (True, *KIMI_FLOAT32)
        assert r.formulas[0] == (
            "ssm state float32: vLLM's KimiLinearForCausalLM keeps KDA's recurrent state in "
            "float32 with --mamba-ssm-cache-dtype auto (its kda_state_dtype), whatever the "
            f"model's dtype; told bfloat16 (--vllm-ssm-dtype), it keeps that, not the model's "
            f"{dtype}: 524,288 elements x 4 = 2,097,152 B a layer, not 1,048,576 B")
        assert r.extras["ssm_bytes"] == 2_097_152
    # float32 already (the preset's): the same figures, no line of its own
    fp32 = run_strategy("vllm", kimi.profile(), budget_bytes=budget, context_tokens=32_768)
    assert (fp32.block_size, fp32.block_bytes, fp32.num_blocks) == KIMI_FLOAT32
    assert not any(f.startswith("ssm state") for f in fp32.formulas)
    # told bfloat16 (--mamba-ssm-cache-dtype bfloat16): kept, whatever the model's own dtype
    for profile in (kimi.profile(), half):
        told = run_strategy("vllm", profile, budget_bytes=budget, context_tokens=32_768,
                            options=StrategyOptions(vllm_ssm_dtype="bfloat16"))
        assert (told.block_size, told.block_bytes, told.num_blocks) == KIMI_BFLOAT16
        assert told.formulas[0].startswith(
            "ssm state bfloat16: --mamba-ssm-cache-dtype, as the option sets it")
    # no float16 refusal for the model's own dtype: vLLM's block has a size; told, none
    assert vllm_block_bytes(half, StrategyOptions()) == 7 * 1_920 * 1_152 == KIMI_FLOAT32[1]
    with pytest.raises(ValueError, match="vLLM's blocks have no size here: vLLM refuses to "
                       "start: KimiLinearForCausalLM's KDA layers"):
        vllm_block_bytes(kimi.profile(), StrategyOptions(vllm_ssm_dtype="float16"))


def test_vllm_keeps_the_nemotron_vl_omni_and_transcribe_ssm_state_as_nemotron_hs():
    # vLLM 0.34's MODELS_CONFIG_MAP gives these classes the NemotronH hook on their text config
    # (config.py 1173-1195, 1588-1596): float32 unless the config or the flag names another.
    # Nemotron-H-8B's shapes: 61,440 + 128 x 64 x 128 x 4 = 4,255,744 B a state page, P = 16 x
    # cdiv(4,255,744, 16 x 4,096) = 1,040, 40 GiB // (4 x 1,040 x 4,096) = 2,520 blocks; the
    # config's bfloat16, 2,158,592 B: P 528, 40 GiB // (4 x 528 x 4,096) = 4,964
    budget = 40 * 2**30
    assert 16 * -(-4_255_744 // 65_536) == 1_040 and budget // (4 * 1_040 * 4_096) == 2_520
    assert 16 * -(-2_158_592 // 65_536) == 528 and budget // (4 * 528 * 4_096) == 4_964
    nemotron = load_preset("Nemotron-H-8B").profile()
    for arch in ("NemotronH_Nano_VL_V2", "NemotronH_Nano_Omni_Reasoning_V3",
                 "NemotronH_Super_Omni_Reasoning_V3", "NemotronH_Omni_Reasoning_V3",
                 "Nemotron3_5TranscribeForConditionalGeneration"):
        vl = replace(nemotron, architectures=(arch,))
        r = run_strategy("vllm", vl, budget_bytes=budget, context_tokens=8_192)
        assert (r.block_size, r.num_blocks) == (1_040, 2_520), arch
        assert r.formulas[0].startswith(f"ssm state float32: vLLM's default for {arch} with "
                                        "--mamba-ssm-cache-dtype auto"), arch
        told = replace(vl, config_mamba_ssm_cache_dtype="bfloat16")
        r = run_strategy("vllm", told, budget_bytes=budget, context_tokens=8_192)
        assert (r.block_size, r.num_blocks) == (528, 4_964), arch
    # vLLM 0.19's NemotronHNanoVLV2Config sets no ssm dtype (config.py 503-509): the model's
    vl = replace(nemotron, architectures=("NemotronH_Nano_VL_V2",))
    assert vllm_ssm_dtype(vl, StrategyOptions(), older=True)[0] == "bfloat16"
    assert vllm_ssm_dtype(nemotron, StrategyOptions(), older=True)[0] == "float16"


def test_vllm_ssm_dtype_told_names_the_flag_and_moves_no_float32_kda_class():
    # told --mamba-ssm-cache-dtype float16 (vllm_ssm_dtype), Kimi Linear's refusal says it was
    # told and that the fix is that option, not the model's dtype (its float32 does not decide)
    kimi = load_preset("Kimi-Linear-48B-A3B").profile()
    told = run_strategy("vllm", kimi, budget_bytes=40 * 2**30, context_tokens=32_768,
                        options=StrategyOptions(vllm_ssm_dtype="float16"))
    assert not told.applies and told.reason == (
        "vLLM refuses to start: KimiLinearForCausalLM's KDA layers keep their recurrent (ssm) "
        "state in float32 or bfloat16 only, and --mamba-ssm-cache-dtype float16 is told "
        "(--mamba-ssm-cache-dtype float16: \"KDA recurrent state supports only auto, float32, "
        "and bfloat16; got float16\"): set vLLM's ssm cache dtype (--vllm-ssm-dtype) to "
        "bfloat16 or float32, or leave it auto")
    # Bailing V3's KDA state is float32 whatever is told (its own, here): a told bfloat16 moves
    # no figure and says no "ssm state bfloat16" line (it said one, beside one saying vLLM keeps
    # float32)
    bailing = spec_from_hf_config(BAILING_CONFIG).profile()
    auto = run_strategy("vllm", bailing, budget_bytes=40 * 2**30, context_tokens=32_768)
    bf16 = run_strategy("vllm", bailing, budget_bytes=40 * 2**30, context_tokens=32_768,
                        options=StrategyOptions(vllm_ssm_dtype="bfloat16"))
    assert (bf16.block_size, bf16.num_blocks) == (auto.block_size, auto.num_blocks)
    said = "\n".join((*bf16.formulas, bf16.why_block_size))
    assert bailing.ssm_dtype == "float32" and "ssm state" not in said


def test_vllm_refuses_a_float16_state_only_for_the_kda_classes_and_by_name():
    # told float16, the KDA classes refuse it whatever the model's dtype (raw bytes of unknown
    # elements too); a float16 ssm state of GDN (Qwen3-Next), Mamba2 (Nemotron-H) and Mamba1
    # (Jamba) starts (vLLM's _mamba_state_dtype takes any of its mamba dtypes)
    told = StrategyOptions(vllm_ssm_dtype="float16")
    kimi = load_preset("Kimi-Linear-48B-A3B").profile()
    as_bytes = replace(kimi, ssm_dtype=None, ssm_element_bytes=None)
    r = run_strategy("vllm", as_bytes, budget_bytes=40 * 2**30, options=told)
    assert not r.applies and r.reason.startswith("vLLM refuses to start: KimiLinearForCausalLM")
    for name in ("Qwen3-Next-80B-A3B", "Nemotron-H-8B", "Jamba-1.5-Mini"):
        other = load_preset(name).profile()
        assert run_strategy("vllm", other, budget_bytes=40 * 2**30, context_tokens=32_768,
                            options=told).applies, name
    # the other classes whose KDA hands vLLM the flag refuse it too, each by its own name
    glm = replace(kimi, architectures=("Glm5NextForConditionalGeneration",))
    reason = run_strategy("vllm", glm, budget_bytes=40 * 2**30, options=told).reason
    assert reason.startswith("vLLM refuses to start: Glm5NextForConditionalGeneration's KDA "
                             "layers keep their recurrent (ssm) state in float32 or bfloat16")


def test_vllm_keeps_bailings_kda_state_in_float32_whatever_it_is_told():
    # BailingMoeV3 (Ling) asks kda_state_dtype without --mamba-ssm-cache-dtype: its recurrent
    # state is float32 told bfloat16 or float16 (no refusal). Kimi's shapes under that class:
    # 524,288 elements x 4 = 2,097,152 B, the float32 figures (P 1,920, 2,774 blocks of
    # 15,482,880 B at 40 GiB), vLLM's own code giving the same (bench/vllm_check.py)
    kimi = load_preset("Kimi-Linear-48B-A3B")
    for dtype in ("bfloat16", "float16"):
        ling = replace(kimi.with_options(ssm_dtype=dtype).profile(),
                       architectures=("BailingMoeV3ForCausalLM",))
        assert ling.state_const_bytes["ssm"] == 1_048_576
        r = run_strategy("vllm", ling, budget_bytes=40 * 2**30, context_tokens=32_768)
        assert (r.applies, r.block_size, r.block_bytes, r.num_blocks) == (
            True, 1_920, 15_482_880, 2_774)
        assert r.formulas[0] == (
            f"ssm state in float32, not {dtype}: vLLM's BailingMoeV3ForCausalLM asks its KDA "
            "state dtype without --mamba-ssm-cache-dtype (kda_state_dtype's auto), so it keeps "
            "the recurrent state in float32 whatever that says: 524,288 elements x 4 = "
            "2,097,152 B a layer, not 1,048,576 B")
    # float32 already: nothing said; raw bytes of unknown elements: taken as given (P 1,024)
    ling32 = replace(kimi.profile(), architectures=("BailingMoeV3ForCausalLM",))
    r = run_strategy("vllm", ling32, budget_bytes=40 * 2**30, context_tokens=32_768)
    assert r.num_blocks == 2_774 and not any("float32" in f for f in r.formulas)
    raw = replace(ling, ssm_element_bytes=None, ssm_dtype=None)
    assert run_strategy("vllm", raw, budget_bytes=40 * 2**30).block_size == 1_024


def test_vllm_padding_layers_12_sliding_13_full():
    # gpt-oss + a one-layer drafter: 12 sliding + 13 full; 13 < 1.5 x 12, so group_size 13 and
    # the sliding group gets 1 padding layer (vLLM: "Add 1 padding layers").
    prof = CacheProfile(layer_types=(SLIDING,) * 12 + (FULL,) * 13, kv_bytes_per_slot=2048,
                        sliding_window=128)
    page = 16 * 2048
    budget = 1_000 * 13 * page
    r = run_strategy("vllm", prof, budget_bytes=budget)
    assert r.extras["group_size"] == 13
    assert r.extras["padding_layers_per_type"] == {FULL: 0, SLIDING: 1}
    assert r.num_blocks == 1_000
    # no context: equal pages per group, 500 ids each
    assert bd(r)["padding_layers"] == 500 * 1 * page
    assert bd(r)["kv_history"] == 500 * 13 * page + 500 * 12 * page
    assert bd(r)["unused"] == 0


def test_vllm_group_size_at_exactly_one_and_a_half():
    # 8 full + 12 sliding: 12 is not under 1.5 x 8 = 12, so group_size is the smallest, 8;
    # the sliding layers make cdiv(12, 8) = 2 groups, the second with 4 padding layers
    prof = CacheProfile(layer_types=(FULL,) * 8 + (SLIDING,) * 12, kv_bytes_per_slot=2048,
                        sliding_window=128)
    r = run_strategy("vllm", prof, budget_bytes=1_000 * 8 * 16 * 2048)
    assert r.extras["group_size"] == 8
    assert r.extras["padding_layers_per_type"] == {FULL: 0, SLIDING: 4}
    assert r.num_blocks == 1_000
    # one fewer sliding layer (11 < 12): group_size 11, the full group padded by 3
    fewer = CacheProfile(layer_types=(FULL,) * 8 + (SLIDING,) * 11, kv_bytes_per_slot=2048,
                         sliding_window=128)
    r = run_strategy("vllm", fewer, budget_bytes=1_000 * 11 * 16 * 2048)
    assert r.extras["group_size"] == 11
    assert r.extras["padding_layers_per_type"] == {FULL: 3, SLIDING: 0}


# ------------------------------------------------------------------------------------------
# Llama-3.1-8B (pure full attention): every strategy that applies agrees.


def test_llama_every_layout_agrees():
    prof = llama_31_8b()
    block = 32 * 16 * 4096
    for name in ("flat", "per-component", "vllm"):
        r = run_strategy(name, prof, budget_bytes=GIB8, context_tokens=32_768)
        assert (r.block_size, r.block_bytes, r.num_blocks) == (16, block, GIB8 // block), name
        assert r.num_blocks == 4_096
        assert r.capacity_tokens == 4_096 * 16
        assert r.concurrency == Fraction(4_096, 32_768 // 16)
        assert bd(r) == {**dict.fromkeys(CATEGORIES, 0), "kv_history": GIB8}
    sg = run_strategy("sglang", prof, budget_bytes=GIB8, context_tokens=32_768)
    assert sg.capacity_tokens == GIB8 // (32 * 4096) == 65_536
    assert sg.concurrency == 2
    lcm = run_strategy("lcm", prof, budget_bytes=GIB8)
    assert (lcm.block_bytes, lcm.num_blocks) == (block, 4_096 - 1)
    assert bd(lcm)["unused"] == block  # the null parent
    aliased = run_strategy("aliased", prof, budget_bytes=GIB8)
    assert not aliased.applies and aliased.reason == (
        "one cache group (full attention, 32 layers): nothing to alias, flat already uses every "
        "row of every block id")


# ------------------------------------------------------------------------------------------
# Strategies that do not apply say so.


def test_state_only_model():
    prof = pure_mamba()
    for name in ("flat", "lcm", "aliased"):
        r = run_strategy(name, prof, budget_bytes=GIB8)
        assert not r.applies and r.reason, name
        assert r.block_size is None and r.max_concurrency is None
    assert "packed slabs size P against a KV history row, and this model has none" in run_strategy(
        "flat", prof, budget_bytes=GIB8).reason
    # where to look instead, in words both the CLI and the app's titles read alike
    assert run_strategy("lcm", prof, budget_bytes=GIB8).reason.endswith(
        "(the per-component, vLLM and SGLang layouts lay out a state-only model, SGLang where "
        "its state keeps a conv tensor)")
    with pytest.raises(ValueError, match="this model has none .* plan_component_tensors"):
        plan_tensors(prof.components(), block_size=16, alignment=16, budget_bytes=GIB8)
    per = run_strategy("per-component", prof, budget_bytes=GIB8, context_tokens=4096)
    state = 24 * (61_440 + 2_097_152)
    assert per.applies and per.block_bytes == state and per.num_blocks == GIB8 // state
    assert per.capacity_tokens is None
    assert per.concurrency == GIB8 // state  # one state page per request
    sg = run_strategy("sglang", prof, budget_bytes=GIB8, context_tokens=4096)
    # SGLang splits the budget as for a hybrid, 8 GiB x 0.9 / 1.9 = 4,068,916,385 B of state
    assert sg.extras["state_slots"] == 8_589_934_592 * 9 // 19 // state == 78
    assert sg.extras["running_request_cap"] == (78 - 1) // 3 == 25  # slot 0: the padding slot
    # its token pool of no layers holds context_len = 4,096 tokens: one request of 4,096
    assert sg.concurrency == 1


def test_vllm_logs_a_state_only_model_in_blocks_of_its_mamba_block_size():
    # one group of 24 Mamba2 layers: num_blocks = 8 GiB // 2,158,592 // 24 = 165. In mode none
    # vLLM's mamba block size is max_model_len (MambaModelConfig), one block a request, so
    # both log lines read 165 x 4,096 = 675,840; with prefix caching it is --block-size
    # (two blocks a request in mode align: 82.5x)
    prof = pure_mamba()
    state = 61_440 + 2_097_152
    none = run_strategy("vllm", prof, budget_bytes=GIB8, context_tokens=4096)
    assert none.num_blocks == GIB8 // state // 24 == 165
    assert none.capacity_tokens is None  # no token history, as every layout says
    assert none.logged_tokens == none.older_logged_tokens == 165 * 4096 == 675_840
    align = run_strategy("vllm", prof, budget_bytes=GIB8, context_tokens=4096,
                         options=StrategyOptions(mamba_cache_mode="align", block_size=8))
    assert align.concurrency == Fraction(165, 2)
    assert align.logged_tokens == int(165 / 2 * 4096) == 337_920
    assert align.older_logged_tokens == 165 * 8
    # without a context the mode-none block size (max_model_len) is unknown: no log figure
    unknown = run_strategy("vllm", prof, budget_bytes=GIB8)
    assert unknown.logged_tokens is None and unknown.older_logged_tokens is None


def test_aliased_unequal_groups_say_why():
    prof = CacheProfile(layer_types=(SLIDING,) * 5 + (FULL,), kv_bytes_per_slot=2048,
                        sliding_window=512)
    r = run_strategy("aliased", prof, budget_bytes=GIB8)
    assert not r.applies and r.reason == (
        "groups have unequal layer counts (sliding attention 5, full attention 1): layer j of "
        "each group shares a slab only when every group has the same number of layers (unequal "
        "groups: see lcm)")


def test_lcm_padding_bound_not_met_says_why():
    # 3 full + 2 sliding: payloads 3x and 2x a row at any P, so K = 1 and sliding pads by 50%.
    prof = CacheProfile(layer_types=(FULL,) * 3 + (SLIDING,) * 2, kv_bytes_per_slot=1024,
                        sliding_window=128)
    r = run_strategy("lcm", prof, budget_bytes=GIB8)
    # P 16: the 3 full rows are a payload of 3 x 16 x 1,024 = 49,152 B, the 2 sliding rows
    # 32,768 B; K = 49,152 // 32,768 = 1, so a sliding page pads by 16,384 / 32,768 = 50%
    assert not r.applies and r.reason == (
        "no P among 256 candidates keeps every group's padding under 0.25: the best, P = 16, "
        "pads sliding_attention by 50.00%; raise the two-level padding bound "
        "(--lcm-padding-bound) to accept it")
    ok = run_strategy("lcm", prof, budget_bytes=GIB8,
                      options=StrategyOptions(lcm_padding_bound="1/2"))
    assert ok.applies and ok.block_bytes == 3 * 16 * 1024
    assert bd(ok)["row_padding"] == ok.extras["owned_units"][SLIDING] * 16 * 1024


def test_lcm_padding_past_any_bound_names_the_alignment():
    # Llama's 32 x 4,096 B rows at P 4,096 (512 MiB) in parents aligned to 1 TiB: padding
    # 2**40 / 2**29 - 1 = 2,047 (204,700%), past the bound's top of 10: the alignment is to blame
    r = run_strategy("lcm", llama_31_8b(), budget_bytes=GIB8,
                     options=StrategyOptions(lcm_alignment_bytes=2**40))
    assert not r.applies
    assert r.reason.endswith(
        "the best, P = 4,096, pads full_attention by 204,700.00%; more than the padding bound "
        "can accept (10): lower the parent alignment (--lcm-alignment-bytes, "
        "1,099,511,627,776 B)")


def test_budget_too_small_does_not_apply():
    # Qwen3-Next at TP 2: KV 1,024 B a token, state 24,576 + 524,288 = 548,864 B a GDN layer; P = 16
    # x ceil(536 / 16) = 544, a KV row 557,056 B. Flat: 12 x (557,056 + 548,864) + 24 x 548,864 =
    # 26,443,776 B a block (per-component's 12 x 557,056 + 36 x 548,864 is the same), two blocks
    # 52,887,552 B. vLLM: 12 layers a group of 557,056 B pages, a block 12 x 557,056 = 6,684,672 B;
    # even a one-token request holds a page in each of its 4 groups (26,738,688 B) beside the null
    # block: 5 blocks, 33,423,360 B. SGLang: a state pool of floor(10**6 x 0.9 / 1.9) = 473,684 B, a
    # slot 36 x 548,864 = 19,759,104 B; 4 slots (79,036,416 B) need a budget of 79,036,416 x 19 / 9
    # = 166,854,656 B. lcm: parents of the largest group's payload, the 36 state rows' 19,759,104 B
    # (the 12 KV rows' 6,684,672 twice is 13,369,344), and two of them, one the null parent:
    # 39,518,208 B. aliased: no budget makes a state hybrid fit.
    reasons = {r.strategy: (r.applies, r.num_blocks, r.reason)
               for r in compare(qwen3_next_tp2(), budget_bytes=1_000_000)}
    planner = ("the budget of 1,000,000 B holds 0 blocks of 26,443,776 B ({}); a plan needs "
               "at least 2: give a budget of at least 52,887,552 B")
    assert reasons == {
        "flat": (False, None, planner.format("one row in every slot")),
        "per-component": (False, None, planner.format("all component rows")),
        "vllm": (False, None, "vLLM refuses to start: the budget of 1,000,000 B holds "
                 "num_blocks = 1,000,000 // 557,056 // 12 = 0 and vLLM needs at least 2 (\"No "
                 "available memory for the cache blocks\"), and one request of 1 token (the "
                 "least any max_model_len asks; no context given) needs 26,738,688 B beside "
                 "the null block's 6,684,672 B; give at least 33,423,360 B"),
        "sglang": (False, None, "SGLang refuses to start: the state pool (473,684 B) holds 0 "
                   "slots of 19,759,104 B, "
                   "fewer than 4: one running request needs 3 and one is kept for padding; "
                   "a budget of 166,854,656 B or more holds them"),
        "aliased": (False, None, ALIASED_STATE_REASON),
        "lcm": (False, None, "the budget of 1,000,000 B holds 0 parent blocks of 19,759,104 B "
                "and one is the null parent; give at least 39,518,208 B")}
    # and a byte under each named budget still does not apply, the named budget does
    for name, least in (("flat", 52_887_552), ("per-component", 52_887_552),
                        ("vllm", 33_423_360), ("sglang", 166_854_656), ("lcm", 39_518_208)):
        assert not run_strategy(name, qwen3_next_tp2(), budget_bytes=least - 1).applies, name
        assert run_strategy(name, qwen3_next_tp2(), budget_bytes=least).applies, name


# ------------------------------------------------------------------------------------------
# Input validation, result shape.


def test_unknown_strategy_lists_known_ones():
    with pytest.raises(ValueError, match="flat, per-component, vllm, sglang, aliased, lcm"):
        run_strategy("jenga", llama_31_8b(), budget_bytes=GIB8)


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"budget_bytes": 0}, "budget_bytes"),
        ({"budget_bytes": 1.5}, "budget_bytes"),
        ({"budget_bytes": GIB8, "context_tokens": 0}, "context_tokens"),
        # past float range once multiplied out: refused with the cap, not an OverflowError
        ({"budget_bytes": 10**400}, "budget_bytes a 401-digit number is too large to be real: "
         "give 1,152,921,504,606,846,976 or less"),
        ({"budget_bytes": GIB8, "context_tokens": 2**40 + 1}, "context_tokens 1,099,511,627,777 "
         "is too large"),
    ],
)
def test_bad_inputs_name_the_field(kwargs, field):
    with pytest.raises(ValueError, match=field):
        run_strategy("flat", llama_31_8b(), **kwargs)


def test_a_strategy_is_named_by_a_string():
    with pytest.raises(ValueError, match=r"strategy is \['flat'\]: use one of flat, "):
        run_strategy(["flat"], llama_31_8b(), budget_bytes=GIB8)


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"mamba_cache_mode": "full"}, "mamba_cache_mode"),
        ({"mamba_chunk_size": 0}, "mamba_chunk_size"),
        ({"mamba_full_memory_ratio": 0}, "mamba_full_memory_ratio"),
        ({"mamba_full_memory_ratio": "lots"}, "mamba_full_memory_ratio"),
        ({"block_size": 0}, "block_size"),
        ({"kernel_block_size": -16}, "kernel_block_size"),
        ({"lcm_padding_bound": -0.1}, "lcm_padding_bound"),
        ({"block_size": 10**320}, "block_size a 321-digit number is too large"),
        ({"kernel_block_size": 2**40 + 1}, "kernel_block_size 1,099,511,627,777 is too large"),
        ({"mamba_chunk_size": 2**41}, "mamba_chunk_size 2,199,023,255,552 is too large"),
        ({"lcm_alignment_bytes": 2**61}, "lcm_alignment_bytes 2,305,843,009,213,693,952 is too "
         "large"),
        ({"sglang_page_size": 2**40 + 1}, "sglang_page_size 1,099,511,627,777 is too large"),
        # the bounds the app's fields and links take, so the CLI and the app agree: SGLang's
        # sliding pool is at most the full one's tokens, S at most 1,024 slots
        ({"swa_full_tokens_ratio": 2},
         r"swa_full_tokens_ratio is 2: give a number in \[0.000001, 1\]"),
        ({"sglang_slots_per_request": 1025}, "sglang_slots_per_request 1,025 is too large to "
         "be real: give 1,024 or less"),
    ],
)
def test_bad_options_name_the_field(kwargs, field):
    with pytest.raises(ValueError, match=field):
        StrategyOptions(**kwargs)


def test_ratios_are_exact():
    opts = StrategyOptions(mamba_full_memory_ratio=0.9, lcm_padding_bound="0.25")
    assert opts.mamba_full_memory_ratio == Fraction(9, 10)
    assert opts.lcm_padding_bound == Fraction(1, 4)


def test_compare_order_and_json_shape():
    results = compare(gpt_oss_20b(), budget_bytes=GPT_OSS_BUDGET, context_tokens=4096)
    assert [r.strategy for r in results] == list(STRATEGIES)
    for r in results:
        d = json.loads(json.dumps(r.to_dict()))
        for key in ("strategy", "block_size", "block_bytes", "num_blocks", "capacity_tokens",
                    "max_concurrency", "breakdown", "formulas"):
            assert key in d
        if r.applies:
            assert sum(d["breakdown"].values()) == GPT_OSS_BUDGET
            assert list(d["breakdown"]) == list(CATEGORIES)
            assert r.formulas and r.why_block_size


def test_result_rejects_a_breakdown_that_does_not_add_up():
    parts = tuple((c, 1 if c == "unused" else 0) for c in CATEGORIES)
    with pytest.raises(ValueError, match="adds up"):
        StrategyResult(strategy="x", budget_bytes=2, applies=True, breakdown=parts)


# ------------------------------------------------------------------------------------------
# Capacity: attention groups hold N pages each, a state group one request's state pages.

GIB40 = 40 * 2**30


def test_capacity_counts_one_requests_state_pages_nemotron():
    prof = nemotron_h_8b()
    state = 24 * (61_440 + 2_097_152)  # 51,806,208 B: all 24 Mamba2 layers of one page
    flat = run_strategy("flat", prof, budget_bytes=GIB40, context_tokens=32_768)
    block = 4 * 528 * 4096 + state
    assert flat.num_blocks == GIB40 // block == 710
    # mode none: the state group holds 1 page, the full group the other 709
    assert flat.capacity_tokens == (710 - 1) * 528 == 374_352
    per = run_strategy("per-component", prof, budget_bytes=GIB40, context_tokens=32_768)
    assert per.capacity_tokens == flat.capacity_tokens

    lcm = run_strategy("lcm", prof, budget_bytes=GIB40, context_tokens=32_768)
    # parent = the state payload; K_full = 51,806,208 // (4 x 16 x 4,096) = 197
    assert lcm.block_bytes == state and lcm.extras["pages_per_parent"]["full_attention"] == 197
    assert lcm.num_blocks == GIB40 // state - 1 == 828
    # 1 parent of state, the other 827 parents x 197 full pages x 16 tokens
    assert lcm.capacity_tokens == 827 * 197 * 16 == 2_606_704
    # concurrency x context stays under capacity by the other requests' state parents:
    # 828 / (1 + 2,048 / 197) = 72.66 requests; 72 more state parents than capacity counts
    assert lcm.concurrency == Fraction(828) / (1 + Fraction(2_048, 197))
    assert 0.9 < float(lcm.concurrency) * 32_768 / lcm.capacity_tokens < 1

    vllm = run_strategy("vllm", prof, budget_bytes=GIB40, context_tokens=32_768)
    # the common convention: 6 state groups x 1 page, the full group the rest; older vLLM's
    # log line (one page per P tokens in every one of the 7 groups) beside it
    assert vllm.num_blocks == GIB40 // (528 * 4096) // 4 == 4_964
    assert vllm.capacity_tokens == (4_964 - 6) * 528 == 2_617_824
    assert vllm.older_logged_tokens == 4_964 // 7 * 528 == 374_352
    # current vLLM's: 4,964 / (ceil(32,768 / 528) = 63 + 6) x 32,768
    assert vllm.logged_tokens == 4_964 * 32_768 // 69 == 2_357_396


def test_capacity_modes_qwen3_next_flat():
    # 1,810 page ids (test_flat_qwen3_next); align: the state group holds 2 pages; all: N too
    for mode, n_pages in (("none", 1_810 - 1), ("align", 1_810 - 2), ("all", 1_810 // 2)):
        r = run_strategy("flat", qwen3_next_tp2(), budget_bytes=ANCHOR_BUDGET,
                         options=StrategyOptions(mamba_cache_mode=mode))
        assert r.capacity_tokens == n_pages * 544, mode


@pytest.mark.parametrize("mode", ["none", "align", "all"])
@pytest.mark.parametrize("strategy", ["flat", "per-component", "lcm"])
@pytest.mark.parametrize("profile", [qwen3_next_tp2, nemotron_h_8b, llama_31_8b])
def test_capacity_is_the_longest_request_that_fits(profile, strategy, mode):
    # without sliding layers, capacity_tokens is exactly the longest context (in pages) at
    # which max_concurrency is still >= 1: the two numbers use the same per-request pages
    opts = StrategyOptions(mamba_cache_mode=mode)
    r = run_strategy(strategy, profile(), budget_bytes=GIB8, options=opts)
    p = r.block_size
    at = run_strategy(strategy, profile(), budget_bytes=GIB8, options=opts,
                      context_tokens=r.capacity_tokens)
    beyond = run_strategy(strategy, profile(), budget_bytes=GIB8, options=opts,
                          context_tokens=r.capacity_tokens + p)
    assert at.concurrency >= 1 > beyond.concurrency


def test_capacity_without_context_splits_ownership_at_capacity():
    r = run_strategy("flat", qwen3_next_tp2(), budget_bytes=ANCHOR_BUDGET)
    assert r.extras["owned_units"] == {"linear_attention": 1, "full_attention": 1_809}


# ------------------------------------------------------------------------------------------
# The SPEC 3.5 workload line says what it counts (state snapshots), next to max concurrency.


def test_workload_line_names_its_state_snapshots():
    r = run_strategy("vllm", qwen3_next_tp2(), budget_bytes=ANCHOR_BUDGET,
                     context_tokens=ANCHOR_CONTEXT)
    # R = 3: T = 786,432; full ceil(T / 544) + 3 + 1 = 1,450; state min(6 + 1,445 + 1, 1,450)
    # = 1,450 in each of 3 groups: 4 x 1,450 = 5,800 <= 7,162. R = 4: full 1,928 + 5 = 1,933,
    # state min(8 + 1,927 + 1, 1,933) = 1,933: 4 x 1,933 = 7,732 > 7,162.
    assert r.extras["workload_max_requests"] == 3
    assert round(r.max_concurrency, 2) == 14.77  # both numbers stay
    text = "\n".join(r.formulas)
    assert "workload with prefix-cache state snapshots (one dummy page" in text
    assert ("fit, a what-if that charges a snapshot every P tokens in any mamba cache mode, not "
            "max_concurrency") in text
    assert ("charges each state group min(2 x R + T // P + 1 + m, a full group's) + R x N pages "
            "(two live pages per request plus a snapshot every P tokens, and one per drafted "
            "token: N = 0)") in text
    assert ("max_concurrency counts a request's state pages as the engine's log does, 1 (mamba "
            "cache mode none)") in text


def test_workload_line_counts_a_one_token_context_in_the_singular():
    # Llama-3.1-8B: 32 layers x 8 KV heads x (128 + 128) x 2 B = 131,072 B a token, a block of
    # 16 tokens 2 MiB: 1 GiB holds 512 blocks. R requests of L = 1 token (T = R) need
    # ceil(R / 16) + R + 1 full pages (m = 0): R = 480 takes 30 + 480 + 1 = 511, R = 481 takes
    # 31 + 481 + 1 = 513 > 512
    r = run_strategy("vllm", load_preset("Llama-3.1-8B").profile(), budget_bytes=2**30,
                     context_tokens=1)
    assert (r.num_blocks, r.extras["workload_max_requests"]) == (512, 480)
    assert ("workload with prefix-cache state snapshots (one dummy page a group, margin 0): at "
            "most 480 requests of 1 token fit") in r.formulas


def test_workload_line_says_why_sliding_layers_fit_more_requests():
    # gpt-oss-20b at 40 GiB, L 8,192: vLLM's log counts 513 sliding pages per request (W - 1 +
    # S tokens each), the workload S once for all requests. 109,226 page ids (54,560 + 54,666
    # owned). R = 208: full 208 x 512 + 209 = 106,705, sliding 208 x ceil(127 / 16) + 8,192 / 16
    # + 209 = 2,385: 109,090 fit; R = 209: 107,218 + 2,394 = 109,612 do not
    r = run_strategy("vllm", gpt_oss_20b(), budget_bytes=40 * 2**30, context_tokens=8_192)
    assert r.num_blocks == 109_226 and r.concurrency == Fraction(109_226, 512 + 513)
    assert r.extras["workload_max_requests"] == 208
    assert ("while max_concurrency counts a request's sliding pages as the engine's log does "
            "(S for each), ceil(min(128 - 1 + 8,192, 8,192) / 16) + 1 = 513; both hold") in (
        "\n".join(r.formulas))


# ------------------------------------------------------------------------------------------
# vLLM: P = A for attention-only models; mamba cache mode all.


def test_vllm_attention_only_p_is_a():
    mla = CacheProfile(layer_types=(FULL,) * 61, kv_bytes_per_slot=1152, name="DeepSeek-V3")
    for opts, p in ((StrategyOptions(kernel_block_size=64), 64),
                    (StrategyOptions(block_size=32), 32),
                    (StrategyOptions(), 16)):
        r = run_strategy("vllm", mla, budget_bytes=GIB8, options=opts)
        assert r.block_size == p
        assert r.block_bytes == 61 * p * 1152
        assert r.num_blocks == GIB8 // (p * 1152) // 61


def test_vllm_mamba_cache_mode_all():
    # vLLM's Qwen3-Next has no prefix caching of state in mode all: vLLM falls back to align.
    # Align's figures at the SPEC anchor: P 544, 7,162 blocks; a request needs cdiv(262,144,
    # 544) = 482 full pages and 2 state pages in each of 3 GDN groups: 7,162 / 488
    named = replace(qwen3_next_tp2(), architectures=("Qwen3NextForCausalLM",))
    asked, align = (run_strategy("vllm", named, budget_bytes=ANCHOR_BUDGET,
                                 context_tokens=ANCHOR_CONTEXT,
                                 options=StrategyOptions(mamba_cache_mode=mode))
                    for mode in ("all", "align"))
    assert asked.applies and (asked.block_size, asked.num_blocks) == (544, 7_162)
    assert (asked.concurrency_numerator, asked.concurrency_denominator) == (7_162, 482 + 3 * 2)
    assert asked.extras["mamba_cache_mode"] == "align"
    assert asked.extras["mamba_cache_mode_asked"] == "all"
    assert asked.formulas[0] == (
        "mamba cache mode all runs as align: vLLM's Qwen3NextForCausalLM does not support "
        "prefix caching of state in mode all, so vLLM starts it in align (\"falling back to "
        "'align' mode\")")
    assert asked.formulas[1:] == align.formulas
    assert asked.logged_tokens == align.logged_tokens == 7_162 * ANCHOR_CONTEXT // 488
    assert "mamba_cache_mode_asked" not in align.extras
    # a refusal in align says it ran as align: one request of 16,777,216 tokens needs
    # cdiv(16,777,216, 544) = 30,841 full pages + 6 state pages, more than 7,162 blocks
    refused = run_strategy("vllm", named, budget_bytes=ANCHOR_BUDGET, context_tokens=2**24,
                           options=StrategyOptions(mamba_cache_mode="all"))
    assert not refused.applies and refused.reason.startswith("vLLM refuses to start")
    assert refused.reason.endswith(
        "(mamba cache mode all runs as align: vLLM's Qwen3NextForCausalLM does not support "
        "prefix caching of state in mode all, so vLLM starts it in align (\"falling back to "
        "'align' mode\"))")
    for model_class in ("KimiLinearForCausalLM", "Lfm2ForCausalLM", "Qwen3_5MoeMTP"):
        assert runs_all_as_align(replace(named, architectures=("Other", model_class))) \
            == model_class
    # supports mode all
    assert runs_all_as_align(replace(named, architectures=("NemotronHForCausalLM",))) is None
    # a state without a conv tensor is lightning attention's, whatever the model is called:
    # vLLM serves it with MiniMaxText01ForCausalLM, which runs all as align
    lightning = CacheProfile(("linear_attention",) * 7 + ("full_attention",), 4096,
                             {"ssm": 2_097_152}, name="typed by hand")
    assert runs_all_as_align(lightning) == "MiniMaxText01ForCausalLM"
    as_all, as_align = (run_strategy("vllm", lightning, budget_bytes=ANCHOR_BUDGET,
                                     context_tokens=131_072,
                                     options=StrategyOptions(mamba_cache_mode=mode))
                        for mode in ("all", "align"))
    assert as_all.formulas[1:] == as_align.formulas and as_all.block_size == 512
    assert as_all.logged_tokens == as_align.logged_tokens
    # the same bytes given raw (no architecture, no chunk): vLLM's get_mamba_chunk_size gives
    # 2,048, so c = lcm(2,048, 16) = 2,048 and P = 2,048 x cdiv(548,864, 2,048 x 1,024) = 2,048
    r = run_strategy("vllm", qwen3_next_tp2(), budget_bytes=ANCHOR_BUDGET,
                     context_tokens=ANCHOR_CONTEXT,
                     options=StrategyOptions(mamba_cache_mode="all"))
    assert r.block_size == 2048 and r.extras["mamba_chunk_size"] == 2048
    assert ("c = lcm(mamba_chunk_size 2048 (vLLM's for a config without one), A) = 2048"
            in r.why_block_size)
    assert r.num_blocks == ANCHOR_BUDGET // (2048 * 1024) // 12 == 1_902
    # 128 state pages per request (one every P tokens) in each of 3 groups, 128 full pages
    assert (r.concurrency_numerator, r.concurrency_denominator) == (1_902, 128 * 4)
    # a chunk of 256 given: c = lcm(256, 16) = 256; P = 256 x cdiv(548,864, 256 x 1,024) = 768
    opts = StrategyOptions(mamba_cache_mode="all", mamba_chunk_size=256)
    r = run_strategy("vllm", qwen3_next_tp2(), budget_bytes=ANCHOR_BUDGET,
                     context_tokens=ANCHOR_CONTEXT, options=opts)
    assert r.block_size == 768
    page = 768 * 1024
    assert r.extras["state_padding_exact"] == [page - 548_864, 548_864]
    assert r.num_blocks == ANCHOR_BUDGET // page // 12 == 5_073
    assert r.capacity_tokens == 5_073 // 4 * 768
    # state pages per request cdiv(262,144, 768) = 342 in each of 3 groups, full 342 too
    assert (r.concurrency_numerator, r.concurrency_denominator) == (5_073, 342 * 4)
    # chunk 48 with A = 32: c = lcm(48, 32) = 96; P = 96 x cdiv(548,864, 96 x 1,024) = 96 x 6
    r = run_strategy("vllm", qwen3_next_tp2(), budget_bytes=ANCHOR_BUDGET, options=StrategyOptions(
        mamba_cache_mode="all", mamba_chunk_size=48, kernel_block_size=32))
    assert r.block_size == 576
    # Nemotron-H's own chunk (its config's chunk_size 128): c = 128; P = 128 x cdiv(2,158,592,
    # 128 x 4,096) = 128 x 5 = 640, where vLLM's 2,048 for a config without one gives 2,048
    own = replace(nemotron_h_8b(), mamba_chunk_size=128)
    r = run_strategy("vllm", own, budget_bytes=GIB8,
                     options=StrategyOptions(mamba_cache_mode="all"))
    assert r.block_size == 640
    assert "lcm(mamba_chunk_size 128 (the model's own), A) = 128" in r.why_block_size
    assert run_strategy("vllm", nemotron_h_8b(), budget_bytes=GIB8, options=StrategyOptions(
        mamba_cache_mode="all")).block_size == 2048
    # the option wins over the model's own
    assert run_strategy("vllm", own, budget_bytes=GIB8, options=StrategyOptions(
        mamba_cache_mode="all", mamba_chunk_size=256)).block_size == 768


def test_vllm_mode_all_is_vllm_031s_for_a_model_of_state_layers_alone():
    # vLLM 0.31, the last release with mode all, aligns only a hybrid's block size to the
    # chunk (Platform._align_hybrid_block_size runs for model_config.is_hybrid): a model of
    # state layers alone snapshots its state every --block-size tokens (MambaModelConfig sets
    # mamba_block_size to it). falcon-mamba-7b's shape, 64 Mamba1 layers of conv 8,192 x 3 x 2
    # = 49,152 B and ssm 8,192 x 16 x 2 = 262,144 B: a page of 311,296 B, 64 layers a block
    falcon = CacheProfile(("linear_attention",) * 64, 0, {"conv": 49_152, "ssm": 262_144},
                          name="falcon-mamba-7b", architectures=("FalconMambaForCausalLM",))
    budget, context = 40 * 2**30, 32_768
    blocks = budget // 311_296 // 64
    assert blocks == 2_155
    for block in (16, 64):
        r = run_strategy("vllm", falcon, budget_bytes=budget, context_tokens=context,
                         options=StrategyOptions(mamba_cache_mode="all", block_size=block,
                                                 mamba_chunk_size=256))  # the chunk: unused
        assert (r.block_size, r.block_bytes, r.num_blocks) == (block, 64 * 311_296, blocks)
        # a snapshot every block: cdiv(32,768, 16) = 2,048 pages a request (512 at 64), where
        # FlatKV had P = lcm(chunk, 16) = 256 (2,048 without the chunk: 16 pages, 134.69x)
        assert (r.concurrency_numerator, r.concurrency_denominator) == (blocks, context // block)
        assert r.logged_tokens == blocks * block == {16: 34_480, 64: 137_920}[block]
        assert r.older_logged_tokens == r.logged_tokens and "mamba_chunk_size" not in r.extras
        assert r.extras["log_lines"] == [
            MODE_ALL_DEPRECATED_LOG, MODE_ALL_V1_RUNNER_LOG, "Available KV cache memory: 40.0 GiB",
            f"GPU KV cache size: {r.logged_tokens:,} tokens, Maximum concurrency for 32,768 "
            f"tokens per request: {blocks / (context // block):.2f}x"]
    assert f"{2_155 / 2_048:.2f}" == "1.05"
    # Mamba-Codestral's 64 Mamba2 layers of conv (8,192 + 2 x 8 x 128) x 3 x 2 = 61,440 B and
    # ssm 128 x 64 x 128 x 2 = 2,097,152 B at block 16: one request's 2,048 pages a layer need
    # 2,048 x 64 x 2,158,592 B, more than 40 GiB: vLLM 0.31 refuses to start
    codestral = CacheProfile(("linear_attention",) * 64, 0, {"conv": 61_440, "ssm": 2_097_152},
                             name="Mamba-Codestral-7B", architectures=("Mamba2ForCausalLM",))
    refused = run_strategy("vllm", codestral, budget_bytes=budget, context_tokens=context,
                           options=StrategyOptions(mamba_cache_mode="all"))
    assert not refused.applies and refused.reason.startswith(
        f"vLLM refuses to start: one request of 32,768 tokens needs {2_048 * 64 * 2_158_592:,} B")


def test_vllm_mode_all_sizes_p_as_vllm_031_with_drafted_tokens():
    # vLLM 0.31's FalconH1ForCausalLM sizes P from the state without the drafted conv rows
    # (its get_mamba_state_shape_from_config passes no num_spec; 0.32 and later do). Falcon-H1-
    # 7B at TP 1: state 1,594,368 B, conv rows of 7,168 B, 1,024 B a token, chunk 128: P = 128 x
    # cdiv(1,594,368, 128 x 1,024) = 1,664, a page of 1,703,936 B
    falcon = load_preset("Falcon-H1-7B").profile()
    assert (falcon.state_bytes_per_layer, falcon.conv_row_bytes, falcon.kv_bytes_per_slot,
            falcon.mamba_chunk_size) == (1_594_368, 7_168, 1_024, 128)
    fits = run_strategy("vllm", falcon, budget_bytes=40 * 2**30, context_tokens=32_768,
                        options=StrategyOptions(mamba_cache_mode="all", speculative_tokens=15))
    # 15 rows widen the state to 1,594,368 + 15 x 7,168 = 1,701,888 B: the page holds it
    assert fits.applies and fits.block_size == 1_664
    assert fits.extras["state_padding_exact"] == [1_703_936 - 1_701_888, 1_701_888]
    assert any("P is sized from the state without them (FalconH1ForCausalLM's "
               "get_mamba_state_shape_from_config passes no num_spec in vLLM 0.31)" in line
               for line in fits.formulas)
    # 16 rows: 1,709,056 B, more than the page: 0.31 fails at start-up, where sizing P with
    # them would give 128 x cdiv(1,709,056, 131,072) = 1,792
    fails = run_strategy("vllm", falcon, budget_bytes=40 * 2**30, context_tokens=32_768,
                         options=StrategyOptions(mamba_cache_mode="all", speculative_tokens=16))
    assert not fails.applies and fails.reason.startswith(
        "vLLM fails at start-up: it sizes P (1,664) and the page (1,703,936 B)")
    assert "at this P it starts with at most 15 speculative tokens" in fails.reason
    # align is a current release's: P from the widened state, 16 x cdiv(1,709,056, 16 x
    # 1,024) = 1,680
    assert run_strategy("vllm", falcon, budget_bytes=40 * 2**30, context_tokens=32_768,
                        options=StrategyOptions(mamba_cache_mode="align",
                                                speculative_tokens=16)).block_size == 1_680


def test_vllm_mode_all_log_is_vllm_031s():
    # Nemotron-H keeps mode all in vLLM 0.31: its deprecation warning, its model runner's
    # warning (V2 does not run mode all), the block size and padding lines, the Available line
    # (0.31's cache) and the KV cache size; no line of blocks fit after warm-up (0.34's)
    nemotron = replace(nemotron_h_8b(), mamba_chunk_size=128)
    r = run_strategy("vllm", nemotron, budget_bytes=40 * 2**30, context_tokens=8_192,
                     options=StrategyOptions(mamba_cache_mode="all"))
    # P = 128 x cdiv(2,158,592, 128 x 4,096) = 640; 4 full layers, 24 Mamba2: groups of 4
    # layers, a block 4 x 640 x 4,096 = 10,485,760 B; 42,949,672,960 // 10,485,760 = 4,096
    # blocks; a request cdiv(8,192, 640) = 13 full pages + 6 state groups x 13 = 91 blocks
    assert (r.block_size, r.block_bytes, r.num_blocks) == (640, 10_485_760, 4_096)
    assert (r.concurrency_numerator, r.concurrency_denominator) == (4_096, 91)
    assert r.logged_tokens == int(4_096 / 91 * 8_192) == 368_730
    assert MODE_ALL_DEPRECATED_LOG == (
        "Mamba cache mode 'all' is deprecated and will be removed in an upcoming release. If "
        "this is a problem, please open an issue at https://github.com/vllm-project/vllm/issues.")
    assert MODE_ALL_V1_RUNNER_LOG == ("Model Runner V2 does not yet support mamba cache mode "
                                      "'all'; using the V1 model runner instead.")
    assert r.extras["log_lines"] == [
        MODE_ALL_DEPRECATED_LOG, MODE_ALL_V1_RUNNER_LOG,
        "Setting attention block size to 640 tokens to ensure that attention page size is >= "
        "mamba page size.",
        f"Padding mamba page size by {100 * (2_621_440 - 2_158_592) / 2_158_592:.2f}% to ensure "
        "that mamba page size and attention page size are exactly equal.",
        "Available KV cache memory: 40.0 GiB",
        "GPU KV cache size: 368,730 tokens, Maximum concurrency for 8,192 tokens per request: "
        "45.01x"]
    assert r.extras["log_release"] == "0.31" and "log_release" not in run_strategy(
        "vllm", nemotron, budget_bytes=40 * 2**30, context_tokens=8_192,
        options=StrategyOptions(mamba_cache_mode="align")).extras
    # 0.31 names its pools "GPU", or the device type: no "GPU + host" form (0.34's HiSparse)
    forms = r.extras["log_line_forms"][r.extras["log_lines"][-1]]
    assert [name for name, _ in forms if "named" in name] == [
        "named \"XPU KV cache size\", as vLLM 0.31 logs it on an Intel GPU",
        "named \"CPU KV cache size\", as vLLM 0.31 logs it on its CPU backend"]


def test_vllm_mode_all_runner_line_elides_the_drafting_method():
    # vLLM 0.31 lists every feature Model Runner V2 lacks in one line (config/vllm.py
    # use_v2_model_runner): ngram drafting (its speculative method before the mode) joins mode
    # all, MTP does not; FlatKV, not told the method, elides it where tokens are drafted
    nemotron = replace(nemotron_h_8b(), mamba_chunk_size=128)
    lines = {n: run_strategy("vllm", nemotron, budget_bytes=40 * 2**30, context_tokens=8_192,
                             options=StrategyOptions(mamba_cache_mode="all",
                                                     speculative_tokens=n)).extras["log_lines"]
             for n in (0, 2)}
    assert lines[0][1] == MODE_ALL_V1_RUNNER_LOG and lines[2][1] == (
        "Model Runner V2 does not yet support ... mamba cache mode 'all'; using the V1 model "
        "runner instead.") == MODE_ALL_V1_RUNNER_DRAFTING_LOG
    ngram = ("Model Runner V2 does not yet support speculative method 'ngram', mamba cache "
             "mode 'all'; using the V1 model runner instead.")
    for logged in (ngram, MODE_ALL_V1_RUNNER_LOG):  # an ngram run's line, and an MTP run's
        check = check_log(lines[2][1:2], "vllm", logged)
        assert [c.outcome for c in check.lines] == [SAME]
    # undrafted, the plain line is FlatKV's, and the ngram line is not
    assert [c.outcome for c in check_log(lines[0][1:2], "vllm", ngram).lines] == [MISSING]


def test_vllm_log_flavour_words_mode_alls_lines_as_the_layout_is_sized():
    # the release whose words the lines are is told to the layout, not rewritten after it: a
    # current one (0.34) logs the blocks it fits after warm-up, 4,096 blocks of 10,485,760 B
    # being 42,949,672,960 B = 40 x 2^30 (40.0 GiB); 0.31, its cache the Available line's, not
    assert 4_096 * 10_485_760 == 40 * 2**30
    assert warmup_lines(4_096, 10_485_760, CURRENT_LOG) == [
        "Memory after warmup: ... 4096 KV cache blocks (40.0 GiB) fit within the requested ... "
        "GiB. ..."]
    kept, fallback = mode_all_log(fallback=False), mode_all_log(fallback=True)
    assert warmup_lines(4_096, 10_485_760, kept) == warmup_lines(4_096, 10_485_760, fallback) == []
    # 0.31 opens with its deprecation warning, then its model runner's (the mode kept) or its
    # fallback's (the mode asked, all, run as align; a drafting run's says the same)
    assert CURRENT_LOG.opening == () and kept.opening == (MODE_ALL_DEPRECATED_LOG,
                                                          MODE_ALL_V1_RUNNER_LOG)
    assert fallback.opening == (MODE_ALL_DEPRECATED_LOG, ALL_AS_ALIGN_LOG)
    assert mode_all_log(fallback=True, drafting=True) == fallback
    assert (CURRENT_LOG.mode_asked, kept.mode_asked, fallback.mode_asked) == (None, None, "all")
    # Qwen3-Next falls back: its lines open so, and its extras end with the mode asked, then
    # the release (the order its JSON has always had)
    qwen = load_preset("Qwen3-Next-80B-A3B").profile()
    r = run_strategy("vllm", qwen, budget_bytes=40 * 2**30, context_tokens=8_192,
                     options=StrategyOptions(mamba_cache_mode="all"))
    assert r.extras["log_lines"][:2] == [MODE_ALL_DEPRECATED_LOG, ALL_AS_ALIGN_LOG]
    assert list(r.extras)[-2:] == ["mamba_cache_mode_asked", "log_release"]
    assert (r.extras["mamba_cache_mode_asked"], r.extras["log_release"]) == ("all", "0.31")
    assert not any(line.startswith("Memory after warmup") for line in r.extras["log_lines"])


def test_sliding_layers_without_a_window_name_the_user_field():
    with pytest.raises(ValueError, match="sliding_window.*--sliding-window"):
        prof = CacheProfile(layer_types=(SLIDING, SLIDING, FULL, FULL), kv_bytes_per_slot=2048)
        compare(prof, budget_bytes=2**30)


# ------------------------------------------------------------------------------------------
# Ratios: bounded, exact, and every bad one is a ValueError naming the field.


@pytest.mark.parametrize(
    "value",
    ["1e999999999", "1e999999", "1e-999999", "0e999999999", "inf", "nan", "1/0", "9" * 100,
     float("inf"), float("nan"), 1e300, 5e-324, pytest.param(10**5000, id="10**5000"), 0, -1,
     1_000_001, True, None, "x"],
)
def test_bad_ratios_are_refused_at_once(value):
    with pytest.raises(ValueError, match=r"mamba_full_memory_ratio is .*\[0.000001, 1000000\]"):
        StrategyOptions(mamba_full_memory_ratio=value)


def test_ratio_bounds_and_forms():
    assert StrategyOptions(mamba_full_memory_ratio="1e6").mamba_full_memory_ratio == 10**6
    assert StrategyOptions(swa_full_tokens_ratio="1e-6").swa_full_tokens_ratio == Fraction(
        1, 10**6)
    assert StrategyOptions(mamba_full_memory_ratio="3/4").mamba_full_memory_ratio == Fraction(
        3, 4)
    assert StrategyOptions(lcm_padding_bound=0).lcm_padding_bound == 0
    assert StrategyOptions(lcm_padding_bound="10").lcm_padding_bound == 10
    with pytest.raises(ValueError, match=r"lcm_padding_bound is 10\.5: .*\[0, 10\]"):
        StrategyOptions(lcm_padding_bound=10.5)


def test_ratio_text():
    from flatkv.strategies.base import ratio_text

    assert ratio_text(Fraction(9, 10)) == "0.9"
    assert ratio_text(Fraction(10**6)) == "1e+06"
    assert ratio_text(Fraction(1, 3)) == "1/3"
    assert ratio_text(Fraction(1, 3 * 10**7)) == "~3.33333e-08"


# ------------------------------------------------------------------------------------------
# Result shape helpers.


def test_to_dict_puts_extras_beside_the_fields_once():
    r = run_strategy("vllm", qwen3_next_tp2(), budget_bytes=ANCHOR_BUDGET,
                     context_tokens=ANCHOR_CONTEXT)
    d = r.to_dict()
    assert "extras" not in d
    assert d["group_size"] == 12 and d["max_concurrency_exact"] == [7_162, 485]
    # extras sit beside the fields in JSON, so no extras key may be a field's name
    assert not set(EXTRAS) & {f.name for f in fields(StrategyResult)}


def test_every_extras_key_written_or_read_is_one_the_registry_explains():
    # a key written that EXTRAS does not list is refused where it is written
    with pytest.raises(ValueError, match=r"extras \['num_block'\] are not in EXTRAS"):
        StrategyResult(strategy="x", budget_bytes=1, applies=True,
                       breakdown=tuple((c, int(c == "unused")) for c in CATEGORIES),
                       extras={"num_block": 1})
    # and a key read (with .get, which a misspelling would leave None) must be one of them
    root = Path(__file__).resolve().parents[1]
    read = {m[1] for path in [*root.glob("flatkv/**/*.py"), *root.glob("app_pages/*.py")]
            for m in re.finditer(r"extras(?:\.get\(|\[)[\"']([a-z_0-9]+)[\"']",
                                 path.read_text())}
    assert "windows_as_full" in read and "log_lines" in read  # the search finds reads
    assert read - set(EXTRAS) == set()


def test_unit_parts_rejects_unknown_categories():
    from flatkv.strategies.base import unit_parts

    assert unit_parts(state=5) == {c: 5 * (c == "state") for c in CATEGORIES if c != "unused"}
    with pytest.raises(ValueError, match="unit_parts"):
        unit_parts(unused=1)


def test_vllm_keeps_minimax_lightning_state_in_the_mamba_cache_dtype():
    # MiniMax-M1 on vLLM 0.23.0 (bench/vllm_check.py --vllm-dropped): 70 lightning layers of
    # 64 x 128 x 128 x 2 B = 2,097,152 B, 10 full layers of 8 x 128 x 2 x 2 = 4,096 B a token.
    # P = 16 x cdiv(2,097,152, 16 x 4,096) = 512, a page 512 x 4,096 = 2,097,152 B (no
    # padding); groups of min(70, 10) = 10 layers, 7 lightning + 1 full, a block 10 pages
    spec = load_preset("MiniMax-M1")
    budget, context = 40 * 2**30, 32_768
    r = run_strategy("vllm", spec.profile(), budget_bytes=budget, context_tokens=context)
    assert 16 * -(-2_097_152 // (16 * 4_096)) == r.block_size == 512
    assert r.block_bytes == 10 * 512 * 4_096 == 20_971_520
    assert r.num_blocks == budget // 20_971_520 == 2_048
    # a request: cdiv(32,768, 512) = 64 full blocks + 1 state block in each of 7 groups
    assert (r.concurrency_numerator, r.concurrency_denominator) == (2_048, 64 + 7)
    assert r.logged_tokens == 2_048 * context // 71 == 945_195
    # vLLM keeps the state in --mamba-cache-dtype's dtype (auto: the model's bfloat16), not
    # --mamba-ssm-cache-dtype's: float32 there is the ssm dtype float32 here, twice the state,
    # P = 16 x cdiv(4,194,304, 65,536) = 1,024, 1,024 blocks of 41,943,040 B, 32 + 7 a request
    f32 = run_strategy("vllm", spec.with_options(ssm_dtype="float32").profile(),
                       budget_bytes=budget, context_tokens=context)
    assert (f32.block_size, f32.block_bytes, f32.num_blocks) == (1_024, 41_943_040, 1_024)
    assert f32.logged_tokens == 1_024 * context // 39 == 860_370
    assert ("lightning state in float32 (the ssm dtype): vLLM's MiniMaxText01ForCausalLM keeps "
            "it in --mamba-cache-dtype's dtype (auto: the model's) and reads no "
            "--mamba-ssm-cache-dtype, so set the ssm dtype to what --mamba-cache-dtype gives "
            "to match a log") in f32.formulas
    # a state with a conv tensor reads --mamba-ssm-cache-dtype: no such line
    nemotron = run_strategy("vllm", load_preset("Nemotron-H-8B").profile(), budget_bytes=budget)
    assert not any(f.startswith("lightning state") for f in nemotron.formulas)


def test_vllm_0_23_weighs_minimax_one_request_against_the_whole_budget():
    # the releases serving MiniMax-M1 (up to 0.23.0) check one request against the whole
    # budget; 0.29 and later hold the null block back (bench/vllm_check.py --vllm-dropped's
    # edge rows). A request of 32,768 tokens: 64 full blocks + 7 state blocks of 20,971,520 B
    profile, needed = load_preset("MiniMax-M1").profile(), 71 * 20_971_520
    assert needed == 1_488_977_920
    fits = run_strategy("vllm", profile, budget_bytes=needed, context_tokens=32_768)
    assert (fits.num_blocks, fits.logged_tokens) == (71, 32_768)  # concurrency 71 / 71
    short = run_strategy("vllm", profile, budget_bytes=needed - 1, context_tokens=32_768)
    assert not short.applies and short.reason.startswith(
        "vLLM refuses to start: one request of 32,768 tokens needs 1,488,977,920 B of KV cache "
        "(1.39 GiB: its pages in every group, 10 layers a page, at P 512), more than the "
        "1,488,977,919 B (1.39 GiB) available (up to 0.23.0, the last release serving the "
        "model, it weighs the request against the whole budget; 0.29 and later hold the null "
        "block back) "
        "(\"To serve at least one request with the model's max seq len\"); its estimated "
        "maximum model length is ")
    # 1 B under, 70 blocks fit: 63 full ones beside the 7 state blocks, 63 x 512 = 32,256
    assert short.reason.endswith(f"its estimated maximum model length is 32,256: give a "
                                 f"context of at most 32,256 or a budget of at least {needed:,} "
                                 "B (" + last_served_text(profile) + ")")
    # one block or less: 0.23.0 says "No available memory" only at 0 B, so its request check
    # refuses first and names the same least budget, not the null block's one more
    for budget in (20_971_520, 1):
        tiny = run_strategy("vllm", profile, budget_bytes=budget, context_tokens=32_768)
        assert not tiny.applies and tiny.reason.startswith(
            "vLLM refuses to start: one request of 32,768 tokens needs 1,488,977,920 B")
        assert "No available memory" not in tiny.reason and tiny.reason.endswith(
            f"not even one token fits: give a budget of at least {needed:,} B ("
            + last_served_text(profile) + ")")
    # the same bytes under no dropped architecture: current releases keep the null block's
    # 20,971,520 B out of the check (the architecture alone decides)
    served = replace(profile, architectures=())
    assert not run_strategy("vllm", served, budget_bytes=needed,
                            context_tokens=32_768).applies


@pytest.mark.parametrize(("architecture", "held"), [
    ("Plamo2ForCausalLM", False),  # last served by 0.26.0
    ("MiniMaxM1ForCausalLM", False),  # 0.23.0
    ("Qwen3NextForCausalLM", True),  # served by current releases
])
def test_vllm_holds_the_null_block_back_as_the_last_release_serving_the_model(architecture,
                                                                               held):
    # the start-up check holds the null block back since 0.29 (PR #47272): a model's last
    # release decides, read as a number ("0.26.0" before 0.29; a string compare would too,
    # but "0.100" would not); the same bytes, another architecture, another least budget
    profile = replace(load_preset("MiniMax-M1").profile(), architectures=(architecture,))
    assert null_block_checked(profile) is held
    assert release_key("0.26.0") < NULL_BLOCK_CHECKED_SINCE <= release_key("0.29.0") < (
        release_key("0.100.0"))
    # MiniMax-M1's bytes at 32,768 tokens: 71 blocks of 20,971,520 B, one more held back
    needed = 71 * 20_971_520
    starts = run_strategy("vllm", profile, budget_bytes=needed, context_tokens=32_768).applies
    assert starts is not held


def test_vllm_starts_a_dense_mla_model_from_kernel_blocks_of_16():
    # vLLM 0.31 to 0.34 run a dense MLA model on the first MLA backend that takes the block
    # size: FLASH_ATTN_MLA on an H100 (bf16), TRITON_MLA on any GPU (fp8 too), both multiples
    # of 16, so block 16 runs as it is (bench/vllm_check.py: FLASH_ATTN_MLA and TRITON_MLA rows)
    profile = load_preset("DeepSeek-V3").profile()
    assert profile.kernel_block_size == 16
    r = run_strategy("vllm", profile, budget_bytes=80 * 10**9, context_tokens=32_768)
    # A = max(16, block 16) = 16 = P; a page holds 16 x 1,152 B; one group of 61 layers
    assert r.block_size == 16 and r.block_bytes == 61 * 16 * 1_152 == 1_124_352
    assert r.num_blocks == 80 * 10**9 // (16 * 1_152) // 61 == 71_152
    # a request takes cdiv(32,768, 16) = 2,048 blocks: 71,152 / 2,048 x 32,768 tokens logged
    assert r.capacity_tokens == r.logged_tokens == 71_152 * 32_768 // 2_048 == 1_138_432
    assert "kernel block size 16 (the model's own)" in r.why_block_size
    # blocks 32 and 48 run as told too (FlatKV read them as FlashMLA's 64 before)
    for block in (32, 48):
        told = run_strategy("vllm", profile, budget_bytes=80 * 10**9,
                            options=StrategyOptions(block_size=block))
        assert (told.block_size, told.num_blocks) == (block, 80 * 10**9 // (block * 1_152) // 61)
    # the option overrides the model's own (FlashMLA: 64; CUTLASS MLA on Blackwell: 128)
    r64 = run_strategy("vllm", profile, budget_bytes=80 * 10**9, context_tokens=32_768,
                       options=StrategyOptions(kernel_block_size=64))
    assert 80 * 10**9 // (64 * 1_152) // 61 == 17_788
    assert (r64.block_size, r64.num_blocks) == (64, 17_788)
    assert r64.logged_tokens == 17_788 * 64
    # DeepSeek-V3.2's sparse MLA keeps FlashMLA sparse's 64; a model without MLA has none (16)
    assert load_preset("DeepSeek-V3.2").profile().kernel_block_size == 64
    assert load_preset("Llama-3.1-8B").profile().kernel_block_size is None


def test_apportion_gives_remainders_largest_first_ties_to_the_earlier():
    from flatkv.strategies.base import apportion

    # 10 over 1 : 2 : 3 is 1.67, 3.33, 5: floors 1, 3, 5 and the one left goes to 0.67
    assert apportion(10, [Fraction(1), Fraction(2), Fraction(3)]) == [2, 3, 5]
    # equal remainders: the earlier weight first
    assert apportion(3, [Fraction(1), Fraction(1)]) == [2, 1]
    assert apportion(1, [Fraction(1)] * 3) == [1, 0, 0]
    with pytest.raises(ValueError, match="positive total weight"):
        apportion(1, [Fraction(0)])


def test_every_layout_that_logs_a_figure_names_its_log_line():
    # the Budget page titles a logged figure by its engine's log line: a strategy that sets
    # logged_tokens without a LOGGED_AS entry would have shown "<name>'s log"
    logging = {r.strategy for r in compare(qwen3_next_tp2(), budget_bytes=ANCHOR_BUDGET,
                                           context_tokens=ANCHOR_CONTEXT)
               if r.logged_tokens is not None}
    assert logging == {"vllm", "sglang"}
    assert [logged_as(name) for name in sorted(logging)] == [
        "SGLang's max_total_num_tokens", 'vLLM\'s "GPU KV cache size"']
    assert logged_as("trtllm") == "trtllm's log"


# ------------------------------------------------------------------------------------------
# Speculative decoding: N drafted tokens a step (vLLM's num_speculative_tokens)


def _drafting(rows: int | None = 3) -> CacheProfile:
    """Qwen3-Next at TP 2 as a model gives it: its GDN conv state is 3 rows (K = 4) of
    4,096 x 2 B = 8,192 B each."""
    return replace(qwen3_next_tp2(), conv_rows=rows)


def test_vllm_widens_the_gdn_conv_state_and_holds_n_more_state_pages():
    # N = 2: conv 24,576 B of 3 rows -> 5 rows = 40,960 B; state 40,960 + 524,288 = 565,248;
    # P = 16 x cdiv(565,248, 16 x 1,024) = 16 x 35 = 560; page 560 x 1,024 = 573,440
    r = run_strategy("vllm", _drafting(), budget_bytes=ANCHOR_BUDGET,
                     context_tokens=ANCHOR_CONTEXT,
                     options=StrategyOptions(mamba_cache_mode="align", speculative_tokens=2))
    assert r.extras["drafted_conv_bytes"] == 24_576 // 3 * 5 == 40_960
    assert (r.block_size, r.block_bytes) == (560, 12 * 573_440)
    assert r.extras["state_padding_exact"] == [573_440 - 565_248, 565_248]
    assert r.num_blocks == ANCHOR_BUDGET // 573_440 // 12 == 6_957
    # a request: ceil(262,144 / 560) = 469 full pages and 2 + 2 pages in each of 3 GDN groups
    assert (r.concurrency_numerator, r.concurrency_denominator) == (6_957, 469 + 3 * (2 + 2))
    assert r.logged_tokens == int(6_957 / 481 * 262_144) == 3_791_550
    assert ("  pages per request, state: 2 + 2 speculative = 4 (mamba cache mode "
            "align; a state page per drafted token)") in r.formulas
    assert ("capacity_tokens = N x P, N = (6,957 - 3 state groups x 4 pages per request, "
            "mode align, 2 speculative) // 1 attention group = 6,945; 6,945 x 560 = "
            "3,889,200") in r.formulas
    assert bd(r)["state"] == r.extras["owned_units"]["linear_attention.0"] * 3 * 12 * 565_248
    # N = 1 in mode none: conv 4 rows = 32,768 B, state 557,056 = 544 x 1,024: P stays 544,
    # the state page no longer padded; a request holds 482 + 3 x (1 + 1) pages
    one = run_strategy("vllm", _drafting(), budget_bytes=ANCHOR_BUDGET,
                       context_tokens=ANCHOR_CONTEXT,
                       options=StrategyOptions(speculative_tokens=1))
    assert (one.block_size, one.num_blocks) == (544, 7_162)
    assert one.extras["state_padding_exact"] == [0, 557_056]
    assert (one.concurrency_numerator, one.concurrency_denominator) == (7_162, 482 + 3 * 2)
    # mode all: cdiv(L, P) + N state pages per group (vLLM 0.28)
    assert (request_pages(LINEAR, 1_000, 544, StrategyOptions(mamba_cache_mode="all",
                                                              speculative_tokens=3), None)
            == 2 + 3)


def test_an_mtp_layer_added_to_the_model_joins_vllms_full_attention_group():
    # MTP with 2 drafted tokens: the model plus one full-attention layer (13 full, 36 GDN):
    # groups of 13 (36 >= 1.5 x 13), 3 padding GDN layers, 47,878,147,932 // 573,440 // 13
    # = 6,422 blocks; a request still 469 + 3 x (2 + 2) = 481 of them: 13.35x
    mtp = replace(_drafting(), layer_types=(*qwen3_next_tp2().layer_types, FULL))
    r = run_strategy("vllm", mtp, budget_bytes=ANCHOR_BUDGET, context_tokens=ANCHOR_CONTEXT,
                     options=StrategyOptions(mamba_cache_mode="align", speculative_tokens=2))
    assert (r.block_size, r.extras["group_size"], r.num_blocks) == (560, 13, 6_422)
    assert r.extras["padding_layers_per_type"] == {LINEAR: 3, FULL: 0}
    assert (r.concurrency_numerator, r.concurrency_denominator) == (6_422, 481)
    assert round(r.max_concurrency, 2) == 13.35


def test_vllm_counts_drafted_state_pages_in_its_start_up_check():
    # 1 request of 262,144 tokens at N = 2 in align: 12 x 573,440 x (469 + 3 x 4) B, and the
    # null block's 12 x 573,440 B beside it
    block = 12 * 573_440
    need = block * 481
    fits = run_strategy("vllm", _drafting(), budget_bytes=need + block,
                        context_tokens=ANCHOR_CONTEXT,
                        options=StrategyOptions(mamba_cache_mode="align", speculative_tokens=2))
    short = run_strategy("vllm", _drafting(), budget_bytes=need + block - 1,
                         context_tokens=ANCHOR_CONTEXT,
                         options=StrategyOptions(mamba_cache_mode="align", speculative_tokens=2))
    assert fits.applies and fits.concurrency == Fraction(482, 481)
    assert not short.applies and f"needs {need:,} B of KV cache" in short.reason


def test_vllm_033_holds_a_prefill_checkpoint_block_in_align():
    # vLLM 0.33+ on Hopper: Qwen3-Next's GDN prefill on FlashInfer keeps 1 prefill checkpoint
    # block a request in align and aligns P to 64. A = 64: P = 64 x cdiv(548,864, 64 x 1,024) =
    # 64 x 9 = 576; 47,878,147,932 // (576 x 1,024) // 12 = 6,764 blocks; a request of 262,144
    # tokens holds cdiv(262,144, 576) = 456 full blocks and 2 + 1 in each of 3 GDN groups
    hopper = StrategyOptions(mamba_cache_mode="align", prefill_checkpoint_blocks=1,
                             kernel_block_size=64)
    r = run_strategy("vllm", qwen3_next_tp2(), budget_bytes=ANCHOR_BUDGET,
                     context_tokens=ANCHOR_CONTEXT, options=hopper)
    assert (r.block_size, r.num_blocks) == (576, 6_764)
    assert r.concurrency == Fraction(6_764, 456 + 3 * 3) and round(r.max_concurrency, 2) == 14.55
    assert r.logged_tokens == 6_764 * ANCHOR_CONTEXT // 465 == 3_813_208
    text = "\n".join(r.formulas)
    assert ("pages per request, state: 2 + 1 prefill checkpoint = 3 (mamba cache mode "
            "align; vLLM's prefill checkpoint blocks: 0.32+ for Mamba2 layers, 0.33+ for GDN on "
            "FlashInfer, 0.31+ for Kimi-K3's KDA and 0.32+ for Glm5Next's on FlashKDA)") in text
    assert "3 pages per request, mode align, 1 prefill checkpoint)" in text
    # a Qwen3-Next class aligns A to the checkpoints' grid of 64 itself: the same figures at
    # kernel block 16 (544 without checkpoint blocks, which no GDN keeps off FlashInfer)
    qwen = replace(qwen3_next_tp2(), architectures=("Qwen3NextForCausalLM",))
    told = replace(hopper, kernel_block_size=None)
    aligned = run_strategy("vllm", qwen, budget_bytes=ANCHOR_BUDGET,
                           context_tokens=ANCHOR_CONTEXT, options=told)
    assert (aligned.block_size, aligned.num_blocks) == (576, 6_764)
    assert ("A = max(kernel block size 16, block_size 16) = 16, aligned to 64: its GDN layers' "
            "prefill checkpoints lie on a grid of 64 tokens") in aligned.why_block_size
    assert run_strategy("vllm", qwen, budget_bytes=ANCHOR_BUDGET, context_tokens=ANCHOR_CONTEXT,
                        options=replace(told, prefill_checkpoint_blocks=0)).block_size == 544
    assert run_strategy("vllm", qwen3_next_tp2(), budget_bytes=ANCHOR_BUDGET,
                        context_tokens=ANCHOR_CONTEXT, options=told).block_size == 544
    # every paged layout counts them, as the mode's pages: the flat plan (P 544, 1,810 page
    # ids, one state group) holds 482 full pages and 2 + 1 state pages a request
    flat = run_strategy("flat", qwen3_next_tp2(), budget_bytes=ANCHOR_BUDGET,
                        context_tokens=ANCHOR_CONTEXT, options=hopper)
    plain = run_strategy("flat", qwen3_next_tp2(), budget_bytes=ANCHOR_BUDGET,
                         context_tokens=ANCHOR_CONTEXT,
                         options=replace(hopper, prefill_checkpoint_blocks=0))
    assert (flat.num_blocks, flat.concurrency) == (1_810, Fraction(1_810, 482 + 3))
    assert plain.concurrency == Fraction(1_810, 482 + 2)
    # only align keeps them: modes none and all give the same figures with or without
    for mode in ("none", "all"):
        kept, without = (run_strategy("vllm", qwen3_next_tp2(), budget_bytes=ANCHOR_BUDGET,
                                      context_tokens=ANCHOR_CONTEXT,
                                      options=StrategyOptions(mamba_cache_mode=mode,
                                                              prefill_checkpoint_blocks=k))
                         for k in (1, 0))
        assert kept.concurrency == without.concurrency, mode
    with pytest.raises(ValueError, match="prefill_checkpoint_blocks"):
        StrategyOptions(prefill_checkpoint_blocks=-1)


def test_a_conv_state_vllm_does_not_widen_keeps_its_bytes():
    # Mamba1 (Jamba) and raw bytes name no conv rows: the state page stays, the pages grow
    kept = run_strategy("vllm", _drafting(None), budget_bytes=ANCHOR_BUDGET,
                        context_tokens=ANCHOR_CONTEXT,
                        options=StrategyOptions(speculative_tokens=2))
    assert (kept.block_size, kept.num_blocks) == (544, 7_162)
    assert kept.concurrency_denominator == 482 + 3 * (1 + 2)
    assert "drafted_conv_bytes" not in kept.extras
    assert any(f.startswith("speculative tokens 2: the conv state is kept as given")
               for f in kept.formulas)


def test_every_paged_layout_holds_n_more_state_pages_a_request():
    options = StrategyOptions(speculative_tokens=2)
    for name in ("flat", "per-component", "lcm"):
        plain = run_strategy(name, qwen3_next_tp2(), budget_bytes=ANCHOR_BUDGET,
                             context_tokens=ANCHOR_CONTEXT)
        drafted = run_strategy(name, qwen3_next_tp2(), budget_bytes=ANCHOR_BUDGET,
                               context_tokens=ANCHOR_CONTEXT, options=options)
        # the same pages and P (only vLLM widens the conv state), 2 more state pages a group
        assert drafted.block_size == plain.block_size and drafted.num_blocks == plain.num_blocks
        assert drafted.max_concurrency < plain.max_concurrency, name
    flat = run_strategy("flat", qwen3_next_tp2(), budget_bytes=ANCHOR_BUDGET,
                        context_tokens=ANCHOR_CONTEXT, options=options)
    assert ("  pages per request, state: 1 + 2 speculative = 3 (mamba cache mode "
            "none; a state page per drafted token)") in flat.formulas


def test_speculative_tokens_is_checked():
    with pytest.raises(ValueError, match="speculative_tokens -1 must not be negative: give 0 or "
                       "more; 0 without speculative decoding"):
        StrategyOptions(speculative_tokens=-1)
    with pytest.raises(ValueError, match=r"speculative_tokens 1,025 is too large to be real: give "
                                         r"1,024 or less"):
        StrategyOptions(speculative_tokens=1025)


def test_vllm_sizes_p_by_the_narrow_state_where_the_config_passes_no_num_spec():
    from flatkv.app_model import profile_for

    # A class whose config shape passes no num_spec (Lfm2ForCausalLM's short conv, up to vLLM
    # 0.34; the Mamba2 mixers of Falcon-H1 and Granite 4.0-H before 0.32), here Falcon-H1's
    # layers under that name: P comes from conv 21,504 + ssm 1,572,864 = 1,594,368 B, 16 x
    # cdiv(1,594,368, 16,384) = 16 x 98 = 1,568, page 1,605,632 B; its layers keep 7,168 B
    # more per drafted token in that page
    falcon = profile_for("Falcon-H1-7B", None, 1)
    assert falcon.architectures == ("FalconH1ForCausalLM",) and falcon.conv_rows == 3
    narrow = replace(falcon, architectures=("Lfm2ForCausalLM",))
    plain = run_strategy("vllm", narrow, budget_bytes=40 * 2**30, context_tokens=32_768)
    one = run_strategy("vllm", narrow, budget_bytes=40 * 2**30, context_tokens=32_768,
                       options=StrategyOptions(speculative_tokens=1))
    assert (one.block_size, one.num_blocks) == (plain.block_size, plain.num_blocks) == (1_568,
                                                                                       607)
    assert one.extras["state_padding_exact"] == [1_605_632 - 1_601_536, 1_601_536]
    assert any(f.startswith("speculative tokens 1: conv state 21,504 B of 3 rows widened to "
                            "3 + 1 rows = 28,672 B")
               and f.endswith("P is sized from the state without them (Lfm2ForCausalLM's "
                              "get_mamba_state_shape_from_config passes no num_spec)")
               for f in one.formulas)
    assert "the layers keep the widened state (1,601,536 B) in that page: padded by 4,096 B" in (
        one.formulas)
    two = run_strategy("vllm", narrow, budget_bytes=40 * 2**30, context_tokens=32_768,
                       options=StrategyOptions(speculative_tokens=2))
    assert not two.applies  # 21,504 + 2 x 7,168 + 1,572,864 = 1,608,704 > 1,605,632
    assert two.reason.startswith("vLLM fails at start-up: it sizes P (1,568) and the page "
                                 "(1,605,632 B) from the state without the drafted conv rows, "
                                 "and its layers keep the widened state of 1,608,704 B")
    # the page's 11,264 B of padding holds one 7,168 B row
    assert ("at this P it starts with at most 1 speculative token; a larger P (kernel block "
            "size, block size or mode all) pads the page more, and may hold the drafted rows"
            ) in two.reason
    # A = 64: P = 64 x cdiv(1,594,368, 64 x 1,024) = 64 x 25 = 1,600, 1,638,400 B a page
    roomy = run_strategy("vllm", narrow, budget_bytes=40 * 2**30, context_tokens=32_768,
                         options=StrategyOptions(speculative_tokens=2, kernel_block_size=64))
    assert roomy.applies and roomy.block_size == 1_600
    granite = profile_for("granite-4.0-h-small", None, 1)
    old_granite = run_strategy("vllm", replace(granite, architectures=("Lfm2ForCausalLM",)),
                               budget_bytes=40 * 2**30,
                               options=StrategyOptions(speculative_tokens=1))
    # padding 14,848 B, a conv row 50,688 / 3 = 16,896 B: not one fits
    assert "at this P it starts only without speculative decoding; a larger P" in (
        old_granite.reason)
    # since vLLM 0.32 Falcon-H1's own class sizes P with the drafted rows: 2 drafted make
    # 1,608,704 B, 16 x cdiv(1,608,704, 16,384) = 16 x 99 = 1,584, and it says so
    since = run_strategy("vllm", falcon, budget_bytes=40 * 2**30, context_tokens=32_768,
                         options=StrategyOptions(speculative_tokens=2))
    assert since.applies and since.block_size == 1_584
    assert any(f.endswith("P is sized from the state with them (vLLM 0.32 and later; earlier "
                          "releases sized it without them, and failed at start-up where that "
                          "page did not hold them)") for f in since.formulas)
    # granite-4.0-h-small with 1 drafted: 50,688 + 16,896 + 2,097,152 = 2,164,736 B of state,
    # 16 x cdiv(2,164,736, 16 x 4,096) = 16 x 34 = 544
    assert run_strategy("vllm", granite, budget_bytes=40 * 2**30,
                        options=StrategyOptions(speculative_tokens=1)).block_size == 544
    # a state-only model's page is its own state, sized by no config ahead: never refused
    alone = replace(pure_mamba(), conv_rows=3, architectures=("Lfm2ForCausalLM",))
    drafted = run_strategy("vllm", alone, budget_bytes=GIB8,
                           options=StrategyOptions(speculative_tokens=2))
    assert drafted.applies and drafted.block_bytes == 24 * (61_440 // 3 * 5 + 2_097_152)
    # Nemotron-H's config shape passes num_spec: P grows with the drafted rows instead
    nemotron = profile_for("Nemotron-H-8B", None, 1)
    wide = run_strategy("vllm", nemotron, budget_bytes=40 * 2**30, context_tokens=32_768,
                        options=StrategyOptions(speculative_tokens=4))
    # conv 61,440 = 3 rows of 20,480 -> 7 rows 143,360; + ssm in float32 (vLLM's NemotronH
    # default) 4,194,304 = 4,337,664 B; 16 x cdiv(4,337,664, 16 x 4,096) = 16 x 67 = 1,072
    assert wide.applies and wide.block_size == 1_072


def test_vllms_kv_cache_size_line_keeps_its_float_arithmetic_and_format():
    # vLLM logs int(max_concurrency x max_model_len) with max_concurrency a Python float, and
    # the concurrency as "%.2f": where exact arithmetic differs, the log is vLLM's, not ours.
    # Llama-3.1-8B, blocks of 16 x 4,096 x 32 = 2 MiB: 1,001 blocks, 500 a request of 8,000
    def log(blocks, context):
        r = run_strategy("vllm", llama_31_8b(), budget_bytes=blocks * 2**21,
                         context_tokens=context)
        return r.logged_tokens, r.extras["log_lines"][-1]

    assert 1001 / 500 * 8000 < 16_016 == 1001 * 8000 // 500  # 16,015.999...
    assert log(1001, 8000) == (16_015, "GPU KV cache size: 16,015 tokens, Maximum concurrency "
                                       "for 8,000 tokens per request: 2.00x")
    # 3,999 / 2,000 = 1.9995 prints 2.00x (the page's tables say 1.99: no more fit)
    assert log(3999, 32_000)[1].endswith("per request: 2.00x")
    # past a thousand, no thousands separator: 80e9 B hold 38,146 blocks, one a request of 16
    assert 80 * 10**9 // 2**21 == 38_146
    assert log(38_146, 16)[1] == ("GPU KV cache size: 610,336 tokens, Maximum concurrency for "
                                  "16 tokens per request: 38146.00x")


def test_vllm_start_up_log_lines_follow_its_conditions():
    """Which start-up lines vLLM prints, by hand: the block size line only where P exceeds
    the block size asked, the padding line only where the pages differ, a padding-layers
    warning per kind short of whole groups, the KV cache size only with a context."""
    def log(profile, budget=10 * 2**30, context=None, **options):
        result = run_strategy("vllm", profile, budget_bytes=budget, context_tokens=context,
                              options=StrategyOptions(**options))
        return result.extras["log_lines"]

    # 10 short-conv layers of 8,192 B and 6 full: P stays 16 (its page 32,768 B covers the
    # state), the state page is padded by 24,576 / 8,192 = 300%, and the conv layers, in
    # groups of 6, leave 2 padding layers: 2 / 10 = 20% at most
    kinds = {"c": "linear_attention", "f": "full_attention"}
    lfm2 = CacheProfile(tuple(kinds[k] for k in "ccfccfccfcfcfcfc"), 2048, {"conv": 8192})
    assert log(lfm2) == [
        "Padding mamba page size by 300.00% to ensure that mamba page size and attention page "
        "size are exactly equal.",
        "Available KV cache memory: 10.0 GiB",  # format_gib: round(10.0, 2) as Python prints it
        "Add 2 padding layers, may waste at most 20.00% KV cache memory",
        # vLLM 0.34's blocks after warm-up: 10 GiB // 32,768 // 6 = 54,613 blocks of 196,608 B,
        # 9.99998 GiB, printed 10.0; the run's own memory figures elided
        "Memory after warmup: ... 54613 KV cache blocks (10.0 GiB) fit within the requested "
        "... GiB. ..."]
    assert 10 * 2**30 // 32_768 // 6 == 54_613 and round(54_613 * 196_608 / 2**30, 2) == 10.0
    # a state of exactly one page at P 16 (16 x 2,048 = 32,768 B) needs no padding line;
    # asked for block 32, the page of 65,536 B pads it by 100 x 32,768 / 32,768 = 100%
    exact = CacheProfile(("linear_attention", "full_attention"), 2048, {"conv": 32_768})
    assert log(exact) == ["Available KV cache memory: 10.0 GiB",  # 327,680 pages of 32,768 B
                          "Memory after warmup: ... 327680 KV cache blocks (10.0 GiB) fit "
                          "within the requested ... GiB. ..."]
    assert log(exact, block_size=32)[0].startswith("Padding mamba page size by 100.00%")
    # a state of 40,000 B: P = 16 x cdiv(40,000, 32,768) = 32 > 16, said; block 64 asked: no
    wide = CacheProfile(("linear_attention", "full_attention"), 2048, {"ssm": 40_000})
    assert log(wide)[0] == ("Setting attention block size to 32 tokens to ensure that "
                            "attention page size is >= mamba page size.")
    assert log(wide, block_size=64) == [  # page 64 x 2,048 = 131,072 B: 227.68% padding
        "Padding mamba page size by 227.68% to ensure that mamba page size and attention page "
        "size are exactly equal.",
        "Available KV cache memory: 10.0 GiB",
        "Memory after warmup: ... 81920 KV cache blocks (10.0 GiB) fit within the requested ... "
        "GiB. ..."]
    assert f"{100 * (131_072 - 40_000) / 40_000:.2f}" == "227.68"
    # attention only, with a context: the budget and the KV cache size, 1,000,000,000 B =
    # 0.93 GiB; 10**9 // (16 x 2,048) // 2 layers = 15,258 blocks, a request of 1,000 tokens
    # 63 of them: 242.19 requests, int(15,258 / 63 x 1,000) = 242,190 tokens
    llama = CacheProfile(("full_attention",) * 2, 2048, {})
    assert log(llama, budget=10**9, context=1_000) == [
        "Available KV cache memory: 0.93 GiB",
        # 15,258 blocks x 65,536 B = 999,948,288 B = 0.93 GiB
        "Memory after warmup: ... 15258 KV cache blocks (0.93 GiB) fit within the requested ... "
        "GiB. ...",
        "GPU KV cache size: 242,190 tokens, Maximum concurrency for 1,000 tokens per request: "
        "242.19x"]
    assert 15_258 * 1_000 // 63 == 242_190


def test_sliding_layers_of_their_own_bytes_in_each_layout():
    # Gemma 4's shape: 10 x (5 sliding layers of 16,384 B a token, 1 full of 8,192 B), window
    # 1,024, 40 GiB, 131,072 tokens. A request: 8,192 full pages of 16 tokens and
    # cdiv(min(1,024 - 1 + 8,192, L), 16) + 1 = 577 sliding ones (SPEC 3.1)
    gemma = CacheProfile(layer_types=(["sliding_attention"] * 5 + ["full_attention"]) * 10,
                         kv_bytes_per_slot=8_192, sliding_kv_bytes_per_slot=16_384,
                         sliding_window=1_024, kv_dtype="bfloat16", kv_tensor_bytes=(4_096, 4_096))
    budget, context = 40 * 2**30, 131_072
    assert -(-(1_024 - 1 + 8_192) // 16) + 1 == 577
    results = {r.strategy: r for r in compare(gemma, budget_bytes=budget,
                                              context_tokens=context)}
    # packed slabs: a block holds every layer's row, each row its own size
    flat = results["flat"]
    assert flat.block_bytes == 50 * 16 * 16_384 + 10 * 16 * 8_192 == 14_417_920
    assert flat.num_blocks == budget // 14_417_920 == 2_978
    assert flat.concurrency == Fraction(2_978, 8_192 + 577)
    # two-level pages: a sliding page (13,107,200 B) is a parent, which holds 10 full pages
    # (1,310,720 B each); one parent is the null one
    lcm = results["lcm"]
    assert (lcm.block_bytes, lcm.num_blocks) == (50 * 16 * 16_384, budget // 13_107_200 - 1)
    assert lcm.concurrency == Fraction(3_275, 1) / (Fraction(8_192, 10) + 577)
    # SGLang's hybrid SWA pool (HybridSWAPoolConfigurator): a full-pool token costs 8,192 x
    # 10 + 0.8 x 16,384 x 50 = 737,280 B; 40 GiB // that = 58,254 full tokens, 0.8 x them =
    # 46,603 swa tokens; a request of 131,072 tokens does not fit in the full pool
    sglang = results["sglang"]
    assert 8_192 * 10 + 0.8 * (16_384 * 50) == 737_280
    assert (budget // 737_280, 58_254 * 4 // 5) == (58_254, 46_603)
    assert (sglang.logged_tokens, sglang.extras["swa_tokens"]) == (58_254, 46_603)
    assert sglang.concurrency == Fraction(58_254, 131_072)
    assert dict(sglang.breakdown)["kv_history"] == 58_254 * 81_920 + 46_603 * 819_200
    assert sglang.block_bytes == 10 * 8_192 + 50 * 16_384
    assert sglang.extras["log_lines"][:2] == [
        "Use sliding window memory pool. full_layer_tokens=58254, swa_layer_tokens=46603",
        # K and V of 4,096 B a token in 10 layers, a page more than the pool: 2.22 GiB each
        "Full KV Cache is allocated. dtype: torch.bfloat16, #tokens: 58254, K size: "
        f"{10 * (58_254 + 1) * 4_096 / 2**30:.2f} GB, V size: 2.22 GB"]
    assert sglang.extras["log_lines"][2] == (  # both pools, a page more than each
        f"SWAKVPool mem usage: {(81_920 * 58_255 + 819_200 * 46_604) / 2**30:.2f} GB, swa "
        "size: 46603, full size: 58254")
    # bytes typed by hand give no sliding K / V split: its SWA line is left out, and said so
    assert sglang.extras["log_left_out"] == [NO_SWA_SPLIT_LINE]
    # a model gives it (Gemma 4's sliding layers: 16 KV heads x 256, K and V 8,192 B each):
    # 50 layers x (46,603 + 1 page) x 8,192 B = 17.78 GiB each
    split = run_strategy("sglang", replace(gemma, sliding_kv_tensor_bytes=(8_192, 8_192)),
                         budget_bytes=budget, context_tokens=context)
    assert split.extras["log_lines"][2] == (
        "SWA KV Cache is allocated. dtype: torch.bfloat16, #tokens: 46603, K size: "
        f"{50 * (46_603 + 1) * 8_192 / 2**30:.2f} GB, V size: 17.78 GB")
    assert split.extras["log_lines"][3] == sglang.extras["log_lines"][2]
    assert "log_left_out" not in split.extras
    # one pool of two head shapes (the SWA pool turned off) is not modelled
    one = run_strategy("sglang", gemma, budget_bytes=budget, context_tokens=context,
                       options=StrategyOptions(sglang_swa_pool=False))
    assert "SGLang keeps such sliding layers apart only in its hybrid SWA pool" in one.reason
    # vLLM (kv_cache_planning's unify_kv_cache_spec_page_size): at P = 16 a sliding page is
    # 16 x 16,384 = 262,144 B, a full one half that, so the full layers' block is 32 tokens
    # and every page 262,144 B; 5 sliding groups and 1 full group of 10 layers; a request
    # holds 577 pages in each sliding group and 131,072 / 32 = 4,096 full ones
    vllm = results["vllm"]
    assert vllm.extras["block_sizes"] == {"sliding_attention": 16, "full_attention": 32}
    assert (vllm.block_size, vllm.block_bytes) == (16, 10 * 262_144)
    assert vllm.num_blocks == budget // 262_144 // 10 == 16_384
    assert vllm.concurrency == Fraction(16_384, 5 * 577 + 4_096)
    assert vllm.logged_tokens == int(16_384 / 6_981 * 131_072)
    # vLLM 0.34's defaults: block size 64, and async scheduling's 2 batches of 8,192 tokens
    # in a window's pages: 4,096 blocks, ceil((1,023 + 16,384) / 64) + 1 = 273 sliding pages
    # and 131,072 / 128 full ones a request
    served = run_strategy("vllm", gemma, budget_bytes=budget, context_tokens=context,
                          options=StrategyOptions(block_size=64, vllm_async_scheduling=True))
    assert served.num_blocks == budget // (64 * 16_384) // 10 == 4_096
    assert served.concurrency == Fraction(4_096, 5 * 273 + 1_024)
    assert served.extras["log_lines"][-1] == (
        "GPU KV cache size: 224,726 tokens, Maximum concurrency for 131,072 tokens per "
        "request: 1.71x")
    assert int(4_096 / 2_389 * 131_072) == 224_726
    # aliasing needs rows of one size
    said = "its sliding layers keep 16,384 B a token and its full layers 8,192 B: "
    assert results["aliased"].reason.startswith(said + "layer j of each group shares a slab "
                                                "only when their rows are of one size")
    assert model_blocker("aliased", gemma) == results["aliased"].reason
    assert model_blocker("sglang", gemma) == model_blocker("vllm", gemma) == ""
    # beside state layers vLLM would size P from the state against two attention pages: not
    # modelled (no such model is known)
    hybrid = replace(gemma, layer_types=(*gemma.layer_types, "linear_attention"),
                     state_const_bytes={"conv": 4_096})
    assert run_strategy("vllm", hybrid, budget_bytes=budget).reason == model_blocker(
        "vllm", hybrid) == (said[:-2] + ", beside state layers: FlatKV does not model vLLM's "
                            "page size for such a model")


def test_vllm_pads_a_page_that_does_not_divide_the_largest_and_scales_a_smaller_sliding_one():
    # full layers of 12,288 B a token beside sliding ones of 16,384 B: at P 16 a full page,
    # 196,608 B, does not divide the sliding one, 262,144 B, so it is padded up to it (vLLM
    # 0.20+; 0.19 and earlier refuse), every kind at 16 tokens a page
    padded = CacheProfile(layer_types=(["sliding_attention"] * 5 + ["full_attention"]) * 10,
                          kv_bytes_per_slot=12_288, sliding_kv_bytes_per_slot=16_384,
                          sliding_window=1_024)
    r = run_strategy("vllm", padded, budget_bytes=40 * 2**30, context_tokens=131_072)
    assert r.extras["block_sizes"] == {"sliding_attention": 16, "full_attention": 16}
    assert r.num_blocks == 40 * 2**30 // 262_144 // 10 == 16_384
    assert r.concurrency == Fraction(16_384, 5 * 577 + 8_192)
    assert r.logged_tokens == int(16_384 / 11_077 * 131_072) == 193_868
    assert r.older_logged_tokens is None
    assert any(line.startswith("older_logged_tokens: none, vLLM 0.19 and earlier do not start")
               for line in r.formulas)
    # the full group's block: 10 pages of 196,608 B of KV, each padded by 65,536 B
    from flatkv.app_data import vllm_block_segments
    full = [s for s in vllm_block_segments(r, padded) if s.slot_name == "full attention"]
    assert [(s.kind, s.nbytes) for s in full[:2]] == [("kv", 196_608), ("padding", 65_536)]
    # Gemma 4 as transformers' defaults give it: sliding layers of 4 KV heads x 256 (4,096 B)
    # beside full ones of 4 x 512 (8,192 B): the sliding page is the smaller, so the sliding
    # layers page by 32 tokens; 25 + 5 layers, groups of 5; 8 GiB, 32,768 tokens: a request
    # holds ceil(min(511 + 8,192, L) / 32) + 1 = 273 pages in each sliding group, 2,048 full
    default = CacheProfile(layer_types=(["sliding_attention"] * 5 + ["full_attention"]) * 5,
                           kv_bytes_per_slot=8_192, sliding_kv_bytes_per_slot=4_096,
                           sliding_window=512)
    r = run_strategy("vllm", default, budget_bytes=8 * 2**30, context_tokens=32_768)
    assert r.extras["block_sizes"] == {"sliding_attention": 32, "full_attention": 16}
    assert r.num_blocks == 8 * 2**30 // (16 * 8_192) // 5 == 13_107
    assert r.concurrency == Fraction(13_107, 5 * 273 + 2_048)


@pytest.mark.parametrize(("preset", "p", "group_size", "blocks", "pages", "logged"), [
    # 40 GiB // 1,605,632 B // 44 = 607 blocks; a request: cdiv(32,768, 1,568) = 21 full
    # pages and 2 + 1 state pages in the one state group: 607 / 24, int(x 32,768) = 828,757
    ("Falcon-H1-7B", 1_568, 44, 607, 21 + 3, 828_757),
    # its ssm state in float32 (vLLM's NemotronH default): 61,440 + 128 x 64 x 128 x 4 =
    # 4,255,744 B a state page, P = 16 x cdiv(4,255,744, 16 x 4,096) = 1,040; 40 GiB //
    # 4,259,840 B // 4 = 2,520; cdiv(32,768, 1,040) = 32 full pages and 3 in each of 6 state
    # groups: 50, 2,520 x 32,768 // 50 = 1,651,507
    ("Nemotron-H-8B", 1_040, 4, 2_520, 32 + 6 * 3, 1_651_507),
])
def test_vllm_034_keeps_a_prefill_checkpoint_page_for_mamba2_layers_in_align(
        preset, p, group_size, blocks, pages, logged):
    # vLLM 0.34.0's own planner (get_kv_cache_configs, get_kv_cache_capacity, run by a helper
    # on MambaMixer2's spec with num_prefill_checkpoint_blocks=1) gave these figures (its
    # bench/vllm_check.py rows, Nemotron-H's at vLLM's own ssm dtype)
    options = StrategyOptions(mamba_cache_mode="align", prefill_checkpoint_blocks=1)
    r = run_strategy("vllm", load_preset(preset).profile(), budget_bytes=40 * 2**30,
                     context_tokens=32_768, options=options)
    assert (r.block_size, r.extras["group_size"], r.num_blocks) == (p, group_size, blocks)
    assert (r.concurrency_numerator, r.concurrency_denominator) == (blocks, pages)
    assert r.logged_tokens == blocks * 32_768 // pages == logged


def test_vllm_without_its_hybrid_manager_keeps_pages_of_two_sizes_in_one_group():
    # vLLM 0.34, --disable-hybrid-kv-cache-manager, 10 sliding layers of 4,096 B a token beside
    # 2 full ones of 8,192 B (Gemma 4's heads): the sliding layers become full attention with
    # their own heads, and UniformTypeKVCacheSpecs puts all 12 in one group whose block is a
    # page in each layer's tensor: 10 x 64 x 4,096 + 2 x 64 x 8,192 = 3,670,016 B at block 64;
    # 10 GiB // that = 2,925 blocks; a request of 131,072 tokens takes 2,048 of them, so vLLM
    # logs 2,925 x 64 = 187,200 tokens and 2,925 / 2,048 = 1.43x (a helper ran vLLM 0.34.0's
    # kv_cache_planning on this model and got these figures)
    model = CacheProfile(layer_types=(["sliding_attention"] * 5 + ["full_attention"]) * 2,
                         kv_bytes_per_slot=8_192, sliding_kv_bytes_per_slot=4_096,
                         sliding_window=512)
    off = StrategyOptions(block_size=64, vllm_hybrid_manager=False)
    r = run_strategy("vllm", model, budget_bytes=10 * 2**30, context_tokens=131_072,
                     options=off)
    assert 10 * 64 * 4_096 + 2 * 64 * 8_192 == 3_670_016
    assert (r.block_size, r.block_bytes) == (64, 3_670_016)
    assert r.num_blocks == 10 * 2**30 // 3_670_016 == 2_925
    assert r.capacity_tokens == 2_925 * 64 == 187_200
    assert r.concurrency == Fraction(2_925, 2_048) and r.logged_tokens == 187_200
    assert r.extras["log_lines"][-1] == ("GPU KV cache size: 187,200 tokens, Maximum "
                                         "concurrency for 131,072 tokens per request: 1.43x")
    assert "Memory after warmup: ... 2925 KV cache blocks (10.0 GiB) fit" in (
        r.extras["log_lines"][-2])
    assert r.formulas[2] == ("block_bytes = 10 x P x 4,096 + 2 x P x 8,192 = 10 x 262,144 + "
                             "2 x 524,288 = 3,670,016")
    assert r.bytes_of("kv_history") == 2_925 * 3_670_016
    assert r.bytes_of("unused") == 10 * 2**30 - 2_925 * 3_670_016 == 2_621_440
    # the block a budget of vLLM's logged blocks is counted in: the pages' sum (the largest
    # page times the 12 tensors, 6,291,456 B, made 2,925 typed blocks 5,014)
    from flatkv.strategies.vllm import block_bytes
    assert block_bytes(model, off) == 3_670_016
    assert run_strategy("vllm", model, budget_bytes=2_925 * 3_670_016, options=off).num_blocks \
        == 2_925
    # without a context: no request to check, the same blocks
    assert run_strategy("vllm", model, budget_bytes=10 * 2**30, options=off).num_blocks == 2_925
    # too small for two blocks, and for one request of 65 tokens (2 blocks of 64 beside the
    # null block): the least that starts is 3 blocks, and the reason says why
    tiny = run_strategy("vllm", model, budget_bytes=1, context_tokens=65, options=off)
    assert tiny.reason == (
        "vLLM refuses to start: the budget of 1 B holds num_blocks = 1 // 3,670,016 = 0 and "
        "vLLM needs at least 2 (\"No available memory for the cache blocks\"), and one request "
        "of 65 tokens needs 7,340,032 B beside the null block's 3,670,016 B; give at least "
        "11,010,048 B")
    # every token of the sliding layers is kept: with the manager on, windows are evicted and
    # about three times as many requests fit
    on = run_strategy("vllm", model, budget_bytes=10 * 2**30, context_tokens=131_072,
                      options=replace(off, vllm_hybrid_manager=True))
    assert 2.9 < on.concurrency / r.concurrency < 3.0
    # one request beside the null block: 2,048 blocks of 3,670,016 B need 7,516,192,768 B;
    # 7.5 GiB less a block holds 2,141 blocks: 2,141 x 64 = 137,024 tokens at most
    short = run_strategy("vllm", model, budget_bytes=7 * 2**30, context_tokens=131_072,
                         options=off)
    assert not short.applies
    assert ("one request of 131,072 tokens needs 7,516,192,768 B of KV cache (7.00 GiB: 2,048 "
            "blocks of 12 pages, one a layer, at P 64)") in short.reason
    longest = (7 * 2**30 - 3_670_016) // 3_670_016 * 64
    assert f"its estimated maximum model length is {longest:,}" in short.reason
    assert longest == 2_047 * 64 == 131_008
    assert run_strategy("vllm", model, budget_bytes=7_516_192_768 + 3_670_016,
                        context_tokens=131_072, options=off).applies
    # beside chunked layers too: not modelled, and said so
    chunked = replace(model, layer_types=(*model.layer_types, "chunked_attention"),
                      attention_chunk_size=8_192)
    refused = run_strategy("vllm", chunked, budget_bytes=10 * 2**30, options=off)
    assert refused.reason.endswith("which FlatKV does not model beside chunked layers; keep "
                                   "the hybrid manager on")


def test_vllm_keeps_nemotron_hs_ssm_state_in_float32_unless_told():
    # vLLM's NemotronH hook (NemotronHForCausalLMConfig.update_mamba_ssm_cache_dtype, 0.31 and
    # 0.34) keeps the ssm state in the config's mamba_ssm_cache_dtype, else float32, where
    # --mamba-ssm-cache-dtype is auto: the preset's bf16 state (SPEC's 2,097,152 B) is
    # 128 x 64 x 128 = 1,048,576 elements, 4,194,304 B in float32; 61,440 B of conv beside it:
    # P = 16 x cdiv(4,255,744, 16 x 4,096) = 16 x 65 = 1,040; 8 GiB // (1,040 x 4,096) // 4
    # = 2,016 // 4 = 504 blocks
    from flatkv.presets import load_preset
    spec = load_preset("Nemotron-H-8B")
    assert spec.profile().state_const_bytes["ssm"] == 2_097_152
    wide = run_strategy("vllm", spec.profile(), budget_bytes=GIB8, context_tokens=8_192)
    assert (wide.block_size, wide.num_blocks) == (1_040, 504)
    assert 8 * 2**30 // (1_040 * 4_096) // 4 == 504
    assert wide.formulas[0] == (
        "ssm state float32: vLLM's default for NemotronHForCausalLM with "
        "--mamba-ssm-cache-dtype auto, not the model's bfloat16: 1,048,576 elements x 4 = "
        "4,194,304 B a layer, not 2,097,152 B")
    assert wide.extras["log_left_out"] == [
        "vLLM logs \"Updating mamba_ssm_cache_dtype to 'float32' for NemotronH model\" as its "
        "config hook picks the ssm dtype (--mamba-ssm-cache-dtype auto), before the block size "
        "lines (after the first in mamba cache mode all), left out here"]
    # SGLang's mamba_ssm_dtype is no field the hook reads: the default still ...
    sglang_named = replace(spec.profile(), config_mamba_ssm_dtype="bfloat16")
    r = run_strategy("vllm", sglang_named, budget_bytes=GIB8, context_tokens=8_192)
    assert (r.block_size, r.num_blocks, r.formulas[0]) == (1_040, 504, wide.formulas[0])
    # ... the config's mamba_ssm_cache_dtype wins over the default (the hook reads it first) ...
    named = replace(spec.profile(), config_mamba_ssm_cache_dtype="bfloat16")
    r = run_strategy("vllm", named, budget_bytes=GIB8, context_tokens=8_192)
    assert r.block_size == 16 * -(-(61_440 + 2_097_152) // (16 * 4_096)) == 528
    assert r.formulas[0] == ("ssm state bfloat16: the config's mamba_ssm_cache_dtype, which "
                             "vLLM's NemotronHForCausalLM reads with --mamba-ssm-cache-dtype auto")
    # ... and a told dtype over both: no hook line, the state as told
    told = run_strategy("vllm", named, budget_bytes=GIB8, context_tokens=8_192,
                        options=StrategyOptions(vllm_ssm_dtype="float32"))
    assert (told.block_size, told.num_blocks) == (1_040, 504)
    assert "log_left_out" not in told.extras
    narrow = run_strategy("vllm", spec.profile(), budget_bytes=GIB8, context_tokens=8_192,
                          options=StrategyOptions(vllm_ssm_dtype="bf16"))
    assert (narrow.block_size, narrow.num_blocks) == (528, 8 * 2**30 // (528 * 4_096) // 4)
    assert narrow.formulas[0] == ("ssm state bfloat16: --mamba-ssm-cache-dtype, as the option "
                                  "sets it")
    # SGLang's column is SGLang's own whatever vLLM is told
    assert run_strategy("sglang", spec.profile(), budget_bytes=GIB8, context_tokens=8_192,
                        options=StrategyOptions(vllm_ssm_dtype="bfloat16")).extras[
        "sglang_ssm_dtype"] == "float32"


def test_vllm_ssm_dtype_told_resizes_other_models_state_and_is_checked():
    # --mamba-ssm-cache-dtype told keeps any state model's ssm tensor in it (Qwen3-Next's
    # GDN state bf16 -> float32: twice the bytes); a lightning model reads no such flag;
    # a dtype vLLM does not name is refused with the field, the value and the fix
    from flatkv.presets import load_preset
    qwen = load_preset("Qwen3-Next-80B-A3B").profile()
    r = run_strategy("vllm", qwen, budget_bytes=GIB8, context_tokens=8_192,
                     options=StrategyOptions(vllm_ssm_dtype="float32"))
    ssm = qwen.state_const_bytes["ssm"]
    assert r.formulas[0].startswith("ssm state float32: --mamba-ssm-cache-dtype, as the option "
                                    f"sets it, not the model's bfloat16: {ssm // 2:,} elements "
                                    f"x 4 = {2 * ssm:,} B a layer")
    assert not run_strategy("vllm", qwen, budget_bytes=GIB8,
                            context_tokens=8_192).formulas[0].startswith("ssm state")
    with pytest.raises(ValueError, match=r"^vllm_ssm_dtype is 'fp4': vLLM keeps the ssm state "
                       r"in one of float32, bfloat16, float16 \(--mamba-ssm-cache-dtype\), or "
                       r"leave it unset \(None\) for vLLM's own choice"):
        StrategyOptions(vllm_ssm_dtype="fp4")


def test_vllm_says_deepseek_v32s_indexer_keys_are_layers_of_their_own_in_vllm():
    # vLLM 0.34.0's planner (run by a helper) keeps DeepseekV32IndexerCache as a layer beside
    # each MLA layer: one group of 122 layers, pages of 64 x 1,152 = 73,728 B and 64 x 132 =
    # 8,448 B; FlatKV folds the keys into 61 layers of 1,284 B a token. Same block, 61 x
    # 82,176 = 5,012,736 B, so 40 GiB // that = 8,568 blocks either way
    r = run_strategy("vllm", load_preset("DeepSeek-V3.2").profile(), budget_bytes=40 * 2**30,
                     context_tokens=32_768)
    assert (r.block_size, r.block_bytes, r.num_blocks) == (64, 61 * 82_176, 8_568)
    assert 40 * 2**30 // (61 * 82_176) == 8_568
    assert ("group_size = 61 (layers per type: 61 full attention (MLA)); 1 group (vLLM counts each "
            "layer's indexer keys as a layer of its own: 122 layers in its group, pages of P x "
            "1,152 = 73,728 B and P x 132 = 8,448 B, the same bytes a block)") in r.formulas


def test_vllm_attention_free_mamba2_model():
    # vLLM 0.34 serves Mamba2ForCausalLM as attention-free (not is_hybrid): no attention
    # backend to align its page to, so a block is the 64 layers' unpadded state in the model's
    # dtype, 64 x (61,440 + 128 x 64 x 128 x 2) = 64 x 2,158,592 = 138,149,888 B, and 40 GiB
    # holds 42,949,672,960 // 138,149,888 = 310 (bench/vllm_check.py checks these on vLLM's code)
    profile = spec_from_hf_config(MAMBA2_ONLY).profile()
    none = run_strategy("vllm", profile, budget_bytes=40 << 30, context_tokens=32_768)
    assert none.block_bytes == 64 * (61_440 + 128 * 64 * 128 * 2) == 138_149_888
    assert none.num_blocks == 42_949_672_960 // 138_149_888 == 310
    assert none.concurrency == 310 and none.logged_tokens == 310 * 32_768 == 10_158_080
    # mode align with its Mamba2 mixer's prefill checkpoint: 2 + 1 blocks a request
    align = run_strategy("vllm", profile, budget_bytes=40 << 30, context_tokens=32_768,
                         options=StrategyOptions(mamba_cache_mode="align", block_size=64,
                                                 prefill_checkpoint_blocks=1))
    assert align.concurrency == Fraction(310, 3)
    assert align.logged_tokens == int(310 / 3 * 32_768) == 3_386_026


def test_a_group_page_is_its_layers_rows_at_p_as_flat_and_lcm_count_it():
    from flatkv.strategies.paged import group_page, label_groups

    groups = {g.name: g for g in label_groups(qwen3_next_tp2())}
    # 12 full layers x 544 tokens x 1,024 B (2 KV heads / 2 ranks x 256 x 2 x 2 B)
    assert group_page(qwen3_next_tp2(), groups[FULL], 544) == (6_684_672, "12 x 544 x 1,024")
    # 36 GDN layers x (24,576 B conv + 524,288 B ssm), whatever P
    assert group_page(qwen3_next_tp2(), groups[LINEAR], 544) == (19_759_104, "36 x 548,864")
    assert group_page(qwen3_next_tp2(), groups[LINEAR], 16)[0] == 19_759_104
    # sliding layers of their own bytes a token (Gemma 4): 2 layers x 16 x 512 B
    gemma = CacheProfile(layer_types=(SLIDING, SLIDING, FULL), kv_bytes_per_slot=1024,
                         sliding_kv_bytes_per_slot=512, sliding_window=128)
    sliding = label_groups(gemma)[0]
    assert group_page(gemma, sliding, 16) == (16_384, "2 x 16 x 512")


def test_vllm_mode_all_sizes_a_drafted_state_by_its_logs_release():
    # LFM2-1.2B asked mamba cache mode all runs vLLM 0.31's align (its class has no mode all):
    # the drafted conv state is sized by 0.31's rules, the release its lines are, as the
    # formula says (one source: the LogFlavour), 8,192 B of 2 rows widened to 4 rows
    r = run_strategy("vllm", load_preset("LFM2-1.2B").profile(), budget_bytes=40 << 30,
                     context_tokens=32_768,
                     options=StrategyOptions(mamba_cache_mode="all", speculative_tokens=2))
    assert r.extras["log_release"] == "0.31"
    assert ("speculative tokens 2: conv state 8,192 B of 2 rows widened to 2 + 2 rows = 16,384 B "
            "(num_spec in vLLM's state shapes), and each state group holds 2 more state pages "
            "a request (MambaSpec.num_speculative_blocks); P is sized from the state without "
            "them (Lfm2ForCausalLM's get_mamba_state_shape_from_config passes no num_spec in "
            "vLLM 0.31)") in r.formulas


def test_lcm_formula_tells_a_sliver_of_padding_from_none():
    # one full layer of 2,048 B a token at P 16 (payload 32,768 B) beside one state layer of
    # 32,768,256 B: K_full = 32,768,256 // 32,768 = 1,000, B = align(32,768,256, 256) =
    # 32,768,256 B, so a full page pads (32,768,256 / 1,000 - 32,768) / 32,768 = 0.256 /
    # 32,768 = 0.00078125%; it read "0.00%", as the state group's none does
    profile = CacheProfile(("linear_attention", "full_attention"), 2048, {"ssm": 32_768_256})
    r = run_strategy("lcm", profile, budget_bytes=10 * 2**30)
    assert r.extras["padding_fraction"] == {"linear_attention": 0,
                                            "full_attention": float(Fraction(256, 32_768_000))}
    padding = [f.rsplit(" = ", 1)[1] for f in r.formulas if "padding = (" in f]
    assert padding == ["0.00%", "0.0008%"]


def test_vllm_says_the_block_it_runs_an_fp8_dense_mla_cache_at_told_none():
    # DeepSeek-V3 with an fp8 KV cache: (512 + 64) x 1 B = 576 B a token a layer, 61 layers, in
    # 40 GiB at its 163,840 tokens. Told no --block-size vLLM runs it on a Hopper on FlashMLA at
    # 64 (FLASH_ATTN_MLA takes no fp8; 0.31's default 16 raised to FlashMLA's 64, 0.34's own
    # 64), told 16 on TRITON_MLA at 16, FlatKV's default: the figures both ways, the note
    # saying which matches a log of a run told none
    from flatkv.strategies.vllm import FLASHMLA_BLOCK_SIZE

    fp8 = load_preset("DeepSeek-V3").with_options(kv_dtype="float8_e4m3fn").profile()
    assert fp8.kv_bytes_per_slot == 576 and FLASHMLA_BLOCK_SIZE == 64

    def at(**told):
        return run_strategy("vllm", fp8, budget_bytes=40 << 30, context_tokens=163_840,
                            options=StrategyOptions(**told))

    told16, told64 = at(), at(block_size=64)
    assert (told16.block_bytes, told64.block_bytes) == (61 * 16 * 576, 61 * 64 * 576) == (
        562_176, 2_248_704)
    assert (told16.num_blocks, told64.num_blocks) == (
        (40 << 30) // 562_176, (40 << 30) // 2_248_704) == (76_398, 19_099)
    # logged: int(N / cdiv(163,840, P) x 163,840) = N x P here
    assert (told16.logged_tokens, told64.logged_tokens) == (76_398 * 16, 19_099 * 64) == (
        1_222_368, 1_222_336)
    assert (told16.concurrency_numerator, told16.concurrency_denominator) == (76_398, 10_240)
    assert (told64.concurrency_numerator, told64.concurrency_denominator) == (19_099, 2_560)
    # told a --block-size, vLLM 0.34's (and 0.31's) cuda.py get_attn_backend_cls warns of the
    # backends before the one it picks whose one invalid reason is "block_size not supported"
    # (0.34 528-548): on SM 9 FLASH_ATTN_MLA (priority 0) is refused for the fp8 cache,
    # FLASHMLA (1) for 16 % 64 alone, FLASHINFER_MLA (2) for SM 10 too, so TRITON_MLA (3) runs
    # and FLASHMLA alone is named; on SM 8.x FLASHMLA's dense kernel is refused too: no line
    precluded = ("--block-size 16 precluded higher-priority backend(s) FLASHMLA. Using "
                 "TRITON_MLA instead, which may result in reduced performance. Consider "
                 "removing --block-size to auto-select the optimal block size.")
    # the note gives the blocks and tokens of 64 at this budget, as the Blackwell's note does
    # for its blocks: 19,099 blocks of 64, 19,099 x 64 = 1,222,336 tokens (told64's figures;
    # the note said none)
    assert (told64.num_blocks, told64.capacity_tokens) == (19_099, 19_099 * 64) == (
        19_099, 1_222_336)
    note = ("P 16 is a block size told: told none, vLLM runs an fp8 MLA cache on a Hopper at 64, "
            "FlashMLA's kernel block (19,099 blocks of 64, 1,222,336 tokens here), as "
            "FLASH_ATTN_MLA, its first MLA backend there, takes no "
            "fp8 cache (0.31, whose default is 16, logs \"Setting kv cache block size to 64 for "
            "FLASHMLA backend(s).\"; 0.34's default is 64), while told 16, no multiple of 64, "
            "it runs on TRITON_MLA at 16, as these figures do, and on a Hopper logs "
            f"\"{precluded}\" (FLASHMLA refused for its block alone; FLASH_ATTN_MLA for the fp8 "
            "cache, so not named; on an SM 8.x GPU no line, as FLASHMLA's dense kernel is "
            "refused there too): a block size of 64 here matches a Hopper's log of a run told "
            "none. ")
    # where no GPU preset names the GPU (gpu_compute_capability None) it may be an SM 8.x one
    # (A100, L40S, RTX 4090), taken for a Hopper: vLLM 0.34's cuda.py (146-152) finds neither
    # FLASH_ATTN_MLA (SM 9 alone), FLASHMLA (dense: a Hopper alone) nor FLASHINFER_MLA (SM 10)
    # valid there and runs TRITON_MLA (MultipleOf(16)), which keeps 0.34's default block of 64
    # (get_preferred_block_size); its fp8 needs SM 8.9 (triton_mla.py 227-238), so on an A100
    # (SM 8.0) vLLM does not start an fp8 cache, which an A100 preset makes the column's
    # refusal (test_vllm_refuses_an_fp8_dense_mla_cache_on_an_sm80_gpu_preset). The note said
    # "0.31 told none runs TRITON_MLA at its default 16 ... there a block size of 16 matches", a
    # release the app does not model by default, and on an A100 a run that does not start
    elsewhere = ("No GPU preset names the GPU, nor is its architecture told, and FlatKV takes it"
                 " for a Hopper; on an SM 8.x GPU (A100, L40S, RTX 4090) vLLM 0.34 runs MLA on "
                 "TRITON_MLA (FlashMLA's dense kernel runs on a Hopper alone, FLASH_ATTN_MLA on "
                 "SM 9, FLASHINFER_MLA on SM 10), at its default 64 told none: on an L40S or RTX"
                 " 4090 (SM 8.9) a block size of 64 matches a log of a run told none too. On an "
                 "A100 (SM 8.0) vLLM 0.34 refuses to start an fp8 MLA cache (\"FP8 KV cache is "
                 "not supported by the Triton MLA backend ... native FP8 (fp8e4nv) requires "
                 "SM89+. Re-run with --kv-cache-dtype bfloat16.\"): set the KV dtype to bfloat16 "
                 "there (pick an A100 GPU preset or tell the architecture ampere, and FlatKV "
                 "shows vLLM refusing to start)")
    assert told16.formulas[0] == note + elsewhere
    # on a Hopper's preset (H100, H200: SM 9.0) the same figures and the Hopper's note alone,
    # without what SM 8.x GPUs do; on an L40S's or RTX 4090's (SM 8.9) TRITON_MLA runs told
    # a block size or not, so the block told runs as for any model: no note
    hopper = at(gpu_compute_capability=(9, 0))
    assert hopper.to_dict() | {"formulas": []} == told16.to_dict() | {"formulas": []}
    assert hopper.formulas[0] == note.replace(
        "; on an SM 8.x GPU no line, as FLASHMLA's dense kernel is refused there too", ""
    ).removesuffix(". ")
    ada = at(gpu_compute_capability=(8, 9))
    assert ada.to_dict() | {"formulas": []} == told16.to_dict() | {"formulas": []}
    assert ada.formulas == told16.formulas[1:]
    # past 64 too: told 80 (80 % 64 = 16) FlashMLA refuses it and TRITON_MLA runs 80; the note
    # said 'a block of 16, 32 or 48 told runs on TRITON_MLA', which left the P shown out
    for told in (48, 80):
        assert at(block_size=told).formulas[0] == note.replace("16", str(told)).replace(
            f"default is {told}", "default is 16") + elsewhere
    # none where vLLM runs the figures' P told none too, or picks no FlashMLA: P 64 (or 128);
    # bfloat16 (FLASH_ATTN_MLA at 16 in 0.31); a kernel block told (a backend picked);
    # DeepSeek-V3.2's sparse MLA (FlashMLA sparse's 64 already)
    bf16 = run_strategy("vllm", load_preset("DeepSeek-V3").profile(), budget_bytes=40 << 30)
    sparse = run_strategy("vllm", load_preset("DeepSeek-V3.2").with_options(
        kv_dtype="float8_e4m3fn").profile(), budget_bytes=40 << 30)
    for r in (told64, at(block_size=128), at(kernel_block_size=16), bf16, sparse):
        assert not any("FlashMLA's kernel block" in line for line in r.formulas)


def test_vllm_refuses_an_mla_cache_in_fp8_e5m2_on_any_nvidia_gpu_and_takes_the_fix():
    # No MLA backend of vLLM 0.31 to 0.34 on CUDA lists fp8_e5m2 in its
    # supported_kv_cache_dtypes (0.34's lines: mla/flashattn_mla.py 42-46, flashmla.py 48-54,
    # triton_mla.py 113-119, flashinfer_mla.py 195-201 and its SM 10 alone at 220-221;
    # sparse: flashattn_mla_sparse.py 43-47,
    # flashmla_sparse.py 156-162, flashinfer_mla_sparse_sm90.py 148-153), so cuda.py finds
    # none and raises (512-516). FlatKV laid it out before: DeepSeek-V3 at 61 x 576 B, P 16,
    # 40 GiB // 562,176 = 76,398 blocks, 1,222,368 tokens; DeepSeek-V3.2 at 61 x 788 B, P 64
    tail = ("(\"No valid attention backend found for cuda ... kv_cache_dtype not supported\"): "
            "set the KV dtype to float8_e4m3fn (--kv-dtype fp8, e4m3) or bfloat16")
    head = ("vLLM refuses to start: no MLA attention backend of its releases 0.31 to 0.34 on "
            "an NVIDIA GPU takes the KV dtype float8_e5m2 (--kv-cache-dtype fp8_e5m2) for ")
    dense = head + (
        "a dense MLA model: on a Hopper FLASH_ATTN_MLA takes auto, float16 and bfloat16, "
        "FLASHMLA and TRITON_MLA fp8 (fp8_e4m3) too, and FLASHINFER_MLA runs on SM 10 alone, "
        "where it, CUTLASS_MLA and TOKENSPEED_MLA take fp8_e4m3 at most ") + tail
    sparse = head + (
        "DeepSeek's sparse MLA: FLASH_ATTN_MLA_SPARSE takes auto, float16 and bfloat16, "
        "FLASHMLA_SPARSE fp8 as its fp8_ds_mla, FLASHINFER_MLA_SPARSE (a Hopper's and a "
        "Blackwell's) fp8_e4m3 at most ") + tail
    from flatkv.profile import profile_from_dict, profile_to_dict

    for name, reason in (("DeepSeek-V3", dense), ("DeepSeek-V3.2", sparse)):
        e5m2 = load_preset(name).with_options(kv_dtype="fp8_e5m2").profile()
        assert e5m2.kv_dtype == "float8_e5m2"
        # whatever the block size told: vLLM's selector reads the dtype before any P
        for options in (StrategyOptions(), StrategyOptions(block_size=64)):
            r = run_strategy("vllm", e5m2, budget_bytes=40 << 30, options=options)
            assert (r.applies, r.reason) == (False, reason)
        # an export keeps the dtype and the latent split (CacheProfile.mla), so it is refused
        # alike, and so are bytes that carry an indexer but no split (DSA is MLA's alone)
        exported = profile_from_dict(profile_to_dict(e5m2))
        assert exported.mla
        assert (run_strategy("vllm", exported, budget_bytes=40 << 30).reason, e5m2.mla) == (
            reason, True)
        if e5m2.indexer_bytes_per_slot is not None:
            unsplit = replace(exported, kv_tensor_bytes=())
            assert not unsplit.mla and mla_dtype_refusal(unsplit) == reason
        # a refusal at this dtype, not a model vLLM does not serve ("does not start")
        assert model_blocker("vllm", e5m2) == ""
        # the other layouts still lay it out (1 B elements: fp8's bytes)
        assert run_strategy("flat", e5m2, budget_bytes=40 << 30).applies
    # the fixes it names are taken: fp8 (e4m3) at P 16, 40 GiB // (61 x 16 x 576) blocks,
    # and bfloat16 at 2 B an element, 40 GiB // (61 x 16 x 1,152)
    ds3 = load_preset("DeepSeek-V3")
    fp8 = run_strategy("vllm", ds3.with_options(kv_dtype="fp8").profile(),
                       budget_bytes=40 << 30)
    bf16 = run_strategy("vllm", ds3.with_options(kv_dtype="bfloat16").profile(),
                        budget_bytes=40 << 30)
    assert (fp8.block_size, fp8.num_blocks) == (16, (40 << 30) // (61 * 16 * 576)) == (16, 76_398)
    assert (bf16.block_size, bf16.num_blocks) == (16, (40 << 30) // (61 * 16 * 1_152)) == (
        16, 38_199)
    assert run_strategy("vllm", load_preset("DeepSeek-V3.2").with_options(
        kv_dtype="fp8").profile(), budget_bytes=40 << 30).applies
    # attention that is not MLA starts in fp8_e5m2 (FLASH_ATTN takes none, FLASHINFER and
    # TRITON_ATTN list it: flashinfer.py, triton_attn.py), and bytes with no dtype named are
    # taken as given
    llama = load_preset("Llama-3.1-8B").with_options(kv_dtype="fp8_e5m2").profile()
    assert run_strategy("vllm", llama, budget_bytes=40 << 30).applies
    undtyped = profile_from_dict({k: v for k, v in profile_to_dict(load_preset(
        "DeepSeek-V3").with_options(kv_dtype="fp8_e5m2").profile()).items()
        if k not in ("kv_dtype", "kv_tensor_bytes")})
    assert run_strategy("vllm", undtyped, budget_bytes=40 << 30).applies


def test_vllm_refuses_an_fp8_dense_mla_cache_on_an_sm80_gpu_preset():
    # On SM 8.0 (the A100 presets) vLLM 0.34's cuda.py lists FLASH_ATTN_MLA (major 9 alone:
    # flashattn_mla.py 69-70), FLASHMLA (9 or 10: flashmla.py 73-74), FLASHINFER_MLA (10:
    # flashinfer_mla.py 220-221) and TRITON_MLA (any), so TRITON_MLA runs MLA there, and its
    # impl raises for an fp8 cache below SM 8.9 (triton_mla.py 227-238: "FP8 KV cache is not
    # supported by the Triton MLA backend on {dev} (compute capability 8.0); native FP8
    # (fp8e4nv) requires SM89+. Re-run with --kv-cache-dtype bfloat16."), whatever the block.
    # bench/vllm_check.py's check_gpu_mla runs that code on each GPU preset's capability
    refusal = (
        "vLLM refuses to start: on SM 8.0 (A100) its one MLA backend is TRITON_MLA "
        "(FLASH_ATTN_MLA, FLASHMLA and FLASHINFER_MLA run on SM 9 or 10 alone), which keeps no "
        "fp8 cache below SM 8.9 (\"FP8 KV cache is not supported by the Triton MLA backend on "
        "... (compute capability 8.0); native FP8 (fp8e4nv) requires SM89+. Re-run with "
        "--kv-cache-dtype bfloat16.\"): set the KV dtype to bfloat16, or pick a GPU of SM 8.9 "
        "or later (H100, H200, B200, L40S, RTX 4090)")
    a100 = StrategyOptions(gpu_compute_capability=(8, 0))
    ds3 = load_preset("DeepSeek-V3")
    fp8 = ds3.with_options(kv_dtype="fp8").profile()
    kimi = load_preset("Kimi-Linear-48B-A3B").with_options(kv_dtype="fp8").profile()
    for profile, options in ((fp8, a100), (fp8, replace(a100, block_size=64)),
                             (fp8, replace(a100, kernel_block_size=64)), (kimi, a100)):
        r = run_strategy("vllm", profile, budget_bytes=40 << 30, options=options)
        assert (r.applies, r.reason) == (False, refusal)
        assert why_not_label(r) == WONT_START
    # its fix, bfloat16: TRITON_MLA at P 16, 61 x 16 x 1,152 B = 1,124,352 B a block, 40 GiB //
    # 1,124,352 = 38,199 blocks, as where no GPU is named
    bf16 = run_strategy("vllm", ds3.profile(), budget_bytes=40 << 30, options=a100)
    assert (bf16.block_size, bf16.block_bytes, bf16.num_blocks) == (16, 1_124_352, 38_199)
    assert bf16.to_dict() == run_strategy("vllm", ds3.profile(), budget_bytes=40 << 30).to_dict()
    # on SM 8.9 (L40S, RTX 4090) TRITON_MLA keeps fp8: 40 GiB // (61 x 16 x 576) = 76,398 blocks
    ada = run_strategy("vllm", fp8, budget_bytes=40 << 30,
                       options=StrategyOptions(gpu_compute_capability=(8, 9)))
    assert (ada.applies, ada.num_blocks) == (True, (40 << 30) // (61 * 16 * 576)) == (True, 76_398)
    # no GPU named: the figures as before, the note saying what an A100 does
    unknown = run_strategy("vllm", fp8, budget_bytes=40 << 30)
    assert unknown.applies and unknown.formulas[0].endswith(
        "set the KV dtype to bfloat16 there (pick an A100 GPU preset or tell the architecture "
        "ampere, and FlatKV shows vLLM refusing to start)")
    # told the architecture ampere (--gpu-arch, the sidebar's select) it is the A100 preset's
    # refusal itself
    told = run_strategy("vllm", fp8, budget_bytes=40 << 30,
                        options=StrategyOptions(gpu_compute_capability=(8, 0)))
    assert not told.applies and told.reason.startswith("vLLM refuses to start: on SM 8.0 (A100)")


def test_vllm_refuses_deepseek_sparse_mla_on_an_sm8x_gpu_preset_in_any_kv_dtype():
    # DeepSeek-V3.2's sparse MLA on SM 8.x: cuda.py (137-152) lists the dense MLA backends,
    # which answer "sparse not supported" (backend.py 324-326), then FLASH_ATTN_MLA_SPARSE
    # (major 9: flashattn_mla_sparse.py 82-83), FLASHMLA_SPARSE (9 or 10: flashmla_sparse.py
    # 210-211) and FLASHINFER_MLA_SPARSE_SM90 (9: flashinfer_mla_sparse_sm90.py 189-190), which
    # answer "compute capability not supported", so no backend is valid and the selector
    # raises (cuda.py 512-516), in bfloat16 and fp8 alike; on SM 9.0 and 10.0 it runs as before:
    # P 64, 61 x 64 x (1,152 + 132) = 5,012,736 B a block in bfloat16, 40 GiB // that = 8,568
    def refusal(sm: str, gpus: str) -> str:
        return (f"vLLM refuses to start: on SM {sm} ({gpus}) it has no sparse MLA backend for "
                "DeepSeek's sparse attention (its indexer), in any KV dtype: the sparse "
                "backends it lists there, FLASH_ATTN_MLA_SPARSE, FLASHMLA_SPARSE and "
                "FLASHINFER_MLA_SPARSE_SM90, run on SM 9 (FLASHMLA_SPARSE on SM 10 too), and "
                "its dense ones run no sparse MLA (\"No valid attention backend found for cuda "
                "... TRITON_MLA: [sparse not supported] ... FLASHMLA_SPARSE: [compute "
                "capability not supported], FLASHINFER_MLA_SPARSE_SM90: [compute capability not "
                "supported ...]}\"): pick a GPU of SM 9.0 or 10.0 (H100, H200, B200)")

    # the quote's parts, between its elisions, are vLLM's error in order (cuda.py 499-516:
    # each backend's reasons in brackets, "{...}" round them all) with FlashInfer >= 0.6.18
    # and without, where FLASHINFER_MLA_SPARSE_SM90's supports_combination adds its own
    # reason in its bracket (flashinfer_mla_sparse_sm90.py 205-210, backend.py 370-371)
    def quoted_in(reason: str, message: str) -> bool:
        quote = reason[reason.index('("') + 2:reason.index('")')]
        at = 0
        for part in (p.strip() for p in quote.split("...") if p.strip()):
            at = message.find(part, at)
            if at < 0:
                return False
        return True

    old_flashinfer = ("FLASHINFER_MLA_SPARSE_SM90 requires FlashInfer with SM90 MLA support "
                      "(ckv_scale_arr in BatchMLAPagedAttentionWrapper.run, FlashInfer >= "
                      "0.6.18)")
    for sm90 in ("compute capability not supported",
                 f"compute capability not supported, {old_flashinfer}"):
        message = ("No valid attention backend found for cuda with AttentionSelectorConfig(...)"
                   ". Reasons: {FLASH_ATTN_MLA: [sparse not supported, compute capability not "
                   "supported], TRITON_MLA: [sparse not supported], FLASH_ATTN_MLA_SPARSE: "
                   "[compute capability not supported], FLASHMLA_SPARSE: [compute capability "
                   f"not supported], FLASHINFER_MLA_SPARSE_SM90: [{sm90}]}}.")
        assert quoted_in(refusal("8.0", "A100"), message), sm90

    ds32 = load_preset("DeepSeek-V3.2")
    for dtype in ("bfloat16", "fp8"):
        profile = ds32.with_options(kv_dtype=dtype).profile()
        before = run_strategy("vllm", profile, budget_bytes=40 << 30).to_dict()
        for capability, sm, gpus in (((8, 0), "8.0", "A100"), ((8, 9), "8.9", "L40S, RTX 4090")):
            r = run_strategy("vllm", profile, budget_bytes=40 << 30,
                             options=StrategyOptions(gpu_compute_capability=capability))
            assert (r.applies, r.reason) == (False, refusal(sm, gpus))
            assert why_not_label(r) == WONT_START
        for capability in ((9, 0), (10, 0)):
            r = run_strategy("vllm", profile, budget_bytes=40 << 30,
                             options=StrategyOptions(gpu_compute_capability=capability))
            assert r.to_dict() == before
    bf16 = run_strategy("vllm", ds32.profile(), budget_bytes=40 << 30,
                        options=StrategyOptions(gpu_compute_capability=(9, 0)))
    assert (bf16.block_size, bf16.block_bytes, bf16.num_blocks) == (
        64, 61 * 64 * (1_152 + 132), (40 << 30) // 5_012_736) == (64, 5_012_736, 8_568)


def test_a_gpu_named_moves_no_vllm_figure_but_of_those_refusals_and_notes():
    # every preset at every GPU preset's capability (a preset's, or the architecture told),
    # beside none said: vLLM's figures, formulas and log lines alike but for the MLA presets'
    # refusals above on SM 8.x and, on the Blackwell's 10.0, DeepSeek-V3's note on the block
    # vLLM runs told none (FLASHINFER_MLA's, in its formulas: unasked_mla_block_text); SGLang
    # reads the Blackwell alone, where DeepSeek-V3.2's sparse attention is stored raw in fp8;
    # flat reads no capability at all
    from flatkv.budget import GPU_COMPUTE_CAPABILITIES
    from flatkv.presets import list_presets

    moved = {}
    for name in list_presets():
        profile = load_preset(name).profile()
        for strategy in ("vllm", "sglang", "flat"):
            for capability in set(GPU_COMPUTE_CAPABILITIES.values()):
                before, after = (run_strategy(
                    strategy, profile, budget_bytes=40 << 30, context_tokens=32_768,
                    options=StrategyOptions(gpu_compute_capability=given)).to_dict()
                    for given in (None, capability))
                if after != before:
                    moved[name, strategy, capability] = {
                        k for k in {*before, *after} if after.get(k) != before.get(k)}
    assert set(moved) == {("DeepSeek-V3.2", "vllm", (8, 0)), ("DeepSeek-V3.2", "vllm", (8, 9)),
                          ("DeepSeek-V3", "vllm", (10, 0)), ("DeepSeek-V3.2", "sglang", (10, 0))}
    assert moved["DeepSeek-V3", "vllm", (10, 0)] == {"formulas"}
    assert not moved["DeepSeek-V3.2", "vllm", (8, 0)].isdisjoint({"applies", "reason"})
    assert {"block_bytes", "kv_tokens"} <= moved["DeepSeek-V3.2", "sglang", (10, 0)]


def test_vllm_keeps_a_non_mla_fp8_cache_alike_on_an_sm8x_gpu():
    # vLLM 0.34 on SM 8.x told an fp8 KV cache for attention without MLA: FLASH_ATTN's fp8 needs
    # FA3 on SM 9.x (fa_utils.py 306-311; FA2 alone runs below SM 9: get_flash_attn_version
    # 99-107), so cuda.py's next backend, FLASHINFER, runs it (TRITON_ATTN for gpt-oss, whose
    # sinks FA2 and FlashInfer below SM 9 do not serve, in any dtype). Neither refuses, and
    # both keep the block told none (16), the smallest kernel block a hybrid aligns to (16:
    # FlashInfer's [16, 32, 64], TRITON_ATTN's MultipleOf(16), FLASH_ATTN's MultipleOf(16)) and
    # the bytes (no customize_spec of their own), so nothing of the pool moves
    # (bench/vllm_check.py check_gpu_attention: 231 settings, 0 mismatches). Llama-3.1-8B in
    # fp8: 32 layers x 16 tokens x 2 x 8 heads x 128 x 1 B = 1,048,576 B a block, 40 GiB of it
    # 40,960 blocks, 655,360 tokens, on an A100 as on an H100
    from flatkv.presets import list_presets

    llama = load_preset("Llama-3.1-8B").with_options(kv_dtype="float8_e4m3fn").profile()
    assert 32 * 16 * 2 * 8 * 128 == 1_048_576 and (40 << 30) // 1_048_576 == 40_960
    for capability in ((8, 0), (8, 9)):
        r = run_strategy("vllm", llama, budget_bytes=40 << 30,
                         options=StrategyOptions(gpu_compute_capability=capability))
        assert (r.block_size, r.block_bytes, r.num_blocks, r.capacity_tokens) == (
            16, 1_048_576, 40_960, 655_360)
        assert r.extras["kernel_block_size"] == 16
    checked = 0
    for name in list_presets():
        spec = load_preset(name)
        kinds = {type(k).__name__ for k in spec.layers}
        if "AttentionLayer" not in kinds or "MLALayer" in kinds:
            continue
        for kv_dtype in ("float8_e4m3fn", "float8_e5m2"):
            profile = spec.with_options(kv_dtype=kv_dtype).profile()
            hopper, a100, ada = (run_strategy(
                "vllm", profile, budget_bytes=40 << 30, context_tokens=32_768,
                options=StrategyOptions(gpu_compute_capability=capability)).to_dict()
                for capability in ((9, 0), (8, 0), (8, 9)))
            assert a100 == hopper and ada == hopper, (name, kv_dtype)
            checked += 1
    assert checked == 2 * 12  # the 12 presets with attention and no MLA


def test_blackwell_is_derived_from_the_one_gpu_compute_capability():
    # one field says the GPU: a Blackwell is its major 10 (the B200's 10.0), none said is
    # none, and the older second field is gone, so no two can disagree
    from flatkv.budget import GPU_ARCHITECTURES, GPU_COMPUTE_CAPABILITIES

    assert {c: StrategyOptions(gpu_compute_capability=c).blackwell
            for c in (None, *GPU_COMPUTE_CAPABILITIES.values())} == {
        None: False, (8, 0): False, (8, 9): False, (9, 0): False, (10, 0): True}
    assert GPU_ARCHITECTURES == {"ampere": (8, 0), "ada": (8, 9), "hopper": (9, 0),
                                 "blackwell": (10, 0)}
    with pytest.raises(TypeError, match="sglang_blackwell"):
        StrategyOptions(sglang_blackwell=True)


@pytest.mark.parametrize("bad", [(7, 5), (9.0, 0), [9, 0], "9.0", (9,)])
def test_gpu_compute_capability_is_a_gpu_presets_or_none(bad):
    with pytest.raises(ValueError) as err:
        StrategyOptions(gpu_compute_capability=bad)
    assert str(err.value) == (
        f"gpu_compute_capability is {bad!r}: give one of (8, 0), (8, 9), (9, 0), (10, 0) (a "
        "GPU preset's: budget.GPU_COMPUTE_CAPABILITIES) or None where no GPU is named")


def test_vllm_refuses_an_int8_cache_for_any_model_and_runs_the_fix():
    # vLLM 0.34's --kv-cache-dtype (CacheDType, config/cache.py 44-67, validated at 505-510;
    # 0.31's 39-58) names int8 only as int8_per_token_head, a float32 scale beside each head's K
    # and V (triton_attn.py customize_spec 308-319: (head_size + head_size_v) x 1 + 2 x 4 B a
    # head), so Llama-3.1-8B's 8 heads of 128 keep 8 x (256 + 8) = 2,112 B a layer a token
    # there, not int8's 8 x 256 = 2,048; its --dtype (config/model.py 106) names no int8. The
    # column laid int8 out as fp8's bytes: on 40 GiB Llama-3.1-8B at P 16 took
    # 40 GiB // (32 x 16 x 2,048) = 40,960 blocks, DeepSeek-V3 40 GiB // (61 x 16 x 576) =
    # 76,398; refused now, and the fix it names runs those figures
    reason = ("vLLM refuses to start: no KV cache in int8 in 0.31 to 0.34: neither "
              "its --kv-cache-dtype (config/cache.py 44-67: \"Invalid kv_cache_dtype\", "
              "505-510; 0.31's 39-58) nor its --dtype (auto, half, float16, bfloat16, float, "
              "float32: config/model.py 106) names int8, and its int8_per_token_head is not "
              "these bytes: int8 beside a float32 scale for each head's K and V, (head_size + "
              "head_size_v) + 8 B a head a token, on TRITON_ATTN alone (triton_attn.py "
              "308-319), so no run of it stores this cache in int8; set the KV dtype to "
              "float8_e4m3fn (fp8) or bfloat16")
    from flatkv.profile import profile_from_dict, profile_to_dict
    from flatkv.strategies.vllm import int8_kv_refusal

    budget = 40 << 30
    assert 8 * (128 + 128) + 2 * 4 * 8 == 2_112 != 8 * 256 == 2_048
    fixed = {"Llama-3.1-8B": (32 * 16 * 2_048, 40_960),
             "DeepSeek-V3": (61 * 16 * 576, 76_398),
             "DeepSeek-V3.2": None, "Qwen3-Next-80B-A3B": None}
    for name, blocks in fixed.items():
        int8 = load_preset(name).with_options(kv_dtype="int8").profile()
        assert int8.kv_dtype == "int8" and int8_kv_refusal(int8) == reason
        for options in (StrategyOptions(), StrategyOptions(block_size=64)):
            r = run_strategy("vllm", int8, budget_bytes=budget, options=options)
            assert (r.applies, r.reason, r.num_blocks) == (False, reason, None)
        # a refusal at this dtype, not a model vLLM does not serve; FlatKV's layouts keep it
        assert model_blocker("vllm", int8) == ""
        assert run_strategy("flat", int8, budget_bytes=budget).applies
        exported = profile_from_dict(profile_to_dict(int8))
        assert int8_kv_refusal(exported) == reason
        undtyped = profile_from_dict({k: v for k, v in profile_to_dict(int8).items()
                                      if k not in ("kv_dtype", "kv_tensor_bytes")})
        assert int8_kv_refusal(undtyped) == ""
        # the fix: fp8 of the same 1-byte elements keeps int8's layout; bfloat16 runs too
        fp8 = run_strategy("vllm", load_preset(name).with_options(kv_dtype="fp8").profile(),
                           budget_bytes=budget)
        assert fp8.applies
        if blocks:
            block_bytes, count = blocks
            assert (fp8.block_size, fp8.num_blocks) == (16, budget // block_bytes) == (16, count)
        assert run_strategy("vllm", load_preset(name).with_options(
            kv_dtype="bfloat16").profile(), budget_bytes=budget).applies
    # no preset is int8 by default, and each the column serves runs in the fix
    assert_presets_lose_nothing_to_int8("vllm", budget)


def test_vllms_flashmla_note_reads_mla_by_the_latent_not_by_a_kernel_block():
    # Llama-3.1-8B's K and V in fp8 (e4m3) given a kernel block of 32 (a JSON, a link's
    # model_kernel) were told "P 32 is a block size told: told none, vLLM runs an fp8 MLA
    # cache on a Hopper at 64, FlashMLA's kernel block": no MLA backend runs K and V. DeepSeek-V3
    # (one 576 B latent, CacheProfile.mla) at P 16 still has it
    llama = replace(load_preset("Llama-3.1-8B").with_options(kv_dtype="fp8").profile(),
                    kernel_block_size=32)
    assert (llama.kv_dtype, llama.mla) == ("float8_e4m3fn", False)
    r = run_strategy("vllm", llama, budget_bytes=40 << 30)
    assert r.applies and r.block_size == 32
    assert not any("FlashMLA's kernel block" in line for line in r.formulas)
    ds3 = run_strategy("vllm", load_preset("DeepSeek-V3").with_options(kv_dtype="fp8").profile(),
                       budget_bytes=40 << 30)
    assert ds3.block_size == 16 and any("FlashMLA's kernel block" in line
                                        for line in ds3.formulas)


def test_vllms_flashmla_note_holds_for_a_raw_latent_with_no_kernel_block():
    # a raw model of one 576 B latent a layer in fp8 (a link's kv_split=576 with no
    # model_kernel) is MLA to the e5m2 refusal and the TRITON_MLA fallback (CacheProfile.mla),
    # and runs at P 16, 40 GiB // (61 x 16 x 576) = 76,398 blocks, as DeepSeek-V3 does; the
    # FlashMLA note (told none, vLLM runs it at 64 on a Hopper) was missing for it alone, as
    # it still asked for the profile's kernel block
    latent = CacheProfile(layer_types=("full_attention",) * 61, kv_bytes_per_slot=576,
                          kv_dtype="float8_e4m3fn", kv_tensor_bytes=(576,), name="raw")
    assert latent.mla and latent.kernel_block_size is None
    assert (40 << 30) // (61 * 16 * 576) == 76_398
    for profile in (latent, replace(latent, kernel_block_size=16)):
        r = run_strategy("vllm", profile, budget_bytes=40 << 30)
        assert (r.block_size, r.num_blocks) == (16, 76_398)
        assert r.formulas[0].startswith("P 16 is a block size told: told none, vLLM runs an fp8 "
                                        "MLA cache on a Hopper at 64, FlashMLA's kernel block")


def test_vllm_raises_only_an_mla_hybrids_block_to_128():
    # vLLM raises a hybrid's attention block to a multiple of 128 where model_config.use_mla
    # (platforms/interface.py 1095-1100), not for any kernel block: Qwen3.5-27B (GDN and K/V
    # attention) given a kernel block of 32 was raised to 128 "an MLA hybrid's block", P 896,
    # 40 GiB // (16 x 896 x 4,096) = 731 blocks. Its A is 32: P = 32 x cdiv(61,440 + 3,145,728,
    # 32 x 4,096) = 32 x 25 = 800, a block 16 tensors (16 full layers, 48 state layers in
    # groups of 16) of 800 x 4,096 B, 42,949,672,960 // 52,428,800 = 819 blocks.
    # Kimi Linear (MLA's latent) keeps its 128
    qwen = replace(load_preset("Qwen3.5-27B").profile(), kernel_block_size=32)
    assert (qwen.mla, qwen.kv_bytes_per_slot, sum(qwen.state_const_bytes.values())) == (
        False, 4_096, 3_207_168)
    r = run_strategy("vllm", qwen, budget_bytes=40 << 30)
    assert -(-3_207_168 // (32 * 4_096)) == 25
    assert (r.block_size, r.block_bytes, r.num_blocks) == (
        800, 16 * 800 * 4_096, (40 << 30) // 52_428_800) == (800, 52_428_800, 819)
    assert "= 32 x cdiv(3,207,168, 32 x 4,096) = 800" in " ".join(r.formulas)
    kimi = load_preset("Kimi-Linear-48B-A3B").profile()
    assert kimi.mla and "= 128 x cdiv(" in " ".join(
        run_strategy("vllm", kimi, budget_bytes=40 << 30).formulas)


def test_vllm_refuses_mla_dtypes_by_the_latent_not_by_a_kernel_block():
    # CacheProfile.kernel_block_size may be any model's (a backend's block other than 16), so
    # the MLA dtype refusal reads CacheProfile.mla (one latent tensor a layer) or an indexer:
    # Llama-3.1-8B's K and V (8 heads x 128 x 1 B each in fp8_e5m2: 2 x 1,024 = 2,048 B a
    # token a layer, 32 layers) given a kernel block of 32, as a JSON or a link's
    # model_kernel gives it, runs in fp8_e5m2 and float32 (FLASHINFER / TRITON_ATTN take
    # them), where it was refused as MLA: P 32, 40 GiB // (32 x 32 x 2,048) = 20,480 blocks,
    # 655,360 tokens; float32 8 x 128 x 2 x 4 = 8,192 B, 40 GiB // (32 x 32 x 8,192) = 5,120
    from flatkv.profile import profile_from_dict, profile_to_dict

    for dtype, slot, blocks in (("fp8_e5m2", 2_048, 20_480), ("float32", 8_192, 5_120)):
        llama = replace(load_preset("Llama-3.1-8B").with_options(kv_dtype=dtype).profile(),
                        kernel_block_size=32)
        assert (llama.kv_bytes_per_slot, llama.kv_tensor_bytes, llama.mla) == (
            slot, (slot // 2, slot // 2), False)
        assert (40 << 30) // (32 * 32 * slot) == blocks
        for profile in (llama, profile_from_dict(profile_to_dict(llama)),
                        replace(llama, kv_tensor_bytes=())):
            assert mla_dtype_refusal(profile) == ""
            r = run_strategy("vllm", profile, budget_bytes=40 << 30)
            assert (r.applies, r.block_size, r.num_blocks, r.capacity_tokens) == (
                True, 32, blocks, blocks * 32)
    # DeepSeek-V3 (one 576 B latent a layer, 1 B elements) in fp8_e5m2 is still refused
    ds3 = load_preset("DeepSeek-V3").with_options(kv_dtype="fp8_e5m2").profile()
    assert (ds3.kv_tensor_bytes, ds3.mla) == ((576,), True)
    r = run_strategy("vllm", ds3, budget_bytes=40 << 30)
    assert not r.applies and r.reason == mla_dtype_refusal(ds3) != ""
    assert "takes the KV dtype float8_e5m2 (--kv-cache-dtype fp8_e5m2) for a dense MLA" in r.reason


def test_vllm_says_the_block_it_runs_a_dense_mla_cache_at_told_none_on_a_blackwell():
    # On a B200 (SM 10) vLLM's cuda.py _get_backend_priorities puts FLASHINFER_MLA first, which
    # takes bfloat16 and fp8 (flashinfer_mla.py supported_kv_cache_dtypes) at kernel blocks
    # [32, 64]: told no --block-size 0.34 keeps its default 64 (no line), 0.31 raises its 16 to
    # min(32, 64) = 32 (AttentionBackend.get_preferred_block_size) and logs it, not FlashMLA's
    # 64; told 16 (or 48) no backend before TRITON_MLA takes it. The note was off on a
    # Blackwell: FlatKV's P 16 read as what vLLM runs told none. The figures (P 16) unchanged.
    # The B200 preset: 183,359 MiB x 0.9 = 173,039,262,105 B; DeepSeek-V3's 61 layers of
    # (512 + 64) x 2 B = 1,152 B a token in bfloat16, 576 B in fp8
    budget = 183_359 * 2**20 * 9 // 10
    assert budget == 173_039_262_105
    bf16 = load_preset("DeepSeek-V3").profile()
    fp8 = load_preset("DeepSeek-V3").with_options(kv_dtype="float8_e4m3fn").profile()
    assert (bf16.kv_bytes_per_slot, fp8.kv_bytes_per_slot) == (1_152, 576)

    def at(profile, **told):
        return run_strategy("vllm", profile, budget_bytes=budget,
                            options=StrategyOptions(gpu_compute_capability=(10, 0), **told))

    # bf16: a block of 64 is 61 x 64 x 1,152 = 4,497,408 B, budget // it = 38,475 blocks,
    # x 64 = 2,462,400 tokens; of 32, 2,248,704 B: 76,950 blocks, 2,462,400 tokens; fp8 halves
    # each block: 76,950 blocks of 64 (4,924,800 tokens), 153,901 of 32 (4,924,832)
    assert (budget // (61 * 64 * 1_152), budget // (61 * 32 * 1_152)) == (38_475, 76_950)
    assert (budget // (61 * 64 * 576), budget // (61 * 32 * 576)) == (76_950, 153_901)
    assert (76_950 * 64, 153_901 * 32) == (4_924_800, 4_924_832)
    figures = [(bf16, (38_475, 2_462_400), (76_950, 2_462_400)),
               (fp8, (76_950, 4_924_800), (153_901, 4_924_832))]
    # told 16 or 48 vLLM 0.34's cuda.py (528-548) warns of the backends before TRITON_MLA
    # refused for the block alone: on SM 10 FLASHINFER_MLA (priority 0, blocks [32, 64]) and
    # CUTLASS_MLA (2, [128]); TOKENSPEED_MLA (1, [32, 64]) takes fp8 alone and says its
    # package is not installed otherwise (a second reason), FLASH_ATTN_MLA (3) and FLASHMLA (4)
    # are refused on SM 10 (compute capability; FlashMLA dense a Hopper's alone)
    tokenspeed = ("", "where the tokenspeed_mla package is installed TOKENSPEED_MLA is named "
                  "between them, as it takes an fp8 cache at blocks of 32 and 64 too; ")
    for profile, (blocks64, tokens64), (blocks32, tokens32) in figures:
        at64 = f"{blocks64:,} blocks of 64, {tokens64:,} tokens here"
        at32 = f"{blocks32:,} blocks of 32, {tokens32:,} tokens here"
        for told in (16, 48):
            r = at(profile, block_size=told)
            assert (r.block_size, r.num_blocks) == (
                told, budget // (61 * told * profile.kv_bytes_per_slot))
            assert r.formulas[0] == (
                f"P {told} is a block size told: told none, vLLM runs an MLA cache on a "
                "Blackwell on FLASHINFER_MLA, its first MLA backend there, for a "
                "qk_nope_head_dim of 64, 128 or 192 (DeepSeek's 128; FlatKV's model spec does "
                "not carry it, and taken for one of them here: for another 0.34 runs "
                "CUTLASS_MLA, at 128), whose kernel blocks "
                f"are 32 and 64: 0.34 at its default 64 ({at64}; no line), 0.31, whose default "
                f"is 16, at 32 ({at32}; it logs \"Setting kv cache block size to 32 for "
                f"FLASHINFER_MLA backend(s).\"), while told {told}, no multiple of 32, it runs "
                f"on TRITON_MLA at {told}, as these figures do, and logs \"--block-size {told} "
                "precluded higher-priority backend(s) FLASHINFER_MLA, CUTLASS_MLA. Using "
                "TRITON_MLA instead, which may result in reduced performance. Consider removing "
                "--block-size to auto-select the optimal block size.\" ("
                + tokenspeed[profile is fp8]
                + "FLASH_ATTN_MLA and FLASHMLA's dense kernel are refused on SM 10 whatever the "
                "block, so not named): a block size of 64 (32 for 0.31) here matches a "
                "Blackwell's log of a run told none")
        # the figures of the blocks the note names are these layouts' at that block size
        assert [(r.num_blocks, r.capacity_tokens) for r in (
            at(profile, block_size=64), at(profile, block_size=32))] == [
            (blocks64, tokens64), (blocks32, tokens32)]
        # none at a P of 32s (FLASHINFER_MLA runs it as told) or a kernel block told
        for r in (at(profile, block_size=32), at(profile, block_size=64),
                  at(profile, block_size=96), at(profile, kernel_block_size=16)):
            assert not any("is a block size told" in line for line in r.formulas)
    # the Hopper's fp8 note (FlashMLA's 64) is a Hopper's alone; its bf16 none
    hopper = run_strategy("vllm", fp8, budget_bytes=budget)
    assert "FlashMLA's kernel block" in hopper.formulas[0]
    assert not any("FlashMLA's kernel block" in line for line in at(fp8).formulas)
    assert not any("is a block size told" in line
                   for line in run_strategy("vllm", bf16, budget_bytes=budget).formulas)
    # a budget under two blocks of 64 (vLLM needs 2) says so for that block
    tiny = run_strategy("vllm", bf16, budget_bytes=61 * 16 * 1_152 * 3,
                        options=StrategyOptions(gpu_compute_capability=(10, 0)))
    assert "(too few blocks of 64 to start in this budget; no line)" in tiny.formulas[0]
    assert "(too few blocks of 32 to start in this budget; it logs" in tiny.formulas[0]


def test_vllms_blackwell_mla_note_runs_the_layout_once_more_and_its_64_matches_a_run(
        monkeypatch):
    # The note's blocks of 64 (0.34's told none) come from its one run at 32 (0.31's): one
    # group of DeepSeek-V3's 61 layers, a block of 64 twice one of 32, so budget // it =
    # blocks of 32 // 2, tokens x 64, and vLLM starts while one request's cdiv(L, 64) blocks
    # fit beside the null block. It ran the layout at 32 and again at 64 in every run_vllm at
    # a P of no 32s. Checked against a run at 64 over budgets about each refusal's edge:
    # a budget of one or two blocks of 64, and one request's blocks of 64 and 32 with the
    # null block (61 x 64 x 1,152 = 4,497,408 B a block of 64 in bfloat16)
    import flatkv.strategies.vllm as vllm

    calls = []
    run = vllm._run_overridden

    def counted(profile, **kwargs):
        calls.append(kwargs["options"].block_size)
        return run(profile, **kwargs)

    monkeypatch.setattr(vllm, "_run_overridden", counted)
    blackwell = StrategyOptions(gpu_compute_capability=(10, 0), block_size=16)
    for dtype in ("bfloat16", "float8_e4m3fn"):
        profile = load_preset("DeepSeek-V3").with_options(kv_dtype=dtype).profile()
        b64 = 61 * 64 * profile.kv_bytes_per_slot
        assert b64 == {"bfloat16": 4_497_408, "float8_e4m3fn": 2_248_704}[dtype]
        for context in (None, 1, 64, 65, 100_000):
            pages = -(-(context or 1) // 64)
            for budget in sorted({b64, b64 + 1, 2 * b64 - 1, 2 * b64, (pages + 1) * b64 - 1,
                                  (pages + 1) * b64, (pages + 1) * b64 + 1,
                                  (2 * pages + 1) * b64 // 2, 173_039_262_105}):
                calls.clear()
                r = run_strategy("vllm", profile, budget_bytes=budget, context_tokens=context,
                                 options=blackwell)
                assert calls == [16, 32] or (calls == [16] and not r.applies)
                calls.clear()
                at64 = run(profile, budget_bytes=budget, context_tokens=context,
                           options=replace(blackwell, block_size=64))
                expected = (f"{at64.num_blocks:,} blocks of 64, {at64.capacity_tokens:,} "
                            "tokens here" if at64.applies else
                            "too few blocks of 64 to start in this budget")
                if r.applies:
                    assert f"0.34 at its default 64 ({expected}; no line)" in r.formulas[0]
                assert at64.applies == (budget > b64 and budget >= (pages + 1) * b64)


def test_vllm_refuses_an_mla_model_in_float32_and_keeps_its_other_layouts():
    # vLLM's --kv-cache-dtype has no float32 (config/cache.py CacheDType): a float32 KV cache is
    # its auto beside --dtype float32, and no MLA backend of vLLM 0.31 or 0.34 on CUDA runs a
    # float32 model (supported_dtypes: float16 and bfloat16 at most, flashmla_sparse.py 155 and
    # flashinfer_mla_sparse_sm90.py 147 bfloat16 alone), so validate_configuration says "dtype
    # not supported" for each and cuda.py raises. Before, FlatKV laid DeepSeek-V3.2 out at
    # 61 x (2,304 + 132) B a token, 517,952 tokens on an H100 80GB
    reason = (
        "vLLM refuses to start: no MLA attention backend of its releases 0.31 to 0.34 on an "
        "NVIDIA GPU runs a model in float32, which a float32 KV cache asks (its "
        "--kv-cache-dtype has no float32: auto keeps the model's --dtype): each takes float16 "
        "and bfloat16 at most (\"No valid attention backend found for cuda ... dtype not "
        "supported\"): set the KV dtype to bfloat16, as its --dtype auto serves a float32 "
        "checkpoint")
    budget = 85_520_809_984 * 9 // 10  # an H100 80GB at 0.9
    for name in ("DeepSeek-V3", "DeepSeek-V3.2", "Kimi-Linear-48B-A3B"):
        f32 = load_preset(name).with_options(kv_dtype="float32").profile()
        r = run_strategy("vllm", f32, budget_bytes=budget)
        assert (r.applies, r.reason) == (False, reason)
        assert model_blocker("vllm", f32) == ""  # a dtype, not a model vLLM does not serve
        assert run_strategy("flat", f32, budget_bytes=budget).applies
        # the fix it names is taken: bfloat16, and float16 too (2-byte dtypes)
        for dtype in ("bfloat16", "float16"):
            assert run_strategy("vllm", load_preset(name).with_options(
                kv_dtype=dtype).profile(), budget_bytes=budget).applies
    # SGLang keeps a dense MLA model in the model's float32 (DSA alone is kept in bfloat16):
    # DeepSeek-V3 at 61 x 576 x 4 = 140,544 B a token, pages of 1
    ds3 = run_strategy("sglang", load_preset("DeepSeek-V3").with_options(
        kv_dtype="float32").profile(), budget_bytes=budget)
    assert ds3.capacity_tokens == budget // (61 * 576 * 4) == 547_648
    # attention that is not MLA runs in float32 (TRITON_ATTN and FlexAttention take it), and
    # bytes with no kernel block of their own are taken as given: 32 x 8 x 128 x 2 x 4 B a token
    llama = load_preset("Llama-3.1-8B").with_options(kv_dtype="float32").profile()
    r = run_strategy("vllm", llama, budget_bytes=budget)
    assert r.applies and r.capacity_tokens == budget // (32 * 8 * 128 * 2 * 4) // 16 * 16


def test_formulas_name_groups_by_kind_as_a_person_writes_them():
    # Qwen3-Next's 36 GDN layers in vLLM's 3 state groups of 12 beside its 12 full layers: the
    # formulas count the state groups once, as one term (they read "1 state 0 + 1 state 1 +
    # 1 state 2 + 482 full attention", and before that "1 linear_attention.0 + ..."); the
    # result keeps vLLM's ids, which its JSON keys and fields print.
    # 262,144 / 544 = 481.9: 482 full pages a request
    r = run_strategy("vllm", load_preset("Qwen3-Next-80B-A3B").profile(),
                     budget_bytes=40 * 2**30, context_tokens=262_144)
    assert [g["name"] for g in r.extras["groups"]] == [
        "linear_attention.0", "linear_attention.1", "linear_attention.2", "full_attention"]
    assert 42_949_672_960 // 1_114_112 // 12 == 3_212 and -(-262_144 // 544) == 482
    assert ("group_size = 12 (layers per type: 36 state, 12 full attention); 4 groups"
            in r.formulas)
    assert ("max_concurrency = page ids / page ids per request = 3,212 / (3 state groups x 1 "
            "+ 482 full attention) = 6.62 at 262,144 tokens") in r.formulas
    assert 3 * 1 + 482 == 485 and f"{3_212 / 485:.2f}" == "6.62"
    assert "  pages per request, state: 1 (mamba cache mode none)" in r.formulas
    # 3,212 page ids split 3 : 482 over the 4 groups: the state groups' 7, 7 and 6 listed in
    # order after their one name, the full group's 3,192 as before (7 + 7 + 6 + 3,192 = 3,212)
    assert ("page ids owned (split in proportion to the pages one request needs at L): "
            "3 state groups: 7, 7 and 6, full attention: 3,192") in r.formulas
    assert 7 + 7 + 6 + 3_192 == 3_212
    assert r.to_dict()["owned_units"] == {"linear_attention.0": 7, "linear_attention.1": 7,
                                          "linear_attention.2": 6, "full_attention": 3_192}
    # Jamba-1.5-Mini on the H100 80GB preset at 0.9 (85,520,809,984 x 0.9 = 76,968,728,985 B):
    # 7 state groups of 4 layers at 1 page a request beside 3,277 full pages (262,144 / 80 =
    # 3,276.8): 58,722 page ids split 7 : 3,277, 18 for each state group, 58,596 full
    jamba = run_strategy("vllm", load_preset("Jamba-1.5-Mini").profile(),
                         budget_bytes=76_968_728_985, context_tokens=262_144)
    assert jamba.num_blocks == 58_722 and 7 * 18 + 58_596 == 58_722
    assert jamba.to_dict()["owned_units"] == {
        **{f"linear_attention.{i}": 18 for i in range(7)}, "full_attention": 58_596}
    assert ("max_concurrency = page ids / page ids per request = 58,722 / (7 state groups x 1 "
            "+ 3,277 full attention) = 17.88 at 262,144 tokens") in jamba.formulas
    assert ("page ids owned (split in proportion to the pages one request needs at L): "
            "7 state groups: 18 each, full attention: 58,596") in jamba.formulas
    # Kimi-Linear's full layers keep MLA's latent: named so in our layout's rows and dead
    # weight, the kind's own parentheses not nested in a second pair (it read "(full
    # attention (MLA) rows)")
    kimi = run_strategy("flat", load_preset("Kimi-Linear-48B-A3B").profile(),
                        budget_bytes=40 * 2**30, context_tokens=None)
    assert ("block_bytes = 20 x 2,170,880 B of state rows + 7 x 1,888 x 1,152 B of full "
            "attention (MLA) rows = 58,642,432 B per page id (the sum of the 20 slot rows)"
            ) in kimi.formulas
    assert 20 * 2_170_880 + 7 * 1_888 * 1_152 == 58_642_432
    assert ("dead_weight of a full attention (MLA) page id: 43,417,600 B of other groups' rows"
            in kimi.formulas)
    assert not any("_attention" in line or "))" in line for line in r.formulas + kimi.formulas)
