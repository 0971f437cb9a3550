# SPDX-License-Identifier: MIT
"""What the CLI test scripts share: running the binary, checks that fail
with the run's output, a test registry, and the TAP 13 main loop.

Usage in a script:  from taptest import Run, check, test, main
                    ...  sys.exit(main(TMP))
A script that cannot run at all (a tool or module missing) ends with
sys.exit(skip_all(reason, TMP)): a TAP plan of 0 with the reason, exit 77
(a skip for meson's exitcode protocol too).
Run needs taptest.EXE set first (the scenetest binary)."""
import os
import shutil
import subprocess
import traceback

EXE = None
TESTS = []


class Run:
    """One run of the binary: rc, out, err; NO_COLOR set. With shell=True,
    args is a shell command line instead."""

    def __init__(self, args, env=None, cwd=None, stdout=subprocess.PIPE,
                 shell=False):
        e = dict(os.environ)
        e["NO_COLOR"] = "1"
        e.update(env or {})
        cmd = args if shell else [EXE] + args
        p = subprocess.run(cmd, stdout=stdout, stderr=subprocess.PIPE, env=e,
                           cwd=cwd, timeout=120, shell=shell)
        self.args = args
        self.rc = p.returncode
        self.out = (p.stdout or b"").decode("utf-8", "replace")
        self.err = p.stderr.decode("utf-8", "replace")

    def describe(self):
        return "args=%r rc=%d\nstdout:\n%s\nstderr:\n%s" % (
            self.args, self.rc, self.out, self.err)


class Failure(Exception):
    pass


# The vadd scene's three tensors: a + b into out, float32, shape [N].
VADD_ARGS = """\
args:
  - {tensor: a, dtype: float32, shape: [N], init: {uniform: [-1, 1]}}
  - {tensor: b, dtype: float32, shape: [N], init: {fill: 3.0}}
  - {tensor: out, dtype: float32, shape: [N], role: output}
"""


def vadd_scene(scene, cases, keys=""):
    """A float32 add scene named scene over VADD_ARGS; keys are extra
    scene-level lines after kernel, cases the text under cases:."""
    return "scene: %s\nkernel: add\n%s%scases:\n%s" % (scene, keys,
                                                        VADD_ARGS, cases)


# The smallest scene that passes on every platform: one float32 add
# case; the CLI scripts start from it.
VADD_SCENE = vadd_scene("vadd", "  - name: small\n    params: {N: 16}\n")


def check(cond, what, run=None):
    if not cond:
        raise Failure(what + ("\n" + run.describe() if run else ""))


def write(tmp, name, text):
    """Writes text to tmp/name (directories made) and returns the path."""
    path = os.path.join(tmp, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    return path


def test(fn):
    """Registers fn as a test: it passes by returning, fails by raising;
    returning "SKIP reason" skips it."""
    TESTS.append(fn)
    return fn


def skip_all(reason, tmp=None):
    """Prints a TAP plan that skips everything, removes tmp; returns 77,
    meson's skip for tests of protocol 'exitcode'. (A test of protocol
    'tap' skips with the same plan and exit 0: there any non-zero exit is
    an error.)"""
    print("TAP version 13")
    print("1..0 # SKIP %s" % reason)
    if tmp:
        shutil.rmtree(tmp, ignore_errors=True)
    return 77


def main(tmp):
    """Runs every registered test, prints TAP 13, removes tmp; returns the
    exit status (1 if any failed)."""
    print("TAP version 13")
    print("1..%d" % len(TESTS))
    failed = 0
    for i, fn in enumerate(TESTS, 1):
        name = fn.__name__
        try:
            res = fn()
        except Failure as e:
            failed += 1
            print("not ok %d - %s" % (i, name))
            for line in str(e).splitlines():
                print("# " + line)
            continue
        except Exception:  # a crash of the test itself
            failed += 1
            print("not ok %d - %s" % (i, name))
            for line in traceback.format_exc().splitlines():
                print("# " + line)
            continue
        if isinstance(res, str) and res.startswith("SKIP "):
            print("ok %d - %s # SKIP %s" % (i, name, res[5:]))
        else:
            print("ok %d - %s" % (i, name))
    shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failed else 0
