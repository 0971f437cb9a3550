# SPDX-License-Identifier: MIT
"""`scenetest timing`, `scenetest compare`, `run --log-file` and
SCENETEST_LOG_LEVEL (docs/cli.md#logs), printing TAP 13.

Usage: test_measure.py PATH/TO/scenetest SCENES_DIR SPIN1.so SPIN2.so \
       FAILINIT.so

Hand-written logs with known numbers check the arithmetic exactly; the
end-to-end tests run the binary twice and compare the two logs, one pair
under different TORCH_DEVICE_BACKEND_AUTOLOAD settings (refused) and one
where the new side's kernel does the same add twice over (platform 'spin'
from st_plugin_spin1.so / st_plugin_spin2.so). The p-values expected here
come from Debian's SciPy 1.10.1 (see tests/tools/test_stats.c for the command).
Standard library only.
"""

import csv
import io
import json
import os
import sys
import tempfile

EXE = os.path.abspath(sys.argv[1])
SCENES = os.path.abspath(sys.argv[2])
SPIN1 = os.path.abspath(sys.argv[3])
SPIN2 = os.path.abspath(sys.argv[4])
FAILINIT = os.path.abspath(sys.argv[5])  # its init fails: a WARNING
TMP = tempfile.mkdtemp(prefix="scenetest-measure-")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import taptest  # noqa: E402  (after sys.path)
from taptest import Run, check, main, test  # noqa: E402

taptest.EXE = EXE
write = taptest.writer(TMP)


def record(pid, setting="0", raw='"0"', effective="disabled", torch=False,
           npu=False, extra=()):
    b = lambda v: "true" if v else "false"  # noqa: E731
    mods = "".join(" %s=%s" % (k, b(v)) for k, v in extra)
    return ("[TIMING] torch_backend_autoload setting=%s raw=%s effective=%s "
            "torch_imported=%s torch_npu_loaded=%s%s pid=%d\n"
            % (setting, raw, effective, b(torch), b(npu), mods, pid))


def phase(pid, scene, case, name, rnd, dur, status="ok", extra=""):
    return ("[TIMING] phase pid=%d scene=%s case=%s name=%s round=%s "
            "dur_ns=%d status=%s%s\n"
            % (pid, scene, case, name, "-" if rnd is None else rnd, dur,
               status, extra))


def timing_json(args):
    r = Run(["timing", "--format", "json"] + args)
    check(r.rc == 0, "timing --format json exits 0", r)
    doc = json.loads(r.out)
    groups = {(g["scene"], g["case"], g["phase"]): g for g in doc["groups"]}
    return doc, groups, r


# Two processes run s::c for 4 rounds; CI prefixes on most lines, other
# output in between. Round 0 is cold in each process.
KNOWN = "".join([
    "2026-12-01T10:00:00.001Z [job 3] starting\n",
    "2026-12-01T10:00:00.002Z [job 3] " + phase(100, "s", "c", "args", None, 10),
    phase(100, "s", "c", "golden", None, 20),
    "ci| " + record(100),
    phase(100, "s", "c", "record", None, 5),
    "PASS  s::c (1.0 us)\n",
] + ["ci| " + phase(100, "s", "c", "run", r, d)
     for r, d in enumerate([1000, 50, 70, 60])]
  + [phase(100, "s", "c", "compare", r, d)
     for r, d in enumerate([9, 3, 4, 5])]
  + [phase(100, "s", "c", "reset", r, d) for r, d in [(1, 7), (2, 8), (3, 9)]]
  + [phase(100, "s", "c", "run", 1, 123456, status="fail")]
  + [">> " + record(200), phase(200, "s", "c", "args", None, 30)]
  + [phase(200, "s", "c", "run", r, d)
     for r, d in enumerate([2000, 40, 80, 90])]
  + [phase(200, "s", "c", "compare", r, d)
     for r, d in enumerate([8, 1, 2, 3])]
  + [phase(200, "s", "c", "reset", r, d) for r, d in [(1, 6), (2, 7), (3, 8)]]
  # --repeat: iteration 1's round 0 is the cold one, not iteration 2's.
  + [phase(300, "s", "d@%d" % it, "run", r, d,
           extra=" device_ns=%d iter=%d" % (dv, it))
     for it, r, d, dv in [(1, 0, 500, 5), (1, 1, 10, 6), (2, 0, 20, 7),
                          (2, 1, 30, 8)]]
  + [record(300)])


@test
def timing__known_numbers():
    path = write("known.log", KNOWN)
    doc, g, r = timing_json([path])
    run = g[("s", "c", "run")]
    # Kept: 50 70 60 | 40 80 90 (the failed sample does not count).
    check(run["n"] == 6 and run["dropped"] == 2, "run: n 6, 2 cold", r)
    check(run["min_ns"] == 40 and run["max_ns"] == 90, "run min/max", r)
    check(run["median_ns"] == 65, "run median: mean of 60 and 70", r)
    check(run["min_sum_ns"] == 180 and run["sum_rounds"] == 3,
          "run: min of the per-case sums 180 (pid 100) and 210", r)
    args = g[("s", "c", "args")]
    check((args["n"], args["min_ns"], args["median_ns"], args["max_ns"])
          == (2, 10, 20, 30), "args keeps every sample", r)
    check(g[("s", "c", "golden")]["n"] == 1, "golden n 1", r)
    cmp = g[("s", "c", "compare")]
    check((cmp["n"], cmp["median_ns"]) == (6, 3), "compare 1 2 3 3 4 5", r)
    reset = g[("s", "c", "reset")]
    check((reset["n"], reset["dropped"], reset["median_ns"]) == (6, 0, 7.5),
          "reset has no round 0: nothing dropped, median 7.5", r)
    d = g[("s", "d", "run")]
    check((d["n"], d["dropped"], d["median_ns"]) == (3, 1, 20),
          "repeat: only iteration 1's round 0 dropped", r)
    check((d["min_sum_ns"], d["sum_rounds"]) == (50, 2),
          "sums only over cases with all their rounds", r)
    dev = g[("s", "d", "run.device")]
    check((dev["n"], dev["median_ns"]) == (3, 7), "run.device row", r)
    check(len(doc["conditions"]) == 1 and
          doc["conditions"][0]["pids"] == [100, 200, 300],
          "one condition, three pids", r)


@test
def timing__keep_first():
    path = write("known.log", KNOWN)
    _, g, r = timing_json(["--keep-first", path])
    run = g[("s", "c", "run")]
    check((run["n"], run["median_ns"], run["max_ns"]) == (8, 75, 2000),
          "--keep-first keeps the cold rounds", r)
    check((run["min_sum_ns"], run["sum_rounds"]) == (1180, 4),
          "sums with the cold round", r)


@test
def timing__text_and_csv():
    path = write("known.log", KNOWN)
    r = Run(["timing", path])
    check(r.rc == 0, "timing exits 0", r)
    check("A: setting=0 raw=\"0\" effective=disabled torch_imported=false "
          "torch_npu_loaded=false (pids 100, 200, 300)" in r.out,
          "the record and its pids", r)
    line = [ln for ln in r.out.splitlines()
            if ln.startswith("s::c ") and " run " in ln]
    check(len(line) == 1 and "40 ns" in line[0] and "65 ns" in line[0] and
          "90 ns" in line[0] and "180 ns" in line[0] and
          line[0].endswith(" A"), "the run row of the table", r)
    r = Run(["timing", "--format", "csv", path])
    rows = list(csv.DictReader(io.StringIO(r.out)))
    run = [x for x in rows if x["case"] == "c" and x["phase"] == "run"]
    check(r.rc == 0 and len(run) == 1 and run[0]["median_ns"] == "65" and
          run[0]["min_sum_ns"] == "180" and run[0]["conditions"] == "A",
          "csv row", r)


@test
def timing__two_conditions_named_per_group():
    log = (record(1) + phase(1, "s", "a", "args", None, 5) +
           record(2, setting="1", raw='"1"', effective="enabled") +
           phase(2, "s", "b", "args", None, 6) +
           phase(2, "s", "a", "args", None, 7) +
           phase(3, "s", "b", "golden", None, 8))
    path = write("two.log", log)
    doc, g, r = timing_json([path])
    check(len(doc["conditions"]) == 2, "two distinct conditions", r)
    check(doc["conditions"][1]["pids"] == [2] and
          doc["conditions"][1]["record"]["setting"] == "1", "B is pid 2", r)
    check(g[("s", "a", "args")]["conditions"] == "A+B", "a from A and B", r)
    check(g[("s", "b", "args")]["conditions"] == "B", "b from B", r)
    check(g[("s", "b", "golden")]["conditions"] == "?",
          "a pid without a record is '?'", r)
    r = Run(["timing", path])
    check("different autoload conditions" in r.out, "text warns", r)


@test
def timing__cold_only_group_hint():
    path = write("cold.log", record(1) + phase(1, "s", "c", "run", 0, 5))
    _, g, r = timing_json([path])
    check(g[("s", "c", "run")]["n"] == 0 and
          g[("s", "c", "run")]["median_ns"] is None, "n = 0, no median", r)
    r = Run(["timing", path])
    check(r.rc == 0 and "--keep-first" in r.out and "--repeat" in r.out,
          "hint names --rounds/--repeat and --keep-first", r)


@test
def timing__no_timing_line():
    path = write("empty.log", "PASS  s::c\n[WARNING] x\n")
    r = Run(["timing", path])
    check(r.rc == 2 and "no TIMING line" in r.err, "exit 2", r)


@test
def timing__malformed_and_unreadable():
    path = write("bad.log", "ok\n" + phase(1, "s", "c", "run", 0, 5)
                 .replace("dur_ns=5", "dur_ns=5x"))
    r = Run(["timing", path])
    check(r.rc == 2 and r.err.startswith(path + ":2:") and
          "error: malformed TIMING line" in r.err, "FILE:LINE:COL", r)
    r = Run(["timing", os.path.join(TMP, "missing.log")])
    check(r.rc == 2 and "cannot read" in r.err, "missing file", r)
    r = Run(["timing"])
    check(r.rc == 2 and "needs at least one LOG" in r.err, "no path", r)
    r = Run(["timing", "--format", "xml", path])
    check(r.rc == 2 and "unknown --format" in r.err, "bad format", r)
    r = Run(["timing", "--alpha", "0.1", path])
    check(r.rc == 2 and "no option '--alpha' for 'timing'" in r.err,
          "compare's option", r)


def side(name, values, pid, rec=None, group=("s", "c", "run"), extra=""):
    """A log with one record and the given samples of one group (rounds
    from 1, so the cold rule drops nothing)."""
    text = (rec if rec is not None else record(pid)) + "".join(
        phase(pid, group[0], group[1], group[2], i + 1, v)
        for i, v in enumerate(values)) + extra
    return write(name, text)


FAR_BASE = list(range(100, 112))  # SciPy: p = 3.6584553538971001e-05
FAR_NEW = list(range(200, 212))


def delta_of(line):
    """The delta column of a text row: durations are "NUM UNIT", so it is
    the ninth word."""
    return line.split()[8]


def compare_json(args, rc=0):
    r = Run(["compare", "--format", "json"] + args)
    check(r.rc == rc, "compare exits %d" % rc, r)
    return json.loads(r.out), r


@test
def compare__significant_slowdown():
    b, n = side("b.log", FAR_BASE, 1), side("n.log", FAR_NEW, 2)
    doc, r = compare_json([b, n])
    row = doc["rows"][0]
    check(abs(row["p"] - 3.6584553538971001e-05) < 1e-6, "SciPy's p", r)
    check(row["method"] == "asymptotic" and row["significant"], "flagged", r)
    check(abs(row["delta_pct"] - 100 * (205.5 / 105.5 - 1)) < 1e-9, "delta",
          r)
    check(doc["geomean"]["significant"]["rows"] == 1, "geomean rows", r)
    r = Run(["compare", b, n])
    line = [ln for ln in r.out.splitlines() if ln.startswith("s::c ")]
    check(r.rc == 0 and len(line) == 1 and "+94.8%" in line[0] and
          "0.000037" in line[0], "text row", r)
    check("significant rows (1): +94.8%; all rows (1): +94.8%" in r.out,
          "geomean line", r)


@test
def compare__fail_above():
    b, n = side("b.log", FAR_BASE, 1), side("n.log", FAR_NEW, 2)
    r = Run(["compare", "--fail-above", "50", b, n])
    check(r.rc == 1 and "above --fail-above 50%" in r.err, "tripped", r)
    r = Run(["compare", "--fail-above", "100", b, n])
    check(r.rc == 0, "94.8% is not above 100%", r)
    r = Run(["compare", "--fail-above", "10", n, b])
    check(r.rc == 0, "a speed-up never trips", r)
    # Not significant: never trips, however large the delta.
    r = Run(["compare", "--fail-above", "1", "--alpha", "0.00001", b, n])
    check(r.rc == 0, "p >= alpha: no trip", r)
    r = Run(["compare", "--fail-above", "x", b, n])
    check(r.rc == 2, "bad PCT is a usage error", r)


@test
def compare__not_significant_and_few_samples():
    # SciPy: ([10,12,14,16,18], [11,13,21,23,25]) -> p 0.30952380952380953
    b = side("b.log", [10, 12, 14, 16, 18], 1)
    n = side("n.log", [11, 13, 21, 23, 25], 2)
    doc, r = compare_json([b, n])
    row = doc["rows"][0]
    check(abs(row["p"] - 0.30952380952380953) < 1e-6 and
          row["method"] == "exact" and not row["significant"], "exact p", r)
    r = Run(["compare", b, n])
    line = [ln for ln in r.out.splitlines() if ln.startswith("s::c ")][0]
    check(delta_of(line) == "~", "~ in place of the delta", r)
    # Four against four, fully apart: exact p = 2/70 < 0.05, yet n < 5.
    b = side("b.log", [1, 2, 3, 4], 1)
    n = side("n.log", [10, 11, 12, 13], 2)
    r = Run(["compare", b, n])
    line = [ln for ln in r.out.splitlines() if ln.startswith("s::c ")][0]
    check(delta_of(line) == "~" and "0.028571" in line and
          "(n < 5)" in line, "too few samples: ~", r)
    # Every row too small: "significant rows (0)" says nothing, and a
    # warning says that nothing could be tested.
    check("significant rows (0)" in r.out and
          "scenetest: warning: every row has fewer than 5 samples on a "
          "side (--min-samples 5): no row could be tested" in r.err,
          "the warning when no row can be tested", r)
    r = Run(["compare", "--min-samples", "4", b, n])
    line = [ln for ln in r.out.splitlines() if ln.startswith("s::c ")][0]
    check(delta_of(line).startswith("+"), "--min-samples 4: flagged", r)
    check("fewer than" not in r.err, "enough samples: no warning", r)
    r = Run(["compare", "--format", "json", b, n])
    check("every row has fewer than 5 samples" in r.err and
          json.loads(r.out)["rows"], "the warning with --format json too", r)


def refused(base_rec, new_rec, *fields):
    b = side("b.log", FAR_BASE, 1, rec=base_rec)
    n = side("n.log", FAR_NEW, 2, rec=new_rec)
    r = Run(["compare", b, n])
    check(r.rc == 2 and r.out == "", "refused, nothing on stdout", r)
    check("autoload conditions differ" in r.err, "says why", r)
    marked = [ln.split()[1] for ln in r.err.splitlines()
              if ln.startswith("* ")]
    check(marked == list(fields), "only %s marked as differing"
          % ", ".join(fields), r)
    return r


@test
def compare__refuses_each_differing_field():
    # A real pair: 0 against 1 differ in setting, raw and effective.
    refused(record(1), record(2, setting="1", raw='"1"',
                              effective="enabled"),
            "setting", "raw", "effective")
    # Each field alone (records no harness prints, but the rule is per
    # field):
    refused(record(1), record(2, setting="invalid"), "setting")
    r = refused(record(1, setting="invalid", raw='"true"'),
                record(2, setting="invalid", raw='"yes"'), "raw")
    row = [ln for ln in r.err.splitlines() if ln.startswith("* raw")][0]
    check('"true"' in row and '"yes"' in row, "both values shown", r)
    refused(record(1, setting="invalid", raw='"x"', effective="enabled"),
            record(2, setting="invalid", raw='"x"'), "effective")
    r = refused(record(1), record(2, torch=True), "torch_imported")
    row = [ln for ln in r.err.splitlines()
           if ln.startswith("* torch_imported")][0]
    check(row.split()[2:] == ["false", "true"], "base false, new true", r)
    refused(record(1, npu=True), record(2), "torch_npu_loaded")
    refused(record(1, extra=[("acl_loaded", False)]),
            record(2, extra=[("acl_loaded", True)]), "acl_loaded")
    r = refused(record(1), record(2, extra=[("acl_loaded", False)]),
                "acl_loaded")
    check("(not watched)" in r.err, "a module one side did not watch", r)


@test
def compare__ignore_autoload_marks_every_line():
    b = side("b.log", FAR_BASE, 1)
    n = side("n.log", FAR_NEW, 2, rec=record(2, torch=True))
    r = Run(["compare", "--ignore-autoload", b, n])
    lines = r.out.splitlines()
    check(r.rc == 0 and len(lines) > 5, "compared", r)
    check(all(ln.startswith("! ") for ln in lines), "every line marked", r)
    check(any(ln.startswith("! * torch_imported") for ln in lines),
          "the differing field shown", r)
    doc, r = compare_json(["--ignore-autoload", b, n])
    check(not doc["autoload"]["same"] and doc["autoload"]["ignored"] and
          "compared anyway" in r.err, "json: flagged, warning on stderr", r)


@test
def compare__no_record_is_unknown():
    b = side("b.log", FAR_BASE, 1)
    n = side("n.log", FAR_NEW, 2, rec="")
    r = Run(["compare", b, n])
    check(r.rc == 2 and "no torch_backend_autoload record" in r.err and
          "unknown" in r.err, "refused: unknown conditions", r)
    r = Run(["compare", "--ignore-autoload", b, n])
    check(r.rc == 0 and all(ln.startswith("! ")
                            for ln in r.out.splitlines()),
          "--ignore-autoload: compared, marked", r)


@test
def compare__two_records_in_one_log():
    other = record(3, setting="1", raw='"1"', effective="enabled")
    b = side("b.log", FAR_BASE, 1)
    n = side("n.log", FAR_NEW, 2, extra=other)
    r = Run(["compare", b, n])
    check(r.rc == 2 and "has 1 distinct" in r.err and
          "has 2" in r.err and "new B" in r.err, "refused, B shown", r)
    # The same two conditions on both sides: comparable.
    b = side("b.log", FAR_BASE, 1, extra=other)
    r = Run(["compare", b, n])
    check(r.rc == 0, "same set of conditions: compared", r)


@test
def compare__directories_and_one_sided_groups():
    os.makedirs(os.path.join(TMP, "bdir"), exist_ok=True)
    os.makedirs(os.path.join(TMP, "ndir"), exist_ok=True)
    side("bdir/1.log", FAR_BASE[:6], 1)
    side("bdir/2.log", FAR_BASE[6:], 1)  # the same pid in another run
    side("bdir/3.log", [5, 6], 7, group=("s", "gone", "run"))
    side("ndir/1.log", FAR_NEW, 2)
    side("ndir/2.log", [5, 6], 8, group=("s", "added", "run"))
    doc, r = compare_json([os.path.join(TMP, "bdir"),
                           os.path.join(TMP, "ndir")])
    row = doc["rows"][0]
    check(row["n_base"] == 12 and row["n_new"] == 12, "files of a dir", r)
    check([x["case"] for x in doc["only_base"]] == ["gone"] and
          [x["case"] for x in doc["only_new"]] == ["added"],
          "one-sided groups listed", r)
    r = Run(["compare", os.path.join(TMP, "bdir"), os.path.join(TMP, "ndir")])
    check("only in base: s::gone run" in r.out and
          "only in new: s::added run" in r.out, "text lists them", r)


@test
def compare__usage_errors():
    b = side("b.log", FAR_BASE, 1)
    for args, what in [([b], "exactly two paths"),
                       ([b, b, b], "exactly two paths"),
                       (["--format", "csv", b, b], "unknown --format"),
                       (["--alpha", "2", b, b], "--alpha"),
                       (["--min-samples", "1.5", b, b], "--min-samples"),
                       (["--bogus", b, b], "unknown option '--bogus'"),
                       ([b, os.path.join(TMP, "nope")], "cannot read")]:
        r = Run(["compare"] + args)
        check(r.rc == 2 and what in r.err, what, r)
    r = Run(["compare", "--help"])
    check(r.rc == 0 and "--fail-above" in r.out, "--help", r)


# ---- end to end ----------------------------------------------------------

def run_log(name, autoload, extra=(), case="copy", env=None):
    log = os.path.join(TMP, name)
    e = {"TORCH_DEVICE_BACKEND_AUTOLOAD": autoload}
    e.update(env or {})
    r = Run(["run", "--format", "tap", "--log-file", log] + list(extra) +
            (["--case", case] if case else []) + [SCENES], env=e)
    check(r.rc == 0, "the run passes", r)
    check("[TIMING]" not in r.err, "--log-file: no TIMING line on stderr", r)
    with open(log) as f:
        text = f.read()
    check("[TIMING] torch_backend_autoload setting=%s" % autoload in text,
          "the record is in the log file", r)
    return log


@test
def end_to_end__different_autoload_refused():
    a = run_log("e0.log", "0", ["--rounds", "3"])
    b = run_log("e1.log", "1", ["--rounds", "3"])
    r = Run(["compare", a, b])
    check(r.rc == 2 and any(ln.startswith("* setting") for ln in
                            r.err.splitlines()), "refused", r)


@test
def end_to_end__same_autoload_table():
    a = run_log("s0.log", "0", ["--rounds", "3"])
    b = run_log("s1.log", "0", ["--rounds", "3"])
    r = Run(["compare", a, b])
    check(r.rc == 0 and "autoload (the same on both sides): setting=0" in
          r.out and any(ln.startswith("copy::f32 ") and " run " in ln
                        for ln in r.out.splitlines()), "a table", r)


SPIN_SCENE = """\
scene: spin
kernel: add
args:
  - {tensor: a, dtype: float32, shape: [N], init: ones}
  - {tensor: b, dtype: float32, shape: [N], init: ones}
  - {tensor: out, dtype: float32, shape: [N], role: output}
cases:
  - {name: big, params: {N: 100000}}
"""


@test
def end_to_end__twice_the_work_is_flagged():
    scene = write("spin/spin.yaml", SPIN_SCENE)
    dirs = [os.path.join(TMP, "spin-base"), os.path.join(TMP, "spin-new")]
    for d in dirs:
        os.makedirs(d, exist_ok=True)
    # Two runs a side, alternated, so that a change in the machine's load
    # meets both sides (the machine is shared while meson runs tests).
    for k in range(2):
        for d, plugin in zip(dirs, [SPIN1, SPIN2]):
            log = os.path.join(d, "%d.log" % k)
            r = Run(["run", "--format", "tap", "--platform", "spin",
                     "--plugin", plugin, "--rounds", "16", "--skip-golden",
                     "--log-file", log, scene],
                    env={"TORCH_DEVICE_BACKEND_AUTOLOAD": "0"})
            check(r.rc == 0, "spin run passes", r)
    doc, r = compare_json(dirs)
    run = [x for x in doc["rows"] if x["phase"] == "run"][0]
    check(run["n_base"] == 30 and run["n_new"] == 30,
          "15 warm rounds a run, two runs a side", r)
    check(run["significant"] and run["p"] < 0.01, "significant", r)
    # Twice the work: slower, by a margin no load swing erases (the
    # magnitude itself depends on the machine).
    check(run["delta_pct"] > 20, "slower (got %+.1f%%)" % run["delta_pct"],
          r)
    r = Run(["compare", dirs[1], dirs[0]])
    line = [ln for ln in r.out.splitlines()
            if ln.startswith("spin::big ") and " run " in ln][0]
    check(delta_of(line).startswith("-"), "the other way: a speed-up", r)


@test
def log_file__levels_and_env():
    log = os.path.join(TMP, "lv.log")
    r = Run(["run", "--format", "tap", "--log-file", log, "--case",
             "copy::f32", SCENES], env={"SCENETEST_LOG_LEVEL": "warning"})
    check(r.rc == 0, "runs", r)
    with open(log) as f:
        check("[TIMING]" not in f.read(), "SCENETEST_LOG_LEVEL=warning", r)
    r = Run(["run", "--format", "tap", "--log-file", log, "--log-level",
             "timing", "--case", "copy::f32", SCENES],
            env={"SCENETEST_LOG_LEVEL": "warning"})
    with open(log) as f:
        check("[TIMING] phase" in f.read(), "--log-level wins", r)
    r = Run(["run", "--case", "copy::f32", SCENES],
            env={"SCENETEST_LOG_LEVEL": "loud"})
    check(r.rc == 2 and "SCENETEST_LOG_LEVEL" in r.err, "bad env value", r)
    r = Run(["run", "--format", "tap", "--case", "copy::f32", SCENES],
            env={"SCENETEST_LOG_LEVEL": "null"})
    check(r.rc == 0 and "[TIMING]" not in r.err, "env level on stderr", r)
    r = Run(["run", "--log-file", os.path.join(TMP, "no/such/dir/x.log"),
             SCENES])
    check(r.rc == 2 and "cannot open --log-file" in r.err, "unopenable", r)
    r = Run(["run", "--log-file", log, "--output", log, SCENES])
    check(r.rc == 2 and "also the --output" in r.err, "aliasing", r)
    r = Run(["list", "--log-file", log, SCENES])
    check(r.rc == 2, "--log-file is run's", r)


@test
def log_file__warnings_on_stderr_and_in_the_file():
    log = os.path.join(TMP, "warn.log")
    r = Run(["run", "--format", "tap", "--plugin", FAILINIT, "--log-file",
             log, "--case", "copy::f32", SCENES])
    with open(log) as f:
        text = f.read()
    warn = [ln for ln in r.err.splitlines() if ln.startswith("[WARNING]")]
    check(r.rc == 0 and len(warn) == 1 and "[TIMING]" not in r.err,
          "stderr: the warning only", r)
    check(warn[0] + "\n" in text and "[TIMING] phase" in text,
          "the file: the warning and the TIMING lines", r)


@test
def log_file__isolated_children_write_to_it():
    # An isolated child's TIMING lines reach the file, not stderr.
    log = os.path.join(TMP, "iso.log")
    r = Run(["run", "--format", "tap", "--isolate", "--log-file", log,
             "--case", "copy::f32", SCENES])
    check(r.rc == 0 and "[TIMING]" not in r.err, "isolated: stderr clean", r)
    with open(log) as f:
        text = f.read()
    check(text.count("[TIMING] torch_backend_autoload") == 1 and
          text.count("name=run ") == 1, "the child's lines are in the "
          "file, once", r)


sys.exit(main(TMP))
