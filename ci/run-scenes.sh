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
exec build/harness/scenetest run "$@" scenes/
