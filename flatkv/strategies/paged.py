"""The common tail of every paged strategy: units shared by groups -> a StrategyResult.

A paged layout is ``num_units`` units of ``unit_bytes`` bytes (page ids of one page-id space, or
parent blocks of a two-level layout) shared by groups; ``uses`` says how a unit's bytes divide
when each group owns it. From that this module derives capacity, concurrency, the budget
breakdown (ownership convention in ``base``), the SPEC section 3.5 workload answer and the
formulas that explain them, identically for every strategy.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from flatkv.plan import LINEAR_ATTENTION
from flatkv.profile import CacheProfile
from flatkv.strategies.base import (
    StrategyOptions,
    StrategyResult,
    UnitUse,
    n,
    ownership_text,
    ownership_weights,
    request_pages,
    request_pages_text,
    unit_breakdown,
)
from flatkv.workload import PagePool, PoolGroup, cdiv, max_requests


def label_groups(profile: CacheProfile) -> list[PoolGroup]:
    """One group per layer label, in order of first appearance (the flat planner's groups)."""
    counts: dict[str, int] = {}
    for label in profile.layer_types:
        counts[label] = counts.get(label, 0) + 1
    return [PoolGroup(label, label, k) for label, k in counts.items()]


def pages_side_by_side(num_units: int, groups: Sequence[PoolGroup]) -> int:
    """Largest N such that every group can hold N pages: ``sum ceil(N / K_g) <= num_units``."""
    if all(g.pages_per_unit == 1 for g in groups):
        return num_units // len(groups)
    lo, hi = 0, num_units * max(g.pages_per_unit for g in groups) + 1  # fits(lo), not fits(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if sum(cdiv(mid, g.pages_per_unit) for g in groups) <= num_units:
            lo = mid
        else:
            hi = mid
    return lo


def finish_paged(
    strategy: str,
    profile: CacheProfile,
    *,
    budget_bytes: int,
    context_tokens: int | None,
    options: StrategyOptions,
    block_size: int,
    unit_bytes: int,
    num_units: int,
    uses: Sequence[UnitUse],
    why_block_size: str,
    formulas: Sequence[str],
    extras: dict[str, object] | None = None,
    unit_name: str = "page ids",
    capacity_note: str = "every group holds the same pages",
) -> StrategyResult:
    """Assemble the result of a paged layout (see the module docstring)."""
    groups = [u.group for u in uses]
    window = profile.sliding_window
    lines = list(formulas)
    extras = dict(extras or {})

    capacity = None
    if profile.has_attention:
        per_group = pages_side_by_side(num_units, groups)
        capacity = per_group * block_size
        if all(g.pages_per_unit == 1 for g in groups):
            lines.append(
                f"capacity_tokens = num_blocks // groups x P = {n(num_units)} // {len(groups)} "
                f"x {n(block_size)} = {n(capacity)} ({capacity_note})"
            )
        else:
            lines.append(
                f"capacity_tokens = N x P = {n(per_group)} x {n(block_size)} = {n(capacity)}, "
                "N the most pages every group holds side by side: sum over groups of "
                f"ceil(N / K_g) <= {n(num_units)} {unit_name}"
            )
    else:
        lines.append("capacity_tokens: none, a model without attention keeps no token history")

    numerator = denominator = None
    per_request = None
    if context_tokens is not None:
        per_request = {
            g.name: request_pages(g.kind, context_tokens, block_size, options, window)
            for g in groups
        }
        need = sum((Fraction(per_request[g.name], g.pages_per_unit) for g in groups), Fraction(0))
        numerator, denominator = num_units * need.denominator, need.numerator
        terms = " + ".join(
            f"{n(per_request[g.name])} {g.name}"
            + ("" if g.pages_per_unit == 1 else f" / {g.pages_per_unit}")
            for g in groups
        )
        lines.append(
            f"max_concurrency = {unit_name} / {unit_name} per request = {n(num_units)} / "
            f"({terms}) = {numerator / denominator:.2f} at {n(context_tokens)} tokens"
        )
        for kind in dict.fromkeys(g.kind for g in groups):
            lines.append(
                f"  pages per request, {kind}: "
                + request_pages_text(kind, context_tokens, block_size, options, window)
            )

    breakdown, owned = unit_breakdown(
        budget_bytes=budget_bytes, unit_bytes=unit_bytes, num_units=num_units, uses=uses,
        weights=ownership_weights(groups, per_request),
    )
    lines.append(ownership_text(uses, owned, unit_name, context_tokens is not None))
    for use in uses:
        dead = use.parts.get("dead_weight", 0)
        if dead:
            lines.append(
                f"dead_weight of a {use.group.name} page id: {n(dead)} B of other groups' rows"
            )
    lines.append(f"unused = budget - {unit_name} x block_bytes = {n(budget_bytes)} - "
                 f"{n(num_units)} x {n(unit_bytes)} = {n(budget_bytes - num_units * unit_bytes)}")

    pool = PagePool(num_units, block_size, tuple(groups), window)
    if context_tokens is not None and not profile.has_attention:
        lines.append("workload (SPEC 3.5): not computed, a state-only model has no history pages")
    elif context_tokens is not None:
        fits = max_requests(
            pool, context_tokens=context_tokens, scheduled_tokens=options.max_batched_tokens,
            margin=options.margin,
        )
        extras["workload_max_requests"] = fits
        lines.append(
            f"workload (SPEC 3.5, prefix-cache snapshots, dummy page, margin {options.margin}): "
            f"at most {n(fits)} request(s) of {n(context_tokens)} tokens fit"
        )
    extras.setdefault("groups", [
        {"name": g.name, "kind": g.kind, "layers": g.layers, "pages_per_unit": g.pages_per_unit}
        for g in groups
    ])
    extras["owned_units"] = {g.name: k for g, k in zip(groups, owned, strict=True)}
    return StrategyResult(
        strategy=strategy,
        budget_bytes=budget_bytes,
        applies=True,
        profile_name=profile.name,
        context_tokens=context_tokens,
        block_size=block_size,
        block_bytes=unit_bytes,
        num_blocks=num_units,
        capacity_tokens=capacity,
        concurrency_numerator=numerator,
        concurrency_denominator=denominator,
        why_block_size=why_block_size,
        breakdown=breakdown,
        formulas=tuple(lines),
        extras=extras,
        pool=pool,
    )


def history_or_state(kind: str) -> str:
    """The breakdown category of a group's real rows."""
    return "state" if kind == LINEAR_ATTENTION else "kv_history"
