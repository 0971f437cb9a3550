# SPDX-License-Identifier: MIT
"""The defects an attack on the harness found (issue 13), each reproduced
through the binary and pinned by a test named after its D-number, printing
TAP 13. docs/reliability.md lists them with the promise each one keeps.

Usage: test_hardening.py PATH/TO/scenetest
"""

import os
import sys
import tempfile

EXE = os.path.abspath(sys.argv[1])
TMP = tempfile.mkdtemp(prefix="scenetest-hardening-")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import taptest  # noqa: E402  (after sys.path)
from taptest import Run, check, main, test  # noqa: E402

taptest.EXE = EXE

GOOD = """\
scene: vadd
kernel: add
args:
  - {tensor: a, dtype: float32, shape: [N], init: {uniform: [-1, 1]}}
  - {tensor: b, dtype: float32, shape: [N], init: {fill: 3.0}}
  - {tensor: out, dtype: float32, shape: [N], role: output}
cases:
  - name: small
    params: {N: 16}
"""


def write(name, text):
    return taptest.write(TMP, name, text)


@test
def d3__fifo_scene_refused_without_blocking():
    """A FIFO named as a scene used to block forever in open()."""
    fifo = os.path.join(TMP, "d3", "f.yaml")
    os.makedirs(os.path.dirname(fifo), exist_ok=True)
    os.mkfifo(fifo)
    for cmd in ("check", "list", "run"):
        r = Run([cmd, fifo])
        check(r.rc == 2, "%s of a FIFO exits 2" % cmd, r)
        check(r.err.strip() == "scenetest: error: cannot read '%s': it is a "
              "FIFO; expected a regular file" % fifo, "one clear line", r)


@test
def d3__dev_zero_refused_before_reading():
    """/dev/zero used to be read until memory ran out."""
    r = Run(["check", "/dev/zero"])
    check(r.rc == 2, "exit 2", r)
    check("it is a character device; expected a regular file" in r.err,
          "names what it is", r)


@test
def d3__symlink_to_dev_zero_in_scanned_directory():
    d = os.path.join(TMP, "d3scan")
    os.makedirs(d, exist_ok=True)
    write("d3scan/good.yaml", GOOD)
    os.symlink("/dev/zero", os.path.join(d, "z.yaml"))
    r = Run(["check", d])
    check(r.rc == 2, "exit 2: nothing runs when a file is bad", r)
    check("z.yaml': it is a character device" in r.err, "names the link", r)


@test
def d12__too_deep_directory_is_an_error_not_silence():
    """A scene 70 levels deep used to be dropped: "0 scenes", exit 0."""
    top = os.path.join(TMP, "d12")
    deep = os.path.join(top, *(["d"] * 70))
    os.makedirs(deep, exist_ok=True)
    write(os.path.join(deep, "s.yaml"), GOOD)
    for cmd in ("check", "run"):
        r = Run([cmd, top])
        check(r.rc == 2, "%s exits 2" % cmd, r)
        check("directories nest deeper than 64 levels" in r.err,
              "says why", r)
    # 60 levels is within the cap: the scene is found and runs.
    ok = os.path.join(TMP, "d12ok")
    os.makedirs(os.path.join(ok, *(["d"] * 60)), exist_ok=True)
    write(os.path.join(ok, *(["d"] * 60), "s.yaml"), GOOD)
    r = Run(["list", ok])
    check(r.rc == 0 and r.out == "vadd::small\n", "found at 60 levels", r)


if __name__ == "__main__":
    sys.exit(main(TMP))
