# SPDX-License-Identifier: MIT
"""The supervised run (docs/reliability.md#the-process-model, docs/reliability.md) against a plugin whose
kernel misbehaves as its scalar says (tests/plugins/test_plugin_src.c,
MISBEHAVES): exit(0), _exit(0), SIGSEGV, abort, heap corruption, closed
fd 1 and 2, a forged record line, a sleep past --timeout; interrupts
(SIGINT, SIGTERM) in TAP and text; the process model (a level-3 pool from
the clean process); and the defects D1, D5, D11, D14, D15 of issue 9.
Each run is checked with the real consumer: prove reads the TAP, json
reads every --events line. Waits are on a FIFO the kernel writes to, or
bounded polls of /proc, never sleeps.

Usage: test_supervise.py SCENETEST PLUGIN SANITIZE"""
import json
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import taptest  # noqa: E402
from taptest import check, events, main, test, write  # noqa: E402

taptest.EXE = EXE = os.path.abspath(sys.argv[1])
PLUGIN = os.path.abspath(sys.argv[2])
SANITIZED = len(sys.argv) > 3 and sys.argv[3] not in ("", "none")
TMP = tempfile.mkdtemp(prefix="st_supervise_")

# ASan turns SIGSEGV into its own report and exit; the crash tests need
# the signal itself (docs/architecture.md#tests).
ENV = dict(os.environ, NO_COLOR="1",
           ASAN_OPTIONS="handle_segv=0:detect_leaks=0:" +
           os.environ.get("ASAN_OPTIONS", ""))

BEHAVIOUR = {"exit0": 1, "_exit": 2, "segv": 3, "abort": 4, "heap": 5,
             "closefds": 6, "forge": 7, "sleep": 8, "fifo": 9, "parent": 10,
             "prints": 11, "fds": 12, "slow": 13, "spawn": 14, "orphan": 15,
             "cuepause": 16, "spawnhang": 17, "alive": 18}


def scene(name, bad, after=2, before=1, scene_name="sv", level=2,
          workers=None):
    """A scene of `before` good cases, the case `bad`, `after` good ones."""
    cases = ["  - {name: good%d, params: {B: 0}}" % i for i in range(before)]
    cases.append("  - {name: %s, params: {B: %d}}" % (bad, BEHAVIOUR[bad]))
    cases += ["  - {name: after%d, params: {B: 0}}" % i for i in range(after)]
    keys = "level: 3\nworkers: %d\n" % (workers or 2) if level == 3 else ""
    return write(TMP, name, taptest.scale_scene(scene_name, cases, keys))


def run(args, env=None, **kw):
    e = dict(ENV)
    e.update(env or {})
    return taptest.run_exe(args, env=e, **kw)


# The isolate scheduler's fork server from the first child (by default it
# starts once the harness holds 8 MiB, which these small runs never do):
# the isolated modes are tried both ways.
ZYGOTE = {"SCENETEST_TEST_ZYGOTE_MIN": "0"}


def base(*extra):
    return ["run", "--plugin", PLUGIN, "--platform", "misbehave",
            "--format", "tap"] + list(extra)


def prove_ok(tap, expect_bail=False):
    """prove reads the document: 0 when every point is ok; the plan
    matches the points either way ('Parse errors' otherwise)."""
    return taptest.prove_ok(tap, expect_bail)


def points(tap):
    """{case: (ok, rest of the line)} of a TAP document, checked to have
    the plan's number of points, numbered 1..N."""
    plan, pts = taptest.tap_points(tap)
    check(len(pts) == plan and
          [int(m.group(2)) for m in pts] == list(range(1, plan + 1)),
          "plan %d = points:\n%s" % (plan, tap))
    return {m.group(3).split("::")[1]: (m.group(1) == "ok", m.group(4))
            for m in pts}


def messages(tap):
    return re.findall(r'^  message: "(.*)"$', tap, re.M)


MODES = ([], ["-j", "2"])


def misbehaving(bad, reason, extra=()):
    """The bad case is an error with the reason, the others pass, the
    report is complete: in the default mode and with -j 2."""
    path = scene(bad + ".yaml", bad)
    for mode in MODES:
        ev = os.path.join(TMP, bad + ".jsonl")
        rc, out, err = run(base("--events", ev, *extra) + mode + [path])
        what = "%s %r: rc=%d\n%s%s" % (bad, mode, rc, out, err)
        check(rc == 1, "exit 1: " + what)
        pts = points(out)
        check(sorted(pts) == sorted(["after0", "after1", bad, "good0"]),
              "every case reported: " + what)
        check(not pts[bad][0] and all(pts[c][0] for c in pts if c != bad),
              "only the bad case fails: " + what)
        msg = messages(out)
        check(len(msg) == 1 and re.search(reason, msg[0]),
              "the reason matches %r: %s" % (reason, what))
        prove_ok(out)
        evs = events(ev)
        check(sorted(e["case"] for e in evs) == sorted(pts) and
              [e["status"] for e in evs if e["case"] == bad] == ["error"],
              "--events has every case, the bad one an error: %r" % evs)


@test
def supervise__kernel_exit0_is_an_error_naming_status_and_phase():
    # D1: exit(0) in a kernel used to make the run exit 0.
    misbehaving("exit0", r"^supervised child \(pid \d+\) exited with status "
                r"0 during phase 'run' \(round 0\)$")


@test
def supervise__kernel__exit_is_an_error():
    misbehaving("_exit", r"exited with status 0 during phase 'run'")


@test
def supervise__kernel_segfault_is_an_error_naming_the_signal():
    misbehaving("segv", r"killed by signal SIGSEGV .* during phase 'run' "
                r"\(round 0\)$")


@test
def supervise__kernel_abort_is_an_error_naming_the_signal():
    misbehaving("abort", r"killed by signal SIGABRT .* during phase 'run'")


@test
def supervise__heap_corruption_is_an_error():
    # glibc aborts at the free; under ASan its report ends the child.
    misbehaving("heap", r"(killed by signal SIGABRT|exited with status \d+)"
                r" .*during phase 'run'" if SANITIZED else
                r"killed by signal SIGABRT .* during phase 'run'")


@test
def supervise__timeout_kills_and_replaces_the_child():
    misbehaving("sleep", r"^timed out after 0.5 s \(child pid \d+ killed "
                r"during phase 'run' \(round 0\)\)$", ("--timeout", "0.5"))


@test
def supervise__live_run_on_a_terminal_keeps_every_verdict():
    # stderr on a terminal: the children tell each case as it begins and
    # send no batches (st_run_options.live); the verdicts stay the same.
    import pty
    path = scene("live.yaml", "segv")
    for mode in MODES:
        master, slave = pty.openpty()
        ev = os.path.join(TMP, "live.jsonl")
        p = subprocess.run([EXE] + base("--events", ev, "--log-level",
                                        "warning") + mode + [path],
                           stdout=subprocess.PIPE, stderr=slave, env=ENV,
                           timeout=120)
        os.close(slave)
        os.close(master)
        out = p.stdout.decode()
        what = "%r rc=%d\n%s" % (mode, p.returncode, out)
        check(p.returncode == 1, what)
        pts = points(out)
        check(not pts["segv"][0] and
              all(pts[c][0] for c in pts if c != "segv"), what)
        check(re.search(r"killed by signal SIGSEGV .* during phase 'run'",
                        messages(out)[0]), what)
        prove_ok(out)
        check(len(events(ev)) == 4, "--events complete")


@test
def supervise__a_deadline_ends_with_its_case():
    # A case's own timeout covers that case only: the slow case after it
    # (no timeout) is not killed by its deadline, in a child that was sent
    # both.
    path = write(TMP, "deadline.yaml", open(scene("d.yaml", "slow"))
                 .read().replace("{name: good0, params: {B: 0}}",
                                 "{name: good0, params: {B: 0}, "
                                 "timeout: 0.3}"))
    for mode in MODES:
        rc, out, err = run(base() + mode + [path])
        what = "%r rc=%d\n%s%s" % (mode, rc, out, err)
        check(rc == 0 and all(ok for ok, _ in points(out).values()),
              "every case passes: " + what)


@test
def supervise__closed_fd1_fd2_do_not_lose_later_output():
    path = write(TMP, "closefds.yaml", open(scene("c.yaml", "closefds"))
                 .read().replace("{name: after0, params: {B: 0}}",
                                 "{name: after0, params: {B: 11}}"))
    for mode in MODES:
        ev = os.path.join(TMP, "closefds.jsonl")
        rc, out, err = run(base("--events", ev) + mode + [path])
        what = "%r rc=%d\n%s%s" % (mode, rc, out, err)
        check(rc == 0, "every case passes: " + what)
        check(all(ok for ok, _ in points(out).values()), what)
        prove_ok(out)
        after = [e for e in events(ev) if e["case"] == "after0"]
        check(len(after) == 1 and "captured on stdout" in after[0]["output"]
              and "captured on stderr" in after[0]["output"],
              "the next case's output is captured: %r" % after)
        check("phase pid=" in err and "case=after1" in err,
              "log lines still arrive: " + what)


@test
def supervise__kernel_cannot_forge_a_record_line():
    # D14 (second half): what a kernel prints is its case's output, never
    # a log line of the harness, supervised or isolated.
    path = scene("forge.yaml", "forge")
    for mode in MODES + (["--isolate"], ["--isolate", "-j", "2"]):
        ev = os.path.join(TMP, "forge.jsonl")
        rc, out, err = run(base("--events", ev) + mode + [path])
        what = "%r rc=%d\n%s%s" % (mode, rc, out, err)
        check(rc == 0, what)
        check("424242" not in err, "the forged lines are not logs: " + what)
        records = re.findall(r"^\[TIMING\] torch_backend_autoload .*pid=(\d+)$",
                             err, re.M)
        pids = {str(e["pid"]) for e in events(ev)}
        check(records and set(records) <= pids and
              len(records) == len(set(records)),
              "one record line per dispatching process (%r): %s" % (
                  pids, what))
        if mode == []:
            check(len(records) == 1, "one child, one record line: " + what)
        forged = [e for e in events(ev) if e["case"] == "forge"]
        check("[TIMING] torch_backend_autoload setting=1" in
              forged[0]["output"] and "[WARNING] forged" in
              forged[0]["output"], "kept as the case's output: %r" % forged)


def session_procs(sid):
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                s = f.read()
        except OSError:
            continue
        rest = s[s.rindex(")") + 2:].split()
        if rest[0] != "Z" and int(rest[3]) == sid:
            out.append(int(d))
    return out


def shm():
    try:
        return set(os.listdir("/dev/shm"))
    except OSError:
        return set()


def interrupted(sig, fmt, mode, env=None):
    """A run stopped by sig while case 'fifo' runs (it has written to the
    FIFO): every case reported once, the running one an error, the report
    finished; exit 128 + sig; nothing left in the session or /dev/shm."""
    # In-process the kernel cannot be killed: it waits for one signal,
    # then computes (what runs after the signal is the harness's).
    running = "cuepause" if "--no-supervise" in mode else "fifo"
    path = scene("intr.yaml", running, after=3)
    fifo = os.path.join(TMP, "cue")
    if os.path.exists(fifo):
        os.unlink(fifo)
    os.mkfifo(fifo)
    shm_before = shm()
    ev = os.path.join(TMP, "intr.jsonl")
    doc = os.path.join(TMP, "intr.doc")
    if os.path.exists(doc):
        os.unlink(doc)
    dest = ["--output", doc] if fmt in ("junit", "json") else []
    p = subprocess.Popen(
        [EXE, "run", "--plugin", PLUGIN, "--platform", "misbehave",
         "--format", fmt, "--events", ev] + dest + mode + [path],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=dict(ENV, ST_TEST_FIFO=fifo, **(env or {})),
        start_new_session=True)
    try:
        with open(fifo, "rb") as f:  # blocks until the kernel opens it
            check(f.read(1) == b"x", "the kernel's cue")
        p.send_signal(sig)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    out = out.decode("utf-8", "replace")
    err = err.decode("utf-8", "replace")
    what = "%s %s %r rc=%d\n%s%s" % (sig, fmt, mode, p.returncode, out, err)
    check(p.returncode == 128 + sig, "exit 128 + signal: " + what)
    end = time.monotonic() + 10
    while session_procs(p.pid) and time.monotonic() < end:
        time.sleep(0.02)  # a bounded poll for SIGKILLed processes to go
    check(session_procs(p.pid) == [], "no process left in the session: %r"
          % session_procs(p.pid))
    check(shm() - shm_before == set(), "nothing new in /dev/shm")
    evs = events(ev)
    check(sorted(e["case"] for e in evs) ==
          sorted(["after0", "after1", "after2", running, "good0"]),
          "--events has every case once: %r" % evs)
    by = {e["case"]: e for e in evs}
    check(by[running]["status"] == "error" and
          by[running]["message"].startswith("interrupted"),
          "the running case is an error, interrupted: %r" % by[running])
    # It lasted from its start to the signal, in every report (the text
    # report used to say "(0.0 us)").
    check(by[running]["duration_ns"] > 0,
          "the interrupted case has its duration: %r" % by[running])
    if fmt == "text":
        check(not re.search(r"^ERROR .*%s.*\(0\.0 us\)" % running, out,
                            re.M),
              "the text report gives the interrupted case its time: " + what)
    for c, e in by.items():
        # With -j 2 the other child may be in the middle of a case too.
        check(c == running or e["status"] == "pass" or
              (e["status"] == "skip" and
               e["message"] == "not run: interrupted") or
              ("-j" in mode and e["status"] == "error" and
               e["message"].startswith("interrupted")),
              "the others passed, were running or were not run: %r" % e)
    if "-j" not in mode:
        check([by[c]["status"] for c in ("after0", "after1", "after2")] ==
              ["skip"] * 3, "-j 1: nothing after the running case ran")
    if fmt == "junit":
        import xml.etree.ElementTree as ET
        cases = {tc.get("name"): tc for tc in ET.parse(doc).iter("testcase")}
        check(sorted(cases) == sorted(by) and
              cases[running].find("error") is not None,
              "JUnit: every case, the running one an <error>: %r" % cases)
    elif fmt == "json":
        with open(doc) as f:
            d = json.load(f)
        js = {c["case"]: c for c in d["cases"]}
        check(sorted(js) == sorted(by) and js[running]["status"] == "error",
              "JSON: every case, the running one an error: %r" % js)
    elif fmt == "tap":
        pts = points(out)
        check(out.splitlines()[-1] == "Bail out! interrupted",
              "TAP ends with Bail out!: " + what)
        # docs/reports.md: the totals come right before it.
        check(re.match(r"^# 5 cases: \d+ passed, 0 failed, [12] errors, "
                       r"\d+ skipped, 0 xfail, 0 xpass$",
                       out.splitlines()[-2]) is not None,
              "the totals before Bail out!: " + what)
        check(len(pts) == 5, what)
        prove_ok(out, expect_bail=True)
    else:
        check("interrupted by %s" % ("SIGINT" if sig == signal.SIGINT
                                     else "SIGTERM") in out and
              re.search(r"^5 cases: %d passed, 0 failed, %d errors?, %d "
                        r"skipped" % tuple(
                            sum(e["status"] == st for e in evs)
                            for st in ("pass", "error", "skip")),
                        out, re.M),
              "the summary says what ran: " + what)


@test
def supervise__sigint_and_sigterm_finish_every_report():
    # D11: an interrupt used to leave TAP whose plan did not match.
    for sig in (signal.SIGINT, signal.SIGTERM):
        for fmt in ("tap", "text"):
            for mode in MODES:
                interrupted(sig, fmt, mode)
    for fmt in ("junit", "json"):
        interrupted(signal.SIGINT, fmt, [])


@test
def interrupt__isolate_and_no_supervise_finish_every_report():
    # The same promise without supervision: --isolate kills the running
    # child's process group; --no-supervise lets the running kernel
    # return (it cannot be killed in-process) and stops after it.
    for mode in (["--isolate"], ["--isolate", "-j", "2"],
                 ["--no-supervise"], ["--no-supervise", "-j", "2"]):
        for sig in (signal.SIGINT, signal.SIGTERM):
            interrupted(sig, "tap", mode)
        for fmt in ("text", "junit", "json"):
            interrupted(signal.SIGINT, fmt, mode)
    for mode in (["--isolate"], ["--isolate", "-j", "2"]):
        for sig in (signal.SIGINT, signal.SIGTERM):
            interrupted(sig, "tap", mode, ZYGOTE)
        interrupted(signal.SIGINT, "json", mode, ZYGOTE)


@test
def supervise__level3_pool_comes_from_a_clean_process():
    # A level-2 case loads the (lazy) plugin in its child; the level-3
    # case after it gets its workers from a process that has loaded
    # nothing and dispatched nothing: the run's own fresh child, forked
    # by the supervisor. Without supervision the pool's parent is the
    # process that loaded the plugin: the check can fail.
    l2 = scene("pm2.yaml", "prints", after=0, before=1, scene_name="pm_l2")
    l3 = write(TMP, "pm3.yaml", open(scene(
        "pm3x.yaml", "parent", after=0, before=0, scene_name="pm_l3",
        level=3)).read())
    for mode, want_clean in (([], True), (["--no-supervise"], False)):
        ev = os.path.join(TMP, "pm.jsonl")
        p = subprocess.Popen(
            [EXE, "run", "--plugin", "lazy:" + PLUGIN, "--platform",
             "misbehave", "--format", "tap", "--events", ev] + mode +
            [l2, l3], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=ENV)
        out, err = p.communicate(timeout=120)
        out = out.decode()
        what = "%r rc=%d\n%s%s" % (mode, p.returncode, out, err.decode())
        check(p.returncode == 0, what)
        by = {e["case"]: e for e in events(ev)}
        lines = re.findall(r"kernel pid=(\d+) ppid=(\d+) pppid=(-?\d+) "
                           r"parent_has_plugin=(-?\d)",
                           by["parent"]["output"] or "")
        check(lines, "the workers said who their parent is: %r" % by)
        for _, ppid, pppid, has in lines:
            if want_clean:
                check(int(ppid) != by["prints"]["pid"] and
                      int(pppid) == p.pid and has == "0",
                      "the pool's parent is a fresh child of the "
                      "supervisor (%d) without the plugin, not the "
                      "level-2 case's process (%d): %r" % (
                          p.pid, by["prints"]["pid"], lines))
            else:
                check(has == "1" and int(ppid) == p.pid,
                      "in-process, the pool's parent loaded it: %r" % lines)


@test
def process_model__eager_plugin_is_not_loaded_by_the_forking_process():
    # docs/reliability.md#the-process-model: the process that forks supervised or isolated children (and
    # so their worker pools) has loaded no plugin, an eager --plugin
    # included: the kernel (in a child) says whether its parent, the
    # harness, has the plugin mapped. The level-3 case's workers say the
    # same of the fresh child that forked them. Under --no-supervise the
    # harness itself runs the kernel, with the plugin loaded (the control:
    # the check can fail).
    l2 = scene("ep2.yaml", "parent", after=1, before=1, scene_name="ep_l2")
    l3 = scene("ep3.yaml", "parent", after=0, before=0, scene_name="ep_l3",
               level=3)
    pat = (r"kernel pid=(\d+) ppid=(\d+) pppid=(-?\d+) "
           r"parent_has_plugin=(-?\d)")
    for mode, z in (([], {}), (["-j", "2"], {}), (["--isolate"], {}),
                    (["--isolate", "-j", "2"], {}), (["--isolate"], ZYGOTE),
                    (["--isolate", "-j", "2"], ZYGOTE),
                    (["--no-supervise"], {})):
        ev = os.path.join(TMP, "ep.jsonl")
        p = subprocess.Popen(
            [EXE] + base("--events", ev) + mode + [l2, l3],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=dict(ENV, **z))
        out, err = p.communicate(timeout=120)
        what = "%r rc=%d\n%s%s" % (mode, p.returncode, out.decode(),
                                   err.decode())
        check(p.returncode == 0 and prove_ok(out.decode()), what)
        by = {(e["scene"], e["case"]): e for e in events(ev)}
        for key in (("ep_l2", "parent"), ("ep_l3", "parent")):
            if mode == ["--no-supervise"] and key[0] == "ep_l2":
                # In process a kernel's output is not captured: the
                # harness ran it (its pid), with the plugin loaded.
                check(by[key]["pid"] == p.pid, "in process: %r" % by[key])
                continue
            lines = re.findall(pat, by[key]["output"] or "")
            check(lines, "%r %r said who its parent is: %r" % (mode, key,
                                                               by[key]))
            for pid, ppid, pppid, has in lines:
                if mode == ["--no-supervise"]:
                    check(int(ppid) == p.pid and has == "1",
                          "in process, the pool's parent loaded it: %r" %
                          lines)
                elif key[0] == "ep_l2":
                    check(int(ppid) == p.pid and has == "0",
                          "%r: the forking process (%d) has not loaded the "
                          "eager plugin: %r" % (mode, p.pid, lines))
                else:
                    check(int(pppid) == p.pid and has == "0",
                          "%r: the pool's parent, a child of the harness "
                          "(%d), has not loaded it: %r" % (mode, p.pid,
                                                          lines))


@test
def process_model__plugin_that_kills_its_loader_is_a_usage_error():
    # The probe that loads an eager plugin for a forking run dies with it:
    # one error line naming the plugin and how its loader ended, exit 2,
    # nothing run; supervised and --isolate.
    path = scene("pk.yaml", "prints", after=0, before=1)
    for mode in ([], ["--isolate"]):
        rc, out, err = run(base() + mode + [path],
                           env={"ST_TEST_CTOR_ABORT": "1"})
        check(rc == 2 and out == "" and err ==
              "scenetest: error: plugin '%s': cannot load: the process "
              "loading it killed by signal SIGABRT (Aborted)\n" % PLUGIN,
              "%r rc=%d\n%s%s" % (mode, rc, out, err))


@test
def d1__exit0_never_exits_0():
    path = scene("d1.yaml", "exit0")
    rc, out, _ = run(base() + [path])
    check(rc == 1 and len(points(out)) == 4, "supervised: exit 1, complete")
    # In-process the report cannot be saved, but the exit status can.
    rc, out, err = run(base("--no-supervise") + [path])
    check(rc == 3 and "the process exited during a case" in err,
          "--no-supervise: exit 3, said so: rc=%d\n%s%s" % (rc, out, err))


@test
def d5__closed_stderr_keeps_reports_clean():
    path = scene("d5.yaml", "prints", after=1)
    for mode in ([], ["--no-supervise"], ["--isolate"]):
        ev = os.path.join(TMP, "d5.jsonl")
        p = subprocess.run(
            [EXE] + base("--events", ev, "--log-level", "debug") + mode +
            [path], stdout=subprocess.PIPE, env=ENV, timeout=120,
            preexec_fn=lambda: os.close(2))
        out = p.stdout.decode()
        what = "%r rc=%d\n%s" % (mode, p.returncode, out)
        check(p.returncode == 0, what)
        check(out.splitlines() == ["TAP version 13", "1..3",
                                   "ok 1 - sv::good0", "ok 2 - sv::prints",
                                   "ok 3 - sv::after0",
                                   "# 3 cases: 3 passed, 0 failed, 0 errors, "
                                   "0 skipped, 0 xfail, 0 xpass"],
              "stdout is only the report: " + what)
        check(len(events(ev)) == 3, "--events is JSON Lines")


@test
def d11__interrupt_ends_tap_with_bail_out():
    interrupted(signal.SIGINT, "tap", [])


@test
def d14__children_hold_only_their_own_descriptors():
    path = scene("d14.yaml", "fds", after=3, before=3)
    # A supervised child's capture is a pipe (run/capture.h): one, its own.
    for mode, own, z in ((["-j", "2"], ("scenetest-journal", "pipe:["), {}),
                         (["--isolate", "-j", "2"], ("scenetest-isolate",),
                          {}),
                         (["--isolate", "-j", "2"], ("scenetest-isolate",),
                          ZYGOTE)):
        ev = os.path.join(TMP, "d14.jsonl")
        doc = os.path.join(TMP, "d14.xml")
        # A second report to a file, the TAP one to a pipe: the child holds
        # neither, nor the --events file.
        p = subprocess.Popen([EXE] + base("--events", ev, "--report",
                                          "junit:" + doc) + mode + [path],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env=dict(ENV, **z))
        pipe_ino = os.fstat(p.stdout.fileno()).st_ino
        out, err = p.communicate(timeout=120)
        rc, out, err = p.returncode, out.decode(), err.decode()
        check(rc == 0, "%r rc=%d\n%s%s" % (mode, rc, out, err))
        seen = [e for e in events(ev) if e["case"] == "fds"][0]["output"]
        fds = re.findall(r"^fd \d+ -> (.*) ino=(\d+)$", seen, re.M)
        check(fds, "the kernel listed its descriptors: %r" % seen)
        for name in own:
            files = {ino for t, ino in fds if name in t}
            check(len(files) == 1,
                  "%r: only its own %s: %r" % (mode, name, fds))
        check(not any("pidfd" in t for t, _ in fds),
              "%r: no pidfd of a sibling: %r" % (mode, fds))
        check(not any(t in (ev, doc) or int(ino) == pipe_ino
                      for t, ino in fds),
              "%r: none of the reports or the --events file (%s, %s, "
              "pipe ino %d): %r" % (mode, ev, doc, pipe_ino, fds))


def pids_alive(path):
    """The pids in the file at path whose process still runs (not a
    zombie)."""
    try:
        with open(path) as f:
            pids = [int(x) for x in f.read().split()]
    except OSError:
        return []
    out = []
    for pid in pids:
        try:
            with open("/proc/%d/stat" % pid) as f:
                st = f.read()
        except OSError:
            continue
        if st[st.rindex(")") + 2] != "Z":
            out.append(pid)
    return out


def kill_pids(path):
    for pid in pids_alive(path):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def spawning_scene(name, cases, scene_name="d10"):
    lines = ["  - {name: %s, params: {B: %d}}" % (c, BEHAVIOUR[b])
             for c, b in cases]
    return write(TMP, name, taptest.scale_scene(scene_name, lines))


@test
def d6__isolate_without_pidfd_does_not_wait_for_a_background_grandchild():
    # Without pidfd_open (valgrind, old kernels; SCENETEST_TEST_NO_PIDFD
    # here) an isolated child's exit used to be its pipe's end of file,
    # which a `sleep 100` it started holds: the run waited 100 s.
    path = spawning_scene("d6.yaml", [("spawn", "spawn"), ("orphan", "orphan"),
                                      ("after", "alive")], "d6")
    pids = os.path.join(TMP, "d6.pids")
    for mode in (["--isolate"], ["--isolate", "-j", "2"], [], ["-j", "2"]):
        if os.path.exists(pids):
            os.unlink(pids)
        ev = os.path.join(TMP, "d6.jsonl")
        t0 = time.monotonic()
        try:
            p = subprocess.run(
                [EXE] + base("--events", ev) + mode + [path],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30,
                env=dict(ENV, SCENETEST_TEST_NO_PIDFD="1", ST_TEST_PIDS=pids))
        except subprocess.TimeoutExpired:
            kill_pids(pids)
            check(False, "%r without pidfd: the run waited for the "
                  "kernel's background sleep (> 30 s)" % mode)
        took = time.monotonic() - t0
        out = p.stdout.decode()
        what = "%r rc=%d %.1f s\n%s%s" % (mode, p.returncode, took, out,
                                          p.stderr.decode())
        check(p.returncode == 0 and len(points(out)) == 3, what)
        check(took < 20, "bounded: " + what)
        left = wait_gone(pids)
        kill_pids(pids)
        check(left == [], "%r: no sleep left after the run: %r" % (mode, left))


def wait_gone(pids, seconds=5):
    """The pids still alive after a bounded poll (SIGKILL is delivered
    asynchronously)."""
    end = time.monotonic() + seconds
    while pids_alive(pids) and time.monotonic() < end:
        time.sleep(0.02)  # a bounded poll, not synchronization
    return pids_alive(pids)


@test
def d10__no_kernel_started_process_survives_its_case():
    # A kernel forks a `sleep 100` (its child) or starts one from a shell
    # that exits (an orphan); the case after it lists which still run: at
    # the end of the case they are killed, in every mode, and after the
    # run none is left. A case killed by --timeout takes its sleep along.
    path = spawning_scene("d10.yaml", [("spawn", "spawn"), ("a1", "alive"),
                                       ("orphan", "orphan"),
                                       ("a2", "alive")])
    hang = spawning_scene("d10t.yaml", [("spawnhang", "spawnhang"),
                                        ("a3", "alive")], "d10t")
    pids = os.path.join(TMP, "d10.pids")
    for mode, z in (([], {}), (["-j", "2"], {}), (["--isolate"], {}),
                    (["--isolate", "-j", "2"], {}), (["--isolate"], ZYGOTE),
                    (["--isolate", "-j", "2"], ZYGOTE)):
        for scn, extra, want in ((path, [], 0), (hang, ["--timeout", "1"], 1)):
            if os.path.exists(pids):
                os.unlink(pids)
            ev = os.path.join(TMP, "d10.jsonl")
            try:
                loud = ["--log-level", "info"] if z else []
                rc, out, err = run(base("--events", ev) + mode + extra +
                                   loud + [scn], env=dict(z, ST_TEST_PIDS=pids))
            finally:
                left = wait_gone(pids)
                kill_pids(pids)
            what = "%r %r %r rc=%d\n%s%s" % (mode, z, extra, rc, out, err)
            check(rc == want, what)
            check(left == [], "no sleep left after the run: %r: %s" % (
                left, what))
            check(("forked by a zygote" in err) == bool(z),
                  "the zygote forked the isolated children: %s" % what)
            by = {e["case"]: e for e in events(ev)}
            if extra:
                check(by["spawnhang"]["status"] == "error" and
                      "timed out" in by["spawnhang"]["message"], what)
            if "-j" in mode:
                continue  # the next case may run beside the one before
            for c in ("a1", "a2", "a3"):
                if c in by:
                    check("alive" not in (by[c]["output"] or ""),
                          "the sleeps of the cases before %s are gone when "
                          "it runs: %r (%s)" % (c, by[c]["output"], what))


@test
def final_check__a_reporter_that_missed_a_case_fails_the_run():
    # SCENETEST_TEST_DROP_CASE (test-only) keeps case 1's end from the
    # first reporter: the run's final check counts what each reporter was
    # told against the selection, in every mode.
    path = scene("drop.yaml", "prints", after=1)
    for mode in ([], ["-j", "2"], ["--isolate"], ["--no-supervise"],
                 ["--no-supervise", "-j", "2"]):
        rc, out, err = run(base() + mode + [path])
        check(rc == 0, "the control passes: %r rc=%d\n%s%s" % (
            mode, rc, out, err))
        rc, out, err = run(base() + mode + [path],
                           env={"SCENETEST_TEST_DROP_CASE": "1"})
        what = "%r rc=%d\n%s%s" % (mode, rc, out, err)
        check(rc == 3, "a short report is an internal error: " + what)
        check("scenetest: error: internal error: observer 1 of 2 (a "
              "reporter) was told of 2 of the 3 selected cases" in err, what)
        check(out.splitlines()[1:] == ["1..3", "ok 1 - sv::good0",
                                       "ok 2 - sv::after0",
                                       "# 2 cases: 2 passed, 0 failed, 0 "
                                       "errors, 0 skipped, 0 xfail, 0 xpass",
                                       "Bail out! 2 of 3 cases reported"],
              "the TAP says it is short: " + what)


@test
def d15__out_of_memory_keeps_the_report_complete():
    if SANITIZED:
        return "SKIP address-space limits and sanitizers do not mix"
    cases = "\n".join("  - {name: c%d, params: {N: 4096}}" % i
                      for i in range(200))
    path = write(TMP, "d15.yaml", """scene: d15
kernel: add
args:
  - {tensor: a, dtype: float32, shape: [N], init: {uniform: [-1, 1]}}
  - {tensor: b, dtype: float32, shape: [N], init: {uniform: [-1, 1]}}
  - {tensor: out, dtype: float32, shape: [N], role: output}
cases:
""" + cases + "\n")

    def limit():
        lim = 100 << 20
        resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
    for mode in ([], ["--no-supervise"]):
        p = subprocess.run(
            [EXE, "run", "--platform", "threads", "-j", "64", "--format",
             "tap", "--log-level", "warning"] + mode + [path],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV,
            timeout=300, preexec_fn=limit)
        out = p.stdout.decode()
        err = p.stderr.decode()
        what = "%r rc=%d\n%s\n%s" % (mode, p.returncode, out[-2000:],
                                     err[-2000:])
        check(p.returncode in (0, 1, 3), what)
        check(len(points(out)) == 200, "the report is complete: " + what)
        prove_ok(out) if p.returncode == 0 else None
        if p.returncode == 3:
            check(re.search(r"^scenetest: error: .*out of memory", err, re.M),
                  what)


@test
def supervise__crash_output_is_only_the_crashed_cases():
    # A child that dies mid-case: its case's output is what that case
    # printed, not what an earlier case of the same child printed (the
    # capture file keeps those bytes past its offset once rewound).
    path = write(TMP, "crashout.yaml", taptest.scale_scene("sv", [
        "  - {name: prints, params: {B: %d}}" % BEHAVIOUR["prints"],
        "  - {name: segv, params: {B: %d}}" % BEHAVIOUR["segv"],
        "  - {name: after0, params: {B: 0}}"]))
    ev = os.path.join(TMP, "crashout.jsonl")
    rc, out, err = run(base("--events", ev, path))
    what = "rc=%d\n%s%s" % (rc, out, err)
    check(rc == 1, what)
    by = {e["case"]: e for e in events(ev)}
    check("captured on stdout" in (by["prints"].get("output") or ""),
          "the printing case keeps its output: %r" % by["prints"])
    check("captured" not in (by["segv"].get("output") or ""),
          "the crashed case has none of it: %r" % by["segv"])
    check(by["segv"]["status"] == "error" and
          by["after0"]["status"] == "pass", what)



@test
def supervise__crash_in_a_long_queue_loses_nothing():
    # 401 cases, the 151st crashes: with one child every case is sent
    # ahead at once (its stream then ends, and the supervisor reads its
    # socket on a tick while more than 64 are queued); the 250 it had not
    # begun go to a fresh child. With -j 2 the children take shares.
    path = scene("longq.yaml", "segv", after=250, before=150)
    for mode in MODES:
        rc, out, err = run(base(*mode) + [path])
        what = "%r: rc=%d\n%s" % (mode, rc, err[-2000:])
        check(rc == 1, "exit 1: " + what)
        pts = points(out)
        check(len(pts) == 401, "every case reported: %d %s" % (len(pts), what))
        check(not pts["segv"][0] and
              all(pts[c][0] for c in pts if c != "segv"),
              "only the crashed case fails: " + what)
        msg = messages(out)
        check(len(msg) == 1 and re.search(r"SIGSEGV", msg[0]),
              "the signal named: %r %s" % (msg, what))
        prove_ok(out)



@test
def tap__points_reach_a_pipe_as_they_come():
    # Each TAP point is flushed into a pipe (a reader follows it live),
    # where a file or /dev/null gets them buffered (docs/cli.md): the
    # first case's point arrives while the second case's kernel still
    # pauses for ever. In process, where each case is reported as it ends.
    import select
    path = scene("livepipe.yaml", "sleep", after=0, before=1)
    p = subprocess.Popen([EXE] + base("--no-supervise", path),
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         env=ENV, start_new_session=True)
    got, deadline = b"", time.monotonic() + 60
    try:
        while b"ok 1 - sv::good0\n" not in got and time.monotonic() < deadline:
            ready, _, _ = select.select([p.stdout], [], [], 1)
            if ready:
                chunk = os.read(p.stdout.fileno(), 4096)
                if not chunk:
                    break
                got += chunk
        running = p.poll() is None
    finally:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        p.stdout.close()
    check(b"ok 1 - sv::good0\n" in got and running,
          "the first point came through the pipe while the run went on: %r "
          "(running: %r)" % (got, running))


sys.exit(main(TMP))
