"""Two-level pages ("LCM" / Jenga, SPEC section 3.4).

All groups share one logical block of P tokens. The physical unit is a parent block of B bytes;
while in use a parent is bound to one group g and holds K_g of that group's pages, each page
packing all of g's layers for P tokens (``payload_g`` bytes):

    K_g = max(1, largest payload // payload_g)
    B   = align(max_g K_g * payload_g)            (multiple of lcm_alignment_bytes)
    padding_g = (B / K_g - payload_g) / payload_g  (kept under lcm_padding_bound)
    parents   = budget // B - 1                    (one null parent)

State does not inflate P here (a state page is just a bigger payload), so P is the requested
block size when its padding stays under the bound; otherwise the smallest larger multiple of the
alignment that keeps it there (up to 256 candidates). No dead weight: a parent holds only its
group's pages. The slack ``B - K_g * payload_g`` of each parent is row padding; the null parent
and the division remainder are unused.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from flatkv.plan import cdiv
from flatkv.profile import CacheProfile, group_name
from flatkv.strategies.base import (
    PADDING_BOUND_RANGE,
    StrategyOptions,
    StrategyResult,
    UnitUse,
    budget_too_small,
    n,
    no_attention_layer,
    not_applicable,
    ratio_text,
    unit_parts,
)
from flatkv.strategies.paged import (
    finish_paged,
    group_page,
    history_or_state,
    label_groups,
)
from flatkv.units import count_text, percent_text
from flatkv.workload import PoolGroup

MAX_CANDIDATES = 256


@dataclass(frozen=True)
class ParentGeometry:
    """The two-level layout at one P."""

    block_size: int
    payloads: dict[str, int]  # group -> bytes of one page (all its layers, P tokens)
    pages_per_parent: dict[str, int]  # K_g
    parent_bytes: int  # B
    padding: dict[str, Fraction]  # (B / K_g - payload_g) / payload_g

    @property
    def worst(self) -> tuple[str, Fraction]:
        return max(self.padding.items(), key=lambda item: item[1])


def parent_geometry(
    profile: CacheProfile, block_size: int, alignment_bytes: int
) -> ParentGeometry:
    """SPEC 3.4's parent at P = ``block_size``: each group's payload (its page), K_g, B and the
    padding of each group (the module docstring's formulas)."""
    payloads = {g.name: group_page(profile, g, block_size)[0] for g in label_groups(profile)}
    largest = max(payloads.values())
    k = {name: max(1, largest // p) for name, p in payloads.items()}
    b = alignment_bytes * cdiv(max(k[name] * p for name, p in payloads.items()), alignment_bytes)
    padding = {name: Fraction(b, k[name] * p) - 1 for name, p in payloads.items()}
    return ParentGeometry(block_size, payloads, k, b, padding)


def choose_geometry(
    profile: CacheProfile, options: StrategyOptions
) -> tuple[ParentGeometry, bool, int]:
    """The smallest candidate P whose worst padding meets the bound; else the best one seen.

    Returns (geometry, bound met, candidates tried).
    """
    bound = options.lcm_padding_bound
    step = options.effective_alignment
    candidates = [options.block_size]
    k = options.block_size // step + 1
    while len(candidates) < MAX_CANDIDATES:
        candidates.append(step * k)
        k += 1
    best = None
    for tried, p in enumerate(candidates, start=1):
        geo = parent_geometry(profile, p, options.lcm_alignment_bytes)
        if geo.worst[1] <= bound:
            return geo, True, tried
        if best is None or geo.worst[1] < best.worst[1]:
            best = geo
    assert best is not None
    return best, False, len(candidates)


def _bound_unmet(best: ParentGeometry, tried: int, options: StrategyOptions) -> str:
    """Why no candidate P serves (the best one tried pads a group past the bound), and the
    option that would let one: the bound, or the parent alignment where even the largest
    bound accepted would not."""
    worst, pad = best.worst
    return (f"no P among {tried} candidates keeps every group's padding under "
            f"{ratio_text(options.lcm_padding_bound)}: the best, P = {n(best.block_size)}, pads "
            f"{worst} by {percent_text(pad)}; " + (
                "raise the two-level padding bound (--lcm-padding-bound) to accept it"
                if pad <= PADDING_BOUND_RANGE[1] else
                f"more than the padding bound can accept ({ratio_text(PADDING_BOUND_RANGE[1])}): "
                f"lower the parent alignment (--lcm-alignment-bytes, "
                f"{options.lcm_alignment_bytes:,} B)"))


def run_lcm(
    profile: CacheProfile, *, budget_bytes: int, context_tokens: int | None,
    options: StrategyOptions,
) -> StrategyResult:
    """Two-level pages (SPEC 3.4): the smallest candidate P whose parents pad every group under
    ``lcm_padding_bound``, ``budget // B - 1`` parents; refused for a state-only model, where no
    P meets the bound, or where fewer than one parent is left beside the null one."""
    name = "lcm"
    if not profile.has_attention:
        return no_attention_layer(
            name, budget_bytes, "one state group has nothing to pack two-level",
            profile_name=profile.name, context_tokens=context_tokens,
        )
    geo, met, tried = choose_geometry(profile, options)
    bound = options.lcm_padding_bound
    if not met:
        return not_applicable(name, budget_bytes, _bound_unmet(geo, tried, options),
                              profile_name=profile.name, context_tokens=context_tokens)
    b = geo.parent_bytes
    total_parents = budget_bytes // b
    parents = total_parents - 1
    if parents < 1:
        return budget_too_small(
            name, budget_bytes,
            holds=f"{count_text(total_parents, 'parent block')} of {n(b)} B and one is the null "
            "parent",
            least_bytes=2 * b, profile_name=profile.name, context_tokens=context_tokens,
        )
    uses = []
    for g in label_groups(profile):
        k = geo.pages_per_parent[g.name]
        parts = unit_parts(row_padding=b - k * geo.payloads[g.name])
        parts[history_or_state(g.kind)] = k * geo.payloads[g.name]
        uses.append(UnitUse(PoolGroup(g.name, g.kind, g.layers, k), parts))

    p = geo.block_size
    largest = max(geo.payloads.values())
    if p == options.block_size:
        why = (
            f"P = {n(p)}, the requested block size: state does not inflate P in a two-level "
            f"layout, and every group's padding is at most {ratio_text(bound)}"
        )
    else:
        why = (
            f"P = {n(p)}: the requested {options.block_size} leaves a group's padding over "
            f"{ratio_text(bound)}; {n(p)} is the smallest multiple of "
            f"{options.effective_alignment} that keeps every group under it"
        )
    formulas = [f"P = {n(p)} (tried {count_text(tried, 'candidate')})"]
    for g in uses:
        gname = g.group.name
        payload, k = geo.payloads[gname], geo.pages_per_parent[gname]
        formulas.append(
            f"{group_name(g.group.kind, mla=profile.mla)}: payload = {n(payload)} B, "
            f"K = max(1, {n(largest)} // {n(payload)}) = {k}, "
            f"padding = ({n(b)} / {k} - {n(payload)}) / {n(payload)} = "
            f"{percent_text(geo.padding[gname])}"
        )
    formulas += [
        f"B = align(max K_g x payload_g, {options.lcm_alignment_bytes}) = {n(b)} B per parent",
        f"parents = budget // B - 1 = {n(budget_bytes)} // {n(b)} - 1 = {n(parents)} "
        "(one null parent, counted as unused)",
    ]
    extras = {
        "parent_bytes": b,
        "pages_per_parent": dict(geo.pages_per_parent),
        "payload_bytes": dict(geo.payloads),
        "padding_fraction": {k: float(v) for k, v in geo.padding.items()},
        "padding_bound": bound,
    }
    return finish_paged(
        name, profile, budget_bytes=budget_bytes, context_tokens=context_tokens, options=options,
        block_size=p, unit_bytes=b, num_units=parents, uses=uses, why_block_size=why,
        formulas=formulas, extras=extras, unit_name="parents",
    )
