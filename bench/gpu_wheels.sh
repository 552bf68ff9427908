#!/usr/bin/env bash
# Wheels the GPU machine lacks for the GPU lab page test (bench/gpu_check.sh step 3): streamlit,
# plotly and those of their dependencies its image does not hold, at the versions installed here,
# for its Python (3.12, x86-64), into .whl/ (git-ignored). Carry .whl in the device call:
# gpu_check.sh installs them into /tmp/site before it runs anything.
#
#   bash bench/gpu_wheels.sh            # PY_VERSION=3.11 for a trial install on this machine
set -euo pipefail
cd "$(dirname "$0")/.."
PY_VERSION="${PY_VERSION:-3.12}"
# Missing from the image's package list (/work/.library/device/KINDS.md); numpy, pandas, pyarrow,
# pillow, protobuf, requests, click, jinja2, attrs, narwhals, anyio and h11 are there.
NAMES="streamlit plotly altair pydeck itsdangerous python-multipart starlette uvicorn watchdog
websockets jsonschema jsonschema-specifications referencing rpds-py"
# shellcheck disable=SC2086 # one argument per name
PINS=$(python3 - $NAMES <<'PYEOF'
import sys
from importlib.metadata import version

print(" ".join(f"{name}=={version(name)}" for name in sys.argv[1:]))
PYEOF
)
rm -rf .whl
# shellcheck disable=SC2086
python3 -m pip download -q --no-deps --only-binary=:all: --python-version "$PY_VERSION" \
  --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux2014_x86_64 -d .whl $PINS
du -sh .whl
