# SPDX-License-Identifier: MIT
"""The load limits of docs/scene-format.md#shapes-and-limits through the binary (issue 14): the node
budget (--max-nodes) counts alias-expanded nodes only, so it refuses an
alias bomb but loads a big honest file; --max-file-bytes bounds a scene
file's size before it is read. Each refusal is one FILE:LINE:COL: error
line naming its flag, exit 2. Prints TAP 13.

Usage: test_limits.py PATH/TO/scenetest
"""

import os
import sys
import tempfile

EXE = os.path.abspath(sys.argv[1])
TMP = tempfile.mkdtemp(prefix="scenetest-limits-")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import taptest  # noqa: E402  (after sys.path)
from taptest import Run, check, main, test  # noqa: E402

taptest.EXE = EXE

GOOD = taptest.VADD_SCENE

# Ten levels of ten aliases each: 10^10 nodes once expanded.
BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    "%s: &%s [%s]\n" % (c, c, ", ".join(["*" + p] * 10))
    for p, c in zip("abcdefghi", "bcdefghij"))


write = taptest.writer(TMP)


@test
def max_nodes__alias_bomb_refused_naming_the_flag():
    path = write("bomb.yaml", BOMB)
    for cmd in ("check", "run"):
        r = Run([cmd, path])
        check(r.rc == 2, "%s: exit 2" % cmd, r)
        lines = r.err.strip().splitlines()
        check(len(lines) == 1, "one error line", r)
        # The first alias past the budget: line 6 (f:), its 4th *e.
        check(lines[0] == "%s:6:36: error: aliases expand to more than "
              "1000000 YAML nodes; expected at most the node budget of "
              "1000000 per file (raise it with --max-nodes)" % path,
              "FILE:LINE:COL: error naming --max-nodes", r)


@test
def max_nodes__raised_budget_moves_the_refusal():
    """--max-nodes is the flag the message names: a budget of 10,000
    refuses earlier: at line 4, col 36, the 8th *c, where the expanded
    count reaches 110 + 1,110 + 8 * 1,111 = 10,108 nodes."""
    path = write("bomb.yaml", BOMB)
    r = Run(["check", "--max-nodes", "10000", path])
    check(r.rc == 2, "exit 2", r)
    check(r.err.startswith("%s:4:36: " % path) and
          "more than 10000 YAML nodes" in r.err and
          "--max-nodes" in r.err, "the budget given is the one applied", r)


def honest_file(path, target):
    """Writes an honest file (no anchors, no aliases) of about target
    bytes: 20,000 one-case scenes, then scenes with long `values:` lists.
    It has millions of plain YAML nodes, far over the default budget of
    1,000,000 had plain nodes counted. Returns (scenes, cases)."""
    scenes = 0
    with open(path, "w") as f:
        for k in range(20000):
            f.write("---\nscene: s%d\nkernel: add\nargs:\n"
                    "  - {tensor: a, dtype: float32, shape: [4], init: ones}\n"
                    "  - {tensor: b, dtype: float32, shape: [4], init: ones}\n"
                    "  - {tensor: out, dtype: float32, shape: [4], "
                    "role: output}\ncases:\n  - {name: c}\n" % k)
            scenes += 1
        n = 250000
        vals = ", ".join(str(i % 1000) for i in range(n))
        while f.tell() < target:
            f.write("---\nscene: v%d\nkernel: copy\nargs:\n"
                    "  - {tensor: x, dtype: int32, shape: [%d], "
                    "init: {values: [%s]}}\n"
                    "  - {tensor: y, dtype: int32, shape: [%d], "
                    "role: output}\ncases:\n  - {name: c}\n"
                    % (scenes, n, vals, n))
            scenes += 1
    return scenes, scenes


@test
def max_nodes__big_honest_file_loads_with_defaults():
    """About 20 MB, over 5 million plain nodes: loads (the budget is for
    aliases; the size bound is --max-file-bytes, default 1 GiB)."""
    path = os.path.join(TMP, "honest.yaml")
    scenes, cases = honest_file(path, 20 << 20)
    size = os.path.getsize(path)
    check(size >= 20 << 20, "the file is at least 20 MiB (%d)" % size)
    r = Run(["check", path])
    check(r.rc == 0, "check exits 0", r)
    check(r.out.strip().endswith("ok: %d scenes, %d cases" % (scenes, cases)),
          "every scene loaded", r)
    os.unlink(path)


@test
def max_file_bytes__over_the_limit_refused_naming_the_flag():
    path = write("good.yaml", GOOD)
    size = os.path.getsize(path)
    for cmd in ("check", "list", "run"):
        r = Run([cmd, "--max-file-bytes", str(size - 1), path])
        check(r.rc == 2, "%s: exit 2" % cmd, r)
        check(r.err.strip() == "%s:1:1: error: file of %d bytes; expected at "
              "most %d bytes (raise the limit with --max-file-bytes)"
              % (path, size, size - 1), "one FILE:LINE:COL line", r)
        check(r.out == "" or cmd == "run", "%s prints no listing" % cmd, r)


@test
def max_file_bytes__at_the_limit_loads():
    path = write("good.yaml", GOOD)
    size = os.path.getsize(path)
    r = Run(["check", "--max-file-bytes", str(size), path])
    check(r.rc == 0, "a file of exactly the limit loads", r)
    r = Run(["check", "--max-file-bytes", "1K", path])
    check(r.rc == 0, "suffixes parse (1K > %d bytes)" % size, r)


@test
def max_file_bytes__in_a_scanned_directory():
    """The limit applies to each file a directory scan finds, and a file
    with an error adds nothing: the run does not start."""
    write("dir/a.yaml", GOOD)
    big = write("dir/b.yaml", GOOD + "# " + "x" * 4096 + "\n")
    r = Run(["run", "--max-file-bytes", "2K", os.path.join(TMP, "dir")])
    check(r.rc == 2, "exit 2", r)
    check(r.err.strip().startswith(big + ":1:1: error: file of ") and
          "--max-file-bytes" in r.err, "names the big file and the flag", r)


@test
def max_file_bytes__bad_value_is_a_usage_error():
    path = write("good.yaml", GOOD)
    for bad in ("x", "-1", "12Q", ""):
        r = Run(["check", "--max-file-bytes", bad, path])
        check(r.rc == 2, "%r: exit 2" % bad, r)
        check(r.err.startswith("scenetest: error: ") and
              "--max-file-bytes" in r.err, "%r: names the flag" % bad, r)


if __name__ == "__main__":
    sys.exit(main(TMP))
