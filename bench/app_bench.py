"""Server-side rerun time of every page for the largest model, against the 300 ms goal.

Runs the app through streamlit's AppTest (no browser): the first run of each page fills the
caches, then each page is rerun ``--repeat`` times and the median is printed. Timings vary with
the machine; the ratio to the goal is the figure to compare.

    python bench/app_bench.py [--model NAME] [--repeat 7]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from streamlit.testing.v1 import AppTest  # noqa: E402

from flatkv.app_model import largest_model  # noqa: E402

GOAL_MS = 300.0
PAGES = ["app_pages/model.py", "app_pages/layout.py", "app_pages/budget.py",
         "app_pages/compare.py", "app_pages/gpu.py"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=largest_model())
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--block-size", type=int, default=16)
    args = parser.parse_args()

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params.update({"model": args.model, "block": str(args.block_size)})
    at.run()
    print(f"model {args.model}, block {args.block_size}, {args.repeat} reruns per page "
          f"(median), goal {GOAL_MS:.0f} ms")
    worst = 0.0
    for page in PAGES:
        at.switch_page(page).run()  # first run: fills st.cache_data
        if at.exception or at.error:
            print(f"{page}: failed: {[e.value for e in [*at.exception, *at.error]]}")
            return 1
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            at.run()
            times.append((time.perf_counter() - t0) * 1000)
        med = statistics.median(times)
        worst = max(worst, med)
        print(f"  {page:24s} {med:7.1f} ms  ({med / GOAL_MS:.2f} x goal; min {min(times):.1f},"
              f" max {max(times):.1f})")
    print(f"slowest page: {worst:.1f} ms = {worst / GOAL_MS:.2f} x the {GOAL_MS:.0f} ms goal: "
          + ("within" if worst <= GOAL_MS else "OVER"))
    return 0 if worst <= GOAL_MS else 1


if __name__ == "__main__":
    sys.exit(main())
