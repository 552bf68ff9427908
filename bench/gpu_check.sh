#!/usr/bin/env bash
# One-shot check of the GPU lab on a CUDA machine (sized for an H200 session: at most ~9 min).
#
#   bash bench/gpu_check.sh            # from anywhere; results go to $OUT (or a temp folder)
#
# 1. environment (GPU, torch, triton), 2. the GPU lab tests on cpu AND cuda (Triton compiled on
# CUDA, interpreted on the CPU), 3. one run of the GPU lab page on cuda:0 where streamlit and
# plotly import, 4. bench/gpu_bench.py --device cuda (figures, goal PASS/FAIL, JSON), 5. the bench
# command's JSON for the SPEC section 1 hybrid model.
# The GPU machine's image has torch and triton but not streamlit or plotly: `bash
# bench/gpu_wheels.sh` here puts them in .whl/ (git-ignored); carry .whl and they are installed
# into /tmp/site first. Without them step 3 says so and the rest runs.
# Exit status: 0 when the tests pass (goal misses are reported, not fatal; a page test not run
# is said, not fatal), else 1.
# Time: each step has its own cap (tests 180 s, page 120 s, bench 300 s, bench command 60 s:
# 660 s together, past the device's 600 s a command), and all of them share one budget,
# GPU_CHECK_SECONDS (default 540): a step gets at most what is left of it and one with under
# 10 s left is not run, so a step that hangs costs the later ones their time, never the summary.
set -u
cd "$(dirname "$0")/.."
BUDGET_S="${GPU_CHECK_SECONDS:-540}"
case "$BUDGET_S" in
  "" | *[!0-9]*)  # bash arithmetic would read a word as 0 and skip every step
    echo "GPU_CHECK_SECONDS=$BUDGET_S is not a whole number of seconds: give e.g. 540" >&2
    exit 2 ;;
esac
step_s() {  # the timeout of a step capped at $1 s: what is left of the budget, or 0 (skip it)
  local left=$((BUDGET_S - SECONDS))
  if [ "$left" -lt 10 ]; then echo 0; elif [ "$left" -lt "$1" ]; then echo "$left"; else echo "$1"; fi
}
OUT_DIR="${OUT:-$(mktemp -d)}"
mkdir -p "$OUT_DIR"
PY="${PYTHON:-python3}"  # the image promises python3, not python
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1
if [ -d .whl ]; then
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl && export PYTHONPATH="$PYTHONPATH:/tmp/site"
fi

echo "== environment" | tee "$OUT_DIR/env.txt"
{
  nvidia-smi --query-gpu=name,memory.total,memory.used,clocks.max.memory --format=csv 2>&1
  "$PY" - <<'EOF'
import torch
print("torch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available())
if torch.cuda.is_available():
    p = torch.cuda.get_device_properties(0)
    print(p.name, p.total_memory, "L2", getattr(p, "L2_cache_size", "?"))
try:
    import triton
    print("triton", triton.__version__)
except ImportError as err:
    print("triton missing:", err)
EOF
} 2>&1 | tee -a "$OUT_DIR/env.txt"

echo "== tests (tests/gpu, cpu + cuda)"
limit=$(step_s 180)
if [ "$limit" -gt 0 ]; then
  timeout "$limit" "$PY" -m pytest -q -p no:cacheprovider tests/gpu 2>&1 | tee "$OUT_DIR/tests.txt"
  tests_rc=${PIPESTATUS[0]}
else
  echo "not run: out of time (GPU_CHECK_SECONDS=$BUDGET_S)" | tee "$OUT_DIR/tests.txt"
  tests_rc=none
fi

echo "== the GPU lab page on its default device (cuda:0)"
limit=$(step_s 120)
if [ "$limit" -eq 0 ]; then
  echo "not run: out of time (GPU_CHECK_SECONDS=$BUDGET_S)"
  page_rc=none
elif "$PY" -c "import streamlit, plotly" 2>/dev/null; then
  timeout "$limit" "$PY" -m pytest -q -p no:cacheprovider \
    tests/test_app_gpu.py::test_gpu_lab_runs_on_the_default_device 2>&1 | tee "$OUT_DIR/page.txt"
  page_rc=${PIPESTATUS[0]}
else
  echo "not run: streamlit or plotly is not installed here (bash bench/gpu_wheels.sh, carry .whl)"
  page_rc=none
fi

echo "== bench/gpu_bench.py --device cuda"
limit=$(step_s 300)
if [ "$limit" -gt 0 ]; then
  timeout "$limit" "$PY" bench/gpu_bench.py --device cuda --json-out "$OUT_DIR/gpu_bench.json" \
    2>"$OUT_DIR/gpu_bench.stderr" | tee "$OUT_DIR/gpu_bench.txt"
  bench_rc=${PIPESTATUS[0]}
else
  echo "not run: out of time (GPU_CHECK_SECONDS=$BUDGET_S)"
  bench_rc=none
fi

echo "== python -m flatkv bench (Qwen3.5-like hybrid, SPEC section 1) --json"
limit=$(step_s 60)
if [ "$limit" -gt 0 ]; then
  timeout "$limit" "$PY" -m flatkv bench --layers '(3*linear,full)*12' --kv-bytes-per-slot 2048 \
    --state conv=49152,ssm=2097152 --device cuda --pages-per-call 2 --json \
    >"$OUT_DIR/cli.json" 2>"$OUT_DIR/cli.stderr"
  cli_rc=$?
  head -c 1500 "$OUT_DIR/cli.json"; cat "$OUT_DIR/cli.stderr"
else
  echo "not run: out of time (GPU_CHECK_SECONDS=$BUDGET_S)"
  cli_rc=none
fi

echo
echo "== summary: tests rc=$tests_rc, page rc=$page_rc, gpu_bench rc=$bench_rc, cli rc=$cli_rc;" \
  "files in $OUT_DIR; ${SECONDS} s of GPU_CHECK_SECONDS=$BUDGET_S"
[ "$tests_rc" = 0 ] && { [ "$page_rc" = 0 ] || [ "$page_rc" = none ]; }
