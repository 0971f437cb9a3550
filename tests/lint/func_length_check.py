#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""No function of harness/ runs over MAX_LINES lines unless a comment says
why (issue 8): a long function is split, or the comment just above it (or
its doc comment) contains MARKER, followed by the reason ("one switch
over every option kind", ...).

A function here is what clang-format leaves in the project's files: a
definition whose header starts in column 0 and ends with "{", whose body
ends at the next "}" in column 0; its length counts both. Functions
written inside a #define are not seen.

Prints TAP: two self-test points (an unmarked long function is reported, a
marked one and a short one are not, so the check can fail), then one
point for harness/ with every offender as "FILE:LINE: NAME (N lines)" in
a YAML block. Usage: func_length_check.py SOURCE_ROOT"""
import os
import re
import sys

MAX_LINES = 100
MARKER = "Long because:"

HEADER_START = re.compile(r"^[A-Za-z_][\w \t\*,]*\b([A-Za-z_]\w*)\s*\(")
NOT_A_FUNCTION = re.compile(r"^(typedef|struct|union|enum|extern)\b")


def functions(lines):
    """Yields (first line index, last line index, name, preceding comment
    text) for every function definition in lines (no newlines)."""
    i, n = 0, len(lines)
    while i < n:
        m = HEADER_START.match(lines[i])
        if not m or NOT_A_FUNCTION.match(lines[i]):
            i += 1
            continue
        # The header runs until a line ending with "{" (a prototype ends
        # with ";", a table has "=").
        j = i
        while j < n and not lines[j].rstrip().endswith("{"):
            if ";" in lines[j] or "=" in lines[j]:
                break
            j += 1
        if j >= n or ";" in lines[j] or "=" in lines[j]:
            i = j + 1
            continue
        k = j + 1
        while k < n and lines[k].rstrip() != "}":
            k += 1
        if k >= n:
            break
        # What stands just above: the lines up to the previous blank line
        # (a doc comment, an attribute macro such as ST_HOT_CLONES).
        above = []
        p = i - 1
        while p >= 0 and lines[p].strip() != "":
            above.append(lines[p])
            p -= 1
        yield i, k, m.group(1), "\n".join(reversed(above))
        i = k + 1


def offenders(path, rel):
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    out = []
    for first, last, name, above in functions(lines):
        length = last - first + 1
        if length > MAX_LINES and MARKER not in above:
            out.append("%s:%d: %s (%d lines)" % (rel, first + 1, name, length))
    return out


def scan(root):
    found = []
    for dirpath, dirs, names in os.walk(root):
        dirs.sort()
        for name in sorted(names):
            if name.endswith(".c"):
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, os.path.dirname(root))
                found.extend(offenders(path, rel.replace(os.sep, "/")))
    return found


def self_test(tmpdir):
    """1 when an unmarked long function is the only one reported."""
    body = "".join("  x += %d;\n" % i for i in range(MAX_LINES))
    text = ("/* A long one. */\n"
            "static int unmarked(int x,\n"
            "                    int y) {\n" + body + "  return x;\n}\n\n"
            "/* Long because: a test. */\n"
            "int marked(void) {\n" + body + "  return 0;\n}\n\n"
            "int prototype(int x);\n"
            "static const int table[] = {\n  1,\n};\n\n"
            "int short_one(void) {\n  return 0;\n}\n")
    path = os.path.join(tmpdir, "sample.c")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    got = offenders(path, "sample.c")
    want = ["sample.c:2: unmarked (%d lines)" % (MAX_LINES + 4)]
    return got == want, got


def main(argv):
    import tempfile
    if len(argv) != 2:
        sys.stderr.write(__doc__.split("Usage: ")[1] + "\n")
        return 2
    harness = os.path.join(argv[1], "harness")
    print("TAP version 13")
    print("1..3")
    with tempfile.TemporaryDirectory() as tmp:
        ok, got = self_test(tmp)
    print("%s 1 - self-test: an unmarked long function is reported" %
          ("ok" if any("unmarked" in g for g in got) else "not ok"))
    print("%s 2 - self-test: a marked, a short one, a prototype and a table "
          "are not" % ("ok" if ok else "not ok"))
    if not ok:
        print("  ---\n  got:")
        for g in got:
            print("    - '%s'" % g)
        print("  ...")
    found = scan(harness)
    print("%s 3 - harness/: no function over %d lines without '%s'" %
          ("not ok" if found else "ok", MAX_LINES, MARKER))
    if found:
        print("  ---\n  offenders:")
        for f in found:
            print("    - '%s'" % f)
        print("  ...")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
