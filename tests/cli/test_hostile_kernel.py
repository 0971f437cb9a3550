# SPDX-License-Identifier: MIT
"""A kernel against the harness's own state (issue 25, docs/reliability.md):
the scribble plugin (tests/plugins/scribbles.c) misbehaves, as
$ST_TEST_SCRIBBLE names, on the case whose x has 13 elements, and computes
every other case right. Each test runs a scene of four cases (good0, bad,
after0, after1) and checks the bad case's verdict and message, that every
other case passes, that each case is reported exactly once (the TAP plan
and its points, read by prove; one --events line a case) and that no
sanitizer spoke.

Usage: test_hostile_kernel.py SCENETEST PLUGIN"""
import json
import os
import re
import resource
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import taptest  # noqa: E402
from taptest import check, main, prove_ok, test, write  # noqa: E402

taptest.EXE = EXE = os.path.abspath(sys.argv[1])
PLUGIN = os.path.abspath(sys.argv[2])
TMP = tempfile.mkdtemp(prefix="st_hostile_kernel_")
CASES = ["after0", "after1", "bad", "good0"]
SANITIZER = re.compile(r"AddressSanitizer|LeakSanitizer|runtime error:|"
                       r"ThreadSanitizer")


def scene(name, level=2, op="copy"):
    """good0, bad (13 elements: the plugin's cue), after0, after1: int32
    x and y (copy) or x and a one-element y (reduce_sum)."""
    head = "scene: hk\n"
    if level == 3:
        head += "level: 3\nworkers: 2\n"
    y = "[N]" if op == "copy" else "[1]"
    return write(TMP, name, head + """kernel: %s
args:
  - {tensor: x, dtype: int32, shape: [N], init: {randint: [1, 100]}}
  - {tensor: y, dtype: int32, shape: %s, role: output}
cases:
  - {name: good0, params: {N: 64}}
  - {name: bad, params: {N: 13}}
  - {name: after0, params: {N: 64}}
  - {name: after1, params: {N: 64}}
""" % (op, y))


def run(how, args, extra_env=None, limit_fds=None):
    env = {"ST_TEST_SCRIBBLE": how}
    env.update(extra_env or {})

    def limit():
        if limit_fds is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (limit_fds, limit_fds))

    return taptest.run_exe(args, env=env, preexec_fn=limit)


def points(tap):
    """{case: ok} from the TAP, which has one point per planned case."""
    plan, pts = taptest.tap_points(tap)
    names = [m.group(3).split("::")[1] for m in pts]
    check(plan == 4 and sorted(names) == CASES,
          "plan 4, each case once:\n" + tap)
    return {m.group(3).split("::")[1]: m.group(1) == "ok" for m in pts}


def expect(how, status, reason, extra, level=2, op="copy", rc_want=1):
    """Runs the scene with the plugin misbehaving as how: the bad case is
    status with a message matching reason (None: any), the others pass,
    each case is reported once. Returns (stdout, stderr, bad's event)."""
    path = scene("%s_l%d_%s.yaml" % (how, level, op), level, op)
    ev = os.path.join(TMP, "events.jsonl")
    rc, out, err = run(how, ["run", "--plugin", PLUGIN, "--platform",
                             "scribble", "--format", "tap", "--log-level",
                             "error", "--events", ev] + list(extra) + [path])
    what = "%s %r level %d: rc=%d\n%s%s" % (how, extra, level, rc, out, err)
    check(rc == rc_want, "exit %d: %s" % (rc_want, what))
    check(not SANITIZER.search(err), "no sanitizer report: " + what)
    pts = points(out)
    check(all(pts[c] for c in CASES if c != "bad"),
          "every other case passes: " + what)
    prove_ok(out)
    with open(ev) as f:
        evs = [json.loads(line) for line in f]
    check(sorted(e["case"] for e in evs) == CASES,
          "--events: each case once: %r\n%s" % (evs, what))
    bad = [e for e in evs if e["case"] == "bad"][0]
    check(bad["status"] == status and
          (reason is None or re.search(reason, bad["message"] or "")),
          "bad is %s matching %r: %r\n%s" % (status, reason, bad, what))
    return out, err, bad


@test
def guard_zone__write_past_end_then_skip_is_error():
    # The zones are checked after every call, whatever it returned: a
    # kernel that declines after writing past y is an error, not a skip.
    zone = (r"^run: kernel wrote out of bounds of tensor 'y': 12 bytes past "
            r"its end \(52 bytes long; guard zone%s\)$")
    for extra in ([], ["--no-supervise"], ["--isolate"], ["-j", "2"]):
        expect("skip_after_write", "error", zone % "", extra)
    for extra in ([], ["--no-supervise"]):
        expect("skip_after_write", "error",
               zone % "; level-3 shared segment", extra, level=3)


@test
def call_descriptors__kernel_changes_are_not_read_back():
    # y pointed at x, at the kernel's own buffer, or made empty: the
    # harness compares its own y, which the kernel never wrote.
    poison = (r"^output 'y' \(int32\): 13 of 13 elements never "
              r"written by the kernel \(still the poison\)")
    for how in ("alias_input", "own_buffer", "zero_numel"):
        for extra in ([], ["--no-supervise"], ["--isolate"]):
            expect(how, "fail", poison, extra)


@test
def call_descriptors__level3_reduce_reads_its_own_cell():
    # At level 3 each block's partial is read from the worker's own cell,
    # not from where the kernel pointed y (its sum lands in its own cell).
    expect("alias_input", "fail",
           r"^tensor 'y': 1 of 1 elements differ; first at \[0\]: actual 0,",
           [], level=3,
           op="reduce_sum")


@test
def kernel_message__full_field_without_nul_is_read_within_it():
    # 512 bytes and no NUL: the message is those 512 bytes, never what
    # lies past the field.
    want = r"^kernel: M{512}$"
    for extra in ([], ["--no-supervise"], ["--isolate"]):
        expect("long_message", "error", want, extra)
    expect("long_message", "error", want, [], level=3)


@test
def report__kernel_fork_returning_twice_is_reported_once():
    # The kernel forks and both processes return: the fork ends as it
    # returns into the harness, and the run is reported once, by the
    # process that started it.
    # Supervised, the fork's line goes to the capture of whichever case
    # is running when it writes it, or nowhere if its group is killed
    # first: only the single report is checked there.
    for extra in (["--no-supervise"], ["--no-supervise", "-j", "2"], []):
        out, err, bad = expect("fork_both", "pass", None, extra, rc_want=0)
        check(not extra or
              re.search(r"^scenetest: error: process \d+, forked in a call "
                        r"of the kernel, returned into the harness; it ends "
                        r"here \(only process \d+ reports the run\)$",
                        err, re.M),
              "the fork says it ends: %r\n%s" % (extra, err))


def junit_time(xml, case):
    m = re.search(r'<testcase [^>]*name="%s"[^>]*time="([0-9.]+)"' % case,
                  xml)
    check(m is not None, "the case's testcase:\n" + xml)
    return float(m.group(1))


@test
def supervise__dead_childs_case_reports_its_real_duration():
    # A case whose child died (abort after 0.4 s) or was killed (--timeout
    # 0.5) lasted that long: JUnit, --events and the HTML timeline say so.
    for how, extra, least, word in (
            ("slow_abort", [], 0.4, "killed by signal SIGABRT"),
            ("hangs", ["--timeout", "0.5"], 0.5, "timed out after 0.5 s")):
        junit = os.path.join(TMP, "r.xml")
        html = os.path.join(TMP, "r.html")
        out, err, bad = expect(how, "error", word,
                               extra + ["--report", "junit:" + junit,
                                        "--report", "html:" + html])
        check(bad["duration_ns"] >= least * 1e9,
              "--events duration_ns >= %g s: %r" % (least, bad))
        with open(junit) as f:
            t = junit_time(f.read(), "bad")
        check(t >= least, "JUnit time %g >= %g" % (t, least))
        runs = [e for e in bad["events"] if e["name"] == "run"]
        check(len(runs) == 1 and runs[0]["status"] == "error" and
              runs[0]["dur_ns"] >= least * 1e9,
              "the run phase it died in, as long as it was: %r" % bad)
        with open(html) as f:
            page = f.read()
        check(re.search(r'class="error"><title>run round 0: [0-9.]+ (ms|s) '
                        r'error', page),
              "the HTML timeline has the run phase's bar")


@test
def supervise__out_of_descriptors_names_the_call_that_failed():
    # ulimit -n 20 and -j 4: a child cannot be started for want of a
    # descriptor (a memfd, a pipe or a socket pair), and fork never ran.
    path = scene("fds.yaml")
    rc, out, err = run("", ["run", "--plugin", PLUGIN, "--platform",
                            "scribble", "--format", "tap", "--log-level",
                            "error", "-j", "4", path], limit_fds=20)
    what = "rc=%d\n%s%s" % (rc, out, err)
    msgs = re.findall(r'^  message: "(.*)"$', out, re.M)
    check(msgs, "some case could not get a child: " + what)
    for m in msgs:
        check(re.match(r"cannot start a supervised child: (?:(?:memfd_create"
                       r"|pipe|mmap) \([a-z ]+\)|socketpair): Too many open "
                       r"files$",
                       m), "the call that failed is named: " + what)


sys.exit(main(TMP))
