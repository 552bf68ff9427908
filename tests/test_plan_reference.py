"""Differential test: flatkv.plan against the reference planner on thousands of generated inputs.

Both must give identical geometry, tensors and bindings, or both raise ValueError. Values stay
below 2**53 because the reference rounds P with a float ceil; flatkv stays exact beyond that
(see test_plan.test_huge_numbers_stay_exact).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference_planner import load_reference

from flatkv import plan

REF = load_reference()

GROUPS = ["full_attention", "linear_attention", "sliding_attention", "g3"]


@st.composite
def component_sets(draw):
    """Rows of random groups and layers; mostly valid, sometimes a mixed or state-only set."""
    rows = draw(st.lists(
        st.tuples(st.sampled_from(GROUPS), st.integers(0, 40)), min_size=1, max_size=24,
        unique=True))
    mixed_allowed = draw(st.booleans()) and draw(st.booleans())
    out = []
    for gid, layer in rows:
        kind = draw(st.sampled_from(["linear", "const", "mixed"] if mixed_allowed
                                    else ["linear", "const"]))
        names = draw(st.lists(st.sampled_from(["kv", "conv", "ssm", "k", "v"]), min_size=1,
                              max_size=3, unique=True))
        for i, name in enumerate(names):
            linear = kind == "linear" or (kind == "mixed" and i == 0)
            if linear:
                out.append((gid, layer, name, draw(st.integers(1, 2**16)), 0))
            else:
                out.append((gid, layer, name, 0, draw(st.integers(1, 2**24))))
    return draw(st.permutations(out))


def _both(ours_call, ref_call):
    """Run both; return (ours, ref) results or ('raise', 'raise')."""
    try:
        ours = ours_call()
    except ValueError:
        ours = "raise"
    try:
        ref = ref_call()
    except ValueError:
        ref = "raise"
    return ours, ref


def _plain(p):
    if isinstance(p, str):
        return p
    g = p.geometry
    return ((g.block_size, g.block_bytes, g.num_blocks),
            [(t.name, t.nbytes, [(b.slot, b.group_id, b.layer, b.component, b.nbytes_per_block,
                                  b.row_offset) for b in t.bindings]) for t in p.tensors])


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs=component_sets(), block_size=st.one_of(st.integers(1, 64), st.integers(1, 4096)),
       alignment=st.integers(1, 512),
       budget_factor=st.integers(0, 5000), budget_extra=st.integers(0, 10**6))
def test_plan_tensors_matches_reference(specs, block_size, alignment, budget_factor, budget_extra):
    ours_c = [plan.ComponentSpec(*s) for s in specs]
    ref_c = [REF.ComponentSpec(*s) for s in specs]
    # A budget around a multiple of one block's bytes, so that both "fits" and "too small" occur.
    try:
        block_bytes = plan.plan_tensors(ours_c, block_size=block_size, alignment=alignment,
                                        budget_bytes=2**200).geometry.block_bytes
    except ValueError:
        block_bytes = 1
    budget = block_bytes * (budget_factor % 7) + budget_extra if budget_factor % 3 else \
        block_bytes * budget_factor + budget_extra

    ours, ref = _both(
        lambda: plan.solve_page_geometry(ours_c, block_size=block_size, alignment=alignment),
        lambda: REF.solve_page_geometry(ref_c, block_size=block_size, alignment=alignment))
    assert (ours if ours == "raise" else (ours.block_size, ours.block_bytes, ours.num_blocks)) == \
        (ref if ref == "raise" else (ref.block_size, ref.block_bytes, ref.num_blocks))

    ours, ref = _both(
        lambda: plan.plan_tensors(ours_c, block_size=block_size, alignment=alignment,
                                  budget_bytes=budget),
        lambda: REF.plan_tensors(ref_c, block_size=block_size, alignment=alignment,
                                 budget_bytes=budget))
    assert _plain(ours) == _plain(ref)


@settings(max_examples=600, deadline=None)
@given(specs=component_sets(), block_size=st.integers(1, 4096), reserved=st.integers(0, 10**7),
       blocks=st.integers(0, 3000), budget_extra=st.integers(0, 10**6))
def test_plan_component_tensors_matches_reference(specs, block_size, reserved, blocks,
                                                  budget_extra):
    # A budget around a whole number of blocks of every row, so that most inputs plan (a budget
    # drawn with no tie to the rows left four in five too small for both planners)
    block_bytes = sum(per_slot * block_size + const for *_, per_slot, const in specs) + reserved
    budget = block_bytes * blocks + budget_extra
    ours, ref = _both(
        lambda: plan.plan_component_tensors([plan.ComponentSpec(*s) for s in specs],
                                            block_size=block_size, budget_bytes=budget,
                                            reserved_bytes_per_block=reserved),
        lambda: REF.plan_component_tensors([REF.ComponentSpec(*s) for s in specs],
                                           block_size=block_size, budget_bytes=budget,
                                           reserved_bytes_per_block=reserved))
    assert _plain(ours) == _plain(ref)


LABELS = ["full_attention", "sliding_attention", "linear_attention"]


@settings(max_examples=1500, deadline=None)
@given(labels=st.lists(st.sampled_from(LABELS), min_size=1, max_size=64),
       kv=st.integers(1, 2**16),
       state=st.dictionaries(st.sampled_from(["conv", "ssm", "h"]), st.integers(1, 2**24),
                             min_size=1),
       block_size=st.integers(1, 4096),
       alignment=st.one_of(st.none(), st.integers(1, 512)))
def test_layer_level_helpers_match_reference(labels, kv, state, block_size, alignment):
    kw = dict(layer_types=labels, kv_bytes_per_slot=kv, state_const_bytes=state)
    if state and "linear_attention" not in labels:
        # the reference drops state bytes no layer keeps without a word; ours refuses them
        with pytest.raises(ValueError, match="but no layer is 'linear_attention'"):
            plan.components_from_layers(**kw)
        kw["state_const_bytes"] = {}
    assert [tuple(vars(c).values()) for c in plan.components_from_layers(**kw)] == \
        [tuple(vars(c).values()) for c in REF.components_from_layers(**kw)]
    assert plan.occurrence_index(labels) == REF.occurrence_index(labels)
    ours, ref = _both(
        lambda: plan.equalized_block_size(**kw, block_size=block_size, alignment=alignment),
        lambda: REF.equalized_block_size(**kw, block_size=block_size, alignment=alignment))
    assert ours == ref
