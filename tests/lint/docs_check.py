#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The docs and the code must agree (as curl's test 1119 checks its symbols
against its docs). For README.md and every docs/*.md this prints TAP points:

  - flags: every `--flag` the page names is a long option of harness/cli/*.c
    (the string "flag" in an option table, or "--flag" literally), unless
    it belongs to another tool (FOREIGN_FLAGS: meson, apt-get, prove...);
  - environment: every environment variable the page names in backticks
    (NO_COLOR, TORCH_*, GTEST_*, TEST_*, SCENETEST_*) is named in some
    harness/**/*.c or include/ file, i.e. something actually reads it;
  - links: every relative Markdown link points at an existing file;
  - paths: every repository path the page names (harness/LAYER/FILE.c,
    tests/..., docs/PAGE.md, ci/SCRIPT.sh, examples/..., a glob, a path
    with :LINE) exists, unless
    PATH_IGNORE gives a reason; a placeholder part (NAME, PAGE.md) and a
    built program named by its source (bench/bench_jobs) count as there;
  - spec: the page cites docs pages, never "SPEC §N" (the old contract is
    not in the repository; its sections live in docs/ now);
  - anchors: every PAGE.md#SECTION it names is a heading of that page
    (as GitHub makes anchors: `### Tags and -k` is #tags-and--k).

And for the comments of harness/, include/, plugins/, tests/, examples/,
ci/, bench/ and scenes/ (C, C++, CUDA, Python, shell, YAML and meson
files; tests/fixtures/ left out), one point each for paths and anchors as
above, and for all of them but tests/ (every byte, not only comments: a
string can cite it too) no "SPEC §".

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

FLAG_RE = re.compile(r"(?<![\w#-])--([a-z][a-z0-9]*(?:-[a-z0-9]+)*)")
CODE_SPAN_RE = re.compile(r"`([^`\n]+)`")
ENV_RE = re.compile(
    r"\b(NO_COLOR|(?:TORCH|GTEST|TEST|SCENETEST)_[A-Z0-9_]{2,})\b")
LINK_RE = re.compile(r"\]\(([^)\s]+)\)")

# Folders of the repository whose paths the docs and comments name.
PATH_ROOTS = ("harness", "include", "plugins", "tests", "docs", "ci",
              "examples", "scenes", "bench", "cmake")
# A repository path: one of PATH_ROOTS, then path characters. Not after a
# word character, '/', '$', '.', '-' or '<' (build/harness/..., $libdir/...,
# ../docs/x.md, <scenetest/...> are not repository-root paths).
PATH_RE = re.compile(
    r"(?<![\w/$.<@-])((?:%s)/[A-Za-z0-9_./*?{}<>+-]*)" % "|".join(PATH_ROOTS))
# Paths named on purpose though they do not exist, each with its reason.
PATH_IGNORE = {
    # torch.md shows the output of `check` for scenes the reader writes.
    "scenes/attn.yaml": "an example scene of docs/torch.md",
    "scenes/poly.yaml": "an example scene of docs/torch.md",
    # test_everyday.py writes it into a temporary project.
    "scenes/good.yaml": "a file tests/cli/test_everyday.py creates",
}
# Where "SPEC §N" may not appear (the contract's pages are docs/*.md).
NO_SPEC_DIRS = ("harness", "include", "plugins", "docs", "examples", "ci",
                "bench", "scenes")
# Whose comments are checked for paths, anchors and (NO_SPEC_DIRS) "SPEC §".
COMMENT_DIRS = ("harness", "include", "plugins", "tests", "examples", "ci",
                "bench", "scenes")
SPEC_RE = re.compile(r"SPEC(?:\.md)?\s*(?:\\xc2\\xa7|§)")
# A reference to a docs page's section: docs/PAGE.md#ANCHOR or, inside
# docs/, PAGE.md#ANCHOR.
ANCHOR_RE = re.compile(r"(?<![\w/.-])(?:docs/)?([a-z0-9_-]+\.md)#([a-z0-9_-]+)")


def anchors_of(text):
    """The anchors GitHub gives a page's headings: lower case, punctuation
    but '-' and '_' dropped, spaces to '-', repeats numbered -1, -2, ..."""
    seen, out = {}, set()
    for line in strip_fences(text)[1].splitlines():
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        slug = re.sub(r"[^\w\- ]", "", m.group(1).lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def c_comments(text):
    """The comments of a C/C++/CUDA file, string and character literals
    skipped, newlines kept so that line numbers still count."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(text[i:j])
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(text[i:j])
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append("\n" * text.count("\n", i, j))
            i = j + 1
        else:
            if c == "\n":
                out.append(c)
            i += 1
    return "".join(out)


def hash_comments(text):
    """The '#' comments and triple-quoted strings (docstrings) of a Python,
    shell or meson file, other strings skipped, newlines kept."""
    out = []
    for m in re.finditer(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|'
                         r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|'
                         r'#[^\n]*|\n', text):
        s = m.group(0)
        if s.startswith(("#", '"""', "'''")):
            out.append(s)
        else:
            out.append("\n" * s.count("\n"))
    return "".join(out)


def comments_of(path, text):
    if path.endswith((".c", ".h", ".cpp", ".cc", ".cu", ".cuh", ".hpp",
                      ".h.in")):
        return c_comments(text)
    if path.endswith((".py", ".sh", ".yaml", ".yml")) or \
            os.path.basename(path) in (
            "meson.build", "meson_options.txt", "CMakeLists.txt"):
        return hash_comments(text)
    return None


def missing_paths(root, text, here=None):
    """The repository paths text names that do not exist (relative to root,
    or to the directory here, for "scenes/NAME.yaml beside this file")."""
    missing = []
    for m in PATH_RE.finditer(text):
        path = m.group(1).rstrip(".,:;)'`")
        if re.search(r"[<>{}]", path):   # a pattern: harness/<layer>/x.c
            continue
        # A placeholder: tests/fuzz/NAME, docs/PAGE.md.
        if any(re.fullmatch(r"[A-Z][A-Z_]+(\.\w+)?", part)
               for part in path.split("/")):
            continue
        path = re.sub(r":\d+(?:[-:]\d+)?$", "", path)
        if path in PATH_IGNORE:
            continue
        ok = False
        for base in (root, here) if here else (root,):
            full = os.path.join(base, path)
            if re.search(r"[*?]", path):
                ok = ok or bool(glob.glob(full, recursive=True))
            else:
                # A built program named by its source: bench/bench_jobs.
                ok = ok or os.path.exists(full) or bool(glob.glob(full + ".*"))
        if not ok:
            missing.append(path)
    return sorted(set(missing))


def bad_anchors(root, path, text, anchors):
    """The PAGE.md#ANCHOR references of text whose page is a docs page
    without that section."""
    bad = []
    for m in ANCHOR_RE.finditer(text):
        page, anchor = m.group(1), m.group(2)
        if page in anchors and anchor not in anchors[page]:
            bad.append(f"{page}#{anchor}")
    return bad


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
    anchors = {os.path.basename(p): anchors_of(read(p))
               for p in glob.glob(os.path.join(root, "docs", "*.md"))}
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

        missing = missing_paths(root, prose + "\n" + fenced)
        tap.point(not missing, f"{rel}: the repository paths it names exist",
                  missing)

        tap.point(not SPEC_RE.search(text),
                  f"{rel}: cites docs pages, not \"SPEC \u00a7\"",
                  [f"line {text.count(chr(10), 0, m.start()) + 1}"
                   for m in SPEC_RE.finditer(text)])

        missing = bad_anchors(root, page, text, anchors)
        own = anchors_of(text)
        missing += [t for t in LINK_RE.findall(prose)
                    if t.startswith("#") and t[1:] not in own]
        tap.point(not missing, f"{rel}: its PAGE.md#SECTION references "
                  f"name sections that exist", missing)

    for top in COMMENT_DIRS:
        missing, spec, anchor = [], [], []
        for path in sorted(glob.glob(os.path.join(root, top, "**", "*"),
                                     recursive=True)):
            rel = os.path.relpath(path, root)
            if not os.path.isfile(path) or "/fixtures/" in path:
                continue
            text = read(path)
            comments = comments_of(path, text)
            if comments is None:
                continue
            for n, line in enumerate(comments.splitlines(), 1):
                missing += [f"{rel}:{n}: {p}" for p in
                            missing_paths(root, line, os.path.dirname(path))]
                anchor += [f"{rel}:{n}: {a}"
                           for a in bad_anchors(root, path, line, anchors)]
            if top in NO_SPEC_DIRS:
                spec += [f"{rel}:{text.count(chr(10), 0, m.start()) + 1}"
                         for m in SPEC_RE.finditer(text)]
        tap.point(not missing, f"{top}/: the repository paths its comments "
                  f"name exist", missing)
        tap.point(not anchor, f"{top}/: its comments' PAGE.md#SECTION "
                  f"references name sections that exist", anchor)
        if top in NO_SPEC_DIRS:
            tap.point(not spec, f"{top}/: cites docs pages, not "
                      f"\"SPEC \u00a7\"", spec)
    return tap.emit()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: docs_check.py SOURCE_ROOT", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
