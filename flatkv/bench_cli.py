"""``python -m flatkv bench``: time a model's page movers on this machine.

Torch-free at import: ``flatkv.gpu`` (and so torch) is imported only when the command runs, so
the rest of the command line starts fast on machines without torch.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from flatkv.analysis import check_sizes
from flatkv.gpu_settings import (
    BENCH_REPEATS,
    DEFAULT_CALL_BYTES,
    DEFAULT_POOL_BYTES,
    DEFAULT_SHARE_PERCENT,
    FLAG_NAMES,
    POOL_LAYOUTS,
    SLOT_MAJOR,
    check_max_blocks,
    most_bench_count,
)
from flatkv.gpu_view import (
    POOL_LAYOUT_HELP,
    cap_reason_text,
    over_baseline_text,
    per_device_text,
)
from flatkv.plan import (
    PACKED_NEEDS_HISTORY,
    alignment_or_block_size,
    bound_fix,
    bound_refusal,
    plan_tensors,
)
from flatkv.profile import CacheProfile
from flatkv.strategy_cli import positive_argument, whole_argument, whole_argument_in
from flatkv.units import count_text, percent_text

if TYPE_CHECKING:
    from flatkv.gpu.bench import BenchResult


def add_bench_arguments(parser: argparse.ArgumentParser) -> None:
    """Device, caps and repeats; the model and plan arguments come from flatkv.given_cli."""
    group = parser.add_argument_group("benchmark")
    group.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N (default cpu)")
    group.add_argument("--max-blocks", type=whole_argument_in(2), default=None, metavar="N",
                       help="allocate at most N blocks (default: the blocks that fill "
                       f"{per_device_text(DEFAULT_POOL_BYTES)}, within "
                       f"{DEFAULT_SHARE_PERCENT}%% of free memory)")
    group.add_argument("--pages-per-call", type=positive_argument, default=None, metavar="N",
                       help="pages each gather / scatter moves (default: "
                       f"{per_device_text(DEFAULT_CALL_BYTES)}, at most half the pool)")
    group.add_argument("--pool-layout", choices=POOL_LAYOUTS, default=SLOT_MAJOR,
                       help=POOL_LAYOUT_HELP.replace("%", "%%") + f" Default {SLOT_MAJOR}.")
    group.add_argument("--repeats", type=positive_argument, default=None, metavar="N",
                       help=f"timed rounds (default {BENCH_REPEATS['cpu']} on the CPU, "
                       f"{BENCH_REPEATS['cuda']} on CUDA)")
    group.add_argument("--threads", type=whole_argument, default=1, metavar="N",
                       help="torch CPU threads on the CPU (default 1: figures of the movers, "
                       "not of the scheduler; 0 leaves torch's choice)")


def bench_text(args: argparse.Namespace, profile: CacheProfile) -> str:
    """Plan ``profile`` at ``args.budget``, allocate at most ``--max-blocks`` of it, time it."""
    from flatkv.gpu.bench import DeviceBusy, run_benchmark
    from flatkv.gpu.pool import resolve_device

    if not profile.has_attention:
        raise ValueError(f"{PACKED_NEEDS_HISTORY}; bench times packed slabs only: give a "
                         "model with attention layers")
    _check_counts(args)
    # in the command line's words, "--max-blocks 1: ...; give ...", before the library's
    resolve_device(args.device, flag="--device")
    if args.max_blocks is not None:
        check_max_blocks("--max-blocks", args.max_blocks, flag=True)
    check_sizes(args.block_size, args.alignment)  # as plan's: past them a plan is a typo
    plan = plan_tensors(
        profile.components(),
        block_size=args.block_size,
        alignment=alignment_or_block_size(args.alignment, args.block_size),
        budget_bytes=args.budget,
    )
    try:
        result = run_benchmark(plan, device=args.device, max_blocks=args.max_blocks,
                               pages_per_call=args.pages_per_call, repeats=args.repeats,
                               cpu_threads=args.threads or None, layout=args.pool_layout,
                               names=FLAG_NAMES)
    except DeviceBusy as err:
        raise ValueError(str(err)) from None
    if args.json:
        return json.dumps(result.summary(), indent=2)
    return format_result(result)


def _check_counts(args: argparse.Namespace) -> None:
    """bench's counts in the command line's words, one rule for each, in the form of every
    bound's refusal (``plan.bound_refusal``: ``--repeats 0 must be positive: give 1 or
    more``), before the library's words for the lab ("repeats 0 must be positive", "cpu_threads
    10,000 is ...")."""
    cores = most_bench_count("cpu_threads")  # the library's bounds, in the flags' words
    if args.threads < 0:  # the library's own hint (None) is no value this flag takes
        raise ValueError(f"--threads {args.threads:,} {bound_refusal(args.threads)}: give 1 or "
                         "more, or 0 for torch's choice")
    if args.threads > cores:
        raise ValueError(f"--threads {args.threads:,} is more than this machine's "
                         f"{count_text(cores, 'core')}: give {cores:,} or fewer, or 0 for "
                         "torch's choice")
    for flag, value, what in (("--repeats", args.repeats, "a bench times one round"),
                              ("--pages-per-call", args.pages_per_call, "a call moves one page")):
        if value is not None and value < 1:
            raise ValueError(f"{flag} {value:,} {bound_refusal(value, 1)} ({what} at least): "
                             f"{bound_fix(value, 1)}, or leave it out for the default")
    if args.repeats is not None and args.repeats > (most := most_bench_count("repeats")):
        raise ValueError(f"--repeats {args.repeats:,} is more timed rounds than a bench takes: "
                         f"give {most:,} or fewer")


def format_result(result: BenchResult) -> str:
    """The result as a short human-readable table (the pool's limit said as the GPU lab says
    it)."""
    a = result.allocation
    lines = [
        f"device  {result.device} ({result.device_name}), {result.versions_text}",
        f"plan    {a.planned_blocks:,} blocks x {a.page_bytes:,} B = {a.planned_bytes:,} B; "
        f"allocated {a.allocated_blocks:,} blocks = {a.allocated_bytes:,} B (limited by "
        f"{cap_reason_text(a.cap_reason, a.allocated_blocks)})",
        f"pool    {a.layout}: {len(a.tensors)} slot tensors"
        + (" in one buffer, each page's slot rows back to back" if a.layout != SLOT_MAJOR
           else ", one allocation each"),
        f"call    {count_text(result.pages_per_call, 'page')} x {result.page_bytes:,} B = "
        f"{result.call_bytes:,} B",
        "",
        f"{'operation':<18}{'impl':<8}{'GB/s':>10}  share",
    ]
    for f in result.figures:
        share = f"{percent_text(f.share_of_baseline, digits=1):>6} of {f.baseline}"
        if f.share_of_peak is not None:
            share += f", {percent_text(f.share_of_peak, digits=1)} of nominal peak"
        lines.append(f"{f.operation:<18}{f.implementation:<8}{f.gbps:>10.2f}  {share}")
    lines += ["", result.counting]
    if slow := over_baseline_text([result], rounds="--repeats"):
        lines.append(f"note: {slow}")
    return "\n".join(lines)
