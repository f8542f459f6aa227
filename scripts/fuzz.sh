#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz) in build-fuzz/ with clang, AddressSanitizer and
# UndefinedBehaviorSanitizer, and runs each for a bounded time from its committed seed corpus
# (tests/fuzz/corpus/<target>/). scripts/test.sh runs this after scripts/sanitize.sh.
#
# A crash, a leak, a sanitizer report, a violated property or a hang (10 s on one input) fails
# the run; the script names the file that holds the input, under build-fuzz/crashes/<target>/.
# Once the bug is fixed, add that file to tests/fuzz/corpus/<target>/, so that every run replays
# it. Inputs the fuzzer finds that reach new code go to build-fuzz/corpus/<target>/ (not
# committed; a later run starts from them too).
#
# Environment: FUZZ_SECONDS (default 30) per target; FUZZ_TARGETS="a b" runs only those;
# CLANGXX (default clang++); FUZZ_JUNIT=FILE writes one JUnit test case per target there, which
# scripts/test.sh counts.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -d /usr/local/cuda/bin ]; then export PATH="/usr/local/cuda/bin:$PATH"; fi
seconds=${FUZZ_SECONDS:-30}
clangxx=${CLANGXX:-clang++}
junit=${FUZZ_JUNIT:-}

launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
echo "fuzz.sh: building the fuzz targets (build-fuzz/, $("$clangxx" --version | head -n 1))"
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" \
  -DCMAKE_CXX_COMPILER="$(command -v "$clangxx")" -DDCUDA_BUILD_FUZZERS=ON \
  -DDCUDA_SANITIZE=address,undefined -DDCUDA_BUILD_TESTS=OFF -DDCUDA_BUILD_EXAMPLES=OFF \
  -DDCUDA_BUILD_TOOLS=OFF -DDCUDA_BUILD_APPS=OFF -DDCUDA_BUILD_BENCH=OFF \
  -DDCUDA_WARNINGS_AS_ERRORS=ON >/dev/null
cmake --build build-fuzz --target fuzzers

targets=${FUZZ_TARGETS:-$(cat build-fuzz/tests/fuzz/targets.txt)}
export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
cases=()
failed=0
for target in $targets; do
  program=build-fuzz/tests/fuzz/$target
  seeds=tests/fuzz/corpus/$target
  corpus=build-fuzz/corpus/$target
  crashes=build-fuzz/crashes/$target
  if [ ! -x "$program" ]; then
    echo "fuzz.sh: no fuzz target $target in build-fuzz/" >&2
    exit 1
  fi
  mkdir -p "$corpus" "$crashes"
  log=build-fuzz/$target.log
  echo "fuzz.sh: $target for $seconds s (seeds: $seeds/)"
  start=$(date +%s)
  status=0
  # The working corpus first: libFuzzer writes what it finds into the first directory.
  "$program" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$crashes/" "$corpus" "$seeds" >"$log" 2>&1 || status=$?
  elapsed=$(($(date +%s) - start))
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  if [ "$status" = 0 ]; then
    echo "fuzz.sh: $target: ${runs:-?} inputs in $elapsed s, no failure"
    cases+=("<testcase name=\"$target\" classname=\"fuzz\" time=\"$elapsed\" status=\"run\"/>")
  else
    failed=1
    tail -n 60 "$log" >&2
    found=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
    echo "fuzz.sh: $target FAILED (exit status $status) after $elapsed s; the input is in" \
      "${found:-$crashes/} (reproduce: $program ${found:-FILE}); once fixed, add it to $seeds/" >&2
    cases+=("<testcase name=\"$target\" classname=\"fuzz\" time=\"$elapsed\" status=\"fail\"><failure message=\"exit status $status\"/></testcase>")
  fi
done

if [ -n "$junit" ]; then
  {
    echo '<?xml version="1.0" encoding="UTF-8"?>'
    echo "<testsuite name=\"fuzz\" tests=\"${#cases[@]}\">"
    printf '%s\n' "${cases[@]}"
    echo '</testsuite>'
  } >"$junit"
fi
exit "$failed"
