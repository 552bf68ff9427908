"""Slab aliasing for equal history groups (SPEC section 3.3).

When every group is KV history with the same number of layers and the same row bytes (gpt-oss:
12 sliding + 12 full), layer j of each group can share one byte slab: a page id belongs to one
group at a time, so a block id needs one group's rows, not every group's. Same P as flat (no
state row to equalize against), no dead weight, and the page ids of the flat layout multiply by
the number of groups.
"""

from __future__ import annotations

from flatkv.plan import LINEAR_ATTENTION
from flatkv.profile import CacheProfile, group_name
from flatkv.strategies.base import (
    StrategyOptions,
    StrategyResult,
    UnitUse,
    budget_too_small,
    kv_sizes_text,
    n,
    not_applicable,
    unit_parts,
)
from flatkv.strategies.paged import finish_paged, label_groups
from flatkv.units import count_text

# Where a reason sends the reader: the layout that pages unequal groups, by its id, which the
# CLI's columns and --strategy take (and run_strategy). The app names it by its title
# (strategy_notes.reason_text): "see two-level pages, lcm in the CLI", one text for both, named
# the CLI from inside it.
TWO_LEVEL_HINT = "unequal groups: see lcm"


def aliasing_blocker(profile: CacheProfile) -> str:
    """Why slab aliasing does not apply to ``profile`` ("" when it does): prose, its groups
    named by kind as the pages name them (``group_name``: "full attention (MLA)"), not by the
    planner's ids, which only the plan's JSON keys."""
    groups = label_groups(profile)
    if profile.has_state:
        return (
            "the model has state layers: aliasing needs every group to be KV history with rows "
            "of one size, and a state row is constant per page while a history row grows with P"
            + (f" ({TWO_LEVEL_HINT})" if profile.has_attention else "")
        )
    if len(groups) < 2:
        return (
            f"one cache group ({group_name(groups[0].name, mla=profile.mla)}, "
            f"{groups[0].layers} layers): nothing to alias, flat already uses every row of every "
            "block id"
        )
    if sizes := kv_sizes_text(profile):
        return (f"{sizes}: layer j of each group shares a slab only when their rows are of one "
                f"size ({TWO_LEVEL_HINT})")
    layers = {group_name(g.name, mla=profile.mla): g.layers for g in groups}
    if len(set(layers.values())) > 1:
        text = ", ".join(f"{k} {v}" for k, v in layers.items())
        return (
            f"groups have unequal layer counts ({text}): layer j of each group shares a slab "
            f"only when every group has the same number of layers ({TWO_LEVEL_HINT})"
        )
    return ""


def run_aliased(
    profile: CacheProfile, *, budget_bytes: int, context_tokens: int | None,
    options: StrategyOptions,
) -> StrategyResult:
    """Slab aliasing (SPEC 3.3): a block is one group's rows at the requested P, so the budget
    holds about flat's page ids times the number of groups; refused where ``aliasing_blocker``
    says why."""
    name = "aliased"
    blocker = aliasing_blocker(profile)
    if blocker:
        return not_applicable(name, budget_bytes, blocker, profile_name=profile.name,
                              context_tokens=context_tokens)
    groups = label_groups(profile)
    assert all(g.kind != LINEAR_ATTENTION for g in groups)
    p = options.block_size
    layers = groups[0].layers
    row = p * profile.kv_bytes_per_slot
    block_bytes = layers * row
    num_blocks = budget_bytes // block_bytes
    if num_blocks <= 1:
        return budget_too_small(
            name, budget_bytes, holds=f"{count_text(num_blocks, 'block')} of {n(block_bytes)} B",
            least_bytes=2 * block_bytes, profile_name=profile.name,
            context_tokens=context_tokens,
        )
    uses = [UnitUse(g, unit_parts(kv_history=block_bytes)) for g in groups]
    formulas = [
        f"P = block_size = {n(p)} (no state row to equalize against)",
        f"block_bytes = one group's rows = {layers} x {n(p)} x {n(profile.kv_bytes_per_slot)} = "
        f"{n(block_bytes)} B per page id (flat: {len(groups)} x that)",
        f"num_blocks = budget // block_bytes = {n(budget_bytes)} // {n(block_bytes)} = "
        f"{n(num_blocks)}",
    ]
    why = (
        f"P = {n(p)}, the requested block size: every group is KV history, so nothing inflates P"
    )
    return finish_paged(
        name, profile, budget_bytes=budget_bytes, context_tokens=context_tokens, options=options,
        block_size=p, unit_bytes=block_bytes, num_units=num_blocks, uses=uses,
        why_block_size=why, formulas=formulas,
        extras={"aliased_groups": len(groups), "slabs": layers},
    )
