# SPDX-License-Identifier: MIT
"""Plugins and -j through the binary (docs/plugins.md#the-lookup-order, docs/cli.md#options), printing TAP 13
through taptest.

Usage: test_plugins.py SCENETEST PLUGIN_DIR EXAMPLE_PLUGIN SCENES_DIR

- the example plugin: add passes on `example`, copy passes through its
  `common` implementation, matmul errors with the exact message;
- the example's fused kernel (workspace, config tensor) against the
  built-in axpy through golden_args, and its negative case, supervised,
  --no-supervise and --isolate, with their event sequences; the sig test
  plugin's negative tests (expect: error passing and failing) and an
  unknown golden_args name (exit 2, the exact line);
- lazy loading through the CLI, and the refusals (exit 2, path and reason:
  another ABI, ABI 1, no name, no descriptor, a C++ descriptor without
  extern "C");
- a lazy plugin whose note and descriptor disagree: every case says why;
- an init that fails: a WARNING, and the case still passes after repair;
- a kernel that prints to stdout cannot corrupt the TAP report;
- -j 2 and -j 1 give identical events (less timings and pids) on scenes/.
"""

import json
import os
import re
import sys
import tempfile

EXE, PLUGINS, EXAMPLE, SCENES = sys.argv[1:5]
TMP = tempfile.mkdtemp(prefix="scenetest-plugins-")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import taptest  # noqa: E402  (after sys.path)
from taptest import Run, check, main, test  # noqa: E402

taptest.EXE = EXE


def plugin(kind):
    return os.path.join(PLUGINS, "st_plugin_%s.so" % kind)


write = taptest.writer(TMP)


def run(*args):
    r = Run(list(args))
    return r, r.rc, r.out, r.err


OPS = write("ops.yaml", taptest.vadd_scene(
    "plug", "  - {name: small, params: {N: 100}}\n") + """\
---
scene: plug_copy
kernel: copy
args:
  - {tensor: x, dtype: float64, shape: [7], init: {range: {start: 1, step: 2}}}
  - {tensor: y, dtype: float64, shape: [7], role: output}
cases:
  - {name: via_common}
---
scene: plug_matmul
kernel: matmul
args:
  - {tensor: a, dtype: float32, shape: [2, 3], init: ones}
  - {tensor: b, dtype: float32, shape: [3, 2], init: ones}
  - {tensor: c, dtype: float32, shape: [2, 2], role: output}
cases:
  - {name: missing}
""")


LEVELS = write("levels.yaml", """\
scene: lvl2
kernel: add
args:
  - {tensor: a, dtype: float32, shape: [64], init: ones}
  - {tensor: b, dtype: float32, shape: [64], init: ones}
  - {tensor: out, dtype: float32, shape: [64], role: output}
cases:
  - {name: one}
  - {name: two}
---
scene: lvl3
level: 3
workers: 2
kernel: add
args:
  - {tensor: a, dtype: float32, shape: [64], init: ones}
  - {tensor: b, dtype: float32, shape: [64], init: ones}
  - {tensor: out, dtype: float32, shape: [64], role: output}
cases:
  - {name: one}
  - {name: two}
""")

FLAKY = write("flaky.yaml", """\
scene: flaky_add
kernel: add
args:
  - {tensor: a, dtype: float32, shape: [5], init: ones}
  - {tensor: b, dtype: float32, shape: [5], init: ones}
  - {tensor: out, dtype: float32, shape: [5], role: output}
cases:
  - {name: repaired}
""")


def tap_lines(out):
    return [l for l in out.splitlines() if l.startswith(("ok ", "not ok "))]


@test
def example__add_passes_copy_via_common_matmul_missing():
    r, rc, out, err = run("run", "--format", "tap", "--log-level", "warning",
                          "--plugin", EXAMPLE, "--platform", "example", OPS)
    lines = tap_lines(out)
    check(rc == 1, "exit 1 (matmul errors)", r)
    check("ok 1 - plug::small" in lines, "add passes", r)
    check("ok 2 - plug_copy::via_common" in lines, "copy passes via common",
          r)
    check("not ok 3 - plug_matmul::missing" in lines, "matmul is not ok", r)
    check("BackendImplementationMissing: backend 'example' is missing "
          "required implementation: kernel for op 'matmul' (implemented by: "
          "cpu, reference, threads)" in out,
          "exact missing-implementation message", r)


# examples/plugins/scenes: the example's fused kernel, with a workspace
# and a config tensor, against the built-in axpy through golden_args.
EXAMPLE_SCENES = os.path.join(os.path.dirname(os.path.abspath(SCENES)),
                              "examples", "plugins", "scenes")


def event_names(path, case):
    with open(path) as f:
        for line in f:
            o = json.loads(line)
            if o["case"] == case:
                return [e["name"] for e in o["events"] if e["name"] != "load"]
    return None


@test
def example__fused_kernel_against_builtin_golden_every_mode():
    for mode in ([], ["--no-supervise"], ["--isolate"]):
        path = os.path.join(TMP, "fused%s.jsonl" % "".join(mode))
        r, rc, out, err = run("run", "--format", "tap", "--log-level",
                              "warning", "--plugin", EXAMPLE, "--platform",
                              "example", "--events", path, *mode,
                              EXAMPLE_SCENES)
        lines = tap_lines(out)
        check(rc == 0 and len(lines) == 10 and
              all(l.startswith("ok ") for l in lines),
              "every case passes %r" % mode, r)
        check(event_names(path, "tiles[N=100,TILE=64]") ==
              ["args", "golden", "record", "run", "compare", "reset", "run",
               "compare"], "golden runs on the view %r" % mode, r)
        check(event_names(path, "tile_zero") == ["args", "record", "run"],
              "the negative case ends at its run %r" % mode, r)


SIG_SCENE = """scene: sig
kernel: sig_add
golden: add
golden_args: [a, b, out]
args:
  - {tensor: a, dtype: float32, shape: [8], init: {uniform: [-1, 1]}}
  - {tensor: b, dtype: float32, shape: [8], init: {uniform: [-1, 1]}}
  - {tensor: cfg, dtype: int32, shape: [1], init: {fill: TILE}}
  - {tensor: out, dtype: float32, shape: [8], role: output}
  - {tensor: work, dtype: float32, shape: [8], role: scratch}
  - {scalar: unroll, dtype: int32, value: 2}
cases:
  - {name: passes, params: {TILE: 3}}
  - {name: refused, params: {TILE: 0}, expect: error,
     expect_message: "tile must be positive"}
  - {name: not_refused, params: {TILE: 3}, expect: error}
  - {name: other_refusal, params: {TILE: -1}, expect: error,
     expect_message: unroll}
"""


@test
def sig__negative_tests_through_the_cli():
    path = write("sig.yaml", SIG_SCENE)
    for mode in ([], ["--no-supervise"], ["--isolate"]):
        r, rc, out, err = run("run", "--format", "tap", "--log-level",
                              "warning", "--plugin", plugin("sig"),
                              "--platform", "sig", *mode, path)
        lines = tap_lines(out)
        check(rc == 1, "exit 1: two negative tests fail %r" % mode, r)
        check(lines[:2] == ["ok 1 - sig::passes", "ok 2 - sig::refused"],
              "the passing ones pass %r" % mode, r)
        check(lines[2:] == ["not ok 3 - sig::not_refused",
                            "not ok 4 - sig::other_refusal"],
              "the failing ones fail %r" % mode, r)
        check("expected an error, but the kernel's call reported none" in out
              and "expected an error whose message contains 'unroll'; the "
              "kernel's error was: 'tile must be positive, got -1'" in out,
              "both messages %r" % mode, r)


@test
def sig__golden_args_unknown_is_a_load_error_at_the_entry():
    path = write("sig_bad.yaml", SIG_SCENE.replace(
        "golden_args: [a, b, out]", "golden_args: [a, bb, out]"))
    r, rc, out, err = run("check", "--plugin", plugin("sig"), path)
    check(rc == 2 and err.startswith(
        path + ":4:18: error: golden_args names 'bb', which is not an arg of "
        "scene 'sig'; expected one of its args\n"), "exact line, exit 2", r)


def register_names(code):
    """(descriptor name, first platform, st_registry_register's module,
    op and backend) of a plugin's C source."""
    name = re.search(r'\.name = "([^"]+)"', code)
    plat = re.search(r'platforms\[\] = \{"([^"]+)"', code)
    reg = re.search(r'st_registry_register\(\s*reg,\s*"([^"]+)",\s*"([^"]+)",'
                    r'\s*"([^"]+)"', code)
    check(name and plat and reg, "descriptor, platforms and register call "
          "found in %r" % code[:200])
    return (name.group(1), plat.group(1)) + reg.groups()


@test
def docs_example__module_and_platform_named_apart():
    """docs/plugins.md's example and examples/plugins/example.c register
    on behalf of the descriptor's module, on the plugin's platform, under
    two different names: one name for both hid which argument is which."""
    root = os.path.dirname(os.path.abspath(SCENES))
    with open(os.path.join(root, "docs", "plugins.md")) as f:
        doc = re.search(r"```c\n(.*?)```", f.read(), re.S).group(1)
    with open(os.path.join(root, "examples", "plugins", "example.c")) as f:
        src = f.read()
    for what, code in (("docs/plugins.md", doc), ("example.c", src)):
        module, platform, r_module, op, backend = register_names(code)
        check(r_module == module and backend == platform and op == "add",
              "%s: register(module %r, op %r, backend %r) for descriptor %r "
              "and platform %r" % (what, r_module, op, backend, module,
                                   platform))
        check(module != platform, "%s: module and platform both %r" %
              (what, module))


@test
def lazy__example_add_and_copy_pass():
    r, rc, out, err = run("run", "--format", "tap", "--log-level", "warning",
                          "--plugin", "lazy:" + EXAMPLE, "--platform",
                          "example", "--case", "plug", "--case", "plug_copy",
                          OPS)
    check(rc == 0 and len(tap_lines(out)) == 2, "two cases pass", r)


@test
def list_check__accept_plugins_unknown_platform_lists_lazy():
    r, rc, out, err = run("list", "--no-default-plugins", "--plugin",
                          "lazy:" + plugin("good"), "--platform", "nowhere",
                          OPS)
    check(rc == 2 and "scenetest: error: unknown platform 'nowhere'; "
          "platforms: cpu, lazyplat, threads" in err,
          "unknown platform lists lazy platforms", r)
    r, rc, out, err = run("check", "--plugin", EXAMPLE, OPS)
    check(rc == 0, "check loads plugins", r)


@test
def refusals__exit_2_naming_path_and_reason():
    kinds = [("badabi", "ABI version 99, this scenetest has ABI version 2"),
             ("abi1", "ABI version 1, this scenetest has ABI version 2"),
             ("noname", "module without a name"),
             ("nodesc", "no 'scenetest_module' descriptor")]
    for kind, reason in kinds:
        r, rc, out, err = run("run", "--plugin", plugin(kind), OPS)
        check(rc == 2 and ("scenetest: error: plugin '%s': %s\n" %
                           (plugin(kind), reason)) == err,
              "refuses %s with one line" % kind, r)
        check(out == "", "refuses %s before running anything" % kind, r)
    r, rc, out, err = run("run", "--plugin", os.path.join(TMP, "missing.so"),
                          OPS)
    check(rc == 2 and "No such file or directory" in err,
          "refuses a missing file", r)
    r, rc, out, err = run("run", "--plugin", "lazy:" + plugin("nonote"), OPS)
    check(rc == 2 and "no platform declaration" in err,
          "refuses a lazy plugin without a note", r)


@test
def refusals__cxx_descriptor_without_extern_c():
    if not os.path.exists(plugin("cxx_local")):
        return "SKIP no C++ compiler: the C++ test plugins were not built"
    for kind, how in [("cxx_local", "it has the unexported symbol "
                                    "'_ZL16scenetest_module'"),
                      ("cxx_mangled", "it exports the mangled symbol "
                                      "'_ZN6plugin16scenetest_moduleE'")]:
        r, rc, out, err = run("run", "--plugin", plugin(kind), OPS)
        want = ("scenetest: error: plugin '%s': no 'scenetest_module' "
                "descriptor, but %s: a C++ plugin must declare its descriptor "
                "extern \"C\"\n" % (plugin(kind), how))
        check(rc == 2 and err == want, "%s: exit 2, names the symbol" % kind,
              r)
    r, rc, out, err = run("run", "--format", "tap", "--plugin",
                          plugin("cxx_good"), "--platform", "cxxplat", FLAKY)
    check(rc == 0 and "ok 1 - flaky_add::repaired" in out,
          "an extern \"C\" C++ plugin runs", r)


@test
def lazy__note_mismatch_is_named_in_the_case_message():
    # The load fails when the first lookup misses; the case's own message
    # (not only a WARNING on stderr) must say why, at level 2 and 3.
    mismatch = plugin("mismatch")
    r, rc, out, err = run("run", "--plugin", "lazy:" + mismatch, "--platform",
                          "declared", "--format", "tap", "--log-level",
                          "error", LEVELS)
    check(rc == 1, "exit 1", r)
    want = ("kernel for op 'add' (implemented by: cpu, reference, threads); "
            "a lazy plugin did not load: plugin '%s': declared platforms "
            "'declared' differ from its descriptor's" % mismatch)
    check(out.count(want) == 4, "every case names the reason", r)


@test
def failing_init__warning_then_repaired():
    r, rc, out, err = run("run", "--format", "tap", "--plugin",
                          plugin("failinit"), "--platform", "flaky", FLAKY)
    check("[WARNING] plugin '%s'" % plugin("failinit") in err and
          "device busy on first init" in err, "warning names the plugin", r)
    check(rc == 0 and "ok 1 - flaky_add::repaired" in out,
          "repaired, case passes", r)


# Its golden is constant: the point is followed by the mistrust comment
# (docs/cli.md#mistrust).
MISTRUSTED = ("# mistrusted: flaky_add::repaired: tensor 'out': golden's 5 "
              "elements are all equal (2)")


@test
def printing_kernel__report_intact():
    # In this process (--no-supervise) its output goes to stderr;
    # supervised, the case's capture keeps it (test_supervise.py).
    r, rc, out, err = run("run", "--format", "tap", "--no-supervise",
                          "--plugin", plugin("prints"), "--platform",
                          "printer", FLAKY)
    check(rc == 0, "passes", r)
    check(out.splitlines() == ["TAP version 13", "1..1",
                               "ok 1 - flaky_add::repaired", MISTRUSTED,
                               "# 1 cases: 1 passed, 0 failed, 0 errors, "
                               "0 skipped, 0 xfail, 0 xpass"],
          "stdout is only the report", r)
    check("ok 999 - printed by a kernel" in err and
          "kernel diagnostics on stderr" in err,
          "its output went to stderr", r)


@test
def printing_kernel__isolated_output_in_events():
    evp = os.path.join(TMP, "printed.jsonl")
    r, rc, out, err = run("run", "--format", "tap", "--isolate", "--events",
                          evp, "--plugin", plugin("prints"), "--platform",
                          "printer", FLAKY)
    with open(evp) as f:
        objs = [json.loads(l) for l in f if l.strip()]
    output = (objs[0].get("output") or "") if objs else ""
    check(rc == 0 and len(objs) == 1 and
          "ok 999 - printed by a kernel" in output and
          "kernel diagnostics on stderr" in output,
          "output in the events: %r" % objs, r)
    check(out.splitlines() == ["TAP version 13", "1..1",
                               "ok 1 - flaky_add::repaired", MISTRUSTED,
                               "# 1 cases: 1 passed, 0 failed, 0 errors, "
                               "0 skipped, 0 xfail, 0 xpass"],
          "report intact", r)


# The example scenes outside scenes/torch/, whose golden needs the torch
# plugin (tests/cli/test_torch.py runs those).
SCENE_FILES = ["--ignore", "torch", SCENES]


def events(jobs, *extra):
    """The events of scenes/ at -j jobs, less timings and pids, sorted."""
    path = os.path.join(TMP, "events-j%d%s.jsonl" % (jobs, "".join(extra)))
    r, rc, out, err = run("run", "--format", "tap", "--log-level", "warning",
                          "--no-default-plugins", "-j", str(jobs), "--events",
                          path, *extra, *SCENE_FILES)
    with open(path) as f:
        objs = [json.loads(l) for l in f if l.strip()]
    for o in objs:
        o.pop("pid", None)
        o.pop("duration_ns", None)
        for ev in o["events"]:
            ev.pop("start_ns", None)
            ev.pop("dur_ns", None)
            # Which run emits the process's record is not about -j.
            ev.pop("emitted", None)
    objs.sort(key=lambda o: (o["scene"], o["case"]))
    return r, objs


def summary(objs):
    return [(o["scene"], o["case"], o["status"],
             [ev["name"] for ev in o["events"]]) for o in objs]


def first_difference(a, b):
    return next(((x, y) for x, y in zip(a, b) if x != y), None)


@test
def jobs__events_equal_at_j1_j2_and_isolated():
    r1, e1 = events(1)
    r2, e2 = events(2)
    check(r1.rc == 0 and len(e1) > 10, "-j 1 passes on scenes/", r1)
    check(r2.rc == 0, "-j 2 passes on scenes/", r2)
    check(e1 == e2, "-j 2 events equal -j 1 events; first difference: %s"
          % (first_difference(e1, e2),))
    r3, e3 = events(2, "--isolate")
    check(r3.rc == 0, "--isolate -j 2 passes on scenes/", r3)
    check(summary(e3) == summary(e1),
          "--isolate -j 2 writes every case's events, as -j 1; first "
          "difference: %s" % (first_difference(summary(e1), summary(e3)),))


if __name__ == "__main__":
    sys.exit(main(TMP))
