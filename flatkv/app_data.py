"""What the app's pages show, derived from a plan analysis: pure data, exact ints, no streamlit.

Pages call these, hand the results to ``flatkv.charts`` and render. Every number a page shows
comes from here or from ``flatkv.analysis``, so the tests pin them without a browser.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass

from flatkv.analysis import PlanAnalysis, SweepPoint, analysis_to_dict
from flatkv.plan import LINEAR_ATTENTION, SLIDING_ATTENTION
from flatkv.profile import CacheProfile

# --------------------------------------------------------------------------------------------
# Component kinds: one colour and one name each, on every chart.


def component_kind(group_id: str, component: str) -> str:
    """``kv`` (full attention), ``kv_sliding``, ``conv``, ``ssm`` or ``state`` (other state)."""
    if component == "kv":
        return "kv_sliding" if group_id == SLIDING_ATTENTION else "kv"
    return component if component in ("conv", "ssm") else "state"


# --------------------------------------------------------------------------------------------
# Headline figures


@dataclass(frozen=True)
class Headline:
    requested_block_size: int
    block_size: int
    block_bytes: int
    num_blocks: int
    capacity_tokens: int
    budget_bytes: int
    unused_bytes: int
    uniform_padding_per_block: int  # what padding rows to the page row would add per block
    dead_share_by_group: tuple[tuple[str, float], ...]

    @property
    def padding_share(self) -> float:
        """Share of a uniform-page block that would be padding (packed slabs allocate none)."""
        padded = self.block_bytes + self.uniform_padding_per_block
        return self.uniform_padding_per_block / padded if padded else 0.0


def headline(analysis: PlanAnalysis) -> Headline:
    t = analysis.totals
    return Headline(
        requested_block_size=analysis.equalizer.requested_block_size,
        block_size=t.block_size,
        block_bytes=t.block_bytes,
        num_blocks=t.num_blocks,
        capacity_tokens=t.capacity_tokens,
        budget_bytes=t.budget_bytes,
        unused_bytes=t.unused_bytes,
        uniform_padding_per_block=t.uniform_padding_bytes // t.num_blocks,
        dead_share_by_group=tuple((g.group_id, g.dead_share) for g in analysis.groups),
    )


# --------------------------------------------------------------------------------------------
# The page-row layout


@dataclass(frozen=True)
class Segment:
    """One drawn piece of a slot row: a binding, or the padding a uniform page would add."""

    slot: int
    slot_name: str
    kind: str  # component_kind(...) or "padding"
    group_id: str
    layer: int
    component: str  # "padding" for padding
    offset: int  # bytes from the start of the slot row
    nbytes: int

    @property
    def end(self) -> int:
        return self.offset + self.nbytes


def layout_segments(analysis: PlanAnalysis, *, uniform: bool = False) -> list[Segment]:
    """Segments of every slot row, in slot order.

    ``uniform=False`` is the plan as allocated (packed slabs: rows side by side, no padding).
    ``uniform=True`` draws each row padded to the page row, as a uniform-page engine (vLLM) lays
    it out: row k of a slot starts at ``k * page_row`` and its padding is a segment of its own.
    """
    out: list[Segment] = []
    for s in analysis.slots:
        for k, row in enumerate(s.rows):
            start = k * row.page_row_bytes if uniform else row.offset
            for b in row.bindings:
                out.append(
                    Segment(
                        s.slot,
                        s.name,
                        component_kind(b.group_id, b.component),
                        b.group_id,
                        b.layer,
                        b.component,
                        start + b.row_offset,
                        b.nbytes_per_block,
                    )
                )
            if uniform and row.padding_bytes:
                out.append(
                    Segment(
                        s.slot,
                        s.name,
                        "padding",
                        row.group_id,
                        row.layer,
                        "padding",
                        start + row.used_bytes,
                        row.padding_bytes,
                    )
                )
    return out


# --------------------------------------------------------------------------------------------
# Bytes by group / layer / component (the icicle)


@dataclass(frozen=True)
class TreeNode:
    id: str
    parent: str  # "" for the root
    label: str
    value: int  # bytes over the whole budget; a parent is the exact sum of its children
    kind: str  # component kind, "group", "budget", "unused" or "reserved"


def bytes_tree(analysis: PlanAnalysis) -> list[TreeNode]:
    """Budget -> group -> component -> layer, plus reserved and unused; sums are exact.

    Components sit above layers so the top levels stay readable for models with 100+ layers
    (kv of all full-attention layers, ssm of all state layers); one layer is a click deeper.
    """
    n = analysis.totals.num_blocks
    leaves: dict[str, dict[str, list[tuple[int, int]]]] = {}
    for s in analysis.slots:
        for row in s.rows:
            comps = leaves.setdefault(row.group_id, {})
            for b in row.bindings:
                comps.setdefault(b.component, []).append((row.layer, b.nbytes_per_block * n))
    nodes = [TreeNode("budget", "", "budget", analysis.totals.budget_bytes, "budget")]
    for gid, comps in leaves.items():
        nodes.append(TreeNode(gid, "budget", gid, sum(v for c in comps.values() for _, v in c),
                              "group"))
        for comp, layers in comps.items():
            cid = f"{gid}/{comp}"
            kind = component_kind(gid, comp)
            nodes.append(TreeNode(cid, gid, comp, sum(v for _, v in layers), kind))
            nodes.extend(TreeNode(f"{cid}/{layer}", cid, f"{comp} #{layer}", v, kind)
                         for layer, v in layers)
    t = analysis.totals
    if t.reserved_bytes:
        nodes.append(TreeNode("reserved", "budget", "reserved", t.reserved_bytes, "reserved"))
    if t.unused_bytes:
        nodes.append(TreeNode("unused", "budget", "unused", t.unused_bytes, "unused"))
    return nodes


# --------------------------------------------------------------------------------------------
# Requests: pages per request, concurrency, and which page ids go to which group


def pages_per_request(profile: CacheProfile, block_size: int, context: int) -> dict[str, int]:
    """Pages one request of ``context`` tokens holds in each group of the single page-id space.

    Full attention: ``ceil(L / P)``. Sliding: the window's pages plus one,
    ``min(ceil(L / P), ceil((W - 1) / P) + 1)``. State: one page (its live state, no snapshots).
    """
    p = block_size
    full_pages = -(-context // p)
    out: dict[str, int] = {}
    for gid in dict.fromkeys(profile.layer_types):
        if gid == LINEAR_ATTENTION:
            out[gid] = 1
        elif gid == SLIDING_ATTENTION and profile.sliding_window:
            out[gid] = min(full_pages, -(-(profile.sliding_window - 1) // p) + 1)
        else:
            out[gid] = full_pages
    return out


def max_concurrency(num_blocks: int, per_request: dict[str, int]) -> float:
    """Requests the pool holds at once: ``num_blocks / pages one request needs`` (a ratio, as
    engines log it; floor it for whole requests)."""
    need = sum(per_request.values())
    return num_blocks / need if need else 0.0


@dataclass(frozen=True)
class PageMap:
    """Page id -> (group, request) for a workload; page id 0 is the engine's null page."""

    num_blocks: int
    owners: tuple[tuple[str, int] | None, ...]  # index = page id; None = free or null
    per_group: dict[str, int]
    fits: bool


def page_assignment(
    profile: CacheProfile, *, block_size: int, num_blocks: int, requests: int, context: int,
    limit: int = 4096,
) -> PageMap:
    """Hand out page ids in arrival order: request 0's pages of every group, then request 1's...

    Shows the single page-id space: each id belongs to one group at a time, whatever group its
    neighbours serve. At most ``limit`` ids are listed.
    """
    per_request = pages_per_request(profile, block_size, context)
    owners: list[tuple[str, int] | None] = [None]  # the null page
    per_group = dict.fromkeys(per_request, 0)
    for r in range(requests):
        for gid, count in per_request.items():
            per_group[gid] += count
            owners.extend([(gid, r)] * min(count, max(0, limit - len(owners))))
    used = 1 + sum(per_group.values())
    shown = min(num_blocks, limit)
    owners = owners[:shown] + [None] * max(0, shown - len(owners))
    return PageMap(num_blocks, tuple(owners), per_group, used <= num_blocks)


# --------------------------------------------------------------------------------------------
# Sweeps for the budget page


def block_size_candidates(current: int, *, top: int = 4096) -> list[int]:
    """Powers of two up to ``top`` and the current block size, sorted."""
    sizes = {1 << k for k in range(top.bit_length()) if 1 << k <= top}
    sizes.add(current)
    return sorted(sizes)


def budget_candidates(current: int, *, points: int = 40) -> list[int]:
    """From a tenth of the current budget to twice it, evenly, with the current budget in."""
    lo, hi = max(1, current // 10), current * 2
    step = (hi - lo) // (points - 1)
    values = {lo + i * step for i in range(points)} | {current}
    return sorted(values)


def concurrency_curve(
    profile: CacheProfile, points: Sequence[SweepPoint], context: int
) -> list[float]:
    return [
        max_concurrency(pt.num_blocks, pages_per_request(profile, pt.block_size, context))
        if pt.fits
        else 0.0
        for pt in points
    ]


# --------------------------------------------------------------------------------------------
# Exports


def plan_json(analysis: PlanAnalysis, profile: CacheProfile) -> str:
    return json.dumps({"model": profile.name, **analysis_to_dict(analysis)}, indent=2)


def bindings_csv(analysis: PlanAnalysis) -> str:
    """One line per binding: slot tensor, group, layer, component, offsets and bytes."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(
        ["tensor", "slot", "group_id", "layer", "component", "offset", "row_offset",
         "nbytes_per_block", "tensor_nbytes"]
    )
    for s in analysis.slots:
        for row in s.rows:
            for b in row.bindings:
                w.writerow(
                    [s.name, s.slot, b.group_id, b.layer, b.component, b.offset, b.row_offset,
                     b.nbytes_per_block, s.tensor_bytes]
                )
    return buf.getvalue()


def rows_csv(rows: Sequence[dict]) -> str:
    """CSV of a list of flat dicts (the keys of the first row are the header)."""
    buf = io.StringIO()
    if rows:
        w = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    return buf.getvalue()


# --------------------------------------------------------------------------------------------
# Comparison rows (our planners today; the engine strategies plug into the same row)


@dataclass(frozen=True)
class CompareRow:
    name: str
    applies: bool
    reason: str
    block_size: int
    block_bytes: int
    num_blocks: int
    capacity_tokens: int
    max_concurrency: float
    breakdown: tuple[tuple[str, int], ...]  # (category, bytes), sums to the budget
    formulas: tuple[str, ...]

    def table_row(self) -> dict:
        return {
            "strategy": self.name,
            "applies": self.applies,
            "P (tokens)": self.block_size,
            "block bytes": self.block_bytes,
            "blocks": self.num_blocks,
            "capacity (tokens)": self.capacity_tokens,
            "concurrency": round(self.max_concurrency, 2),
            **{f"{cat} bytes": v for cat, v in self.breakdown},
            "note": self.reason,
        }


def planner_row(analysis: PlanAnalysis, profile: CacheProfile, context: int) -> CompareRow:
    """A comparison row for one of our planners, with the formulas filled in."""
    t = analysis.totals
    eq = analysis.equalizer
    per_request = pages_per_request(profile, t.block_size, context)
    need = sum(per_request.values())
    if analysis.planner == "packed":
        name = "flat (packed slabs)"
        formulas = [
            f"P = {t.block_size:,}"
            + (
                f" = {eq.alignment:,} x ceil(ceil({eq.max_const:,} / {eq.max_linear:,}) / "
                f"{eq.alignment:,})"
                if eq.inflated
                else f" (requested; {eq.max_linear:,} x {eq.requested_block_size:,} >= "
                f"{eq.max_const:,})"
            ),
            f"block_bytes = sum of the {len(analysis.slots)} slot rows = {t.block_bytes:,} B",
        ]
        note = "one page-id space, slot j packs layer j of every group"
    else:
        name = "flat (one tensor per component)"
        formulas = [
            f"P = {t.block_size:,} (requested, not equalized)",
            f"block_bytes = sum of {sum(len(s.rows) for s in analysis.slots)} component rows"
            f" = {t.block_bytes:,} B",
        ]
        note = "one page-id space, no packing"
    formulas += [
        f"num_blocks = {t.budget_bytes:,} // {t.block_bytes:,} = {t.num_blocks:,}",
        f"capacity = {t.num_blocks:,} x {t.block_size:,} = {t.capacity_tokens:,} tokens",
        "concurrency = num_blocks / pages per request = "
        f"{t.num_blocks:,} / ({' + '.join(f'{v:,}' for v in per_request.values())}) = "
        f"{max_concurrency(t.num_blocks, per_request):.2f}",
    ]
    breakdown = [("kv_history", t.kv_history_bytes), ("state", t.state_bytes)]
    if t.reserved_bytes:
        breakdown.append(("reserved", t.reserved_bytes))
    breakdown.append(("unused", t.unused_bytes))
    return CompareRow(
        name=name,
        applies=True,
        reason=note,
        block_size=t.block_size,
        block_bytes=t.block_bytes,
        num_blocks=t.num_blocks,
        capacity_tokens=t.capacity_tokens,
        max_concurrency=t.num_blocks / need if need else 0.0,
        breakdown=tuple(breakdown),
        formulas=tuple(formulas),
    )
