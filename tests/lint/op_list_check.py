#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The built-in ops are one list, harness/base/op_list.h; every other
list of them must agree with it, so that adding an op cannot leave one
behind silently:

- docs/scene-format.md's ops table names exactly the listed ops, and the
  row of each element-wise op shows its formula (the row's last column);
- README.md's "Built-in ops:" sentence names them, in the list's order;
- docs/bench.md's work-model table names exactly the listed ops;
- every copy of the unknown-op message (docs/*.md, tests/scenes/bad/
  *.expected) lists them in the list's order, as ops/validate.c prints it.

A self-test first: an op missing from the docs is reported.
Prints TAP 13. Usage: op_list_check.py SOURCE_ROOT"""
import glob
import os
import re
import sys

ROW = re.compile(r'^  XX\(P, (\w+), .*?,[\s\\]*(EW|NO),[\s\\]*(\w+),'
                 r'[\s\\]*("(?:[^"\\]|\\.)*"|NULL)\)', re.M | re.S)


def op_rows(root):
    """[(name, formula or None)] in op_list.h's order."""
    text = open(os.path.join(root, "harness", "base", "op_list.h")).read()
    text = text[text.index("#define ST__BUILTIN_OP_ROWS"):]
    text = text[:text.index("\n\n")]
    rows = []
    for m in ROW.finditer(text):
        formula = None if m.group(4) == "NULL" else m.group(4)[1:-1]
        rows.append((m.group(1), formula if m.group(2) == "EW" else None))
    return rows


def table_after(text, heading):
    """The first Markdown table after heading: [[cell, ...], ...] without
    the header and rule rows."""
    start = text.index(heading)
    lines = text[start:].split("\n")
    rows, seen = [], False
    for line in lines[1:]:
        if line.startswith("|"):
            seen = True
            rows.append([c.strip() for c in line.strip().strip("|")
                         .split("|")])
        elif seen:
            break
    return rows[2:]


def names_in(cell):
    return re.findall(r"`([a-z_]+)`", cell)


def problems(root, rows):
    """Each disagreement, as a line."""
    ops = [r[0] for r in rows]
    out = []
    docs = open(os.path.join(root, "docs", "scene-format.md")).read()
    table = table_after(docs, "\n## Ops\n")
    named = {}
    for cells in table:
        for n in names_in(cells[0]):
            named[n] = " | ".join(cells[1:])
    if sorted(named) != sorted(ops):
        out.append("docs/scene-format.md#ops names %s; op_list.h has %s"
                   % (sorted(named), sorted(ops)))
    for name, formula in rows:
        if formula is not None and name in named and \
                formula not in named[name]:
            out.append("docs/scene-format.md#ops: the row of %s does not "
                       "show its formula '%s'" % (name, formula))
    readme = open(os.path.join(root, "README.md")).read()
    m = re.search(r"Built-in ops: (.*?)\.\s", readme, re.S)
    if not m or names_in(m.group(1)) != ops:
        out.append("README.md's 'Built-in ops:' is not %s" % ops)
    bench = open(os.path.join(root, "docs", "bench.md")).read()
    work = [n for cells in table_after(bench, "The built-in ops declare their work")
            for n in names_in(cells[0])]
    if sorted(work) != sorted(ops):
        out.append("docs/bench.md's work table names %s" % sorted(work))
    want = "expected a built-in op (%s)" % ", ".join(ops)
    files = (glob.glob(os.path.join(root, "docs", "*.md")) +
             glob.glob(os.path.join(root, "tests", "scenes", "bad",
                                    "*.expected")))
    for path in sorted(files):
        for i, line in enumerate(open(path).read().split("\n"), 1):
            if "expected a built-in op (" in line and \
                    "expected a built-in op (...)" not in line and \
                    want not in line:
                out.append("%s:%d: the unknown-op message lists other ops"
                           % (os.path.relpath(path, root), i))
    return out


def main(root):
    rows = op_rows(root)
    print("TAP version 13")
    print("1..2")
    fake = rows + [("no_such_builtin", "y = x")]
    bad = problems(root, fake)
    ok = len(rows) >= 11 and len(bad) >= 3
    print("%s 1 - self-test: an op the docs lack is reported (%d rows "
          "read)" % ("ok" if ok else "not ok", len(rows)))
    failed = 0 if ok else 1
    bad = problems(root, rows)
    if bad:
        failed += 1
        print("not ok 2 - the lists of ops disagree with op_list.h")
        print("  ---")
        print("  problems:")
        for b in bad:
            print("    - %r" % b)
        print("  ...")
    else:
        print("ok 2 - docs, README and the unknown-op messages agree with "
              "op_list.h (%d ops)" % len(rows))
    return failed


if __name__ == "__main__":
    sys.exit(1 if main(sys.argv[1]) else 0)
