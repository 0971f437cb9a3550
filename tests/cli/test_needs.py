# SPDX-License-Identifier: MIT
"""Cases that need what the run lacks (docs/cli.md), through the binary,
printing TAP 13.

Usage: test_needs.py SCENETEST TORCH_PLUGIN SCENES_DIR

- a case whose golden backend is not available is skipped with a reason
  that says how to get it, and the run ends with one summary warning;
  `check` names each missing backend once and passes; --strict-platforms
  makes them load errors (FILE:LINE:COL) in run, list and check;
- `golden: aten::...` needs torch without golden_platform; an aten::
  kernel is left out on other platforms; --skip-golden needs no golden;
- an unknown --platform stays a usage error;
- the build tree: build/harness/scenetest declares the plugins built
  beside it (the torch scenes run: skipped here when the torch plugin is
  not built), while a copy of the same binary elsewhere declares none, as
  a build without libtorch does: `run scenes/` and `check scenes/` exit 0
  either way, the torch cases skipped with one warning.
"""
import os
import re
import shutil
import sys
import tempfile

import taptest
from taptest import Run, check, events, main, test, write

taptest.EXE, TORCH, SCENES = sys.argv[1:4]
os.environ.pop("SCENETEST_PLUGIN_PATH", None)
TMP = tempfile.mkdtemp(prefix="scenetest-needs-")
BUILT_EXE = taptest.EXE
NODEF = ["--no-default-plugins"]
TORCH_WHY = ("not available: the torch plugin is not loaded; pass --plugin "
             "lazy:PATH/scenetest_torch.so, or build scenetest with libtorch "
             "(meson setup -Dtorch=enabled, or -Dtorch_dir=PATH for a "
             "PyTorch wheel; docs/torch.md)")

NEEDS = write(TMP, "needs.yaml", """\
scene: tg
kernel: add
golden_platform: torch
args:
  - {tensor: a, dtype: float32, shape: [4], init: {uniform: [-1, 1]}}
  - {tensor: b, dtype: float32, shape: [4], init: {fill: 3.0}}
  - {tensor: out, dtype: float32, shape: [4], role: output}
cases:
  - {name: one}
  - {name: two}
  - {name: nogold, skip_golden: true}
---
scene: ag
kernel: relu
golden: aten::relu
args:
  - {tensor: self, dtype: float32, shape: [4], init: {uniform: [-1, 1]}}
  - {tensor: y, dtype: float32, shape: [4], role: output}
cases:
  - {name: implied}
---
scene: npu
kernel: add
args:
  - {tensor: a, dtype: float32, shape: [4], init: {uniform: [-1, 1]}}
  - {tensor: b, dtype: float32, shape: [4], init: {fill: 3.0}}
  - {tensor: out, dtype: float32, shape: [4], role: output}
cases:
  - {name: gp, golden_platform: gaudi}
  - {name: plain}
---
scene: ak
kernel: aten::gelu
skip_golden: true
args:
  - {tensor: self, dtype: float32, shape: [4]}
  - {tensor: y, dtype: float32, shape: [4], role: output}
cases:
  - {name: torch_only}
""")


def warnings(err):
    return [line for line in err.splitlines() if line.startswith("[WARNING]")]


@test
def missing_golden_backend_skips_with_how_to_get_it():
    ev = os.path.join(TMP, "n.jsonl")
    r = Run(["run", "--format", "tap", "--events", ev] + NODEF + [NEEDS])
    check(r.rc == 0, "skips are not failures", r)
    got = {c["scene"] + "::" + c["case"]: c for c in events(ev)}
    # The aten:: kernel is left out on cpu: absent, not skipped.
    check(sorted(got) == ["ag::implied", "npu::gp", "npu::plain", "tg::nogold",
                          "tg::one", "tg::two"], "cases %s" % sorted(got), r)
    for name in ("tg::one", "tg::two", "ag::implied"):
        check(got[name]["status"] == "skip" and
              got[name]["message"] == TORCH_WHY and got[name]["events"] == [],
              "%s: %s" % (name, got[name]["message"]), r)
    check(got["npu::gp"]["status"] == "skip" and got["npu::gp"]["message"] ==
          "not available: no plugin provides backend 'gaudi'; pass --plugin "
          "PATH of a plugin that does (docs/plugins.md)", "npu", r)
    for name in ("tg::nogold", "npu::plain"):
        check(got[name]["status"] == "pass", name + " runs", r)
    check(re.search(r"^ok \d+ - tg::one # SKIP %s$" % re.escape(TORCH_WHY),
                    r.out, re.M), "TAP skip", r)
    # One summary warning, the run's last line of stderr.
    w = warnings(r.err)
    check(w == ["[WARNING] 4 cases skipped: the torch plugin is not loaded "
                "(3), no plugin provides backend 'gaudi' (1) (each case's skip "
                "message says how to get it)"], "summary %s" % w, r)
    check(r.err.rstrip("\n").splitlines()[-1] == w[0], "last line", r)


@test
def one_reason_one_plain_summary():
    r = Run(["run", "--format", "tap", "--case", "tg"] + NODEF + [NEEDS])
    check(r.rc == 0 and warnings(r.err) == [
        "[WARNING] 2 cases skipped: the torch plugin is not loaded (each "
        "case's skip message says how to get it)"], "summary", r)
    # Nothing skipped for a missing backend: no summary.
    r = Run(["run", "--format", "tap", "--case", "npu::plain"] + NODEF +
            [NEEDS])
    check(r.rc == 0 and warnings(r.err) == [], "no summary", r)


@test
def skip_golden_needs_no_golden_backend():
    r = Run(["run", "--format", "tap", "--skip-golden"] + NODEF + [NEEDS])
    check(r.rc == 0 and "SKIP" not in r.out and warnings(r.err) == [],
          "--skip-golden runs them", r)


@test
def check_names_each_missing_backend_once():
    r = Run(["check"] + NODEF + [NEEDS])
    check(r.rc == 0 and r.out == "ok: 4 scenes, 7 cases\n", "check passes", r)
    check(warnings(r.err) == [
        "[WARNING] 3 cases need golden backend 'torch', which is " +
        TORCH_WHY + "; a run skips them (--strict-platforms makes them "
        "errors)",
        "[WARNING] 1 case needs golden backend 'gaudi', which is not "
        "available: no plugin provides backend 'gaudi'; pass --plugin PATH of "
        "a plugin that does (docs/plugins.md); a run skips it "
        "(--strict-platforms makes it an error)"], "warnings %s" %
        warnings(r.err), r)


STRICT_ERRORS = [
    "%s:9:12: error: case 'one' needs golden backend 'torch', which is %s "
    "(--strict-platforms)" % (NEEDS, TORCH_WHY),
    "%s:10:12: error: case 'two' needs golden backend 'torch', which is %s "
    "(--strict-platforms)" % (NEEDS, TORCH_WHY),
    "%s:20:12: error: case 'implied' needs golden backend 'torch', which is "
    "%s (--strict-platforms)" % (NEEDS, TORCH_WHY),
    "%s:29:12: error: case 'gp' needs golden backend 'gaudi', which is not "
    "available: no plugin provides backend 'gaudi'; pass --plugin PATH of a "
    "plugin that does (docs/plugins.md) (--strict-platforms)" % NEEDS,
]


@test
def strict_platforms_makes_them_load_errors():
    for cmd in ("run", "list", "check"):
        r = Run([cmd, "--strict-platforms"] + NODEF + [NEEDS])
        check(r.rc == 2 and r.out == "", "%s: exit 2, nothing out" % cmd, r)
        check(r.err.splitlines() == STRICT_ERRORS,
              "%s: errors\n%s" % (cmd, "\n".join(r.err.splitlines())), r)
    # Without the flag, list lists them (a run would skip them).
    r = Run(["list"] + NODEF + [NEEDS])
    check(r.rc == 0 and "tg::one\n" in r.out and "ak::" not in r.out,
          "list", r)


@test
def unknown_platform_stays_usage_error():
    r = Run(["run", "--platform", "torch"] + NODEF + [NEEDS])
    check(r.rc == 2 and r.out == "" and
          "unknown platform 'torch' (--platform)" in r.err, "usage", r)


def copy_of_binary():
    """The build tree's binary copied out of its build directory: it
    declares nothing from the build tree, as a build without libtorch
    (or an installed binary on a machine without the plugin) does."""
    path = os.path.join(TMP, "bin", "scenetest")
    if not os.path.exists(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        shutil.copy2(BUILT_EXE, path)
    return path


def torch_scene_counts(out):
    """(ran, skipped for the missing plugin) over the torch_* cases."""
    ran = len(re.findall(r"^ok \d+ - torch_\S+$", out, re.M))
    skipped = len(re.findall(r"^ok \d+ - torch_\S+ # SKIP not available: the "
                             r"torch plugin is not loaded", out, re.M))
    return ran, skipped


@test
def scenes_without_torch_plugin_skip_torch_cases():
    for exe, extra in ((BUILT_EXE, NODEF), (copy_of_binary(), [])):
        taptest.EXE = exe
        try:
            r = Run(["run", "--format", "tap"] + extra + [SCENES])
        finally:
            taptest.EXE = BUILT_EXE
        check(r.rc == 0 and "not ok" not in r.out, "%s: exit 0" % exe, r)
        ran, skipped = torch_scene_counts(r.out)
        check(ran == 0 and skipped >= 90, "%s: torch cases skipped (%d, %d)"
              % (exe, ran, skipped), r)
        w = warnings(r.err)
        check(len(w) == 1 and w[0].startswith(
            "[WARNING] %d cases skipped: the torch plugin is not loaded" %
            len(re.findall(r"# SKIP not available: ", r.out))),
            "%s: one summary warning %s" % (exe, w), r)
        taptest.EXE = exe
        try:
            r = Run(["check"] + extra + [SCENES])
        finally:
            taptest.EXE = BUILT_EXE
        check(r.rc == 0 and r.out.startswith("ok: ") and
              len(warnings(r.err)) == 1 and
              "golden backend 'torch'" in warnings(r.err)[0],
              "%s: check exits 0, one warning" % exe, r)


@test
def build_tree_declares_its_plugins():
    if TORCH == "":
        return "SKIP the torch plugin is not built (libtorch not found)"
    # No --no-default-plugins: the binary in its build directory declares
    # the torch plugin built beside it, lazily (the note, no dlopen).
    ev = os.path.join(TMP, "b.jsonl")
    r = Run(["run", "--format", "tap", "--log-level", "warning", "--events",
             ev, SCENES], env={"SCENETEST_PLUGIN_PATH": ""})
    check(r.rc == 0 and "not ok" not in r.out, "exit 0", r)
    ran, skipped = torch_scene_counts(r.out)
    check(ran >= 90 and skipped == 0, "torch cases ran (%d, %d)" %
          (ran, skipped), r)
    check(warnings(r.err) == [], "no warning: %s" % warnings(r.err), r)
    loaded = [o for c in events(ev) for e in c["events"]
              for o in e.get("loaded", [])]
    check(os.path.realpath(TORCH) in map(os.path.realpath, loaded),
          "the build tree's plugin was loaded", r)
    r = Run(["check", SCENES], env={"SCENETEST_PLUGIN_PATH": ""})
    check(r.rc == 0 and warnings(r.err) == [], "check: no warning", r)


sys.exit(main(TMP))
