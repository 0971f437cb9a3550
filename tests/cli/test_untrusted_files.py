# SPDX-License-Identifier: MIT
"""The files a run reads and writes when they are not what they should be
(docs/reliability.md), printing TAP 13 through taptest:
- --rerun-failed: a NUL byte between JSON values, a zero-filled report
  and text that starts no value are errors (exit 2), never a hang or
  "nothing failed"; a TAP report is read too;
- timing: a valid run's log with a case name longer than 255 bytes, or
  with as many --watch modules as run accepts;
- compare --fail-above: a phase whose base median is 0 ns;
- --log-file: a write error (/dev/full) is exit 3; an output that names
  an input (the scene, a scene in a scanned directory, a hard link to
  it, the plugin, the --rerun-failed report) is exit 2 and the input is
  left as it was;
- --dump-on-fail: symlinks planted in the directory are not followed.

Usage: test_untrusted_files.py PATH/TO/scenetest PATH/TO/st_plugin_good.so

Standard library only.
"""

import json
import os
import subprocess
import sys
import tempfile

EXE = os.path.abspath(sys.argv[1])
PLUGIN = os.path.abspath(sys.argv[2])
TMP = tempfile.mkdtemp(prefix="scenetest-untrusted-files-")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import taptest  # noqa: E402  (after sys.path)
from taptest import Run, check, main, test  # noqa: E402

taptest.EXE = EXE
write = taptest.writer(TMP)


GOOD = write("good.yaml", taptest.VADD_SCENE)
MISMATCH = write("mismatch.yaml",
                 taptest.mismatch_scene("mismatch", "  - name: wrong\n"))


def write_bytes(name, data):
    path = os.path.join(TMP, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def rerun_list(report):
    # A hang is a failure, not a stuck suite: Run's own timeout raises.
    return Run(["list", "--rerun-failed", report, GOOD, MISMATCH])


EVENT = (b'{"scene": "mismatch", "case": "wrong", "status": "fail"}')


@test
def rerun_failed__nul_between_json_values_is_an_error():
    r = rerun_list(write_bytes("nul.jsonl", EVENT + b"\n\0\n" + EVENT))
    check(r.rc == 2 and r.err.startswith("scenetest: error: --rerun-failed"),
          "exit 2 with a usage error", r)


@test
def rerun_failed__zero_filled_report_is_an_error():
    r = rerun_list(write_bytes("zeros.json", b"\0" * 4096))
    check(r.rc == 2 and "is not an --events" in r.err,
          "a report lost in a crash is not 'nothing failed'", r)


@test
def rerun_failed__text_that_starts_no_value_is_an_error():
    for i, data in enumerate([EVENT + b" x", EVENT + b" -", b"{\"a\": tru}",
                              b"{\"a\": 01}", b"{\"a\": \"\x01\"}",
                              EVENT + b"]", b"TAP version 13\nnot ok 1 - x\n",
                              b"TAP version 13\nnot ok x\n", b"hello\n",
                              b"<testsuites>\0</testsuites>"]):
        r = rerun_list(write_bytes("bad%d.json" % i, data))
        check(r.rc == 2, "%r: exit 2" % data, r)


@test
def rerun_failed__reads_a_tap_report():
    tap = os.path.join(TMP, "run.tap")
    r = Run(["run", "--format", "tap", "--output", tap, GOOD, MISMATCH])
    check(r.rc == 1, "the run fails one case", r)
    r = rerun_list(tap)
    check(r.rc == 0 and r.out == "mismatch::wrong\n",
          "the failed case of the TAP report", r)


@test
def timing__accepts_a_case_name_longer_than_255_bytes():
    # A matrix value is an expression (docs/scene-format.md): a long one
    # without spaces keeps the name one bare word.
    long_value = "+".join(["1"] * 150)
    scene = write("long.yaml", """\
scene: longname
kernel: add
args:
  - {tensor: a, dtype: float32, shape: [4], init: ones}
  - {tensor: b, dtype: float32, shape: [4], init: ones}
  - {tensor: out, dtype: float32, shape: [4], role: output}
cases:
  - name: c
    matrix: {K: [%s]}
""" % long_value)
    log = os.path.join(TMP, "long.log")
    r = Run(["run", "--rounds", "2", "--log-file", log, scene])
    check(r.rc == 0, "the run passes", r)
    r = Run(["timing", "--format", "json", log])
    check(r.rc == 0, "timing reads the log", r)
    kases = {g["case"] for g in json.loads(r.out)["groups"]}
    check(kases == {"c[K=%s]" % long_value}, "the whole name: %r" % kases, r)


@test
def watch__at_most_what_timing_reads_back():
    log = os.path.join(TMP, "watch.log")
    watches = []
    for i in range(30):
        watches += ["--watch", "m%d=libm%d.so" % (i, i)]
    r = Run(["run", "--log-file", log] + watches + [GOOD])
    check(r.rc == 0, "30 watches run", r)
    r = Run(["timing", log])
    check(r.rc == 0, "timing reads the record of 30 watches", r)
    r = Run(["run"] + watches + ["--watch", "one_more=x.so", GOOD])
    check(r.rc == 2 and "at most 30 --watch modules" in r.err,
          "a 31st is a usage error", r)


def timing_log(name, pid, dur):
    lines = ["[TIMING] torch_backend_autoload setting=unset raw=- "
             "effective=enabled torch_imported=false torch_npu_loaded=false "
             "pid=%d\n" % pid]
    for i in range(12):
        lines.append("[TIMING] phase pid=%d scene=s case=c name=run round=%d "
                     "dur_ns=%d status=ok\n" % (pid, i, dur))
    return write(name, "".join(lines))


@test
def compare_fail_above__trips_on_a_base_median_of_zero():
    base = timing_log("zero-base.log", 10, 0)
    new = timing_log("zero-new.log", 11, 5000)
    r = Run(["compare", "--fail-above", "50", base, new])
    check(r.rc == 1, "a rise from 0 ns trips --fail-above", r)
    check("+inf%" in r.out and "above --fail-above" in r.err,
          "the delta is +inf%", r)
    same = timing_log("zero-same.log", 12, 0)
    r = Run(["compare", "--fail-above", "50", base, same])
    check(r.rc == 0, "0 ns to 0 ns is no change", r)


@test
def log_file__write_error_is_exit_3():
    for mode in ([], ["--isolate"], ["--no-supervise"]):
        r = Run(["run", "--log-file", "/dev/full"] + mode + [GOOD])
        check(r.rc == 3 and "writing --log-file '/dev/full' failed: No space "
              "left on device" in r.err, "%r: exit 3 with the reason" % mode,
              r)


def unchanged(path, before, r):
    with open(path, "rb") as f:
        check(f.read() == before, "%s left as it was" % path, r)


@test
def outputs__naming_an_input_are_refused_before_truncating():
    d = os.path.join(TMP, "scanned")
    inner = taptest.write(d, "inner.yaml", taptest.VADD_SCENE)
    link = os.path.join(TMP, "hardlink.log")
    os.link(GOOD, link)
    plugin = os.path.join(TMP, "plugin.so")
    with open(PLUGIN, "rb") as f, open(plugin, "wb") as g:
        g.write(f.read())
    report = write("events.jsonl", EVENT.decode() + "\n")
    cases = [
        (["--log-file", GOOD, GOOD], GOOD),
        (["--log-file", inner, d], inner),
        (["--log-file", link, GOOD], GOOD),
        (["--log-file", plugin, "--plugin", plugin, GOOD], plugin),
        (["--log-file", report, "--rerun-failed", report, MISMATCH], report),
        (["--output", inner, d], inner),
        (["--report", "junit:" + link, GOOD], GOOD),
        (["--events", plugin, "--plugin", plugin, GOOD], plugin),
    ]
    for args, victim in cases:
        with open(victim, "rb") as f:
            before = f.read()
        r = Run(["run"] + args)
        check(r.rc == 2 and r.err.startswith("scenetest: error: ") and
              r.err.count("\n") == 1, "%r: exit 2, one error line" % args, r)
        unchanged(victim, before, r)


@test
def dump_on_fail__does_not_follow_planted_symlinks():
    d = os.path.join(TMP, "dumps")
    victim = write("victim.txt", "precious\n")
    elsewhere = os.path.join(TMP, "elsewhere")
    os.makedirs(elsewhere)
    # A symlink in the case's directory where a dump file goes.
    os.makedirs(os.path.join(d, "mismatch", "wrong"))
    planted = os.path.join(d, "mismatch", "wrong", "out.actual.npy")
    os.symlink(victim, planted)
    r = Run(["run", "--format", "tap", "--dump-on-fail", d, MISMATCH])
    check(r.rc == 1, "the case fails", r)
    unchanged(victim, b"precious\n", r)
    check(not os.path.islink(planted) and os.path.isfile(planted),
          "the dump is a new file in place of the symlink", r)
    # A symlink in place of the scene's directory: nothing is written
    # through it.
    d2 = os.path.join(TMP, "dumps2")
    os.makedirs(d2)
    os.symlink(elsewhere, os.path.join(d2, "mismatch"))
    r = Run(["run", "--format", "tap", "--dump-on-fail", d2, MISMATCH])
    check(r.rc == 1 and "(not written)" in r.out, "not written", r)
    check(os.listdir(elsewhere) == [], "nothing written through it", r)


sys.exit(main(TMP))
