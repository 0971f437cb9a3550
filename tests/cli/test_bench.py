# SPDX-License-Identifier: MIT
"""`scenetest bench` (docs/bench.md) through the binary, printing TAP 13.

Usage: test_bench.py SCENETEST PATH/TO/st_plugin_benchdev.so
                    PATH/TO/st_plugin_hostile.so

The benchdev platform (tests/plugins/benchdev.c) reports as device_ns
1000 x the number of its call in the case (+1 when its flush hook ran
since the previous call), so the rounds, the order statistics, what was
timed and what was flushed are exact numbers, whatever the machine's
speed: no assertion here is about time. Its `ceilings` hook reports a
tiny ceiling under BENCHDEV_CEILING=tiny (every figure suspicious).
The JSON is validated against docs/bench.schema.json with Debian's
/usr/bin/python3 and its jsonschema. The hostile platform
(tests/plugins/hostile.c) has kernels that crash (mul), exit (reduce_sum)
and hang (sub), for the supervised bench (docs/bench.md#supervision).
"""
import csv
import io
import json
import os
import re
import subprocess
import sys
import tempfile

import taptest
from taptest import Run, check, test, write, main

taptest.EXE = os.path.abspath(sys.argv[1])
BENCHDEV = os.path.abspath(sys.argv[2])
HOSTILE = os.path.abspath(sys.argv[3])
TMP = tempfile.mkdtemp(prefix="scenetest-bench-")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
SCHEMA = os.path.join(ROOT, "docs", "bench.schema.json")
# Small ceiling buffers: the test-only variable (docs/bench.md).
ENV = {"SCENETEST_BENCH_CEILING_BYTES": "65536"}

ARGS = """\
args:
  - {tensor: a, dtype: float32, shape: [N], init: {uniform: [-1, 1]}}
  - {tensor: b, dtype: float32, shape: [N], init: {fill: 3.0}}
  - {tensor: out, dtype: float32, shape: [N], init: zeros, role: output}
"""
SCENE = write(TMP, "bd.yaml", "scene: bd\nkernel: add\ngolden: add\n" + ARGS +
              "cases:\n  - name: n64\n    params: {N: 64}\n")
# A kernel whose golden is another op: the checked round fails.
WRONG = write(TMP, "wrong.yaml", "scene: wrong\nkernel: add\ngolden: sub\n" +
              ARGS + "cases:\n  - name: n64\n    params: {N: 64}\n")
# A plugin op no built-in op names: no work model, times only.
NOMODEL = write(TMP, "nomodel.yaml",
                "scene: nomodel\nkernel: bd_add\ngolden: add\n" + ARGS +
                "cases:\n  - name: n64\n    params: {N: 64}\n")


def bench(args, env=None, fmt="json", plugin=True):
    e = dict(ENV)
    e.update(env or {})
    pre = ["bench"]
    if plugin:
        pre += ["--plugin", BENCHDEV, "--platform", "benchdev"]
    if fmt is not None:
        pre += ["--format", fmt]
    return Run(pre + args, env=e)


def schema_errors(path):
    """None when the JSON file at path validates against
    docs/bench.schema.json (with Debian's /usr/bin/python3 and its
    jsonschema, where that python is there), else what jsonschema said."""
    if not os.path.exists("/usr/bin/python3"):
        return None
    p = subprocess.run(
        ["/usr/bin/python3", "-c",
         "import json,sys,jsonschema;"
         "jsonschema.validate(json.load(open(sys.argv[1])),"
         "json.load(open(sys.argv[2])))", path, SCHEMA],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return None if p.returncode == 0 else p.stderr.decode()


def doc_of(r):
    try:
        return json.loads(r.out)
    except ValueError:
        check(False, "bench --format json prints JSON", r)


QUICK = ["--warmup-ms", "0", "--min-time-ms", "0"]


@test
def rounds_min_rounds_bind_and_check_round_not_timed():
    r = bench(QUICK + ["--min-rounds", "7", "--log-level", "warning", SCENE])
    check(r.rc == 0, "exit 0", r)
    c = doc_of(r)["cases"][0]
    check(c["rounds"] == 7, "7 timed rounds (--min-rounds)", r)
    # Call 1 is the checked round; the timed ones are calls 2..8.
    check((c["min_ns"], c["median_ns"], c["p10_ns"], c["p90_ns"]) ==
          (2000, 5000, 2600, 7400),
          "the platform's device_ns are the figures, the checked round "
          "left out: %r" % c, r)
    check(c["status"] == "pass" and c["flops"] == 64 and c["bytes"] == 768,
          "the add's work model: 64 FLOPs, 3 x 256 bytes", r)
    check(abs(c["gflops"] - 64 / 5000.0) < 1e-12 and
          abs(c["gbps"] - 768 / 5000.0) < 1e-12,
          "GFLOP/s and GB/s from the median", r)


@test
def rounds_max_rounds_cap():
    r = bench(["--warmup-ms", "0", "--min-rounds", "1", "--max-rounds", "12",
               "--min-time-ms", "3600000", "--max-time-ms", "3600000",
               "--log-level", "warning", SCENE])
    check(r.rc == 0, "exit 0", r)
    c = doc_of(r)["cases"][0]
    check(c["rounds"] == 12, "--max-rounds caps a loop that --min-time-ms "
          "would keep going", r)
    check(c["p90_ns"] <= 13000, "calls 2..13 timed", r)


@test
def rounds_max_time_cap():
    r = bench(["--warmup-ms", "0", "--min-time-ms", "0", "--max-time-ms",
               "1", "--min-rounds", "100000000", "--max-rounds", "100000000",
               "--log-level", "warning", SCENE])
    check(r.rc == 0, "exit 0", r)
    c = doc_of(r)["cases"][0]
    check(1 <= c["rounds"] < 100000000,
          "--max-time-ms stops the loop before --min-rounds", r)


def run_lines(err):
    return [l for l in err.splitlines() if "[TIMING] phase" in l and
            " name=run " in l]


@test
def warmup_and_check_rounds_logged_with_their_fields():
    r = bench(["--warmup-ms", "1", "--min-time-ms", "0", "--min-rounds", "3",
               "--max-rounds", "3", "--log-level", "timing", SCENE])
    check(r.rc == 0, "exit 0", r)
    runs = run_lines(r.err)
    check(len(runs) >= 4 and runs[0].endswith("status=ok device_ns=1000 "
                                             "check=1"),
          "the first run is the checked round (check=1)", r)
    compares = [l for l in r.err.splitlines() if " name=compare " in l]
    check(len(compares) == 1 and compares[0].endswith(" check=1"),
          "one compare, on the checked round", r)
    warm = [l for l in runs if l.endswith(" warmup=1")]
    timed = runs[1 + len(warm):]
    check(runs[1:1 + len(warm)] == warm and len(timed) == 3 and
          not any("warmup=1" in l or "check=1" in l for l in timed),
          "warm-up rounds (warmup=1), then 3 timed rounds without a tag", r)
    c = doc_of(r)["cases"][0]
    check(c["min_ns"] == 1000 * (2 + len(warm)),
          "the timed rounds come after the %d warm-up rounds" % len(warm), r)


@test
def timing_leaves_out_warmup_and_check_rounds():
    log = os.path.join(TMP, "bench.log")
    r = bench(["--warmup-ms", "1", "--min-time-ms", "0", "--min-rounds", "4",
               "--max-rounds", "4", "--log-level", "timing", "--log-file",
               log, SCENE])
    check(r.rc == 0, "exit 0", r)
    with open(log) as f:
        text = f.read()
    check(" warmup=1" in text and " check=1" in text,
          "the log has warm-up and checked rounds", r)
    t = Run(["timing", "--format", "json", log])
    groups = {g["phase"]: g for g in json.loads(t.out)["groups"]}
    check(t.rc == 0 and groups["run"]["n"] + groups["run"]["dropped"] == 4
          and "compare" not in groups,
          "timing counts the 4 timed rounds only, no compare: %r"
          % groups.get("run"), t)


@test
def cold_cache_flushes_before_each_timed_round_only():
    r = bench(QUICK + ["--min-rounds", "4", "--max-rounds", "4",
                       "--cold-cache", "--log-level", "timing", SCENE])
    check(r.rc == 0, "exit 0", r)
    dev = [int(re.search(r"device_ns=(\d+)", l).group(1))
           for l in run_lines(r.err)]
    check(dev == [1000, 2001, 3001, 4001, 5001],
          "the checked round unflushed, each timed round flushed: %r" % dev,
          r)


@test
def suspicious_exits_1_and_is_marked():
    env = {"BENCHDEV_CEILING": "tiny"}
    r = bench(QUICK + ["--min-rounds", "2", "--log-level", "warning", SCENE],
              env=env)
    check(r.rc == 1 and "--allow-suspicious" in r.err,
          "a figure above 105% of the ceiling: exit 1", r)
    c = doc_of(r)["cases"][0]
    check(c["suspicious"] is True and c["bytes_fraction"] > 1.05 and
          c["flops_fraction"] > 1.05, "marked in the JSON", r)
    r = bench(QUICK + ["--min-rounds", "2", "--log-level", "warning",
                       "--allow-suspicious", SCENE], env=env, fmt="text")
    check(r.rc == 0 and "suspicious" in r.out,
          "--allow-suspicious: exit 0, still marked in the table", r)
    r = bench(QUICK + ["--min-rounds", "2", "--log-level", "warning", SCENE],
              env=env, fmt="csv")
    rows = list(csv.DictReader(io.StringIO(r.out)))
    check(r.rc == 1 and rows[0]["suspicious"] == "true",
          "marked in the CSV", r)
    # Without the hook's ceilings: null fractions, never suspicious.
    r = bench(QUICK + ["--min-rounds", "2", "--log-level", "warning", SCENE])
    c = doc_of(r)["cases"][0]
    check(r.rc == 0 and c["bytes_fraction"] is None and
          c["flops_fraction"] is None and c["bound"] is None and
          not c["suspicious"], "no ceiling: null fractions", r)


@test
def failing_case_not_timed_and_no_check():
    r = bench(QUICK + ["--min-rounds", "3", "--log-level", "timing", WRONG],
              plugin=False)
    check(r.rc == 1, "a case that fails its checked round: exit 1", r)
    c = doc_of(r)["cases"][0]
    check(c["status"] == "fail" and c["rounds"] == 0 and
          c["median_ns"] is None and c["gflops"] is None,
          "reported fail, not timed", r)
    check(len(run_lines(r.err)) == 1, "one run: the checked round", r)
    r = bench(QUICK + ["--min-rounds", "3", "--max-rounds", "3",
                       "--log-level", "timing", "--no-check", WRONG],
              plugin=False)
    c = doc_of(r)["cases"][0]
    check(r.rc == 0 and c["status"] == "pass" and c["rounds"] == 3,
          "--no-check: no golden, no compare, timed", r)
    check(" name=golden " not in r.err and " name=compare " not in r.err,
          "--no-check: no golden or compare phase", r)


@test
def no_work_model_times_only():
    r = bench(QUICK + ["--min-rounds", "2", "--log-level", "warning",
                       NOMODEL])
    c = doc_of(r)["cases"][0]
    check(r.rc == 0 and c["rounds"] == 2 and c["median_ns"] == 2500 and
          c["flops"] is None and c["bytes"] is None and
          c["gflops"] is None and c["gbps"] is None,
          "an op without a work model: times only", r)


WORK = write(TMP, "work.yaml", """\
scene: work
kernel: bd_add
golden: add
flops: N * 3
""" + ARGS + """\
cases:
  - name: scene_flops
    params: {N: 64}
  - name: own
    params: {N: 10}
    flops: 7
    bytes: 4 * N * 3
---
scene: builtin_override
kernel: add
golden: add
bytes: 1
""" + ARGS + """\
cases:
  - name: n8
    params: {N: 8}
""")


@test
def flops_and_bytes_keys_are_expressions_over_params():
    r = bench(QUICK + ["--min-rounds", "2", "--log-level", "warning", WORK])
    check(r.rc == 0, "exit 0", r)
    cs = {c["case"]: c for c in doc_of(r)["cases"]}
    check(cs["scene_flops"]["flops"] == 192 and
          cs["scene_flops"]["bytes"] is None,
          "the scene's flops: N * 3 in a case with N = 64; no bytes", r)
    check(cs["own"]["flops"] == 7 and cs["own"]["bytes"] == 120,
          "the case's own keys over the scene's", r)
    check(cs["n8"]["flops"] == 8 and cs["n8"]["bytes"] == 1,
          "a built-in op: bytes overridden, flops its own", r)
    bad = write(TMP, "badwork.yaml",
                "scene: w\nkernel: add\nflops: M * 2\n" + ARGS +
                "cases:\n  - name: a\n    params: {N: 4}\n"
                "  - name: b\n    params: {N: 4}\n    bytes: -1\n")
    r = Run(["check", bad])
    check(r.rc == 2 and "badwork.yaml:3:8: error: flops: 'M' is not a param"
          in r.err and "badwork.yaml:" in r.err and "'bytes'" in r.err,
          "an unknown param and a negative count: load errors", r)


FP_KEYS = ["cpu", "cpus", "governor", "kernel", "libc", "torch"]
FP_RE = re.compile(r' ([a-z.]+)="((?:[^"\\]|\\.)*)"')


@test
def fingerprint_line_after_the_first_record_once():
    r = bench(QUICK + ["--min-rounds", "1", "--max-rounds", "1",
                       "--log-level", "timing", SCENE, NOMODEL])
    check(r.rc == 0, "exit 0", r)
    lines = r.err.splitlines()
    rec = [i for i, l in enumerate(lines) if "torch_backend_autoload" in l]
    fps = [i for i, l in enumerate(lines) if "[TIMING] fingerprint " in l]
    check(len(rec) == 1 and fps == [rec[0] + 1],
          "one fingerprint line, right after the first record", r)
    line = lines[fps[0]]
    pairs = FP_RE.findall(line)
    check(line == "[TIMING] fingerprint" +
          "".join(' %s="%s"' % p for p in pairs),
          "KEY=\"VALUE\" pairs only: %s" % line, r)
    check([k for k, _ in pairs] == FP_KEYS + ["benchdev.device"],
          "the host's keys, then the platform's, prefixed", r)
    check(pairs[-1][1] == 'bench \\"dev\\"',
          "the platform's value escaped as the record's raw", r)
    doc = doc_of(r)
    check(list(doc["fingerprint"].keys()) == FP_KEYS + ["benchdev.device"]
          and doc["fingerprint"]["benchdev.device"] == 'bench "dev"' and
          doc["fingerprint"]["cpus"] == dict(pairs)["cpus"],
          "the JSON's fingerprint: the line's keys, unescaped values", r)
    r = Run(["run", "--no-supervise", "--log-level", "timing", "--format",
             "tap", SCENE, NOMODEL, "--plugin", BENCHDEV, "--platform",
             "benchdev"])
    check(r.rc == 0 and r.err.count("[TIMING] fingerprint ") == 1,
          "run: one line per process too", r)
    r = Run(["run", "--format", "json", "--log-level", "warning", SCENE,
             "--plugin", BENCHDEV, "--platform", "benchdev"])
    fpj = json.loads(r.out)["fingerprint"]
    check(r.rc == 0 and list(fpj.keys()) == FP_KEYS and
          fpj["cpus"] == dict(pairs)["cpus"],
          "run's JSON report: the host's fingerprint keys", r)


def log_with(fp, pid=100, extra=""):
    """A log of s::c: a record, the fingerprint line fp (None: none),
    6 run rounds."""
    lines = ["[TIMING] torch_backend_autoload setting=0 raw=\"0\" "
             "effective=disabled torch_imported=false torch_npu_loaded=false "
             "pid=%d\n" % pid]
    if fp is not None:
        lines.append("[TIMING] fingerprint " + fp + "\n")
    lines += ["[TIMING] phase pid=%d scene=s case=c name=run round=%d "
              "dur_ns=%d status=ok%s\n" % (pid, r, 1000 + r, extra)
              for r in range(6)]
    return "".join(lines)


FP = ('cpu="Model A" cpus="8" governor="performance" kernel="6.1" '
      'libc="glibc 2.36" torch="-" cuda.device="H200" '
      'cuda.sm_mhz_start="1980"')


@test
def compare_refuses_different_fingerprints():
    base = write(TMP, "fp_base.log", log_with(FP))
    other_cpu = write(TMP, "fp_cpu.log",
                      log_with(FP.replace("Model A", "Model B")))
    clocks = write(TMP, "fp_clock.log",
                   log_with(FP.replace('"1980"', '"1410"')))
    none = write(TMP, "fp_none.log", log_with(None))
    r = Run(["compare", base, other_cpu])
    check(r.rc == 2 and "fingerprints differ" in r.err and
          '  * cpu: "Model A" | "Model B"' in r.err and
          '    cpus: "8" | "8"' in r.err,
          "a differing cpu: refused, field by field, the cpu marked", r)
    r = Run(["compare", "--ignore-env", "cpu", base, other_cpu])
    check(r.rc == 0 and "s::c" in r.out, "--ignore-env cpu accepts it", r)
    r = Run(["compare", base, clocks])
    check(r.rc == 0 and '  ~ cuda.sm_mhz_start: "1980" | "1410"' in r.err,
          "a clock field (cuda.sm_mhz_start) is shown, never refused", r)
    r = Run(["compare", base, none])
    check(r.rc == 0 and "warning: no fingerprint line in" in r.err,
          "a side without a fingerprint line: a warning", r)
    # Bench lines (warmup=1, check=1) are not samples.
    bench_log = write(TMP, "fp_bench.log", log_with(FP, extra=" warmup=1") +
                      log_with(FP, pid=101))
    t = Run(["timing", "--format", "json", "--keep-first", bench_log])
    g = json.loads(t.out)["groups"]
    check(t.rc == 0 and len(g) == 1 and g[0]["n"] == 6,
          "timing: the warm-up lines left out", t)


CHROMIUM = "/usr/bin/chromium"


@test
def html_roofline_one_point_a_case():
    page = os.path.join(TMP, "bench.html")
    # Three timed cases with FLOPs and bytes (float32; work.yaml's
    # scene_flops has no bytes: no point); tiny ceilings: suspicious.
    r = bench(QUICK + ["--min-rounds", "2", "--log-level", "warning",
                       "--report", "html:" + page, SCENE, WORK],
              env={"BENCHDEV_CEILING": "tiny"}, fmt="json")
    check(r.rc == 1, "suspicious: exit 1, the page written anyway", r)
    with open(page) as f:
        text = f.read()
    n_model = sum(1 for c in doc_of(r)["cases"] if c["flops"] and c["bytes"])
    check(n_model == 3 and text.count("<circle class=\"point") == n_model,
          "one point a case with FLOPs and bytes (%d)" % n_model, r)
    check(text.count("<circle class=\"point suspicious\"") == n_model and
          'class="ceiling" data-class="float32"' in text,
          "suspicious points marked, the float32 roof drawn", r)
    r = bench([SCENE, "--report", "junit:x.xml"], fmt=None)
    check(r.rc == 2 and "takes html:PATH" in r.err,
          "--report other than html: a usage error", r)
    if not os.path.exists(CHROMIUM):
        return
    p = subprocess.run([CHROMIUM, "--headless", "--no-sandbox",
                        "--disable-gpu", "--dump-dom", "file://" + page],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=120)
    dom = p.stdout.decode("utf-8", "replace")
    check(p.returncode == 0 and dom.count("<circle class=\"point") ==
          n_model and "<svg" in dom,
          "Chromium renders the roofline with one point a case", None)


@test
def json_validates_and_csv_has_its_columns():
    # The cpu platform's own ceilings, on two scenes (one failing).
    r = bench(QUICK + ["--min-rounds", "2", "--log-level", "warning",
                       "--allow-suspicious", SCENE, WRONG], plugin=False)
    check(r.rc == 1, "the failing case fails the run", r)
    doc = doc_of(r)
    check(doc["ceilings"]["bytes_per_s"] > 0 and
          all(doc["ceilings"]["flops_per_s"][k] > 0
              for k in ("float64", "float32", "half", "float8", "int")),
          "cpu: a bandwidth and every dtype class's FMA rate", r)
    check([c["status"] for c in doc["cases"]] == ["pass", "fail"],
          "one entry a case", r)
    err = schema_errors(write(TMP, "out.json", r.out))
    check(err is None, "the JSON validates against docs/bench.schema.json: "
          "%s" % err, r)
    r2 = bench(QUICK + ["--min-rounds", "2", "--log-level", "warning",
                        "--allow-suspicious", SCENE, WRONG], plugin=False,
               fmt="csv")
    rows = list(csv.DictReader(io.StringIO(r2.out)))
    check(list(rows[0].keys()) == list(doc["cases"][0].keys()),
          "the CSV's columns are the JSON's per-case keys", r2)
    check([row["status"] for row in rows] == ["pass", "fail"] and
          rows[1]["median_ns"] == "", "one row a case, empty for none", r2)


@test
def usage_errors():
    for args, what in [(["--min-rounds", "5", "--max-rounds", "4"],
                        "more than --max-rounds"),
                       (["--max-rounds", "0"], "--max-rounds"),
                       (["--min-rounds", "0"], "--min-rounds"),
                       (["--warmup-ms", "x"], "--warmup-ms"),
                       (["--min-time-ms"], "needs a value")]:
        r = bench([SCENE] + args, plugin=False, fmt=None)
        check(r.rc == 2 and what in r.err, "%r: exit 2" % args, r)
    r = bench([SCENE], plugin=False, fmt="xml")
    check(r.rc == 2 and "unknown format" in r.err, "--format xml: exit 2", r)


# The supervised bench (docs/bench.md#supervision): innocent cases around a
# kernel that crashes, one that calls exit(7) and one that hangs (its
# case's timeout: 0.5 s); hostile's add is correct (and prints, which the
# child's capture keeps off the table).
HOSTILE_OP = """\
scene: {scene}
kernel: {op}
golden: {op}
args:
  - {{tensor: a, dtype: float32, shape: [N], init: {{uniform: [-1, 1]}}}}
  - {{tensor: b, dtype: float32, shape: [N], init: {{fill: 3.0}}}}
  - {{tensor: out, dtype: float32, shape: [N], init: zeros, role: output}}
cases:
  - {{name: {case}, params: {{N: 64}}{extra}}}
"""
HOSTILE_SCENES = write(TMP, "hostile.yaml", "---\n".join([
    HOSTILE_OP.format(scene="good", op="add", case="first", extra=""),
    HOSTILE_OP.format(scene="crash", op="mul", case="segv", extra=""),
    HOSTILE_OP.format(scene="hang", op="sub", case="forever",
                      extra=", timeout: 0.5"),
    """\
scene: exits
kernel: reduce_sum
golden: reduce_sum
args:
  - {tensor: x, dtype: float32, shape: [N], init: {uniform: [-1, 1]}}
  - {tensor: y, dtype: float32, shape: [1], init: zeros, role: output}
cases:
  - {name: seven, params: {N: 64}}
""",
    HOSTILE_OP.format(scene="good2", op="add", case="last", extra="")]))
HOSTILE_NAMES = ["good::first", "crash::segv", "hang::forever",
                 "exits::seven", "good2::last"]
# What each hostile case's message says, under supervision and --isolate.
HOSTILE_WHY = {"crash::segv": "SIGSEGV", "hang::forever": "timed out",
               "exits::seven": "exited with status 7"}


def hostile_bench(args, fmt):
    # Under ASan the crash stays a SIGSEGV (its handler would exit 1).
    env = dict(ENV)
    env["ASAN_OPTIONS"] = ":".join(
        x for x in (os.environ.get("ASAN_OPTIONS"), "handle_segv=0") if x)
    return Run(["bench", "--plugin", HOSTILE, "--platform", "hostile",
                "--format", fmt, "--log-level", "warning"] + QUICK +
               ["--min-rounds", "3"] + args + [HOSTILE_SCENES], env=env)


def check_hostile_rows(rows, r, how):
    """rows: (name, status, rounds, median, message) a case, in order."""
    check([row[0] for row in rows] == HOSTILE_NAMES,
          "%s: one row a case, in order, every one there" % how, r)
    for name, status, rounds, median, message in rows:
        if name.startswith("good"):
            check(status == "pass" and rounds == 3 and median is not None
                  and not message, "%s: innocent %s keeps its figures (3 "
                  "rounds, a median)" % (how, name), r)
        else:
            check(status == "error" and rounds == 0 and median is None and
                  HOSTILE_WHY[name] in (message or ""),
                  "%s: %s is an error, untimed, its message saying %r" %
                  (how, name, HOSTILE_WHY[name]), r)


@test
def supervised_crash_exit_hang_fail_their_own_case_only():
    page = os.path.join(TMP, "hostile.html")
    for mode in ([], ["--isolate"]):
        how = "bench " + (" ".join(mode) or "(supervised)")
        r = hostile_bench(mode + ["--report", "html:" + page], "json")
        check(r.rc == 1, "%s: exit 1" % how, r)
        check(not re.search(r"Sanitizer|runtime error:", r.err),
              "%s: no sanitizer spoke" % how, r)
        doc = doc_of(r)
        check_hostile_rows([(c["scene"] + "::" + c["case"], c["status"],
                             c["rounds"], c["median_ns"], c["message"])
                            for c in doc["cases"]], r, how + " json")
        err = schema_errors(write(TMP, "hostile.json", r.out))
        check(err is None, "%s: the JSON validates: %s" % (how, err), r)
        with open(page) as f:
            html = f.read()
        cases = html[html.index('<table id="cases">'):]
        trs = re.findall(r"<tr class=\"(\w+)\"><td>([^<]*)</td><td>(\w+)"
                         r"</td><td>(\d+)</td><td>([^<]*)</td>.*?"
                         r"<td class=\"message\">([^<]*)</td></tr>", cases)
        check_hostile_rows([(t[1], t[2], int(t[3]),
                             None if t[4] == "-" else t[4], t[5])
                            for t in trs], r, how + " html")
    r = hostile_bench([], "csv")
    check(r.rc == 1, "csv: exit 1", r)
    rows = list(csv.DictReader(io.StringIO(r.out)))
    check_hostile_rows([(x["scene"] + "::" + x["case"], x["status"],
                         int(x["rounds"]), x["median_ns"] or None,
                         x["message"]) for x in rows], r, "csv")
    r = hostile_bench([], "text")
    check(r.rc == 1, "text: exit 1", r)
    rows = []
    for line in r.out.splitlines():
        f = line.split()
        if f and f[0] in HOSTILE_NAMES:
            why = [m for m in r.out.splitlines()
                   if m.startswith(f[0] + ": error: ")]
            rows.append((f[0], f[-1], int(f[1]),
                         None if f[2] == "-" else f[2],
                         why[0] if why else None))
    check_hostile_rows(rows, r, "text")


@test
def supervision_options():
    r = bench(["-j", "2", SCENE], plugin=False, fmt=None)
    check(r.rc == 2 and "timed one at a time" in r.err,
          "-j 2: a usage error (exit 2)", r)
    for mode in (["-j", "1"], ["--no-supervise"]):
        r = bench(QUICK + ["--min-rounds", "4", "--log-level", "warning"] +
                  mode + [SCENE])
        c = doc_of(r)["cases"]
        check(r.rc == 0 and len(c) == 1 and c[0]["rounds"] == 4 and
              c[0]["message"] is None, "%r: the case benched" % mode, r)
    # A configuration file's jobs is run's: bench ignores it.
    conf = os.path.join(TMP, "conf")
    write(conf, "scenetest.yaml", "jobs: 4\n")
    r = Run(["bench", "--plugin", BENCHDEV, "--platform", "benchdev",
             "--format", "json", "--log-level", "warning", "--min-rounds",
             "2"] + QUICK + [SCENE], env=ENV, cwd=conf)
    c = doc_of(r)["cases"]
    check(r.rc == 0 and c[0]["rounds"] == 2,
          "jobs: 4 in the configuration file: benched, not refused", r)
    r = Run(["run", "--show-config", SCENE], cwd=conf)
    check("jobs: 4" in r.out, "(the file is read: run's jobs is 4)", r)


@test
def table_fingerprint_is_a_later_describe_than_the_logged_one():
    # The log line is the first describe of the process that runs the
    # cases; the table's is a later one in the bench's own process
    # (a child's clocks at its start, the bench's at its end), supervised
    # or not.
    for mode in ([], ["--no-supervise"]):
        r = bench(QUICK + ["--min-rounds", "1", "--log-level", "timing"] +
                  mode + [SCENE], env={"BENCHDEV_DESCRIBE_CALLS": "1"})
        logged = [dict(FP_RE.findall(l)) for l in r.err.splitlines()
                  if "[TIMING] fingerprint " in l]
        doc = doc_of(r)
        check(r.rc == 0 and [f.get("benchdev.calls") for f in logged] ==
              ["1"] and doc["fingerprint"].get("benchdev.calls") == "2",
              "%r: logged at call 1, the table's at call 2" % mode, r)


main(TMP)
