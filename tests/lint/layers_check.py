#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""harness/ is folders that are layers (docs/architecture.md); this keeps
the plan true. For every `#include "..."` of every file under harness/ it
checks, and prints TAP points for:

  - resolve: the include names a file of harness/ (include dir harness/,
    so `#include "case/args.h"`), or one beside the including file;
  - layers: the included file's layer is the includer's or a lower one,
    in the order LAYERS below; tools/ only its own, base/,
    report/json.h and report/html_escape.h. case/level3/ sits just above case/: level 3
    uses the case's phases; a case/ file may include case/level3/ only
    where it is the executor table (EXECUTOR_TABLE), which lists the
    executors by name as curl's vtls.c lists its backends;
  - cycles: no include cycle among harness files (a header that, through
    others, includes itself);
  - yaml: of harness/, include/ and plugins/, only YAML_FILE includes
    <yaml.h> (libyaml's types stay in the loader's YAML tree).

A failing point lists the offending includes in a YAML diagnostic block.
Usage: layers_check.py SOURCE_ROOT"""
import os
import re
import sys

from tap import point

# Lowest first.
LAYERS = ["base", "wire", "scene", "ops", "case", "case/level3", "run",
          "report", "tools", "cli"]
# tools/ (timing, compare: the CLI's, not the library's) reads logs, not
# runs: besides itself it may include base/ and, of report/, the escaping.
TOOLS_MAY = {"base"}
TOOLS_MAY_FILES = {"report/json.h", "report/html_escape.h"}
# The only case/ files that may include case/level3/ (the executor table).
EXECUTOR_TABLE = {"case/exec.c"}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
YAML_INCLUDE = re.compile(r'^\s*#\s*include\s+<yaml\.h>', re.M)
# The one file that includes <yaml.h> (docs/dependencies.md).
YAML_FILE = "harness/scene/yaml_tree.c"


def yaml_includers(root):
    """The files of harness/, include/ and plugins/ (relative to root)
    other than YAML_FILE that include <yaml.h>."""
    found = []
    for top in ("harness", "include", "plugins"):
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for name in names:
                if not name.endswith((".c", ".h", ".cpp", ".hpp", ".cu")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root).replace(os.sep, "/")
                with open(path, encoding="utf-8", errors="replace") as f:
                    if YAML_INCLUDE.search(f.read()) and rel != YAML_FILE:
                        found.append(rel)
    return sorted(found)


def layer_of(rel):
    """The layer of a path relative to harness/ (deepest folder that is a
    layer), or None."""
    best = None
    for name in LAYERS:
        if rel.startswith(name + "/") and (best is None or
                                           len(name) > len(best)):
            best = name
    return best


def scan(harness):
    """{rel: [(line, included rel or None, text)]} for every .c/.h."""
    files = {}
    for dirpath, _, names in os.walk(harness):
        for name in names:
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, harness).replace(os.sep, "/")
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
            incs = []
            for m in INCLUDE.finditer(text):
                line = text.count("\n", 0, m.start()) + 1
                target = m.group(1)
                here = os.path.normpath(os.path.join(os.path.dirname(rel),
                                                     target))
                if os.path.isfile(os.path.join(harness, target)):
                    incs.append((line, os.path.normpath(target), target))
                elif os.path.isfile(os.path.join(harness, here)):
                    incs.append((line, here.replace(os.sep, "/"), target))
                else:
                    incs.append((line, None, target))
            files[rel] = incs
    return files


def find_cycles(files):
    """Every include cycle, each as a list of files (first repeated last)."""
    WHITE, GREY, BLACK = 0, 1, 2
    colour = {f: WHITE for f in files}
    stack, cycles = [], []

    def visit(f):
        colour[f] = GREY
        stack.append(f)
        for _, dep, _ in files[f]:
            if dep is None or dep not in files:
                continue
            if colour[dep] == GREY:
                cycles.append(stack[stack.index(dep):] + [dep])
            elif colour[dep] == WHITE:
                visit(dep)
        stack.pop()
        colour[f] = BLACK

    for f in sorted(files):
        if colour[f] == WHITE:
            visit(f)
    return cycles


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    harness = os.path.join(root, "harness")
    files = scan(harness)
    unresolved, up, unlayered = [], [], []
    for rel in sorted(files):
        mine = layer_of(rel)
        if mine is None:
            unlayered.append(rel)
            continue
        for line, dep, text in files[rel]:
            if dep is None:
                unresolved.append('%s:%d: "%s"' % (rel, line, text))
                continue
            theirs = layer_of(dep)
            if theirs is None:
                unlayered.append(dep)
                continue
            if mine == "tools":
                if (theirs in TOOLS_MAY or theirs == "tools" or
                        dep in TOOLS_MAY_FILES):
                    continue
                up.append('%s:%d: includes "%s" (tools/ may include base/, '
                          'report/json.h and report/html_escape.h only)'
                          % (rel, line, text))
                continue
            if LAYERS.index(theirs) <= LAYERS.index(mine):
                continue
            if (mine == "case" and theirs == "case/level3" and
                    rel in EXECUTOR_TABLE):
                continue
            up.append('%s:%d: includes "%s" (layer %s above %s)' %
                      (rel, line, text, theirs, mine))
    cycles = find_cycles(files)
    yaml = yaml_includers(root)
    print("1..4")
    point(1, not unresolved,
          "every quoted include names a file of harness/", unresolved)
    point(2, not up and not unlayered,
          "no file includes a layer above its own (%s)" % " < ".join(LAYERS),
          up + ["not in a layer folder: " + u for u in sorted(set(unlayered))])
    point(3, not cycles, "no include cycle among harness files",
          [" -> ".join(c) for c in cycles])
    point(4, not yaml, "only %s includes <yaml.h>" % YAML_FILE, yaml)
    return 1 if unresolved or up or unlayered or cycles or yaml else 0


if __name__ == "__main__":
    sys.exit(main())
