# SPDX-License-Identifier: MIT
"""A platform's device hooks and timing through the binary (docs/plugins.md#platform-hooks-prepare-and-release), on
the fake device platform (tests/plugins/fakedev.c), printing TAP 13.

Usage: test_device.py SCENETEST PATH/TO/st_plugin_fakedev.so

- the TIMING phase line of `run` carries device_ns= and copy_ns=, other
  phases' lines do not, and the --events run event has the same numbers;
  `scenetest timing` shows them as run.device and run.copy rows;
- under --isolate the child prepares, runs and releases (its pid, once);
- at level 3 each of 2 workers prepares and releases its own shard, and
  a run's workers are forked before its first level-2 case touches the
  device;
- a prepare failure is an args error (exit 1), a declined dtype a skip
  (exit 0).
Standard library only.
"""
import json
import os
import re
import sys
import tempfile

import taptest
from taptest import Run, check, test, write, main

taptest.EXE = os.path.abspath(sys.argv[1])
FAKEDEV = os.path.abspath(sys.argv[2])
TMP = tempfile.mkdtemp(prefix="scenetest-device-")

SCENE = """\
scene: dev
%(level)skernel: axpy
args:
  - {tensor: x, dtype: %(dtype)s, shape: [N], init: {uniform: [-1, 1]}}
  - {tensor: y, dtype: %(dtype)s, shape: [N], init: ones, role: inout}
  - {scalar: alpha, dtype: float64, value: 2.0}
cases:
  - {name: c, params: {N: 4096}, rounds: 2}
"""


def scene(name, level3=False, dtype="float32"):
    return write(TMP, name + ".yaml", SCENE % {
        "level": "level: 3\nworkers: 2\n" if level3 else "",
        "dtype": dtype})


def fakedev(*args, env=None):
    return Run(["run", "--plugin", FAKEDEV,
                "--platform", "fakedev", "--format", "tap"] + list(args),
               env=env)


def log_lines(path):
    with open(path) as f:
        return [l.split() for l in f.read().splitlines()]


PHASE = re.compile(r"\[TIMING\] phase pid=(\d+) scene=dev case=c name=(\w+) "
                   r"round=(\S+) dur_ns=(\d+) status=(\w+)(.*)$")


@test
def timing_line_and_events_carry_device_times():
    events = os.path.join(TMP, "ev.jsonl")
    r = fakedev("--log-level", "timing", "--events", events, scene("t"))
    check(r.rc == 0, "the case passes", r)
    runs, others = [], []
    for line in r.err.splitlines():
        m = PHASE.search(line)
        if m:
            (runs if m.group(2) == "run" else others).append(m)
    check(len(runs) == 2, "two run lines", r)
    for m in runs:
        tail = re.fullmatch(r" device_ns=(\d+) copy_ns=(\d+)", m.group(6))
        check(tail is not None, "run line ends with device_ns= copy_ns=: %r"
              % m.group(0), r)
        check(int(tail.group(1)) + int(tail.group(2)) <= int(m.group(4)),
              "device + copy time within the phase's duration", r)
    check(others and all(m.group(6) == "" for m in others),
          "no other phase line has device times", r)
    with open(events) as f:
        case = json.loads(f.read())
    evs = [e for e in case["events"] if e["name"] != "load"]
    check([e["name"] for e in evs] ==
          ["args", "golden", "record", "run", "compare", "reset", "run",
           "compare"], "the whole phase sequence: %r" % evs)
    for e in evs:
        if e["name"] == "run":
            m = runs[e["round"]]
            check(e["device_ns"] == int(re.search(r"device_ns=(\d+)",
                                                  m.group(6)).group(1)) and
                  e["copy_ns"] == int(re.search(r"copy_ns=(\d+)",
                                                m.group(6)).group(1)),
                  "the run event's times are the TIMING line's: %r" % e)
        else:
            check("device_ns" not in e and "copy_ns" not in e,
                  "no device times on %s" % e["name"])


@test
def timing_shows_run_device_and_run_copy():
    log = os.path.join(TMP, "timing.log")
    r = fakedev("--rounds", "3", "--log-file", log, scene("tm"))
    check(r.rc == 0, "the case passes", r)
    dev, copy = [], []
    with open(log) as f:
        for line in f:
            m = PHASE.search(line)
            if m and m.group(2) == "run" and m.group(3) != "0":
                dev.append(int(re.search(r"device_ns=(\d+)", line).group(1)))
                copy.append(int(re.search(r"copy_ns=(\d+)", line).group(1)))
    t = Run(["timing", "--format", "json", log])
    check(t.rc == 0, "timing reads the log", t)
    groups = {g["phase"]: g for g in json.loads(t.out)["groups"]}
    for phase, values in (("run.device", dev), ("run.copy", copy)):
        g = groups.get(phase)
        check(g is not None, "a %s row: %r" % (phase, sorted(groups)), t)
        values.sort()
        check(g["n"] == 2 and g["min_ns"] == values[0] and
              g["max_ns"] == values[1] and
              g["median_ns"] == (values[0] + values[1]) / 2,
              "%s: the warm rounds' values %r: %r" % (phase, values, g), t)


@test
def junit_system_out_carries_device_times():
    """docs/plugins.md#device-time-device_ns-and-copy_ns: a JUnit testcase allows no properties, so each round's
    device and copy times are lines of its <system-out>."""
    import xml.etree.ElementTree as ET
    out = os.path.join(TMP, "dev.xml")
    r = Run(["run", "--plugin", FAKEDEV, "--platform", "fakedev",
             "--log-level", "warning", "--report", "junit:" + out,
             scene("junit")])
    check(r.rc == 0, "passes", r)
    cases = ET.parse(out).getroot().findall(".//testcase")
    check(len(cases) == 1, "one testcase")
    text = cases[0].findtext("system-out") or ""
    lines = text.strip().splitlines()
    check(len(lines) == 2, "one line per round: %r" % text)
    for k, line in enumerate(lines):
        m = re.fullmatch(r"run round=%d device_ns=(\d+) copy_ns=(\d+)" % k,
                         line)
        check(m is not None, "round %d line: %r" % (k, line))
    plain = os.path.join(TMP, "cpu.xml")
    r = Run(["run", "--log-level", "warning", "--report", "junit:" + plain,
             scene("junitcpu")])
    case = ET.parse(plain).getroot().find(".//testcase")
    check(case.find("system-out") is None, "cpu reports no device time")


@test
def cpu_run_has_no_device_times():
    r = Run(["run", "--log-level", "timing",
             "--format", "tap", scene("cpu")])
    check(r.rc == 0, "passes on cpu", r)
    check("device_ns=" not in r.err and "copy_ns=" not in r.err,
          "a platform that reports none prints none", r)


@test
def isolated_child_prepares_and_releases():
    log = os.path.join(TMP, "iso.log")
    events = os.path.join(TMP, "iso.jsonl")
    r = fakedev("--isolate", "--events", events, scene("iso"),
                env={"FAKEDEV_LOG": log})
    check(r.rc == 0, "passes isolated", r)
    with open(events) as f:
        pid = json.loads(f.read())["pid"]
    lines = log_lines(log)
    check([l[0] for l in lines] == ["prepare", "run", "run", "release"],
          "prepare, two runs, release: %r" % lines)
    check(all(l[1] == "pid=%d" % pid for l in lines),
          "all in the isolated child (pid %d): %r" % (pid, lines))


@test
def level3_workers_prepare_their_own_shards():
    log = os.path.join(TMP, "l3.log")
    r = fakedev(scene("l3", level3=True), env={"FAKEDEV_LOG": log})
    check(r.rc == 0, "passes at level 3", r)
    per = {}
    for what, pid, shard in log_lines(log):
        per.setdefault(shard, []).append((what, pid))
    check(sorted(per) == ["shard=0/2", "shard=1/2"], "two shards: %r" % per)
    pids = set()
    for shard, seq in per.items():
        check([w for w, _ in seq] == ["prepare", "run", "run", "release"],
              "%s: prepare, run, run, release: %r" % (shard, seq))
        check(len({p for _, p in seq}) == 1, "one process per shard")
        pids.add(seq[0][1])
    check(len(pids) == 2, "two worker processes: %r" % pids)


@test
def level3_workers_forked_before_the_first_dispatch():
    # A level-2 case prepares the device in the harness's process, then a
    # level-3 case of the same run needs workers: they were forked before
    # any case ran, so none of them inherits the used device (fakedev
    # refuses a prepare after such a fork: test_device proves it does).
    path = write(TMP, "mixed.yaml",
                 (SCENE % {"level": "", "dtype": "float32"}).replace(
                     "scene: dev", "scene: a_first") + "---\n" +
                 (SCENE % {"level": "level: 3\nworkers: 2\n",
                           "dtype": "float32"}).replace(
                     "scene: dev", "scene: b_second"))
    r = fakedev(path, env={"FAKEDEV_FORK_CHECK": "1"})
    check(r.rc == 0 and re.search(r"^ok 1 - a_first::c$", r.out, re.M) and
          re.search(r"^ok 2 - b_second::c$", r.out, re.M),
          "level 2 then level 3 in one process both pass", r)


@test
def prepare_failure_is_an_args_error():
    r = fakedev(scene("pf"), env={"FAKEDEV_PREPARE": "fail"})
    check(r.rc == 1, "exit 1", r)
    check("not ok 1 - dev::c" in r.out and
          "platform 'fakedev' prepare: fake device: out of device memory"
          in r.out, "the case errors with the prepare's message", r)


@test
def declined_dtype_is_a_skip():
    r = fakedev(scene("f16", dtype="float16"))
    check(r.rc == 0, "exit 0", r)
    check(re.search(r"^ok 1 - dev::c # SKIP fake device: no float16 support",
                    r.out, re.M) is not None, "reported as a skip", r)


sys.exit(main(TMP))
