"""What the GPU lab page shows: sweep plans, table rows, chart series and exports of benchmark
results. Pure data, exact ints, no streamlit and no torch.

``flatkv.gpu`` (and so torch) is imported by the page only; this module reads the frozen
``BenchResult`` values a run hands back, so the page stays thin and every number it shows is
pinned by unit tests without a browser.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from flatkv.analysis import analyze
from flatkv.app_data import rows_csv
from flatkv.gpu_settings import (
    BASELINE_OF,
    BENCH_REPEATS,
    DEFAULT_POOL_BYTES,
    DEFAULT_SHARE_PERCENT,
    PAGE_MAJOR,
    POOL_LAYOUTS,
    SLOT_MAJOR,
    in_order,
)
from flatkv.plan import ComponentSpec, FlatMemoryPlan, cdiv
from flatkv.units import (
    count_text,
    format_bytes,
    markdown_literal,
    percent_text,
    quoted,
    times_text,
)

if TYPE_CHECKING:
    from flatkv.gpu.bench import BenchResult, Figure

NO_GPU = "No CUDA GPU on this machine: timing the CPU, same flow."
NO_HOST_MIRROR = ("No host mirror figures on the CPU: the pool already is host memory, so there "
                  "is no bus to cross (pages to and from a pinned host buffer are timed on CUDA).")
# Timed rounds the page starts with: enough for "rounds apart" to say something
# (MIN_ROUNDS_APART), while a CPU run of the default model takes a few seconds; a GPU round is
# milliseconds, so it can afford the library's 15 (BENCH_REPEATS).
PAGE_REPEATS = {"cpu": 5, "cuda": BENCH_REPEATS["cuda"]}
POOL_LAYOUT_HELP = (
    f"Where a page's bytes sit. {SLOT_MAJOR}: one tensor per slot (a slot pairs the j-th layer "
    "of every group: the plan's tensors, allocated as engines do by default), so a page is one "
    f"row in each slot tensor. {PAGE_MAJOR}: one buffer with each page's slot rows back to back "
    "(vLLM's opt-in cross-layer KV blocks), so a page moves as one contiguous row. Same bytes, "
    "same blocks."
)
# The baselines each figure is a share of, measured in the same run (flatkv.gpu.bench).
BASELINES = ("copy", "state_bytes_copy", "pinned_d2h", "pinned_h2d")
# One name for an operation on the whole page: the results table, the charts' legends and the
# notices (the CSV and JSON keep the keys), so the table's row and the chart's trace read alike.
# At 1000 px the main column (540 px) holds the table through the median only under names of
# 10 characters at most: with both pool layouts timed, the "pool layout" column (98 px) put a
# CPU run's median at 493 to 576 px, a state hybrid's past the edge, and on CUDA "pinned copy
# from host" (166 px in the operation and the baseline columns each) would have. Baselines end
# in "copy"; TABLE_NAMES says each in full under the table (a header's tooltip would take 18 px
# the median has not got).
OPERATION_NAMES = {
    "copy": "copy",
    "gather": "gather",
    "scatter": "scatter",
    "state_bytes_copy": "state copy",
    "state_copy": "state rows",
    "d2h": "to host",
    "h2d": "from host",
    "pinned_d2h": "D2H copy",
    "pinned_h2d": "H2D copy",
}
SHARED_LAYOUT = "shared"  # a baseline timed once for all the layouts of a call
# The pool layout column on screen: "pool" and "both" (the CSV's "pool layout" and "shared"),
# four characters, so that with both layouts timed the columns through the median, under its
# unit-bearing "median (ms)", end inside the main column at 1000 px (the 64 px "layout" column
# put a state hybrid's at 543 px of 540)
LAYOUT_COLUMN = "pool"
TABLE_LAYOUTS = {SLOT_MAJOR: "slot", PAGE_MAJOR: "page", SHARED_LAYOUT: "both"}
# What the short names stand for, one sentence for the operations that share it
_NAMES_SAID = (
    (("copy",), "copy is torch's copy_ of the same bytes on the device"),
    (("gather", "scatter"), "gather and scatter move pages by page id out of the pool and back"),
    (("state_bytes_copy",), "state copy is a copy of as many bytes as the state rows"),
    (("state_copy",), "state rows is the state-row copy (a page's state rows to other page ids)"),
    (("d2h", "h2d"), "to host and from host move pages to and from a pinned host buffer"),
    (("pinned_d2h", "pinned_h2d"),
     "D2H and H2D copy are one pinned copy of the same bytes to and from the host"),
)
TABLE_NAMES = {op: text for ops, text in _NAMES_SAID for op in ops}
LAYOUTS_NAMED = (f"pool slot and page are the {SLOT_MAJOR} and {PAGE_MAJOR} pools, "
                 f"{TABLE_LAYOUTS[SHARED_LAYOUT]} a baseline timed once for the two")


def table_names_text(results: Sequence[BenchResult]) -> str:
    """What the results table's short names stand for, those of this run only, in the order
    its rows first name them (the operation and baseline columns, and the layouts where a run
    timed several)."""
    said: list[str] = []
    for r in results:
        for f in r.figures:
            for op in (f.operation, f.baseline):
                if (text := TABLE_NAMES.get(op, "")) and text not in said:
                    said.append(text)
    if several_layouts(results):
        said.append(LAYOUTS_NAMED)
    return "In the table and the chart, " + "; ".join(said) + "."


# Operation -> its colour kind in flatkv.charts.COLORS: a baseline other than the device copy
# shares the colour of the move measured against it (the pinned copies their host moves', the
# copy of the state bytes the state-row copy's), so two dashed baselines never look alike.
OPERATION_KIND = {
    "copy": "copy",
    "state_bytes_copy": "state_copy",
    "gather": "gather",
    "scatter": "scatter",
    "state_copy": "state_copy",
    "d2h": "d2h",
    "h2d": "h2d",
    "pinned_d2h": "d2h",
    "pinned_h2d": "h2d",
}
CAP_REASONS = {
    "plan": "the plan's own size (the whole plan fits)",
    "free memory": "a share of the device's free memory",
}


def device_type(device: str) -> str:
    """``"cuda"`` for ``cuda`` / ``cuda:N``, else ``"cpu"``."""
    return "cuda" if device.startswith("cuda") else "cpu"


def has_gpu(devices: Sequence[str]) -> bool:
    return any(device_type(d) == "cuda" for d in devices)


def pick_device(wanted: str | None, devices: Sequence[str]) -> tuple[str, str | None]:
    """The device the lab uses, and a notice when it is not the one asked for.

    ``None`` asks for the default: the first GPU, else the CPU. A device a link names that this
    machine lacks (a link from a GPU server opened on a laptop) falls back to the default.
    """
    default = next((d for d in devices if device_type(d) == "cuda"), devices[0])
    if wanted is None:
        return default, None
    if wanted == "cuda" and has_gpu(devices):
        return default, None
    if wanted in devices:
        return wanted, None
    # (said as a link's other notices say its values: device='cuda:7': what is wrong; fix)
    return default, (f"device={quoted(wanted)}: this machine has no {wanted} (it has "
                     f"{', '.join(devices)}); using {default}.")


def pick_kernels(wanted: Sequence[str] | None, available: Sequence[str]) -> tuple[str, ...]:
    """The kernels to time: those asked for that run here; all that run here when that leaves
    none (None, or a link's ``triton`` opened on a machine without CUDA)."""
    picked = tuple(k for k in available if wanted is None or k in wanted)
    return picked or tuple(available)


def per_device_text(nbytes: dict[str, int]) -> str:
    """``512.00 MiB on the CPU, 8.00 GiB on CUDA``: a per-device default in words."""
    return f"{format_bytes(nbytes['cpu'])} on the CPU, {format_bytes(nbytes['cuda'])} on CUDA"


def pool_text(blocks: int, page_bytes: int, layouts: int, *, capped_by_user: bool = True) -> str:
    """What a run will allocate, said before it runs: the pool's blocks and bytes, per layout.
    An automatic pool is "up to": the run fits it to free memory, shared by the layouts."""
    one = blocks * page_bytes
    text = (f"A run allocates {'' if capped_by_user else 'up to '}{count_text(blocks, 'block')} "
            f"x {page_bytes:,} B = {format_bytes(one)}")
    if layouts > 1:
        both = "both" if layouts == 2 else f"all {layouts}"  # POOL_LAYOUTS has two
        text += f" per pool layout, {format_bytes(layouts * one)} for {both}"
    return text + ", plus two call-sized buffers (staging and the copy's)."


def sweep_title(results: Sequence[BenchResult], sweep: str) -> str:
    """``Bandwidth vs page bytes, 2,048 pages per call``: the chart title names what the sweep
    held fixed: bytes per call (and the pages that took, where they differ), else pages per
    call (a page-bytes sweep under a small pool)."""
    calls = {r.call_bytes for r in results}
    pages = {r.pages_per_call for r in results}
    if len(calls) == 1:
        fixed = f"{format_bytes(calls.pop())} per call"
        if len(pages) > 1:
            fixed += f" ({value_span(sorted(pages))} pages)"
    elif len(pages) == 1:
        fixed = (f"{count_text(pages.pop(), 'page')} per call "
                 f"({value_span(sorted(calls), format_bytes)})")
    else:
        fixed = f"{value_span(sorted(calls), format_bytes)} per call"
    return f"Bandwidth vs {sweep}, {fixed}"


def cap_reason_text(reason: str, blocks: int) -> str:
    """Why the pool has the ``blocks`` it has (the report's cap_reason), in words: the user's
    cap, the benchmark's own default pool (DEFAULT_POOL_BYTES of pages), the plan, or free
    memory."""
    if reason == "max_blocks":
        return f"your cap of {blocks:,} blocks"
    if reason == "default pool":
        return (f"the default pool size ({per_device_text(DEFAULT_POOL_BYTES)}, within "
                f"{DEFAULT_SHARE_PERCENT}% of free memory)")
    return CAP_REASONS.get(reason, reason)


# --------------------------------------------------------------------------------------------
# Sweeps


def pages_per_call_values(pool_blocks: int, *, points: int = 5) -> tuple[int, ...]:
    """Powers of two up to half the pool (a call's pages come from the pool), at most
    ``points`` of them: every one where they fit; else 1 (a single page per call) and one power
    in every ``stride`` down from the largest, leaving out the lowest of those when it sits
    closer to 1 than half a stride (rounding evenly spaced indices gave 1, 2, 4, 16, 32)."""
    top = max(1, pool_blocks // 2)
    powers = [1 << k for k in range(top.bit_length()) if 1 << k <= top]
    if len(powers) <= points:
        return tuple(powers)
    last = len(powers) - 1
    stride = cdiv(last, points - 1)
    picked = [i for i in range(last, -1, -stride) if i == 0 or 2 * i >= stride]
    return tuple(sorted({powers[0], *(powers[i] for i in picked)}))


def block_size_values(current: int, planned: int, *, top: int) -> tuple[int, ...]:
    """Block sizes to sweep page bytes with, within 1..``top``.

    ``planned`` is the P the current request equalized to. When it is larger (a hybrid model's
    state row pins the page), a smaller request gives about the same page again, so the sweep
    goes up from P: the request, 2P and 4P. Otherwise a quarter to four times the request.
    """
    if planned > current:
        candidates = {current, planned * 2, planned * 4}
    else:
        candidates = {current // 4, current // 2, current, current * 2, current * 4}
    return tuple(sorted(b for b in candidates if 1 <= b <= top))


@dataclass(frozen=True)
class SweepPlans:
    """Plans of one model at several requested block sizes, one per distinct page size."""

    plans: tuple[FlatMemoryPlan, ...]
    block_sizes: tuple[int, ...]  # the requested block size of each plan
    skipped: tuple[str, ...]  # why a requested block size gave no plan of its own


def plans_for_block_sizes(
    components: Sequence[ComponentSpec], block_sizes: Sequence[int], *, alignment: int | None,
    budget_bytes: int, planner: str,
) -> SweepPlans:
    """Plan the model at each block size with the page's planner (a page-bytes sweep).

    ``alignment`` None aligns each to its own block size (the app's "0 = block size"). A block
    size whose page repeats an earlier one's bytes is skipped (same P, or a state-only model,
    whose page does not grow with P: same figures); one the budget cannot hold is skipped with
    the planner's reason, so the rest still run.
    """
    plans: list[FlatMemoryPlan] = []
    asked: list[int] = []
    skipped: list[str] = []
    seen: dict[int, int] = {}
    for bs in block_sizes:
        try:
            plan = analyze(components, block_size=bs, alignment=alignment,
                           budget_bytes=budget_bytes, planner=planner).plan
        except ValueError as err:
            skipped.append(f"block size {bs:,}: {err}")
            continue
        p, page = plan.geometry.block_size, plan.geometry.block_bytes
        if page in seen:
            skipped.append(f"block size {bs:,}: P = {p:,}, the same {page:,} B page as block "
                           f"size {seen[page]:,}")
            continue
        seen[page] = bs
        plans.append(plan)
        asked.append(bs)
    return SweepPlans(tuple(plans), tuple(asked), tuple(skipped))


# --------------------------------------------------------------------------------------------
# A run kept in the session


@dataclass(frozen=True)
class LabSettings:
    """What one click of Run times, as the page's widgets set it: comparable with a later
    render's, so a shown result that no longer matches the settings is marked stale."""

    device: str
    implementations: tuple[str, ...]  # the kernels, of KERNELS
    layouts: tuple[str, ...]  # pool layouts, of POOL_LAYOUTS
    repeats: int
    max_blocks: int | None  # the user's cap (None: the benchmark's default)
    counts: tuple[int | None, ...]  # pages per call (None: the benchmark's default)
    plans: tuple[FlatMemoryPlan, ...]  # one, or one per block size of a page-bytes sweep
    sweep: str  # one of SWEEPS


@dataclass(frozen=True)
class LabRun:
    """One click of Run: its results and what they were measured for."""

    results: tuple[BenchResult, ...]
    model: str
    plan_key: tuple  # (model, plan) the page showed when it ran: stale when either moved
    seconds: float
    settings: LabSettings  # what it timed (its sweep, the cap): stale when the page's moved


def plan_key(model: str, plan: FlatMemoryPlan) -> tuple:
    """What a run was measured for. The whole plan, not its geometry: packed slabs and one
    tensor per component share P and block bytes but allocate different tensors."""
    return (model, plan)


def timed_layouts(results: Sequence[BenchResult]) -> tuple[str, ...]:
    """The pool layouts a run timed, in POOL_LAYOUTS' order."""
    return in_order({r.layout for r in results}, POOL_LAYOUTS)


def bars_title(results: Sequence[BenchResult]) -> str:
    """``Bandwidth, 8 pages of 1.53 KiB per call, slot-major vs page-major``: one run's chart
    title (its pages and page bytes are the same in every result)."""
    first = results[0]
    return (f"Bandwidth, {count_text(first.pages_per_call, 'page')} of "
            f"{format_bytes(first.page_bytes)} per call, {' vs '.join(timed_layouts(results))}")


def run_caption(run: LabRun) -> str:
    """What a kept run measured on: model, device, versions, pool layouts, rounds, seconds
    (Markdown: the model's name as typed)."""
    first = run.results[0]
    layouts = timed_layouts(run.results)
    return (f"{markdown_literal(run.model)} on {first.device} ({first.device_name}) · "
            f"{first.versions_text} · "
            f"{' and '.join(layouts)} pool{'s' if len(layouts) > 1 else ''} · "
            f"{count_text(first.repeats, 'timed round')} after {first.warmup} warm-up · "
            f"{run.seconds:.1f} s")


def stale_text(run: LabRun, model: str, plan: FlatMemoryPlan,
               settings: LabSettings | None) -> str:
    """Why a kept run no longer shows what the page would time now: another model or plan, or
    other run settings (``settings`` None while an entry is rejected: those cannot tell).
    Empty while it still does."""
    if run.plan_key != plan_key(model, plan):
        return "These results are for an earlier model or plan: run again for the current one."
    if settings is not None and run.settings != settings:
        return ("These results are for other run settings than the ones above: run again to "
                "time these.")
    return ""


# --------------------------------------------------------------------------------------------
# Table rows, chart series, exports


def value_span(values: Sequence[int], fmt: Callable[[int], str] = "{:,}".format) -> str:
    """One value, or the range a sweep covered: ``4``, ``1 to 8``."""
    low, high = min(values), max(values)
    return fmt(low) if low == high else f"{fmt(low)} to {fmt(high)}"


def _percent(share: float | None) -> str | None:
    """A measured share to one decimal, where 0.9996 of the baseline reads 99.96%, not the
    baseline's own 100.0% (``percent_text``)."""
    return None if share is None else percent_text(share, digits=1)


def several_layouts(results: Sequence[BenchResult]) -> bool:
    """Whether a run timed more than one pool layout (its tables and charts then name them)."""
    return len({r.layout for r in results}) > 1


# The screen's names for a figure's implementation (the page's Kernels setting), its share of
# the baseline and a call's pages (the CSV and JSON keep "implementation", "share of baseline"
# and "pages per call"): short, so a sweep's pages, operation, kernel, GB/s, share and baseline
# fit the 540 px main column at 1000 px (the header "implementation" alone took 119 px of it;
# after a pages-per-call sweep, "pages per call" and "share of baseline" left the baseline
# column past the scroll edge). Their tooltips give the long names (``RESULT_HELP``).
# The median is "median (ms)", its unit in its header as on every other timing column (under
# "median" alone the unit was in its tooltip only); it has no tooltip (18 px it has not got at
# 1000 px): "rounds (ms)" beside it says what it is the median of. The nominal peak's share is
# "peak" ("share of nominal peak"), after the median: before it, its 166 px left a CUDA run's
# median past the edge.
KERNEL_COLUMN = "kernel"
SHARE_COLUMN = "share"
PAGES_COLUMN = "pages"
MEDIAN_COLUMN = "median (ms)"
ROUNDS_COLUMN = "rounds (ms)"
PEAK_COLUMN = "peak"
# The rounds and bytes of each figure, in a table of their own under the figures: in one table
# at 1000 px the main column (538 px inside its border) showed the figures and the median, then
# cut "rounds (ms)" at its edge and scrolled 846 px of columns sideways for a CPU run of one
# layout. Each table now fits, the rows named alike; the bytes' headers short on screen.
DETAIL_COLUMNS = (ROUNDS_COLUMN, "bytes per call", "bytes counted")
DETAIL_LABELS = {"bytes per call": "B per call", "bytes counted": "B counted"}

LAYOUT_RATIO_COLUMN = f"{PAGE_MAJOR} / {SLOT_MAJOR}"
# on screen "ratio", its table titled "Page-major against slot-major": the full header pushed
# the page-major GB/s past the main column's edge at 1000 px (581 px of columns in 538)
LAYOUT_LABELS = {LAYOUT_RATIO_COLUMN: "ratio"}

RESULT_HELP = {
    LAYOUT_RATIO_COLUMN: f"{PAGE_MAJOR} GB/s over {SLOT_MAJOR} GB/s: over 1.00x, page-major "
                         "moves these pages faster.",
    PAGES_COLUMN: "Pages per call: the pages each timed call moves.",
    SHARE_COLUMN: "Share of baseline: this GB/s as a share of the baseline's (the next column), "
                  "timed in the same rounds.",
    ROUNDS_COLUMN: "The fastest and the slowest of the timed rounds, one call's time each; "
                   "the median (ms) is the median of all the timed rounds, and GB/s the bytes "
                   "counted over it.",
    PEAK_COLUMN: "Share of nominal peak: this GB/s as a share of the device's nominal memory "
                 "bandwidth.",
}


def _operation_name(operation: str) -> str:
    return OPERATION_NAMES.get(operation, operation)


def result_rows(results: Sequence[BenchResult], *, text: bool = True) -> list[dict]:
    """One row per figure: what moved, how fast, against which baseline, how many bytes. When a
    run timed several pool layouts, their shared baselines have one row, layout "shared".

    ``text`` gives shares as percentages for the screen; without it they are fractions (CSV).
    The nominal-peak column is there only when some device has a known peak: after the
    baseline in the CSV, after the median on the screen. The figures come before the timings
    and bytes they are made of; the GPU lab shows the rounds and bytes in a table of their own
    under these, so that each fits the main column at 1000 px.
    """
    with_peak = any(r.nominal_peak_gbps for r in results)
    several = several_layouts(results)
    rows = []
    seen: set[tuple] = set()
    for r in results:
        for f in r.figures:
            layout = r.layout
            if f.operation in BASELINES and several:  # timed once for all the layouts of a call
                key = (r.block_size, r.page_bytes, r.pages_per_call, f.operation)
                if key in seen:
                    continue
                seen.add(key)
                layout = SHARED_LAYOUT
            row = {
                "P (tokens)": r.block_size,
                "page bytes": r.page_bytes,
                PAGES_COLUMN if text else "pages per call": r.pages_per_call,
                LAYOUT_COLUMN if text else "pool layout": TABLE_LAYOUTS.get(layout, layout)
                if text else layout,
                "operation": _operation_name(f.operation) if text else f.operation,
                KERNEL_COLUMN if text else "implementation": f.implementation,
                "GB/s": round(f.gbps, 2),
                SHARE_COLUMN if text else "share of baseline": (
                    _percent(f.share_of_baseline) if text else f.share_of_baseline),
                "baseline": _operation_name(f.baseline) if text else f.baseline,
            }
            if with_peak and not text:
                row["share of nominal peak"] = f.share_of_peak
            # what was timed
            row[MEDIAN_COLUMN] = round(f.median_s * 1e3, 3)
            if with_peak and text:
                row[PEAK_COLUMN] = _percent(f.share_of_peak)
            # the spread of the timed rounds: a difference inside it is noise
            low, high = min(f.samples_s) * 1e3, max(f.samples_s) * 1e3
            if text:
                row[ROUNDS_COLUMN] = f"{low:.3f} to {high:.3f}" if len(f.samples_s) > 1 else (
                    f"{low:.3f} (one round)")
            else:
                row["min (ms)"], row["max (ms)"] = round(low, 3), round(high, 3)
            row["bytes per call"] = f.payload_bytes
            row["bytes counted"] = f.counted_bytes
            rows.append(row)
    return rows


# A figure's timed rounds are noisy when its slowest round took over 1.5x its fastest. The rounds
# of one figure move the same bytes the same way, so on a quiet machine they land close: a few
# percent apart with CUDA events, 1.0x to 1.5x on this project's 2-core CPU machine in quiet
# runs. Past 1.5x something else had the machine in some rounds (another process, the scheduler,
# clock changes), and the medians the page compares (a move against its baseline, one layout
# against the other: differences of tens of percent) can move by as much between runs: two CPU
# runs a minute apart gave the device copy 20.56 and 9.96 GB/s, one figure's rounds spanning
# 4.955 to 15.29 ms (3.1x). The same max / min the table's "rounds (ms)" column shows.
NOISY_SPREAD = 1.5
NOISY_SHOWN = 3  # noisy figures named in the notice, widest first; the rest counted


@dataclass(frozen=True)
class NoisyFigure:
    """A figure whose timed rounds spread over NOISY_SPREAD: what it is and its rounds' range."""

    name: str  # as the chart names it, with the sweep's point where a run swept
    fastest_s: float
    slowest_s: float

    @property
    def spread(self) -> float:
        return self.slowest_s / self.fastest_s


def _figure_name(r: BenchResult, f: Figure, several: bool, point: str) -> str:
    what = ["baseline" if f.operation in BASELINES else f.implementation]
    if several and f.operation not in BASELINES:
        what.append(r.layout)
    name = f"{_operation_name(f.operation)} ({', '.join(what)})"
    if point == "pages_per_call":
        name += f" at {count_text(r.pages_per_call, 'page')} per call"
    elif point == "page_bytes":
        name += f" at {format_bytes(r.page_bytes)} pages"
    return name


def _sweep_point(results: Sequence[BenchResult]) -> str:
    """What a sweep's runs differ in, as ``_figure_name`` names a figure's point: "" for one."""
    return ("page_bytes" if len({r.page_bytes for r in results}) > 1
            else "pages_per_call" if len({r.pages_per_call for r in results}) > 1 else "")


def noisy_figures(results: Sequence[BenchResult],
                  threshold: float = NOISY_SPREAD) -> list[NoisyFigure]:
    """The figures whose slowest timed round took over ``threshold`` times their fastest, widest
    spread first; a baseline the layouts share counted once, a one-round figure never."""
    several = several_layouts(results)
    point = _sweep_point(results)
    noisy, seen = [], set()
    for r in results:
        for f in r.figures:
            key = (r.page_bytes, r.pages_per_call, f.operation, f.implementation,
                   None if f.operation in BASELINES else r.layout)
            if key in seen or len(f.samples_s) < 2:
                continue
            seen.add(key)
            low, high = min(f.samples_s), max(f.samples_s)
            if high > threshold * low:
                noisy.append(NoisyFigure(_figure_name(r, f, several, point), low, high))
    return sorted(noisy, key=lambda n: -n.spread)


def noise_text(results: Sequence[BenchResult], threshold: float = NOISY_SPREAD) -> str:
    """A plain warning where some figure's rounds spread over ``threshold``: which ones, from
    what to what, and what to do. Empty when every figure's rounds are close."""
    noisy = noisy_figures(results, threshold)
    if not noisy:
        return ""
    parts = [f"{n.name} rounds spread from {n.fastest_s * 1e3:.3f} to {n.slowest_s * 1e3:.3f} "
             f"ms ({times_text(n.spread)}x)" for n in noisy[:NOISY_SHOWN]]
    if (more := len(noisy) - NOISY_SHOWN) > 0:
        parts.append(f"{count_text(more, 'more figure')} over {threshold:g}x")
    return (f"Noisy: {'; '.join(parts)}. Medians this unsteady can differ by as much in the "
            "next run, so a difference between figures smaller than that may be noise: rerun, "
            "or raise Timed rounds.")


# A page move reads and writes the bytes a plain copy of them does, and more besides (its page
# ids, rows apart): it should not outrun its baseline, a copy of the same bytes timed in the
# same rounds. A share of it past OVER_BASELINE (5% for timing noise) says the baseline ran slow
# in its rounds (a cold cache, another process), and every share of it reads high: ``bench
# --preset gpt-oss-20b --device cpu`` gave a gather of 9.75 GB/s, 146.4% of a 6.66 GB/s copy.
OVER_BASELINE = 1.05


def over_baseline_text(results: Sequence[BenchResult], rounds: str = "Timed rounds") -> str:
    """A plain warning where a move's share of its baseline is over ``OVER_BASELINE``: which
    figures, at what share, and what to do (``rounds``: how the caller names the timed rounds:
    the lab's field, the CLI's --repeats). Empty where none is: a baseline it can trust."""
    several = several_layouts(results)
    point = _sweep_point(results)
    over = [f"{_figure_name(r, f, several, point)} at "
            f"{percent_text(f.share_of_baseline, digits=1)} of {_operation_name(f.baseline)}"
            for r in results for f in r.figures
            if f.operation not in BASELINES and f.share_of_baseline > OVER_BASELINE]
    if not over:
        return ""
    return (f"Baseline slow: {'; '.join(over)}. A page move should not outrun a plain copy of "
            "the same bytes timed in the same rounds, so that copy likely ran slow (a cold "
            f"cache, a busy machine) and its shares read high: rerun, or raise {rounds}.")


MIN_ROUNDS_APART = 5  # timed rounds per layout before "rounds apart" says anything
APART_COLUMN = "rounds apart"


def _apart_text(apart: bool | None, rounds: int) -> str:
    """A "rounds apart" cell: yes, no, or that ``rounds`` a layout are too few to tell, and
    how many to time ("cannot tell from 2 rounds: time 5 or more" left "5 or more" of what
    to guess)."""
    if apart is None:
        return f"too few rounds to tell ({rounds:,}): time {MIN_ROUNDS_APART} or more rounds"
    return "yes" if apart else "no: the rounds overlap"


def _undecided_note(rounds: int) -> str:
    """What the note under the table says where no row can tell, the column gone: in plain
    words, what is undecided (whether the layouts' rounds overlap) and why."""
    each = f"{rounds:,} round{'s' if rounds != 1 else ''}"
    return (f"With {each} a layout, too few to tell whether they overlap: time "
            f"{MIN_ROUNDS_APART} or more.")


def layout_rows(results: Sequence[BenchResult], *, text: bool = True) -> list[dict]:
    """Page-major against slot-major, one row per page move timed in both layouts (the
    baselines are shared, so they have no row): both GB/s and their ratio. The layouts of one
    plan and call run in the same rounds against one copy, so the ratio is the layout's effect.
    Empty unless a run timed both layouts."""
    by_layout: dict[tuple, dict[str, Figure]] = {}
    for r in results:
        for f in r.figures:
            if f.operation in BASELINES:
                continue
            key = (r.block_size, r.page_bytes, r.pages_per_call, f.operation, f.implementation)
            by_layout.setdefault(key, {})[r.layout] = f
    rows = []
    for (block, page, pages, op, impl), figures in by_layout.items():
        if set(figures) != set(POOL_LAYOUTS):
            continue
        slot, whole = figures[SLOT_MAJOR], figures[PAGE_MAJOR]
        ratio = whole.gbps / slot.gbps
        # apart: no timed round of one layout falls inside the other's range of rounds. Two
        # layouts alike still land apart by chance in 2 of the C(2n, n) orders of n rounds
        # each: a third of the time at 2 rounds, 10% at 3, 2.9% at 4, 0.8% at 5, so fewer
        # than 5 cannot tell (a 3-round CPU run once called a 2.94x ratio real that was not).
        rounds = min(len(slot.samples_s), len(whole.samples_s))
        apart = None if rounds < MIN_ROUNDS_APART else (
            max(slot.samples_s) < min(whole.samples_s)
            or max(whole.samples_s) < min(slot.samples_s))
        rows.append({
            "P (tokens)": block, "page bytes": page,
            PAGES_COLUMN if text else "pages per call": pages,
            "operation": _operation_name(op) if text else op,
            KERNEL_COLUMN if text else "implementation": impl,
            # the ratio and whether it is noise first: what a scrolled table shows
            LAYOUT_RATIO_COLUMN: f"{times_text(ratio)}x" if text else ratio,
            APART_COLUMN: (_apart_text(apart, rounds) if text else apart),
            f"{SLOT_MAJOR} GB/s": round(slot.gbps, 2),
            f"{PAGE_MAJOR} GB/s": round(whole.gbps, 2),
        })
    return rows


def apart_said_once(rows: Sequence[dict]) -> tuple[list[dict], str]:
    """``layout_rows`` for the screen, and a note for under the table: where every row cannot
    tell (too few rounds), "rounds apart" goes and its one sentence is said once. Repeated on
    each row it took a column of its own, and at 1000 px the table 877 px of its 538."""
    said = {row.get(APART_COLUMN) for row in rows}
    undecided = {_apart_text(None, n): n for n in range(1, MIN_ROUNDS_APART)}
    if len(said) != 1 or (cell := next(iter(said))) not in undecided:
        return list(rows), ""
    return ([{k: v for k, v in row.items() if k != APART_COLUMN} for row in rows],
            _undecided_note(undecided[cell]))


# Columns a results table repeats on every row of one run: shown only where they vary (the run's
# headline gives them otherwise).
RUN_COLUMNS = ("P (tokens)", "page bytes", PAGES_COLUMN, LAYOUT_COLUMN)


def varying_columns(rows: Sequence[dict], columns: Sequence[str] = RUN_COLUMNS) -> list[dict]:
    """``rows`` without those of ``columns`` that hold one value in every row (a table of one
    run repeats its page size on every line and pushes the figures off a laptop's screen), and
    without P where the page bytes name it (a page-bytes sweep: one P to each page size, which
    the table of pools allocated gives beside it; the P column left the baseline past the
    540 px edge)."""
    same = {c for c in columns if len({row.get(c) for row in rows}) == 1}
    p_of: dict = {}
    for row in rows:
        p_of.setdefault(row.get("page bytes"), set()).add(row.get("P (tokens)"))
    if "page bytes" not in same and all(len(ps) == 1 for ps in p_of.values()):
        same.add("P (tokens)")
    return [{k: v for k, v in row.items() if k not in same} for row in rows]


@dataclass(frozen=True)
class AllocationRow:
    """Planned against allocated, for one plan of a run (exact bytes; the same in either pool
    layout)."""

    page_bytes: int
    block_size: int  # P: a page-bytes sweep's results table leaves it to this one
    planned_blocks: int
    allocated_blocks: int
    planned_bytes: int
    allocated_bytes: int
    limited_by: str

    def table_row(self) -> dict:
        return {"page bytes": self.page_bytes, "P (tokens)": self.block_size,
                "planned blocks": self.planned_blocks,
                "allocated blocks": self.allocated_blocks, "planned bytes": self.planned_bytes,
                "allocated bytes": self.allocated_bytes, "limited by": self.limited_by}


def allocation_rows(results: Sequence[BenchResult]) -> list[AllocationRow]:
    """One row per plan allocated (a pages-per-call sweep reuses one allocation; each layout
    allocates the same blocks)."""
    rows: dict[int, AllocationRow] = {}
    for r in results:
        a = r.allocation
        rows.setdefault(a.page_bytes, AllocationRow(
            a.page_bytes, r.block_size, a.planned_blocks, a.allocated_blocks, a.planned_bytes,
            a.allocated_bytes, cap_reason_text(a.cap_reason, a.allocated_blocks)))
    return list(rows.values())


@dataclass(frozen=True)
class Series:
    """One (operation, implementation, pool layout) over the swept values, for a bandwidth
    chart."""

    operation: str
    implementation: str
    x: tuple[int, ...]  # pages per call or page bytes
    gbps: tuple[float, ...]
    call_bytes: tuple[int, ...]  # payload of one call at each point
    layout: str | None = None  # the pool layout it moved pages of; None: a shared baseline
    named_layout: bool = False  # the run timed several layouts: the name says which
    baseline: str = ""  # the operation its figures are a share of ("": BASELINE_OF's)

    @property
    def kind(self) -> str:
        return OPERATION_KIND.get(self.operation, "copy")

    @property
    def is_baseline(self) -> bool:
        return self.operation in BASELINES

    @property
    def compared_with(self) -> str:
        """The baseline operation its GB/s is a share of (a baseline: itself)."""
        if self.is_baseline:
            return self.operation
        return self.baseline or BASELINE_OF.get(self.operation, "copy")

    @property
    def name(self) -> str:
        title = _operation_name(self.operation)
        what = ["baseline" if self.is_baseline else self.implementation]
        if self.named_layout:
            what.append(self.layout)
        return f"{title} ({', '.join(what)})"


def bandwidth_series(results: Sequence[BenchResult], x: str) -> list[Series]:
    """Each figure's GB/s over ``x`` (``"pages_per_call"`` or ``"page_bytes"``), sorted by x;
    series in the order the run measured them (baseline first), the page moves once per pool
    layout timed. The layouts of one call share their baselines (timed in the same rounds), so
    each baseline is one series."""
    if x not in ("pages_per_call", "page_bytes"):
        raise ValueError(f"x must be 'pages_per_call' or 'page_bytes', got {x!r}")
    points: dict[tuple[str, str, str | None], dict[int, tuple[float, int]]] = {}
    baselines: dict[tuple[str, str, str | None], str] = {}
    for r in results:
        for f in r.figures:
            layout = None if f.operation in BASELINES else r.layout
            key = (f.operation, f.implementation, layout)
            points.setdefault(key, {}).setdefault(getattr(r, x), (f.gbps, f.payload_bytes))
            baselines.setdefault(key, f.baseline)
    several = several_layouts(results)
    out = []
    for (op, impl, layout), by_x in points.items():
        xs = sorted(by_x)
        out.append(Series(op, impl, tuple(xs), tuple(by_x[v][0] for v in xs),
                          tuple(by_x[v][1] for v in xs), layout, several and layout is not None,
                          baselines[(op, impl, layout)]))
    return out


def results_json(run: LabRun) -> str:
    """Every result's summary (the CLI's --json) with what the run was for, and the layouts
    side by side when the run timed both (``layout_rows``; absent otherwise)."""
    data = {"model": run.model, "sweep": run.settings.sweep,
            "max_blocks": run.settings.max_blocks,
            "results": [r.summary() for r in run.results]}
    if layouts := layout_rows(run.results, text=False):
        data["layouts"] = layouts
    return json.dumps(data, indent=2)


def results_csv(results: Sequence[BenchResult]) -> str:
    return rows_csv(result_rows(results, text=False))
