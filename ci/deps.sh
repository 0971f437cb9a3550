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
"${sudo[@]}" apt-get install -y -q --no-install-recommends "${packages[@]}"

have_all || { echo "ci/deps.sh: dependencies still missing after apt-get" >&2; exit 1; }
