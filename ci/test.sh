#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Quick start 2 and CI: installs what is missing, builds and runs the whole
# test suite in ./build, then again in ./build-asan under AddressSanitizer
# and UndefinedBehaviorSanitizer, then the concurrent tests in ./build-tsan
# under ThreadSanitizer. The last two lines printed are "N skipped" and
# "N passed, N failed", counted over the three runs; the exit status is
# non-zero if anything failed (or did not build).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

ci/deps.sh --full || exit 1

status=0

# Configures DIR, or reconfigures it when it exists: setup DIR
# [SETUP_ARGS...]. A build/ that ci/run-scenes.sh configured before
# ci/deps.sh --full installed libtorch and chromium would otherwise keep
# the plugin and the tests that need them skipped; --reconfigure runs the
# dependency checks again (and keeps the options given before).
setup() {
  local dir=$1
  shift
  if [ -f "$dir/build.ninja" ]; then
    meson setup --reconfigure "$dir" "$@"
  else
    meson setup "$dir" "$@"
  fi
}

# Runs the suite of one build dir: run_suite DIR TIMEOUT_MULTIPLIER
# [SETUP_ARGS...]. A build failure counts as a failure, but the other build
# still runs, so one push shows every problem.
run_suite() {
  local dir=$1 multiplier=$2
  shift 2
  setup "$dir" "$@" || return 1
  ninja -C "$dir" || return 1
  # Stale results must not be counted if this run dies early.
  rm -f "$dir/meson-logs/testlog.json"
  meson test -C "$dir" --print-errorlogs --timeout-multiplier "$multiplier"
}

echo "== build: plain" >&2
run_suite build 1 || status=1

echo "== build under valgrind: the loader and the library's core" >&2
# The loader's bad-input tests must be valgrind-clean too (no invalid
# reads, no leaks). Logged under their own name so the plain run's log
# stays. Skipped (and said so) where valgrind is not installed.
if command -v valgrind >/dev/null 2>&1; then
  rm -f build/meson-logs/valgrind*.json
  meson test -C build --no-rebuild --print-errorlogs --logbase valgrind \
    --timeout-multiplier 4 \
    --wrap='valgrind --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite,indirect -q' \
    test_loader test_scene test_args test_registry test_record test_runner ||
    status=1
else
  echo "valgrind not installed: valgrind run skipped" >&2
fi

echo "== build-release: clang -O3 (release), warning-free under -Werror" >&2
# The plain build is gcc at -O2; a release build at -O3 with the other
# compiler catches what only the optimiser or only clang warns about
# (-Wformat-truncation at -O3 once broke it). Built and run on scenes/
# (its tests are the plain build's).
(
  dir=build-release
  CC=clang CXX=clang++ setup "$dir" --buildtype=release -Dtests=false ||
    exit 1
  ninja -C "$dir" || exit 1
  # scenes/torch/ computes its golden with the torch plugin: with it.
  torch="$dir/plugins/torch/scenetest_torch.so"
  if [ -f "$torch" ]; then
    set -- --plugin "lazy:$torch" scenes/
  else
    set -- --ignore torch scenes/
  fi
  "$dir/harness/scenetest" run --format tap --no-default-plugins "$@" \
    > "$dir/scenes.tap" || exit 1
)
release_rc=$?
mkdir -p build-release
# One line in meson's testlog format, so the summary counts this step.
if [ "$release_rc" -eq 0 ]; then
  echo '{"name": "build-release", "result": "OK"}' > build-release/step.json
else
  echo "build-release: FAILED" >&2
  echo '{"name": "build-release", "result": "FAIL"}' > build-release/step.json
  status=1
fi

echo "== build-asan: AddressSanitizer + UndefinedBehaviorSanitizer" >&2
# detect_leaks is the default on x86-64 Linux; it is set so that a platform
# where it is not still checks for leaks. UBSan only prints by default:
# halt_on_error makes undefined behaviour fail the test that hit it.
# Tests that need other options (crash tests: handle_segv=0) set their own.
(
  export ASAN_OPTIONS=detect_leaks=1
  export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
  run_suite build-asan 3 -Db_sanitize=address,undefined -Db_lundef=false
) || status=1

echo "== build-tsan: ThreadSanitizer on the concurrent tests" >&2
# The tests whose code runs on several threads: the registry's concurrent
# repair, the runner at -j N, the thread pool and the threads backend. Tests
# that fork are not built here (docs/reliability.md#the-process-model: TSan kills children forked from a
# threaded parent).
(
  export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
  dir=build-tsan
  tsan_tests=(test_registry test_runner test_pool test_ops test_mutex)
  setup "$dir" -Db_sanitize=thread -Db_lundef=false || exit 1
  ninja -C "$dir" "${tsan_tests[@]/#/tests/}" || exit 1
  rm -f "$dir/meson-logs/testlog.json"
  meson test -C "$dir" --no-rebuild --print-errorlogs \
    --timeout-multiplier 4 "${tsan_tests[@]}"
) || status=1

echo "== build-fuzz: libFuzzer smoke, 30 s per target under ASan+UBSan" >&2
# A regression smoke over the committed seed corpora (tests/fuzz/NAME),
# two targets at a time; the long campaigns are run by hand
# (docs/reliability.md).
ci/fuzz-smoke.sh || status=1

# meson names the log after the logbase and the wrapper:
# valgrind-valgrind.json.
valgrind_log=()
for f in build/meson-logs/valgrind*.json; do
  [ -f "$f" ] && valgrind_log+=("$f")
done
python3 ci/summarize-testlog.py build/meson-logs/testlog.json \
  "${valgrind_log[@]}" \
  build-release/step.json build-fuzz/fuzz.json \
  build-asan/meson-logs/testlog.json build-tsan/meson-logs/testlog.json ||
  status=1
exit "$status"
