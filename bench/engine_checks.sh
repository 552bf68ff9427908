#!/usr/bin/env bash
# FlatKV against SGLang's and vLLM's own pool-sizing code, on this CPU (CI runs it after the
# tests): fetch each engine's wheel and unzip it (nothing of it is installed), make a venv over
# this Python's packages with the few more that the engines' imports ask for, and run
# bench/sglang_check.py and bench/vllm_check.py over the presets' settings, then over random
# settings near them; then vLLM 0.31.0's, the last release with mamba cache mode all, over the
# presets in that mode (bench/vllm_check.py --vllm-all), vLLM 0.23.0's, the last release
# serving MiniMax-M1, over that preset (--vllm-dropped), and vLLM 0.19.0's "GPU KV cache size"
# beside FlatKV's older vLLM log (--vllm-older). Exit status 1 if a figure differs.
#
#   bash bench/engine_checks.sh [DIR]    # DIR keeps the wheels and the venv (default: a
#                                        # temporary folder, removed at the end)
set -euo pipefail
# a step that fails (a wheel that does not download, a check that finds a mismatch) ends the run
# with its line named, so CI's log says which
trap 'echo "engine_checks.sh: line $LINENO failed (exit $?): $BASH_COMMAND" >&2' ERR
cd "$(dirname "$0")/.."
ENGINES=(sglang==0.5.23 vllm==0.34.0)
MODE_ALL_VLLM=vllm==0.31.0  # mamba cache mode all (0.32 dropped it)
# MiniMax-M1's class (0.24 dropped it): a 274 MB wheel, fetched in 8 s on 2026-12-07, for the
# one check of that preset and of the start-up rule of releases before 0.29 on an engine's code
DROPPED_VLLM=vllm==0.23.0
# the release whose "GPU KV cache size" FlatKV shows as the older vLLM log (its own hybrid
# sizing: P, drafted conv rows, mode all): a 432 MB wheel, fetched in 28 s on 2026-12-07, of
# which only its .py files are unzipped
OLDER_VLLM=vllm==0.19.0
# what the engines' imports ask for beyond FlatKV's requirements, pinned as last checked
IMPORTS=(aiohappyeyeballs==2.7.1 aiohttp==3.14.5 aiosignal==1.4.0 cachetools==8.0.2
         cbor2==6.3.0 compressed_tensors==0.20.1 dill==0.4.1 einops==0.8.2 frozenlist==1.8.0
         gguf==0.19.0 llguidance==1.9.1 loguru==0.7.3 msgspec==0.23.0 multidict==7.2.1
         openai==3.63.0 partial_json_parser==0.2.1.1.post7 prometheus_client==0.26.0
         propcache==0.5.4 psutil==7.2.2 pybase64==1.5.1 pyzmq==27.3.0 sentencepiece==0.2.3
         uvloop==0.23.0 yarl==1.25.1)
# ... and what vLLM 0.31's ask beyond those (installed after the current engines' checks)
MODE_ALL_IMPORTS=(fastapi==0.136.3 oss-harmony==0.0.11)
if [ $# -gt 0 ]; then
  work=$1
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
export PIP_DISABLE_PIP_VERSION_CHECK=1
pip download -q --no-deps "${ENGINES[@]}" -d "$work/wheels"
pip download -q --no-deps "$MODE_ALL_VLLM" -d "$work/wheels-all"
pip download -q --no-deps "$DROPPED_VLLM" -d "$work/wheels-dropped"
pip download -q --no-deps "$OLDER_VLLM" -d "$work/wheels-older"
unzip -q -o "$work"/wheels/sglang-*.whl -d "$work/sglang"
unzip -q -o "$work"/wheels/vllm-*.whl 'vllm/*.py' -d "$work/vllm"
unzip -q -o "$work"/wheels-all/vllm-*.whl 'vllm/*.py' -d "$work/vllm-all"
unzip -q -o "$work"/wheels-dropped/vllm-*.whl 'vllm/*.py' -d "$work/vllm-dropped"
unzip -q -o "$work"/wheels-older/vllm-*.whl 'vllm/*.py' -d "$work/vllm-older"
python -m venv --system-site-packages "$work/venv"
"$work/venv/bin/pip" install -q --no-deps "${IMPORTS[@]}"
"$work/venv/bin/python" bench/sglang_check.py --sglang "$work/sglang"
"$work/venv/bin/python" bench/vllm_check.py --vllm "$work/vllm"
# then random settings near the presets, from fixed seeds so that a mismatch replays with
# --random 1 --seed <its seed> (about 20 s and 40 s here; only mismatches and the totals print)
"$work/venv/bin/python" bench/sglang_check.py --sglang "$work/sglang" --random 400 --seed 100000 \
  | grep -v '^ok '
"$work/venv/bin/python" bench/vllm_check.py --vllm "$work/vllm" --random 200 --seed 100000 \
  | grep -v '^ok '
# mamba cache mode all against vLLM 0.31 (about 20 s)
"$work/venv/bin/pip" install -q --no-deps "${MODE_ALL_IMPORTS[@]}"
"$work/venv/bin/python" bench/vllm_check.py --vllm-all "$work/vllm-all" | grep -v '^ok '
# MiniMax-M1 against vLLM 0.23.0, the last release serving its class (36 s on a shared 2-core
# machine, 10 s of CPU)
"$work/venv/bin/python" bench/vllm_check.py --vllm-dropped "$work/vllm-dropped" | grep -v '^ok '
# FlatKV's older vLLM log figure against vLLM 0.19.0's own, hybrid and attention-only presets,
# and the classes 0.19 does not serve made again from its registry and 0.34's ($work/vllm,
# beside it) (82 s on a shared 2-core machine, 15 s of CPU); its imports are 0.31's (its
# diskcache import served as a stub)
"$work/venv/bin/python" bench/vllm_check.py --vllm-older "$work/vllm-older" | grep -v '^ok '
