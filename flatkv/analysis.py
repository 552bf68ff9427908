"""What the reference planner does not tell: where each byte of a plan goes, and why P is P.

``analyze`` builds a plan (packed slabs or one tensor per component) and returns a
``PlanAnalysis``: per slot and per row the bytes of each binding and its offset in the slot row;
totals that add up to the budget exactly; the dead weight of the single page-id space per group;
and the equalizer's reasoning. ``sweep_block_sizes`` and ``sweep_budgets`` give the same headline
figures over many points without building a plan per point (geometry is closed-form once the rows
are known): library and ``bench/plan_bench.py`` API. The Budget page sweeps through
``run_strategy`` instead, so our planner and every engine's layout are counted alike.

Two kinds of "waste" are kept apart, because engineers argue about both:

* **padding to the page row**: the bytes a row would be padded with in a uniform-page layout
  (vLLM pads every page row, ``[conv | ssm | pad]``, to the widest row). Packed slabs do not
  allocate it: their slot rows are the exact sum of their bindings. It is reported per row and per
  block as what uniform pages would cost.
* **dead weight**: one block id addresses a row in every slot, so a page owned by one group
  still carries the rows of every other group. Those bytes are allocated and idle.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction

from flatkv.plan import (
    ComponentSpec,
    Equalizer,
    FlatMemoryPlan,
    TensorPlan,
    alignment_or_block_size,
    check_int,
    config_equalizer,
    equalize_rows,
    group_rows,
    plan_component_tensors,
    plan_tensors,
    slot_offsets,
)
from flatkv.units import MAX_BYTES, MAX_TOKENS

PLANNERS = ("packed", "per-component")
# Each planner -> the layout (strategies.STRATEGIES) that plans the same way, so counts its
# requests: packed slabs are the flat layout, one tensor per component the per-component one.
PLANNER_STRATEGY = {"packed": "flat", "per-component": "per-component"}


@dataclass(frozen=True)
class BindingUse:
    """One binding as it sits in its slot row."""

    slot: int
    group_id: str
    layer: int
    component: str
    offset: int  # byte offset in the slot row (row start + the binding's row_offset)
    row_offset: int  # byte offset within its (group, layer) row, as in LayerBinding
    nbytes_per_block: int
    is_state: bool


@dataclass(frozen=True)
class RowUse:
    """One (group, layer) row inside a slot row."""

    slot: int
    group_id: str
    layer: int
    offset: int  # where the row starts in the slot row
    used_bytes: int  # the sum of its bindings
    # packed planner: the widest row at P, what a uniform page would be; per-component
    # planner: the row's own bytes (each component is a tensor of its own, nothing to pad to)
    page_row_bytes: int
    bindings: tuple[BindingUse, ...]

    @property
    def padding_bytes(self) -> int:
        """Bytes a uniform-page layout would pad this row with (packed slabs allocate none)."""
        return self.page_row_bytes - self.used_bytes

    @property
    def padded_share(self) -> float:
        """Share of a uniform page row that would be padding."""
        return self.padding_bytes / self.page_row_bytes if self.page_row_bytes else 0.0


@dataclass(frozen=True)
class SlotUse:
    slot: int
    name: str
    row_bytes: int  # bytes of one block in this slot tensor
    tensor_bytes: int
    rows: tuple[RowUse, ...]


@dataclass(frozen=True)
class GroupShare:
    """What one page id owned by this group uses, and what it carries for the other groups."""

    group_id: str
    num_layers: int
    used_bytes_per_block: int  # this group's rows across all slots
    dead_bytes_per_block: int  # the other groups' rows the same block id addresses
    block_bytes: int

    @property
    def dead_share(self) -> Fraction:
        """The share of this group's block that other groups' rows fill, exact, so that the
        pages and the CLI show it by ``percent_text`` alike (a float in the JSON)."""
        return Fraction(self.dead_bytes_per_block, self.block_bytes)


@dataclass(frozen=True)
class PlanTotals:
    """Where the budget goes, by tensor: kv_history + state + reserved + unused == budget,
    exactly. ``kv_history_bytes`` and ``state_bytes`` are the bytes of the KV and state rows of
    every block, whichever group owns the block; the strategies' breakdown (Compare) splits the
    same budget by owner instead, with the rows a block's owner does not use as dead weight."""

    budget_bytes: int
    block_size: int
    block_bytes: int
    num_blocks: int
    kv_history_bytes: int
    state_bytes: int
    reserved_bytes: int  # rows outside the plan (e.g. a draft model's KV), per-component only
    unused_bytes: int
    uniform_padding_bytes: int  # what padding every row to the page row would add (not allocated)

    @property
    def token_slots(self) -> int:
        """num_blocks x P: the tokens the pool would hold if every page id held history of one
        group. Not what requests can keep: a page id serves one group at a time (SPEC 3.3), so
        that is a layout's ``StrategyResult.capacity_tokens`` (half of this for two equal
        groups)."""
        return self.num_blocks * self.block_size

    @property
    def allocated_bytes(self) -> int:
        return self.num_blocks * self.block_bytes


@dataclass(frozen=True)
class PlanAnalysis:
    """``analyze``'s answer: the plan ``planner`` ("packed" or "per-component") made, how P was
    chosen, each slot's rows at their offsets, each group's dead weight, and the totals."""

    planner: str
    plan: FlatMemoryPlan
    equalizer: Equalizer  # how P was chosen (per-component: the config-level P it is given)
    slots: tuple[SlotUse, ...]
    groups: tuple[GroupShare, ...]
    totals: PlanTotals

    @property
    def finer_alignments(self) -> tuple[tuple[int, int], ...]:
        """(alignment, P) for each power-of-two alignment finer than the current one."""
        eq = self.equalizer
        out = []
        a = 1
        while a < eq.alignment:
            out.append((a, eq.block_size_at(a)))
            a *= 2
        return tuple(out)

    def why_block_size(self) -> list[str]:
        """The equalizer's reasoning, one step per line, with the numbers in."""
        eq = self.equalizer
        steps = eq.steps()
        if self.planner == "per-component":
            steps.append(
                "The per-component planner takes this config-level P (equalized_block_size) "
                "and gives each component its own tensor: no packing, no padding."
            )
        # the widest row: a history row at P beside a state row, or whichever the model has
        history = f"{eq.max_linear:,} x {self.totals.block_size:,}"
        rows = (f"max({history}, {eq.max_const:,})" if eq.max_linear and eq.max_const else
                f"{history} (no state row)" if eq.max_linear else
                f"{eq.max_const:,} (the state row: no history row)")
        steps.append(f"Page row at P: {rows} = {eq.page_row_bytes:,} B.")
        return steps


def analyze(
    components: Iterable[ComponentSpec],
    *,
    block_size: int,
    budget_bytes: int,
    alignment: int | None = None,
    planner: str = "packed",
    reserved_bytes_per_block: int = 0,
) -> PlanAnalysis:
    """Plan ``components`` with ``planner`` and account for every byte of the budget.

    ``alignment`` defaults to ``block_size`` (as in ``equalized_block_size``).
    """
    _check_planner(planner, reserved_bytes_per_block)
    check_sizes(block_size, alignment)
    check_int("budget_bytes", budget_bytes, maximum=MAX_BYTES)
    comps = tuple(components)
    alignment = alignment_or_block_size(alignment, block_size)
    groups = group_rows(comps)
    eq = config_equalizer([r for rs in groups.values() for r in rs], block_size, alignment)
    if planner == "packed":
        plan = plan_tensors(
            comps, block_size=block_size, alignment=alignment, budget_bytes=budget_bytes
        )
    else:
        plan = plan_component_tensors(
            comps,
            block_size=eq.block_size,
            budget_bytes=budget_bytes,
            reserved_bytes_per_block=reserved_bytes_per_block,
        )
    geo = plan.geometry
    state_components = {(c.group_id, c.layer, c.component) for c in comps if not c.is_linear}
    # packed rows are as wide as the widest row at P (both planners plan at the equalizer's P)
    row_width = eq.page_row_bytes if planner == "packed" else None
    slots = tuple(_slot_use(i, tensor, geo.num_blocks, row_width, state_components)
                  for i, tensor in enumerate(plan.tensors))
    rows = [r for s in slots for r in s.rows]
    used_by_group: dict[str, int] = dict.fromkeys(groups, 0)
    for r in rows:
        used_by_group[r.group_id] += r.used_bytes
    kv_per_block = sum(u.nbytes_per_block for r in rows for u in r.bindings if not u.is_state)
    state_per_block = sum(u.nbytes_per_block for r in rows for u in r.bindings if u.is_state)
    uniform_pad_per_block = sum(r.padding_bytes for r in rows)

    reserved_per_block = geo.block_bytes - kv_per_block - state_per_block
    # reserved rows belong to no group of the plan (a draft model's KV): not dead weight, as in
    # the flat strategy's breakdown (flatkv.strategies.flat), where they count as kv_history
    group_shares = tuple(
        GroupShare(gid, len(groups[gid]), used, geo.block_bytes - used - reserved_per_block,
                   geo.block_bytes)
        for gid, used in used_by_group.items()
    )
    n = geo.num_blocks
    totals = PlanTotals(
        budget_bytes=budget_bytes,
        block_size=geo.block_size,
        block_bytes=geo.block_bytes,
        num_blocks=n,
        kv_history_bytes=n * kv_per_block,
        state_bytes=n * state_per_block,
        reserved_bytes=n * reserved_per_block,
        unused_bytes=budget_bytes - n * geo.block_bytes,
        uniform_padding_bytes=n * uniform_pad_per_block,
    )
    return PlanAnalysis(planner, plan, eq, slots, group_shares, totals)


def _slot_use(index: int, tensor: TensorPlan, num_blocks: int, page_row_bytes: int | None,
              state_components: set[tuple[str, int, str]]) -> SlotUse:
    """One slot tensor's rows: its bindings grouped by (group, layer), each at its byte offset
    in the slot row; a row's width is ``page_row_bytes`` (the packed planner's uniform page
    row) or, for the per-component planner (None), its own bytes."""
    offset_of = dict(zip(tensor.bindings, slot_offsets(tensor)))
    by_row: dict[tuple[str, int], list] = {}
    for b in tensor.bindings:
        by_row.setdefault((b.group_id, b.layer), []).append(b)
    rows = []
    for (gid, layer), members in by_row.items():
        used = sum(b.nbytes_per_block for b in members)
        uses = tuple(
            BindingUse(slot=b.slot, group_id=gid, layer=layer, component=b.component,
                       offset=offset_of[b], row_offset=b.row_offset,
                       nbytes_per_block=b.nbytes_per_block,
                       is_state=(gid, layer, b.component) in state_components)
            for b in members
        )
        rows.append(RowUse(tensor.bindings[0].slot, gid, layer,
                           min(offset_of[b] for b in members), used,
                           used if page_row_bytes is None else page_row_bytes, uses))
    return SlotUse(index, tensor.name, tensor.nbytes // num_blocks, tensor.nbytes, tuple(rows))


# --------------------------------------------------------------------------------------------
# Sweeps: closed form per point, no plan built. For library users and bench/plan_bench.py
# (1,000 points well under 50 ms); the app's Budget curves run each layout's strategy instead,
# as they draw the engines' layouts beside ours.


@dataclass(frozen=True)
class SweepPoint:
    """One point of a sweep: the headline figures ``analyze`` would give at this block size and
    budget, in closed form (no plan built)."""

    requested_block_size: int
    block_size: int
    budget_bytes: int
    block_bytes: int
    num_blocks: int  # 0 or 1 when the budget does not hold a plan (fits is False)
    kv_history_bytes: int
    state_bytes: int

    @property
    def fits(self) -> bool:
        return self.num_blocks > 1

    @property
    def token_slots(self) -> int:
        return self.num_blocks * self.block_size if self.fits else 0

    @property
    def unused_bytes(self) -> int:
        return self.budget_bytes - (self.num_blocks * self.block_bytes if self.fits else 0)


@dataclass(frozen=True)
class _SweepModel:
    """Everything a sweep point needs, computed once: block_bytes(P) = linear * P + const."""

    equalizer: Equalizer  # at block_size 1: holds max_linear, max_const and needed
    linear_total: int
    const_total: int
    reserved: int

    def point(self, block_size: int, alignment: int, budget: int) -> SweepPoint:
        p = block_size
        if self.equalizer.max_linear:
            p = replace(self.equalizer, requested_block_size=block_size).block_size_at(alignment)
        block_bytes = self.linear_total * p + self.const_total + self.reserved
        n = budget // block_bytes
        fits = n > 1
        return SweepPoint(
            block_size,
            p,
            budget,
            block_bytes,
            n,
            n * self.linear_total * p if fits else 0,
            n * self.const_total if fits else 0,
        )


def _check_planner(planner: str, reserved: int) -> None:
    """The planner is one we have, and reserved co-resident bytes per block id, which exist in
    the per-component planner only, are asked of it alone."""
    if planner not in PLANNERS:
        raise ValueError(f"planner {planner!r} is unknown: use one of {', '.join(PLANNERS)}")
    check_int("reserved_bytes_per_block", reserved)
    if reserved and planner == "packed":
        raise ValueError(
            "reserved_bytes_per_block is only used by the per-component planner: plan with "
            "the per-component planner (planner 'per-component') or leave it 0"
        )


def check_sizes(block_size: int, alignment: int | None) -> None:
    """Block size and alignment within the caps every layout shares (``units.MAX_TOKENS``)."""
    check_int("block_size", block_size, minimum=1, maximum=MAX_TOKENS)
    _check_alignment(alignment)


def _check_alignment(alignment: int | None) -> None:
    """An alignment within ``units.MAX_TOKENS``, or None (the block size)."""
    if alignment is not None:
        check_int("alignment", alignment, minimum=1, maximum=MAX_TOKENS)


def _sweep_model(components: Iterable[ComponentSpec], planner: str, reserved: int) -> _SweepModel:
    _check_planner(planner, reserved)  # as analyze does: a sweep point is one of its plans
    rows = tuple(r for rs in group_rows(components).values() for r in rs)
    eq = equalize_rows(rows, 1, 1) if planner == "packed" else config_equalizer(rows, 1, 1)
    return _SweepModel(
        eq, sum(r.linear_bytes for r in rows), sum(r.const_bytes for r in rows), reserved
    )


def _check_points(field: str, values: Sequence[int], minimum: int, maximum: int) -> list[int]:
    values = list(values)
    if not values:
        raise ValueError(f"{field} is empty: give at least one value to sweep")
    if len(values) > 100_000:
        raise ValueError(f"{field} has {len(values):,} points: sweep at most 100,000")
    return [check_int(f"{field}[{i}]", v, minimum=minimum, maximum=maximum)
            for i, v in enumerate(values)]


def sweep_block_sizes(
    components: Iterable[ComponentSpec],
    block_sizes: Sequence[int],
    *,
    budget_bytes: int,
    alignment: int | None = None,
    planner: str = "packed",
    reserved_bytes_per_block: int = 0,
) -> tuple[SweepPoint, ...]:
    """Headline figures for each requested block size; ``alignment`` None means the block size."""
    model = _sweep_model(components, planner, reserved_bytes_per_block)
    sizes = _check_points("block_sizes", block_sizes, 1, MAX_TOKENS)
    check_int("budget_bytes", budget_bytes, maximum=MAX_BYTES)
    _check_alignment(alignment)
    return tuple(model.point(b, alignment_or_block_size(alignment, b), budget_bytes)
                 for b in sizes)


def sweep_budgets(
    components: Iterable[ComponentSpec],
    budgets: Sequence[int],
    *,
    block_size: int,
    alignment: int | None = None,
    planner: str = "packed",
    reserved_bytes_per_block: int = 0,
) -> tuple[SweepPoint, ...]:
    """Headline figures for each budget at one block size."""
    model = _sweep_model(components, planner, reserved_bytes_per_block)
    check_sizes(block_size, alignment)
    alignment = alignment_or_block_size(alignment, block_size)
    return tuple(
        model.point(block_size, alignment, b)
        for b in _check_points("budgets", budgets, 0, MAX_BYTES)
    )


def plan_json(analysis: PlanAnalysis, model_name: str, requests: dict | None = None) -> str:
    """The plan as the CLI prints it (``plan --json``) and the Layout page downloads it;
    ``requests``: how many requests of a context the plan holds (``plan --context``)."""
    data = {"model": model_name, **analysis_to_dict(analysis)}
    if requests is not None:
        data["requests"] = requests
    return json.dumps(data, indent=2)


def _tensor_to_dict(s: SlotUse) -> dict:
    """One tensor of ``analysis_to_dict``: its rows (a group's layer at an offset, with its
    padding) and every binding of a layer's component into them."""
    return {
        "name": s.name,
        "slot": s.slot,
        "nbytes": s.tensor_bytes,
        "row_bytes": s.row_bytes,
        "rows": [
            {
                "group_id": r.group_id,
                "layer": r.layer,
                "offset": r.offset,
                "used_bytes": r.used_bytes,
                "page_row_bytes": r.page_row_bytes,
                "padding_bytes": r.padding_bytes,
                "padded_share": r.padded_share,
            }
            for r in s.rows
        ],
        "bindings": [
            {
                "slot": b.slot,
                "group_id": b.group_id,
                "layer": b.layer,
                "component": b.component,
                "nbytes_per_block": b.nbytes_per_block,
                "row_offset": b.row_offset,
                "offset": b.offset,
            }
            for r in s.rows
            for b in r.bindings
        ],
    }


def analysis_to_dict(analysis: PlanAnalysis) -> dict:
    """JSON-ready view of an analysis: geometry, tensors with bindings, and every figure above.

    Byte counts stay ints; shares are floats derived from them.
    """
    geo = analysis.plan.geometry
    eq = analysis.equalizer
    t = analysis.totals
    return {
        "planner": analysis.planner,
        "geometry": {
            "block_size": geo.block_size,
            "block_bytes": geo.block_bytes,
            "num_blocks": geo.num_blocks,
        },
        "equalizer": {
            "requested_block_size": eq.requested_block_size,
            "alignment": eq.alignment,
            "max_linear_bytes_per_slot": eq.max_linear,
            "max_const_bytes": eq.max_const,
            "needed_slots": eq.needed,
            "block_size": eq.block_size,
            "inflated": eq.inflated,
            "finer_alignments": [
                {"alignment": a, "block_size": p} for a, p in analysis.finer_alignments
            ],
            "why": analysis.why_block_size(),
        },
        "totals": {
            "budget_bytes": t.budget_bytes,
            "kv_history_bytes": t.kv_history_bytes,
            "state_bytes": t.state_bytes,
            "reserved_bytes": t.reserved_bytes,
            "unused_bytes": t.unused_bytes,
            "uniform_padding_bytes": t.uniform_padding_bytes,
            "token_slots": t.token_slots,
        },
        "dead_weight": [
            {
                "group_id": g.group_id,
                "num_layers": g.num_layers,
                "used_bytes_per_block": g.used_bytes_per_block,
                "dead_bytes_per_block": g.dead_bytes_per_block,
                "dead_share": float(g.dead_share),
            }
            for g in analysis.groups
        ],
        "tensors": [_tensor_to_dict(s) for s in analysis.slots],
    }
