#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The integration examples, tried as a new user would, each from a clean
directory (TAP 13):

  - examples/subproject/: scenetest as a Meson subproject; find_program
    ('scenetest') finds the harness, -Dscenetest:tests=false (the
    example's default_options) adds none of our tests to the parent's
    `meson test`, and the parent's TAP suite shows each case and, with
    --print-errorlogs, a failing case's message;
  - examples/installed/: after `meson install`, a program and a cmocka
    test built with pkg-config's flags for scenetest, run by meson test.

Usage: examples_check.py SOURCE_ROOT BUILD_ROOT. Exit 77 (skip) without
meson, ninja or pkg-config on PATH."""
import os
import shutil
import subprocess
import sys
import tempfile

ROOT, BUILD = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
for tool in ("meson", "ninja", "pkg-config"):
    if shutil.which(tool) is None:
        print("1..0 # SKIP %s not on PATH" % tool)
        sys.exit(0)  # the 1..0 plan is meson's TAP skip; 77 would be an error
TMP = tempfile.mkdtemp(prefix="scenetest-examples-")
sys.path.insert(0, os.path.join(ROOT, "tests", "cli"))
import taptest  # noqa: E402
from taptest import check, main, test  # noqa: E402


class Cmd:
    def __init__(self, args, cwd, env=None):
        e = dict(os.environ)
        e.update(env or {})
        p = subprocess.run(args, cwd=cwd, env=e, capture_output=True,
                           text=True, timeout=900)
        self.args, self.rc, self.out, self.err = args, p.returncode, \
            p.stdout, p.stderr

    def describe(self):
        return "%r rc=%d\n%s\n%s" % (self.args, self.rc, self.out[-3000:],
                                     self.err[-3000:])


def ok(cmd, what):
    check(cmd.rc == 0, what + "\n" + cmd.describe())
    return cmd


@test
def subproject__find_program_tap_suite_and_no_tests_of_ours():
    proj = os.path.join(TMP, "parent")
    shutil.copytree(os.path.join(ROOT, "examples", "subproject"), proj)
    os.makedirs(os.path.join(proj, "subprojects"))
    # A clean copy of the tracked sources (no build directories of ours).
    files = subprocess.run(["git", "-C", ROOT, "ls-files", "-co",
                            "--exclude-standard"], capture_output=True,
                           text=True).stdout.split()
    if not files:
        return "SKIP not a git checkout"
    sub = os.path.join(proj, "subprojects", "scenetest")
    for f in files:
        src = os.path.join(ROOT, f)
        if not os.path.isfile(src) or f.startswith("build"):
            continue
        dst = os.path.join(sub, f)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(src, dst)
    # One failing case, so that the parent's log shows its message.
    with open(os.path.join(proj, "scenes", "wrong.yaml"), "w") as f:
        f.write("scene: my_wrong\nkernel: add\ngolden: sub\nargs:\n"
                "  - {tensor: a, dtype: float32, shape: [4], init: ones}\n"
                "  - {tensor: b, dtype: float32, shape: [4], init: ones}\n"
                "  - {tensor: out, dtype: float32, shape: [4], "
                "role: output}\ncases:\n  - name: differs\n")
    ok(Cmd(["meson", "setup", "build"], proj), "meson setup")
    tests = ok(Cmd(["meson", "test", "-C", "build", "--list"], proj),
               "meson test --list")
    listed = [l for l in tests.out.splitlines()
              if l.strip() and not l.startswith("ninja:")]
    check(listed == ["scenes"], "only the parent's test: %r" % listed)
    # --print-errorlogs shows the failing case and its message (the
    # harness logs it on stderr under TAP: meson keeps the YAML
    # diagnostics out of its console); --verbose shows every case.
    quiet = Cmd(["meson", "test", "-C", "build", "--print-errorlogs"], proj)
    log = quiet.out + quiet.err
    check(quiet.rc != 0 and "my_wrong::differs" in log and
          "[ERROR] my_wrong::differs: fail: tensor 'out': 4 of 4 elements "
          "differ" in log, "the failing case and its message\n" +
          quiet.describe())
    run = Cmd(["meson", "test", "-C", "build", "--verbose"], proj)
    for want in ("my_add::small OK", "my_add::odd OK",
                 "my_wrong::differs FAIL"):
        check(want in run.out, "%r in meson test --verbose\n%s" %
              (want, run.describe()))


@test
def installed__program_and_cmocka_test_with_pkg_config():
    dest = os.path.join(TMP, "dest")
    ok(Cmd(["meson", "install", "-C", BUILD, "--no-rebuild", "--destdir",
            dest], ROOT), "meson install --destdir")
    pcs = [os.path.join(d, f) for d, _, fs in os.walk(dest) for f in fs
           if f == "scenetest.pc"]
    check(len(pcs) == 1, "one scenetest.pc installed: %r" % pcs)
    libdir = [os.path.join(d) for d, _, fs in os.walk(dest)
              if any(f.startswith("libscenetest.so") for f in fs)]
    # The installed scenetest.pc first; the inherited path still finds
    # yaml-0.1, which it requires (on a machine whose libyaml is not in
    # the default pkg-config path).
    inherited = os.environ.get("PKG_CONFIG_PATH")
    env = {"PKG_CONFIG_PATH": os.path.dirname(pcs[0]) +
           (os.pathsep + inherited if inherited else ""),
           "PKG_CONFIG_SYSROOT_DIR": dest,
           "LD_LIBRARY_PATH": os.pathsep.join(libdir)}
    flags = ok(Cmd(["pkg-config", "--cflags", "--libs", "scenetest"], TMP,
                   env), "pkg-config --cflags --libs scenetest")
    check(dest in flags.out, "the flags point into the installed tree: " +
          flags.out)
    proj = os.path.join(TMP, "installed")
    shutil.copytree(os.path.join(ROOT, "examples", "installed"), proj)
    ok(Cmd(["meson", "setup", "build"], proj, env), "meson setup")
    run = ok(Cmd(["meson", "test", "-C", "build", "--print-errorlogs"],
                 proj, env), "meson test")
    check("2/2" in run.out or "Ok:                 2" in run.out,
          "both tests ran\n" + run.describe())


sys.exit(main(TMP))
