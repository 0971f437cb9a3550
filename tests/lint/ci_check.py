#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""ci/test.sh's own logic, with meson, ninja and the slow steps replaced by
stubs that record what they were asked (TAP 13):

  - a build directory that already exists (ci/run-scenes.sh configured
    build/ before ci/deps.sh --full installed libtorch and chromium) is
    configured again with `meson setup --reconfigure`, so that the torch
    plugin and its tests are not left out; a new one with `meson setup`;
  - the last two lines are "N skipped" and "N passed, N failed" (CI reads
    the last line exactly), counted over every run's testlog.json.

Usage: ci_check.py SOURCE_ROOT"""
import os
import shutil
import stat
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(sys.argv[1])
TMP = tempfile.mkdtemp(prefix="scenetest-ci-")
sys.path.insert(0, os.path.join(ROOT, "tests", "cli"))
from taptest import check, main, test  # noqa: E402

# meson: setup makes DIR/build.ninja and a program that passes; test
# writes a log of two passes and one skip (under --logbase NAME, the log
# NAME.json, as valgrind's run asks).
FAKE_MESON = r"""#!/bin/sh
echo "meson $*" >> "$CI_LOG"
case "$1" in
setup)
  shift
  [ "$1" = --reconfigure ] && shift
  mkdir -p "$1/harness" && touch "$1/build.ninja" &&
  printf '#!/bin/sh\nexit 0\n' > "$1/harness/scenetest" &&
  chmod +x "$1/harness/scenetest" ;;
test)
  dir= base=testlog
  while [ $# -gt 0 ]; do
    case "$1" in
    -C) dir=$2; shift ;;
    --logbase) base=$2; shift ;;
    esac
    shift
  done
  mkdir -p "$dir/meson-logs"
  printf '{"result": "OK"}\n{"result": "SKIP"}\n{"result": "OK"}\n' \
    > "$dir/meson-logs/$base.json" ;;
esac
"""
FAKE_NINJA = '#!/bin/sh\necho "ninja $*" >> "$CI_LOG"\n'
# ci/ scripts that install or run for minutes.
STUB_DEPS = "#!/bin/sh\nexit 0\n"
STUB_FUZZ = ("#!/bin/sh\nmkdir -p build-fuzz\n"
             "echo '{\"result\": \"OK\"}' > build-fuzz/fuzz.json\n")


def executable(path, text):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)


def fake_repo():
    repo = os.path.join(TMP, "repo")
    shutil.copytree(os.path.join(ROOT, "ci"), os.path.join(repo, "ci"))
    executable(os.path.join(repo, "ci", "deps.sh"), STUB_DEPS)
    executable(os.path.join(repo, "ci", "fuzz-smoke.sh"), STUB_FUZZ)
    bindir = os.path.join(TMP, "bin")
    os.makedirs(bindir)
    executable(os.path.join(bindir, "meson"), FAKE_MESON)
    executable(os.path.join(bindir, "ninja"), FAKE_NINJA)
    # ci/test.sh runs the valgrind step only where valgrind is on PATH;
    # the fake meson never calls it, but it must be found (a GPU machine
    # has none).
    executable(os.path.join(bindir, "valgrind"), STUB_DEPS)
    # build/ as ci/run-scenes.sh left it: configured, never tested.
    os.makedirs(os.path.join(repo, "build"))
    open(os.path.join(repo, "build", "build.ninja"), "w").close()
    return repo, bindir


RUN = None


def run_test_sh():
    global RUN
    if RUN is None:
        repo, bindir = fake_repo()
        log = os.path.join(TMP, "log")
        env = dict(os.environ)
        env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
        env["CI_LOG"] = log
        p = subprocess.run(["bash", os.path.join(repo, "ci", "test.sh")],
                           env=env, capture_output=True, text=True,
                           timeout=120)
        with open(log) as f:
            RUN = (p, f.read().splitlines())
    return RUN


@test
def test_sh__existing_build_dirs_are_reconfigured():
    p, calls = run_test_sh()
    setups = [c for c in calls if c.startswith("meson setup")]
    check("meson setup --reconfigure build" in setups,
          "build/ reconfigured: %r\n%s" % (setups, p.stderr))
    check(any(c.startswith("meson setup build-asan -Db_sanitize=address")
              for c in setups),
          "a new build-asan configured: %r" % setups)
    check(not any(c == "meson setup build" for c in setups),
          "build/ not set up anew: %r" % setups)


@test
def test_sh__skipped_line_then_the_totals_line_last():
    p, _ = run_test_sh()
    lines = p.stdout.rstrip("\n").split("\n")
    # Two passes and a skip from each of build, valgrind, build-asan and
    # build-tsan; build-release's step and the fuzz smoke pass.
    check(lines[-2:] == ["4 skipped", "10 passed, 0 failed"] and
          p.returncode == 0,
          "last lines %r, exit %d\n%s" % (lines[-2:], p.returncode,
                                          p.stderr))


sys.exit(main(TMP))
