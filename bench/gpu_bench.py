"""Page-mover speed goals of the GPU lab (issue #6), measured on this machine.

    python bench/gpu_bench.py [--device cpu|cuda[:N]] [--quick] [--json-out PATH]

Prints every figure as GB/s and as a share of its baseline measured in the same run (a plain
device copy of the same bytes; one large pinned copy for host figures), then checks the goals:

- CPU: gather and scatter >= 60% of copy for calls moving 64 MiB or more.
- GPU: gather and scatter >= 80% of copy (the preferred mover) for calls moving 64 MiB or more
  (smaller calls are launch-bound, SPEC section 4: the goal does not cover them); Triton at least
  as fast as the torch reference (within 5%) and faster for many small pages; pinned host copies
  of pages of 64 KiB and more >= 80% of one large pinned copy.

The attention-only pages are timed in both pool layouts (flatkv.gpu.pool): slot-major, one
tensor per slot as the plan allocates them, and page-major, one buffer with each page's slot rows
back to back (vLLM's cross-layer KV blocks), in the same rounds against one copy. The script
prints page-major over slot-major for each page size.

Known misses (CPU, 1 torch thread): about 20 runs on this project's 2-core AMD EPYC VMs
(2026-12-01 and 12-02); those that counted met 21 to 23 of the 28 goals. Share of copy by
page size, slot-major / page-major:
8 KiB pages (1 KiB rows) 34 to 50% / 47 to 85%; 32 KiB (4 KiB rows) 41 to 72% / 77 to 90%;
128 KiB (16 KiB rows) 50 to 69% / 81 to 106%; 512 KiB and more 82 to 130% in both, within 0.77
to 1.22x of each other. With --threads 2 on an idle VM, 26 to 27 of 28 in 3 runs (only 8 KiB
pages slot-major still miss); the default stays 1 thread, since a busy neighbour on a 2-core VM
stalls a 2-thread copy.

Random 1 KiB reads are bound by memory latency on one core, not by torch: index_select,
numpy.take on a 1 KiB void dtype and a plain C loop of memcpy per row all land at 41 to 45% of
copy here. A hand-written C kernel with software prefetch 4 rows ahead and
non-temporal stores reached 60% gather and 71% scatter, on the line rather than over it, at the
price of a compiler at install time; this project does not carry it. Slot rows of 64 KiB and
more meet the goal in either layout; 16 KiB rows sit on the line slot-major (58 to 68% on the
2026-12-02 VM) and meet it page-major; 4 KiB rows page-major, and slot-major on some machines.

Timings never go in tests: this script is where the numbers live.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from flatkv.bench_cli import format_result  # noqa: E402
from flatkv.gpu.bench import BenchResult, run_sweep  # noqa: E402
from flatkv.gpu.pool import resolve_device  # noqa: E402
from flatkv.gpu_settings import PAGE_MAJOR, SLOT_MAJOR  # noqa: E402
from flatkv.gpu_view import layout_rows  # noqa: E402
from flatkv.plan import components_from_layers, plan_tensors  # noqa: E402
from flatkv.units import times_text  # noqa: E402

MiB = 1 << 20
KiB = 1 << 10

# The hybrid model of SPEC section 1: 12 x (3 GDN + 1 full), KV 2,048 B/slot, state 2,146,304 B.
HYBRID = dict(
    layer_types=(["linear_attention"] * 3 + ["full_attention"]) * 12,
    kv_bytes_per_slot=2048,
    state_const_bytes={"conv": 49152, "ssm": 2097152},
)


def attention_plans(row_sizes: list[int], layers: int = 8) -> list:
    """Attention-only plans of ``layers`` full layers (one slot each) with the given slot rows."""
    comps = components_from_layers(layer_types=["full_attention"] * layers,
                                   kv_bytes_per_slot=256, state_const_bytes={})
    return [plan_tensors(comps, block_size=row // 256, alignment=1, budget_bytes=1 << 40)
            for row in row_sizes]


def hybrid_plan(block_size: int):
    comps = components_from_layers(**HYBRID)
    return plan_tensors(comps, block_size=block_size, alignment=block_size,
                        budget_bytes=80 << 30)


def run(device: str, quick: bool, threads: int | None) -> list[BenchResult]:
    dev = resolve_device(device)
    cuda = dev.type == "cuda"
    results: list[BenchResult] = []

    def progress(fraction: float, message: str) -> None:
        print(f"\r  {fraction:5.1%} {message:<60}", end="", file=sys.stderr, flush=True)

    rows = [4 * KiB, 64 * KiB, 1 * MiB] if quick else [1 * KiB, 4 * KiB, 16 * KiB, 64 * KiB,
                                                       256 * KiB, 1 * MiB]
    call = 256 * MiB if cuda else 64 * MiB
    both = (SLOT_MAJOR, PAGE_MAJOR)
    sweeps = [
        ("attention-only, 8 slots, page = 8 x row", attention_plans(rows), [None],
         (8 if cuda else 1) << 30, both),
        ("hybrid (SPEC 1), block 64 -> P 1088, pages of 104 MB", [hybrid_plan(64)], [1, 2],
         (8 if cuda else 1) << 30, (SLOT_MAJOR,)),
    ]
    if cuda:  # many small pages: where one fused launch should beat one launch per slot
        sweeps.append(("attention-only, small calls", attention_plans([4 * KiB, 16 * KiB]),
                       [64, 512], 1 << 30, (SLOT_MAJOR,)))
    for title, plans, counts, pool_bytes, layouts in sweeps:
        print(f"== {title}", file=sys.stderr)
        for plan in plans:
            page = plan.geometry.block_bytes  # packed slabs: the sum of the slot rows
            per_plan_counts = [c if c is not None else max(1, call // page) for c in counts]
            max_blocks = max(2 * max(per_plan_counts), pool_bytes // page)
            measured = run_sweep([plan], device=dev, max_blocks=max_blocks,
                                 cpu_threads=threads, pages_per_call=per_plan_counts,
                                 progress=progress, layouts=layouts)
            for r in measured:  # as they come: a run cut short by a time limit keeps them
                print(format_result(r).rsplit("\n\n", 1)[0], end="\n\n", flush=True)
            results += measured
        print(file=sys.stderr)
    return results


def layout_ratios(results: list[BenchResult]) -> list[str]:
    """Page-major over slot-major for each page size and call timed in both layouts (timed in
    the same rounds against one copy, so the GB/s ratio is the layout's effect)."""
    by_call: dict[tuple[int, int], list[str]] = {}
    for row in layout_rows(results, text=False):
        if row["operation"] in ("gather", "scatter") and row["implementation"] == "torch":
            by_call.setdefault((row["page bytes"], row["pages per call"]), []).append(
                f"{row['operation']} {times_text(row['page-major / slot-major'])}x")
    return [f"page-major / slot-major (torch), page {page} B x {pages}: {', '.join(ratios)}"
            for (page, pages), ratios in by_call.items()]


def goals(results: list[BenchResult], cuda: bool) -> list[tuple[bool, str]]:
    checks: list[tuple[bool, str]] = []
    for r in results:
        where = (f"page {r.page_bytes} B x {r.pages_per_call} = {r.call_bytes / MiB:.1f} MiB, "
                 f"{r.layout}")
        if not cuda and r.call_bytes >= 64 * MiB:
            for op in ("gather", "scatter"):
                share = r.figure(op, "torch").share_of_baseline
                # one decimal: 59.6% must not print as a failing "60%"
                checks.append((share >= 0.60, f"CPU {op} {share:.1%} of copy (>= 60%), {where}"))
        if cuda:
            for op in ("gather", "scatter"):
                if r.call_bytes >= 64 * MiB:  # issue #6's goal, like the CPU's: large calls only
                    share = r.figure(op).share_of_baseline
                    checks.append((share >= 0.80, f"GPU {op} [{r.preferred}] {share:.1%} of copy "
                                                  f"(>= 80%), {where}"))
                if "triton" in r.implementations:
                    t, ref = r.figure(op, "triton").gbps, r.figure(op, "torch").gbps
                    # one launch against one per slot: a page-major pool is one launch in torch too
                    small = (r.layout == SLOT_MAJOR and r.page_bytes <= 64 * KiB
                             and r.pages_per_call >= 64)
                    ok = t > ref if small else t >= 0.95 * ref
                    want = "faster than" if small else "at least as fast as (-5%)"
                    checks.append((ok, f"GPU triton {op} {t:.0f} vs torch {ref:.0f} GB/s: "
                                       f"{want} torch, {where}"))
            if r.page_bytes >= 64 * KiB:
                for op in ("d2h", "h2d"):
                    share = r.figure(op).share_of_baseline
                    checks.append((share >= 0.80, f"GPU {op} {share:.1%} of one large pinned "
                                                  f"copy (>= 80%), {where}"))
    return checks


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--quick", action="store_true", help="fewer page sizes")
    parser.add_argument("--json-out", type=Path, default=None)
    parser.add_argument("--threads", type=int, default=1,
                        help="torch CPU threads for every variant (default 1: on a shared "
                        "2-core VM a 2-thread copy stalls whenever another process holds a "
                        "core, which swamps the figures; 0 leaves torch's choice)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    try:
        results = run(args.device, args.quick, args.threads or None)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    cuda = results[0].device.startswith("cuda")
    print(results[0].counting)
    print()
    for line in layout_ratios(results):
        print(line)
    checks = goals(results, cuda)
    print()
    for ok, line in checks:
        print(("PASS  " if ok else "FAIL  ") + line)
    print(f"\n{sum(ok for ok, _ in checks)}/{len(checks)} goals met in "
          f"{time.perf_counter() - start:.0f} s")
    if args.json_out:
        args.json_out.write_text(json.dumps(
            {"results": [r.summary() for r in results],
             "goals": [{"ok": ok, "goal": line} for ok, line in checks]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
