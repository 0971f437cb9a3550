# SPDX-License-Identifier: MIT
"""Integration tests of scene authoring (docs/scene-format.md#matrix-cases), printing TAP 13.

Usage: test_authoring.py PATH/TO/scenetest SOURCE_ROOT

Matrix cases (expansion order, names, exclude, the literal selector, the
rerun command), merge keys, the load-time warnings and their strict forms,
expect: fail in text, TAP (read by prove) and events, and directory
scans' ignore rules. Standard library only.
"""

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

EXE = os.path.abspath(sys.argv[1])
ROOT = os.path.abspath(sys.argv[2])
TMP = tempfile.mkdtemp(prefix="scenetest-authoring-")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import taptest  # noqa: E402  (after sys.path)
from taptest import Run, check, main, test  # noqa: E402

taptest.EXE = EXE
write = taptest.writer(TMP)


SWEEP = os.path.join(ROOT, "tests", "scenes", "matrix", "sweep.yaml")

ADD_ARGS = """\
args:
  - {tensor: a, dtype: float32, shape: [N], init: {fill: 1}}
  - {tensor: b, dtype: float32, shape: [N], init: {fill: B}}
  - {tensor: out, dtype: float32, shape: [N], role: output}
"""

# A plain case whose name the matrix name's brackets would match as a
# glob (s[N=7] as a pattern is "s" then one of N, = or 7).
LITERAL = write("literal.yaml", """\
scene: lit
kernel: add
""" + ADD_ARGS + """\
cases:
  - name: s7
    params: {N: 4, B: 0}
  - name: s
    params: {B: 0}
    matrix: {N: [7, 8]}
""")

# kernel add, golden sub: b = 0 passes, b = 1 fails.
EXPECT = write("expect.yaml", """\
scene: xf
kernel: add
golden: sub
expect: fail
""" + ADD_ARGS + """\
cases:
  - name: fails
    params: {N: 4, B: 1}
  - name: passes
    params: {N: 4, B: 0}
  - name: plain
    params: {N: 4, B: 1}
    expect: pass
  - name: grid
    matrix: {N: [2], B: [0, 1]}
""")

TYPOS = write("typos.yaml", """\
scene: typos
kernel: add
""" + ADD_ARGS + """\
cases:
  - name: c
    params: {N: 4, B: 0, UNUSED: 1}
    platforms: [cpuu, threads]
    manual: [thread]
""")


@test
def matrix_list_is_the_expansion():
    r = Run(["list", SWEEP])
    with open(os.path.join(ROOT, "tests", "scenes", "matrix",
                           "sweep.list")) as f:
        want = f.read()
    check(r.rc == 0 and r.out == want and r.err == "",
          "list prints the cross product in order, exclusions dropped", r)


@test
def matrix_sweep_passes_on_cpu_and_threads():
    for plat in ("cpu", "threads"):
        r = Run(["run", "--format", "tap", "--platform", plat, SWEEP])
        check(r.rc == 0 and r.out.count("\nok ") == 11, plat, r)


@test
def selector_matches_a_literal_name_before_globs():
    r = Run(["list", "--case", "lit::s[N=7]", LITERAL])
    check(r.rc == 0 and r.out == "lit::s[N=7]\n", "literal only", r)
    r = Run(["list", "--case", "lit::s[78]", LITERAL])
    check(r.rc == 0 and r.out == "lit::s7\n", "not a name: a glob", r)
    r = Run(["list", "--case", "lit::s?N=*", LITERAL])
    check(r.rc == 0 and r.out == "lit::s[N=7]\nlit::s[N=8]\n",
          "globs still match expanded names", r)


@test
def rerun_command_reruns_a_matrix_case():
    r = Run(["run", "--format", "tap", EXPECT])
    r = Run(["run", "--format", "tap", "--case", "xf::grid[N=2,B=0]", EXPECT])
    # docs/cli.md#tap: the command starts with the program as invoked.
    m = re.search(r"rerun: \"" + re.escape(EXE) + r" run (.*)\"\n", r.out)
    check(m is not None, "rerun present for the xpass", r)
    args = shlex.split(re.sub(r"\\(.)", r"\1", m.group(1)))
    check(args[:2] == ["--case", "xf::grid[N=2,B=0]"], "quoted name", r)
    r2 = Run(["run", "--format", "tap"] + args)
    check(r2.rc == 1 and r2.out.startswith(
        "TAP version 13\n1..1\nnot ok 1 - xf::grid[N=2,B=0]\n"),
        "the rerun runs just that case", r2)


@test
def expect_fail_in_tap():
    r = Run(["run", "--format", "tap", EXPECT])
    check(r.rc == 1, "an xpass fails the run", r)
    points = [l for l in r.out.splitlines() if re.match(r"(not )?ok ", l)]
    msg = ("tensor 'out': 4 of 4 elements differ; first at [0]: actual 2, "
           "expected 0; max abs diff 2; rtol 1.3e-06, atol 1e-05")
    want = [
        "not ok 1 - xf::fails # TODO expected failure: " + msg,
        "not ok 2 - xf::passes",
        "not ok 3 - xf::plain",
        "not ok 4 - xf::grid[N=2,B=0]",
        "not ok 5 - xf::grid[N=2,B=1] # TODO expected failure: " +
        msg.replace("4 of 4", "2 of 2"),
    ]
    check(points == want, "points:\n" + "\n".join(points), r)
    check(r.out.count("  severity: xpass\n") == 2 and
          r.out.count("  severity: fail\n") == 1, "severities", r)
    check("  message: \"unexpected pass: the case is marked expect: fail\"\n"
          in r.out, "xpass message", r)
    if shutil.which("prove") is None:
        return "SKIP prove is not installed"
    path = os.path.join(TMP, "expect.tap")
    with open(path, "w") as f:
        f.write(r.out)
    p = subprocess.run(["prove", "-e", "cat", path], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=60)
    out = p.stdout.decode()
    check(p.returncode != 0 and "Failed 3/5 subtests" in out,
          "prove counts the xpasses and the fail, not the TODOs:\n" + out)
    one = Run(["run", "--format", "tap", "--case", "xf::fails", EXPECT])
    check(one.rc == 0, "an xfail alone exits 0", one)
    with open(path, "w") as f:
        f.write(one.out)
    p = subprocess.run(["prove", "-e", "cat", path], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=60)
    check(p.returncode == 0, "prove passes a TODO:\n" + p.stdout.decode())


@test
def expect_fail_in_text_and_events():
    ev = os.path.join(TMP, "events.jsonl")
    r = Run(["run", "--format", "text", "--events", ev, EXPECT])
    check(r.rc == 1, "exit 1", r)
    lines = r.out.splitlines()
    heads = [l.split(" (")[0] for l in lines if re.match(r"[A-Z]{4}", l)]
    check(heads == ["XFAIL xf::fails", "XPASS xf::passes", "FAIL  xf::plain",
                    "XPASS xf::grid[N=2,B=0]", "XFAIL xf::grid[N=2,B=1]"],
          "labels", r)
    check(re.search(r"^5 cases: 0 passed, 1 failed, 0 errors, 0 skipped, "
                    r"2 xfailed, 2 xpassed in ", r.out, re.M), "summary", r)
    check("      expected failure: tensor 'out': 4 of 4" in r.out,
          "xfail says why", r)
    with open(ev) as f:
        st = {(o["case"]): o["status"] for o in map(json.loads, f)}
    check(st == {"fails": "xfail", "passes": "xpass", "plain": "fail",
                 "grid[N=2,B=0]": "xpass", "grid[N=2,B=1]": "xfail"},
          "events statuses: %r" % st)


@test
def equal_nan_end_to_end():
    text = """\
scene: nan_%s
kernel: copy
%s
args:
  - {tensor: x, dtype: DT, shape: [3], init: {values: [nan, 1, -nan]}}
  - {tensor: y, dtype: DT, shape: [3], role: output}
cases:
  - name: c
    matrix: {DT: [float16, bfloat16, float32, float64]}
"""
    off = write("nan_off.yaml", text % ("off", ""))
    on = write("nan_on.yaml", text % ("on", "equal_nan: true"))
    r = Run(["run", "--format", "tap", off])
    check(r.rc == 1 and r.out.count("not ok ") == 4 and
          "2 of 3 elements differ; first at [0]: actual nan, expected nan"
          in r.out, "NaN is never close by default", r)
    r = Run(["run", "--format", "tap", on])
    check(r.rc == 0 and r.out.count("\nok ") == 4, "equal_nan: true", r)


@test
def load_time_warnings_in_run_and_list():
    # --no-default-plugins: the build tree's binary declares the plugins
    # built beside it (docs/cli.md), which would join the platform lists.
    for cmd in (["list"], ["run", "--format", "tap"]):
        r = Run(cmd + ["--no-default-plugins", TYPOS])
        check(r.rc == 0, " ".join(cmd) + ": warnings do not stop it", r)
        want = [
            TYPOS + ":9:26: warning: param 'UNUSED' of case 'c' is not "
            "used: no dtype, shape, init, value or tolerance names it",
            TYPOS + ":10:16: warning: 'platforms' of case 'c' names platform"
            " 'cpuu', which no backend provides: did you mean 'cpu'? known "
            "platforms: cpu, threads",
            TYPOS + ":11:13: warning: 'manual' of case 'c' names platform "
            "'thread', which no backend provides: did you mean 'threads'? "
            "known platforms: cpu, threads",
        ]
        got = [l for l in r.err.splitlines() if ": warning: " in l]
        check(got == want, "warnings:\n" + "\n".join(got), r)


@test
def unknown_platform_is_an_error_in_check_and_strict():
    for cmd in (["check"], ["list", "--strict-platforms"],
                ["run", "--strict-platforms"]):
        r = Run(cmd + ["--no-default-plugins", TYPOS])
        errs = [l for l in r.err.splitlines() if ": error: " in l]
        check(r.rc == 2 and r.out == "" and errs == [
            TYPOS + ":10:16: error: 'platforms' of case 'c' names platform "
            "'cpuu', which no backend provides: did you mean 'cpu'? expected "
            "one of: cpu, threads",
            TYPOS + ":11:13: error: 'manual' of case 'c' names platform "
            "'thread', which no backend provides: did you mean 'threads'? "
            "expected one of: cpu, threads"], " ".join(cmd), r)


@test
def directory_scan_ignores():
    d = os.path.join(TMP, "proj")
    good = open(SWEEP).read()
    bad = "scene: [unclosed\n"
    taptest.write(d, "scenes/a.yaml", good)
    taptest.write(d, "subprojects/dep/x.yaml", bad)
    taptest.write(d, "scenes/subprojects/y.yaml", bad)
    taptest.write(d, "build/z.yaml", bad)
    taptest.write(d, "build-asan/deep/z.yaml", bad)
    taptest.write(d, "scenes/build.yaml", good.replace("sweep", "named_build"))
    taptest.write(d, "gen/skip.yaml", bad)
    taptest.write(d, "scenes/tmp_1.yml", bad)
    taptest.write(d, "scenes/drafts/w.yaml", bad)
    taptest.write(d, ".scenetestignore", "# generated\ngen\n\n*/tmp_*.yml\n")
    r = Run(["check", "--ignore", "drafts", d])
    check(r.rc == 0 and r.out == "ok: 2 scenes, 22 cases\n",
          "subprojects, build*, .scenetestignore and --ignore skipped", r)
    r = Run(["check", d])
    check(r.rc == 2 and "drafts/w.yaml" in r.err, "without --ignore", r)
    r = Run(["check", os.path.join(d, "build", "z.yaml")])
    check(r.rc == 2, "a file named on the command line is never ignored", r)


@test
def unknown_golden_platform_is_checked_like_platforms():
    """docs/scene-format.md#load-errors: a golden_platform (scene or case) close to a known
    platform gets a warning with did-you-mean in list, run and check; a
    case whose golden backend the run lacks is skipped, not an error, so
    check passes and names the backends once (docs/cli.md), and
    --strict-platforms makes each an error."""
    path = write("gp.yaml", """\
scene: gp
kernel: add
golden_platform: thredas
args:
  - {tensor: a, dtype: float32, shape: [2]}
  - {tensor: b, dtype: float32, shape: [2]}
  - {tensor: out, dtype: float32, shape: [2], role: output}
cases:
  - name: c
  - {name: d, golden_platform: cpuu}
  - {name: e, golden_platform: reference}
""")
    r = Run(["list", "--no-default-plugins", path])
    check(r.rc == 0 and r.out == "gp::c\ngp::d\ngp::e\n", "list runs", r)
    check(r.err.count("warning: 'golden_platform'") == 2, "two warnings", r)
    check("platform 'thredas', which no backend provides: did you mean "
          "'threads'?" in r.err, "scene-level, did-you-mean", r)
    check("case 'd' names platform 'cpuu'" in r.err and
          "did you mean 'cpu'?" in r.err, "case-level", r)
    r = Run(["check", "--no-default-plugins", path])
    check(r.rc == 0 and r.err.count("warning: 'golden_platform'") == 2 and
          "[WARNING] 1 case needs golden backend 'thredas'" in r.err and
          "[WARNING] 1 case needs golden backend 'cpuu'" in r.err,
          "check warns and passes", r)
    r = Run(["check", "--strict-platforms", "--no-default-plugins", path])
    check(r.rc == 2 and r.err.count(": error: case ") == 2 and
          "case 'd' needs golden backend 'cpuu', which is not available: no "
          "plugin provides backend 'cpuu'; pass --plugin PATH of a plugin "
          "that does (docs/plugins.md) (did you mean 'cpu'?) "
          "(--strict-platforms)" in r.err,
          "errors under --strict-platforms", r)


# Matrix values that are expressions name their cases by the values' text
# (docs/scene-format.md#matrix-cases), spaces included: kernel add,
# golden sub, so B = 2 - 2 passes and B = 1 * 1 fails.
SPACES = write("spaces.yaml", """\
scene: sp
kernel: add
golden: sub
args:
  - {tensor: a, dtype: float32, shape: [N], init: {fill: 1}}
  - {tensor: b, dtype: float32, shape: [N], init: {fill: B}}
  - {tensor: out, dtype: float32, shape: [N], role: output}
cases:
  - name: grid
    params: {N: 4}
    matrix: {B: ["2 - 2", "1 * 1"]}
""")


@test
def case_names_with_spaces_survive():
    log = os.path.join(TMP, "spaces.log")
    rep = os.path.join(TMP, "spaces.json")
    r = Run(["run", "--no-default-plugins", "--format", "text",
             "--log-file", log, "--report", "json:" + rep, SPACES])
    check(r.rc == 1, "one case fails", r)
    check("PASS  sp::grid[B=2 - 2]" in r.out and
          "FAIL  sp::grid[B=1 * 1]" in r.out, "names as written", r)
    with open(log) as f:
        phases = [l for l in f if " phase " in l]
    check(phases and all(' scene=sp case="grid[B=' in l for l in phases),
          "TIMING quotes the case names:\n" + "".join(phases[:3]))
    # The rerun command, as printed, runs that case alone.
    m = re.search(r"rerun: (.*)\n", r.out)
    check(m is not None, "a rerun command", r)
    again = Run(shlex.split(m.group(1))[1:] + ["--format", "tap"])
    check(again.rc == 1 and "1..1\nnot ok 1 - sp::grid[B=1 * 1]\n" in
          again.out, "the rerun command reruns it", again)
    lf = Run(["run", "--no-default-plugins", "--format", "tap",
              "--rerun-failed", rep, SPACES])
    check(lf.rc == 1 and "1..1\nnot ok 1 - sp::grid[B=1 * 1]\n" in lf.out,
          "--rerun-failed finds it in the JSON report", lf)
    sel = Run(["run", "--no-default-plugins", "--format", "tap", "--case",
               "sp::grid[B=2 - 2]", SPACES])
    check(sel.rc == 0 and "1..1\nok 1 - sp::grid[B=2 - 2]\n" in sel.out,
          "--case selects it literally", sel)
    t = Run(["timing", log])
    check(t.rc == 0 and "sp::grid[B=1 * 1]  run" in t.out and
          "sp::grid[B=2 - 2]  run" in t.out, "timing reads the quoted names",
          t)


if __name__ == "__main__":
    sys.exit(main(TMP))
