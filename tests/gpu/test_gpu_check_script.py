"""bench/gpu_check.sh, run with a stand-in python (no GPU, no timing): every step runs within the
one budget the device's single command allows, and the summary is always printed."""

import os
import subprocess
import time
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "gpu_check.sh"

# A python that answers at once, except where ``HANG`` names a step: that one never returns on
# its own (exec: the timeout kills the sleep itself, not a shell whose child holds the pipe).
STAND_IN = """#!/usr/bin/env bash
case "$*" in
  *"import streamlit"*) exit 1 ;;  # as on the GPU image without the carried wheels
  *"$HANG"*) exec sleep 600 ;;
esac
exit 0
"""


def check(tmp_path, budget, hang):
    python = tmp_path / "python"
    python.write_text(STAND_IN)
    python.chmod(0o755)
    out = tmp_path / "out"
    env = {**os.environ, "PYTHON": str(python), "OUT": str(out), "HANG": hang,
           "GPU_CHECK_SECONDS": str(budget)}
    start = time.monotonic()
    done = subprocess.run(["bash", str(SCRIPT)], env=env, capture_output=True, text=True,
                          timeout=120)
    return done, time.monotonic() - start, out


def test_a_hanging_step_leaves_the_summary_inside_the_budget(tmp_path):
    # 11 s in all: the hanging tests step is cut at what is left (about 11 s, not its 180 s
    # cap), and the page, bench and bench-command steps, with under 10 s left, are not run
    done, seconds, out = check(tmp_path, 11, "pytest -q -p no:cacheprovider tests/gpu")
    assert seconds < 30
    assert done.returncode == 1  # the tests did not pass
    assert done.stdout.count("not run: out of time (GPU_CHECK_SECONDS=11)") == 3
    assert "== summary: tests rc=124, page rc=none, gpu_bench rc=none, cli rc=none;" in (
        done.stdout)
    assert (out / "tests.txt").exists()


def test_every_step_runs_when_nothing_hangs(tmp_path):
    done, seconds, _ = check(tmp_path, 540, "nothing hangs")
    assert seconds < 30 and done.returncode == 0
    assert "not run: out of time" not in done.stdout
    assert "not run: streamlit or plotly is not installed here" in done.stdout
    assert "== summary: tests rc=0, page rc=none, gpu_bench rc=0, cli rc=0;" in done.stdout


def test_a_budget_that_is_not_a_number_is_refused(tmp_path):
    done, _, out = check(tmp_path, "9 min", "nothing hangs")
    assert done.returncode == 2 and done.stdout == "" and not out.exists()
    assert done.stderr == ("GPU_CHECK_SECONDS=9 min is not a whole number of seconds: give e.g. "
                           "540\n")
