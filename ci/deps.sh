#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs what building and testing scenetest needs, on Debian 12 (bookworm),
# and nothing when everything is already there: both README commands call it
# first, so a second run costs no network access.
set -euo pipefail

# libc6-dev is only a Recommends of gcc, and recommends are not installed:
# without it gcc has no <stdio.h>.
packages=(meson ninja-build pkg-config gcc libc6-dev libyaml-dev libcmocka-dev
          python3 perl valgrind)

# `ci/deps.sh --full` (ci/test.sh) adds what the whole suite checks its
# outputs with: the real consumers (xmllint, junitparser, a JSON Schema
# validator, numpy, scipy for the U-test reference values, chromium for
# the HTML report, tmux for the terminal test), libtorch for the torch
# plugin, g++ for C++ plugins, clang with its sanitizer/libFuzzer runtime,
# cmake (and its ctest) for the CMake package's consumer example,
# clang-format (Debian 12: version 14, the one the tree is formatted with)
# for format_check.
# The quick start (ci/run-scenes.sh) stays light and does not ask for them.
full_packages=(g++ clang libclang-rt-14-dev libxml2-utils python3-junitparser
               python3-jsonschema python3-numpy python3-scipy python3-pytest
               tmux chromium libtorch-dev cmake clang-format)
full=0
if [ "${1:-}" = "--full" ]; then
  full=1
  packages+=("${full_packages[@]}")
fi

# What the build actually uses, checked directly rather than through dpkg:
# a python3 or meson from elsewhere on PATH is as good as Debian's.
have_all() {
  local cmd
  for cmd in meson ninja pkg-config gcc python3 perl prove valgrind; do
    command -v "$cmd" >/dev/null 2>&1 || return 1
  done
  pkg-config --exists yaml-0.1 || return 1
  pkg-config --exists cmocka || return 1
  # A compiler without libc headers is not a compiler we can use.
  printf '#include <stdio.h>\nint main(void) { return 0; }\n' |
    gcc -x c - -o /dev/null >/dev/null 2>&1 || return 1
  if [ "$full" = 1 ]; then
    for cmd in g++ clang clang-format xmllint tmux chromium cmake ctest; do
      command -v "$cmd" >/dev/null 2>&1 || return 1
    done
    # Debian's python packages, seen by Debian's python3 only.
    /usr/bin/python3 -c 'import junitparser, jsonschema, numpy, scipy, pytest' \
      >/dev/null 2>&1 || return 1
    [ -e /usr/include/torch/script.h ] || return 1
    [ -e "$(clang -print-resource-dir 2>/dev/null)/lib/linux/libclang_rt.fuzzer-x86_64.a" ] ||
      return 1
  fi
}

if have_all; then
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "ci/deps.sh: missing build dependencies and no apt-get;" \
       "install: ${packages[*]}" >&2
  exit 1
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    sudo=(sudo)
  else
    echo "ci/deps.sh: not root and no sudo; as root run:" \
         "apt-get install ${packages[*]}" >&2
    exit 1
  fi
fi

echo "ci/deps.sh: installing ${packages[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -q
start=$(date +%s)
"${sudo[@]}" apt-get install -y -q --no-install-recommends "${packages[@]}"
echo "ci/deps.sh: apt-get install took $(( $(date +%s) - start )) s" >&2

have_all || { echo "ci/deps.sh: dependencies still missing after apt-get" >&2; exit 1; }
