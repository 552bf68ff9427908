"""flatkv.plan: the pinned numbers of SPEC.md §1 and issue #2, derived by hand, and its errors."""

from __future__ import annotations

import math

import pytest

from flatkv import plan
from flatkv.patterns import parse_layer_pattern
from flatkv.plan import ComponentSpec

# Qwen3.5-like: 12 x (3 linear + 1 full). KV 2 x 2 heads x 256 x 2 B; conv (2*128*16 + 128*32)
# x 3 x 2 B; ssm 32 x 128 x 128 x 4 B.
KV = 2 * 2 * 256 * 2
CONV = (2 * 128 * 16 + 128 * 32) * 3 * 2
SSM = 32 * 128 * 128 * 4
QWEN35 = parse_layer_pattern("(3*linear_attention,full_attention)*12")


def qwen35(**kw):
    return dict(layer_types=QWEN35, kv_bytes_per_slot=KV,
                state_const_bytes={"conv": CONV, "ssm": SSM}, **kw)


def test_spec_byte_counts():
    assert (KV, CONV, SSM) == (2_048, 49_152, 2_097_152)
    assert math.ceil((CONV + SSM) / KV) == 1_048


@pytest.mark.parametrize(
    ("block_size", "alignment", "expected"),
    [(64, None, 1_088), (64, 16, 1_056), (2_048, None, 2_048), (1_048, None, 1_048),
     (1_047, 1, 1_048)],
)
def test_equalized_block_size_pins(block_size, alignment, expected):
    p = plan.equalized_block_size(**qwen35(block_size=block_size, alignment=alignment))
    assert p == expected


def test_linear_row_with_two_state_components():
    # 1 KiB/slot KV, 40 KiB conv + 60 KiB ssm in one linear row: needs 100 slots; alignment 4.
    comps = [
        ComponentSpec("full_attention", 0, "kv", 1024, 0),
        ComponentSpec("linear_attention", 0, "conv", 0, 40 * 1024),
        ComponentSpec("linear_attention", 0, "ssm", 0, 60 * 1024),
    ]
    geo = plan.solve_page_geometry(comps, block_size=16, alignment=4)
    assert (geo.block_size, geo.block_bytes) == (100, 100 * 1024)


def test_plan_tensors_qwen35_by_hand():
    comps = plan.components_from_layers(**qwen35())
    budget = 80 * 10**9
    p = plan.plan_tensors(comps, block_size=64, alignment=16, budget_bytes=budget)
    # P = 1,056; slots 0..11 hold [conv | ssm] of linear layer j and the kv row of full layer j;
    # slots 12..35 hold only linear layer j's state row.
    kv_row = KV * 1_056
    state_row = CONV + SSM
    block_bytes = 12 * (state_row + kv_row) + 24 * state_row
    assert p.geometry.block_size == 1_056
    assert p.geometry.block_bytes == block_bytes == 103_219_200
    assert p.geometry.num_blocks == budget // block_bytes == 775
    assert len(p.tensors) == 36
    assert p.tensors[0].nbytes == 775 * (state_row + kv_row)
    assert p.tensors[35].nbytes == 775 * state_row
    b = p.tensors[0].bindings
    assert [(x.group_id, x.layer, x.component, x.nbytes_per_block, x.row_offset) for x in b] == [
        ("linear_attention", 0, "conv", CONV, 0),
        ("linear_attention", 0, "ssm", SSM, CONV),
        ("full_attention", 0, "kv", kv_row, 0),
    ]
    # in the slot row the kv row starts where the state row [conv | ssm] ends
    assert plan.slot_offsets(p.tensors[0]) == (0, CONV, CONV + SSM)
    assert plan.slot_offsets(p.tensors[35]) == (0, CONV)


def test_plan_component_tensors_by_hand():
    comps = plan.components_from_layers(**qwen35())
    p = plan.plan_component_tensors(comps, block_size=64, budget_bytes=10**10,
                                    reserved_bytes_per_block=1000)
    # P stays 64 (this planner is given P); a block: 12 x 2,048 x 64 + 36 x 2,146,304 + 1,000
    # = 1,572,864 + 77,266,944 + 1,000 = 78,840,808 B; 10**10 // that = 126 (127 would take
    # 10,012,782,616 B)
    per_block = 12 * KV * 64 + 36 * (CONV + SSM) + 1000
    assert p.geometry == plan.BlockGeometry(64, per_block, 10**10 // per_block)
    assert (per_block, p.geometry.num_blocks) == (78_840_808, 126)
    # one tensor per component in layer order, each 126 rows: conv 126 x 49,152 = 6,193,152 B,
    # ssm 126 x 2,097,152 = 264,241,152 B, kv 126 x 2,048 x 64 = 16,515,072 B
    expected, seen = [], {"linear_attention": 0, "full_attention": 0}
    for label in QWEN35:
        j = seen[label]
        seen[label] += 1
        expected += ([(f"flat_linear_attention_{j}_conv", 6_193_152),
                      (f"flat_linear_attention_{j}_ssm", 264_241_152)]
                     if label == "linear_attention" else [(f"flat_full_attention_{j}_kv",
                                                           16_515_072)])
    assert [(t.name, t.nbytes) for t in p.tensors] == expected and len(expected) == 12 + 36 * 2
    # the tensors take 126 x 78,839,808 = 9,933,815,808 B: the reserved rows 126,000 B and
    # 66,058,192 B unused are the rest of the budget
    assert sum(t.nbytes for t in p.tensors) == 9_933_815_808 == 10**10 - 126_000 - 66_058_192


def test_state_rows_without_linear_row_raise():
    comps = [ComponentSpec("linear_attention", 0, "ssm", 0, 100)]
    with pytest.raises(ValueError, match="a KV history row, and this model has none"):
        plan.solve_page_geometry(comps, block_size=16, alignment=16)


def test_components_from_layers_refuses_a_string_or_no_mapping():
    with pytest.raises(ValueError, match="layer_types is 'full_attention': give a list"):
        plan.components_from_layers(layer_types="full_attention", kv_bytes_per_slot=1,
                                    state_const_bytes={})
    with pytest.raises(ValueError, match="state_const_bytes is \\[1\\]: give a mapping"):
        plan.components_from_layers(layer_types=["linear_attention"], kv_bytes_per_slot=0,
                                    state_const_bytes=[1])


def test_row_mixing_linear_and_constant_raises():
    comps = [ComponentSpec("g", 0, "kv", 8, 0), ComponentSpec("g", 0, "ssm", 0, 100)]
    with pytest.raises(ValueError, match=r"row \(g, layer 0\) mixes linear and constant"):
        plan.solve_page_geometry(comps, block_size=16, alignment=16)


def test_occurrence_index_and_state_const_bytes():
    assert plan.occurrence_index(["a", "b", "a", "a", "b"]) == [0, 0, 1, 2, 1]

    class DType:
        def __init__(self, itemsize):
            self.itemsize = itemsize

    assert plan.state_const_bytes((8192, 3), DType(2), (32, 128, 128), DType(4)) == {
        "conv": 8192 * 3 * 2, "ssm": 32 * 128 * 128 * 4}
    assert plan.state_const_bytes([4, 2], 2, [3], 1) == {"conv": 16, "ssm": 3}


def test_huge_numbers_stay_exact():
    # Past 2**53 a float ceil would be wrong; the equalizer uses integer arithmetic.
    big = 2**80 + 1
    comps = [ComponentSpec("f", 0, "kv", 1, 0), ComponentSpec("s", 0, "ssm", 0, big)]
    geo = plan.solve_page_geometry(comps, block_size=1, alignment=3)
    # 4 = 1 (mod 3), so 2**80 = 4**40 = 1 and big = 2 (mod 3): the multiple of 3 at or above
    # big is big + 1 = 2**80 + 2 = 1,208,925,819,614,629,174,706,178 slots of 1 B, and the
    # page row max(1 x P, big) is P (no budget here: num_blocks keeps its default 0)
    assert (geo.block_size, geo.block_bytes, geo.num_blocks) == (
        2**80 + 2, 1_208_925_819_614_629_174_706_178, 0)
    # aligned to 1, P is big itself: float(big) is 2**80 (big needs 81 bits), one slot short
    exact = plan.solve_page_geometry(comps, block_size=1, alignment=1)
    assert (exact.block_size, exact.block_bytes) == (2**80 + 1, 1_208_925_819_614_629_174_706_177)


# --------------------------------------------------------------------------------------------
# Clear errors: ValueError naming the field, the value and the fix.

GOOD = [ComponentSpec("full_attention", 0, "kv", 4096, 0)]


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: plan.plan_tensors(GOOD, block_size=0, alignment=16, budget_bytes=10**9),
         "block_size 0 must be positive: give 1 or more"),
        (lambda: plan.plan_tensors(GOOD, block_size=16, alignment=-4, budget_bytes=10**9),
         "alignment -4 must be positive: give 1 or more"),
        (lambda: plan.plan_tensors(GOOD, block_size=16.0, alignment=16, budget_bytes=10**9),
         r"block_size 16\.0 \(float\) must be a whole number: give 1 or more"),
        (lambda: plan.plan_tensors(GOOD, block_size=True, alignment=16, budget_bytes=10**9),
         r"block_size True \(bool\) must be a whole number: give 1 or more"),
        (lambda: plan.plan_tensors([], block_size=16, alignment=16, budget_bytes=10**9),
         "components is empty"),
        (lambda: plan.plan_tensors([ComponentSpec("g", 0, "kv", -1, 0)], block_size=16,
                                   alignment=16, budget_bytes=10**9),
         r"components\[0\].bytes_per_slot -1 must not be negative: give 0 or more"),
        (lambda: plan.plan_tensors([ComponentSpec("g", 0, "x", 1, 1)], block_size=16,
                                   alignment=16, budget_bytes=10**9),
         "exactly one of them must be positive"),
        (lambda: plan.plan_tensors([ComponentSpec("g", 0, "x", 0, 0)], block_size=16,
                                   alignment=16, budget_bytes=10**9),
         "exactly one of them must be positive"),
        (lambda: plan.plan_tensors(GOOD * 2, block_size=16, alignment=16, budget_bytes=10**9),
         r"repeats \(group, layer, component\)"),
        (lambda: plan.plan_tensors(GOOD, block_size=16, alignment=16, budget_bytes=65536 * 2 - 1),
         "the budget of 131,071 B holds 1 block of 65,536 B.* give a budget of at least 131,072 B"),
        (lambda: plan.plan_tensors(GOOD, block_size=16, alignment=16, budget_bytes=-5),
         "budget_bytes -5 must not be negative: give 0 or more"),
        (lambda: plan.plan_tensors(GOOD, block_size=16, alignment=16, budget_bytes=1e12),
         r"budget_bytes 1000000000000\.0 \(float\) must be a whole number: give 0 or more"),
        (lambda: plan.plan_component_tensors(GOOD, block_size=16, budget_bytes=10,
                                             reserved_bytes_per_block=0),
         "holds 0 block"),
        (lambda: plan.plan_component_tensors(GOOD, block_size=16, budget_bytes=10**9,
                                             reserved_bytes_per_block=-1),
         "reserved_bytes_per_block -1 must not be negative: give 0 or more"),
        (lambda: plan.components_from_layers(layer_types=[], kv_bytes_per_slot=1,
                                             state_const_bytes={}), "layer_types is empty"),
        (lambda: plan.components_from_layers(layer_types=["full_attention"], kv_bytes_per_slot=0,
                                             state_const_bytes={}),
         "kv_bytes_per_slot 0 must be positive: give 1 or more"),
        (lambda: plan.components_from_layers(layer_types=["linear_attention"],
                                             kv_bytes_per_slot=0, state_const_bytes={}),
         "state_const_bytes is empty"),
        (lambda: plan.state_const_bytes((0, 3), 2, (1,), 2), r"conv_shape\[0\] 0 must be "
                                                             r"positive: give 1 or more"),
        (lambda: plan.state_const_bytes((1, 3), object(), (1,), 2), "conv_dtype itemsize"),
        (lambda: plan.state_const_bytes((4,), 2.5, None, None),
         r"conv_dtype itemsize 2\.5 \(float\) must be a whole number"),
        (lambda: plan.equalize(GOOD, block_size=16, alignment=16).block_size_at(0),
         "alignment 0 must be positive: give 1 or more"),
        (lambda: plan.equalize_rows([], 16, 16), "rows is empty"),
        (lambda: plan.slot_rows({}), "groups is empty"),
    ],
)
def test_bad_input_raises_clear_value_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_huge_budget_does_not_hang():
    p = plan.plan_tensors(GOOD, block_size=16, alignment=16, budget_bytes=10**30)
    assert p.geometry.num_blocks == 10**30 // (4096 * 16)


def test_equalizer_steps_say_the_rounding_in_words():
    # a state row of 4,096 B over history rows of 1,024 B a slot needs 4 slots
    rows = [ComponentSpec("full_attention", 0, "kv", 1024, 0),
            ComponentSpec("linear_attention", 0, "ssm", 0, 4096)]
    one = plan.equalize(rows, block_size=1, alignment=3).steps()
    assert one[0] == "Requested block_size 1 token slot, alignment 3."
    # ceil(4,096 / 1,024) = 4, rounded to 6: 2 slots of rounding
    assert one[-1] == "4 > 1: round up to a multiple of 3 -> P = 6 (2 token slots of rounding)."
    # aligned to 2, 4 is a multiple already: no "0 token slots of rounding"
    exact = plan.equalize(rows, block_size=2, alignment=2).steps()
    assert exact[0] == "Requested block_size 2 token slots, alignment 2."
    assert exact[-1] == "4 > 2: round up to a multiple of 2 -> P = 4 (a multiple already: no " \
                        "rounding)."
    assert plan.equalize(rows, block_size=1, alignment=5).steps()[-1].endswith(
        "P = 5 (1 token slot of rounding).")


def test_state_bytes_no_layer_keeps_are_refused_not_dropped():
    # "linear" is not a state label: its layers would be KV history and the state bytes lost
    with pytest.raises(ValueError, match=(
            r"state_const_bytes names 'conv', 'ssm' but no layer is 'linear_attention' \(the "
            r"labels are full, linear\): label the state layers linear_attention, or give \{\}")):
        plan.components_from_layers(layer_types=["linear", "full"], kv_bytes_per_slot=2048,
                               state_const_bytes={"conv": 49152, "ssm": 2097152})
    assert len(plan.components_from_layers(layer_types=["full"], kv_bytes_per_slot=2048,
                                           state_const_bytes={})) == 1
