# SPDX-License-Identifier: MIT
"""The golden program keys of the loader (docs/torch.md, scene-format.md):
every load error of `golden:` as a mapping (torchscript, file, function,
steps, returns) and of golden_device, each at its exact FILE:LINE:COL, and
the note `check` gives once when it cannot compile programs. No libtorch
needed: these are the loader's. Prints TAP 13.

Usage: test_program_load.py SCENETEST
"""
import os
import sys
import tempfile

import taptest
from taptest import Run, check, main, test, write

taptest.EXE = sys.argv[1]
TMP = tempfile.mkdtemp(prefix="scenetest-program-load-")
BASE = ["--no-default-plugins"]

TWO_IN = """\
args:
  - {tensor: a, dtype: float32, shape: [4], init: {normal: [0, 1]}}
  - {tensor: b, dtype: float32, shape: [4], init: {normal: [0, 1]}}
  - {tensor: y, dtype: float32, shape: [4], role: output}
cases:
  - {name: c}
"""
RELU = "{op: aten::relu, args: {self: a}, out: y}"
# One scene per mistake, in this order in one file.
MISTAKES = [
    "golden: {function: f}\n",
    "golden:\n  torchscript: 'def golden(a: Tensor) -> Tensor: return a'\n"
    "  steps: [%s]\n" % RELU,
    "golden:\n  steps: [%s]\n  function: f\n" % RELU,
    "golden:\n  torchscript: 'def golden(a: Tensor) -> Tensor: return a'\n"
    "  returns: {y: a}\n",
    "golden: {torchscript: [1]}\n",
    "golden: {file: nope.py}\n",
    "golden: {file: big.py}\n",
    "golden: {file: nul.py}\n",
    "golden: {file: ../outside.py}\n",
    "golden: {steps: []}\n",
    "golden: {steps: [3]}\n",
    "golden: {steps: [{op: add}]}\n",
    "golden: {steps: [{args: {}}]}\n",
    "golden: {steps: [{op: aten::relu, args: [1]}]}\n",
    "golden: {steps: [{op: aten::relu, args: {self: {a: 1}}}]}\n",
    "golden: {steps: [{op: aten::view, args: {size: [1, x]}}]}\n",
    "golden: {steps: [{op: aten::relu, args: {self: a}, out: 3}]}\n",
    "golden: {steps: [%s], returns: [y]}\n" % RELU,
    "golden: {steps: [%s], returns: {y: 1}}\n" % RELU,
    "golden: {steps: [%s], unknown: 1}\n" % RELU,
    "golden_device: cpu\n",
    "golden: {steps: [%s]}\ngolden_device: gpu\n" % RELU,
    "golden: {steps: [%s]}\ngolden_platform: cpu\n" % RELU,
]
EXPECTED = [
    '3:9: error: no program in golden; expected exactly one of torchscript, file and steps',
    '14:3: error: more than one program in golden; expected exactly one of torchscript, file and steps',
    "27:3: error: 'function' names a TorchScript function; expected it with torchscript or file, not steps",
    "39:3: error: 'returns' maps outputs to the values of steps; expected it with steps (a TorchScript function returns them)",
    "49:23: error: expected TorchScript source for 'torchscript', got a list",
    "59:16: error: cannot open file 'nope.py': No such file or directory",
    "69:16: error: file 'big.py' is larger than 1 MiB; expected TorchScript source of at most 1 MiB",
    "79:16: error: file 'nul.py' is binary (a NUL byte); expected TorchScript source of at most 1 MiB",
    "89:16: error: file '../outside.py' is outside the scene's directory; expected a path inside it",
    "99:17: error: expected a non-empty list of steps for 'steps', got a list",
    "109:18: error: expected a step mapping {op: aten::NAME, args: {...}, out: NAME} for 'steps', got 3",
    "119:23: error: expected an ATen operator (aten::NAME[.OVERLOAD]) for 'op', got 'add'",
    "129:18: error: missing required key 'op' in step",
    "139:41: error: expected a mapping of schema argument names to values for 'args', got a list",
    "149:48: error: expected a value name, a number, true or false, a string or a list of integers for 'args', got a mapping",
    "159:52: error: expected an integer for 'args', got 'x'",
    "169:57: error: expected an identifier ([A-Za-z_][A-Za-z0-9_]*, at most 128 characters) for 'out', got 3",
    "179:71: error: expected a mapping of output names to value names for 'returns', got a list",
    "189:75: error: expected an identifier ([A-Za-z_][A-Za-z0-9_]*, at most 128 characters) for 'returns', got 1",
    "199:62: error: unknown key 'unknown' in golden; expected one of: torchscript, file, function, steps, returns",
    "209:16: error: 'golden_device' says where a golden program runs; expected it only with golden: {torchscript|file|steps: ...}",
    "220:16: error: expected cpu or cuda for 'golden_device', got 'gpu'",
    "231:18: error: golden_platform 'cpu' contradicts the golden program, which torch computes; expected torch or no golden_platform",
    "246:12: error: case 'c' sets 'golden_device', which says where a golden program runs; expected it only with golden: {torchscript|file|steps: ...}",
    "256:12: error: case 'c': golden_platform 'reference' contradicts the golden program, which torch computes; expected torch or no golden_platform"
]


def scenes():
    d = os.path.join(TMP, "d")
    os.makedirs(d, exist_ok=True)
    write(d, "big.py", "#" * (1 << 20) + "\n")
    with open(os.path.join(d, "nul.py"), "wb") as f:
        f.write(b"def golden(a):\n\0\n")
    write(TMP, "outside.py", "x\n")
    text = "---\n".join("scene: s%d\nkernel: add\n%s%s" % (i, s, TWO_IN)
                        for i, s in enumerate(MISTAKES))
    text += "---\nscene: cases\nkernel: add\n" + TWO_IN.replace(
        "  - {name: c}\n", "  - {name: c, golden_device: cuda}\n")
    text += ("---\nscene: cases2\nkernel: add\ngolden: {steps: [%s]}\n" %
             RELU) + TWO_IN.replace(
        "  - {name: c}\n", "  - {name: c, golden_platform: reference}\n")
    return write(d, "all.yaml", text)


@test
def every_golden_program_load_error_at_its_place():
    path = scenes()
    r = Run(["check"] + BASE + [path])
    got = [ln for ln in r.err.splitlines() if ": error: " in ln]
    want = ["%s:%s" % (path, e) for e in EXPECTED]
    check(r.rc == 2, "exit 2", r)
    for g, w in zip(got, want):
        check(g == w, "\n  got:  %s\n  want: %s" % (g, w), r)
    check(len(got) == len(want), "%d errors, expected %d" % (len(got),
                                                            len(want)), r)


@test
def check_without_torch_notes_once_and_passes():
    path = write(TMP, "good.yaml", """\
scene: g
kernel: add
golden:
  steps:
    - {op: aten::add.Tensor, args: {self: a, other: b}, out: y}
---
scene: h
kernel: add
golden:
  torchscript: |
    def golden(a: Tensor, b: Tensor) -> Tensor:
        return a + b
golden_device: cuda
""".replace("---", TWO_IN + "---") + TWO_IN)
    r = Run(["check"] + BASE + [path])
    notes = [ln for ln in r.err.splitlines() if "note" in ln]
    check(r.rc == 0 and notes == [
        "scenetest: note: 2 golden program(s) not compiled: the torch plugin "
        "is not loaded (give --plugin PATH/scenetest_torch.so; "
        "docs/torch.md)"], "one note %s" % notes, r)
    r = Run(["list"] + BASE + [path])
    check(r.rc == 0 and "not compiled" not in r.err, "list says nothing", r)


@test
def run_without_torch_skips_naming_the_plugin():
    # A program's golden backend is torch: without the plugin its cases
    # are skipped, the reason saying how to get it, and the run ends with
    # one summary warning (docs/cli.md).
    path = write(TMP, "run.yaml", """\
scene: r
kernel: add
golden:
  steps:
    - {op: aten::add.Tensor, args: {self: a, other: b}, out: y}
""" + TWO_IN)
    r = Run(["run"] + BASE + ["--format", "tap", path])
    check(r.rc == 0 and "ok 1 - r::c # SKIP not available: the torch plugin "
          "is not loaded; pass --plugin lazy:PATH/scenetest_torch.so" in r.out,
          "a skip naming the plugin", r)
    check(r.err.count("[WARNING] 1 case skipped: the torch plugin is not "
                      "loaded") == 1, "one summary warning", r)


sys.exit(main(TMP))
