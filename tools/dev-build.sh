#!/usr/bin/env bash
# Developer build: compiles spare_fast._core in place so `PYTHONPATH=. python -m pytest` works
# without reinstalling. Usage: tools/dev-build.sh [extra cmake -D options]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
py=${PYTHON:-python}
cmake -S "$root" -B "$root/build/dev" -DCMAKE_BUILD_TYPE=Release -DSPARE_FAST_PYTHON=ON \
  -DSPARE_FAST_TESTS=ON -DSPARE_FAST_WERROR=ON -DSPARE_FAST_DEV_OUTPUT="$root/spare_fast" \
  -DPython_EXECUTABLE="$(command -v "$py")" -Dpybind11_DIR="$("$py" -m pybind11 --cmakedir)" "$@"
cmake --build "$root/build/dev" -j "$(nproc)"
