"""Our flat layout, two ways: packed slabs (``flat``) and one tensor per component
(``per-component``), both over one page-id space, both from the planner in ``flatkv.plan``.

Both pay the same bytes per block id (every row of every layer), so they differ in tensor count
and in the reserved bytes per-component can carry, not in capacity. In one page-id space a page
id owned by one group still has rows in every other group's tensors: that is the dead weight
the breakdown shows (ownership convention in ``flatkv.strategies.base``).
"""

from __future__ import annotations

from flatkv.plan import (
    PACKED_NEEDS_HISTORY,
    config_equalizer,
    equalize,
    group_rows,
    plan_component_tensors,
    plan_tensors,
)
from flatkv.profile import CacheProfile, group_name
from flatkv.strategies.base import (
    StrategyOptions,
    StrategyResult,
    UnitUse,
    n,
    no_attention_layer,
    not_applicable,
    unit_parts,
)
from flatkv.strategies.paged import finish_paged, group_page, history_or_state, label_groups


def _uses(profile: CacheProfile, block_size: int, block_bytes: int, reserved: int):
    """Per owning group: its own rows are kv_history or state, the rest of the block id is
    dead weight; reserved co-resident rows count as kv_history whoever owns the id."""
    uses = []
    for g in label_groups(profile):
        own, _ = group_page(profile, g, block_size)
        parts = unit_parts(dead_weight=block_bytes - own - reserved)
        parts[history_or_state(g.kind)] += own
        parts["kv_history"] += reserved
        uses.append(UnitUse(g, parts))
    return uses


def _rows_text(profile: CacheProfile, block_size: int) -> str:
    """A block's rows as a sum of each group's page, in words: "36 x 1,097,728 B of state rows +
    12 x 544 x 2,048 B of full attention rows" (a kind's own parentheses, "full attention
    (MLA)", not nested in a second pair)."""
    return " + ".join(f"{group_page(profile, g, block_size)[1]} B of "
                      f"{group_name(g.kind, mla=profile.mla)} rows"
                      for g in label_groups(profile))


def run_flat(
    profile: CacheProfile, *, budget_bytes: int, context_tokens: int | None,
    options: StrategyOptions,
) -> StrategyResult:
    """Packed slabs (reference ``plan_tensors``): slot j holds the j-th layer of every group."""
    name = "flat"
    if not profile.has_attention:
        return no_attention_layer(
            name, budget_bytes,
            PACKED_NEEDS_HISTORY,
            profile_name=profile.name, context_tokens=context_tokens,
        )
    comps = profile.components()
    alignment = options.effective_alignment
    eq = equalize(comps, block_size=options.block_size, alignment=alignment)
    try:
        plan = plan_tensors(
            comps, block_size=options.block_size, alignment=alignment, budget_bytes=budget_bytes
        )
    except ValueError as err:
        return not_applicable(name, budget_bytes, str(err), profile_name=profile.name,
                              context_tokens=context_tokens)
    geo = plan.geometry
    slots = len(plan.tensors)
    formulas = [
        eq.formula(),
        f"block_bytes = {_rows_text(profile, geo.block_size)} = {n(geo.block_bytes)} B per page id "
        f"(the sum of the {slots} slot rows)",
        f"num_blocks = budget // block_bytes = {n(budget_bytes)} // {n(geo.block_bytes)} = "
        f"{n(geo.num_blocks)}",
    ]
    return finish_paged(
        name, profile, budget_bytes=budget_bytes, context_tokens=context_tokens, options=options,
        block_size=geo.block_size, unit_bytes=geo.block_bytes, num_units=geo.num_blocks,
        uses=_uses(profile, geo.block_size, geo.block_bytes, 0),
        why_block_size=" ".join(eq.steps()), formulas=formulas,
        extras={"slots": slots, "alignment": alignment, "equalizer_needed_slots": eq.needed},
    )


def run_per_component(
    profile: CacheProfile, *, budget_bytes: int, context_tokens: int | None,
    options: StrategyOptions,
) -> StrategyResult:
    """One tensor per component (reference ``plan_component_tensors``), at the equalized P.

    The reference takes P as given; like the engine that calls it, we pass the P the equalizer
    chose for this configuration (``config_equalizer``, as analysis plans it), or the requested
    block size for a state-only model, which has no history row to equalize against.
    """
    name = "per-component"
    comps = profile.components()
    reserved = options.reserved_bytes_per_block
    rows = [r for rs in group_rows(comps).values() for r in rs]
    eq = config_equalizer(rows, options.block_size, options.effective_alignment)
    block_size = eq.block_size  # the one config-level P rule, as analysis plans it
    if profile.has_attention:
        why, p_line = " ".join(eq.steps()), eq.formula()
        why += " (the equalized P, as the engine passes it to this planner)"
    else:
        why = f"P = {n(block_size)}, the requested block size: state rows do not depend on P"
        p_line = f"P = {n(block_size)} (requested; no history row)"
    try:
        plan = plan_component_tensors(
            comps, block_size=block_size, budget_bytes=budget_bytes,
            reserved_bytes_per_block=reserved,
        )
    except ValueError as err:
        return not_applicable(name, budget_bytes, str(err), profile_name=profile.name,
                              context_tokens=context_tokens)
    geo = plan.geometry
    reserved_text = f" + {n(reserved)} reserved" if reserved else ""
    formulas = [
        p_line,
        f"block_bytes = {_rows_text(profile, block_size)}{reserved_text} = {n(geo.block_bytes)} B "
        f"per page id ({len(plan.tensors)} component tensors, no packing, no padding)",
        f"num_blocks = budget // block_bytes = {n(budget_bytes)} // {n(geo.block_bytes)} = "
        f"{n(geo.num_blocks)}",
    ]
    if reserved:
        formulas.append(
            f"kv_history includes {n(reserved)} reserved B per page id (co-resident rows outside "
            "the plan, e.g. a draft model's KV)"
        )
    return finish_paged(
        name, profile, budget_bytes=budget_bytes, context_tokens=context_tokens, options=options,
        block_size=block_size, unit_bytes=geo.block_bytes, num_units=geo.num_blocks,
        uses=_uses(profile, block_size, geo.block_bytes, reserved),
        why_block_size=why, formulas=formulas,
        extras={"tensors": len(plan.tensors), "reserved_bytes_per_block": reserved},
    )
