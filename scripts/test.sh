#!/bin/bash
# Installs what is missing, builds, and runs the whole test suite twice: a
# normal build and an AddressSanitizer + UndefinedBehaviorSanitizer build;
# runs a smoke of the benchmark (stage 1 of scripts/bench.sh, a few seconds),
# compiles a release build, runs the install and Debian package tests
# (tests/package/) and each libFuzzer target briefly (RMQ_FUZZ_SECONDS,
# default 30; RMQ_FUZZ_JOBS at once, default the number of cores), the
# fuzz targets niced beside the ASan suite.
# Ends with one line: "rmq: N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

./scripts/bootstrap.sh || exit 1
./scripts/install-browser.sh || echo "chromium missing: console_browser is skipped (a failure with CI=true)" >&2

passed=0
failed=0

# stage WHAT: a stage's header line, with the seconds since the run started.
stage() { echo "== $* (at ${SECONDS}s)"; }

# Adds meson's Ok/Fail counts for one build directory to the totals.
count_meson() {
  local log=$1/meson-logs/testlog.txt ok fail
  ok=$(grep -E '^Ok: ' "$log" | awk '{print $2}')
  fail=$(grep -E '^(Fail|Unexpected Pass|Timeout): ' "$log" | awk '{s+=$2} END {print s+0}')
  passed=$((passed + ${ok:-0}))
  failed=$((failed + ${fail:-0}))
}

run_suite() {
  local dir=$1
  shift
  stage "build $dir"
  if ! ./scripts/build.sh "$dir" "$@"; then
    echo "build of $dir failed" >&2
    failed=$((failed + 1))
    return
  fi
  stage "test $dir"
  # shellcheck disable=SC2086 # RMQ_TEST_ARGS holds several words
  meson test -C "$dir" --print-errorlogs --num-processes 2 ${RMQ_TEST_ARGS:-}
  count_meson "$dir"
}

# fuzz_one DIR NAME SECONDS: one libFuzzer target for SECONDS against its
# corpora; its output in DIR/fuzz-NAME.log, its exit status in DIR/fuzz-NAME.rc.
fuzz_one() {
  local dir=$1 name=$2 seconds=$3 rc=0
  mkdir -p "tests/fuzz/corpus/$name" "$dir/corpus-$name"
  "$dir/tests/fuzz/fuzz_$name" -max_total_time="$seconds" -print_final_stats=1 \
    "$dir/corpus-$name" "tests/fuzz/corpus/$name" >"$dir/fuzz-$name.log" 2>&1 || rc=$?
  echo "$rc" >"$dir/fuzz-$name.rc"
}

# Builds the libFuzzer targets and runs each for RMQ_FUZZ_SECONDS, as many at
# once as there are cores (RMQ_FUZZ_JOBS overrides). Writes DIR/fuzz-build.rc
# (the build's status), DIR/fuzz-names (the targets run) and each target's
# .rc and .log; count_fuzzers reads them. Runs in the background.
fuzz_phase() {
  local dir=$1 seconds=${RMQ_FUZZ_SECONDS:-30} jobs=${RMQ_FUZZ_JOBS:-$(nproc)} f name running=0
  local names=()
  echo "== build $dir"
  if ! CC=clang ./scripts/build.sh "$dir" -Dfuzz=true -Dtests=false \
      -Db_sanitize=address,undefined -Db_lundef=false "-Dc_args=['-fsanitize=fuzzer-no-link','-fno-sanitize-recover=all']"; then
    echo 1 >"$dir/fuzz-build.rc"
    return
  fi
  echo 0 >"$dir/fuzz-build.rc"
  for f in "$dir"/tests/fuzz/fuzz_*; do
    if [ ! -f "$f" ] || [ ! -x "$f" ]; then continue; fi
    names+=("${f##*/fuzz_}")
  done
  printf '%s\n' "${names[@]}" >"$dir/fuzz-names"
  echo "== fuzz ${#names[@]} targets for ${seconds}s each, $jobs at a time"
  for name in "${names[@]}"; do
    if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
    rm -f "$dir/fuzz-$name.rc"
    fuzz_one "$dir" "$name" "$seconds" &
    running=$((running + 1))
  done
  wait
}

# start_fuzzers: the fuzz phase in the background at nice 10, beside the
# ASan suite: each target runs for a fixed time, so it takes the cycles the
# suite's waiting tests leave and the phase adds no wall time of its own.
# Sets fuzz_pid (empty when skipped).
start_fuzzers() {
  fuzz_pid=
  [ "${RMQ_SKIP_FUZZ:-0}" != 1 ] || return
  command -v clang >/dev/null || { echo "== fuzz: clang not found, skipped"; return; }
  rm -rf build-fuzz/fuzz-build.rc build-fuzz/fuzz-names
  mkdir -p build-fuzz
  fuzz_start=$SECONDS
  (renice -n 10 "$BASHPID" >/dev/null && fuzz_phase build-fuzz) >build-fuzz/fuzz-phase.log 2>&1 &
  fuzz_pid=$!
}

# count_fuzzers: waits for the fuzz phase, prints its log, counts the build
# (when it failed) and each target as passed or failed, with the tail of a
# failed target's log.
count_fuzzers() {
  local dir=build-fuzz name
  [ -n "$fuzz_pid" ] || return
  wait "$fuzz_pid"
  cat "$dir/fuzz-phase.log"
  if [ "$(cat "$dir/fuzz-build.rc" 2>/dev/null)" != 0 ]; then
    echo "build of $dir failed" >&2
    failed=$((failed + 1))
    return
  fi
  while read -r name; do
    if [ "$(cat "$dir/fuzz-$name.rc" 2>/dev/null)" = 0 ]; then
      echo "== fuzz $name: ok $(grep -E 'stat::number_of_executed_units' "$dir/fuzz-$name.log")"
      passed=$((passed + 1))
    else
      echo "== fuzz $name: FAILED (exit $(cat "$dir/fuzz-$name.rc" 2>/dev/null || echo unknown)), $dir/fuzz-$name.log:"
      tail -40 "$dir/fuzz-$name.log"
      failed=$((failed + 1))
    fi
  done <"$dir/fuzz-names"
  echo "== fuzz: done $((SECONDS - fuzz_start))s after it started, beside the ASan suite"
}

# A release build (-O3, where GCC sees more, e.g. -Wformat-truncation) with
# the tests compiles without a warning; nothing in it runs.
run_release_build() {
  stage "build build-release (compile only)"
  if ./scripts/build.sh build-release -Dbuildtype=release; then
    passed=$((passed + 1))
  else
    echo "build of build-release failed" >&2
    failed=$((failed + 1))
  fi
}

# Stage 1 of scripts/bench.sh for a few seconds: the benchmark still runs.
run_bench_smoke() {
  stage "bench smoke (scripts/bench.sh --smoke)"
  if RMQ_BUILD=build RMQ_BENCH_NO_INSTALL=1 ./scripts/bench.sh --smoke --out build/bench-smoke \
      >build/bench-smoke.log 2>&1; then
    grep -E '^\| (base: sync send|[0-9,]+ \| [0-9,]+ \|)' build/bench-smoke/report.md || true
    passed=$((passed + 1))
  else
    tail -40 build/bench-smoke.log
    failed=$((failed + 1))
  fi
}

# A TAP script as one stage (tests/package/): passed when it exits 0.
run_tap_stage() {
  local name=$1 log=build/test-$1.log start=$SECONDS
  shift
  stage "$name test ($1)"
  if "$@" >"$log" 2>&1; then passed=$((passed + 1)); else grep -Ev '^ok ' "$log" | tail -40; failed=$((failed + 1)); fi
  echo "== $name test: $(grep -c '^ok ' "$log") checks ok, $((SECONDS - start))s"
}

run_suite build
run_bench_smoke
run_release_build
run_tap_stage install tests/package/test_install.sh build
run_tap_stage package tests/package/test_package.sh
start_fuzzers
run_suite build-asan -Db_sanitize=address,undefined -Db_lundef=false \
  -Dc_args=-fno-sanitize-recover=all
count_fuzzers

stage end
./scripts/failed-tests.py build build-asan
echo "rmq: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
