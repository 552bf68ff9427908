"""Planner speed: flatkv.plan vs the reference on a 1,024-cache-layer hybrid, and sweep cost.

Prints ratios measured in one run (ours vs the reference), so a noisy shared machine does not
mislead. Goals (issue #2): plan_tensors at least 5x faster with identical output; 1,000 sweep
points well under 50 ms.

    python bench/plan_bench.py [--repeat N]
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from flatkv import plan  # noqa: E402
from flatkv.analysis import sweep_block_sizes, sweep_budgets  # noqa: E402

REFERENCE = REPO.parent / "shared" / "reference" / "flat_memory_plan.py"


def load_reference():
    spec = importlib.util.spec_from_file_location("flat_memory_plan_reference", REFERENCE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def median_seconds(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def plain(p):
    g = p.geometry
    return ((g.block_size, g.block_bytes, g.num_blocks),
            [(t.name, t.nbytes, [tuple(vars(b).values()) for b in t.bindings])
             for t in p.tensors])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    ref = load_reference()

    # 768 linear + 256 full: (3 linear, 1 full) x 256, Qwen3.5-like bytes.
    labels = (["linear_attention"] * 3 + ["full_attention"]) * 256
    kw = dict(layer_types=labels, kv_bytes_per_slot=2048,
              state_const_bytes={"conv": 49152, "ssm": 2097152})
    ours_c, ref_c = plan.components_from_layers(**kw), ref.components_from_layers(**kw)
    budget = 10**13
    call = dict(block_size=64, alignment=16, budget_bytes=budget)
    assert plain(plan.plan_tensors(ours_c, **call)) == plain(ref.plan_tensors(ref_c, **call)), \
        "outputs differ"

    # Alternate the two so drift on a shared machine hits both alike.
    ours_t, ref_t = [], []
    for _ in range(args.repeat):
        ref_t.append(median_seconds(lambda: ref.plan_tensors(ref_c, **call), 1))
        ours_t.append(median_seconds(lambda: plan.plan_tensors(ours_c, **call), 1))
    ours_s, ref_s = statistics.median(ours_t), statistics.median(ref_t)
    print(f"plan_tensors, {len(labels):,} cache layers ({len(ours_c):,} components), "
          f"identical output:")
    print(f"  reference {ref_s * 1e3:9.1f} ms   ours {ours_s * 1e3:7.1f} ms   "
          f"speed-up {ref_s / ours_s:6.1f}x  (goal >= 5x)")

    sizes = list(range(1, 1001))
    budgets = [g * 10**9 for g in range(1, 1001)]
    sweep_bs = median_seconds(lambda: sweep_block_sizes(ours_c, sizes, budget_bytes=budget,
                                                        alignment=16), args.repeat)
    sweep_bu = median_seconds(lambda: sweep_budgets(ours_c, budgets, block_size=64,
                                                    alignment=16), args.repeat)
    one_plan = median_seconds(lambda: plan.plan_tensors(ours_c, **call), args.repeat)
    print("1,000-point sweeps on the same model (closed form, no plan per point):")
    print(f"  over block sizes {sweep_bs * 1e3:6.2f} ms   over budgets {sweep_bu * 1e3:6.2f} ms"
          f"   (goal well under 50 ms; 1,000 full plans would take ~{one_plan * 1e3 * 1000:,.0f}"
          " ms)")


if __name__ == "__main__":
    main()
