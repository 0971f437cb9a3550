#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every C, C++ and CUDA file of the repository is formatted as the
committed .clang-format says (docs/architecture.md#tests): the check CI
runs is `clang-format --dry-run -Werror` on each file, here as TAP points:

  - self-test: a badly formatted snippet is refused, so the check can fail;
  - formatted: every file is clean; a failing point names the files.

Skips (a TAP plan of 0, exit 0) when clang-format is not on PATH; ci/deps.sh --full
installs Debian 12's clang-format (14), the version the tree is formatted with
(another major version formats some constructs differently).
Usage: format_check.py SOURCE_ROOT"""
import os
import shutil
import subprocess
import sys

EXTENSIONS = (".c", ".h", ".cpp", ".hpp", ".cu", ".cuh")
# Folders that hold no source of ours, where there is no git checkout.
SKIP_DIRS = {".git", "subprojects"}


def sources(root):
    """The repository's source files, sorted: git's list in a checkout,
    else a walk that leaves out build trees (a meson-private inside)."""
    r = subprocess.run(["git", "ls-files", "-z"], cwd=root,
                       capture_output=True)
    if r.returncode == 0 and r.stdout:
        names = r.stdout.decode().split("\0")
        return sorted(n for n in names if n.endswith(EXTENSIONS)
                      and os.path.exists(os.path.join(root, n)))
    out = []
    for dirpath, dirnames, names in os.walk(root):
        dirnames[:] = [
            d for d in dirnames if d not in SKIP_DIRS and not os.path.exists(
                os.path.join(dirpath, d, "meson-private"))
        ]
        rel_dir = os.path.relpath(dirpath, root)
        out += [os.path.normpath(os.path.join(rel_dir, n)) for n in names
                if n.endswith(EXTENSIONS)]
    return sorted(out)


def unclean(exe, root, files):
    """The files clang-format would change."""
    bad = []
    for i in range(0, len(files), 64):
        chunk = files[i:i + 64]
        r = subprocess.run([exe, "--dry-run", "-Werror"] + chunk, cwd=root,
                           capture_output=True, text=True)
        if r.returncode != 0:
            # Name the files one by one: the batch only says "some".
            for f in chunk:
                one = subprocess.run([exe, "--dry-run", "-Werror", f],
                                     cwd=root, capture_output=True)
                if one.returncode != 0:
                    bad.append(f)
    return bad


def main():
    root = sys.argv[1]
    exe = shutil.which("clang-format-14") or shutil.which("clang-format")
    print("TAP version 13")
    if exe is None:
        # A TAP test skips with the plan and exit 0 (any other status is an
        # error under meson's protocol 'tap').
        print("1..0 # SKIP clang-format is not on PATH")
        return 0
    print("1..2")
    snippet = "int  main( void ){return 0;}\n"
    r = subprocess.run([exe, "--dry-run", "-Werror",
                        "--assume-filename=" + os.path.join(root, "x.c")],
                       input=snippet, capture_output=True, text=True,
                       cwd=root)
    ok = r.returncode != 0
    print(("ok" if ok else "not ok") +
          " 1 - self-test: a badly formatted snippet is refused")
    files = sources(root)
    bad = unclean(exe, root, files)
    print(("ok" if not bad else "not ok") +
          f" 2 - the {len(files)} C, C++ and CUDA files are clang-format "
          "clean")
    if bad:
        print("  ---\n  message: run clang-format -i on them\n  data:")
        for f in bad:
            print(f"    - '{f}'")
        print("  ...")
    return 0 if ok and not bad else 1


if __name__ == "__main__":
    sys.exit(main())
