# SPDX-License-Identifier: MIT
"""A kernel that attacks the process it runs in (docs/reliability.md):
stray bytes on the supervisor's socket, every descriptor from 3 up
closed, a thread left running that later ends the process, an orphan
left after clearing PR_SET_CHILD_SUBREAPER, endless output. Each is
charged to the case whose kernel did it; the cases around it pass and
run once. The kernels are tests/plugins/intruder.c's; every run is read
by prove (TAP) and its --events lines parsed. No sleeps: the threads
wait for the next call of the kernel, the orphan is found through
$ST_TEST_PIDS.

Usage: test_intruder.py SCENETEST PLUGIN SANITIZE"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import taptest  # noqa: E402
from taptest import check, main, test, write  # noqa: E402

taptest.EXE = EXE = os.path.abspath(sys.argv[1])
PLUGIN = os.path.abspath(sys.argv[2])
TMP = tempfile.mkdtemp(prefix="st_intruder_")
ENV = dict(os.environ, NO_COLOR="1",
           ASAN_OPTIONS="handle_abort=0:detect_leaks=0:" +
           os.environ.get("ASAN_OPTIONS", ""))
# What the kernel does, by its scalar (tests/plugins/intruder.c).
DOES = {"good": 0, "stray": 1, "closeall": 2, "thread_exit": 3,
        "thread_abort": 4, "orphan": 5, "prints": 6, "alive": 7,
        "deaf": 8}
# The modes in which cases run in children: the supervised ones, and
# --isolate (a fork per case) with and without its fork server.
SUPERVISED = [[], ["-j", "2"]]
ISOLATED = [["--isolate"], ["--isolate", "-j", "2"]]
ZYGOTE = {"SCENETEST_TEST_ZYGOTE_MIN": "0"}
CAPTURE_MAX = 1 << 20  # base/proc.h: ST__CAPTURE_MAX
PIPE_MAX = 1 << 20     # what a pipe may hold unread, at most


def scene(name, kinds):
    """A scene of one case per entry of kinds, named KIND_INDEX."""
    cases = ["  - {name: %s_%d, params: {B: %d}}" % (k, i, DOES[k])
             for i, k in enumerate(kinds)]
    return write(TMP, name, taptest.scale_scene(name.split(".")[0], cases))


class Run:
    def __init__(self, args, rc, out, err, events):
        self.args, self.rc, self.out, self.err = args, rc, out, err
        self.events = events

    def describe(self):
        return "args: %s\nexit %s\nstdout:\n%s\nstderr:\n%s" % (
            self.args, self.rc, self.out[-4000:], self.err[-4000:])

    def status(self):
        return {e["case"]: e["status"] for e in self.events}

    def by_case(self):
        return {e["case"]: e for e in self.events}


def run(path, extra, env=None):
    ev = os.path.join(TMP, "events.jsonl")
    if os.path.exists(ev):
        os.unlink(ev)
    e = dict(ENV)
    e.update(env or {})
    args = [EXE, "run", "--plugin", PLUGIN, "--platform", "intruder",
            "--format", "tap", "--events", ev] + extra + [path]
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       env=e, timeout=120)
    out = p.stdout.decode("utf-8", "replace")
    err = p.stderr.decode("utf-8", "replace")
    with open(ev) as f:
        events = [json.loads(line) for line in f]
    r = Run(args, p.returncode, out, err, events)
    prove = subprocess.run(["prove", "-e", "cat", "/dev/stdin"],
                           input=p.stdout, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
    text = prove.stdout.decode("utf-8", "replace")
    check("Parse errors" not in text, "prove reads the TAP:\n" + text, r)
    return r


def only_bad_fail(r, kinds, bad, words):
    """Every case of kinds once in --events; the ones of kind bad errors
    whose message has each of words; the rest pass; exit 1."""
    names = ["%s_%d" % (k, i) for i, k in enumerate(kinds)]
    check(sorted(e["case"] for e in r.events) == sorted(names),
          "every case exactly once", r)
    st = r.status()
    for n in names:
        if n.startswith(bad + "_"):
            msg = r.by_case()[n]["message"] or ""
            check(st[n] == "error" and all(w in msg for w in words),
                  "%s is an error saying %s: %s %r" % (n, words, st[n], msg), r)
        else:
            check(st[n] == "pass", "%s passes: %s" % (n, st[n]), r)
    check(r.rc == 1, "exit 1", r)


@test
def stray_socket_bytes__protocol_error_charged_to_the_writing_case():
    kinds = ["good"] * 5 + ["stray"] + ["good"] * 3
    path = scene("stray.yaml", kinds)
    for extra in SUPERVISED:
        r = run(path, extra)
        only_bad_fail(r, kinds, "stray", ["protocol error"])


@test
def stray_socket_bytes__each_writer_costs_one_child():
    # 8 writers among 48 cases: each is its case's error, every other
    # case passes, run once; a writer costs one child (not a re-run of
    # the cases sent with it, and none of theirs blamed).
    kinds = (["good"] * 5 + ["stray"]) * 8
    path = scene("strays.yaml", kinds)
    for extra in SUPERVISED:
        r = run(path, extra)
        only_bad_fail(r, kinds, "stray", ["protocol error"])
        pids = {e["pid"] for e in r.events}
        jobs = 2 if extra else 1
        check(len(pids) <= 8 + jobs,
              "at most one child a writer, plus the first: %d" % len(pids), r)


@test
def closed_descriptors__charged_to_the_closing_case():
    kinds = ["good", "closeall", "good", "good"]
    path = scene("closeall.yaml", kinds)
    for extra in SUPERVISED:
        r = run(path, extra)
        only_bad_fail(r, kinds, "closeall", ["descriptor",
                                             "the socket to the supervisor"])
    # Under --isolate the case is alone in its process: closing its result
    # file fails that case, and only that case.
    for extra in ISOLATED:
        r = run(path, extra)
        only_bad_fail(r, kinds, "closeall", ["before reporting its result"])


@test
def child_dead_between_cases__its_unbegun_cases_run_again_never_blamed():
    # The kernel of case 3 shuts the reading side of the child's socket
    # (the same file: no descriptor check sees it). The child had read the
    # first 1,024 cases (what the supervisor sends ahead); those it is sent
    # later never arrive, and it ends between cases once it has run the
    # ones it read, with cases queued to it: they run in a fresh child,
    # and none is blamed (an innocent case used to be the error "exited
    # with status 0 before the case began").
    kinds = ["good"] * 3 + ["deaf"] + ["good"] * 1096
    path = scene("deaf.yaml", kinds)
    r = run(path, [])
    check(r.rc == 0 and set(r.status().values()) == {"pass"} and
          len(r.events) == len(kinds), "every case passes, once", r)
    check("ended between cases" in r.err and
          "run in a fresh child" in r.err, "the child ended between cases", r)
    pids = {e["pid"] for e in r.events}
    check(len(pids) == 2, "a second child ran the rest: %d" % len(pids), r)


@test
def left_thread__charged_to_the_case_that_started_it():
    # The thread ends the process at the next call of the kernel: today's
    # next case; it must be the starting case's error in every mode,
    # --isolate included (where the process ends before the thread acts).
    for bad in ("thread_exit", "thread_abort"):
        kinds = ["good", bad, "good", "good"]
        path = scene(bad + ".yaml", kinds)
        for extra in SUPERVISED + ISOLATED:
            for env in ([None, ZYGOTE] if "--isolate" in extra else [None]):
                r = run(path, extra, env)
                only_bad_fail(r, kinds, bad, ["thread"])


@test
def cleared_subreaper__orphan_found_and_killed_with_its_case():
    # The kernel clears PR_SET_CHILD_SUBREAPER and orphans a sleep: the
    # next case lists the sleeps still running: none.
    kinds = ["good", "orphan", "alive", "good"]
    path = scene("orphan.yaml", kinds)
    pids = os.path.join(TMP, "pids")
    for extra in SUPERVISED:
        if os.path.exists(pids):
            os.unlink(pids)
        r = run(path, extra, {"ST_TEST_PIDS": pids})
        check(r.rc == 0 and set(r.status().values()) == {"pass"},
              "every case passes", r)
        with open(pids) as f:
            sleeps = f.read().split()
        check(len(sleeps) == 1, "one orphan started", r)
        out = r.by_case()["alive_2"]["output"] or ""
        check("alive" not in out, "no orphan outlives its case: %r" % out, r)
        check("orphan_1 left processes running" in r.err,
              "the warning names the case", r)
        for pid in sleeps:
            try:
                os.kill(int(pid), 9)
            except ProcessLookupError:
                pass


@test
def endless_output__capture_bounded_in_every_mode():
    # 8 MiB printed: the capture holds at most its limit (plus what a pipe
    # has unread), the report keeps the first CAPTURE_MAX bytes and says
    # how many more there were.
    kinds = ["good", "prints", "good"]
    path = scene("prints.yaml", kinds)
    held = os.path.join(TMP, "held")
    for extra in SUPERVISED + ISOLATED:
        if os.path.exists(held):
            os.unlink(held)
        r = run(path, extra, {"ST_TEST_HELD": held})
        check(r.rc == 0 and set(r.status().values()) == {"pass"},
              "every case passes", r)
        with open(held) as f:
            n = int(f.read().split()[0])
        check(n <= CAPTURE_MAX + PIPE_MAX,
              "%s: the capture holds %d bytes after 8 MiB printed" %
              (extra, n), r)
        out = r.by_case()["prints_1"]["output"]
        more = 8 * (1 << 20) - CAPTURE_MAX
        check(out.startswith("p" * 1023 + "\n") and
              out.endswith("[... %d more bytes not kept]\n" % more),
              "%s: the first bytes kept, the rest counted: %r" %
              (extra, out[-80:]), r)
        check(len(out) <= CAPTURE_MAX + 64, "kept at most the limit", r)


sys.exit(main(TMP))
