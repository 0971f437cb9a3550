#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The CUDA platform on a GPU machine (docs/accelerators.md): a bare machine
# with nvcc, meson, ninja and python3 but without libyaml, cmocka or
# pkg-config. What the build needs comes as Debian packages carried with
# the checkout in .carry/debs/ (fetch them once, on a machine with apt:
#   mkdir -p .carry/debs && (cd .carry/debs && apt-get download pkgconf \
#     pkgconf-bin libpkgconf3 libyaml-0-2 libyaml-dev libcmocka0 libcmocka-dev)
# ), unpacked into a prefix; nothing is fetched on the GPU machine.
#
# Usage: ci/device-cuda.sh [STEP...]   steps, in order when none is given:
#   build     configure build-cuda/ with -Dcuda=enabled and build it
#   suite     the whole meson test suite (cuda_scenes included: scenes/ on
#             --platform cuda at level 2 and 3 in one process, and under
#             --isolate -j 4)
#   scenes    scenes/ on --platform cuda with -j 4 (threads sharing one
#             context), and scenes/cuda's level-3 set (2 workers), TAP kept
#   sanitize  compute-sanitizer (memcheck, racecheck) over small scenes/cuda
#             cases, when the tool is there
#   bench     bench/bench_cuda
#   torch     (where python3 has torch) scenes/torch against the machine's
#             PyTorch with torch as golden, and the FP8 tables against
#             PyTorch's own values (tests/fixtures/gen_fp8.py --check)
#   table     scenetest bench over scenes/cuda on --platform cuda with a
#             cold cache: the text table and its JSON (docs/bench.md)
# Logs go to ./device-cuda-out/; where $OUT is set (the device tool's
# output folder, which takes back few files) the summary log, the bench
# table and a tarball of the rest are copied there. The last line is "device-cuda: N step(s) failed"; the exit status is 1 if
# any step failed.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

OUTDIR=$PWD/device-cuda-out
B=$PWD/build-cuda
mkdir -p "$OUTDIR"
# The summary log is written where it comes back even if the call is cut
# off at its time limit.
if [ -n "${OUT:-}" ] && [ -d "$OUT" ]; then
  LOG=$OUT/device-cuda.log
else
  LOG=$OUTDIR/device-cuda.log
fi
failed=0

say() { echo "== $*" | tee -a "$LOG"; }

# The carried packages, unpacked into a prefix (their .pc files name /usr
# literally, hence the sed).
prefix() {
  local p=$PWD/.carry/prefix
  if [ ! -d "$p/usr" ]; then
    ls .carry/debs/*.deb >/dev/null 2>&1 || {
      echo "device-cuda: no .carry/debs/*.deb (see the top of $0)" >&2
      return 1
    }
    mkdir -p "$p"
    for f in .carry/debs/*.deb; do dpkg -x "$f" "$p" || return 1; done
    ln -sf "$p/usr/bin/pkgconf" "$p/usr/bin/pkg-config"
    sed -i "s#/usr#$p/usr#g" "$p"/usr/lib/x86_64-linux-gnu/pkgconfig/*.pc
  fi
  export PATH=$p/usr/bin:$PATH
  export PKG_CONFIG_PATH=$p/usr/lib/x86_64-linux-gnu/pkgconfig
  export LD_LIBRARY_PATH=$p/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
}

# The machine, for the record.
machine() {
  say "machine: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader \
    2>&1 | tee -a "$LOG"
  nvcc --version | tail -2 | tee -a "$LOG"
}

# The machine's PyTorch (a wheel's torch/ folder), where python3 has one:
# the torch plugin is then built against it (docs/torch.md).
torch_dir() {
  python3 -c 'import os, torch; print(os.path.dirname(torch.__file__))' \
    2>/dev/null
}

step_build() {
  if [ ! -f "$B/build.ninja" ]; then
    local td
    td=$(torch_dir)
    meson setup "$B" -Dcuda=enabled ${td:+-Dtorch_dir=$td} >>"$LOG" 2>&1 ||
      return 1
  fi
  ninja -C "$B" -j "$(nproc)" >>"$LOG" 2>&1
}

step_suite() {
  meson test -C "$B" --num-processes 8 --print-errorlogs \
    >"$OUTDIR/suite.txt" 2>&1
  local rc=$?
  cp "$B/meson-logs/testlog.txt" "$OUTDIR/testlog.txt" 2>/dev/null
  # The summary lines: Ok, Fail, Skipped... and every test's verdict.
  grep -E "^ *[0-9]+/[0-9]+ |^(Ok|Expected Fail|Fail|Unexpected Pass|Skipped|Timeout):" \
    "$OUTDIR/suite.txt" | tee -a "$LOG"
  return $rc
}

# One run of scenetest on cuda: NAME ARGS...; TAP kept in $OUTDIR/NAME.tap.
cuda_run() {
  local name=$1
  shift
  "$B/harness/scenetest" run --ignore torch --plugin "$B/plugins/cuda/scenetest_cuda.so" \
    --platform cuda --format tap --log-level warning "$@" \
    >"$OUTDIR/$name.tap" 2>"$OUTDIR/$name.err"
  local rc=$?
  echo "$name: exit $rc, $(grep -c '^ok' "$OUTDIR/$name.tap") ok" \
    "($(grep -c '# SKIP' "$OUTDIR/$name.tap") skipped)," \
    "$(grep -c '^not ok' "$OUTDIR/$name.tap") not ok" | tee -a "$LOG"
  grep '^not ok' "$OUTDIR/$name.tap" | head -20 | tee -a "$LOG"
  return $rc
}

step_scenes() {
  local rc=0
  cuda_run scenes-jobs4 -j 4 scenes || rc=1
  cuda_run cuda-level3-2workers --case 'cuda_l3_*' scenes/cuda || rc=1
  return $rc
}

step_sanitize() {
  local cs
  cs=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
  if [ -z "$cs" ]; then
    say "sanitize: compute-sanitizer not found: not run"
    return 0
  fi
  local rc=0 tool
  for tool in memcheck racecheck; do
    "$cs" --tool "$tool" --error-exitcode 9 --target-processes all \
      "$B/harness/scenetest" run --ignore torch --plugin "$B/plugins/cuda/scenetest_cuda.so" \
      --platform cuda --format tap --log-level warning \
      --case 'cuda_*::*_one' --case 'cuda_*::*_empty' \
      --case 'cuda_matmul::*_odd' --case 'cuda_softmax::*_odd' \
      --case 'cuda_transpose::*_odd' --case 'cuda_reduce_sum_*::*_one_block' \
      --case 'cuda_l3_matmul::f32' \
      scenes/cuda >"$OUTDIR/sanitize-$tool.txt" 2>&1
    local r=$?
    echo "sanitize $tool: exit $r; $(grep -c '^ok' "$OUTDIR/sanitize-$tool.txt") ok;" \
      "$(grep -E 'ERROR SUMMARY' "$OUTDIR/sanitize-$tool.txt" | sort | uniq -c | tr '\n' ' ')" \
      | tee -a "$LOG"
    [ $r -eq 0 ] || rc=1
  done
  return $rc
}

step_bench() {
  "$B/bench/bench_cuda" "$B/plugins/cuda/scenetest_cuda.so" python3 \
    2>&1 | tee "$OUTDIR/bench.txt" | tee -a "$LOG"
}

step_torch() {
  if [ -z "$(torch_dir)" ] || [ ! -f "$B/plugins/torch/scenetest_torch.so" ]; then
    say "torch: no PyTorch for python3 or no torch plugin: not run"
    return 0
  fi
  local rc=0
  python3 -c 'import torch; print("torch", torch.__version__)' | tee -a "$LOG"
  "$B/harness/scenetest" run --ignore cuda \
    --plugin "lazy:$B/plugins/torch/scenetest_torch.so" \
    --golden-platform torch --format tap --log-level warning scenes/torch \
    >"$OUTDIR/torch-scenes.tap" 2>"$OUTDIR/torch-scenes.err" || rc=1
  echo "torch scenes: $(grep -c '^ok' "$OUTDIR/torch-scenes.tap") ok," \
    "$(grep -c '^not ok' "$OUTDIR/torch-scenes.tap") not ok" | tee -a "$LOG"
  grep '^not ok' "$OUTDIR/torch-scenes.tap" | head -20 | tee -a "$LOG"
  python3 tests/fixtures/gen_fp8.py --check tests/fixtures/fp8_tables.txt \
    >"$OUTDIR/fp8.tap" 2>&1 || rc=1
  grep -E '^(not )?ok' "$OUTDIR/fp8.tap" | tee -a "$LOG"
  return $rc
}

step_table() {
  local rc=0
  "$B/harness/scenetest" bench --ignore torch \
    --plugin "$B/plugins/cuda/scenetest_cuda.so" --platform cuda \
    --cold-cache scenes/cuda >"$OUTDIR/bench-table.txt" \
    2>"$OUTDIR/bench-table.err" || rc=1
  "$B/harness/scenetest" bench --ignore torch \
    --plugin "$B/plugins/cuda/scenetest_cuda.so" --platform cuda \
    --cold-cache --allow-suspicious --format json scenes/cuda \
    >"$OUTDIR/bench-table.json" 2>/dev/null || rc=1
  head -60 "$OUTDIR/bench-table.txt" | tee -a "$LOG"
  tail -5 "$OUTDIR/bench-table.err" | tee -a "$LOG"
  return $rc
}

steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(build suite scenes sanitize bench torch table)
prefix || exit 1
machine
for s in "${steps[@]}"; do
  # A fresh machine (the last one went back) has no build yet.
  if [ "$s" != build ] && [ ! -x "$B/harness/scenetest" ]; then
    say "step build (needed by $s)"
    step_build || { say "step build: FAILED"; failed=$((failed + 1)); break; }
  fi
  say "step $s"
  start=$(date +%s)
  if "step_$s"; then
    say "step $s: ok ($(($(date +%s) - start)) s)"
  else
    say "step $s: FAILED ($(($(date +%s) - start)) s)"
    failed=$((failed + 1))
    [ "$s" = build ] && break
  fi
done
say "device-cuda: $failed step(s) failed"
if [ -n "${OUT:-}" ] && [ -d "$OUT" ]; then
  [ -f "$OUTDIR/bench.txt" ] && cp "$OUTDIR/bench.txt" "$OUT/"
  [ -f "$OUTDIR/bench-table.json" ] && cp "$OUTDIR/bench-table.json" "$OUT/"
  tar czf "$OUT/device-cuda-logs.tar.gz" -C "$OUTDIR" . 2>/dev/null
fi
[ $failed -eq 0 ]
