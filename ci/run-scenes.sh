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
# scenes/torch/ computes its golden with the torch plugin: with the plugin
# built (libtorch installed) it runs too, else only the scenes outside it.
torch=build/plugins/torch/scenetest_torch.so
if [ -f "$torch" ]; then
  exec build/harness/scenetest run --plugin "lazy:$torch" "$@" scenes/
fi
exec build/harness/scenetest run --ignore torch "$@" scenes/
