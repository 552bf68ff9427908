"""The least budget a layout needs for R requests (flatkv.sizing), and the GPU memory for it
(flatkv.budget.gpu_bytes_for): figures derived by hand, and the bisection checked against the
runs it inverts."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategy_profiles import llama4_scout, pure_mamba

from flatkv import sizing
from flatkv.app_model import model_names, profile_for
from flatkv.budget import cache_budget, gpu_bytes_for
from flatkv.profile import CacheProfile
from flatkv.sizing import (
    budget_for_sglang_token_pool,
    context_candidates,
    context_curves,
    holds_requests,
    least_budget_for_requests,
    longest_context_held,
)
from flatkv.strategies import STRATEGIES, StrategyOptions, run_strategy
from flatkv.strategies.sglang import budget_of_next_slot
from flatkv.workload import longest_fitting

GiB = 2**30


def holds(strategy, profile, budget, requests, context) -> bool:
    r = run_strategy(strategy, profile, budget_bytes=budget, context_tokens=context)
    return r.applies and r.concurrency >= requests


def test_llama_needs_its_requests_tokens_of_kv_exactly():
    # Llama-3.1-8B: 32 layers x 8 KV heads x (128 + 128) x 2 B = 131,072 B a token; 8 requests
    # of 131,072 tokens are 8 x 2**17 x 2**17 B = 128 GiB, in vLLM's blocks and in ours
    llama = profile_for("Llama-3.1-8B", None, 1)
    for strategy in ("vllm", "flat"):
        need = least_budget_for_requests(strategy, llama, requests=8, context_tokens=131_072)
        assert need == 8 * 131_072 * 131_072 == 128 * GiB
        assert not holds(strategy, llama, need - 1, 8, 131_072)


def test_the_other_layouts_need_their_own_pages_exactly():
    # Llama-3.1-8B's 8 requests of 131,072 tokens are 8 x 8,192 blocks of 16 tokens x 131,072
    # B = 2 MiB: one tensor per component needs no more; two-level pages keep one null parent
    # page (a parent of one child block here) beside them
    llama = profile_for("Llama-3.1-8B", None, 1)
    need = least_budget_for_requests("per-component", llama, requests=8, context_tokens=131_072)
    assert need == 8 * 8_192 * 2**21 == 128 * GiB
    need = least_budget_for_requests("lcm", llama, requests=8, context_tokens=131_072)
    assert need == (8 * 8_192 + 1) * 2**21 == 137_441_050_624
    assert not holds("lcm", llama, need - 1, 8, 131_072)
    # gpt-oss-20b under slab aliasing: a block is one group's rows, 12 layers x 16 x 2,048 B =
    # 393,216 B; a request of 131,072 tokens holds 8,192 full pages and ceil((128 - 1 +
    # 8,192) / 16) + 1 = 521 sliding ones (vLLM's count of a window's pages, SPEC 3.1)
    gpt = profile_for("gpt-oss-20b", None, 1)
    need = least_budget_for_requests("aliased", gpt, requests=2, context_tokens=131_072)
    assert -(-(128 - 1 + 8_192) // 16) + 1 == 521
    assert need == 2 * (8_192 + 521) * 393_216 == 6_852_182_016
    assert not holds("aliased", gpt, need - 1, 2, 131_072)


def test_vllm_sizes_sliding_layers_of_their_own_bytes_by_their_scaled_blocks():
    # Gemma 4's shape (tests/test_strategies.py): a block is 10 pages of 262,144 B; a request
    # of 131,072 tokens is 5 x 577 sliding pages and 4,096 full ones of 32 tokens: 6,981
    gemma = CacheProfile(layer_types=(["sliding_attention"] * 5 + ["full_attention"]) * 10,
                         kv_bytes_per_slot=8_192, sliding_kv_bytes_per_slot=16_384,
                         sliding_window=1_024)
    need = least_budget_for_requests("vllm", gemma, requests=3, context_tokens=131_072)
    assert need == 3 * (5 * 577 + 4_096) * 10 * 262_144 == 54_900_817_920
    assert holds("vllm", gemma, need, 3, 131_072)
    assert not holds("vllm", gemma, need - 1, 3, 131_072)


def test_scout_under_vllm_needs_whole_blocks_of_its_groups():
    # vLLM: 4 groups of 12 layers, a block of 16 tokens x 4,096 B x 12 layers = 786,432 B; a
    # request of 131,072 tokens holds 8,192 pages in the full group and min(8,192 + 8,192, L)
    # / 16 = 1,024 in each of 3 chunked groups: 11,264 blocks, so 8 requests need 90,112
    need = least_budget_for_requests("vllm", llama4_scout(), requests=8,
                                     context_tokens=131_072)
    assert need == 8 * (8_192 + 3 * 1_024) * 786_432 == 70_866_960_384
    assert not holds("vllm", llama4_scout(), need - 1, 8, 131_072)


def test_sglang_gives_the_budget_from_which_every_larger_one_holds():
    # Qwen3-Next at TP 2 under SGLang, requests of 20,000 tokens: its state pool is
    # budget x 0.9 / 1.9 in slots of 38,633,472 B (float32 ssm), the KV memory the rest, at
    # 12 x 1,024 = 12,288 B a token. The 17th slot starts at ceil(17 x 38,633,472 x 19 / 9) =
    # 1,386,512,384 B, where the KV memory falls from 768,376,831 B (62,530 tokens, 3.13
    # requests) to 729,743,360 B (59,386 tokens, 2.97): a byte more holds fewer requests
    qwen = profile_for("Qwen3-Next-80B-A3B", None, 2)
    step = 1_386_512_384
    assert budget_of_next_slot(run_strategy("sglang", qwen, budget_bytes=step - 1), qwen) == step
    assert holds("sglang", qwen, step - 1, 3, 20_000)
    assert not holds("sglang", qwen, step, 3, 20_000)
    # from 17 x 38,633,472 + 60,000 x 12,288 B on, every budget holds 3 (the 18th slot's KV
    # memory, 772,669,440 B = 62,880 tokens, is more than 60,000 tokens)
    need = least_budget_for_requests("sglang", qwen, requests=3, context_tokens=20_000)
    assert need == 17 * 38_633_472 + 60_000 * 12_288 == 1_394_049_024
    assert not holds("sglang", qwen, need - 1, 3, 20_000)
    # and on either side of every later slot step (the k-th slot starts at
    # ceil(k x 38,633,472 x 19 / 9)), checked here apart from the implementation's own step
    for k in range(18, 60):
        start = -(-k * 38_633_472 * 19 // 9)
        assert holds("sglang", qwen, start - 1, 3, 20_000)
        assert holds("sglang", qwen, start, 3, 20_000)


def test_the_budget_of_an_sglang_logs_token_pool():
    # SGLang logs its pools, not a budget. Llama-3.1-8B: 32 layers x 2 x 8 heads x 128 x 2 B =
    # 131,072 B a token, so 300,000 tokens from 39,321,600,000 B; at pages of 64 a pool is a
    # whole number of pages: 300,001 tokens none, 300,032 (4,688 pages) from 300,032 x 131,072
    llama = profile_for("Llama-3.1-8B", None, 1)
    assert 300_000 * 131_072 == 39_321_600_000
    assert budget_for_sglang_token_pool(llama, tokens=300_000, context_tokens=8_192) == (
        39_321_600_000)
    assert run_strategy("sglang", llama, budget_bytes=39_321_600_000 - 1).logged_tokens == (
        299_999)
    paged = StrategyOptions(sglang_page_size=64)
    assert budget_for_sglang_token_pool(llama, tokens=300_001, context_tokens=8_192,
                                        options=paged) is None
    assert budget_for_sglang_token_pool(llama, tokens=300_032, context_tokens=8_192,
                                        options=paged) == 300_032 * 131_072
    # Qwen3-Next at TP 2 (test_sglang_gives_the_budget_from_which_every_larger_one_holds):
    # state slots of 38,633,472 B, the k-th from ceil(k x 38,633,472 x 19 / 9), 12,288 B a
    # token. 60,000 tokens come twice: with 16 slots (15 for requests, max_mamba_cache_size,
    # beside the padding slot) from 16 x 38,633,472 + 60,000 x 12,288 = 1,355,415,552 B (the
    # 16th slot starts at 1,304,952,832, the 17th at 1,386,512,384), and with 17 (16) from
    # 1,394,049,024; with 18 the pool starts past them (62,880 tokens at the 18th's start)
    qwen = profile_for("Qwen3-Next-80B-A3B", None, 2)
    assert (-(-16 * 38_633_472 * 19 // 9), -(-17 * 38_633_472 * 19 // 9)) == (
        1_304_952_832, 1_386_512_384)
    assert (-(-18 * 38_633_472 * 19 // 9) - 18 * 38_633_472) // 12_288 == 62_880
    found = {slots: budget_for_sglang_token_pool(qwen, tokens=60_000, context_tokens=20_000,
                                                 state_slots=slots)
             for slots in (None, 15, 16, 17)}
    assert found == {None: 16 * 38_633_472 + 60_000 * 12_288, 15: 1_355_415_552,
                     16: 17 * 38_633_472 + 60_000 * 12_288, 17: None}
    assert found[16] == 1_394_049_024
    for slots, budget in found.items():
        if budget is not None:  # exactly the pool logged, and a byte less is not
            r = run_strategy("sglang", qwen, budget_bytes=budget, context_tokens=20_000)
            assert (r.logged_tokens, r.extras["request_state_slots"]) == (60_000, slots or 15)
            assert run_strategy("sglang", qwen, budget_bytes=budget - 1,
                                context_tokens=20_000).logged_tokens == 59_999
    # without the slots (a log of no Mamba line): the least of them all, where bisection
    # alone can land a slot step on. Qwen3-Next at TP 2, 18,254,438,044 B and 20,000 tokens:
    # 784,437 tokens beside 222 request slots, from 223 x 38,633,472 + 784,437 x 12,288 =
    # 18,254,426,112 B, with or without the slots told
    r = run_strategy("sglang", qwen, budget_bytes=18_254_438_044, context_tokens=20_000)
    assert (r.logged_tokens, r.extras["request_state_slots"]) == (784_437, 222)
    assert 223 * 38_633_472 + 784_437 * 12_288 == 18_254_426_112
    for slots in (None, 222):
        assert budget_for_sglang_token_pool(qwen, tokens=784_437, context_tokens=20_000,
                                            state_slots=slots) == 18_254_426_112
    with pytest.raises(ValueError, match="tokens"):
        budget_for_sglang_token_pool(llama, tokens=0, context_tokens=None)


def test_the_budget_of_an_sglang_log_of_state_layers_alone_is_its_slots():
    # 8 Mamba-like layers of 49,152 + 2,097,152 B (a request state slot of 17,170,432 B):
    # SGLang logs the context (4,096) as its tokens at any budget, so the slots tell the
    # budget. 591 request slots and the padding slot are 592 x 17,170,432 = 10,164,895,744 B,
    # the state pool's budget x 9 // 19 (--mamba-full-memory-ratio 0.9) from
    # ceil(10,164,895,744 x 19 / 9) = 21,459,224,349 B
    mamba = CacheProfile(name="mamba", layer_types=("linear_attention",) * 8,
                         kv_bytes_per_slot=0,
                         state_const_bytes={"conv": 49_152, "ssm": 2_097_152})
    assert 592 * 8 * (49_152 + 2_097_152) == 10_164_895_744
    assert -(-10_164_895_744 * 19 // 9) == 21_459_224_349
    assert budget_for_sglang_token_pool(mamba, tokens=4_096, context_tokens=4_096,
                                        state_slots=591) == 21_459_224_349
    for budget, slots in ((21_459_224_349, 591), (21_459_224_348, 590)):
        r = run_strategy("sglang", mamba, budget_bytes=budget, context_tokens=4_096)
        assert (r.logged_tokens, r.extras["request_state_slots"]) == (4_096, slots)
    # without the slots, or with tokens that are not the context, none
    assert budget_for_sglang_token_pool(mamba, tokens=4_096, context_tokens=4_096) is None
    assert budget_for_sglang_token_pool(mamba, tokens=8_192, context_tokens=4_096,
                                        state_slots=591) is None


def test_no_budget_is_none():
    qwen = profile_for("Qwen3-Next-80B-A3B", None, 1)
    # slab aliasing does not apply to groups of unequal layer counts, at any budget
    assert least_budget_for_requests("aliased", qwen, requests=1, context_tokens=4096) is None
    # 2**60 B (the largest budget) of 131,072 B tokens hold 2**43 tokens: not 2**30 requests
    # of 2**14 tokens
    llama = profile_for("Llama-3.1-8B", None, 1)
    assert least_budget_for_requests("vllm", llama, requests=2**30,
                                     context_tokens=2**14) is None
    with pytest.raises(ValueError, match="requests"):
        least_budget_for_requests("vllm", llama, requests=0, context_tokens=4096)
    # an answer near the largest budget, whose next slot step lies past it: no step to run
    qwen = profile_for("Qwen3-Next-80B-A3B", None, 2)
    need = least_budget_for_requests("sglang", qwen, requests=4096, context_tokens=8 * 10**9)
    assert 2**59 < need <= 2**60
    assert holds("sglang", qwen, need, 4096, 8 * 10**9)


@settings(max_examples=25, deadline=None)
@given(model=st.sampled_from(model_names()), strategy=st.sampled_from(STRATEGIES),
       requests=st.integers(1, 64), context=st.sampled_from([1_000, 4_096, 32_768, 131_072]))
def test_the_least_budget_holds_and_a_byte_less_does_not(model, strategy, requests, context):
    profile = profile_for(model, None, 1)
    need = least_budget_for_requests(strategy, profile, requests=requests,
                                     context_tokens=context)
    if need is None:  # only a layout that does not apply has no budget at these sizes
        assert not run_strategy(strategy, profile, budget_bytes=2**50).applies
        return
    assert holds(strategy, profile, need, requests, context)
    # and twice the budget: the bisection's upper side
    assert holds(strategy, profile, 2 * need, requests, context)
    below = need - 1
    if strategy == "sglang":  # a byte less fails there, or at its next slot
        step = budget_of_next_slot(run_strategy("sglang", profile, budget_bytes=below), profile)
        assert not (holds(strategy, profile, below, requests, context)
                    and (step is None or holds(strategy, profile, step, requests, context)))
    else:
        assert not holds(strategy, profile, below, requests, context)


def test_gpu_memory_for_a_budget_is_the_derivation_backwards():
    # 128 GiB of cache with 16 GB of weights at TP 2 and a fraction 0.9:
    # ceil((137,438,953,472 + 8,000,000,000) / 0.9) = 161,598,837,192 B
    gpu = gpu_bytes_for(128 * GiB, 0.9, 16 * 10**9, 2)
    assert gpu == -(-(128 * GiB + 8 * 10**9) * 10 // 9) == 161_598_837_192
    assert cache_budget(gpu, 0.9, 16 * 10**9, 2).cache_bytes >= 128 * GiB
    assert cache_budget(gpu - 1, 0.9, 16 * 10**9, 2).cache_bytes < 128 * GiB
    with pytest.raises(ValueError, match=r"memory fraction is 0.0: give a number in \(0, 1\]"):
        gpu_bytes_for(GiB, 0.0, 0, 1)


@settings(max_examples=40, deadline=None)
@given(model=st.sampled_from(model_names()),
       strategy=st.sampled_from([s for s in STRATEGIES if s != "sglang"]),
       budget=st.integers(2**26, 2**38), more=st.integers(1, 2**34),
       context=st.sampled_from([1_000, 32_768, 131_072]))
def test_paged_layouts_hold_no_fewer_requests_with_more_budget(model, strategy, budget, more,
                                                               context):
    # what makes the bisection exact for every layout but SGLang's (whose counterexample is
    # pinned above)
    profile = profile_for(model, None, 1)

    def concurrency(b):
        r = run_strategy(strategy, profile, budget_bytes=b, context_tokens=context)
        return r.concurrency if r.applies else 0

    assert concurrency(budget) <= concurrency(budget + more)


def test_context_candidates_are_the_powers_of_two_to_the_longer_length_and_the_context():
    powers = [1 << k for k in range(10, 19)]  # 1,024 to 262,144
    assert context_candidates(262_144, 262_144) == powers
    # a context between powers is a point of its own (the table's diamond); the model's
    # max_model_len carries the line past it
    assert context_candidates(100_000, 262_144) == sorted(powers + [100_000])
    assert context_candidates(100_000, None) == [1 << k for k in range(10, 17)] + [
        100_000]
    # a context past the model's length, or under 1,024, still has its point
    assert context_candidates(2**20, 262_144) == powers + [2**19, 2**20]
    assert context_candidates(100, None) == [100, 1024]
    # so does the model's own length between powers (MiniMax-M1's 10,240,000, where vLLM's
    # log states its concurrency) when a shorter context is typed
    assert context_candidates(100_000, 10_240_000) == sorted(
        [1 << k for k in range(10, 24)] + [100_000, 10_240_000])


def test_concurrency_over_context_lengths_by_hand():
    # Llama-3.1-8B: 131,072 B a token in 16-token blocks of 2 MiB; 10 GB holds 4,768 of them,
    # 76,288 tokens, and a request of c tokens is 76,288 / c of them in FlatKV's layout
    llama = profile_for("Llama-3.1-8B", None, 1)
    contexts = context_candidates(32_768, 131_072)
    curves = context_curves(llama, 10**10, contexts, StrategyOptions(), STRATEGIES)
    assert curves.contexts == [1 << k for k in range(10, 18)]
    assert 10**10 // (131_072 * 16) * 16 == 76_288
    assert curves.concurrency["flat"] == [Fraction(76_288, c) for c in curves.contexts]
    # one group of full attention: nothing to alias, at any length, so no line
    assert "aliased" not in curves.concurrency
    assert list(curves.concurrency) == ["flat", "per-component", "vllm", "sglang", "lcm"]
    # past 76,288 tokens vLLM refuses to start (one request does not fit): no figure there
    assert curves.concurrency["vllm"][-1] is None
    # below it, its log's figure: 4,768 blocks of 16 tokens over the c tokens of a request
    assert curves.concurrency["vllm"][:-1] == [Fraction(4_768 * 16, c)
                                               for c in curves.contexts[:-1]]
    assert curves.concurrency["vllm"][0] == 74.5
    # SGLang: one token pool of 10**10 // (32 layers x 4,096 B) = 76,293 tokens, page 1
    assert curves.concurrency["sglang"] == [Fraction(76_293, c) for c in curves.contexts]
    # Qwen3-Next at 55,679,338,086 B (an H200's 140.40 GiB x 0.9 less 80 GB of weights):
    # SGLang's state pool has 341 slots, one of them padding, and a running request holds 5
    # (Qwen3NextForCausalLM's extra_buffer radix cache: 3 + 2 tracking slots), so at most
    # 340 // 5 = 68 run whatever the length; its 1,193,494 KV tokens bind from 32,768 tokens
    # on (1,193,494 / 16,384 = 72.8 > 68, / 32,768 = 36.4)
    qwen = profile_for("Qwen3-Next-80B-A3B", None, 1)
    curves = context_curves(qwen, 55_679_338_086, [1 << k for k in range(10, 19)],
                            StrategyOptions(), ["sglang"])
    one = run_strategy("sglang", qwen, budget_bytes=55_679_338_086, context_tokens=1024)
    assert (one.extras["state_slots"], one.extras["slots_per_request"]) == (341, 5)
    assert one.extras["running_request_cap"] == 340 // 5 == 68
    # the KV pool: the budget less the 341 slots of 36 GDN layers' 49,152 + 2,097,152 B, in
    # tokens of 12 layers x 2,048 B
    assert (55_679_338_086 - 341 * 36 * (49_152 + 2_097_152)) // 24_576 == 1_193_494
    assert one.capacity_tokens == 1_193_494
    assert curves.concurrency["sglang"] == [68] * 5 + [
        Fraction(1_193_494, 1 << k) for k in range(15, 19)]
    # vLLM at P = 544: 55,679,338,086 // 1,114,112 // 12 = 4,164 page ids, a request holding
    # a page of each of the 3 state groups and cdiv(L, 544) of the attention one (the README's
    # 832.80 at 1,024 tokens and 8.59 at 262,144)
    vllm = context_curves(qwen, 55_679_338_086, [1024, 262_144], StrategyOptions(), ["vllm"])
    assert 55_679_338_086 // 1_114_112 // 12 == 4164
    assert vllm.concurrency["vllm"] == [Fraction(4164, 3 + 2), Fraction(4164, 3 + 482)]
    assert [round(4164 / 5, 2), round(4164 / 485, 2)] == [832.8, 8.59]


def test_longest_context_held_by_hand_for_llama4_scout():
    # Budget's dead end: Llama-4-Scout's own 10,485,760 tokens in the default budget, H100
    # 80GB x 0.9 = 85,520,809,984 x 0.9 -> 76,968,728,985 B. Packed slabs at P 16: 48 rows of
    # 16 x 4,096 B = 3,145,728 B a page id, 24,467 of them. Budget's concurrency: page ids
    # over a request's, ceil(min(8,192 + 8,192, L) / 16) = 1,024 chunked + ceil(L / 16) full;
    # one request held while 1,024 + ceil(L / 16) <= 24,467: ceil(L / 16) <= 23,443, L <=
    # 23,443 x 16 = 375,088. Layout's map counts SPEC 3.5's workload, a dummy page and a
    # request's last page more in each of the 2 groups (chunked 1,026, full ceil(L / 16) + 2):
    # 4 pages, 64 tokens less, 375,024 (tests/test_workload.py). Two counts, two questions:
    # the pages name them apart (app_data.LONGEST_BY) and give each other's figure
    budget, scout = 76_968_728_985, llama4_scout()
    assert (budget // (48 * 16 * 4096), 24_467 - 1024) == (24_467, 23_443)
    longest = longest_context_held("flat", scout, budget_bytes=budget, below=10_485_760)
    assert longest == 23_443 * 16 == 375_088
    assert holds("flat", scout, budget, 1, longest)
    assert not holds("flat", scout, budget, 1, longest + 1)
    # every layout's answer holds one request and one token more does not (vLLM's refusal to
    # start at 10,485,760 tokens included)
    for strategy in ("vllm", "sglang", "per-component"):
        n = longest_context_held(strategy, scout, budget_bytes=budget, below=10_485_760)
        assert n > 0 and holds(strategy, scout, budget, 1, n)
        assert not holds(strategy, scout, budget, 1, n + 1)
    # at most ``below`` - 1: a shorter context than the answer is its own; none below 1 token
    assert longest_context_held("flat", scout, budget_bytes=budget, below=1000) == 999
    assert longest_context_held("flat", scout, budget_bytes=budget, below=1) == 0
    # a budget of one page id holds no request of any length (2 groups, a page id each)
    assert longest_context_held("flat", scout, budget_bytes=3_145_728, below=10) == 0
    with pytest.raises(ValueError, match="below"):
        longest_context_held("flat", scout, budget_bytes=budget, below=0)


def test_longest_context_held_runs_only_vllm_at_below(monkeypatch):
    # only vLLM names a longest context where it refuses; the other layouts are not run at
    # ``below`` (the page has run them there already): Scout's flat answer from 1 token, the
    # longest under below and the bisection between, never 10,485,760
    runs = []

    def run(strategy, profile, *, context_tokens, **kwargs):
        runs.append((strategy, context_tokens))
        return run_strategy(strategy, profile, context_tokens=context_tokens, **kwargs)

    monkeypatch.setattr(sizing, "run_strategy", run)
    budget, scout = 76_968_728_985, llama4_scout()
    assert longest_context_held("flat", scout, budget_bytes=budget, below=10_485_760) == 375_088
    assert runs[:2] == [("flat", 1), ("flat", 10_485_759)]
    assert ("flat", 10_485_760) not in runs and len(runs) <= 2 + 24  # log2(10,485,759) < 24
    runs.clear()
    assert longest_context_held("vllm", scout, budget_bytes=budget, below=10_485_760) == 1_516_752
    assert runs == [("vllm", 10_485_760)]


def test_holding_a_request_never_comes_back_as_the_context_grows():
    # longest_context_held bisects over the context, exact only where a layout that no longer
    # holds one request does not hold it again at a longer context: a paged layout's units
    # do not read the context and a request's pages never shrink; SGLang's needs read it
    # (argued in longest_context_held, and on state layers alone it comes back: the test
    # above), so every preset at three budgets is swept over lengths 16 to 12 M
    contexts = sorted([2**k for k in range(4, 24)] + [3 * 2**k for k in range(4, 22)])
    for name in model_names():
        profile = profile_for(name, None, 1)
        for budget in (2 << 30, 24 << 30, 76_968_728_985):
            for strategy in ("sglang", "vllm", "flat"):
                held = [holds(strategy, profile, budget, 1, c) for c in contexts]
                assert held == sorted(held, reverse=True), (name, budget, strategy)


def test_longest_context_held_by_sglang_on_state_layers_alone_is_in_whole_pages():
    # SGLang gives a model of state layers alone a token pool of the context itself in whole
    # pages, T = L // P x P, and a request holds ceil(L / P) pages of it: one request fits
    # only where P divides L, and SGLang refuses T < 2 ("state cache is too small"). Pure
    # Mamba2 in 40 GiB: slots of 24 x (61,440 + 2,097,152) = 51,806,208 B, 42,949,672,960 x
    # 9 / 19 = 20,344,581,928 B of them -> 392, a running cap of 391 // 3 = 130 that never
    # binds. At page 64 one request of 960 = 15 x 64 tokens holds (15 pages / 15), of 961 not
    # (T still 960: 15 / 16 pages), of 1 to 63 none (T = 0, refused): holding comes back, so
    # a bisection from 1 token answered 0 below 1,000 tokens
    profile, budget = pure_mamba(), 40 << 30
    assert 42_949_672_960 * 9 // 19 // (24 * (61_440 + 2_097_152)) == 392

    def held(context: int, page: int, at: int = budget) -> bool:
        return holds_requests(run_strategy("sglang", profile, budget_bytes=at,
                                           context_tokens=context,
                                           options=StrategyOptions(sglang_page_size=page)), 1)

    def longest(below: int, page: int, at: int = budget) -> int:
        return longest_context_held("sglang", profile, budget_bytes=at, below=below,
                                    options=StrategyOptions(sglang_page_size=page))

    assert [held(c, 64) for c in (1, 63, 64, 65, 960, 961, 999)] == [
        False, False, True, False, True, False, False]
    assert longest(1000, 64) == 15 * 64 == 960
    assert longest(961, 64) == 960 and longest(960, 64) == 14 * 64 == 896
    assert longest(65, 64) == 64 and longest(64, 64) == 0
    # page 1: every context of 2 tokens or more holds one, 1 token (T = 1) none
    assert not held(1, 1) and held(2, 1) and held(999, 1)
    assert (longest(1000, 1), longest(3, 1), longest(2, 1)) == (999, 2, 0)
    # a budget whose state pool holds no request's 3 slots and the padding one: none at any
    # length (SGLang refuses under 437,474,646 B)
    assert not held(960, 64, 100 << 20) and longest(1000, 64, 100 << 20) == 0
    assert held(960, 64, 437_474_646) and longest(1000, 64, 437_474_646) == 960


@pytest.mark.parametrize("name, own", [("Llama-4-Scout-17B-16E", 1_516_752),
                                       ("Qwen3-Next-80B-A3B", 3_129_632)])
def test_longest_context_held_for_vllm_is_its_own_estimate(name, own):
    # vLLM refuses the 10,485,760 tokens in the default budget (H100 80GB x 0.9) and names its
    # "estimated maximum model length"; Budget reads that figure (extras["longest_context"])
    # rather than bisect, and the bisection over Budget's own rule (one request held) agrees
    budget, profile = 76_968_728_985, profile_for(name, None, 1)
    refused = run_strategy("vllm", profile, budget_bytes=budget, context_tokens=10_485_760)
    assert not refused.applies and refused.extras["longest_context"] == own
    assert f"its estimated maximum model length is {own:,}" in refused.reason
    assert longest_context_held("vllm", profile, budget_bytes=budget, below=10_485_760) == own
    assert longest_fitting(lambda tokens: holds("vllm", profile, budget, 1, tokens),
                           10_485_759) == own
    assert holds("vllm", profile, budget, 1, own) and not holds("vllm", profile, budget, 1, own + 1)
