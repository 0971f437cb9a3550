# SPDX-License-Identifier: MIT
"""Golden programs through the binary (docs/torch.md): `golden:
{torchscript: ...}`, `{file: ...}` and `{steps: [...]}` computed by the
torch plugin with Debian's real libtorch, printing TAP 13. Skips (a 1..0
# SKIP plan) when the plugin is not built.

Usage: test_torch_program.py SCENETEST TORCH_PLUGIN FUSED_PLUGIN SCENES_DIR

- each form passing: scenes/torch/program.yaml on the built-in kernels; a
  fused attention kernel against softmax(q @ k^T * scale) @ v in
  TorchScript and in steps, a scratch arg the program does not name; a
  polynomial (s+1)*(s+2)+s both ways; a dict that leaves an output out;
  `expected:` on an output taken over the program's result (and compared
  where the program leaves the output out);
- each failing as it should: an unknown value and an unknown schema
  argument in a step (the step's index), a wrong shape, an unknown dict
  key, an unbound parameter, a function the source lacks, an ATen error
  while the program runs, a program that writes its input, a compile error at its exact FILE:LINE:COL (run and
  check, inline and file:), golden_device: cuda (a skip with its reason
  without CUDA, a pass with it); the loader's own errors are
  test_program_load.py's;
- the whole event sequence of a TorchScript golden case (libtorch loads in
  golden, the record says torch_imported=true); one compile per source;
- check without the plugin says once that it could not compile and
  passes.
"""
import os
import re
import subprocess
import sys
import tempfile

import taptest
from taptest import Run, check, events, main, sequence, squash, test, write

taptest.EXE, TORCH, FUSED, SCENES = sys.argv[1:5]
taptest.torch_or_skip(TORCH)
TMP = tempfile.mkdtemp(prefix="scenetest-program-")
BASE = ["--no-default-plugins"]
LAZY = ["--plugin", "lazy:" + TORCH]
FUSED_P = ["--plugin", FUSED, "--platform", "fused"]
TORCH_LIB = re.compile(r"/libtorch(_cpu)?\.so[^/]*$")


def torch_has_cuda():
    """Whether golden_device: cuda can run here, asked of the machine
    rather than of the plugin under test: the plugin links a libtorch_cuda
    (a CUDA build of libtorch, such as PyTorch's wheel) and the machine
    has an NVIDIA device node."""
    r = subprocess.run(["ldd", TORCH], capture_output=True, text=True)
    return ("libtorch_cuda.so" in r.stdout and
            os.path.exists("/dev/nvidia0"))


TORCH_HAS_CUDA = torch_has_cuda()


def run(args, env=None):
    return Run(["run"] + BASE + ["--format", "tap"] + args, env=env)


def by_name(path):
    return {c["scene"] + "::" + c["case"]: c for c in events(path)}


ATTN_ARGS = """\
args:
  - {tensor: q, dtype: float32, shape: [M, D], init: {normal: [0, 1]}}
  - {tensor: k, dtype: float32, shape: [N, D], init: {normal: [0, 1]}}
  - {tensor: v, dtype: float32, shape: [N, E], init: {normal: [0, 1]}}
  - {tensor: o, dtype: float32, shape: [M, E], role: output}
  - {scalar: scale, dtype: float32, value: 0.25}
cases:
  - {name: small, params: {M: 8, N: 12, D: 16, E: 4}}
  - {name: wide, params: {M: 3, N: 40, D: 16, E: 24}}
"""

POLY_ARGS = """\
args:
  - {tensor: a, dtype: float32, shape: [N], init: {uniform: [-2, 2]}}
  - {tensor: b, dtype: float32, shape: [N], init: {uniform: [-2, 2]}}
  - {tensor: y, dtype: float32, shape: [N], role: output}
cases:
  - {name: n1000, params: {N: 1000}}
"""

MULTI = write(TMP, "multi.yaml", """\
scene: attn_script
kernel: attention
golden:
  torchscript: |
    def golden(q: Tensor, k: Tensor, v: Tensor, scale: float) -> Tensor:
        s = torch.softmax((q @ k.transpose(-1, -2)) * scale, -1)
        return s @ v
""" + ATTN_ARGS + """\
---
scene: attn_steps
kernel: attention
golden:
  steps:
    - {op: aten::transpose.int, args: {self: k, dim0: 0, dim1: 1}, out: kt}
    - {op: aten::mm, args: {self: q, mat2: kt}, out: s}
    - {op: aten::mul.Scalar, args: {self: s, other: scale}, out: s2}
    - {op: aten::softmax.int, args: {self: s2, dim: -1}, out: p}
    - {op: aten::mm, args: {self: p, mat2: v}, out: o}
""" + ATTN_ARGS + """\
---
scene: poly_script
kernel: poly
golden:
  torchscript: |
    def golden(a: Tensor, b: Tensor) -> Tensor:
        s = a + b
        return (s + 1) * (s + 2) + s
""" + POLY_ARGS + """\
---
scene: poly_steps
kernel: poly
golden:
  steps:
    - {op: aten::add.Tensor, args: {self: a, other: b}, out: s}
    - {op: aten::add.Scalar, args: {self: s, other: 1}, out: s1}
    - {op: aten::add.Scalar, args: {self: s, other: 2}, out: s2}
    - {op: aten::mul.Tensor, args: {self: s1, other: s2}, out: f}
    - {op: aten::add.Tensor, args: {self: f, other: s}, out: g}
  returns: {y: g}
""" + POLY_ARGS + """\
---
# List[int] from the ints form; `tiles`, a config scalar of the kernel,
# and `ws`, a scratch tensor, are not named by the program: not passed.
scene: poly_ints
kernel: poly
golden:
  torchscript: |
    def golden(a: Tensor, b: Tensor, shape: List[int]) -> Tensor:
        s = (a + b).reshape(shape)
        return ((s + 1) * (s + 2) + s).reshape([-1])
args:
  - {tensor: a, dtype: float32, shape: [N], init: {uniform: [-2, 2]}}
  - {tensor: b, dtype: float32, shape: [N], init: {uniform: [-2, 2]}}
  - {tensor: y, dtype: float32, shape: [N], role: output}
  - {tensor: ws, dtype: float32, shape: [N], role: output, compare: false}
  - {scalar: shape, ints: [10, 100]}
  - {scalar: tiles, dtype: int32, value: 4}
cases:
  - {name: n1000, params: {N: 1000}}
""")


@test
def multi_op_programs_pass_against_fused_kernels():
    ev = os.path.join(TMP, "multi.jsonl")
    r = run(LAZY + FUSED_P + ["--events", ev, MULTI])
    check(r.rc == 0 and "not ok" not in r.out, "all pass", r)
    got = by_name(ev)
    check(sorted(got) == ["attn_script::small", "attn_script::wide",
                          "attn_steps::small", "attn_steps::wide",
                          "poly_ints::n1000", "poly_script::n1000",
                          "poly_steps::n1000"],
          "cases %s" % sorted(got), r)
    check(all(c["status"] == "pass" for c in got.values()), "pass", r)


@test
def a_wrong_kernel_fails_against_the_program():
    # The same polynomial program against the fused attention kernel's
    # sibling: poly's golden with a kernel that computes something else
    # (add) must fail in compare, or the passes above prove nothing.
    path = write(TMP, "wrong.yaml", """\
scene: poly_wrong
kernel: add
golden:
  torchscript: |
    def golden(a: Tensor, b: Tensor) -> Tensor:
        s = a + b
        return (s + 1) * (s + 2) + s
""" + POLY_ARGS)
    ev = os.path.join(TMP, "wrong.jsonl")
    r = run(LAZY + ["--events", ev, path])
    (case,) = events(ev)
    check(r.rc == 1 and case["status"] == "fail" and
          sequence(case)[-1] == "compare", "fails in compare", r)


@test
def example_scenes_pass():
    path = os.path.join(SCENES, "torch", "program.yaml")
    for platform in ("cpu", "threads"):
        r = run(LAZY + ["--platform", platform, path])
        check(r.rc == 0 and "not ok" not in r.out and "SKIP" not in r.out,
              platform, r)
        check(len(re.findall(r"^ok ", r.out, re.M)) >= 6, "cases", r)


@test
def torchscript_golden_event_sequence():
    path = write(TMP, "seq.yaml", """\
scene: seq
kernel: add
golden:
  torchscript: |
    def golden(a: Tensor, b: Tensor) -> Tensor:
        return a + b
args:
  - {tensor: a, dtype: float32, shape: [N], init: {normal: [0, 1]}}
  - {tensor: b, dtype: float32, shape: [N], init: {normal: [0, 1]}}
  - {tensor: y, dtype: float32, shape: [N], role: output}
cases:
  - {name: one, params: {N: 100}}
  - {name: two, params: {N: 7}}
""")
    ev = os.path.join(TMP, "seq.jsonl")
    # --golden-platform does not apply to a program: torch computes it.
    r = run(LAZY + ["--golden-platform", "reference", "--events", ev, path])
    check(r.rc == 0, "rc", r)
    first, second = events(ev)
    check(squash(sequence(first)) == ["args", "golden", "load:golden",
                                      "record", "run", "compare"],
          "sequence %s" % squash(sequence(first)), r)
    golden = next(e for e in first["events"] if e["name"] == "golden")
    check(any(TORCH_LIB.search(o) for o in golden["loaded"]),
          "libtorch in golden", r)
    args = next(e for e in first["events"] if e["name"] == "args")
    check(args["loaded"] == [], "args loaded nothing", r)
    check(sequence(second) == ["args", "golden", "record", "run", "compare"],
          "second %s" % sequence(second), r)
    lines = [ln for ln in r.err.splitlines()
             if "[TIMING] torch_backend_autoload" in ln]
    check(len(lines) == 1 and "torch_imported=true" in lines[0],
          "record %s" % lines, r)
    check(first["record_stale"] is False, "fresh", r)


@test
def one_compile_per_source_per_process():
    # Four cases of two scenes sharing one source, and a third scene with
    # another: two compiles in the one process (-j 1, one child).
    body = """\
kernel: add
golden:
  torchscript: |
    def golden(a: Tensor, b: Tensor) -> Tensor:
        return a + b
""" + TWO_IN.replace("  - {name: c}\n", "  - {name: c}\n  - {name: d}\n")
    other = body.replace("return a + b", "return b + a")
    path = write(TMP, "once.yaml", "scene: o1\n" + body + "---\nscene: o2\n" +
                 body + "---\nscene: o3\n" + other)
    r = run(LAZY + ["-j", "1", "--log-level", "debug", path])
    compiles = [ln for ln in r.err.splitlines()
                if "torch: compiled a TorchScript program" in ln]
    check(r.rc == 0 and len(compiles) == 2, "compiles %s" % compiles, r)


@test
def dict_return_leaves_an_output_uncompared():
    path = write(TMP, "dict.yaml", """\
scene: d
kernel: add
golden:
  torchscript: |
    def golden(a: Tensor, b: Tensor) -> Dict[str, Tensor]:
        return {"y": a + b}
args:
  - {tensor: a, dtype: float32, shape: [4], init: {normal: [0, 1]}}
  - {tensor: b, dtype: float32, shape: [4], init: {normal: [0, 1]}}
  - {tensor: y, dtype: float32, shape: [4], role: output}
cases:
  - {name: c}
""")
    r = run(LAZY + [path])
    check(r.rc == 0 and "ok 1 - d::c" in r.out, "dict binds by name", r)


# `expected:` on an output against a golden program: the kernel,
# aten::aminmax on self [[1, 5, 2], [4, 0, 3]] along dim 0, gives
# lo = [1, 0, 2] and hi = [4, 5, 3]; hi has no `expected:`, so the program
# runs (docs/scene-format.md, expected).
def minmax(name, program, lo):
    return """\
scene: %s
kernel: aten::aminmax
golden:
  torchscript: |
    def golden(self: Tensor, dim: int) -> %s
args:
  - {tensor: self, dtype: float32, shape: [2, 3],
     init: {values: [1, 5, 2, 4, 0, 3]}}
  - {tensor: lo, dtype: float32, shape: [3], role: output,
     expected: {values: %s}}
  - {tensor: hi, dtype: float32, shape: [3], role: output}
  - {scalar: dim, dtype: int64, value: 0}
cases:
  - {name: c}
""" % (name, program, lo)


TUPLE = """Tuple[Tensor, Tensor]:
        return torch.amin(self, dim)%s, torch.amax(self, dim)"""
DICT = """Dict[str, Tensor]:
        return {"hi": torch.amax(self, dim)}"""


@test
def expected_wins_over_the_program():
    # The program's lo differs from expected (amin + 1) and the kernel
    # matches expected: pass. The program's lo is right and expected is
    # not: fail on lo. A dict that leaves lo out: lo is still compared,
    # against expected (right: pass; wrong: fail).
    path = write(TMP, "expected.yaml", "---\n".join([
        minmax("off_program", TUPLE % " + 1.0", "[1, 0, 2]"),
        minmax("off_expected", TUPLE % "", "[9, 0, 2]"),
        minmax("left_out", DICT, "[1, 0, 2]"),
        minmax("left_out_wrong", DICT, "[1, 0, 9]")]))
    ev = os.path.join(TMP, "expected.jsonl")
    r = run(LAZY + ["--platform", "torch", "--events", ev, path])
    check(r.rc == 1, "exit 1", r)
    got = {c["scene"]: c for c in events(ev)}
    status = {name: c["status"] for name, c in got.items()}
    check(status == {"off_program": "pass", "off_expected": "fail",
                     "left_out": "pass", "left_out_wrong": "fail"},
          "statuses %s" % status, r)
    for name, first in (("off_expected", "[0]: actual 1, expected 9"),
                        ("left_out_wrong", "[2]: actual 2, expected 9")):
        check(got[name]["message"].startswith(
            "tensor 'lo': 1 of 3 elements differ; first at " + first),
            "%s: %s" % (name, got[name]["message"]), r)
        check(sequence(got[name])[-1] == "compare", name + ": compare", r)


# Each mistake: (scene text, status, message start or regex).
TWO_IN = """\
args:
  - {tensor: a, dtype: float32, shape: [4, 2], init: {normal: [0, 1]}}
  - {tensor: b, dtype: float32, shape: [4, 2], init: {normal: [0, 1]}}
  - {tensor: y, dtype: float32, shape: [4, 2], role: output}
cases:
  - {name: c}
"""


def script(body, extra=""):
    return ("kernel: add\n%sgolden:\n  torchscript: |\n" % extra +
            "".join("    " + ln + "\n" for ln in body.splitlines()) + TWO_IN)


MISTAKES = {
    "step_unknown_value": ("""\
kernel: add
golden:
  steps:
    - {op: aten::add.Tensor, args: {self: a, other: b}, out: s}
    - {op: aten::mul.Tensor, args: {self: s, other: nope}, out: y}
""" + TWO_IN, "error",
        "golden: {F}:6:7: steps[1]: argument 'other' names 'nope', which is "
        "neither an arg of the scene nor the out of an earlier step"),
    "step_unknown_argument": ("""\
kernel: add
golden:
  steps:
    - {op: aten::add.Tensor, args: {self: a, other: b, beta: 2}, out: y}
""" + TWO_IN, "error",
        "golden: {F}:5:7: steps[0]: 'beta' is not an argument of the schema "
        "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> "
        "Tensor"),
    "wrong_shape": (script("def golden(a: Tensor, b: Tensor) -> Tensor:\n"
                           "    return (a + b).t()"), "error",
                    "golden: output 'y' has shape [4, 2] but return 0 of the "
                    "program has shape [2, 4]"),
    "unknown_dict_key": (script(
        "def golden(a: Tensor, b: Tensor) -> Dict[str, Tensor]:\n"
        "    return {'y': a + b, 'z': a}"), "error",
        "golden: the program returns key 'z', which is not an output or "
        "inout of the scene (y)"),
    "unbound_parameter": (script(
        "def golden(a: Tensor, b: Tensor, c: Tensor) -> Tensor:\n"
        "    return a + b + c"), "error",
        "golden: parameter 'c' (Tensor) of golden is unbound: no arg of the "
        "scene is named 'c', and it has no default"),
    "default_parameter": (script(
        "def golden(a: Tensor, b: Tensor, alpha: float = 1.0) -> Tensor:\n"
        "    return a + b * alpha"), "pass", None),
    "converts_dtype": (script("def golden(a: Tensor, b: Tensor) -> Tensor:\n"
                              "    return a.double() + b.double()"), "pass",
                       None),
    "tuple_of_one": (script("def golden(a: Tensor, b: Tensor) -> "
                            "Tuple[Tensor]:\n    return (a + b,)"), "pass",
                     None),
    "tuple_too_long": (script("def golden(a: Tensor, b: Tensor) -> "
                              "Tuple[Tensor, Tensor]:\n    return (a + b, a)"),
                       "error",
                       "golden: the program returns 2 values but the scene "
                       "has 1 outputs and inouts (y), bound in order"),
    "runtime_error": (script("def golden(a: Tensor, b: Tensor) -> Tensor:\n"
                             "    return a @ b"), "error",
                      "golden: TorchScript: mat1 and mat2 shapes cannot be "
                      "multiplied (4x2 and 4x2)"),
    "missing_function": (script("def other(a: Tensor) -> Tensor:\n"
                                "    return a"), "error",
                         "golden: function 'golden' is not defined by the "
                         "program (it defines: other)"),
    "writes_input": (script("def golden(a: Tensor, b: Tensor) -> Tensor:\n"
                            "    a.add_(b)\n"
                            "    return a"), "error",
                     "golden: the program wrote its input 'a'"),
    "compile_error": (script("def golden(a: Tensor, b: Tensor) -> Tensor:\n"
                             "    s = a + b\n"
                             "    return undefined_thing(s)"), "error",
                      "golden: {F}:7:16: TorchScript: undefined value "
                      "undefined_thing"),
    "golden_device_cuda": (script("def golden(a: Tensor, b: Tensor) -> "
                                  "Tensor:\n    return a + b",
                                  "golden_device: cuda\n"),
                           *(("pass", None) if TORCH_HAS_CUDA else
                             ("skip", "golden_device: cuda, but libtorch "))),
}


@test
def mistakes_are_case_errors_with_their_place():
    names = sorted(MISTAKES)
    path = os.path.join(TMP, "mistakes")
    os.makedirs(path, exist_ok=True)
    for name in names:
        write(path, name + ".yaml", "scene: %s\n%s" % (name, MISTAKES[name][0]))
    ev = os.path.join(TMP, "mistakes.jsonl")
    r = run(LAZY + ["--events", ev, path])
    check(r.rc == 1, "exit 1", r)
    got = {c["scene"]: c for c in events(ev)}
    check(sorted(got) == names, "cases %s" % sorted(got), r)
    for name in names:
        text, status, message = MISTAKES[name]
        case = got[name]
        check(case["status"] == status,
              "%s: %s, expected %s (%s)" % (name, case["status"], status,
                                            case.get("message")), r)
        if message is None:
            continue
        want = message.replace("{F}", os.path.join(path, name + ".yaml"))
        check((case.get("message") or "").startswith(want),
              "%s: message\n  got:  %s\n  want: %s..." % (
                  name, case.get("message"), want), r)
        if status == "error":
            phases = [p for p in sequence(case) if not p.startswith("load")]
            check(phases == ["args", "golden"], name + ": in golden", r)


@test
def compile_error_in_a_file_program():
    d = os.path.join(TMP, "fileprog")
    os.makedirs(os.path.join(d, "goldens"), exist_ok=True)
    write(d, "goldens/bad.py", "def golden(a: Tensor, b: Tensor) -> Tensor:\n"
          "    return a +* b\n")
    path = write(d, "f.yaml", "scene: f\nkernel: add\ngolden: {file: "
                 "goldens/bad.py}\n" + TWO_IN)
    ev = os.path.join(TMP, "f.jsonl")
    r = run(LAZY + ["--events", ev, path])
    (case,) = events(ev)
    want = "golden: %s:2:" % os.path.join(d, "goldens", "bad.py")
    check(case["status"] == "error" and case["message"].startswith(want),
          "message %s" % case["message"], r)
    # A file outside the scene's directory is a load error.
    out = write(d, "out.yaml", "scene: o\nkernel: add\ngolden: {file: "
                "../multi.yaml}\n" + TWO_IN)
    r = Run(["check"] + BASE + LAZY + [out])
    check(r.rc == 2 and "%s:3:16: error: file '../multi.yaml' is outside "
          "the scene's directory" % out in r.err, "containment", r)


@test
def check_compiles_programs_when_the_plugin_is_given():
    good = write(TMP, "good.yaml", "scene: g\n" + MISTAKES["default_parameter"][0])
    bad = os.path.join(TMP, "mistakes", "compile_error.yaml")
    step = os.path.join(TMP, "mistakes", "step_unknown_argument.yaml")
    r = Run(["check"] + BASE + LAZY + [good, bad, step])
    check(r.rc == 2, "exit 2", r)
    lines = [ln for ln in r.err.splitlines() if ": error: " in ln]
    check(lines == [
        "%s:7:16: error: golden program: TorchScript: undefined value "
        "undefined_thing" % bad,
        "%s:5:7: error: golden program: steps[0]: 'beta' is not an argument "
        "of the schema aten::add.Tensor(Tensor self, Tensor other, *, Scalar "
        "alpha=1) -> Tensor" % step], "errors %s" % lines, r)
    r = Run(["check"] + BASE + LAZY + [good])
    check(r.rc == 0, "a good program checks", r)
    # Without the plugin: once, and no failure.
    r = Run(["check"] + BASE + [good, bad, step])
    notes = [ln for ln in r.err.splitlines() if "not compiled" in ln]
    check(r.rc == 0 and notes == [
        "scenetest: note: 3 golden program(s) not compiled: the torch plugin "
        "is not loaded (give --plugin PATH/scenetest_torch.so; "
        "docs/torch.md)"], "uncompiled note %s" % notes, r)


sys.exit(main(TMP))
