#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""No link-level dependency cycle between the .c files of harness/
(docs/architecture.md#layers): a file's object may use what a file below
it defines, never the other way round as well, however far round.

The graph is read from the built objects, not guessed from the sources:
`nm` lists, for each object of the library and of the CLI, the symbols it
defines and the ones it leaves undefined; an undefined symbol of A.o that
B.o defines is an edge A -> B. Every strongly connected component of more
than one file is a cycle; a failing point names the files of each one and,
for one path round it, the symbols that make each edge.

Prints TAP: a self-test point (two objects compiled here that call each
other are reported as a cycle, and a one-way pair is not), then the tree's
point. Usage: cycles_check.py SOURCE_ROOT BUILD_ROOT"""
import os
import shutil
import subprocess
import sys
import tempfile

from tap import point

# The folders of BUILD_ROOT/harness whose objects make the graph: the
# internal library (with its -O3 part) and the CLI (report/, tools/, cli/).
OBJECT_DIRS = ["libscenetest_internal.a.p", "libscenetest_hot.a.p",
               "scenetest.p"]


def symbols(objects):
    """{name: (defined, undefined)} for objects {name: path}: the sets of
    global symbols each defines and leaves undefined, from one run of
    `nm -P -A` (POSIX format: "PATH: NAME TYPE ...")."""
    by_path = {path: name for name, path in objects.items()}
    out = subprocess.run(["nm", "-P", "-A"] + sorted(by_path), check=True,
                         capture_output=True, text=True).stdout
    syms = {name: (set(), set()) for name in objects}
    for line in out.splitlines():
        path, sep, rest = line.partition(": ")
        parts = rest.split()
        if not sep or path not in by_path or len(parts) < 2:
            continue
        defined, undefined = syms[by_path[path]]
        name, kind = parts[0], parts[1]
        if kind in ("U", "w", "v"):
            undefined.add(name)
        elif kind.isupper():
            defined.add(name)
    return syms


def graph(objects):
    """{name: {dep: sorted symbols}} for objects {name: path}: name uses
    the symbols of dep. A symbol two objects define (it cannot link) is
    left to the linker; a file's use of its own symbols is no edge."""
    defs, undefs = {}, {}
    for name, (d, u) in symbols(objects).items():
        defs[name], undefs[name] = d, u
    owner = {}
    for name in sorted(defs):
        for sym in defs[name]:
            owner.setdefault(sym, name)
    edges = {name: {} for name in objects}
    for name in sorted(undefs):
        for sym in sorted(undefs[name]):
            dep = owner.get(sym)
            if dep is not None and dep != name:
                edges[name].setdefault(dep, []).append(sym)
    return edges


def components(edges):
    """The strongly connected components of more than one node (Tarjan's
    algorithm, iterative so that a deep graph cannot overflow the stack),
    each sorted, in sorted order."""
    index, low, on_stack = {}, {}, set()
    stack, found, counter = [], [], [0]
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, it = work[-1]
            advanced = False
            for dep in it:
                if dep not in index:
                    index[dep] = low[dep] = counter[0]
                    counter[0] += 1
                    stack.append(dep)
                    on_stack.add(dep)
                    work.append((dep, iter(sorted(edges[dep]))))
                    advanced = True
                    break
                if dep in on_stack:
                    low[node] = min(low[node], index[dep])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    comp.append(top)
                    if top == node:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return sorted(found)


def one_cycle(edges, comp):
    """A path round comp from its first file back to it (breadth-first,
    so the shortest), as [(file, next file, symbols)]."""
    members = set(comp)
    start = comp[0]
    prev = {start: None}
    queue = [start]
    end = None
    while queue and end is None:
        node = queue.pop(0)
        for dep in sorted(edges[node]):
            if dep not in members:
                continue
            if dep == start:
                end = node
                break
            if dep not in prev:
                prev[dep] = node
                queue.append(dep)
    path = [end]
    while prev[path[-1]] is not None:
        path.append(prev[path[-1]])
    path.reverse()
    path.append(start)
    return [(a, b, edges[a][b]) for a, b in zip(path, path[1:])]


def describe(edges, comp):
    """One line per cycle: its files, then the path round it with the
    symbols of each edge."""
    steps = one_cycle(edges, comp)
    path = " -> ".join(["%s (%s)" % (a, ", ".join(syms[:3]) +
                                     (", ..." if len(syms) > 3 else ""))
                        for a, _, syms in steps] + [steps[-1][1]])
    return "cycle of %d files {%s}: %s" % (len(comp), ", ".join(comp), path)


def tree_objects(source_root, build_root):
    """{harness-relative .c path: object path} for every object of
    OBJECT_DIRS. Meson names an object by its source path under harness/
    with '/' turned into '_' and '.o' added: mapped back through the
    source files that exist."""
    harness = os.path.join(source_root, "harness")
    by_object = {}
    for dirpath, _, names in os.walk(harness):
        for name in names:
            if name.endswith(".c"):
                rel = os.path.relpath(os.path.join(dirpath, name), harness)
                rel = rel.replace(os.sep, "/")
                by_object[rel.replace("/", "_") + ".o"] = rel
    objects = {}
    for sub in OBJECT_DIRS:
        folder = os.path.join(build_root, "harness", sub)
        if not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            if name in by_object:
                objects[by_object[name]] = os.path.join(folder, name)
    return objects


def self_test(tmpdir):
    """(ok, problems): a.c and b.c that call each other make one cycle
    named with its symbols; c.c that only calls a.c adds no other."""
    cc = os.environ.get("CC", "cc")
    sources = {
        "a.c": "int b_fn(void);\nint a_fn(void) { return b_fn() + 1; }\n",
        "b.c": "int a_fn(void);\nint b_fn(void) { return a_fn() - 1; }\n",
        "c.c": "int a_fn(void);\nint c_fn(void) { return a_fn(); }\n",
    }
    objects = {}
    for name, text in sources.items():
        src = os.path.join(tmpdir, name)
        with open(src, "w", encoding="utf-8") as f:
            f.write(text)
        objects[name] = src[:-2] + ".o"
        subprocess.run([cc, "-c", "-o", objects[name], src], check=True)
    edges = graph(objects)
    comps = components(edges)
    problems = []
    if comps != [["a.c", "b.c"]]:
        problems.append("components: %r, not [['a.c', 'b.c']]" % comps)
    else:
        got = describe(edges, comps[0])
        want = "cycle of 2 files {a.c, b.c}: a.c (b_fn) -> b.c (a_fn) -> a.c"
        if got != want:
            problems.append("described as %r, not %r" % (got, want))
    return not problems, problems


def main(argv):
    if len(argv) != 3:
        print("usage: cycles_check.py SOURCE_ROOT BUILD_ROOT", file=sys.stderr)
        return 2
    if shutil.which("nm") is None:
        print("TAP version 13")
        print("1..0 # SKIP nm not found")
        return 0
    print("TAP version 13")
    print("1..2")
    with tempfile.TemporaryDirectory() as tmp:
        ok1, problems = self_test(tmp)
    point(1, ok1, "self-test: two objects that call each other are one "
          "cycle, named with its symbols", problems)
    objects = tree_objects(argv[1], argv[2])
    problems = []
    if len(objects) < 10:
        problems.append("only %d objects found under %s/harness" %
                        (len(objects), argv[2]))
    else:
        edges = graph(objects)
        problems = [describe(edges, c) for c in components(edges)]
    point(2, not problems, "no dependency cycle between the %d .c files of "
          "harness/ (from their objects)" % len(objects), problems)
    return 0 if ok1 and not problems else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
