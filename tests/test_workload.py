"""SPEC section 3.5: pages per group for R requests at context L, coverage, largest R."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flatkv.workload import (
    PagePool,
    PoolGroup,
    Workload,
    covers,
    group_pages,
    longest_context,
    max_requests,
    pages_needed,
    units_needed,
)

FULL, SLIDING, LINEAR = "full_attention", "sliding_attention", "linear_attention"
CHUNKED = "chunked_attention"


def test_pages_needed_by_hand():
    w = Workload(requests=3, context_tokens=1000, scheduled_tokens=256, margin=2)
    t = 3 * 1000
    # full: ceil(3,000 / 16) + 3 + 1 + 2 = 188 + 6
    assert pages_needed(FULL, w, block_size=16) == -(-t // 16) + 3 + 1 + 2 == 194
    # sliding, W = 128: 3 x ceil(127 / 16) + ceil(min(256, 3,000) / 16) + 3 + 1 + 2
    assert pages_needed(SLIDING, w, block_size=16, sliding_window=128) == 3 * 8 + 16 + 6
    # state: min(2 x 3 + 3,000 // 16 + 1 + 2, full count) = min(196, 194)
    assert pages_needed(LINEAR, w, block_size=16) == 194
    # state with a large P: min(6 + 3,000 // 544 + 3, ceil(3,000 / 544) + 6) = min(14, 12)
    assert pages_needed(LINEAR, w, block_size=544) == 12
    assert pages_needed(LINEAR, Workload(3, 100), block_size=544) == min(6 + 0 + 1, 1 + 3 + 1)
    # N = 2 drafted tokens: each request holds 2 more state pages, on top of the capped count
    # (min(196, 194) + 3 x 2); history pages do not change
    drafted = Workload(requests=3, context_tokens=1000, scheduled_tokens=256, margin=2,
                       speculative_tokens=2)
    assert pages_needed(LINEAR, drafted, block_size=16) == 194 + 6 == 200
    assert pages_needed(FULL, drafted, block_size=16) == 194
    assert pages_needed(SLIDING, drafted, block_size=16, sliding_window=128) == 46


def test_pages_needed_at_the_edges_of_its_roundings():
    w = Workload(requests=1, context_tokens=1000, scheduled_tokens=256)
    # a window of W = 17 keeps W - 1 = 16 earlier tokens: one page of 16, not two:
    # 1 x ceil(16 / 16) + ceil(256 / 16) + 1 + 1 = 1 + 16 + 2
    assert pages_needed(SLIDING, w, block_size=16, sliding_window=17) == 19
    assert pages_needed(SLIDING, w, block_size=16, sliding_window=18) == 20  # 17 tokens: 2
    # one request, T not a whole number of pages: the state count 2 + 1,000 // 16 + 1 = 65
    # meets the full count ceil(1,000 / 16) + 1 + 1 = 65 (for R >= 1 it is never below it:
    # 2R + floor(T/P) + 1 - (ceil(T/P) + R + 1) = R - 1 or R)
    assert pages_needed(LINEAR, w, block_size=16) == 65 == pages_needed(FULL, w, block_size=16)


def test_sliding_window_shorter_than_context_uses_the_context():
    w = Workload(requests=2, context_tokens=50, scheduled_tokens=8192)
    # min(W - 1, L) = 50; min(S, T) = 100
    assert pages_needed(SLIDING, w, block_size=16, sliding_window=4096) == 2 * 4 + 7 + 2 + 1


def test_a_chunked_group_counts_as_a_sliding_one_over_its_chunk():
    # a chunked layer keeps at most the C - 1 earlier tokens of its chunk: R x ceil(min(C - 1,
    # L) / P) + ceil(min(S, T) / P) + R + 1 + m, with C = 8,192, P 16, S 8,192, L 20,000
    w = Workload(requests=2, context_tokens=20_000, scheduled_tokens=8192, margin=1)
    assert pages_needed(CHUNKED, w, block_size=16, attention_chunk_size=8192) == (
        2 * 512 + 512 + 2 + 1 + 1) == 1540
    assert pages_needed(CHUNKED, w, block_size=16, attention_chunk_size=8192) == pages_needed(
        SLIDING, w, block_size=16, sliding_window=8192)
    with pytest.raises(ValueError, match="attention_chunk_size is not set"):
        pages_needed(CHUNKED, w, block_size=16, sliding_window=8192)
    pool = PagePool(10_000, 16, [PoolGroup(FULL, FULL, 12), PoolGroup(CHUNKED, CHUNKED, 36)],
                    attention_chunk_size=8192)
    # full: ceil(40,000 / 16) + 2 + 1 + 1 = 2,504; chunked 1,540: 4,044 of 10,000 page ids
    assert units_needed(pool, w) == 2504 + 1540


def pool_of(units, p=16, window=None, k_full=1):
    groups = [PoolGroup(FULL, FULL, 12, k_full), PoolGroup(LINEAR, LINEAR, 36)]
    return PagePool(units, p, groups, window)


def test_covers_and_units_with_pages_per_unit():
    w = Workload(requests=2, context_tokens=1600)
    pool = pool_of(1_000, k_full=100)
    pages = group_pages(pool, w)
    assert pages == {FULL: 200 + 3, LINEAR: min(4 + 200 + 1, 203)}
    assert units_needed(pool, w) == -(-203 // 100) + 203
    assert covers(pool, w)
    assert not covers(pool_of(205, k_full=100), w) and covers(pool_of(206, k_full=100), w)


def test_max_requests_matches_brute_force_on_small_pools():
    for units in (0, 3, 10, 57, 400):
        pool = pool_of(units, p=32)
        brute = 0
        while covers(pool, Workload(brute + 1, 500)):
            brute += 1
        assert max_requests(pool, context_tokens=500) == brute


def test_max_requests_is_fast_on_huge_pools():
    pool = pool_of(10**18, p=544)
    r = max_requests(pool, context_tokens=262_144)
    # by hand: T / P = R x 262,144 / 544 = 8,192 R / 17; a full group needs ceil(8,192 R / 17)
    # + R + 1 pages, the state group min(2R + floor(8,192 R / 17) + 1, that) = that for R >= 1;
    # 2 x (ceil(8,209 R / 17) + 1) <= 10**18 holds up to R = floor((5 x 10**17 - 1) x 17 /
    # 8,209) = 1,035,448,897,551,467
    assert r == (5 * 10**17 - 1) * 17 // 8_209 == 1_035_448_897_551_467
    assert covers(pool, Workload(r, 262_144))
    assert not covers(pool, Workload(r + 1, 262_144))


@settings(max_examples=60, deadline=None)
@given(
    units=st.integers(0, 5_000),
    p=st.integers(1, 600),
    ctx=st.integers(1, 50_000),
    margin=st.integers(0, 5),
    k=st.integers(1, 50),
    drafted=st.integers(0, 4),
)
def test_max_requests_is_the_largest_fit(units, p, ctx, margin, k, drafted):
    pool = PagePool(units, p, [PoolGroup(FULL, FULL, 1, k), PoolGroup(SLIDING, SLIDING, 1),
                               PoolGroup(LINEAR, LINEAR, 1)], 128)
    r = max_requests(pool, context_tokens=ctx, margin=margin, speculative_tokens=drafted)
    if r > 0:
        assert covers(pool, Workload(r, ctx, margin=margin, speculative_tokens=drafted))
    assert not covers(pool, Workload(r + 1, ctx, margin=margin, speculative_tokens=drafted))


def test_longest_context_by_hand_for_llama4_scout():
    # Llama-4-Scout-17B-16E in the default budget (H100 80GB x 0.9 = 76,968,728,985 B), packed
    # slabs at P 16: 48 layers x 16 tokens x 4,096 B (8 KV heads x 128 x 2 (K, V) x 2 B) =
    # 3,145,728 B a block, 76,968,728,985 // 3,145,728 = 24,467 blocks; 36 chunked layers
    # (chunk 8,192) and 12 full ones. One request of its own 10,485,760 tokens needs 655,362
    # full pages alone: the Layout page's dead end. One request of L tokens, S = 8,192:
    # chunked ceil(min(8,191, L) / 16) + ceil(min(8,192, L) / 16) + 1 + 1 = 512 + 512 + 2 =
    # 1,026 (L >= 8,192); full ceil(L / 16) + 1 + 1. Fits while ceil(L / 16) <= 24,467 -
    # 1,026 - 2 = 23,439: L <= 23,439 x 16 = 375,024 (the Layout page's; Budget's, by the
    # engine's pages a request, is 4 pages longer, 375,088: tests/test_sizing.py)
    assert (76_968_728_985 // (48 * 16 * 4096), 24_467 - 1026 - 2) == (24_467, 23_439)
    pool = PagePool(24_467, 16, [PoolGroup(CHUNKED, CHUNKED, 36), PoolGroup(FULL, FULL, 12)],
                    attention_chunk_size=8192)
    assert not covers(pool, Workload(1, 10_485_760))
    n = longest_context(pool, limit=2**40)
    assert n == 23_439 * 16 == 375_024
    assert group_pages(pool, Workload(1, n)) == {CHUNKED: 1026, FULL: 23_441}
    assert covers(pool, Workload(1, n)) and not covers(pool, Workload(1, n + 1))
    # 4 requests (Layout's typed workload): chunked 4 x 512 + ceil(min(8,192, 4L) / 16) + 4 +
    # 1 = 2,565; full ceil(4L / 16) + 4 + 1 <= 24,467 - 2,565 = 21,902 while ceil(L / 4) <=
    # 21,897: L <= 87,588
    four = longest_context(pool, limit=2**40, requests=4)
    assert four == 21_897 * 4 == 87_588
    assert group_pages(pool, Workload(4, four)) == {CHUNKED: 2565, FULL: 21_902}
    assert covers(pool, Workload(4, four)) and not covers(pool, Workload(4, four + 1))


def test_longest_context_at_its_edges():
    # no full-history group: one request of L needs ceil(min(127, L) / 16) + ceil(min(8,192,
    # L) / 16) + 2 pages, at most 8 + 512 + 2 = 522; 600 units hold one of any length (the
    # limit), 100 one up to 8 + ceil(L / 16) + 2 <= 100: L <= 90 x 16 = 1,440
    def sliding(units):
        return PagePool(units, 16, [PoolGroup(SLIDING, SLIDING, 1)], sliding_window=128)

    assert longest_context(sliding(600), limit=2**40) == 2**40
    assert longest_context(sliding(100), limit=2**40) == 90 * 16 == 1440
    # one page id: not even a request of 1 token (its page and the dummy page)
    assert longest_context(pool_of(1), limit=2**40) == 0
    # a full group alone at P 16, 10 units: ceil(L / 16) + 2 <= 10 while L <= 128; the limit
    # below that caps it
    full = PagePool(10, 16, [PoolGroup(FULL, FULL, 1)])
    assert longest_context(full, limit=2**40) == 128
    assert (longest_context(full, limit=128), longest_context(full, limit=100)) == (128, 100)
    assert longest_context(full, limit=1) == 1


@settings(max_examples=40, deadline=None)
@given(units=st.integers(0, 5_000), p=st.integers(1, 600), margin=st.integers(0, 5),
       drafted=st.integers(0, 4), requests=st.integers(1, 8))
def test_longest_context_is_the_largest_fit(units, p, margin, drafted, requests):
    pool = PagePool(units, p, [PoolGroup(FULL, FULL, 1), PoolGroup(SLIDING, SLIDING, 1),
                               PoolGroup(LINEAR, LINEAR, 1)], 128)
    n = longest_context(pool, limit=10**9, requests=requests, margin=margin,
                        speculative_tokens=drafted)
    if n > 0:
        assert covers(pool, Workload(requests, n, margin=margin, speculative_tokens=drafted))
    assert not covers(pool, Workload(requests, n + 1, margin=margin,
                                     speculative_tokens=drafted))


@pytest.mark.parametrize(
    "build, field",
    [
        (lambda: Workload(-1, 10), "requests"),
        (lambda: Workload(1, 0), "context_tokens"),
        (lambda: Workload(1, 10, speculative_tokens=-1), "speculative_tokens"),
        (lambda: PoolGroup("x", "moe", 1), "kind"),
        (lambda: PagePool(10, 16, [PoolGroup(SLIDING, SLIDING, 1)]), "sliding_window"),
        (lambda: PagePool(10, 16, [PoolGroup(CHUNKED, CHUNKED, 1)]), "attention_chunk_size"),
        (lambda: PagePool(10, 16, []), "groups"),
        (lambda: PagePool(10, 0, [PoolGroup(FULL, FULL, 1)]), "block_size"),
        # the wrong types are named too, not an AttributeError deep inside
        (lambda: PagePool(10, 16, None), r"PagePool.groups is None: give a list of PoolGroup"),
        (lambda: PagePool(10, 16, "abc"), r"PagePool.groups is 'abc'"),
        (lambda: PagePool(10, 16, [1]), r"PagePool.groups\[0\] is 1: give a PoolGroup"),
        (lambda: pages_needed(FULL, None, block_size=16), "workload is None: give a Workload"),
        (lambda: pages_needed(["x"], Workload(1, 10), block_size=16), r"kind is \['x'\]"),
    ],
)
def test_bad_input_names_the_field(build, field):
    with pytest.raises(ValueError, match=field):
        build()


def test_covers_accepts_a_planner_result_and_a_strategy_result():
    from strategy_profiles import qwen3_next_tp2

    from flatkv.plan import plan_tensors
    from flatkv.strategies import run_strategy

    prof = qwen3_next_tp2()
    plan = plan_tensors(prof.components(), block_size=16, alignment=16, budget_bytes=10**11)
    # P = 544, one page-id space of 10**11 // (12 x 544 x 1,024 + 36 x 548,864) ids
    units = 10**11 // (12 * 544 * 1024 + 36 * 548_864)
    w = Workload(requests=2, context_tokens=100_000)
    full = -(-200_000 // 544) + 2 + 1
    state = min(4 + 200_000 // 544 + 1, full)
    assert group_pages(plan, w) == {LINEAR: state, FULL: full}
    assert full + state == 742 <= units == 3_781
    assert covers(plan, w)
    # R = 10: 2 x (ceil(1,000,000 / 544) + 11) = 2 x 1,850 = 3,700 <= 3,781
    # R = 11: 2 x (ceil(1,100,000 / 544) + 12) = 2 x 2,035 = 4,070 > 3,781
    assert max_requests(plan, context_tokens=100_000) == 10
    result = run_strategy("flat", prof, budget_bytes=10**11)
    assert max_requests(result, context_tokens=100_000) == max_requests(
        plan, context_tokens=100_000
    )
    with pytest.raises(ValueError, match="page pool"):
        covers(run_strategy("sglang", prof, budget_bytes=10**11), w)


def test_a_planner_result_with_windowed_layers_asks_for_its_window():
    # a FlatMemoryPlan names its groups but keeps no window: a sliding model's plan is refused
    # with the call that gives it (the CLI flag the profile's message names does not apply here)
    from strategy_profiles import gpt_oss_20b

    from flatkv.plan import plan_tensors
    from flatkv.workload import pool_from_plan

    prof = gpt_oss_20b()
    plan = plan_tensors(prof.components(), block_size=16, alignment=16, budget_bytes=10**10)
    w = Workload(requests=1, context_tokens=1000)
    with pytest.raises(ValueError, match=r"^plan has sliding_attention groups, whose window a "
                       r"FlatMemoryPlan does not keep: pass pool_from_plan\(plan, "
                       r"sliding_window=\.\.\., attention_chunk_size=\.\.\.\) instead"):
        covers(plan, w)
    # with its window (128): 12 full and 12 sliding layers, 10**10 // 786,432 = 12,715 ids;
    # full ceil(1,000 / 16) + 2 = 65 pages, sliding ceil(127 / 16) + ceil(1,000 / 16) + 2 = 73
    pool = pool_from_plan(plan, sliding_window=128)
    assert pool.num_units == 12_715
    assert group_pages(pool, w) == {SLIDING: 73, FULL: 65}
    assert covers(pool, w)


def test_a_plan_of_groups_that_are_not_layer_labels_is_refused_for_what_it_is():
    # the planner takes any group id, but a workload knows a group's kind by its label: a
    # group 'attn' is refused as such, without the window hint of a sliding plan
    from flatkv.plan import ComponentSpec, plan_tensors

    plan = plan_tensors([ComponentSpec("attn", 0, "kv", 4096, 0)], block_size=16, alignment=16,
                        budget_bytes=10**9)
    with pytest.raises(ValueError) as raised:
        covers(plan, Workload(requests=1, context_tokens=1000))
    assert str(raised.value) == (
        "plan group 'attn' (tensor 'flat_slab_0') is not a layer label: a workload's page count "
        "knows a group's kind by its label; name groups by one of ['full_attention', "
        "'sliding_attention', 'chunked_attention', 'linear_attention'], as "
        "components_from_layers does")


def test_a_workload_told_a_mamba_cache_mode_charges_that_modes_state_pages():
    # Qwen3-Next on the default H100: 1,455 page ids of P 544, 12 full and 36 state layers, 3
    # requests of 262,144 tokens: full ceil(786,432 / 544) + 3 + 1 = 1,446 + 4 = 1,450
    pool = PagePool(1455, 544, (PoolGroup(FULL, FULL, 12), PoolGroup(LINEAR, LINEAR, 36)))
    assert -(-786_432 // 544) == 1446 and -(-262_144 // 544) == 482
    three = Workload(3, 262_144, state_mode="none")
    # mode none: 1 state page a request and a dummy page, 3 + 1; with the history 1,454 of
    # the 1,455 ids, as the engine's 1,455 / (482 + 1) = 3.01 requests say
    assert group_pages(pool, three) == {FULL: 1450, LINEAR: 4}
    assert covers(pool, three)
    assert max_requests(pool, context_tokens=262_144, state_mode="none") == 3
    # prefix-caching snapshots (SPEC 3.5, the default): min(2 + 481 + 1, 484) a request, 1 fits
    assert pages_needed(LINEAR, Workload(1, 262_144), block_size=544) == 484
    assert max_requests(pool, context_tokens=262_144) == 1
    # align with 2 checkpoint blocks and 1 drafted token: 3 x (2 + 2 + 1) + 1; all: a page
    # every P tokens, 3 x 482 + 1; checkpoints count in align only
    assert pages_needed(LINEAR, Workload(3, 262_144, speculative_tokens=1, state_mode="align",
                                         checkpoint_blocks=2), block_size=544) == 16
    assert pages_needed(LINEAR, Workload(3, 262_144, state_mode="all", checkpoint_blocks=2),
                        block_size=544) == 3 * 482 + 1
    # the longest context of one request by mode none: ceil(L / 544) + 2 + 2 <= 1,455 while
    # ceil(L / 544) <= 1,451: 1,451 x 544 = 789,344 (snapshots: 725 x 544, tests/test_app_budget)
    assert longest_context(pool, limit=1 << 40, state_mode="none") == 1451 * 544 == 789_344
    assert longest_context(pool, limit=1 << 40) == 725 * 544
    with pytest.raises(ValueError, match=r"state_mode is 'some': use None \(prefix-caching "
                       r"snapshots\) or one of \['none', 'align', 'all'\]"):
        Workload(1, 16, state_mode="some")
