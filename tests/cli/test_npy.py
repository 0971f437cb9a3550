# SPDX-License-Identifier: MIT
"""--dump-on-fail's .npy files read back by numpy (docs/cli.md#options), TAP 13.

Usage: test_npy.py PATH/TO/scenetest   (run with /usr/bin/python3, which
has Debian's python3-numpy)

A case per dtype fails on purpose (kernel copy, golden transpose of a
non-symmetric 2x2 matrix); the files the report names must load with
numpy.load with the right dtype, shape and values: the input as it was
before the run, the actual output (the copy) and the expected one (the
transpose); bfloat16 and FP8 as exact float32 in NAME.bf16-as-f32.npy,
NAME.float8_e4m3fn-as-f32.npy, NAME.float8_e5m2-as-f32.npy; uint16/32/64
as numpy's.
"""

import os
import re
import sys
import tempfile

try:
    import numpy as np
except ImportError:  # a machine without Debian's python3-numpy
    print("TAP version 13")
    print("1..0 # SKIP numpy is not installed")
    sys.exit(0)

EXE = os.path.abspath(sys.argv[1])
TMP = tempfile.mkdtemp(prefix="scenetest-npy-")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import taptest  # noqa: E402
from taptest import Run, check, main, test  # noqa: E402

taptest.EXE = EXE

DTYPES = {"float32": np.float32, "float64": np.float64,
          "float16": np.float16, "bfloat16": np.float32, "int8": np.int8,
          "int16": np.int16, "int32": np.int32, "int64": np.int64,
          "uint8": np.uint8, "bool": np.bool_, "uint16": np.uint16,
          "uint32": np.uint32, "uint64": np.uint64,
          "float8_e4m3fn": np.float32, "float8_e5m2": np.float32}
# Dtypes numpy lacks: written as exact float32, the file name says so.
AS_F32 = {"bfloat16": ".bf16-as-f32.npy",
          "float8_e4m3fn": ".float8_e4m3fn-as-f32.npy",
          "float8_e5m2": ".float8_e5m2-as-f32.npy"}

SCENE = taptest.write(TMP, "dump.yaml", """\
scene: dump
kernel: copy
golden: transpose
args:
  - {tensor: x, dtype: DT, shape: [2, 2], init: {values: [0, 1, 0, 0]}}
  - {tensor: y, dtype: DT, shape: [2, 2], role: output}
cases:
  - name: c
    matrix: {DT: [%s]}
""" % ", ".join(DTYPES))


@test
def npy_files_load_in_numpy():
    out = os.path.join(TMP, "out")
    r = Run(["run", "--format", "tap", "--dump-on-fail", out, SCENE])
    check(r.rc == 1 and r.out.count("not ok ") == len(DTYPES),
          "every case fails", r)
    named = re.findall(r"dumped: ([^\\\"]*)", r.out)
    check(len(named) == len(DTYPES), "every report names its files", r)
    for dt, npdt in DTYPES.items():
        d = os.path.join(out, "dump", "c[DT=%s]" % dt)
        suffix = AS_F32.get(dt, ".npy")
        files = {k: os.path.join(d, "%s%s" % (k, suffix))
                 for k in ("x.input", "y.actual", "y.expected")}
        line = [n for n in named if "c[DT=%s]" % dt in n]
        check(len(line) == 1 and all(f in line[0] for f in files.values()),
              "%s: the report names %r" % (dt, sorted(files.values())), r)
        want = {"x.input": [[0, 1], [0, 0]], "y.actual": [[0, 1], [0, 0]],
                "y.expected": [[0, 0], [1, 0]]}
        for k, path in files.items():
            a = np.load(path)
            check(a.dtype == np.dtype(npdt) and a.shape == (2, 2),
                  "%s %s: dtype %s shape %r" % (dt, k, a.dtype, a.shape))
            check(np.array_equal(a, np.array(want[k], dtype=npdt)),
                  "%s %s: values %r" % (dt, k, a.tolist()))


@test
def bfloat16_values_are_exact():
    out = os.path.join(TMP, "bf")
    scene = taptest.write(TMP, "bf.yaml", """\
scene: bf
kernel: copy
golden: transpose
args:
  - {tensor: x, dtype: bfloat16, shape: [2, 2],
     init: {values: [1.5, 3.0e38, -0.1, 0]}}
  - {tensor: y, dtype: bfloat16, shape: [2, 2], role: output}
cases: [{name: c}]
""")
    r = Run(["run", "--format", "tap", "--dump-on-fail", out, scene])
    x = np.load(os.path.join(out, "bf", "c", "x.input.bf16-as-f32.npy"))
    # Each value rounds to the bfloat16 nearest it (3.0e38 to 0x7F62,
    # -0.1 to 0xBDCD), which float32 holds exactly: those bits << 16.
    bits = np.array([[0x3FC00000, 0x7F620000], [0xBDCD0000, 0]], np.uint32)
    want = bits.view(np.float32)
    check(r.rc == 1, "it fails", r)
    check(x.dtype == np.float32 and np.array_equal(x, want),
          "bfloat16 as exact float32: %r" % x.tolist(), r)


if __name__ == "__main__":
    sys.exit(main(TMP))
