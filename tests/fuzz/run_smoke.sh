#!/usr/bin/env bash
# Fuzz and race smoke run under AddressSanitizer + UndefinedBehaviorSanitizer (about a minute).
#
#   1. the libFuzzer harness of the C++ Controller and snapshot parser (csrc/fuzz), built
#      with clang, on a copy of its corpus;
#   2. the extension built with -fsanitize=address,undefined into a private copy of the
#      package, then the thread-race check and the three atheris harnesses against it.
# Usage: tests/fuzz/run_smoke.sh [seconds per fuzzer, default 12] [race seconds, default 10]
# Needs clang/clang++, pybind11 and atheris in the current python. Prints one line of figures
# per run (executions, seconds) and fails on any sanitizer report, crash or broken contract.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
secs=${1:-12}
race_secs=${2:-10}
jobs=$(( $(nproc) < 2 ? $(nproc) : 2 ))
py=${PYTHON:-python3}
out=build/fuzz-smoke
mkdir -p "$out"

echo "== libFuzzer: C++ Controller and snapshot parser (ASan + UBSan) =="
CXX=clang++ cmake -S . -B build/ci-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSPARE_FAST_FUZZ=ON \
  -DSPARE_FAST_WERROR=ON >/dev/null
cmake --build build/ci-fuzz -j "$jobs" --target fuzz_controller >/dev/null
rm -rf "$out/cxx-corpus" && cp -r csrc/fuzz/corpus "$out/cxx-corpus"
build/ci-fuzz/fuzz_controller -max_total_time="$secs" -print_final_stats=1 \
  -artifact_prefix="$out/" "$out/cxx-corpus" >"$out/cxx.log" 2>&1 || { tail -40 "$out/cxx.log"; exit 1; }
echo "fuzz_controller (C++): $(grep -o 'stat::number_of_executed_units: *[0-9]*' "$out/cxx.log" | grep -o '[0-9]*$') runs in ${secs} s, no finding"

echo "== extension under ASan + UBSan: thread race and atheris harnesses =="
pkg="$out/pkg"
rm -rf "$pkg" && mkdir -p "$pkg" && cp -r spare_fast "$pkg/" && rm -f "$pkg"/spare_fast/_core*.so
cmake -S . -B build/ci-asan-py -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSPARE_FAST_PYTHON=ON \
  -DSPARE_FAST_SANITIZE=ON -DSPARE_FAST_WERROR=ON -DSPARE_FAST_DEV_OUTPUT="$root/$pkg/spare_fast" \
  -DPython_EXECUTABLE="$(command -v "$py")" -Dpybind11_DIR="$("$py" -m pybind11 --cmakedir)" >/dev/null
cmake --build build/ci-asan-py -j "$jobs" --target _core >/dev/null
# Python itself is not built with ASan: preload the runtime, and libstdc++ with it so that
# ASan's __cxa_throw interceptor finds the real one; CPython's arenas would look like leaks.
preload="$(g++ -print-file-name=libasan.so) $(g++ -print-file-name=libstdc++.so)"
asan=(env LD_PRELOAD="$preload" ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
      UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 PYTHONPATH="$root/$pkg")
"${asan[@]}" "$py" tests/fuzz/race_threads.py "$race_secs"
for h in controller restore graph; do
  rm -rf "$out/$h-corpus" && cp -r "tests/fuzz/corpus/$h" "$out/$h-corpus"
  "${asan[@]}" "$py" "tests/fuzz/fuzz_$h.py" -max_total_time="$secs" -print_final_stats=1 \
    -artifact_prefix="$out/" "$out/$h-corpus" >"$out/$h.log" 2>&1 || { grep -v '^INFO: Instrumenting' "$out/$h.log" | tail -40; exit 1; }
  echo "fuzz_$h (atheris): $(grep -o 'stat::number_of_executed_units: *[0-9]*' "$out/$h.log" | grep -o '[0-9]*$') runs in ${secs} s, no finding"
done
