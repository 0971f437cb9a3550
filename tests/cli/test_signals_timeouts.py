# SPDX-License-Identifier: MIT
"""Signals and timeouts on the process side (docs/level3.md#phases, docs/cli.md#options, docs/level3.md#limits: level 3,
--isolate, --timeout, SIGINT), printing TAP 13 through taptest:
- SIGINT to the harness alone leaves no isolated child, level-3 worker or
  grandchild running;
- --timeout (fractional seconds) and a case's timeout key end hanging
  cases, at level 2 and 3, with and without --isolate.

Usage: test_signals_timeouts.py PATH/TO/scenetest PATH/TO/st_plugin_hangs.so

Each test pins one behaviour a user relies on, run through the binary on
scene files written to a temporary directory, with a plugin whose kernel
never returns (platform 'hanger'). Waits are bounded polls of /proc, never
sleeps as synchronization. Standard library only.
"""

import os
import signal
import subprocess
import sys
import tempfile
import time

EXE = os.path.abspath(sys.argv[1])
PLUGIN = os.path.abspath(sys.argv[2])  # platform 'hanger': add never returns
TMP = tempfile.mkdtemp(prefix="scenetest-signals-")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import taptest  # noqa: E402  (after sys.path)
from taptest import check, main, test  # noqa: E402

taptest.EXE = EXE

SCENE = """\
scene: %(name)s
%(level)skernel: add
args:
  - {tensor: a, dtype: float32, shape: [N], init: ones}
  - {tensor: b, dtype: float32, shape: [N], init: ones}
  - {tensor: out, dtype: float32, shape: [N], role: output}
cases:
  - {name: one, params: {N: 64}%(timeout)s}
  - {name: two, params: {N: 64}}
"""


def write(name, level3=False, timeout=None):
    path = os.path.join(TMP, name + ".yaml")
    with open(path, "w") as f:
        f.write(SCENE % {
            "name": name,
            "level": "level: 3\nworkers: 2\n" if level3 else "",
            "timeout": ", timeout: %s" % timeout if timeout else ""})
    return path


L2 = write("hang2")
L3 = write("hang3", level3=True)
L2_CASE_TIMEOUT = write("hang2t", timeout="0.2")


def stat_of(pid):
    """(state, ppid, starttime) of a process, or None once it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            s = f.read()
    except OSError:
        return None
    rest = s[s.rindex(")") + 2:].split()
    return rest[0], int(rest[1]), rest[19]


def descendants(root):
    """{pid: starttime} of every live (not zombie) descendant of root."""
    kids = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            st = stat_of(int(d))
            if st is not None and st[0] != "Z":
                kids.setdefault(st[1], []).append((int(d), st[2]))
    out, todo = {}, [root]
    while todo:
        for pid, start in kids.get(todo.pop(), []):
            out[pid] = start
            todo.append(pid)
    return out


def alive(pid, start):
    st = stat_of(pid)
    return st is not None and st[0] != "Z" and st[2] == start


def wait_for(pred, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.02)  # a bounded poll, not synchronization by sleep
    return pred()


def run(args, timeout=60):
    t0 = time.monotonic()
    rc, out, err = taptest.run_exe(args, timeout=timeout)
    return rc, out, err, time.monotonic() - t0


def sigint_leaves_nothing(extra, scene, want, code=-signal.SIGINT,
                          twice=False):
    """SIGINT to the harness alone (kill(1), not a terminal's ^C to the
    whole group) while `want` descendants hang: none may be left. The
    harness dies of it (code -SIGINT), or, supervising, exits 128 + 2."""
    p = subprocess.Popen(
        [EXE, "run", "--plugin", PLUGIN, "--platform", "hanger",
         "--log-level", "warning", "--format", "tap"] + extra + [scene],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True)
    try:
        seen = {}

        def started():
            seen.update(descendants(p.pid))
            return len(seen) >= want
        check(wait_for(started, 30), "%d descendants started, saw %r"
              % (want, seen))
        p.send_signal(signal.SIGINT)
        if twice:
            # The first is noted; the next ends it. Sent again until it
            # does (a bounded retry: two sent at once may count as one).
            end = time.monotonic() + 30
            while p.poll() is None and time.monotonic() < end:
                p.send_signal(signal.SIGINT)
                time.sleep(0.1)
        p.wait(timeout=30)
        check(p.returncode == code,
              "the harness ends with %r on SIGINT, got %r" % (
                  code, p.returncode))
        check(wait_for(lambda: not any(alive(q, s) for q, s in seen.items()),
                       10),
              "children of a killed harness still run: %r" % sorted(
                  q for q, s in seen.items() if alive(q, s)))
    finally:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass
        p.wait()


@test
def isolate__sigint_to_harness_ends_isolated_children():
    # Two isolated children, each running the hanging kernel.
    # The harness handles SIGINT (docs/reliability.md#interrupts): it kills its children's
    # process groups, finishes the report and exits 128 + 2.
    sigint_leaves_nothing(["--isolate", "-j", "2"], L2, 2,
                          128 + signal.SIGINT)


@test
def isolate__sigint_to_harness_ends_level3_grandchildren():
    # One isolated child and its two level-3 workers.
    sigint_leaves_nothing(["--isolate"], L3, 3, 128 + signal.SIGINT)


@test
def level3__sigint_to_harness_ends_workers():
    # In-process: the first SIGINT is noted (the level-3 case's workers
    # hang); the test's second one ends the harness.
    sigint_leaves_nothing(["--no-supervise"], L3, 2, twice=True)
    # Supervised: the supervised child and its workers.
    sigint_leaves_nothing([], L3, 3, 128 + signal.SIGINT)


@test
def timeout__fractional_seconds_end_hanging_cases():
    for extra, scene, how in (
            ([], L3, "(level-3 workers killed and replaced)"),
            ([], L2, "(child pid "),
            # Isolated, the level-3 case's own timeout inside its child
            # is the verdict; the child's deadline is a backstop after it
            # (the two used to race).
            (["--isolate", "-j", "2"], L3,
             "(level-3 workers killed and replaced)")):
        rc, out, err, took = run(
            ["run", "--plugin", PLUGIN, "--platform", "hanger", "--timeout",
             "0.25", "--format", "tap", "--log-level", "warning"] + extra +
            [scene])
        check(rc == 1, "exit 1 for %r, got %d\n%s%s" % (extra, rc, out, err))
        check(out.count("not ok ") == 2 and
              out.count('message: "timed out after 0.25 s ' + how) == 2,
              "both cases time out at 0.25 s for %r:\n%s" % (extra, out))
        check(took < 20, "bounded: took %.1f s" % took)


@test
def timeout__case_key_overrides_the_option():
    # 'one' says timeout: 0.2; 'two' runs under --timeout 0.4.
    rc, out, err, _ = run(
        ["run", "--plugin", PLUGIN, "--platform", "hanger", "--timeout",
         "0.4", "--format", "tap", "--log-level", "warning", L2_CASE_TIMEOUT])
    check(rc == 1, "exit 1, got %d\n%s%s" % (rc, out, err))
    check('message: "timed out after 0.2 s ' in out and
          'message: "timed out after 0.4 s ' in out,
          "each case has its own deadline:\n" + out)


if __name__ == "__main__":
    sys.exit(main(TMP))
