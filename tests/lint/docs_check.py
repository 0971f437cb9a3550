#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The docs and the code must agree (as curl's test 1119 checks its symbols
against its docs). For README.md and every docs/*.md this prints TAP points:

  - flags: every `--flag` the page names is a long option of harness/cli/*.c
    (the string "flag" in an option table, or "--flag" literally), unless
    it belongs to another tool (FOREIGN_FLAGS: meson, apt-get, prove...);
  - environment: every environment variable the page names in backticks
    (NO_COLOR, TORCH_*, GTEST_*, TEST_*, SCENETEST_*) is named in some
    harness/*.c or include/ file, i.e. something actually reads it;
  - links: every relative Markdown link points at an existing file.

A failing point lists what is missing in a YAML diagnostic block.
Usage: docs_check.py SOURCE_ROOT"""
import glob
import os
import re
import sys

# Flags of other programs that the docs show in commands (meson, ninja,
# apt-get, prove, pkg-config): not scenetest's to implement.
FOREIGN_FLAGS = {
    "--print-errorlogs",   # meson test
    "--suite",             # meson test
    "--benchmark",         # meson test
    "--timeout-multiplier",  # meson test
    "--num-processes",     # meson test
    "--wipe",              # meson setup
    "--reconfigure",       # meson setup
    "--buildtype",         # meson setup
    "--no-install-recommends",  # apt-get
    "--verbose",           # meson test / prove
    "--exec",              # prove
    "--cflags",            # pkg-config
    "--libs",              # pkg-config
    "--exists",            # pkg-config
    "--modversion",        # pkg-config
    "--prefix",            # meson setup
    "--libdir",            # meson setup
    "--schema",            # xmllint
    "--noout",             # xmllint
    "--destdir",           # meson install
    "--variable",          # pkg-config
    "--build",             # cmake
    "--spec",              # ajv
    "--allow-union-types",  # ajv
}

FLAG_RE = re.compile(r"(?<![\w-])--([a-z][a-z0-9]*(?:-[a-z0-9]+)*)")
CODE_SPAN_RE = re.compile(r"`([^`\n]+)`")
ENV_RE = re.compile(
    r"\b(NO_COLOR|(?:TORCH|GTEST|TEST|SCENETEST)_[A-Z0-9_]{2,})\b")
LINK_RE = re.compile(r"\]\(([^)\s]+)\)")


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def strip_fences(text):
    """Fenced code blocks as one string, and the rest: environment
    variables count in both, but backticks only exist outside fences."""
    fenced, prose, inside = [], [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            inside = not inside
            continue
        (fenced if inside else prose).append(line)
    return "\n".join(fenced), "\n".join(prose)


class Tap:
    def __init__(self):
        self.points = []

    def point(self, ok, name, missing=None):
        self.points.append((ok, name, missing or []))

    def emit(self):
        print("TAP version 13")
        print(f"1..{len(self.points)}")
        failed = 0
        for i, (ok, name, missing) in enumerate(self.points, 1):
            print(f"{'ok' if ok else 'not ok'} {i} - {name}")
            if not ok:
                failed += 1
                print("  ---")
                print("  message: missing")
                print("  severity: fail")
                print("  data:")
                for m in missing:
                    print(f"    - {m!r}")
                print("  ...")
        return 1 if failed else 0


def main(root):
    cli = "".join(read(p) for p in sorted(
        glob.glob(os.path.join(root, "harness", "cli", "*.c"))))
    sources = ""
    for pattern in ("harness/**/*.c", "harness/**/*.h", "include/**/*.h"):
        for path in sorted(glob.glob(os.path.join(root, pattern),
                                     recursive=True)):
            sources += read(path)

    pages = [os.path.join(root, "README.md")]
    pages += sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    tap = Tap()
    for page in pages:
        rel = os.path.relpath(page, root)
        if not os.path.exists(page):
            tap.point(False, f"{rel}: exists", [rel])
            continue
        text = read(page)
        fenced, prose = strip_fences(text)

        flags = sorted({"--" + m.group(1) for m in FLAG_RE.finditer(text)}
                       - FOREIGN_FLAGS)
        missing = [f for f in flags
                   if f'"{f[2:]}"' not in cli and f not in cli]
        tap.point(not missing,
                  f"{rel}: {len(flags)} --flags are options of harness/cli/*.c",
                  missing)

        names = set()
        for span in CODE_SPAN_RE.findall(prose):
            names.update(ENV_RE.findall(span))
        names.update(ENV_RE.findall(fenced))
        missing = sorted(n for n in names if n not in sources)
        tap.point(not missing,
                  f"{rel}: {len(names)} environment variables are read by "
                  f"the harness", missing)

        broken = []
        for target in LINK_RE.findall(prose):
            if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                continue
            path = target.split("#", 1)[0]
            if not os.path.exists(os.path.join(os.path.dirname(page), path)):
                broken.append(target)
        tap.point(not broken, f"{rel}: relative links resolve", broken)
    return tap.emit()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: docs_check.py SOURCE_ROOT", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
