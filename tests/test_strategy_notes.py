"""The words beside the engine strategies' figures (flatkv.strategy_notes): Compare's rows, the
notes under the figures, refusals and start-up logs, derived by hand from SPEC.md."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import pytest
from strategy_profiles import BLOCK_BYTES, QWEN35, vllm_at_80gb

from flatkv import strategy_notes as notes
from flatkv.app_model import profile_for
from flatkv.presets import load_preset
from flatkv.profile import CacheProfile
from flatkv.strategies import StrategyOptions, StrategyResult, run_strategy

# SPEC section 1: 12 x (3 linear + 1 full); KV 2,048 B/slot; conv 49,152 B; ssm 2,097,152 B.


def test_compare_rows_carry_the_strategy_numbers():
    from flatkv.strategies import StrategyOptions, run_strategy

    opts = StrategyOptions(block_size=64, alignment=16)
    flat = run_strategy("flat", QWEN35, budget_bytes=80 * 10**9, context_tokens=32768,
                        options=opts)
    row = notes.compare_table_row(flat)
    assert row["strategy"] == "FlatKV packed slabs" and row["applies"]
    assert (row["P (tokens)"], row["block bytes"], row["blocks"]) == (1056, BLOCK_BYTES, 775)
    # 775 page ids / (32 full pages + 1 state page) at 32,768 tokens = 23.4848...
    assert row["concurrency"] == 23.48
    # the breakdown columns sum to the budget; unused: what 775 whole blocks leave
    breakdown = {k: v for k, v in row.items() if k.endswith(" (B)")}
    assert sum(breakdown.values()) == 80 * 10**9
    assert breakdown["unused (B)"] == 80 * 10**9 - 775 * BLOCK_BYTES == 5_120_000
    vllm = notes.compare_table_row(
        run_strategy("vllm", QWEN35, budget_bytes=80 * 10**9, context_tokens=32768, options=opts))
    # A = max(16, 64) = 64; P = 64 x cdiv(2,146,304, 64 x 2,048) = 64 x 17 = 1,088
    # page 1,088 x 2,048 = 2,228,224 B; 80e9 // 2,228,224 // 12 layers per group = 2,991
    assert (vllm["P (tokens)"], vllm["blocks"]) == (1088, 2991)
    # beside one request's page in each of the 3 state groups, as every strategy counts:
    # (2,991 - 3) x 1,088
    assert vllm["capacity (tokens)"] == 3_250_944
    # a concurrency just under a whole number stays under it in the row (vLLM's log says 2.00x):
    # 3,999 blocks of 2 MiB for Llama-3.1-8B, 2,000 a request of 32,000 tokens
    llama = CacheProfile(layer_types=("full_attention",) * 32, kv_bytes_per_slot=4096)
    under = run_strategy("vllm", llama, budget_bytes=3999 * 2**21, context_tokens=32_000)
    assert under.concurrency == Fraction(3999, 2000)
    assert notes.compare_table_row(under)["concurrency"] == 1.99
    assert under.extras["log_lines"][-1].endswith("per request: 2.00x")
    results = [run_strategy(name, QWEN35, budget_bytes=80 * 10**9, context_tokens=32768,
                            options=opts) for name in ("flat", "vllm", "sglang")]
    text = notes.logged_capacity_text(results)
    # vLLM: max concurrency x L = 2,991 / (ceil(32,768 / 1,088) = 31 + 3 state pages) x 32,768;
    # vLLM 0.19: its own P = max(64, 16 x cdiv(2,146,304, 16 x 2,048)) = 16 x 66 = 1,056
    # (model_executor/models/config.py:273-280 of 0.19.0), 80e9 // (1,056 x 2,048) // 12 = 3,082
    # blocks, 3,082 // 4 groups x 1,056 = 813,120; SGLang: its token pool
    # SGLang: 80e9 x 9 // 19 // (36 x 2,146,304 B) = 490 state slots; the rest // (12 x 2,048 B)
    # = (80e9 - 490 x 77,266,944) // 24,576 = 1,714,648; vLLM 2,991 x 32,768 // 34 = 2,882,620
    assert text == (
        "In the engines' logs: vLLM's \"GPU KV cache size\": 2,882,620 tokens; SGLang's "
        "max_total_num_tokens: 1,714,648 tokens. vLLM's line is max concurrency x max_model_len "
        "(vLLM 0.19 and earlier: 813,120, num_blocks // groups x min block size, a multiple of "
        "the smallest block size; the current figure divided by max_model_len is the logged "
        "concurrency). These count mamba cache mode none: vLLM 0.28 and later start a hybrid "
        "model with prefix caching on, in mamba cache mode align by default; the log says which "
        "(\"Mamba cache mode is set to ...\"): set the same mode here to match such a log. "
        "Mode none, the default here, is --no-enable-prefix-caching or vLLM up to 0.27.")
    # in align, vLLM's own default for a hybrid, nothing to warn of: 2 state pages a request
    # in each of 3 groups, 2,991 x 32,768 // (31 + 6) = 2,648,894
    align = run_strategy("vllm", QWEN35, budget_bytes=80 * 10**9, context_tokens=32768,
                         options=StrategyOptions(block_size=64, alignment=16,
                                                 mamba_cache_mode="align"))
    assert notes.logged_capacity_text([align]).startswith(
        "In the engines' logs: vLLM's \"GPU KV cache size\": 2,648,894 tokens. ")
    assert "These count" not in notes.logged_capacity_text([align])
    assert notes.logged_capacity_text(results[:1]) == ""  # our layout logs nothing
    aliased = notes.compare_table_row(
        run_strategy("aliased", QWEN35, budget_bytes=80 * 10**9, context_tokens=32768))
    assert not aliased["applies"] and aliased["blocks"] is None
    # the layout its reason points at by the page's title: the library (and the CLI) say lcm
    assert aliased["note"].endswith("row grows with P (unequal groups: see two-level pages)")


def test_sglangs_own_ssm_dtype_is_named_where_it_changes_the_state():
    from flatkv.app_model import profile_for
    from flatkv.strategies import StrategyOptions, run_strategy

    # Qwen3-Next at TP 2: conv 24,576 B + ssm 262,144 elements, 2 B in the model (bf16) and 4 B
    # in SGLang's float32
    qwen = profile_for("Qwen3-Next-80B-A3B", None, 2)
    assert qwen.state_bytes_per_layer == 24_576 + 262_144 * 2 == 548_864
    results = [run_strategy(name, qwen, budget_bytes=80 * 10**9, context_tokens=32768)
               for name in ("flat", "sglang")]
    assert notes.sglang_state_text(results, qwen) == (
        "SGLang keeps the ssm state in float32 (SGLang's default ssm dtype; one dtype of its own, "
        "whatever the model's, set in the engine options): 1,073,152 B of state per layer "
        "against the 548,864 B the other layouts keep.")
    told = [run_strategy("sglang", qwen, budget_bytes=80 * 10**9,
                         options=StrategyOptions(sglang_ssm_dtype="bfloat16"))]
    assert notes.sglang_state_text(told, qwen) == ""  # the same bytes: nothing to say
    assert notes.sglang_state_text(results[:1], qwen) == ""  # no SGLang here
    llama = profile_for("Llama-3.1-8B", None, 1)
    assert notes.sglang_state_text(
        [run_strategy("sglang", llama, budget_bytes=80 * 10**9)], llama) == ""  # no state
    # a conv state in float32 is re-sized too: SGLang keeps it in bfloat16 (Nemotron-H-8B:
    # conv 30,720 elements, 122,880 B in float32, 61,440 B in bfloat16; ssm 2,097,152 B in
    # bfloat16, 4,194,304 B in SGLang's float32)
    nemotron = load_preset("Nemotron-H-8B").with_options(conv_dtype="float32").profile()
    assert notes.sglang_state_text(
        [run_strategy("sglang", nemotron, budget_bytes=80 * 10**9)], nemotron) == (
        "SGLang keeps the ssm state in float32 (SGLang's default ssm dtype; one dtype of its "
        "own, whatever the model's, set in the engine options) and the conv state in bfloat16 "
        "(SGLang's conv dtype, SGLANG_MAMBA_CONV_DTYPE's default, whatever the model's): "
        f"{61_440 + 4_194_304:,} B of state per layer against the {122_880 + 2_097_152:,} B the "
        "other layouts keep.")


def test_two_pool_text_explains_sglang_blocks_over_the_budget():
    from flatkv.app_model import profile_for
    from flatkv.strategies import StrategyOptions, compare

    budget = 76_968_728_985
    gpt = profile_for("gpt-oss-20b", None, 1)
    results = compare(gpt, budget_bytes=budget, context_tokens=None, options=StrategyOptions())
    # F = 2,048 B per token per layer, 12 full + 12 sliding layers, r_swa = 0.8: a full-pool
    # token costs 2,048 x (12 + 0.8 x 12) = 44,236.8 B
    full = budget * 5 // (2048 * 108)
    assert full == 1_739_925 and full * 24 * 2048 > budget
    assert notes.two_pool_blocks_text(results, gpt) == (
        "SGLang: a block is one page in both token pools (24,576 B full + 24,576 B sliding), and "
        f"the sliding pool holds {int(0.8 * full):,} tokens against the full pool's {full:,} "
        "(r_swa = 0.8), so blocks x block bytes is more than the budget.")
    # the radix cache off with max_running_requests 64: the sliding pool is SGLang's SWA
    # request cap, (127 + 128 + 1 + 1) x 64 + 2 x 8,192 + 1 = 32,833 tokens, the full pool the
    # rest in 24,576 B tokens; no r_swa split them (the note raised a KeyError for it)
    capped = compare(gpt, budget_bytes=budget, context_tokens=None, options=StrategyOptions(
        sglang_disable_radix_cache=True, sglang_max_running_requests=64))
    full = (budget - 32_833 * 24_576) // 24_576
    assert full == 3_099_032
    assert notes.two_pool_blocks_text(capped, gpt) == (
        "SGLang: a block is one page in both token pools (24,576 B full + 24,576 B sliding), and "
        f"the sliding pool holds 32,833 tokens against the full pool's {full:,} (sized by "
        "SGLang's SWA request cap, not r_swa), so blocks x block bytes is more than the budget.")
    # r_swa 1: both pools hold the same tokens, blocks x block bytes fits the budget: no note
    even = compare(profile_for("gpt-oss-20b", None, 1), budget_bytes=budget, context_tokens=None,
                   options=StrategyOptions(swa_full_tokens_ratio=1))
    sglang = next(r for r in even if r.strategy == "sglang")
    assert sglang.num_blocks * sglang.block_bytes <= budget
    assert notes.two_pool_blocks_text(even, gpt) == ""
    qwen = compare(profile_for("Qwen3-Next-80B-A3B", None, 1), budget_bytes=budget,
                   context_tokens=None, options=StrategyOptions())
    assert notes.two_pool_blocks_text(qwen, profile_for("Qwen3-Next-80B-A3B", None, 1)) == ""
    # Llama 4: the second pool holds its chunked layers, 36 x 4,096 B a token
    scout = profile_for("Llama-4-Scout-17B-16E", None, 1)
    chunked = compare(scout, budget_bytes=budget, context_tokens=None, options=StrategyOptions())
    full = budget * 5 // (4096 * (5 * 12 + 4 * 36))
    assert notes.two_pool_blocks_text(chunked, scout) == (
        "SGLang: a block is one page in both token pools (49,152 B full + 147,456 B chunked), "
        f"and the chunked pool holds {int(0.8 * full):,} tokens against the full pool's "
        f"{full:,} (r_swa = 0.8), so blocks x block bytes is more than the budget.")


def test_dead_weight_text_says_what_one_page_id_space_costs():
    from strategy_profiles import gpt_oss_20b, llama_31_8b

    from flatkv.strategies import compare

    # gpt-oss-20b: 12 sliding + 12 full layers of 16 x 2,048 B rows at P 16; a flat page id
    # takes 24 rows and its group uses 12, so half of each block is dead weight
    budget = 10_552 * 24 * 16 * 2048
    results = compare(gpt_oss_20b(), budget_bytes=budget, context_tokens=32_768)
    by = {r.strategy: r for r in results}
    assert by["flat"].bytes_of("dead_weight") == 10_552 * 12 * 16 * 2048 == budget // 2
    assert f"{budget // 2:,}" == "4,149,215,232"  # 3.86 GiB
    # vLLM: the same budget in blocks of 12 pages, 2 x 10,552 of them, for the same pages per
    # request; SGLang's and aliasing's figures are not above it
    assert by["vllm"].num_blocks == 2 * 10_552
    assert by["vllm"].concurrency == 2 * by["flat"].concurrency
    assert max(r.concurrency for r in results if r.applies) == by["vllm"].concurrency
    assert notes.dead_weight_text(results) == (
        "FlatKV packed slabs: 3.86 GiB (50.00% of the budget) is dead weight. Every page id "
        "takes a row in every slot tensor, and a page one group uses leaves the other groups' "
        "rows in it idle. At this context 2.00x as many requests fit under vLLM v1: a block id "
        "belongs to one group and addresses only its layers' pages.")
    # vLLM with its hybrid manager off: one group of all 24 layers, every token kept; at
    # 131,072 tokens a request needs 8,192 pages there and 8,192 + cdiv(128 - 1 + 8,192, 16) +
    # 1 = 8,713 flat: 8,713 / 8,192 = 1.06x, for another reason than dead weight's absence
    from flatkv.strategies import StrategyOptions, run_strategy
    off = StrategyOptions(vllm_hybrid_manager=False)
    one_group = [run_strategy(name, gpt_oss_20b(), budget_bytes=budget, context_tokens=131_072,
                              options=off) for name in ("flat", "vllm")]
    assert one_group[1].concurrency / one_group[0].concurrency == Fraction(8_713, 8_192)
    assert notes.dead_weight_text(one_group).endswith(
        "At this context 1.06x as many requests fit under vLLM v1: with its hybrid manager off "
        "every layer keeps every token in one group of pages, all of them in use: here the "
        "sliding layers' history beyond their window costs less than one page-id space's dead "
        "weight.")
    # past any request that fits (10M tokens: flat 0.03, vLLM 0.07), the concurrencies still
    # compare, and no request is said to fit
    long = compare(gpt_oss_20b(), budget_bytes=budget, context_tokens=10_000_000)
    assert max(r.concurrency for r in long if r.applies) < 1
    assert ("At this context 2.00x the concurrency is reached under slab aliasing: "
            in notes.dead_weight_text(long))
    # one group, one kind of row: no dead weight, nothing to say
    assert notes.dead_weight_text(compare(llama_31_8b(), budget_bytes=budget)) == ""
    # a best layout that holds no more requests than the flat one (within 1%): no comparison
    flat_only = [by["flat"], by["per-component"]]
    assert notes.dead_weight_text(flat_only).endswith("leaves the other groups' rows in it "
                                                         "idle.")
    # 0.5% more requests would show as 1.00x: no comparison; 1% more shows as 1.01x
    from dataclasses import replace as with_

    def vllm_at(ratio):
        c = by["flat"].concurrency * ratio
        return with_(by["vllm"], concurrency_numerator=c.numerator,
                     concurrency_denominator=c.denominator)

    assert notes.dead_weight_text([by["flat"], vllm_at(Fraction(201, 200))]).endswith(
        "rows in it idle.")
    assert notes.dead_weight_text([by["flat"], vllm_at(Fraction(101, 100))]).endswith(
        "1.01x as many requests fit under vLLM v1: a block id belongs to one group and "
        "addresses only its layers' pages.")
    # the ratio reads as Layout's "x ours" does (units.times_words): 1,999 / 1,000 is "just
    # under 2.00x", not 2.00x (twice as many) nor cut to 1.99x; 107 / 40 = 2.675 exactly
    # rounds half up, 2.68x (its float, 2.67499999..., printed 2.67x)
    assert [notes.dead_weight_text([by["flat"], vllm_at(ratio)]).split("At this context ")[1]
            .split(" as many")[0] for ratio in (Fraction(1_999, 1_000), Fraction(107, 40))] == [
        "just under 2.00x", "2.68x"]


def test_every_layout_has_a_title_and_its_options():
    # a layout added to the runners without them would raise KeyError on a page
    from flatkv.engine_options import STRATEGY_FIELDS
    from flatkv.strategies import STRATEGIES

    assert tuple(notes.STRATEGY_TITLES) == STRATEGIES
    # every layout reads some engine option (max batched tokens at least): a layout left out of
    # every EngineOption's read_by would offer none
    assert all(STRATEGY_FIELDS[s] for s in STRATEGIES)


def test_refusals_in_the_pages_words():
    from flatkv.plan import BudgetTooSmall

    # 3,000 B of budget for blocks of 2,048 B: 1 block; a plan needs 2, 4,096 B
    small = BudgetTooSmall(3_000, 2_048, "4 slots")
    assert notes.budget_too_small_text(small, "raise the KV cache memory in the sidebar") == (
        "The cache budget per rank, 3,000 B (2.93 KiB), holds 1 block of 2,048 B (2.00 KiB); a "
        "plan needs at least 2, that is 4,096 B (4.00 KiB): raise the KV cache memory in the "
        "sidebar")
    state_only = CacheProfile(layer_types=("linear_attention",) * 4, kv_bytes_per_slot=0,
                              state_const_bytes={"conv": 8, "ssm": 16})
    assert notes.state_only_text("packed", state_only, ", or another layout") == (
        "Packed slabs size P against a KV history row, and this model has none (no attention "
        "layer, only state): pick the planner \"one tensor per component\" in the sidebar, or "
        "another layout")
    assert notes.state_only_text("per-component", state_only) is None
    hybrid = CacheProfile(layer_types=("linear_attention", "full_attention"),
                          kv_bytes_per_slot=64, state_const_bytes={"conv": 8})
    assert notes.state_only_text("packed", hybrid) is None


def test_layouts_short_of_one_request_are_named_with_their_concurrency():
    from flatkv.app_model import profile_for
    from flatkv.strategies import run_strategy

    # Llama-3.1-8B: 32 layers x 8 KV heads x (128 + 128) x 2 B = 131,072 B a token; 10 GB holds
    # 76,293 tokens, so a 100,000-token request does not fit (76,288 / 100,000 in whole blocks)
    llama = profile_for("Llama-3.1-8B", None, 1)
    flat = run_strategy("flat", llama, budget_bytes=10**10, context_tokens=100_000)
    assert flat.capacity_tokens == 10**10 // (131_072 * 16) * 16 == 76_288
    assert notes.short_of_one_request_text([flat], 100_000) == (
        "Not even one request of 100,000 tokens fits in: FlatKV packed slabs (0.76). A paged "
        "engine laid out so would refuse to start, as vLLM does when one request of "
        "max_model_len does not fit.")
    # SGLang only warns ("KV pool holds N tokens, fewer than --context-length"): 10 GB of
    # 131,072 B tokens hold 76,293 of them
    sglang = run_strategy("sglang", llama, budget_bytes=10**10, context_tokens=100_000)
    assert sglang.logged_tokens == 10**10 // 131_072 == 76_293
    assert notes.short_of_one_request_text([sglang], 100_000) == (
        "Not even one request of 100,000 tokens fits in: SGLang (0.76). SGLang starts all the "
        "same, warning that its KV pool holds fewer tokens than --context-length, and refuses "
        "or cuts short the longer requests.")
    # gpt-oss-20b in 400 MB at 8,192 tokens: its full pool's 4 x 10^8 x 5 // (9 x 24,576) =
    # 9,042 tokens hold the context, so no warning; the sliding pool's 9,042 x 4 // 5 = 7,233
    # hold 7,233 / min(127 + 8,192, 8,192) of a request
    gpt = profile_for("gpt-oss-20b", None, 1)
    swa_short = run_strategy("sglang", gpt, budget_bytes=400 * 10**6, context_tokens=8_192)
    assert (swa_short.capacity_tokens, swa_short.concurrency) == (9_042, Fraction(7_233, 8_192))
    assert notes.short_of_one_request_text([swa_short], 8_192).endswith(
        "SGLang starts all the same without a warning: its KV pool holds the context, and "
        "another of its pools holds less than one request's share.")
    fits = run_strategy("flat", llama, budget_bytes=10**10, context_tokens=50_000)
    assert notes.short_of_one_request_text([fits], 50_000) == ""


def test_notes_under_the_figures_say_which_layout_does_what():
    from flatkv.app_model import profile_for
    from flatkv.strategies import StrategyOptions, run_strategy

    gpt, qwen = profile_for("gpt-oss-20b", None, 1), profile_for("Qwen3-Next-80B-A3B", None, 1)
    llama = profile_for("Llama-3.1-8B", None, 1)
    # SGLang's pools: its own list decides, the option overrides; nothing to say without sliding
    assert notes.sglang_pools_text(gpt, StrategyOptions()) == (
        "SGLang keeps the sliding-window layers in a token pool of their own: GptOssForCausalLM "
        "is on SGLang\\'s hybrid SWA list. Its sliding-window pool in the engine options "
        "changes this.")
    assert notes.sglang_pools_text(gpt, StrategyOptions(sglang_swa_pool=False)).startswith(
        "SGLang keeps every token of every layer in one pool: as the SGLang sliding\\-window "
        "pool option sets it")
    assert notes.sglang_pools_text(llama, StrategyOptions()) == ""
    # mode all: only where there is state to snapshot
    mode_all, mode_none = (StrategyOptions(mamba_cache_mode=m) for m in ("all", "none"))
    assert notes.mamba_all_text(mode_all, qwen).startswith("Mamba cache mode all: every paged")
    # and only vLLM up to 0.31 has it (0.32's MambaCacheMode is align or none): vLLM's row
    # (Compare's, which shows it; it said "the vLLM column") is that release's
    assert ("vLLM has it up to 0.31 (0.32 and later run align with prefix caching, none "
            "without), so in this mode vLLM's row is vLLM 0.31's: its figures and its "
            "start-up log lines are that release's.") in notes.mamba_all_text(mode_all, qwen)
    assert notes.mamba_all_text(mode_none, qwen) == notes.mamba_all_text(mode_all,
                                                                               llama) == ""
    # vLLM 0.31 runs Qwen3-Next's mode all as align, whose state pages there are 2 + 2 drafted
    # = 4: the prefill checkpoint block asked is 0.33's (GDN on FlashInfer), not 0.31's
    drafting = StrategyOptions(mamba_cache_mode="all", prefill_checkpoint_blocks=1,
                               speculative_tokens=2)
    assert ("its row counts 0.31's align, 4 state pages a request (no prefill checkpoint block "
            "in that release)") in notes.mamba_all_text(drafting, qwen)
    state_only = CacheProfile(("linear_attention",) * 2, 0, {"conv": 8})
    assert notes.how_to_read_text(qwen, 0).startswith("Capacity: the history the pool holds")
    assert notes.how_to_read_text(state_only, 0).startswith(
        "No attention layer: the model keeps no token history, only a constant state per "
        "request, so no capacity in tokens. Concurrency:")
    # which concurrency an engine logs, and what SGLang's is, as it logs none
    assert ("Concurrency: requests of this context length the layout holds at once, counted "
            "with the engine's pages per request (vLLM logs it as \"Maximum concurrency\"; "
            "SGLang logs max_running_requests, a cap on requests running at once, not a "
            "concurrency at this length: its figure here is what its binding pool holds, shown "
            "in its math). ") in notes.how_to_read_text(qwen, 0)
    # what the figures count of speculative decoding: nothing until asked, then the state
    # pages every paged layout adds and vLLM's wider conv state (Qwen3-Next at TP 1: 3 conv
    # rows of 8,192 channels x 2 B = 49,152 B, 2 more rows = 32,768 B), never a drafter's
    # layers
    assert ("Without speculative decoding: set Speculative tokens under Engine options"
            in notes.how_to_read_text(qwen, 0))
    assert ("With 2 drafted tokens a step, a request holds 2 more state pages in each "
            "state group in every paged layout, and vLLM widens GDN, KDA, Mamba2 and "
            "short-conv conv states by a row per drafted token (the other layouts keep the "
            "model's conv rows: an engine whose kernels verify drafts in the conv state as "
            "vLLM's do would widen them too, 32,768 B more a state layer here). "
            + notes.sglang_speculative_text(qwen, 2)
            + " A drafter's own KV layers are not counted") in notes.how_to_read_text(qwen, 2)
    assert ("Speculative decoding adds no state pages here. A drafter's own KV layers"
            in notes.how_to_read_text(llama, 2))
    # SGLang's running requests as told (it said 48 under a told --max-running-requests 20)
    told = StrategyOptions(sglang_max_running_requests=20)
    assert notes.sglang_speculative_text(qwen, 2, told) in notes.how_to_read_text(
        qwen, 2, options=told)
    assert "for up to 20 running requests (--max-running-requests), in buffers" in \
        notes.how_to_read_text(qwen, 2, options=told)
    assert "48 running requests" not in notes.how_to_read_text(qwen, 2, options=told)
    # Budget and Layout say it beside their figures, SGLang's that it is not modelled
    assert notes.speculative_text(qwen, "vllm", 2) == (
        "Speculative decoding: these figures count the 2 drafted tokens' state pages. "
        + notes.DRAFTER_TEXT)
    # one drafted token: its possessive is "token's", not the plural's bare apostrophe
    assert notes.speculative_text(qwen, "vllm", 1) == (
        "Speculative decoding: these figures count the 1 drafted token's state pages. "
        + notes.DRAFTER_TEXT)
    # SGLang's: its draft-token buffers where it models them, else that it does not
    assert notes.speculative_text(qwen, "sglang", 2) == (
        "Speculative decoding: SGLang verifies 3 tokens a step (--speculative-num-steps 2, "
        "topk 1) and keeps each token's state, for up to 48 running requests (its speculative "
        "default), in buffers it sizes with its state slots out of the state budget: its "
        "figures count them, and leave out its drafter's KV, which a path-less MTP drafter "
        "keeps in a pool of its own beyond the budget. " + notes.DRAFTER_TEXT)
    mixed = CacheProfile(layer_types=("sliding_attention", "full_attention",
                                      "linear_attention"), kv_bytes_per_slot=2048,
                         sliding_window=128, state_const_bytes={"conv": 4096, "ssm": 8192})
    assert notes.speculative_text(mixed, "sglang", 2).startswith(
        "Speculative decoding: SGLang's draft-token state buffers are not modelled on this "
        "model")
    assert notes.speculative_text(llama, "sglang", 2).startswith(
        "Speculative decoding: SGLang keeps the same pools for a model without state layers, "
        "and runs at most 48 requests at once (its speculative hook's reset of "
        "max_running_requests, which its log and these figures show).")
    # once the model carries its MTP layer, the texts say it is counted
    assert notes.speculative_text(qwen, "vllm", 2, mtp_added=True).endswith(
        "The model's MTP layer is counted as one more full-attention layer, grouped with the "
        "model's as vLLM does.")
    assert notes.DRAFTER_ADDED_TEXT in notes.how_to_read_text(qwen, 2, mtp_added=True)
    assert notes.speculative_text(llama, "vllm", 2) == (
        "Speculative decoding: " + notes.DRAFTER_TEXT)
    assert notes.speculative_text(qwen, "vllm", 0) == ""
    # Budget's note under the capacity: SGLang's second pool, or the window's caveat where one
    # pool counts sliding pages like full history; where the engine keeps every token of the
    # sliding layers (SGLang's single pool, vLLM's hybrid manager off), that it does
    two_pools = run_strategy("sglang", gpt, budget_bytes=10**10)
    assert notes.capacity_note(two_pools, gpt) == notes.sglang_sliding_pool_text(
        two_pools, gpt)
    assert not notes.windows_as_history(two_pools, gpt)
    one_pool = run_strategy("sglang", gpt, budget_bytes=10**10,
                            options=StrategyOptions(sglang_swa_pool=False))
    assert notes.windows_as_history(one_pool, gpt)
    assert notes.capacity_note(one_pool, gpt) == (
        "Sliding-window layers: without its sliding-window pool, SGLang holds them in its one "
        "token pool and keeps every token, so capacity and concurrency both count them as full "
        "history.")
    # one pool of 10**10 // 49,152 B (24 layers x 2,048 B) tokens, every one of them in a
    # request's count
    assert one_pool.capacity_tokens == 10**10 // (24 * 2_048) == 203_450
    one_pool_at = run_strategy("sglang", gpt, budget_bytes=10**10, context_tokens=131_072,
                               options=StrategyOptions(sglang_swa_pool=False))
    assert one_pool_at.max_concurrency == Fraction(203_450, 131_072)
    vllm = run_strategy("vllm", gpt, budget_bytes=10**10)
    assert notes.capacity_note(vllm, gpt) == notes.sliding_capacity_text(gpt) != ""
    promoted = run_strategy("vllm", gpt, budget_bytes=10**10,
                            options=StrategyOptions(vllm_hybrid_manager=False))
    assert notes.capacity_note(promoted, gpt) == (
        "Sliding-window layers: with its hybrid KV cache manager off, vLLM allocates them as "
        "full attention and keeps every token, so capacity and concurrency both count them as "
        "full history.")
    assert notes.capacity_note(run_strategy("vllm", qwen, budget_bytes=10**10), qwen) == ""
    # Qwen3-Next TP 1 at 44.59 GiB, L 262,144 under vLLM: older releases logged num_blocks //
    # 4 groups x P
    r = run_strategy("vllm", qwen, budget_bytes=47_878_147_932, context_tokens=262_144)
    assert notes.logged_tokens_help(r) == (
        "The token count later vLLM releases print (0.26 and 0.34 checked): max concurrency x "
        f"max_model_len. vLLM 0.19 and earlier printed {r.older_logged_tokens:,} instead "
        "(beside it). The math shows both.")
    assert r.older_logged_tokens == r.num_blocks // 4 * r.block_size
    assert notes.older_logged_tokens_help(r) == (
        "vLLM's \"GPU KV cache size\" as vLLM 0.19 and earlier printed it: num_blocks // groups "
        "x the smallest block size (P; in mamba cache mode none a state group's is min(P, "
        f"max_model_len)), {r.older_logged_tokens:,} here; the math shows it. Tell a log's "
        "release by the figure: a multiple of the smallest block size; the current figure "
        "divided by max_model_len is the logged concurrency.")
    # SGLang logs its token pool, in one form
    sglang = run_strategy("sglang", qwen, budget_bytes=47_878_147_932, context_tokens=262_144)
    assert notes.logged_tokens_help(sglang) == (
        "The token count SGLang's log prints: max_total_num_tokens, its full token pool. The "
        "math shows it.")
    # state layers alone: a pool of context_len tokens over no layers (4,096 here)
    alone = CacheProfile(layer_types=("linear_attention",) * 4, kv_bytes_per_slot=0,
                         state_const_bytes={"conv": 4096, "ssm": 8192})
    sglang = run_strategy("sglang", alone, budget_bytes=10**9, context_tokens=4096)
    assert sglang.logged_tokens == 4096 and sglang.capacity_tokens is None
    assert notes.logged_tokens_help(sglang).startswith(
        "The token count SGLang's log prints: max_total_num_tokens, a token pool of "
        "context_len tokens over no layers")


def test_hold_rows_name_a_layout_no_budget_holds_and_leave_out_a_gpu_not_derived():
    from flatkv.app_model import profile_for
    from flatkv.budget import cache_budget, given_budget
    from flatkv.strategies import run_strategy

    llama = profile_for("Llama-3.1-8B", None, 1)
    results = [run_strategy(s, llama, budget_bytes=10**10, context_tokens=4096)
               for s in ("vllm", "sglang", "flat")]
    # a 2,000,000,000 B GPU at half its memory: 2**30 B of cache needs ceil(2**30 / 0.5) = 2**31
    # B of GPU, more than it has; 2**29 B needs 2**30 B, which it has
    budget = cache_budget(2_000_000_000, 0.5, 0, 1)
    rows = notes.hold_rows(results, [2**30, None, 2**29], budget, llama)
    # no budget holds them in SGLang, so no GPU memory is derived: both its GPU cells are a
    # gap (None), which the table shows as a dash, as every figure that does not apply
    assert rows == [
        {"strategy": "vLLM v1", "cache budget (B)": 2**30, "cache budget": "1.00 GiB",
         "GPU memory (B)": 2**31, "GPU memory": "2.00 GiB (over 1.86 GiB)"},
        {"strategy": "SGLang", "cache budget (B)": None, "cache budget": "none holds them",
         "GPU memory (B)": None, "GPU memory": None},
        {"strategy": "FlatKV packed slabs", "cache budget (B)": 2**29,
         "cache budget": "512.00 MiB", "GPU memory (B)": 2**30, "GPU memory": "1.00 GiB"}]
    # the readable figures lead (a narrow window cuts the table from the right)
    assert list(rows[0]) == ["strategy", "cache budget", "GPU memory", "cache budget (B)",
                             "GPU memory (B)"]
    # "over" in short (the GPU memory column ends inside 540 px at 1000 px), its tooltip whole
    assert notes.hold_help(budget) == {"GPU memory": (
        "The GPU memory whose share leaves this cache budget per rank, at the sidebar's memory "
        "fraction, weights and TP. \"Over\": more than this GPU's 1.86 GiB; a larger GPU, a "
        "higher memory fraction, or more TP (weights and the model's heads split further) "
        "brings it within.")}
    # a layout that serves no such model does not apply, rather than hold none: SGLang, which
    # has no LFM3 model (nor anything to say of its pools for one)
    from flatkv.hf_config import spec_from_hf_config
    from flatkv.strategies import StrategyOptions

    lfm3 = spec_from_hf_config({"model_type": "lfm3",
                                "architectures": ["Lfm3ForCausalLM"]}).profile()
    sglang = run_strategy("sglang", lfm3, budget_bytes=10**10, context_tokens=4096)
    assert notes.hold_rows([sglang], [None], budget, lfm3)[0]["cache budget"] == \
        "does not apply"
    assert notes.sglang_pools_text(lfm3, StrategyOptions()) == ""
    # so does one these options keep from starting at any budget: vLLM's hybrid manager off on
    # Qwen3-Next's state layers; on, a budget too small for them holds "none"
    from flatkv.app_model import profile_for
    from flatkv.sizing import plans_at_some_budget
    qwen, off = profile_for("Qwen3-Next-80B-A3B", None, 1), StrategyOptions(
        vllm_hybrid_manager=False)
    assert not plans_at_some_budget("vllm", qwen, off) and plans_at_some_budget("vllm", qwen)
    vllm = run_strategy("vllm", qwen, budget_bytes=10**10, context_tokens=4096, options=off)
    assert notes.hold_rows([vllm], [None], budget, qwen, off)[0]["cache budget"] == \
        "does not apply"
    assert notes.hold_rows([vllm], [None], budget, qwen)[0]["cache budget"] == \
        "none holds them"
    assert budget.beyond_gpu_text(2**31) == "more than this GPU's 1.86 GiB"
    assert budget.beyond_gpu_text(2_000_000_000) == ""  # all of it: not more
    fix = "a larger GPU, a higher memory fraction, or more TP (weights and the model's heads " \
        "split further)"
    no_fraction = "a larger GPU or more TP (weights and the model's heads split further)"
    assert budget.beyond_gpu_fix() == fix  # a column of several figures: fraction 0.5 < 1
    # 2e9 B of cache: the whole 2e9 B GPU (fraction 1) holds it, so a higher fraction helps;
    # one byte more it does not, and only a larger GPU or more TP is offered
    assert budget.beyond_gpu_fix(2_000_000_000) == fix
    assert budget.beyond_gpu_fix(2_000_000_001) == no_fraction
    # beside 10^9 B of weights a rank (2e9 at TP 2), 10^9 B of cache fits at fraction 1, 10^9 + 1
    # does not
    weighed = cache_budget(2_000_000_000, 0.9, 2_000_000_000, 2)
    assert weighed.beyond_gpu_fix(10**9) == fix and weighed.beyond_gpu_fix(10**9 + 1) == no_fraction
    # at the whole GPU already, no higher fraction to offer
    assert cache_budget(2_000_000_000, 1.0, 0, 1).beyond_gpu_fix() == no_fraction
    given = notes.hold_rows(results, [2**30, None, 2**29], given_budget(10**10, 1),
                               llama)
    assert [set(r) for r in given] == [{"strategy", "cache budget (B)", "cache budget"}] * 3


def test_sglang_start_up_log_says_what_its_sizes_count():
    from flatkv.presets import load_preset
    from flatkv.strategies import StrategyOptions, run_strategy

    def sglang(profile, **options):
        return run_strategy("sglang", profile, budget_bytes=80 * 10**9, context_tokens=32_768,
                            options=StrategyOptions(**options))

    qwen = load_preset("Qwen3-Next-80B-A3B").profile()
    result = sglang(qwen)
    text = notes.start_up_log_text(result)
    assert text == (
        "SGLang's start-up log at these settings, in a current release's words and number "
        "formats: set it beside yours line by line. Its GB are GiB (2^30 B); its sizes count a "
        "page more than #tokens in each KV layer (the page of slot 0, for padded tokens' "
        "writes) and the state pool's padding slot beyond max_mamba_cache_size. Its "
        "scheduler's line (TP rank 0 alone) comes last: max_running_requests is SGLang's own, "
        "from the token pool over context_len (the context here, as --context-length), or the "
        "state pool's cap where lower; chunked_prefill_size is the one set, else SGLang's own "
        "by the GPU's memory (2,048 under 20 GiB, 4,096 under 60 GiB, 8,192 under 160 GiB, "
        "16,384 above; 8,192 where the budget names no GPU), -1 with chunked prefill off as "
        "SGLang's help gives it (a log's 0, told and off too, agrees); max_prefill_tokens is not "
        "modelled (\"...\" reads as anything), nor the memory left that follows "
        "(available_gpu_mem); with SGLANG_ENABLE_POST_CAPTURE_KV_SIZING=1 it gives the pool "
        "kept after CUDA graph capture, whose tokens and requests differ. Releases before "
        "0.5.13 (June 2026) print the KV lines without \"dtype: ...,\".")
    assert result.extras["log_lines"][-1] == (
        f"max_total_num_tokens={result.capacity_tokens}, chunked_prefill_size=8192, "
        "max_prefill_tokens=..., max_running_requests=97, context_len=32768")
    # 80e9 x 9 // 19 B of state hold 490 slots of 77,266,944 B; the rest 1,714,648 tokens
    assert result.capacity_tokens == (80 * 10**9 - 490 * 77_266_944) // (12 * 2048) == 1_714_648
    # SGLang's _resolve_max_num_reqs: min(4,096 (int(1,714,648 / 32,768 x 512) = 26,791, kept
    # to 2,048..4,096), 1,714,648 // 2, 489 request slots // 5 = 97: Qwen3NextForCausalLM's
    # extra_buffer radix cache, 3 + 2 tracking slots a request)
    assert min(max(min(int(1_714_648 / 32_768 * 512), 4096), 2048), 1_714_648 // 2,
               489 // 5) == 97 == result.extras["max_running_requests"]
    # drafting: its Mamba line goes on to the draft buffers, and its max_running_requests is
    # the 48 its speculative hook sets, whatever the context
    drafting = notes.start_up_log_text(sglang(qwen, speculative_tokens=2))
    assert ("With speculative decoding: the Mamba line goes on to the draft tokens' buffers "
            "MambaPool allocates (on a CUDA GPU), and the drafter's own KV pool logs lines of "
            "its own, not shown.") in drafting
    assert ("max_running_requests is the 48 its speculative hook sets, or fewer where the "
            "pools hold fewer;") in drafting
    assert "Without speculative decoding" not in drafting
    # raw bytes: the state lines alone (its warning that 957 request slots // 3, no class's
    # extra buffer, cap the running requests at 319), and nothing said of KV lines
    raw = sglang(CacheProfile(layer_types=qwen.layer_types, kv_bytes_per_slot=2048,
                              state_const_bytes=qwen.state_const_bytes))
    assert [line.split(".")[0] for line in raw.extras["log_lines"][:2]] == [
        f"max_running_requests is capped to {957 // 3} by the mamba state cache "
        "(max_mamba_cache_size=957, 3 state slots per request)", "Mamba Cache is allocated"]
    assert raw.extras["log_lines"][2:] == [
        f"max_total_num_tokens={raw.capacity_tokens}, chunked_prefill_size=8192, "
        "max_prefill_tokens=..., max_running_requests=319, context_len=32768"]
    raw_text = notes.start_up_log_text(raw)
    assert ("Left out: no KV Cache lines: they need the K / V split and KV dtype, which bytes "
            "typed by hand (or attention layer kinds whose K / V splits differ) do not give.") in (
        raw_text)
    assert "page more than #tokens" not in raw_text and "dtype: ...," not in raw_text
    # a hybrid SWA pool's lines are said to read otherwise before 0.5.17
    gpt = load_preset("gpt-oss-20b").profile()
    assert notes.start_up_log_text(sglang(gpt)).endswith(
        "Before 0.5.17 (August 2026) a hybrid SWA pool's lines carry no \"Full\" or \"SWA\" "
        "and its SWA line comes first.")


def test_vllm_start_up_log_of_mode_all_run_as_align_is_vllm_031s():
    from flatkv.presets import load_preset
    from flatkv.strategies.vllm_log import (
        ALL_AS_ALIGN_LOG,
        MODE_ALL_DEPRECATED_LOG,
        MODE_ALL_MEMORY_NOTE,
    )
    qwen = load_preset("Qwen3-Next-80B-A3B").profile()  # Qwen3NextForCausalLM: no mode all
    result = vllm_at_80gb(qwen, mamba_cache_mode="all")
    log = result.extras["log_lines"]
    # vLLM 0.31, the last release with mode all: CacheConfig's warning that the mode is going
    # (config/cache.py's _validate_mamba_cache_mode), then MambaModelConfig's fallback
    # (model_executor/models/config.py), its words
    assert log[0] == MODE_ALL_DEPRECATED_LOG == (
        "Mamba cache mode 'all' is deprecated and will be removed in an upcoming release. If "
        "this is a problem, please open an issue at https://github.com/vllm-project/vllm/issues.")
    assert log[1] == ALL_AS_ALIGN_LOG == (
        "Hybrid or mamba-based model detected without support for prefix caching with Mamba "
        "cache 'all' mode: falling back to 'align' mode.")
    # then align's lines, less 0.34's line of the blocks fit after warm-up, which 0.31 (its
    # cache the Available line's) does not log
    align = vllm_at_80gb(qwen, mamba_cache_mode="align").extras["log_lines"]
    # (80 GB // (12 layers a group x P 544 x 2,048 B a token) = 5,983 blocks)
    assert 80 * 10**9 // (12 * 544 * 2_048) == 5_983
    assert align[-2].startswith("Memory after warmup: ... 5983 KV cache blocks")
    assert log[2:] == align[:-2] + align[-1:] and result.extras["log_release"] == "0.31"
    text = notes.start_up_log_text(result)
    assert text.startswith("vLLM's start-up log at these settings, in vLLM 0.31's words (the "
                           "last release with mamba cache mode all) and number formats")
    assert (f" {MODE_ALL_MEMORY_NOTE}." in text and MODE_ALL_MEMORY_NOTE == (
        "vLLM 0.31 sizes its cache by the Available line: it logs no Memory after warmup line "
        "(0.34's)"))
    assert ("It counts mamba cache mode align: asked for all, vLLM runs this model in align, "
            "as its second line says (its first, that mode all is going).") in text
    # the figures are 0.31's align: a prefill checkpoint block asked (0.33's, for GDN on
    # FlashInfer, with P on its grid of 64) is not kept
    assert notes.mode_fallback_text(result, qwen) == (
        "vLLM's Qwen3NextForCausalLM does not support prefix caching of state in mode all, so "
        "vLLM starts it in align (\"falling back to 'align' mode\"): these are align's figures, "
        "as vLLM 0.31 (the last release with mode all) counts them.")
    asked = vllm_at_80gb(qwen, mamba_cache_mode="all", prefill_checkpoint_blocks=1)
    assert (asked.block_size, asked.num_blocks, asked.concurrency_denominator) == (
        result.block_size, result.num_blocks, result.concurrency_denominator)


def test_a_vllm_that_would_stop_at_start_up_is_said_to_refuse_not_to_not_apply():
    from flatkv.app_model import profile_for
    from flatkv.strategies import run_strategy
    # Falcon-H1-7B's layers in a class whose config shape passes no num_spec (LFM2's), with 2
    # drafted tokens: its widened state outgrows the page (test_strategies)
    falcon = replace(profile_for("Falcon-H1-7B", None, 1), architectures=("Lfm2ForCausalLM",))
    fails = vllm_at_80gb(falcon, speculative_tokens=2)
    assert notes.why_not_label(fails) == "refuses to start"
    assert notes.why_not_text(fails).startswith(
        "**vLLM v1** refuses to start: it sizes P (1,568) and the page (1,605,632 B)")
    # one request past the budget: vLLM's start-up check (62,500 pages of 65,536 B > 1 MB)
    llama = CacheProfile(("full_attention",) * 2, 2048, {})
    refuses = run_strategy("vllm", llama, budget_bytes=10**6, context_tokens=10**6)
    assert notes.why_not_text(refuses).startswith(
        "**vLLM v1** refuses to start: one request of 1,000,000 tokens")
    # a layout with no answer for this model still "does not apply"
    aliased = run_strategy("aliased", QWEN35, budget_bytes=10**10, context_tokens=None)
    assert notes.why_not_text(aliased).startswith(
        "**slab aliasing** does not apply: the model has state layers")


def test_sglang_gpu_page_text_names_blackwells_default_page():
    """SGLang 0.5.23 told no --page-size runs pages of 64 tokens on a B200 (TensorRT-LLM's MHA
    and MLA backends), 128 where K and V differ in width (FA4), 1 on Hopper, and replaces a
    told page its backend does not take: a note says so where the options differ, and with
    64 the pool is whole pages of it."""
    from flatkv.app_model import profile_for
    from flatkv.strategies import StrategyOptions, run_strategy

    llama = profile_for("Llama-3.1-8B", None, 1)
    options = StrategyOptions()
    assert notes.sglang_gpu_page_text("B200 192GB", options, llama) == (
        "SGLang 0.5.23 on a B200 runs pages of 64 tokens when not told a page size "
        "(TensorRT-LLM's MHA backend) and rounds its pools down "
        "to whole pages: set the SGLang page size to 64 in the engine options to match such a "
        "run's log.")
    assert notes.sglang_gpu_page_text("H100 80GB", options, llama) == ""
    at_64 = StrategyOptions(sglang_page_size=64)
    assert notes.sglang_gpu_page_text("B200 192GB", at_64, llama) == ""
    # Llama-3.1-8B keeps 131,072 B a token (32 layers x 8 KV heads x 128 x 2 x bf16): in
    # 10 GiB, 81,920 tokens, already whole pages of 64; a budget a token short loses a page
    r = run_strategy("sglang", llama, budget_bytes=10 * 2**30 - 1, options=at_64)
    assert r.capacity_tokens == (10 * 2**30 // 131_072 - 1) // 64 * 64 == 81_856
    # DeepSeek-V3's MLA: TensorRT-LLM's MLA backend, 64; DeepSeek-V3.2: 64 is its own already
    ds3 = profile_for("DeepSeek-V3", None, 1)
    assert "(TensorRT-LLM's MLA backend)" in notes.sglang_gpu_page_text("B200 192GB",
                                                                            options, ds3)
    # told 16, SGLang runs 64 (TensorRT-LLM's MLA backend takes 32 or 64 alone)
    told_16 = StrategyOptions(sglang_page_size=16)
    assert notes.sglang_gpu_page_text("B200 192GB", told_16, ds3).startswith(
        "SGLang 0.5.23 on a B200 runs pages of 64 tokens where told a page size of 16 "
        "(TensorRT-LLM's MLA backend takes pages of 32 or 64 tokens alone) and rounds")
    assert notes.sglang_gpu_page_text("H100 80GB", told_16, ds3) == ""
    # DeepSeek-V3.2: no page note (64 is its own already) but the DSA dtype and bytes, once:
    # the raw fp8 latent 512 + 64 beside the 128 + 4 B of index keys; bfloat16 (512 + 64) x 2
    ds32 = profile_for("DeepSeek-V3.2", None, 1)
    assert notes.sglang_gpu_page_text("B200 192GB", options, ds32) == (
        "SGLang 0.5.23 on a B200 keeps DeepSeek's sparse attention in fp8_e4m3 where no "
        "--kv-cache-dtype is told, on its trtllm DSA backends, which store the raw latent beside "
        "the index keys, 576 + 132 = 708 B a token a layer (kv_cache_configurator.py "
        "3425-3440): these figures are that layout's (told bfloat16 it keeps 1,284 B, as on a "
        "Hopper).")
    assert notes.sglang_gpu_page_text("H100 80GB", options, ds32) == ""
    # K of 192 and V of 128 a head (MiMo-V2-Flash's shape): FA4, pages of 128
    mimo = CacheProfile(("full_attention",) * 4, 2_560, name="mimo", kv_dtype="bfloat16",
                        kv_tensor_bytes=(1_536, 1_024))
    assert "pages of 128 tokens when not told a page size (FA4, as K and V differ in width" in (
        notes.sglang_gpu_page_text("B200 192GB", options, mimo))


def test_sglang_gpu_page_text_names_a_refusal_on_a_b200():
    """On a B200 SGLang 0.5.23 does not start Nemotron-H without overlap scheduling (its
    no_buffer radix cache refuses TensorRT-LLM): the note says so, on a B200 alone."""
    from flatkv.app_model import profile_for
    from flatkv.strategies import StrategyOptions

    nemotron_h = profile_for("Nemotron-H-8B", None, 1)
    off = StrategyOptions(sglang_overlap_schedule=False)
    assert notes.sglang_gpu_page_text("B200 192GB", off, nemotron_h).startswith(
        "SGLang 0.5.23 on a B200 would not start this model with these options (\"no_buffer "
        "do not support trtllm_mha attention backend.\", mamba_hook.py 161-163)")
    assert notes.sglang_gpu_page_text("B200 192GB", off, nemotron_h).endswith(
        "which its no_buffer mamba radix cache refuses; overlap scheduling on, the extra_buffer "
        "strategy (where the model takes it) or the radix cache off starts it; the figures "
        "shown are of these settings, which it would not run.")
    # no_buffer told: overlap scheduling on would not start it (SGLang refuses a told no_buffer
    # with it), so the note does not offer it
    told = replace(off, sglang_mamba_radix_cache_strategy="no_buffer")
    assert notes.sglang_gpu_page_text("B200 192GB", told, nemotron_h).endswith(
        "which its no_buffer mamba radix cache refuses; the extra_buffer strategy (where the "
        "model takes it) or the radix cache off starts it; the figures shown are of these "
        "settings, which it would not run.")
    assert notes.sglang_gpu_page_text("H100 80GB", off, nemotron_h) == ""


def test_a_mamba2_model_in_align_without_its_checkpoint_block_says_what_later_vllm_keeps():
    # vLLM 0.32+'s MambaMixer2 spec keeps num_prefill_checkpoint_blocks=1: 3 state pages a
    # request in align, where 0.28 to 0.31 (and this default) count 2
    falcon = load_preset("Falcon-H1-7B").profile()
    align = StrategyOptions(mamba_cache_mode="align")
    assert notes.prefill_checkpoint_text(align, falcon) == (
        "Mamba cache mode align counts 2 state pages a request in each state group here, as "
        "vLLM 0.28 to 0.31 did. Since 0.32 vLLM keeps a prefill checkpoint page more for this "
        "model's Mamba2 layers (3 a request): set \"Prefill checkpoint blocks\" to 1 to match a "
        "later log.")
    drafting = replace(align, speculative_tokens=2)  # 2 + 2 drafted, and one more since 0.32
    assert notes.prefill_checkpoint_text(drafting, falcon) == (
        "Mamba cache mode align counts 4 state pages a request in each state group here, as "
        "vLLM 0.28 to 0.31 did. Since 0.32 vLLM keeps a prefill checkpoint page more for this "
        "model's Mamba2 layers (5 a request): set \"Prefill checkpoint blocks\" to 1 to match a "
        "later log.")
    # nothing to say: the block kept, another mode, or no Mamba2 class (GDN, a model by hand)
    assert notes.prefill_checkpoint_text(replace(align, prefill_checkpoint_blocks=1),
                                            falcon) == ""
    assert notes.prefill_checkpoint_text(StrategyOptions(), falcon) == ""
    assert notes.prefill_checkpoint_text(
        align, load_preset("Qwen3-Next-80B-A3B").profile()) == ""
    assert notes.prefill_checkpoint_text(align, replace(falcon, architectures=())) == ""
    # a GDN model, on a GPU whose FlashInfer prefill keeps one (the caller knows the GPU)
    qwen = load_preset("Qwen3-Next-80B-A3B").profile()
    assert notes.prefill_checkpoint_text(align, qwen, gdn_gpu="H100 80GB") == (
        "Mamba cache mode align counts 2 state pages a request in each state group here, as "
        "vLLM 0.28 to 0.32 did. Since 0.33 vLLM keeps a prefill checkpoint page more for this "
        "model's GDN layers on the H100 80GB, whose prefill runs on FlashInfer there (3 a "
        "request): set \"Prefill checkpoint blocks\" to 1 to match a later log.")
    assert notes.prefill_checkpoint_text(align, falcon, gdn_gpu="H100 80GB").startswith(
        "Mamba cache mode align counts 2 state pages a request in each state group here, as "
        "vLLM 0.28 to 0.31 did")  # Mamba2's own rule, whatever the GPU


def test_a_kda_model_on_flashkda_says_what_vllm_keeps_and_where():
    # Kimi-K3's KDA keeps a prefill checkpoint block where FlashKDA runs its prefill (vLLM 0.31
    # and later), Glm5Next's too (0.32 and later); Kimi-Linear's (Triton alone) none
    kimi = load_preset("Kimi-Linear-48B-A3B").profile()
    k3 = replace(kimi, architectures=("KimiK3ForConditionalGeneration",))
    align = StrategyOptions(mamba_cache_mode="align")
    assert notes.prefill_checkpoint_text(align, k3, gdn_gpu="H100 80GB") == (
        "Mamba cache mode align counts 2 state pages a request in each state group here, as "
        "vLLM 0.28 to 0.30 did. Since 0.31 vLLM keeps a prefill checkpoint page more for this "
        "model's KDA layers on the H100 80GB, whose prefill runs on FlashKDA there (3 a "
        "request): set \"Prefill checkpoint blocks\" to 1 to match a later log.")
    assert notes.prefill_checkpoint_text(align, k3) == ""  # on a GPU without FlashKDA
    assert notes.prefill_checkpoint_text(align, kimi, gdn_gpu="H100 80GB") == ""
    # the button's help: the block on the H100, where it would be kept on the A100
    glm = replace(kimi, architectures=("Glm5NextForConditionalGeneration",))
    assert notes.recent_vllm_help({"prefill_checkpoint_blocks": 1}, glm, "H100 80GB",
                                  1).startswith(
        "Sets 1 prefill checkpoint block (vLLM 0.32 and later, for KDA layers, whose prefill "
        "runs on FlashKDA on the H100 80GB), to match")
    on_a100 = notes.recent_vllm_help({"prefill_checkpoint_blocks": 0}, glm, "A100 80GB", 0)
    assert on_a100.startswith("Sets no prefill checkpoint blocks (vLLM 0.34 keeps none for "
                              "this model's state layers on the A100 80GB), to match")
    assert (" vLLM 0.32 and later keep a prefill checkpoint block more for this model's KDA "
            "layers on an H100, H200 or B200 with heads of 128 in bfloat16, where their "
            "prefill runs on FlashKDA: not on the A100 80GB.") in on_a100
    # Kimi-Linear's KDA: no GPU keeps one, so nothing is said of where
    assert "FlashKDA" not in notes.recent_vllm_help({"mamba_cache_mode": "align"},
                                                    kimi, "H100 80GB", 0)



def test_a_kda_model_flashkda_never_takes_keeps_no_checkpoint_block_on_any_gpu():
    # FlashKDA takes heads of 128 in bfloat16 alone, on any GPU (vLLM 0.34:
    # kimi_k3/nvidia/kda.py 370-386 is_flashkda_supported, glm5next/common/kda.py 141-164):
    # Kimi-K3 in float16 (its KV cache's dtype under --kv-cache-dtype auto) or with heads of 64
    # prefills on Triton on every GPU, so vLLM keeps 0 checkpoint blocks with no GPU said too;
    # they read "not known where no GPU is said" and the button asked for the GPU
    kimi = load_preset("Kimi-Linear-48B-A3B")
    k3 = replace(kimi.profile(), architectures=("KimiK3ForConditionalGeneration",))
    half = replace(kimi.with_options(kv_dtype="float16").profile(),
                   architectures=k3.architectures)
    heads_64 = replace(k3, gdn_key_head_dims={64})
    ampere, none = (8, 0), StrategyOptions(mamba_cache_mode="none")

    def reads(profile: CacheProfile, arch: tuple[int, int]) -> tuple[str, str]:
        options = replace(none, gpu_compute_capability=arch)
        return (notes.arch_reader(profile, options, 40 << 30, 4_096),
                notes.arch_idle_why(profile, options, notes.GPU_READERS, 40 << 30, 4_096))

    # bfloat16 with heads of 128: the GPU decides (FlashKDA on SM 9.x, 10.x, 12.x)
    assert reads(k3, ampere) == (notes.ARCH_CHECKPOINT, (
        "vLLM and SGLang lay this model out on an SM 8.0 GPU as on a Hopper, the GPU the "
        f"figures take where none is said; {notes.ALIGN_CHECKPOINT_READS_GPU}"))
    for never in (half, heads_64):
        assert reads(never, ampere) == ("", (
            "vLLM and SGLang lay this model out on an SM 8.0 GPU as on a Hopper, the GPU the "
            "figures take where none is said"))
        assert reads(never, (9, 0))[0] == ""
    for never, because in (
            (half, "FlashKDA takes bfloat16 alone, and a float16 KV cache is a model run in "
                   "float16"),
            (heads_64, "FlashKDA takes heads of 128 alone, and this model's KDA heads are 64")):
        help_text = notes.recent_vllm_help({"prefill_checkpoint_blocks": 0}, never, "", 0)
        assert help_text.startswith(
            "Sets no prefill checkpoint blocks (vLLM 0.34 prefills this model's KDA layers on "
            f"Triton on every GPU, and keeps none for them: {because}), to match")
        assert "pick the GPU" not in help_text and "on the )" not in help_text

def test_flats_two_rows_say_why_they_read_the_same():
    # gpt-oss-20b on the H100's 76,968,728,985 B at P 16: both pay 24 layers x 16 x 2,048 =
    # 786,432 B a page id, 76,968,728,985 // 786,432 = 97,870 blocks; packed slabs keep 12
    # slot tensors (12 sliding and 12 full layers, the j-th of each group in one), one per
    # component keeps a tensor per layer, 24
    profile = load_preset("gpt-oss-20b").profile()
    results = [run_strategy(s, profile, budget_bytes=76_968_728_985, context_tokens=131_072)
               for s in ("flat", "per-component", "vllm")]
    assert 76_968_728_985 // (24 * 16 * 2048) == 97_870
    assert notes.same_flat_figures_text(results) == (
        "FlatKV packed slabs and FlatKV per component read the same: both pay every row of "
        "every layer a page id (786,432 B at P 16), so they hold the same 97,870 blocks. They "
        "differ in tensors: 12 slot tensors (the j-th layer of every group in one) against 24 "
        "tensors, one per component, which can also carry reserved bytes a block (a draft "
        "model's KV).")
    # reserved bytes a block (per component only) set them apart: nothing to explain
    reserved = StrategyOptions(reserved_bytes_per_block=4096)
    apart = [run_strategy(s, profile, budget_bytes=76_968_728_985, context_tokens=131_072,
                          options=reserved) for s in ("flat", "per-component")]
    assert apart[1].num_blocks == 76_968_728_985 // (786_432 + 4096) < 97_870
    assert notes.same_flat_figures_text(apart) == ""
    assert notes.same_flat_figures_text(results[1:]) == ""  # packed slabs not run

    # one group of one component a layer (Llama-3.1-8B: 32 layers x 16 x 4,096 B = 2,097,152 B
    # a page id, 76,968,728,985 // 2,097,152 = 36,701 blocks): the same 32 tensors too
    llama = load_preset("Llama-3.1-8B").profile()
    same = [run_strategy(s, llama, budget_bytes=76_968_728_985, context_tokens=131_072)
            for s in ("flat", "per-component")]
    assert 76_968_728_985 // (32 * 16 * 4096) == 36_701
    assert notes.same_flat_figures_text(same) == (
        "FlatKV packed slabs and FlatKV per component read the same: both pay every row of "
        "every layer a page id (2,097,152 B at P 16), so they hold the same 36,701 blocks, in "
        "the same 32 tensors (a slot holds one layer's rows, as a component does). Only one "
        "tensor per component can also carry reserved bytes a block (a draft model's KV).")


def test_where_the_budget_goes_is_a_row_a_category_and_a_column_a_layout():
    qwen = load_preset("Qwen3-Next-80B-A3B").profile()
    results = [run_strategy(name, qwen, budget_bytes=80 * 10**9, context_tokens=32_768)
               for name in ("flat", "vllm", "aliased")]
    rows = notes.budget_by_category_rows(results)
    # aliasing does not apply to a state hybrid: no column; every category of the others a row
    assert [list(row) for row in rows][0] == ["category (bytes)", "FlatKV packed slabs", "vLLM v1"]
    # history and state by use ("in use"), where Layout's bytes by tensor say "state rows"
    assert [row["category (bytes)"] for row in rows] == [
        {"kv_history": "kv history in use", "state": "state in use"}.get(
            cat, cat.replace("_", " ")) for cat, _ in results[0].breakdown]
    for r in results[:2]:  # each column sums to its layout's budget
        assert sum(row[notes.title_of(r)] for row in rows) == 80 * 10**9


def test_where_the_budget_goes_marks_sglangs_kv_dtype_under_its_short_title():
    # DeepSeek-V3.2 on the B200 preset (192,265,846,784 x 0.9 = 173,039,262,105 B): SGLang
    # keeps fp8_e4m3's raw 708 B a token a layer beside the model's bfloat16, 1,284 B; Compare's
    # bytes-by-category table names it as its other tables do (it read the short "SGLang")
    profile = load_preset("DeepSeek-V3.2").profile()
    options = StrategyOptions(gpu_compute_capability=(10, 0))
    results = [run_strategy(name, profile, budget_bytes=173_039_262_105, context_tokens=163_840,
                            options=options) for name in ("flat", "sglang")]
    marks = notes.kv_dtype_marks(results, profile, options)
    assert marks == {"sglang": "fp8_e4m3"}
    rows = notes.budget_by_category_rows(results, marks, notes.STRATEGY_SHORT_TITLES)
    assert list(rows[0]) == ["category (bytes)", "packed", "SGLang (fp8_e4m3 KV)"]
    # 61 x 708 B a token x 4,006,592 tokens of kv history, the table's own figure
    assert rows[0]["SGLang (fp8_e4m3 KV)"] == 61 * 708 * 4_006_592 == 173_036_695_296
    assert sum(row["SGLang (fp8_e4m3 KV)"] for row in rows) == 173_039_262_105
    # without marks, the page's short titles alone; the CLI's text and JSON keep their ids
    assert list(notes.budget_by_category_rows(results, {}, notes.STRATEGY_SHORT_TITLES)[0]) == [
        "category (bytes)", "packed", "SGLang"]


def test_least_budget_help_says_what_it_holds_and_why_sglang_steps_down():
    assert notes.least_budget_help(123_456, 4, 32_768, "flat", counted_above=True,
                                   steps_down=False) == (
        "123,456 B per rank: the least cache budget that holds 4 requests of 32,768 tokens, "
        "counted as the concurrency above.")
    sglang = notes.least_budget_help(123_456, 1, 32_768, "sglang", counted_above=False,
                                     steps_down=True)
    assert sglang.startswith("123,456 B per rank: the least cache budget from which every "
                             "larger one holds 1 request of 32,768 tokens, counted as this "
                             "layout's concurrency (SGLang's state pool gains a slot")
    assert notes.least_budget_help(1, 1, 2, "vllm", counted_above=True,
                                   steps_down=False).endswith(
        "so for one request it is counted.")
    # Qwen3-Next at TP 2, 20,000 tokens: 1,386,512,383 B holds 3 requests in SGLang, yet
    # the least budget from which every larger one does is 1,394,049,024 B (the README's case)
    from flatkv.app_model import profile_for
    qwen_tp2 = profile_for("Qwen3-Next-80B-A3B", None, 2)
    r = run_strategy("sglang", qwen_tp2, budget_bytes=1_386_512_383, context_tokens=20_000)
    # a slot: 36 x (24,576 + 16 x 128 x 128 x 4 B of float32 ssm) = 38,633,472 B; the state
    # pool floor(1,386,512,383 x 9 / 19) = 656,769,023 B is 1 B short of 17 of them: 16,
    # 15 for requests, 15 // 5 = 3 running; KV (1,386,512,383 - 16 x 38,633,472) // 12,288 =
    # 62,530 tokens, 3.13 requests of 20,000: the slots bind at 3
    assert (r.extras["state_slots"], r.extras["max_running_requests"], r.extras["kv_tokens"],
            r.concurrency) == (16, 3, 62_530, 3)
    assert notes.below_a_step_text(r, 1_394_049_024, 3) == (
        "This budget holds 3 requests too, but some budgets up to 1.30 GiB do not: SGLang's "
        "state pool gains a slot there and its KV memory loses that slot's bytes.")
    assert notes.below_a_step_text(r, 1_386_512_383, 3) == ""  # the need is this budget
    assert notes.below_a_step_text(r, 1_394_049_024, 4) == ""  # it does not hold 4


def _flat_vllm_sglang(profile, budget: int, context: int,
                      options: StrategyOptions) -> list[StrategyResult]:
    """Layout's three runs, ours (flat) first: the engines line sets the others beside it."""
    return [run_strategy(name, profile, budget_bytes=budget, context_tokens=context,
                         options=options) for name in ("flat", "vllm", "sglang")]


def test_layouts_engines_line_gives_our_figure_where_no_engine_starts():
    # MiniMax-M1 at 50,000 tokens in 79.65 GiB x 0.9 = 76,968,728,985 B: our blocks of 80 rows
    # of 2 MiB (P 512), 458 of them, a request ceil(50,000 / 512) = 98 full pages and one state
    # page: 458 / 99 = 4.63. vLLM with its hybrid manager off does not start on a state hybrid,
    # and SGLang serves no MiniMax-M1. The line still gives ours: Layout's workload note points
    # at "the 4.63 requests at the top of the page", which had nothing there.
    minimax = load_preset("MiniMax-M1").profile()
    budget, context = 76_968_728_985, 50_000
    options = StrategyOptions(vllm_hybrid_manager=False)
    ours, *engines = _flat_vllm_sglang(minimax, budget, context, options)
    assert budget // (80 * 2**21) == 458 and f"{458 / (98 + 1):.2f}" == "4.63"
    assert not any(r.applies for r in engines)
    assert notes.engines_beside_text(ours, engines, minimax) == (
        "At 50,000 tokens per request, this plan holds 4.63 requests; in the same budget "
        "vLLM v1 does not start, SGLang does not serve this model. Compare shows where each "
        "layout's bytes go and why a layout does not apply.")


def test_layouts_engines_line_says_sglangs_b200_dsa_bytes_are_not_ours():
    # DeepSeek-V3.2 on a B200 (173,039,262,105 B a rank, 163,840 tokens): our plan keeps the
    # model's bfloat16, 61 x 1,284 B a token, 138,079 blocks of 16, 13.48 requests; SGLang its
    # fp8_e4m3 raw layout, 61 x 708 B, 62,603 pages of 64, 24.45. The 1.81x is the bytes, not
    # the paging: the line says so beside SGLang's figure (on a Hopper, nothing more)
    v32 = load_preset("DeepSeek-V3.2").profile()
    budget, context = 173_039_262_105, 163_840
    blackwell = StrategyOptions(gpu_compute_capability=(10, 0))
    ours, *engines = _flat_vllm_sglang(v32, budget, context, blackwell)
    assert budget // (61 * 708) // 64 == 62_603 and f"{62_603 / 2_560:.2f}" == "24.45"
    assert notes.engines_beside_text(ours, engines, v32, blackwell) == (
        "At 163,840 tokens per request, this plan holds 13.48 requests; in the same budget "
        "vLLM v1 13.48 (just under 1.00x ours), SGLang 24.45 (1.81x ours, in fp8_e4m3 at 708 "
        "B a token a layer where ours keeps the model's bfloat16 at 1,284: SGLang's own on a "
        "Blackwell GPU). Compare shows where each layout's bytes go.")
    ours, *engines = _flat_vllm_sglang(v32, budget, context, StrategyOptions())
    assert "fp8_e4m3" not in notes.engines_beside_text(ours, engines, v32, StrategyOptions())
    # a float32 model on a Hopper (76,968,728,985 B): ours keeps float32, 61 x 2,436 B a token,
    # 517,973 tokens, 32,373 blocks of 16, 3.16 requests of 163,840; SGLang keeps bfloat16
    # whatever the model's dtype, 61 x 1,284 B, 15,354 pages of 64, 5.99 (to the hundredth
    # below, as the line gives it): the 1.90x is the bytes, and the line says so; a float16
    # model's 1,284 B are SGLang's bytes too: nothing
    hopper, budget = StrategyOptions(), 76_968_728_985
    f32 = load_preset("DeepSeek-V3.2").with_options(kv_dtype="float32").profile()
    assert budget // (61 * 2_436) // 16 == 32_373 and f"{32_373 / 10_240:.2f}" == "3.16"
    assert budget // (61 * 1_284) // 64 == 15_354 and 15_354 * 100 // 2_560 == 599
    assert f"{15_354 / 2_560 / (32_373 / 10_240):.2f}" == "1.90"
    ours, *engines = _flat_vllm_sglang(f32, budget, context, hopper)
    assert ("SGLang 5.99 (1.90x ours, in bfloat16 at 1,284 B a token a layer where ours keeps "
            "the model's float32 at 2,436: SGLang's own whatever the model's dtype)"
            ) in notes.engines_beside_text(ours, engines, f32, hopper)
    f16 = load_preset("DeepSeek-V3.2").with_options(kv_dtype="float16").profile()
    ours, *engines = _flat_vllm_sglang(f16, budget, context, hopper)
    assert "SGLang's own" not in notes.engines_beside_text(ours, engines, f16, hopper)



def test_layouts_gap_sentence_names_dead_weight_by_hand():
    # Qwen3-Next-80B-A3B at Layout's defaults: 79.65 GiB x 0.9 = 76,968,728,985 B, 262,144
    # tokens. A state row is conv 49,152 + ssm 524,288 x 2 = 1,097,728 B; P = 544, the first
    # multiple of 16 whose KV row (2,048 B a token) covers it. A block is 12 KV rows of
    # 1,114,112 B and 36 state rows: 13,369,344 + 39,518,208 = 52,887,552 B, 1,455 of them. A
    # request needs ceil(262,144 / 544) = 482 full pages and 1 state page: of the 1,455 page
    # ids 3 are state's (1,455 / 483 = 3.01), 1,452 full attention's. Dead weight: the 36
    # state rows at each full page id and the 12 KV rows at each state one, 1,452 x 39,518,208
    # + 3 x 13,369,344 = 57,420,546,048 B = 53.48 GiB, 74.60% of the budget; vLLM v1's groups
    # keep none, and hold 11.87 requests to our 3.01
    next80 = load_preset("Qwen3-Next-80B-A3B").profile()
    budget, context = 76_968_728_985, 262_144
    state_row, kv_row = 49_152 + 524_288 * 2, 2_048 * 544
    assert (state_row, -(-state_row // 2_048 // 16) * 16) == (1_097_728, 544)
    block = 12 * kv_row + 36 * state_row
    assert (block, budget // block, -(-context // 544)) == (52_887_552, 1_455, 482)
    dead = 1_452 * 36 * state_row + 3 * 12 * kv_row
    assert (dead, f"{dead / 2**30:.2f}", f"{100 * dead / budget:.2f}") == (
        57_420_546_048, "53.48", "74.60")
    ours, vllm, sglang = _flat_vllm_sglang(next80, budget, context, StrategyOptions())
    assert (ours.num_blocks, ours.block_bytes) == (1_455, block)
    mine, theirs = dict(ours.breakdown), dict(vllm.breakdown)
    assert (mine["dead_weight"], theirs["dead_weight"]) == (dead, 0)
    # the gap: the share of the budget vLLM's layout saves on our requests. vLLM's 5,757 page
    # ids of 12 x 1,114,112 B, 3 state + 482 full attention a request: 1 - (1,455 / 483) /
    # (5,757 / 485) = 74.62%; dead weight, 74.60%, is most of it (all but 0.03%)
    assert (ours.concurrency, vllm.concurrency) == (Fraction(1_455, 483), Fraction(5_757, 485))
    assert 76_968_728_985 // (12 * 1_114_112) == 5_757
    gap = budget * (1 - Fraction(1_455 * 485, 483 * 5_757))
    assert f"{float(gap / budget):.2%}" == "74.62%"
    assert notes.gap_category(ours, vllm) == ("dead_weight", dead / gap)
    assert Fraction(1, 2) < dead / gap < 1
    assert notes.gap_text(ours, [vllm, sglang]) == (
        "Most of the gap is dead weight: 53.48 GiB in this plan (74.60% of the budget), "
        "none in vLLM v1's.")
    # the line ends with it; SGLang (6.30) holds fewer than vLLM (11.87): the gap is vLLM's
    assert notes.engines_beside_text(ours, [vllm, sglang], next80).endswith(
        "(2.09x ours). Compare shows where each layout's bytes go. Most of the gap is dead "
        "weight: 53.48 GiB in this plan (74.60% of the budget), none in vLLM v1's.")
    # where ours holds as many or more, nothing: vLLM beside packed slabs as "ours"
    assert notes.gap_category(vllm, ours) is None and notes.gap_text(vllm, [ours]) == ""


def test_layouts_gap_sentence_says_less_than_most_and_nothing_for_a_remainder():
    next80 = load_preset("Qwen3-Next-80B-A3B").profile()
    ours, vllm, _ = _flat_vllm_sglang(next80, 76_968_728_985, 262_144, StrategyOptions())
    zero = {c: 0 for c, _ in ours.breakdown}

    def spending(result, **nbytes):  # a budget of 100 B, split so
        assert sum(nbytes.values()) == 100
        return replace(result, budget_bytes=100, breakdown=tuple({**zero, **nbytes}.items()))

    # dead weight the largest of the 24 bytes ours keeps empty beyond the engine's, 10 B of
    # a gap of 100 x (1 - (1,455 / 483) / (5,757 / 485)) = 74.62 B: not most
    mixed = spending(ours, kv_history=76, dead_weight=10, row_padding=8, unused=6)
    engine = spending(vllm, kv_history=100)
    assert notes.gap_category(mixed, engine) == (
        "dead_weight", 10 / (100 * (1 - Fraction(1_455 * 485, 483 * 5_757))))
    assert notes.gap_text(mixed, [engine]) == (
        "The largest part of the gap is dead weight: 10 B in this plan (10.00% of the budget), "
        "none in vLLM v1's.")
    # the engine leaves as much empty as ours: its lead is not in such bytes
    assert notes.gap_category(mixed, spending(vllm, kv_history=76, idle_pool=24)) is None
    # DeepSeek-V3: SGLang 1.0000009x ours (6.69 each), 86.40 KiB unused to its 17.77 KiB; a
    # multiple under 1.01 to two decimals is no gap to explain
    v3 = load_preset("DeepSeek-V3").profile()
    ours, _, sglang = _flat_vllm_sglang(v3, 76_968_728_985, 163_840, StrategyOptions())
    assert ours.concurrency < sglang.concurrency < Fraction(201, 200) * ours.concurrency
    assert notes.gap_text(ours, [sglang]) == ""
    # a category named as bytes where its label is no noun: Llama-3.1-8B at TP 2 (32 layers x
    # 4 KV heads x 128 x 2 x 2 B = 65,536 B a token), one tensor per component at P 256:
    # blocks of 256 x 65,536 = 16,777,216 B, 1,189,952,295 // that = 70, 15,547,175 B unused
    # (14.83 MiB, 1.31%), 70 x 256 / 8,192 = 2.19 requests; SGLang's page 1: 18,157 tokens,
    # 15,143 B unused (14.79 KiB), 18,157 / 8,192 = 2.22 (1.01x)
    llama, budget = profile_for("Llama-3.1-8B", None, 2), 1_189_952_295
    assert (budget // (256 * 65_536), budget - 70 * 256 * 65_536) == (70, 15_547_175)
    assert (budget // 65_536, budget - 18_157 * 65_536) == (18_157, 15_143)
    options = StrategyOptions(block_size=256)
    ours, sglang = (run_strategy(s, llama, budget_bytes=budget, context_tokens=8192,
                                 options=options) for s in ("per-component", "sglang"))
    assert (ours.concurrency, sglang.concurrency) == (Fraction(70 * 256, 8192),
                                                      Fraction(18_157, 8192))
    assert notes.gap_text(ours, [sglang]) == (
        "Most of the gap is unused bytes: 14.83 MiB in this plan (1.31% of the budget), "
        "14.79 KiB in SGLang's.")

def test_layouts_gap_sentence_says_where_dead_weight_is_more_than_the_gap():
    # Llama-4-Scout (12 full + 36 chunked layers of 4,096 B a token, chunk 8,192) in Layout's
    # 76,968,728,985 B: our page ids of 48 rows of 16 x 4,096 B = 3,145,728 B, 24,467 of them;
    # a request needs 1,024 chunked pages (ceil(min(8,192 + 8,192, L) / 16)) and L / 16 full.
    scout = load_preset("Llama-4-Scout-17B-16E").profile()
    budget = 76_968_728_985
    assert budget // (48 * 16 * 4_096) == 24_467
    # at 262,144 tokens vLLM v1 holds the most: 12-layer pages of 16 x 4,096 B, 76,968,728,985
    # // 65,536 // 12 = 97,870 page ids, 3 x 1,024 + 16,384 a request, to our 24,467 / (1,024
    # + 16,384). Of our page ids 1,439 are chunked attention's and 23,028 full attention's,
    # each with the other group's rows dead: 23,028 x 36 + 1,439 x 12 rows of 65,536 B =
    # 55,461,543,936 B, 72.06% of the budget; the gap is 1 - (24,467 / 17,408) / (97,870 /
    # 19,456) = 72.06% too: most of the gap is dead weight (all of it but 0.003%)
    ours, vllm, sglang = _flat_vllm_sglang(scout, budget, 262_144, StrategyOptions())
    assert (ours.concurrency, vllm.concurrency) == (Fraction(24_467, 17_408),
                                                    Fraction(97_870, 19_456))
    dead = (23_028 * 36 + 1_439 * 12) * 65_536
    assert dict(ours.breakdown)["dead_weight"] == dead == 55_461_543_936
    gap = budget * (1 - Fraction(24_467 * 19_456, 17_408 * 97_870))
    assert (f"{dead / budget:.2%}", f"{float(gap / budget):.2%}") == ("72.06%", "72.06%")
    assert notes.gap_category(ours, vllm) == ("dead_weight", dead / gap)
    assert notes.gap_text(ours, [vllm, sglang]) == (
        "Most of the gap is dead weight: 51.65 GiB in this plan (72.06% of the budget), none "
        "in vLLM v1's.")
    # at its own 10,485,760 tokens (the app's 10M) vLLM does not start and SGLang holds 1.18x
    # ours: its full pool of budget // (4,096 x (12 + 0.8 x 36)) = 460,568 tokens, 0.04 of a
    # request, to our 24,467 / (1,024 + 655,360) = 0.04. Our page ids split 24,429 full
    # attention's (24,467 x 655,360 / 656,384 = 24,428.83, the larger remainder rounded up)
    # and 38 chunked: dead weight (24,429 x 36 + 38 x 12) x 65,536 = 57,665,126,400 B (74.92%
    # of the budget), yet SGLang fits our requests in (24,467 / 656,384) / (460,568 /
    # 10,485,760) = 84.87% of it: the gap is 15.13%, a fifth of the dead weight. SGLang's
    # sliding pool, 0.8 x 460,568 = 368,454 tokens of 36 x 4,096 B, is reserved whole (no
    # request runs) where a request keeps 16,384 of its tokens. "Most of the gap is dead
    # weight: 53.70 GiB" read as SGLang giving those bytes to requests
    ours, vllm, sglang = _flat_vllm_sglang(scout, budget, 10_485_760, StrategyOptions())
    assert not vllm.applies
    assert (ours.concurrency, sglang.concurrency) == (Fraction(24_467, 656_384),
                                                      Fraction(460_568, 10_485_760))
    assert budget * 5 // (4_096 * (12 * 5 + 4 * 36)) == 460_568
    dead = (24_429 * 36 + 38 * 12) * 65_536
    assert dict(ours.breakdown)["dead_weight"] == dead == 57_665_126_400
    fits = Fraction(24_467 * 10_485_760, 656_384 * 460_568)
    assert (f"{dead / budget:.2%}", f"{float(fits):.3%}", f"{float(1 - fits):.2%}") == (
        "74.92%", "84.865%", "15.13%")
    assert notes.gap_category(ours, sglang) == ("dead_weight", dead / (budget * (1 - fits)))
    assert round(dead / (budget * (1 - fits)), 2) == Fraction(99, 20)  # 4.95x the gap
    assert notes.engines_beside_text(ours, [vllm, sglang], scout).endswith(
        "SGLang 0.04 (1.18x ours). Compare shows where each layout's bytes go and why a "
        "layout does not apply. Dead weight is more than the whole gap: 53.70 GiB in this "
        "plan (74.92% of the budget), none in SGLang's; SGLang fits this plan's requests in "
        "84.87% of the budget, a gap of 15.13%.")
    # unused bytes, a plural noun, are more than a gap they exceed: ours keeps 50 B empty to
    # the engine's none where the engine fits our requests in 80% of the budget (a gap of 20 B)
    zero = {c: 0 for c, _ in ours.breakdown}
    empty = replace(ours, budget_bytes=100, concurrency_numerator=4, concurrency_denominator=1,
                    breakdown=tuple({**zero, "kv_history": 50, "unused": 50}.items()))
    full = replace(sglang, budget_bytes=100, concurrency_numerator=5, concurrency_denominator=1,
                   breakdown=tuple({**zero, "kv_history": 100}.items()))
    assert notes.gap_text(empty, [full]) == (
        "Unused bytes are more than the whole gap: 50 B in this plan (50.00% of the budget), "
        "none in SGLang's; SGLang fits this plan's requests in 80.00% of the budget, a gap of "
        "20.00%.")


def test_attention_dp_says_sglangs_figures_are_one_groups():
    from flatkv.presets import load_preset
    from flatkv.strategies import StrategyOptions, run_strategy

    # DeepSeek-V3 at TP 8 in 40 GiB: an MLA token is (512 + 64) x 2 B x 61 layers = 70,272 B
    # on every rank, so a group's pool is 42,949,672,960 // 70,272 = 611,191 tokens, 18.65
    # requests of 32,768; its 8 groups run requests of their own: 8 x 611,191 / 32,768 =
    # 149.22 in all
    deepseek = load_preset("DeepSeek-V3").with_options(tp=8).profile()

    def sglang(d: int):
        return run_strategy("sglang", deepseek, budget_bytes=40 << 30, context_tokens=32_768,
                            options=StrategyOptions(sglang_attn_dp_size=d))

    grouped = sglang(8)
    assert (grouped.capacity_tokens, grouped.extras["attention_dp_groups"]) == (
        (40 << 30) // 70_272, 8) == (611_191, 8)
    assert f"{8 * 611_191 / 32_768:.2f}" == "149.22"
    assert notes.attention_dp_text([grouped]) == (
        "SGLang's figures are one of its 8 attention-DP groups' (a rank's pools, as it logs "
        "them): each group runs requests of its own, so the 8 hold 8 x 611,191 / 32,768 = "
        "149.22 requests of 32,768 tokens at once in all; the other layouts' are the whole "
        "TP's, whose ranks share every request.")
    # without attention DP, or a layout that is not SGLang's: nothing to say
    assert notes.attention_dp_text([sglang(1)]) == ""
    assert "attention_dp_groups" not in sglang(1).extras


def test_a_track_interval_that_changes_no_figure_says_so_on_compare():
    # Qwen3-Next at SGLang's page size 1: its extra buffer's only checks on the interval are
    # the page dividing it (1 divides every one) and D tokens a step within it (none
    # drafted), and it sizes no pool or slot, so 512 leaves every figure as 256 does
    from flatkv.engine_options import acting_engine_options

    qwen = load_preset("Qwen3-Next-80B-A3B").profile()

    def text(**options) -> str:
        at = StrategyOptions(**options)
        return notes.idle_values_text(at, qwen, acting_engine_options(qwen, at))

    assert text(sglang_mamba_track_interval=512) == (
        "SGLang mamba track interval 512 changes no figure here: SGLang sizes no pool or slot "
        "by it and only checks it at start-up (the page size divides it; it is at least the "
        "tokens verified a step and a Mamba2 model's chunk), which it passes here as SGLang's "
        "default of 256 does.")
    # at 256 nothing is set; at pages of 512 the interval 512 is what lets SGLang start
    # (256 is refused), so it acts; with the radix cache off the option is not offered at all
    assert text() == ""
    assert text(sglang_mamba_track_interval=512, sglang_page_size=512) == ""
    assert text(sglang_mamba_track_interval=512, sglang_disable_radix_cache=True) == ""


def test_a_capacity_says_beside_a_requests_state_only_where_the_model_has_state():
    # gpt-oss and DeepSeek-V3 have no state layers: their capacity was "the history the pool
    # holds beside one request's state", a state they do not have; Qwen3-Next's has 36 GDN
    # layers of it. One wording, used by Compare's note and table, Budget's and Layout's helps.
    oss, dsv3 = load_preset("gpt-oss-120b").profile(), load_preset("DeepSeek-V3").profile()
    qwen = load_preset("Qwen3-Next-80B-A3B").profile()
    assert (oss.has_state, dsv3.has_state, qwen.has_state) == (False, False, True)
    assert notes.capacity_counts(False) == "the history the pool holds"
    assert notes.capacity_counts(True) == "the history the pool holds beside one request's state"
    for stateless in (oss, dsv3):
        assert notes.how_to_read_text(stateless, 0).startswith(
            "Capacity: the history the pool holds, counted the same way")
    assert notes.headline_help(False)["capacity (tokens)"] == (
        "Tokens, this tool's count, alike for every layout: the history the pool holds (every "
        "attention group N pages of P tokens); SGLang's full token pool. Not an engine's log "
        "line: see engine log.")
    assert notes.how_to_read_text(qwen, 0).startswith(
        "Capacity: the history the pool holds beside one request's state, counted")
    assert notes.headline_help(True)["capacity (tokens)"] == (
        "Tokens, this tool's count, alike for every layout: the history the pool holds beside "
        "one request's state (every attention group N pages of P tokens, each state group one "
        "request's state pages); concurrency charges every request its own state, so it can "
        "read under capacity over the context; SGLang's full token pool. Not an engine's log "
        "line: see engine log.")
    # windows counted as full history: the tag Budget's and Layout's capacity carry
    assert notes.headline_help(False, windows=True)["capacity (tokens)"].endswith(
        "see engine log. Sliding and chunked layers: windows counted as full history (the note "
        "under the table).")


def test_concurrency_reads_under_capacity_over_context_where_each_request_pays_its_state():
    # Qwen3-Next in 102,020,087,808 B = 1,929 blocks of 52,887,552 B at P 544: capacity sets
    # one request's state page aside, 1,928 x 544 = 1,048,832 tokens >= 4 x 262,144; a request
    # of 262,144 tokens takes ceil(262,144 / 544) = 482 full pages and its own state page, so
    # concurrency is 1,929 / 483 = 3.99, not 4. The capacity's help says why.
    qwen = load_preset("Qwen3-Next-80B-A3B").profile()
    flat = run_strategy("flat", qwen, budget_bytes=102_020_087_808, context_tokens=262_144)
    assert (flat.block_size, flat.block_bytes, flat.num_blocks) == (544, 52_887_552, 1_929)
    assert 1_929 * 52_887_552 == 102_020_087_808
    assert flat.capacity_tokens == (1_929 - 1) * 544 == 1_048_832 >= 4 * 262_144
    assert flat.max_concurrency == pytest.approx(1_929 / (-(-262_144 // 544) + 1))
    assert f"{flat.max_concurrency:.2f}" == "3.99"
    assert ("concurrency charges every request its own state, so it can read under capacity "
            "over the context") in notes.headline_help(True)["capacity (tokens)"]
    assert notes.state_once_clause(False) == ""


def test_arch_idle_text_runs_no_layout_again_that_the_page_ran(monkeypatch):
    # Llama-3.1-8B in 40 GiB at 4,096 tokens told ada: the line asks whether the architecture
    # moves a figure of vLLM's or SGLang's, which ran each twice (at ada and at no GPU said);
    # given the page's own results at ada, each runs once, at no GPU said, and the line reads
    # the same
    from flatkv.strategies import compare

    profile = load_preset("Llama-3.1-8B").profile()
    ada = StrategyOptions(gpu_compute_capability=(8, 9))
    ran: list[str] = []

    def counted(name, *args, **kwargs):
        ran.append(name)
        return run_strategy(name, *args, **kwargs)

    monkeypatch.setattr(notes, "run_strategy", counted)
    line = ("GPU architecture ada (SM 8.9: L40S, RTX 4090) changes no figure here: vLLM and "
            "SGLang lay this model out on an SM 8.9 GPU as on a Hopper, the GPU the figures "
            "take where none is said.")
    assert notes.arch_idle_text("ada", profile, ada, 40 << 30, 4_096) == line
    assert sorted(ran) == ["sglang", "sglang", "vllm", "vllm"]
    ran.clear()
    page = compare(profile, budget_bytes=40 << 30, context_tokens=4_096, options=ada)
    assert notes.arch_idle_text("ada", profile, ada, 40 << 30, 4_096, results=page) == line
    assert sorted(ran) == ["sglang", "vllm"]


def test_arch_reader_reads_a_refusal_that_moves_with_the_gpu():
    # DeepSeek-V3.2 in 1 GiB at its 163,840 tokens: vLLM refuses on a Hopper (one request
    # needs more pages than 1 GiB holds) and on SM 8.0 (no sparse MLA
    # backend); no figure is set either way, but the refusal shown in their place differs,
    # so Compare says nothing of the ampere changing no figure
    profile = load_preset("DeepSeek-V3.2").profile()
    ampere = StrategyOptions(gpu_compute_capability=(8, 0))
    hopper = run_strategy("vllm", profile, budget_bytes=2**30, context_tokens=163_840)
    on_sm80 = run_strategy("vllm", profile, budget_bytes=2**30, context_tokens=163_840,
                           options=ampere)
    assert not hopper.applies and not on_sm80.applies
    assert "on SM 8.0 (A100)" in on_sm80.reason and "on SM 8.0" not in hopper.reason
    assert notes.arch_reader(profile, ampere, 2**30, 163_840) == notes.ARCH_FIGURES
    assert notes.arch_idle_text("ampere", profile, ampere, 2**30, 163_840) == ""


def test_one_rule_says_what_reads_the_architecture_for_the_offer_and_the_idle_note():
    # strategy_notes.arch_reader, the rule both arch_matters (a log's offer keeps the preset's
    # architecture) and arch_idle_why (the note that it changes no figure) read: the note is
    # silent where a figure moves (DeepSeek-V3.2 on SM 8.0: vLLM refuses) or where the
    # checkpoint note reads the GPU (Qwen3-Next's GDN in align); it speaks beside a note alone
    # (gpt-oss's SGLang page on a Blackwell) and, in mode none, beside align's checkpoint
    # block, which it names: that was "the figures take a Hopper where no GPU is said" alone,
    # while arch_matters said False there and a log's offer off an H100 dropped the Hopper
    def read(model: str, arch: tuple[int, int], mode: str = "none") -> tuple[str, bool, str]:
        profile = load_preset(model).profile()
        options = StrategyOptions(gpu_compute_capability=arch, mamba_cache_mode=mode)
        args = (profile, options, 40 << 30, 4_096)
        return (notes.arch_reader(*args), notes.arch_matters(*args),
                notes.arch_idle_why(profile, options, notes.GPU_READERS, 40 << 30, 4_096))

    hopper, ampere, ada, blackwell = (9, 0), (8, 0), (8, 9), (10, 0)
    assert read("Llama-3.1-8B", ada) == ("", False, (
        "vLLM and SGLang lay this model out on an SM 8.9 GPU as on a Hopper, the GPU the "
        "figures take where none is said"))
    assert read("DeepSeek-V3.2", ampere) == (notes.ARCH_FIGURES, True, "")
    assert read("Qwen3-Next-80B-A3B", hopper, "align") == (notes.ARCH_CHECKPOINT, True, "")
    assert read("Qwen3-Next-80B-A3B", hopper) == (notes.ARCH_CHECKPOINT, True, (
        "the figures take a Hopper where no GPU is said; "
        f"{notes.ALIGN_CHECKPOINT_READS_GPU}"))
    reader, matters, why = read("gpt-oss-120b", blackwell)
    assert (reader, matters) == (notes.ARCH_NOTE, True)
    assert why.startswith("SGLang stores this model's cache on a Blackwell GPU as on a Hopper")
    # Kimi-Linear's KDA prefills on Triton on any GPU: no checkpoint block, nothing reads it
    assert read("Kimi-Linear-48B-A3B", hopper)[:2] == ("", False)
