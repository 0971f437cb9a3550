# SPDX-License-Identifier: MIT
"""The torch plugin through the binary, with Debian's real libtorch (
docs/scene-format.md#phases, docs/measuring.md#the-autoload-record, docs/torch.md#aten-ops; docs/torch.md), printing TAP 13. Skips (a 1..0 # SKIP plan) when the
plugin is not built.

Usage: test_torch.py SCENETEST TORCH_PLUGIN LATE_LOAD_PLUGIN SCENES_DIR

- scenes/torch on cpu and threads against the torch golden, the torch
  platform against the reference golden, and which cases this libtorch
  declines: asked of it (its float16 CPU kernels, its schemas, its
  version), and checked against the dtype table of docs/torch.md on 1.13;
- the record and the whole event sequence: torch golden (libtorch in the
  golden event), torch platform (in args), --skip-golden (nothing
  loaded), a kernel that loads libtorch during run (stale; --strict-record
  error), --isolate (each child's record), level 3 (the workers load it
  in rehost; the harness's record is unaffected);
- aten:: binding errors, each naming the schema; an aten:: kernel binds
  all but its scratch args;
- the new dtypes (FP8, uint16/32/64) declined where libtorch lacks them;
  mixed precision against the torch golden (one rounding);
- TORCH_DEVICE_BACKEND_AUTOLOAD with real libtorch loaded;
- default plugin directories, --no-default-plugins, --platform torch
  without the plugin;
- where torch and the reference differ, pinned: float32 reduction order,
  bfloat16 matmul accumulation (1.13's rule by CPU flags, else asked of
  libtorch); integer wrap agrees.
"""
import os
import re
import shutil
import sys
import tempfile

import taptest
from taptest import Run, check, events, main, sequence, squash, test, write

taptest.EXE, TORCH, LATE, SCENES = sys.argv[1:5]
taptest.torch_or_skip(TORCH)
TMP = tempfile.mkdtemp(prefix="scenetest-torch-")
TORCH_SCENES = os.path.join(SCENES, "torch")
BASE = ["--no-default-plugins", "--format", "tap"]
LAZY = ["--plugin", "lazy:" + TORCH]
TORCH_LIB = re.compile(r"/libtorch(_cpu)?\.so[^/]*$")

GOLDEN = write(TMP, "golden.yaml", taptest.vadd_scene("tg", """\
  - {name: one, params: {N: 100}}
  - {name: two, params: {N: 7}}
""", keys="golden_platform: torch\n"))

PLAIN = write(TMP, "plain.yaml",
              taptest.vadd_scene("tp", "  - {name: one, params: {N: 100}}\n"))


def run(args, env=None):
    return Run(["run"] + BASE + args, env=env)


def record_lines(err):
    return [line for line in err.splitlines()
            if "[TIMING] torch_backend_autoload" in line]


def field(line, name):
    m = re.search(r"\b%s=(\S+)" % name, line)
    return m.group(1) if m else None


def torch_in(objects):
    return any(TORCH_LIB.search(o) for o in objects)


def event(case, name):
    return next(e for e in case["events"] if e["name"] == name)


# ---------------------------------------------------------------- scenes

# What this libtorch supports, asked of it through the plugin (so that
# the tests hold for Debian's 1.13 and for PyTorch 2.x alike, instead of
# pinning 1.13): its version, the schemas it prints for the operators the
# binding errors name (2.x prints SymInt[] where 1.13 printed int[] for
# layer_norm), and which float16 ops of scenes/torch have a CPU kernel.
# The built-in ops of the plugin call ATen's relu, matmul and softmax: the
# same CPU kernels that aten::relu, aten::matmul and aten::softmax.int
# reach through the dispatcher.
FLOAT16_PROBES = {
    "relu": ("aten::relu", """\
  - {tensor: self, dtype: float16, shape: [8], init: {uniform: [-1, 1]}}
  - {tensor: y, dtype: float16, shape: [8], role: output}
"""),
    "matmul": ("aten::matmul", """\
  - {tensor: self, dtype: float16, shape: [4, 6], init: {uniform: [-1, 1]}}
  - {tensor: other, dtype: float16, shape: [6, 3], init: {uniform: [-1, 1]}}
  - {tensor: y, dtype: float16, shape: [4, 3], role: output}
"""),
    "softmax": ("aten::softmax.int", """\
  - {tensor: self, dtype: float16, shape: [4, 6], init: {uniform: [-1, 1]}}
  - {tensor: y, dtype: float16, shape: [4, 6], role: output}
  - {scalar: dim, dtype: int64, value: 1}
"""),
}
# For each operator a binding error names, args that bind its required
# arguments plus one the schema lacks: the error prints the schema.
SCHEMA_PROBES = {
    "aten::gelu": """\
  - {tensor: self, dtype: float32, shape: [4]}
  - {tensor: y, dtype: float32, shape: [4], role: output}
""",
    "aten::native_layer_norm": """\
  - {tensor: input, dtype: float32, shape: [2, 4]}
  - {tensor: y, dtype: float32, shape: [2, 4], role: output}
  - {scalar: normalized_shape, ints: [4]}
  - {scalar: eps, dtype: float64, value: 1.0e-5}
""",
    "aten::softmax.int": """\
  - {tensor: self, dtype: float32, shape: [2, 4]}
  - {tensor: y, dtype: float32, shape: [2, 4], role: output}
  - {scalar: dim, dtype: int64, value: 1}
""",
    "aten::layer_norm": """\
  - {tensor: input, dtype: float32, shape: [2, 4]}
  - {tensor: y, dtype: float32, shape: [2, 4], role: output}
  - {scalar: normalized_shape, ints: [4]}
""",
}
_LIBTORCH = {}


def libtorch():
    """{"version", "schemas": {op: text}, "float16": {op: bool}}, asked
    once, in one run, of the plugin and the libtorch it links."""
    if _LIBTORCH:
        return _LIBTORCH
    docs = ["scene: v\nkernel: aten::no_such_op\nskip_golden: true\nargs:\n"
            "  - {tensor: y, dtype: float32, shape: [1], role: output}\n"
            "cases:\n  - {name: c}\n"]
    for i, op in enumerate(sorted(SCHEMA_PROBES)):
        docs.append("scene: s%d\nkernel: %s\nskip_golden: true\nargs:\n%s"
                    "  - {scalar: zz_probe, dtype: int64, value: 0}\n"
                    "cases:\n  - {name: c}\n" % (i, op, SCHEMA_PROBES[op]))
    for name in sorted(FLOAT16_PROBES):
        op, args = FLOAT16_PROBES[name]
        docs.append("scene: f_%s\nkernel: %s\nskip_golden: true\nargs:\n%s"
                    "cases:\n  - {name: c}\n" % (name, op, args))
    path = write(TMP, "probe.yaml", "---\n".join(docs))
    ev = os.path.join(TMP, "probe.jsonl")
    r = run(LAZY + ["--platform", "torch", "--log-level", "warning",
                    "--events", ev, path])
    got = {c["scene"]: c for c in events(ev)}
    m = re.search(r"libtorch (\S+) has no schema", got["v"]["message"] or "")
    check(m is not None, "the plugin names its libtorch version", r)
    schemas = {}
    for i, op in enumerate(sorted(SCHEMA_PROBES)):
        m = re.search(r"scalar 'zz_probe' is not an argument of the schema "
                      r"(%s\(.*)$" % re.escape(op),
                      got["s%d" % i]["message"] or "")
        check(m is not None, "the schema of %s" % op, r)
        schemas[op] = m.group(1)
    float16 = {}
    for name in FLOAT16_PROBES:
        case = got["f_" + name]
        check(case["status"] in ("pass", "skip"), "float16 %s" % name, r)
        check(case["status"] == "pass" or "has no CPU kernel for this dtype"
              in case["message"], "float16 %s declined: %s" % (
                  name, case["message"]), r)
        float16[name] = case["status"] == "pass"
    _LIBTORCH.update(version=_version(r, got), schemas=schemas,
                     float16=float16)
    return _LIBTORCH


def _version(r, got):
    return re.search(r"libtorch (\S+) has no schema",
                     got["v"]["message"]).group(1)


def declined():
    """The cases of scenes/torch that this libtorch cannot compute: the
    float16 cases of the ops without a float16 CPU kernel."""
    return {"torch_%s::float16" % op
            for op, ok in libtorch()["float16"].items() if not ok}


@test
def libtorch_113_is_what_the_probes_say():
    # Debian 12's libtorch 1.13 (the CI machine's), pinned: none of the
    # three float16 CPU kernels, and layer_norm's normalized_shape as
    # int[]. The probes must see exactly that there, or they probe wrong.
    lt = libtorch()
    if not lt["version"].startswith("1.13"):
        return "SKIP libtorch %s is not 1.13" % lt["version"]
    check(lt["float16"] == {"relu": False, "matmul": False,
                            "softmax": False}, "float16 %s" % lt["float16"])
    check("int[] normalized_shape" in lt["schemas"]["aten::layer_norm"],
          "layer_norm %s" % lt["schemas"]["aten::layer_norm"])


def skips(out):
    return {m.group(1) for m in re.finditer(r"^ok \d+ - (\S+) # SKIP golden "
                                            r"declined: ", out, re.M)}


@test
def builtin_kernels_pass_against_torch_golden():
    for platform in ("cpu", "threads"):
        r = run(LAZY + ["--platform", platform, "--log-level", "warning",
                        TORCH_SCENES])
        check(r.rc == 0 and "not ok" not in r.out, platform, r)
        check(skips(r.out) == declined(),
              "%s: declined %s, expected %s" % (platform, skips(r.out),
                                                declined()), r)
        n = len(re.findall(r"^ok ", r.out, re.M))
        check(n >= 90, "%s: only %d cases" % (platform, n), r)


@test
def torch_platform_passes_against_reference_golden():
    # --golden-platform reference wins over the scenes' golden_platform.
    r = run(LAZY + ["--platform", "torch", "--golden-platform", "reference",
                    "--log-level", "warning",
                    os.path.join(TORCH_SCENES, "builtin.yaml"),
                    os.path.join(SCENES, "elementwise.yaml"),
                    os.path.join(SCENES, "linalg.yaml"),
                    os.path.join(SCENES, "reduce.yaml"),
                    os.path.join(SCENES, "scale_axpy.yaml")])
    check(r.rc == 0 and "not ok" not in r.out, "torch vs reference", r)
    # The kernel declines what libtorch cannot compute: a skip, not a pass.
    got = set(re.findall(r"^ok \d+ - (\S+) # SKIP libtorch \S+ has no CPU "
                         r"kernel for this dtype", r.out, re.M))
    check(got == declined(), "kernel declined %s, expected %s" % (
        got, declined()), r)


@test
def aten_scenes_pass():
    r = run(LAZY + ["--platform", "torch", "--log-level", "warning",
                    os.path.join(TORCH_SCENES, "aten.yaml")])
    check(r.rc == 0 and "not ok" not in r.out and "SKIP" not in r.out,
          "aten scenes", r)
    for name in ("aten_gelu::float32", "aten_layer_norm::rows",
                 "aten_addmm::float64", "aten_layer_norm_plain::two_dims"):
        check(re.search(r"^ok \d+ - %s$" % re.escape(name), r.out, re.M),
              name, r)


# ------------------------------------------------------------ new dtypes

NEW_DTYPES = write(TMP, "new_dtypes.yaml", """\
scene: nd
kernel: add
golden_platform: torch
args:
  - {tensor: a, dtype: T, shape: [8], init: {randint: [0, 4]}}
  - {tensor: b, dtype: T, shape: [8], init: {randint: [0, 4]}}
  - {tensor: out, dtype: T, shape: [8], role: output}
cases:
  - {name: e4m3fn, params: {T: float8_e4m3fn}}
  - {name: e5m2, params: {T: float8_e5m2}}
  - {name: u16, params: {T: uint16}}
  - {name: u32, params: {T: uint32}}
  - {name: u64, params: {T: uint64}}
""")

# The PyTorch release that brought each dtype to ATen (docs/torch.md#dtypes).
SINCE = {"e4m3fn": (2, 1), "e5m2": (2, 1), "u16": (2, 3), "u32": (2, 3),
         "u64": (2, 3)}


@test
def new_dtypes_declined_where_libtorch_lacks_them():
    # Asked of the plugin, not pinned to 1.13: a case passes, or skips
    # because this libtorch lacks the dtype (its version, in the message,
    # older than the release that added it) or an add kernel for it.
    golden = ["--platform", "cpu"]
    kernel = ["--platform", "torch", "--golden-platform", "reference"]
    for extra in (golden, kernel):
        r = run(LAZY + extra + [NEW_DTYPES])
        check(r.rc == 0 and "not ok" not in r.out, "new dtypes %s" % extra, r)
        for case, since in SINCE.items():
            m = re.search(r"^ok \d+ - nd::%s( # SKIP (.*))?$" % case, r.out,
                          re.M)
            check(m is not None, "case %s reported" % case, r)
            if m.group(1) is None:
                continue
            why = m.group(2)
            lacks = re.search(r"libtorch (\d+)\.(\d+)\S* has no dtype (\S+) ",
                              why)
            if lacks:
                have = (int(lacks.group(1)), int(lacks.group(2)))
                check(have < since, "%s: libtorch %s should have it" %
                      (case, have), r)
                check(lacks.group(3) == {"e4m3fn": "float8_e4m3fn",
                                         "e5m2": "float8_e5m2",
                                         "u16": "uint16", "u32": "uint32",
                                         "u64": "uint64"}[case], why, r)
                check(why.startswith("golden declined: ") ==
                      (extra is golden),
                      "%s: %s" % (case, why), r)
            else:
                check("has no CPU kernel" in why, "%s: %s" % (case, why), r)


MIXED = write(TMP, "mixed.yaml", """\
scene: mx_add
kernel: add
golden_platform: torch
args:
  - {tensor: a, dtype: float16, shape: [1000], init: {uniform: [-1, 1]}}
  - {tensor: b, dtype: float16, shape: [1000], init: {uniform: [-1, 1]}}
  - {tensor: out, dtype: float32, shape: [1000], role: output}
cases:
  - {name: half_in}
---
scene: mx_matmul
kernel: matmul
golden_platform: torch
args:
  - {tensor: a, dtype: bfloat16, shape: [16, 64], init: {uniform: [-1, 1]}}
  - {tensor: b, dtype: bfloat16, shape: [64, 8], init: {uniform: [-1, 1]}}
  - {tensor: c, dtype: float32, shape: [16, 8], role: output}
cases:
  - {name: bf16_in}
---
scene: mx_sum
kernel: reduce_sum
golden_platform: torch
args:
  - {tensor: x, dtype: float16, shape: [5000], init: {uniform: [-1, 1]}}
  - {tensor: out, dtype: float64, shape: [1], role: output}
cases:
  - {name: half_in}
""")


@test
def mixed_precision_torch_golden_rounds_once():
    # float16/bfloat16 in, float32/float64 out at the default tolerances:
    # the torch golden computes in double and rounds once, as the
    # reference does (computing in half and widening fails all three).
    r = run(LAZY + ["--platform", "cpu", "--log-level", "warning", MIXED])
    check(r.rc == 0 and "not ok" not in r.out and "SKIP" not in r.out,
          "mixed precision against the torch golden", r)
    for name in ("mx_add::half_in", "mx_matmul::bf16_in", "mx_sum::half_in"):
        check(re.search(r"^ok \d+ - %s$" % re.escape(name), r.out, re.M),
              name, r)


# ------------------------------------------------- records and sequences

@test
def torch_golden_loads_libtorch_in_golden():
    ev = os.path.join(TMP, "g.jsonl")
    r = run(LAZY + ["--events", ev, GOLDEN])
    check(r.rc == 0, "rc", r)
    first, second = events(ev)
    check(squash(sequence(first)) == ["args", "golden", "load:golden",
                                      "record", "run", "compare"],
          "sequence %s" % squash(sequence(first)), r)
    g = event(first, "golden")
    check(torch_in(g["loaded"]) and g["loaded"][0].endswith(
        "scenetest_torch.so"), "golden loaded %s" % g["loaded"][:3], r)
    check(event(first, "args")["loaded"] == [], "args loaded nothing", r)
    check(event(first, "record")["emitted"] is True, "emitted", r)
    # The second case finds everything loaded: no load event at all.
    check(sequence(second) == ["args", "golden", "record", "run", "compare"],
          "second %s" % sequence(second), r)
    check(event(second, "record")["emitted"] is False, "once", r)
    lines = record_lines(r.err)
    check(len(lines) == 1 and field(lines[0], "torch_imported") == "true",
          "record %s" % lines, r)
    check(first["record_stale"] is False, "fresh", r)


@test
def torch_platform_loads_libtorch_in_args():
    ev = os.path.join(TMP, "p.jsonl")
    r = run(LAZY + ["--platform", "torch", "--events", ev, PLAIN])
    check(r.rc == 0, "rc", r)
    (case,) = events(ev)
    check(squash(sequence(case)) == ["args", "load:args", "golden", "record",
                                     "run", "compare"],
          "sequence %s" % squash(sequence(case)), r)
    check(torch_in(event(case, "args")["loaded"]), "args loaded torch", r)
    lines = record_lines(r.err)
    check(len(lines) == 1 and field(lines[0], "torch_imported") == "true",
          "record %s" % lines, r)


@test
def skip_golden_leaves_libtorch_unloaded():
    ev = os.path.join(TMP, "s.jsonl")
    r = run(LAZY + ["--skip-golden", "--events", ev, GOLDEN])
    check(r.rc == 0, "rc", r)
    for case in events(ev):
        check(sequence(case) == ["args", "record", "run"],
              "sequence %s" % sequence(case), r)
        check(all(e.get("loaded", []) == [] for e in case["events"]),
              "nothing loaded", r)
    lines = record_lines(r.err)
    check(len(lines) == 1 and field(lines[0], "torch_imported") == "false",
          "record %s" % lines, r)


@test
def kernel_loading_libtorch_in_run_makes_record_stale():
    ev = os.path.join(TMP, "l.jsonl")
    env = {"ST_LATE_LOAD": TORCH}
    args = ["--plugin", LATE, "--platform", "late", "--events", ev, PLAIN]
    r = run(args, env=env)
    check(r.rc == 0, "a stale record is a warning", r)
    (case,) = events(ev)
    check(squash(sequence(case)) == ["args", "golden", "record", "run",
                                     "load:run", "compare"],
          "sequence %s" % squash(sequence(case)), r)
    check(case["record_stale"] is True and case["status"] == "pass",
          "stale", r)
    check(re.search(r"\[WARNING\] tp::one: autoload record is stale: watched "
                    r"module 'torch' \(\S+libtorch\S*\) was loaded during "
                    r"phase 'run' after the record", r.err), "warning", r)
    lines = record_lines(r.err)
    check(len(lines) == 1 and field(lines[0], "torch_imported") == "false",
          "record %s" % lines, r)
    r = run(["--strict-record"] + args, env=env)
    check(r.rc == 1, "--strict-record: exit 1", r)
    (case,) = events(ev)
    check(case["status"] == "error" and
          "autoload record is stale" in case["message"], "error", r)


@test
def isolate_each_child_records_torch():
    ev = os.path.join(TMP, "i.jsonl")
    r = run(LAZY + ["--isolate", "--events", ev, GOLDEN])
    check(r.rc == 0, "rc", r)
    cases = events(ev)
    check(len(cases) == 2 and len({c["pid"] for c in cases}) == 2,
          "two children", r)
    for case in cases:
        check(squash(sequence(case)) == ["args", "golden", "load:golden",
                                         "record", "run", "compare"],
              "sequence %s" % squash(sequence(case)), r)
        check(event(case, "record")["emitted"] is True, "each emits", r)
    lines = record_lines(r.err)
    check(len(lines) == 2 and
          all(field(x, "torch_imported") == "true" for x in lines) and
          {field(x, "pid") for x in lines} == {str(c["pid"]) for c in cases},
          "records %s" % lines, r)


@test
def level3_workers_load_libtorch_in_rehost():
    path = write(TMP, "l3.yaml", """\
scene: l3
level: 3
workers: 2
kernel: add
args:
  - {tensor: a, dtype: float32, shape: [N], init: {uniform: [-1, 1]}}
  - {tensor: b, dtype: float32, shape: [N], init: {fill: 3.0}}
  - {tensor: out, dtype: float32, shape: [N], role: output}
cases:
  - {name: one, params: {N: 1000}}
""")
    ev = os.path.join(TMP, "l3.jsonl")
    r = run(LAZY + ["--platform", "torch", "--events", ev, path])
    check(r.rc == 0, "rc", r)
    (case,) = events(ev)
    # The workers resolve the kernel while mapping the case (docs/plugins.md#the-lookup-order):
    # their objects are in the rehost event; the harness loads nothing.
    check(sequence(case) == ["args", "golden", "rehost", "record", "run",
                             "compare", "release"],
          "sequence %s" % sequence(case), r)
    rehost = event(case, "rehost")["loaded"]
    for w in (0, 1):
        mine = [o[len("worker %d: " % w):] for o in rehost
                if o.startswith("worker %d: " % w)]
        check(torch_in(mine), "worker %d loaded libtorch in rehost" % w, r)
    check(event(case, "run")["loaded"] == [], "nothing more in run", r)
    check(case["record_stale"] is False, "fresh", r)
    lines = record_lines(r.err)
    check(len(lines) == 1 and field(lines[0], "torch_imported") == "false",
          "the harness's record %s" % lines, r)


@test
def autoload_setting_with_real_libtorch():
    # Torch's predicate (torch/__init__.py, _is_device_backend_autoload_
    # enabled): os.getenv("TORCH_DEVICE_BACKEND_AUTOLOAD", "1") == "1".
    want = [(None, "unset", "enabled"), ("0", "0", "disabled"),
            ("1", "1", "enabled"), ("true", "invalid", "disabled")]
    for value, setting, effective in want:
        env = {} if value is None else {"TORCH_DEVICE_BACKEND_AUTOLOAD": value}
        r = run(LAZY + [GOLDEN], env=env)
        lines = record_lines(r.err)
        check(r.rc == 0 and len(lines) == 1, "value %r" % value, r)
        got = (field(lines[0], "setting"), field(lines[0], "effective"),
               field(lines[0], "torch_imported"))
        check(got == (setting, effective, "true"),
              "value %r: %s" % (value, got), r)


# ------------------------------------------------------ aten:: binding

# Each mistake and the start of its message. The schemas are the ones
# this libtorch prints (libtorch() asked it): 2.x prints some differently
# from 1.13 (SymInt[], defaults), and the message must quote the real one.
ATEN_ERRORS = {
    "unknown_op": ("""\
kernel: aten::no_such_op
args:
  - {tensor: self, dtype: float32, shape: [4]}
  - {tensor: y, dtype: float32, shape: [4], role: output}
""", lambda lt: "kernel: unknown ATen operator 'aten::no_such_op': libtorch "
     "%s has no schema aten::no_such_op" % lt["version"]),
    "unknown_arg": ("""\
kernel: aten::gelu
args:
  - {tensor: self, dtype: float32, shape: [4]}
  - {tensor: y, dtype: float32, shape: [4], role: output}
  - {scalar: alpha, dtype: float32, value: 1}
""", lambda lt: "kernel: scalar 'alpha' is not an argument of the schema "
     + lt["schemas"]["aten::gelu"]),
    "required_left_out": ("""\
kernel: aten::native_layer_norm
args:
  - {tensor: input, dtype: float32, shape: [2, 4]}
  - {tensor: y, dtype: float32, shape: [2, 4], role: output}
  - {scalar: normalized_shape, ints: [4]}
""", lambda lt: "kernel: required argument 'eps' (float) of the schema "
     "%s is left out; give a scalar named 'eps'"
     % lt["schemas"]["aten::native_layer_norm"]),
    "wrong_dtype_scalar": ("""\
kernel: aten::softmax.int
args:
  - {tensor: self, dtype: float32, shape: [2, 4]}
  - {tensor: y, dtype: float32, shape: [2, 4], role: output}
  - {scalar: dim, dtype: float32, value: 1}
""", lambda lt: "kernel: argument 'dim' of the schema %s is int (an integer "
     "dtype); got scalar 'dim' of dtype float32"
     % lt["schemas"]["aten::softmax.int"]),
    "wrong_dtype_output": ("""\
kernel: aten::gelu
args:
  - {tensor: self, dtype: float32, shape: [4]}
  - {tensor: y, dtype: float64, shape: [4], role: output}
""", lambda lt: "kernel: output 'y' has dtype float64 but return 0 of the "
     "schema %s is Float" % lt["schemas"]["aten::gelu"]),
    "ints_form_missing": ("""\
kernel: aten::layer_norm
args:
  - {tensor: input, dtype: float32, shape: [2, 4]}
  - {tensor: y, dtype: float32, shape: [2, 4], role: output}
  - {scalar: normalized_shape, dtype: int64, value: 4}
""", lambda lt: "kernel: argument 'normalized_shape' of the schema %s is "
     "int[]; give it as {scalar: normalized_shape, ints: [...]}"
     % lt["schemas"]["aten::layer_norm"]),
    "scratch_named_like_an_argument": ("""\
kernel: aten::gelu
args:
  - {tensor: self, dtype: float32, shape: [4], role: scratch}
  - {tensor: y, dtype: float32, shape: [4], role: output}
""", lambda lt: "kernel: required argument 'self' (Tensor) of the schema %s "
     "is left out: tensor 'self' is role: scratch, which an aten:: op never "
     "binds (a schema has no workspace argument)"
     % lt["schemas"]["aten::gelu"]),
}
# What stays the same in every version: the schemas' shapes, pinned loosely
# so that a probe that caught some other message cannot pass unnoticed.
SCHEMA_SHAPES = {
    "aten::gelu": r"aten::gelu\(Tensor self, \*, str approximate=\"none\"\) "
                  r"-> Tensor$",
    "aten::native_layer_norm": r"aten::native_layer_norm\(Tensor input, "
                               r"(Sym)?[Ii]nt\[\] normalized_shape, Tensor\? "
                               r"weight, Tensor\? bias, float eps\) -> "
                               r"\(Tensor, Tensor, Tensor\)$",
    "aten::softmax.int": r"aten::softmax\.int\(Tensor self, int dim, "
                         r"ScalarType\? dtype=None\) -> Tensor$",
    "aten::layer_norm": r"aten::layer_norm\(Tensor input, (Sym)?[Ii]nt\[\] "
                        r"normalized_shape, Tensor\? weight=None, Tensor\? "
                        r"bias=None, float eps=\S+, bool cudnn_enable=True\) "
                        r"-> Tensor$",
}


@test
def aten_binding_errors_name_the_schema():
    lt = libtorch()
    for op, shape in SCHEMA_SHAPES.items():
        check(re.match(shape, lt["schemas"][op]),
              "schema of %s: %s" % (op, lt["schemas"][op]))
    # One run (libtorch loads once), one scene per mistake.
    names = sorted(ATEN_ERRORS)
    path = write(TMP, "aten_errors.yaml", "---\n".join(
        "scene: e_%s\nskip_golden: true\n%scases:\n  - {name: c}\n" % (
            name, ATEN_ERRORS[name][0]) for name in names))
    ev = os.path.join(TMP, "e.jsonl")
    r = run(LAZY + ["--platform", "torch", "--events", ev, path])
    check(r.rc == 1, "exit 1", r)
    got = {c["scene"][2:]: c for c in events(ev)}
    check(sorted(got) == names, "cases %s" % sorted(got), r)
    for name in names:
        case, message = got[name], ATEN_ERRORS[name][1](lt)
        check(case["status"] == "error", name + ": error", r)
        check(case["message"].startswith(message),
              "%s: message\n  got:  %s\n  want: %s..." % (
                  name, case["message"], message), r)
        check(sequence(case)[-1] == "run", name + ": a run error", r)


@test
def aten_kernel_runs_on_torch_only():
    # An aten:: kernel is the torch plugin's: on another platform its cases
    # are left out, as `platforms:` leaves cases out (docs/torch.md).
    path = write(TMP, "aten_cpu.yaml", """\
scene: ac
kernel: aten::gelu
skip_golden: true
args:
  - {tensor: self, dtype: float32, shape: [4]}
  - {tensor: y, dtype: float32, shape: [4], role: output}
cases:
  - {name: c}
""")
    r = run(LAZY + [path])
    check(r.rc == 0 and "no cases selected (platform 'cpu')" in r.err and
          "ok" not in r.out, "left out on cpu", r)
    r = run(LAZY + ["--platform", "torch", path])
    check(r.rc == 0 and re.search(r"^ok 1 - ac::c$", r.out, re.M),
          "runs on torch", r)


@test
def aten_kernel_leaves_scratch_args_out():
    # A scratch arg is the kernel's workspace (docs/scene-format.md); an
    # ATen schema has none, so the aten:: kernel binds the other args and
    # the scratch is left out, wherever it stands (docs/torch.md#aten-ops).
    path = write(TMP, "aten_scratch.yaml", """\
scene: as
kernel: aten::add.Tensor
golden: add
args:
  - {tensor: work, dtype: float32, shape: [16], role: scratch}
  - {tensor: self, dtype: float32, shape: [64], init: {uniform: [-1, 1]}}
  - {tensor: other, dtype: float32, shape: [64], init: {uniform: [-1, 1]}}
  - {tensor: out, dtype: float32, shape: [64], role: output}
  - {tensor: ws2, dtype: int32, shape: [3], role: scratch}
cases:
  - {name: c}
""")
    ev = os.path.join(TMP, "as.jsonl")
    r = run(LAZY + ["--platform", "torch", "--golden-platform", "reference",
                    "--events", ev, path])
    (case,) = events(ev)
    check(r.rc == 0 and case["status"] == "pass" and
          sequence(case)[-1] == "compare", "passes %s" % case["message"], r)


@test
def aten_golden_implies_torch():
    # golden: aten::relu with no golden_platform: torch computes it, and
    # --golden-platform (for the built-in ops' goldens) does not move it.
    path = write(TMP, "aten_golden.yaml", """\
scene: ag
kernel: relu
golden: aten::relu
args:
  - {tensor: self, dtype: float32, shape: [64], init: {uniform: [-1, 1]}}
  - {tensor: y, dtype: float32, shape: [64], role: output}
cases:
  - {name: c}
""")
    ev = os.path.join(TMP, "ag.jsonl")
    for extra in ([], ["--golden-platform", "reference"]):
        r = run(LAZY + extra + ["--events", ev, path])
        check(r.rc == 0 and re.search(r"^ok 1 - ag::c$", r.out, re.M),
              "passes %s" % extra, r)
        (case,) = events(ev)
        check(torch_in(event(case, "golden")["loaded"]),
              "libtorch loaded by golden %s" % extra, r)


# ------------------------------------------------------- plugin discovery

@test
def default_plugin_path_declares_lazily():
    d = os.path.join(TMP, "plugins")
    os.makedirs(d, exist_ok=True)
    shutil.copy(TORCH, os.path.join(d, "scenetest_torch.so"))
    # A file there that is no plugin: a warning, not a failed run.
    write(d, "broken.so", "not an ELF object\n")
    ev = os.path.join(TMP, "d.jsonl")
    env = {"SCENETEST_PLUGIN_PATH": "/nonexistent:" + d}
    r = Run(["run", "--format", "tap", "--events", ev, GOLDEN], env=env)
    check(r.rc == 0, "rc", r)
    check(re.search(r"^\[WARNING\] default plugin %s not declared: " %
                    re.escape(os.path.join(d, "broken.so")), r.err, re.M),
          "warning for broken.so", r)
    first = events(ev)[0]
    # Declared at start, loaded only by the golden lookup.
    check(event(first, "args")["loaded"] == [] and
          event(first, "golden")["loaded"][0] ==
          os.path.join(d, "scenetest_torch.so"), "loaded from the path", r)
    # An explicit --plugin hides the default declaration of its platform.
    r = Run(["run", "--format", "tap", "--events", ev] + LAZY + [GOLDEN],
            env=env)
    check(r.rc == 0 and
          event(events(ev)[0], "golden")["loaded"][0] == TORCH and
          not any(d in o for c in events(ev) for e in c["events"]
                  for o in e.get("loaded", [])),
          "explicit wins", r)
    r = Run(["run", "--no-default-plugins", "--golden-platform", "torch",
             GOLDEN], env=env)
    check(r.rc == 2 and r.err.startswith("scenetest: error: unknown platform "
                                         "'torch' (--golden-platform): the "
                                         "torch plugin is not built"),
          "--no-default-plugins", r)


@test
def platform_torch_without_plugin_is_usage_error():
    r = run(["--platform", "torch", PLAIN])
    check(r.rc == 2 and "-Dtorch=enabled" in r.err and
          "unknown platform 'torch' (--platform)" in r.err and
          r.out == "", "usage error", r)


# ------------------------------------------- where torch and reference differ

@test
def pinned_differences_from_reference():
    path = write(TMP, "pins.yaml", """\
scene: pin_reduce
kernel: reduce_sum
golden_platform: torch
rtol: 0
atol: 0
args:
  - {tensor: x, dtype: float32, shape: [N], init: {uniform: [-1, 1]}}
  - {tensor: out, dtype: float32, shape: [1], role: output}
cases:
  - {name: n100k, params: {N: 100000}}
---
scene: pin_int
kernel: reduce_sum
golden_platform: torch
args:
  - {tensor: a, dtype: int8, shape: [16], init: {fill: 100}}
  - {tensor: out, dtype: int8, shape: [1], role: output}
cases:
  - {name: wraps}
---
scene: pin_bf16_matmul
kernel: matmul
golden_platform: torch
args:
  - {tensor: a, dtype: bfloat16, shape: [33, 70], init: {uniform: [-1, 1]}}
  - {tensor: b, dtype: bfloat16, shape: [70, 17], init: {uniform: [-1, 1]}}
  - {tensor: c, dtype: bfloat16, shape: [33, 17], role: output}
cases:
  - {name: default_tolerance}
---
scene: cuda_matmul
kernel: matmul
golden_platform: torch
args:
  - {tensor: a, dtype: bfloat16, shape: [1, 300], init: {uniform: [-1, 1]}}
  - {tensor: b, dtype: bfloat16, shape: [300, 1], init: {uniform: [-1, 1]}}
  - {tensor: c, dtype: bfloat16, shape: [1, 1], role: output}
cases:
  - {name: bf16_vector}
""")
    r = run(LAZY + ["--platform", "cpu", path])
    check(r.rc == 1, "rc", r)
    # float32: torch sums in float32 (its cascade order), the built-ins in
    # double: not bit-equal.
    check(re.search(r"^not ok 1 - pin_reduce::n100k$", r.out, re.M),
          "reduction order differs", r)
    # Integers wrap alike: 16 * 100 = 1600 = 64 (mod 256) in both.
    check(re.search(r"^ok 2 - pin_int::wraps$", r.out, re.M), "wrap", r)
    # bfloat16 matmul: libtorch 1.13 accumulates in bfloat16 on a CPU
    # without AVX512-BF16, beyond the default tolerance; where the CPU has
    # it (or AMX-BF16), oneDNN's kernel accumulates in float32 and the
    # case passes (docs/torch.md). Other versions choose their own kernel
    # (2.x accumulates in float32 on more CPUs): asked of this libtorch by
    # running its matmul on the same data against the reference.
    lt = libtorch()
    if lt["version"].startswith("1.13"):
        close = cpu_has_bf16()
        check(torch_bf16_matmul_close(path) == close,
              "libtorch 1.13's bf16 matmul: float32 accumulation iff the "
              "CPU has AVX512-BF16 or AMX-BF16 (%s)" % close)
    else:
        close = torch_bf16_matmul_close(path)
    if close:
        check(re.search(r"^ok 3 - pin_bf16_matmul::default_tolerance$",
                        r.out, re.M), "bf16 matmul (oneDNN, float32 "
              "accumulation) within the default tolerance", r)
    else:
        check(re.search(r"^not ok 3 - pin_bf16_matmul::default_tolerance$",
                        r.out, re.M), "bf16 matmul differs", r)
    # Below M*N*K = 16^3 libtorch 1.13 never takes oneDNN's kernel (its
    # use_mkldnn_bf16_matmul size check): ATen's own gemm rounds the
    # running sum to bfloat16 after each product, on every CPU. On the
    # data of scenes/cuda/linalg.yaml's bf16_vector (same scene, case and
    # arg names) it gives 8.9375 where the exact sum is 8.69687 (bfloat16:
    # 8.6875, which float32 accumulation gets): 4 ulps, past the default
    # tolerance (docs/torch.md); the scene's atol covers it.
    if lt["version"].startswith("1.13"):
        check(re.search(r"^not ok 4 - cuda_matmul::bf16_vector$", r.out,
                        re.M) and "actual 8.6875, expected 8.9375" in r.out,
              "1.13's bf16 matmul below 16^3 accumulates in bfloat16", r)


def torch_bf16_matmul_close(path):
    """Whether this libtorch's bfloat16 matmul (the torch platform's
    kernel, on the pin's data: same scene, case and arg names, so the
    same inputs) is within the default tolerance of the reference."""
    r = run(LAZY + ["--platform", "torch", "--golden-platform", "reference",
                    "--case", "pin_bf16_matmul", "--log-level", "warning",
                    path])
    check(r.rc in (0, 1) and re.search(
        r"^(not )?ok 1 - pin_bf16_matmul::default_tolerance$", r.out, re.M),
        "bf16 probe", r)
    return r.rc == 0


def cpu_has_bf16():
    try:
        with open("/proc/cpuinfo") as f:
            flags = set(f.read().split())
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


sys.exit(main(TMP))
