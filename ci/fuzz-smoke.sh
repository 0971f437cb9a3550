#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fuzz smoke (a regression check, not a campaign): builds the libFuzzer
# targets with clang under ASan+UBSan in ./build-fuzz and runs each for
# FUZZ_SECONDS (default 30) from its seed corpus in tests/fuzz/NAME, two at
# a time. New inputs go to a scratch copy, never into the committed
# corpus. Writes build-fuzz/fuzz.json, one line per target in meson's
# testlog format, for ci/summarize-testlog.py. Exit status 1 if a target
# found something or did not build.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
seconds=${FUZZ_SECONDS:-30}
dir=build-fuzz
log=$dir/fuzz.json

if ! command -v clang >/dev/null 2>&1; then
  echo "fuzz-smoke: clang not installed" >&2
  exit 1
fi
if [ ! -f "$dir/build.ninja" ]; then
  CC=clang CXX=clang++ meson setup "$dir" -Db_lundef=false || exit 1
fi
mkdir -p "$dir"
: > "$log"
targets=()
for corpus in tests/fuzz/*/; do
  name=$(basename "$corpus")
  targets+=("$name")
done
if ! ninja -C "$dir" "${targets[@]/#/tests/fuzz/fuzz_}"; then
  for t in "${targets[@]}"; do
    echo "{\"name\": \"fuzz_$t\", \"result\": \"FAIL\"}" >> "$log"
  done
  exit 1
fi

run_one() {
  local t=$1 scratch
  scratch=$(mktemp -d)
  cp -r "tests/fuzz/$t/." "$scratch/"
  # The suite's own options: crashes must be reported, not handled.
  if ASAN_OPTIONS=detect_leaks=1:handle_segv=1 UBSAN_OPTIONS=halt_on_error=1 \
     "$dir/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=10 \
       -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$dir/fuzz_$t-" \
       "$scratch" > "$dir/fuzz_$t.log" 2>&1; then
    echo "{\"name\": \"fuzz_$t\", \"result\": \"OK\"}" >> "$log"
    echo "fuzz_$t: ok ($(grep -o 'number_of_executed_units: [0-9]*' "$dir/fuzz_$t.log" | grep -o '[0-9]*$') executions in ${seconds} s)" >&2
  else
    echo "{\"name\": \"fuzz_$t\", \"result\": \"FAIL\"}" >> "$log"
    echo "fuzz_$t: FAILED, see $dir/fuzz_$t.log" >&2
    tail -30 "$dir/fuzz_$t.log" >&2
  fi
  rm -rf "$scratch"
}

# Two at a time: the CI machine has two cores.
status=0
i=0
for t in "${targets[@]}"; do
  run_one "$t" &
  i=$((i + 1))
  if [ $((i % 2)) -eq 0 ]; then
    wait
  fi
done
wait
grep -q '"FAIL"' "$log" && status=1
exit "$status"
