# SPDX-License-Identifier: MIT
"""A case's `env` (docs/scene-format.md) through the binary, printing TAP
13.

Usage: test_env.py SCENETEST GETENV_PLUGIN

- the kernel sees the scene's env, a case's entry wins over the scene's,
  and the next case runs without it (restored), supervised, with -j 2 and
  under --isolate; level-3 workers see it; a kernel that sees the wrong
  value fails (the checks can fail);
- JSON and --events carry each case's env;
- one record line per process per distinct environment: the whole
  sequence of lines and of `emitted` flags;
- --no-supervise with a scene that has env is a usage error (exit 2,
  nothing run).
"""
import json
import os
import re
import sys
import tempfile

import taptest
from taptest import Run, check, events, main, test, write

taptest.EXE, GETENV = sys.argv[1:3]
for var in ("ST_TEST_ENV", "TORCH_DEVICE_BACKEND_AUTOLOAD",
            "SCENETEST_PLUGIN_PATH"):
    os.environ.pop(var, None)
TMP = tempfile.mkdtemp(prefix="scenetest-env-")
BASE = ["--no-default-plugins", "--format", "tap", "--platform", "getenv",
        "--plugin", GETENV]

# env_is passes when ST_TEST_ENV holds `want` (-1: unset).
ENV = write(TMP, "env.yaml", """\
scene: envs
kernel: env_is
skip_golden: true
env: {ST_TEST_ENV: 1, OTHER: "x y"}
args:
  - {tensor: out, dtype: int32, shape: [4], role: output}
  - {scalar: want, dtype: int64, value: W}
cases:
  - {name: scene_value, params: {W: 1}}
  - {name: case_wins, params: {W: 2}, env: {ST_TEST_ENV: "2"}}
---
scene: noenv
kernel: env_is
skip_golden: true
args:
  - {tensor: out, dtype: int32, shape: [4], role: output}
  - {scalar: want, dtype: int64, value: -1}
cases:
  - {name: restored}
---
scene: l3
level: 3
workers: 2
kernel: env_is
skip_golden: true
args:
  - {tensor: out, dtype: int32, shape: [4], role: output}
  - {scalar: want, dtype: int64, value: 7}
cases:
  - {name: workers, env: {ST_TEST_ENV: 7}}
""")

WANT_ENV = {"envs::scene_value": {"ST_TEST_ENV": "1", "OTHER": "x y"},
            "envs::case_wins": {"ST_TEST_ENV": "2", "OTHER": "x y"},
            "noenv::restored": {},
            "l3::workers": {"ST_TEST_ENV": "7"}}


def run(args, env=None):
    return Run(["run"] + BASE + args, env=env)


@test
def kernel_sees_env_case_wins_and_restored():
    # -j 1 supervised: one child runs the first three cases in order, so
    # `restored` runs after a case that set ST_TEST_ENV in the same
    # process; --isolate and -j 2 as well.
    for extra in ([], ["-j", "2"], ["--isolate"]):
        ev = os.path.join(TMP, "e.jsonl")
        r = run(extra + ["--events", ev, ENV])
        check(r.rc == 0, "all pass %s" % extra, r)
        for name in WANT_ENV:
            check(re.search(r"^ok \d+ - %s$" % re.escape(name), r.out, re.M),
                  "%s passed %s" % (name, extra), r)
        got = {c["scene"] + "::" + c["case"]: c["env"] for c in events(ev)}
        check(got == WANT_ENV, "events env %s %s" % (got, extra), r)


@test
def same_process_runs_env_then_restores():
    # Every level-2 case in one supervised child: the pids show it.
    ev = os.path.join(TMP, "p.jsonl")
    r = run(["--events", ev, "--case", "envs", "--case", "noenv", ENV])
    check(r.rc == 0, "rc", r)
    cases = events(ev)
    check(len(cases) == 3 and len({c["pid"] for c in cases}) == 1,
          "one process ran the three cases", r)


@test
def wrong_value_fails_naming_what_the_kernel_saw():
    path = write(TMP, "wrong.yaml", """\
scene: wrong
kernel: env_is
skip_golden: true
env: {ST_TEST_ENV: 5}
args:
  - {tensor: out, dtype: int32, shape: [4], role: output}
  - {scalar: want, dtype: int64, value: 6}
cases:
  - {name: l2}
---
scene: wrong3
level: 3
kernel: env_is
skip_golden: true
args:
  - {tensor: out, dtype: int32, shape: [4], role: output}
  - {scalar: want, dtype: int64, value: 6}
cases:
  - {name: l3, env: {ST_TEST_ENV: 8}}
""")
    ev = os.path.join(TMP, "w.jsonl")
    r = run(["--events", ev, path])
    check(r.rc == 1, "exit 1", r)
    got = {c["case"]: c for c in events(ev)}
    check(got["l2"]["status"] == "error" and "ST_TEST_ENV is '5', expected 6"
          in got["l2"]["message"], "l2 %s" % got["l2"]["message"], r)
    check(got["l3"]["status"] == "error" and "ST_TEST_ENV is '8', expected 6"
          in got["l3"]["message"], "l3 %s" % got["l3"]["message"], r)


@test
def json_report_carries_env():
    out = os.path.join(TMP, "r.json")
    r = Run(["run", "--no-default-plugins", "--platform", "getenv",
             "--plugin", GETENV, "--format", "json", "--output", out, ENV])
    check(r.rc == 0, "rc", r)
    with open(out) as f:
        doc = json.load(f)
    got = {c["id"]: c["env"] for c in doc["cases"]}
    check(got == WANT_ENV, "json env %s" % got, r)


REC = write(TMP, "rec.yaml", """\
scene: rec
kernel: add
args:
  - {tensor: a, dtype: float32, shape: [4]}
  - {tensor: b, dtype: float32, shape: [4]}
  - {tensor: out, dtype: float32, shape: [4], role: output}
cases:
  - {name: c1}
  - {name: c2, env: {TORCH_DEVICE_BACKEND_AUTOLOAD: 0}}
  - {name: c3, env: {TORCH_DEVICE_BACKEND_AUTOLOAD: 0}}
  - {name: c4, env: {OTHER: 1}}
  - {name: c5}
  - {name: c6, env: {TORCH_DEVICE_BACKEND_AUTOLOAD: "yes"}}
  - {name: c7, env: {OTHER: 2}}
""")


def records(err):
    return [line for line in err.splitlines()
            if "[TIMING] torch_backend_autoload" in line]


@test
def one_record_line_per_distinct_environment():
    ev = os.path.join(TMP, "rec.jsonl")
    r = Run(["run", "--no-default-plugins", "--format", "tap", "--events",
             ev, REC])
    check(r.rc == 0, "rc", r)
    cases = events(ev)
    check(len({c["pid"] for c in cases}) == 1, "one process", r)
    emitted = [next(e["emitted"] for e in c["events"]
                    if e["name"] == "record") for c in cases]
    # c1 the process's first; c2 changes the variable; c3 the same env as
    # the last line; c4 another env that reads as c1's record does, after
    # a line under c2/c3's: the record differs from the last line, so a
    # line; c5 back to the process's environment: the record is c4's, no
    # line; c6 "yes" (invalid); c7 the process's reading again.
    check(emitted == [True, True, False, True, False, True, True],
          "emitted %s" % emitted, r)
    settings = [re.search(r"setting=(\S+) raw=(\S+)", line).groups()
                for line in records(r.err)]
    check(settings == [("unset", "-"), ("0", '"0"'), ("unset", "-"),
                       ("invalid", '"yes"'), ("unset", "-")],
          "record lines %s" % settings, r)
    # Every line is the pid's; the case's record phase wrote it.
    check(all("pid=%d" % cases[0]["pid"] in line for line in records(r.err)),
          "pids", r)


@test
def timing_attributes_each_case_to_its_record():
    # `timing` tags each case's phases with the record its process logged
    # last, the case's own args and golden (logged before its record line)
    # included (docs/measuring.md).
    log = os.path.join(TMP, "rec.log")
    r = Run(["run", "--no-default-plugins", "--format", "tap", "--rounds",
             "2", "--log-file", log, REC])
    check(r.rc == 0, "run", r)
    r = Run(["timing", "--format", "json", log])
    check(r.rc == 0, "timing", r)
    doc = json.loads(r.out)
    got = {}
    for g in doc["groups"]:
        got.setdefault(g["case"], set()).add(g["conditions"])
    check(got == {"c1": {"A"}, "c2": {"B"}, "c3": {"B"}, "c4": {"A"},
                  "c5": {"A"}, "c6": {"C"}, "c7": {"A"}},
          "conditions %s" % got, r)
    check(len(doc["conditions"]) == 3, "three conditions", r)


@test
def record_without_env_is_once_per_process():
    # The rule is unchanged for a run without env: one line, even when
    # the environment changed under the harness (TIMING at -j 1).
    path = write(TMP, "plain.yaml", taptest.vadd_scene("plain", """\
  - {name: one, params: {N: 4}}
  - {name: two, params: {N: 4}}
"""))
    r = Run(["run", "--no-default-plugins", "--format", "tap", path],
            env={"TORCH_DEVICE_BACKEND_AUTOLOAD": "0"})
    check(r.rc == 0 and len(records(r.err)) == 1 and
          "setting=0 " in records(r.err)[0], "one line", r)


@test
def no_supervise_with_env_is_usage_error():
    r = run(["--no-supervise", ENV])
    check(r.rc == 2 and r.out == "", "exit 2, nothing run", r)
    check(r.err.startswith("scenetest: error: case 'envs::scene_value' (%s:4)"
                           " sets env, which only a supervised or --isolate "
                           "run can set" % ENV), "message", r)
    # A selection without env runs in-process as before; --isolate runs
    # the env cases.
    r = run(["--no-supervise", "--case", "noenv", ENV])
    check(r.rc == 0, "no env selected: runs", r)
    r = run(["--no-supervise", "--isolate", "--case", "envs", ENV])
    check(r.rc == 0, "--isolate: runs", r)


sys.exit(main(TMP))
