#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Quick start 1: installs what is missing, builds in ./build and runs the
# example scenes on the default platform (cpu). Extra arguments go to
# `scenetest run` (for example `ci/run-scenes.sh --platform threads`).
set -euo pipefail
cd "$(dirname "$0")/.."

ci/deps.sh
if [ ! -f build/build.ninja ]; then
  meson setup build
fi
ninja -C build
# scenes/torch/ computes its golden with the torch plugin: the binary in
# its build directory declares the plugin built beside it (libtorch
# installed), else those cases are skipped with one summary warning
# (docs/cli.md, "The build tree").
exec build/harness/scenetest run "$@" scenes/
