# SPDX-License-Identifier: MIT
"""Everyday use (docs/cli.md): the configuration file (found upwards,
stopping at .git; --config, --no-config; precedence; --show-config; typos
at FILE:LINE:COL), TAP's totals line read by prove, --color, -v and -q,
and did-you-mean for options, --case selectors, roles, inits and dtypes.

Usage: test_everyday.py PATH/TO/scenetest PATH/TO/st_plugin_prints.so
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import taptest  # noqa: E402  (after sys.path)
from taptest import Run, check, main, test  # noqa: E402

EXE = os.path.abspath(sys.argv[1])
PRINTS = os.path.abspath(sys.argv[2])  # platform 'printer'
TMP = tempfile.mkdtemp(prefix="scenetest-everyday-")
taptest.EXE = EXE

ARGS = """\
args:
  - {tensor: a, dtype: float32, shape: [N], init: {fill: 1}}
  - {tensor: b, dtype: float32, shape: [N], init: {fill: B}}
  - {tensor: out, dtype: float32, shape: [N], role: output}
"""

# kernel add, golden sub: B = 0 passes, B = 1 fails. One of each verdict.
MIX = """\
scene: mix
kernel: add
golden: sub
""" + ARGS + """\
cases:
  - {name: ok1, params: {N: 4, B: 0}}
  - {name: ok2, params: {N: 4, B: 0}}
  - {name: bad, params: {N: 4, B: 1}}
  - {name: xf, params: {N: 4, B: 1}, expect: fail}
  - {name: xp, params: {N: 4, B: 0}, expect: fail}
  - {name: sk, params: {N: 4, B: 0}, golden_platform: torch}
"""

GOOD = """\
scene: good
kernel: add
golden: sub
""" + ARGS + """\
cases:
  - {name: zero, params: {N: 4, B: 0}}
  - {name: also_zero, params: {N: 8, B: 0}}
"""


write = taptest.writer(TMP)


def run(args, cwd=None, env=None):
    e = {"SCENETEST_LOG_LEVEL": ""}
    e.update(env or {})
    return Run(args, cwd=cwd, env=e)


def project(name, config, git=True):
    """TMP/name with a .git (unless git is False), scenetest.yaml holding
    config (None: no file), scenes/good.yaml and an empty sub/dir."""
    root = os.path.join(TMP, name)
    write(name + "/scenes/good.yaml", GOOD)
    os.makedirs(os.path.join(root, "sub", "dir"), exist_ok=True)
    if git:
        os.makedirs(os.path.join(root, ".git"), exist_ok=True)
    if config is not None:
        write(name + "/scenetest.yaml", config)
    return root


@test
def tap_totals_last_line_read_by_prove():
    path = write("mix.yaml", MIX)
    r = run(["run", "--no-config", "--no-default-plugins", "--format",
             "tap", path])
    lines = r.out.splitlines()
    check(r.rc == 1 and lines[-1] == "# 6 cases: 2 passed, 1 failed, 0 "
          "errors, 1 skipped, 1 xfail, 1 xpass", "the totals last", r)
    if shutil.which("prove") is None:
        return "SKIP prove is not installed"
    tap = os.path.join(TMP, "mix.tap")
    with open(tap, "w") as f:
        f.write(r.out)
    p = subprocess.run(["prove", "-e", "cat", tap], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=60)
    out = p.stdout.decode()
    check(p.returncode != 0 and "Result: FAIL" in out and
          "Failed 2/6 subtests" in out, "prove counts fail and xpass:\n" + out)
    for bad in ("parse", "Unknown", "unexpected"):
        check(bad not in out, "prove complains (%s):\n%s" % (bad, out))
    good = write("good.yaml", GOOD)
    r = run(["run", "--no-config", "--format", "tap", good])
    with open(tap, "w") as f:
        f.write(r.out)
    p = subprocess.run(["prove", "-e", "cat", tap], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=60)
    check(r.out.splitlines()[-1] == "# 2 cases: 2 passed, 0 failed, 0 "
          "errors, 0 skipped, 0 xfail, 0 xpass" and p.returncode == 0,
          "a green run's totals; prove passes:\n" + p.stdout.decode(), r)


@test
def color_auto_always_never():
    path = write("good.yaml", GOOD)
    base = ["run", "--no-config", "--format", "text", path]
    # Off a terminal auto and never are plain; always colours anyway,
    # NO_COLOR and TERM=dumb notwithstanding.
    for extra, env, want in (([], {}, False),
                             (["--color", "auto"], {"NO_COLOR": ""}, False),
                             (["--color", "never"], {}, False),
                             (["--color", "always"], {}, True),
                             (["--color", "always"], {"NO_COLOR": "1",
                                                      "TERM": "dumb"}, True)):
        r = run(base + extra, env=env)
        check(r.rc == 0 and (("\x1b[32mPASS" in r.out) == want) and
              (("\x1b" in r.out) == want),
              "%r %r: colour %s" % (extra, env, want), r)
    r = run(base + ["--color", "sometimes"])
    check(r.rc == 2 and "--color must be auto, always or never (got "
          "'sometimes')" in r.err, "a bad --color", r)


@test
def verbose_and_quiet():
    path = write("mix.yaml", MIX)
    base = ["run", "--no-config", "--no-default-plugins", "--format", "text"]
    r = run(base + ["-q", path])
    lines = r.out.splitlines()
    check(r.rc == 1 and not any(ln.startswith(("PASS", "SKIP", "XFAIL"))
                                for ln in lines) and
          [ln.split()[0] + " " + ln.split()[1] for ln in lines
           if ln.startswith(("FAIL", "XPASS"))] ==
          ["FAIL mix::bad", "XPASS mix::xp"] and
          lines[-1].startswith("6 cases: 2 passed, 1 failed, 0 errors, 1 "
                               "skipped, 1 xfailed, 1 xpassed"),
          "-q: the failures and the summary", r)
    r = run(base + [path])
    check(sum(ln.startswith("PASS") for ln in r.out.splitlines()) == 2 and
          "phases:" not in r.out, "default: passes, no phases", r)
    p = write("p.yaml", "scene: p\nkernel: add\n" + ARGS +
              "cases:\n  - {name: c, params: {N: 4, B: 0}}\n")
    vb = ["run", "--no-config", "--plugin", PRINTS, "--platform", "printer",
          "--format", "text", "--skip-golden", p]
    r = run(vb)
    check(r.rc == 0 and "printed by a kernel" not in r.out,
          "without -v a pass shows no output", r)
    r = run(vb + ["-v"])
    lines = r.out.splitlines()
    check(r.rc == 0 and lines[0].startswith("PASS  p::c") and
          re.match(r"^      phases: args [0-9.]+ [mun]?s, ", lines[1]) and
          " run " in lines[1] and lines[2] == "      output:" and
          "        ok 999 - printed by a kernel" in lines,
          "-v: phases and output of a pass", r)
    r = run(vb + ["-v", "-q"])
    check(r.rc == 2 and "-v and -q cannot be used together" in r.err,
          "-v with -q", r)


@test
def did_you_mean_option_and_selector():
    path = write("mix.yaml", MIX)
    r = run(["run", "--no-config", "--platfrom", "cpu", path])
    check(r.rc == 2 and r.err.strip() == "scenetest: error: unknown option "
          "'--platfrom'; did you mean --platform? (see 'scenetest --help')",
          "an option typo", r)
    r = run(["run", "--no-config", "--zzzzzz", path])
    check(r.rc == 2 and "did you mean" not in r.err and
          "unknown option '--zzzzzz'" in r.err, "nothing near", r)
    r = run(["run", "--no-config", "--case", "mix::ok3", path])
    check(r.rc == 2 and r.err.strip() == "scenetest: error: --case "
          "'mix::ok3' matches no case; did you mean 'mix::ok1', 'mix::ok2'?",
          "the nearest case ids", r)
    r = run(["list", "--no-config", "--case", "::xq", path])
    check(r.rc == 2 and "did you mean 'mix::xf', 'mix::xp'?" in r.err,
          "a ::case selector", r)
    r = run(["run", "--no-config", "--case", "nothing_like_it", path])
    check(r.rc == 2 and "did you mean" not in r.err and "scenes: mix" in
          r.err, "nothing near: the scenes", r)


@test
def did_you_mean_role_init_dtype():
    base = "scene: s\nkernel: add\nargs:\n" \
           "  - {tensor: a, dtype: float32, shape: [4]}\n" \
           "  - {tensor: b, dtype: %s, shape: [4]}\n" \
           "  - {tensor: out, dtype: float32, shape: [4], %s}\n" \
           "cases:\n  - {name: c}\n"
    for dt, extra, want in (
            ("float32", "role: ouput", "6:53: error: expected one of: "
             "input, output, inout, scratch for 'role', got 'ouput'; did "
             "you mean 'output'?"),
            ("float32", "role: output, init: zeroes", "got 'zeroes'; did "
             "you mean 'zeros'?"),
            ("flaot32", "role: output", "5:24: error: dtype 'flaot32' of "
             "'b' is neither a dtype nor a param of case 'c'; did you mean "
             "'float32'?")):
        path = write("dym.yaml", base % (dt, extra))
        r = run(["check", "--no-config", path])
        check(r.rc == 2 and want in r.err, "%s / %s" % (dt, extra), r)


@test
def config_found_upwards_and_stops_at_git():
    root = project("up", "platform: threads\njobs: 2\npaths: [scenes]\n")
    r = run(["run", "--format", "tap"], cwd=os.path.join(root, "sub", "dir"))
    check(r.rc == 0 and "# 2 cases: 2 passed" in r.out,
          "found two levels up; its paths relative to itself", r)
    r = run(["run", "--show-config"], cwd=os.path.join(root, "sub"))
    cfg = os.path.join(root, "scenetest.yaml")
    check(r.rc == 0 and ("platform: threads  # %s:1" % cfg) in r.out and
          ("jobs: 2  # %s:2" % cfg) in r.out and
          ("paths: [%s/scenes]  # %s" % (root, cfg)) in r.out and
          "seed: 0  # default" in r.out, "--show-config", r)
    # A .git between the directory and the file ends the search.
    inner = os.path.join(root, "sub")
    os.makedirs(os.path.join(inner, ".git"))
    r = run(["run", "--show-config", "x"], cwd=os.path.join(inner, "dir"))
    check(r.rc == 0 and "# configuration file: (none)" in r.out and
          "platform: cpu  # default" in r.out, "stops at .git", r)
    # A .git file (a worktree) counts too.
    os.rmdir(os.path.join(inner, ".git"))
    write("up/sub/.git", "gitdir: elsewhere\n")
    r = run(["run", "--show-config", "x"], cwd=os.path.join(inner, "dir"))
    check("# configuration file: (none)" in r.out, "a .git file stops it", r)
    r = run(["run", "--no-config", "--format", "tap"], cwd=root)
    check(r.rc == 2 and "needs at least one PATH" in r.err,
          "--no-config: no paths from the file", r)


@test
def config_precedence_cli_env_file():
    root = project("prec", "log-level: error\njobs: 2\nplugin: [a.so]\n"
                   "platform: threads\n")
    cfg = os.path.join(root, "scenetest.yaml")
    r = run(["run", "--show-config", "-j", "3", "scenes"], cwd=root,
            env={"SCENETEST_LOG_LEVEL": "info"})
    check(r.rc == 0 and "jobs: 3  # command line" in r.out and
          "log-level: info  # SCENETEST_LOG_LEVEL" in r.out and
          ("plugin: [%s/a.so]  # %s:3" % (root, cfg)) in r.out,
          "CLI over file; env over file; the plugin path made absolute", r)
    r = run(["run", "--show-config", "--log-level", "warning", "--plugin",
             "b.so", "scenes"], cwd=root, env={"SCENETEST_LOG_LEVEL": "info"})
    check("log-level: warning  # command line" in r.out and
          "plugin: [b.so]  # command line" in r.out,
          "the command line over env; a list on it replaces the file's", r)
    r = run(["run", "--show-config", "scenes"], cwd=root)
    check("log-level: error  # %s:1" % cfg in r.out, "the file's level", r)
    # --config FILE names another file; its paths are relative to it.
    other = write("elsewhere/conf.yaml", "platform: cpu\npaths: [../prec/"
                  "scenes]\n")
    r = run(["run", "--config", other, "--format", "tap"], cwd=TMP)
    check(r.rc == 0 and "# 2 cases: 2 passed" in r.out, "--config FILE", r)
    r = run(["run", "--config", os.path.join(TMP, "missing.yaml"), "x"])
    check(r.rc == 2 and "cannot read configuration file" in r.err,
          "a missing --config", r)
    r = run(["run", "--config", TMP, "x"])
    check(r.rc == 2 and "is not a regular file of at most 1 MiB" in r.err,
          "a directory as --config", r)
    r = run(["run", "--config=", "x"])
    check(r.rc == 2 and "--config needs a file name" in r.err,
          "an empty --config", r)


@test
def config_errors_at_file_line_col():
    cases = (
        ("platform: cpu\nplatfrom: threads\n", "2:1: error: unknown key "
         "'platfrom' in the configuration file; did you mean 'platform'?"),
        ("path: [scenes]\n", "1:1: error: unknown key 'path' in the "
         "configuration file; did you mean 'paths'?"),
        ("zzzz: 1\n", "1:1: error: unknown key 'zzzz' in the configuration "
         "file; its keys are long option names"),
        ("jobs: lots\n", "1:7: error: --jobs"),
        ("jobs: [1, 2]\n", "1:8: error: 'jobs' takes one value, not a list"),
        ("isolate: maybe\n", "1:10: error: 'isolate' is true or false (got "
         "'maybe')"),
        ("jobs: 1\njobs: 2\n", "2:1: error: key 'jobs' given twice"),
        ("a: {b: 1}\n", "1:4: error: expected a scalar"),
        ("- 1\n", "1:1: error: expected a mapping of option names"),
        ("jobs: &x 1\n", "1:7: error: anchors and tags are not allowed"),
        ("jobs: [1\n", "error: "),
        ("jobs: *x\n", "1:7: error: aliases are not allowed"),
        ("jobs: !!int 1\n", "1:7: error: anchors and tags are not allowed"),
        ("jobs: 1\n---\njobs: 2\n", "2:1: error: the configuration file "
         "holds one YAML document"),
        ("paths: ['']\n", "1:9: error: 'paths' needs a scene file or a "
         "directory"),
        ("case: [%s]\n" % ", ".join(["a"] * 1025), "error: more than 1024 "
         "values in the configuration file"),
    )
    for text, want in cases:
        root = project("typo", text)
        r = run(["run", "scenes"], cwd=root)
        lines = r.err.strip().splitlines()
        check(r.rc == 2 and len(lines) == 1 and
              lines[0].startswith(os.path.join(root, "scenetest.yaml") + ":")
              and want in lines[0], "%r -> %r" % (text, want), r)
    root = project("typo", "help: true\n")
    r = run(["run", "scenes"], cwd=root)
    check(r.rc == 2 and "unknown key 'help'" in r.err,
          "command-line-only options are not keys", r)
    # An empty file is no error; a flag set false leaves it unset.
    root = project("typo", "")
    r = run(["run", "--format", "tap", "scenes"], cwd=root)
    check(r.rc == 0, "an empty file", r)
    root = project("typo", "isolate: false\nplatform: cpu\n")
    r = run(["run", "--show-config", "scenes"], cwd=root)
    check("isolate: false  # default" in r.out, "false leaves a flag", r)


@test
def config_file_is_never_a_scene():
    root = project("skip", "jobs: 1\n")
    shutil.copy(os.path.join(root, "scenetest.yaml"),
                os.path.join(root, "scenes", "scenetest.yaml"))
    r = run(["list", "--no-config", root])
    check(r.rc == 0 and r.out.split() == ["good::zero", "good::also_zero"],
          "directory scans skip scenetest.yaml", r)


if __name__ == "__main__":
    sys.exit(main(TMP))
