"""flatkv.analysis: every figure of a plan analysis derived by hand."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flatkv.analysis import analysis_to_dict, analyze, sweep_block_sizes, sweep_budgets
from flatkv.patterns import parse_layer_pattern
from flatkv.profile import CacheProfile

KV, CONV, SSM = 2_048, 49_152, 2_097_152
QWEN35 = CacheProfile(parse_layer_pattern("(3*linear,full)*12"), KV, {"conv": CONV, "ssm": SSM})


@pytest.fixture(scope="module")
def qwen():
    return analyze(QWEN35.components(), block_size=64, alignment=16, budget_bytes=80 * 10**9)


def test_totals_add_up_by_hand(qwen):
    t = qwen.totals
    kv_row, state_row = KV * 1_056, CONV + SSM
    assert (t.block_size, t.num_blocks) == (1_056, 775)
    assert t.block_bytes == 12 * kv_row + 36 * state_row == 103_219_200
    assert t.token_slots == 775 * 1_056 == 818_400
    assert t.kv_history_bytes == 775 * 12 * kv_row
    assert t.state_bytes == 775 * 36 * state_row
    assert t.unused_bytes == 80 * 10**9 - 775 * 103_219_200 == 5_120_000
    assert t.kv_history_bytes + t.state_bytes + t.reserved_bytes + t.unused_bytes == 80 * 10**9
    # Uniform pages would pad each state row up to the widest row, 2,048 x 1,056 = 2,162,688 B.
    assert t.uniform_padding_bytes == 775 * 36 * (kv_row - state_row)


def test_rows_and_offsets(qwen):
    slot0 = qwen.slots[0]
    assert [(r.group_id, r.offset, r.used_bytes, r.padding_bytes) for r in slot0.rows] == [
        ("linear_attention", 0, CONV + SSM, 2_162_688 - 2_146_304),
        ("full_attention", CONV + SSM, 2_162_688, 0),
    ]
    assert slot0.rows[0].padded_share == pytest.approx(16_384 / 2_162_688)
    assert [b.offset for r in slot0.rows for b in r.bindings] == [0, CONV, CONV + SSM]
    assert slot0.row_bytes == CONV + SSM + 2_162_688
    assert qwen.slots[35].rows[0].group_id == "linear_attention" and len(qwen.slots[35].rows) == 1


def test_dead_weight_per_group(qwen):
    lin, full = qwen.groups
    assert (lin.group_id, lin.num_layers, lin.used_bytes_per_block) == (
        "linear_attention", 36, 36 * (CONV + SSM))
    # a block id the full layers own still addresses the 36 state rows, 36 x 2,146,304 =
    # 77,266,944 B of its 103,219,200 (74.86%); a linear one the 12 KV rows of 2,048 x 1,056,
    # 25,952,256 B (25.14%): each group's dead weight is the other's use
    assert [(g.group_id, g.num_layers, g.used_bytes_per_block, g.dead_bytes_per_block,
             f"{float(g.dead_share):.2%}") for g in qwen.groups] == [
        ("linear_attention", 36, 77_266_944, 25_952_256, "25.14%"),
        ("full_attention", 12, 25_952_256, 77_266_944, "74.86%")]
    assert full.dead_share == Fraction(77_266_944, 103_219_200)  # exact, not a float


def test_equalizer_reasoning(qwen):
    eq = qwen.equalizer
    assert (eq.max_linear, eq.max_const, eq.needed, eq.block_size) == (KV, CONV + SSM, 1_048,
                                                                      1_056)
    assert qwen.finer_alignments == ((1, 1_048), (2, 1_048), (4, 1_048), (8, 1_048))
    # SPEC §1: 2,146,304 B of state over 2,048 B a slot needs 1,048 slots; the next multiple
    # of 16 is 1,056 (66 x 16), 8 slots more; at P 1,056 the KV row is 2,162,688 B
    assert qwen.why_block_size() == [
        "Requested block_size 64 token slots, alignment 16.",
        "Widest per-token (KV history) row: 2,048 B per token slot, so 131,072 B per page at "
        "the requested size.",
        "Widest constant (state) row: 2,146,304 B. Slots needed to cover it: ceil(2,146,304 / "
        "2,048) = 1,048.",
        "1,048 > 64: round up to a multiple of 16 -> P = 1,056 (8 token slots of rounding).",
        "Page row at P: max(2,048 x 1,056, 2,146,304) = 2,162,688 B."]


def test_per_component_planner_reserved_bytes():
    a = analyze(QWEN35.components(), block_size=64, budget_bytes=10**10, planner="per-component",
                reserved_bytes_per_block=4096)
    # Same config-level P as packed slabs: alignment defaults to 64, ceil(1,048 / 64) x 64.
    assert a.totals.block_size == 1_088
    per_block = 12 * KV * 1_088 + 36 * (CONV + SSM) + 4096
    n = 10**10 // per_block
    assert a.totals.num_blocks == n
    assert a.totals.reserved_bytes == n * 4096
    t = a.totals
    assert t.kv_history_bytes + t.state_bytes + t.reserved_bytes + t.unused_bytes == 10**10
    # alignment 64: 1,048 rounds to 17 x 64 = 1,088, 40 slots more; KV row 2,048 x 1,088
    assert a.why_block_size()[3:] == [
        "1,048 > 64: round up to a multiple of 64 -> P = 1,088 (40 token slots of rounding).",
        "The per-component planner takes this config-level P (equalized_block_size) and gives "
        "each component its own tensor: no packing, no padding.",
        "Page row at P: max(2,048 x 1,088, 2,146,304) = 2,228,224 B."]
    # the reserved rows are no group's: a full-attention page id carries only the state rows
    full, lin = sorted(a.groups, key=lambda g: g.group_id)
    assert (full.group_id, full.dead_bytes_per_block) == ("full_attention", 36 * (CONV + SSM))
    assert lin.dead_bytes_per_block == 12 * KV * 1_088


def test_state_only_model_per_component_keeps_requested_p():
    state_only = CacheProfile(["linear_attention"] * 4, 0, {"conv": CONV, "ssm": SSM})
    a = analyze(state_only.components(), block_size=16, budget_bytes=10**9,
                planner="per-component")
    assert a.totals.block_size == 16
    assert a.totals.num_blocks == 10**9 // (4 * (CONV + SSM))
    assert a.why_block_size() == [
        "Requested block_size 16 token slots.",
        "No per-token (KV history) row: state rows do not depend on P, so P stays the "
        "requested block size.",
        "The per-component planner takes this config-level P (equalized_block_size) and gives "
        "each component its own tensor: no packing, no padding.",
        "Page row at P: 2,146,304 (the state row: no history row) = 2,146,304 B."]
    # an attention model's page row is its history row at P, no "max(..., 0)"
    llama = CacheProfile(["full_attention"] * 32, 4_096, {})
    assert analyze(llama.components(), block_size=16, budget_bytes=10**9).why_block_size()[
        -1] == "Page row at P: 4,096 x 16 (no state row) = 65,536 B."
    with pytest.raises(ValueError, match="KV history row, and this model has none"):
        analyze(state_only.components(), block_size=16, budget_bytes=10**9)


def test_json_view_keeps_exact_ints(qwen):
    d = analysis_to_dict(qwen)
    assert d["geometry"] == {"block_size": 1_056, "block_bytes": 103_219_200, "num_blocks": 775}
    assert d["totals"]["token_slots"] == 818_400
    assert d["tensors"][0]["bindings"][2] == {
        "slot": 0, "group_id": "full_attention", "layer": 0, "component": "kv",
        "nbytes_per_block": 2_162_688, "row_offset": 0, "offset": CONV + SSM}


def test_bad_planner_and_reserved():
    with pytest.raises(ValueError, match="planner 'x' is unknown"):
        analyze(QWEN35.components(), block_size=16, budget_bytes=10**10, planner="x")
    with pytest.raises(ValueError, match="only used by the per-component planner"):
        analyze(QWEN35.components(), block_size=16, budget_bytes=10**10,
                reserved_bytes_per_block=1)
    # a sweep point is one of analyze's plans: the same refusal, not reserved bytes taken in
    for sweep, kw in ((sweep_block_sizes, {"block_sizes": [16], "budget_bytes": 10**10}),
                      (sweep_budgets, {"budgets": [10**10], "block_size": 16})):
        with pytest.raises(ValueError, match="only used by the per-component planner"):
            sweep(QWEN35.components(), reserved_bytes_per_block=1, **kw)
        assert sweep(QWEN35.components(), reserved_bytes_per_block=1, planner="per-component",
                     **kw)[0].block_bytes == 12 * KV * 1_056 + 36 * (CONV + SSM) + 1


@settings(max_examples=200, deadline=None)
@given(block_size=st.integers(1, 3000), alignment=st.integers(1, 256),
       budget=st.integers(0, 10**12), planner=st.sampled_from(["packed", "per-component"]))
def test_sweeps_agree_with_full_plans(block_size, alignment, budget, planner):
    comps = QWEN35.components()
    (point,) = sweep_block_sizes(comps, [block_size], budget_bytes=budget, alignment=alignment,
                                 planner=planner)
    (same,) = sweep_budgets(comps, [budget], block_size=block_size, alignment=alignment,
                            planner=planner)
    assert point == same
    try:
        a = analyze(comps, block_size=block_size, alignment=alignment, budget_bytes=budget,
                    planner=planner)
    except ValueError:
        assert not point.fits and point.token_slots == 0
        return
    t = a.totals
    assert point.fits
    assert (point.block_size, point.block_bytes, point.num_blocks, point.token_slots,
            point.unused_bytes, point.kv_history_bytes, point.state_bytes) == (
        t.block_size, t.block_bytes, t.num_blocks, t.token_slots, t.unused_bytes,
        t.kv_history_bytes, t.state_bytes)


def test_sweep_errors():
    with pytest.raises(ValueError, match="block_sizes is empty"):
        sweep_block_sizes(QWEN35.components(), [], budget_bytes=10)
    with pytest.raises(ValueError, match=r"budgets\[1\] -1 must not be negative: give 0 or more"):
        sweep_budgets(QWEN35.components(), [1, -1], block_size=16)
    # the caps every layout shares (units.MAX_BYTES, MAX_TOKENS), as run_strategy applies them
    with pytest.raises(ValueError, match=r"budgets\[0\] a 401-digit number is too large"):
        sweep_budgets(QWEN35.components(), [10**400], block_size=16)
    with pytest.raises(ValueError, match=r"block_sizes\[0\] 1,099,511,627,777 is too large"):
        sweep_block_sizes(QWEN35.components(), [2**40 + 1], budget_bytes=10)
    with pytest.raises(ValueError, match="budget_bytes a 401-digit number is too large"):
        analyze(QWEN35.components(), block_size=16, budget_bytes=10**400)
    with pytest.raises(ValueError, match=r"alignment 1,099,511,627,777 is too large"):
        analyze(QWEN35.components(), block_size=16, budget_bytes=2**30, alignment=2**40 + 1)
