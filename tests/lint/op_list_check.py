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
  *.expected) lists them in the list's order, as ops/validate.c prints it;
- docs/scene-format.md's tables of the error bound's n and of `init:
  exact`'s R name exactly the ops whose bound_n and exact_r columns name
  a model, each with its model's n or R.

A self-test first: an op missing from the docs is reported, and so is a
model the docs do not show.
Prints TAP 13. Usage: op_list_check.py SOURCE_ROOT"""
import glob
import os
import re
import sys

from tap import point

ROW = re.compile(r'^  XX\(P, (\w+), .*?,[\s\\]*(\w+),[\s\\]*(\w+),'
                 r'[\s\\]*(EW|NO),[\s\\]*(\w+),'
                 r'[\s\\]*("(?:[^"\\]|\\.)*"|NULL)\)', re.M | re.S)

# What docs/scene-format.md shows for each model of the bound_n and
# exact_r columns (base/bound.h's ST__BOUND_N_* and ST__BOUND_R_*): the
# n cell of #the-error-bound and the R cell of #exact-inputs.
N_CELL = {"EXACT": r"exact\b", "ONE": r"1$", "TWO": r"2$", "K": r"K$",
          "LEN": r"N - 1$", "SOFTMAX": r"C \+ 4 "}
R_CELL = {"TOP": r"R <= 2\^p$", "HALF": r"2R <= 2\^p$",
          "SQRT": r"R² <= 2\^p$", "AXPY": r"R² \+ R <= 2\^p$",
          "SQRT_K": r"K·R² <= 2\^p$", "DIV_N": r"N·R <= 2\^p( \(|$)"}


def op_rows(root):
    """[(name, formula or None, bound_n, exact_r)] in op_list.h's
    order."""
    text = open(os.path.join(root, "harness", "base", "op_list.h")).read()
    text = text[text.index("#define ST__BUILTIN_OP_ROWS"):]
    text = text[:text.index("\n\n")]
    rows = []
    for m in ROW.finditer(text):
        formula = None if m.group(6) == "NULL" else m.group(6)[1:-1]
        rows.append((m.group(1), formula if m.group(4) == "EW" else None,
                     m.group(2), m.group(3)))
    return rows


def table_after(text, heading):
    """The first Markdown table after heading (outside code blocks):
    [[cell, ...], ...] without the header and rule rows; an escaped \\|
    stays in its cell."""
    start = text.index(heading)
    lines = text[start:].split("\n")
    rows, seen, fenced = [], False, False
    for line in lines[1:]:
        if line.startswith("```"):
            fenced = not fenced
        elif line.startswith("|") and not fenced:
            seen = True
            rows.append([c.strip() for c in
                         re.split(r"(?<!\\)\|", line.strip().strip("|"))])
        elif seen:
            break
    return rows[2:]


def names_in(cell):
    return re.findall(r"`([a-z_]+)`", cell)


def model_problems(docs, heading, rows, column, cells_of, what):
    """The table after heading against one model column of rows
    (column 2 bound_n, 3 exact_r; cells_of the model's cell patterns)."""
    out = []
    shown = {}
    for cells in table_after(docs, heading):
        for n in names_in(cells[0]):
            shown[n] = cells[1]
    modelled = [r for r in rows if r[column] != "NONE"]
    if sorted(shown) != sorted(r[0] for r in modelled):
        out.append("docs/scene-format.md's table of %s names %s; op_list.h "
                   "models %s" % (what, sorted(shown),
                                  sorted(r[0] for r in modelled)))
    for r in modelled:
        if r[column] not in cells_of:
            out.append("op_list_check.py knows no cell for %s's model %s"
                       % (r[0], r[column]))
        elif r[0] in shown and not re.match(cells_of[r[column]],
                                            shown[r[0]]):
            out.append("docs/scene-format.md's table of %s: %s shows '%s', "
                       "not model %s" % (what, r[0], shown[r[0]],
                                         r[column]))
    return out


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
    out += model_problems(docs, "\n## The error bound\n", rows, 2, N_CELL,
                          "the error bound's n")
    out += model_problems(docs, "\n### Exact inputs\n", rows, 3, R_CELL,
                          "init: exact's R")
    for name, formula, _, _ in rows:
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
    fake = rows + [("no_such_builtin", "y = x", "ONE", "HALF")]
    bad = problems(root, fake)
    # axpy's n as 1 and its R as add's: two cells that disagree.
    wrong = [(r[0], r[1], "ONE", "HALF") if r[0] == "axpy" else r
             for r in rows]
    bad_model = problems(root, wrong)
    ok = len(rows) >= 11 and len(bad) >= 5 and len(bad_model) == 2 and \
        all("axpy shows" in b for b in bad_model)
    print("%s 1 - self-test: an op the docs lack is reported, and a model "
          "they do not show (%d rows read)"
          % ("ok" if ok else "not ok", len(rows)))
    failed = 0 if ok else 1
    bad = problems(root, rows)
    failed += 1 if bad else 0
    point(2, not bad, "docs, README, the unknown-op messages and the error "
          "bound's tables agree with op_list.h (%d ops)" % len(rows), bad)
    return failed


if __name__ == "__main__":
    sys.exit(1 if main(sys.argv[1]) else 0)
