# SPDX-License-Identifier: MIT
"""Integration tests of the scenetest binary (docs/cli.md#options), printing TAP 13.

Usage: test_cli.py PATH/TO/scenetest PATH/TO/st_plugin_good.so

Each test runs the binary on scene files written to a temporary directory
and checks the exit status, the exact error lines and the reports. TAP
output is also fed to prove (Test::Harness) and to meson's own TAP parser
when they are installed, which must read it without a warning. Standard
library only.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

EXE = os.path.abspath(sys.argv[1])
# Any plugin: with one given, an op nobody registered is a warning at load
# time and a case error when the case runs (docs/scene-format.md#load-errors); without, a load
# error.
PLUGIN = os.path.abspath(sys.argv[2])
TMP = tempfile.mkdtemp(prefix="scenetest-cli-")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import taptest  # noqa: E402  (after sys.path)
from taptest import Failure, Run, check, main, test  # noqa: E402,F401

taptest.EXE = EXE
write = taptest.writer(TMP)

# The vadd scene and two more cases: one manual, one for cpu alone.
GOOD = taptest.VADD_SCENE + """\
  - name: big
    params: {N: 64}
    manual: true
  - name: cpu_only
    params: {N: 8}
    platforms: [cpu]
"""

# The kernel adds, the golden subtracts: a wrong result (fail).
MISMATCH = taptest.mismatch_scene("mismatch", "  - name: wrong\n"
                                   "  - name: after\n")

# An op nobody implements: with a --plugin, a case error decided when the
# case runs (runs of it pass NO_OP_RUN).
NO_OP = """\
scene: no_op
kernel: no_such_op
golden: copy
args:
  - {tensor: x, dtype: float32, shape: [4]}
  - {tensor: y, dtype: float32, shape: [4], role: output}
cases:
  - name: missing
"""

CPU_ONLY = """\
scene: cpu_only_scene
kernel: copy
args:
  - {tensor: x, dtype: float32, shape: [4]}
  - {tensor: y, dtype: float32, shape: [4], role: output}
cases:
  - name: only
    platforms: [cpu]
"""

BAD = "scene: [unclosed\nkernel: add\n"




GOOD_F = write("good.yaml", GOOD)
MISMATCH_F = write("mismatch.yaml", MISMATCH)
NO_OP_F = write("space dir/no op's.yaml", NO_OP)
NO_OP_RUN = [NO_OP_F, "--plugin", PLUGIN]
CPU_ONLY_F = write("cpu only.yaml", CPU_ONLY)
BAD_F = write("bad.yaml", BAD)
DIR = os.path.dirname(write("dir/sub/good.yml", GOOD))
write("dir/.hidden.yaml", BAD)





def usage_error(run, message=None):
    """Exit 2 and one line "scenetest: error: MESSAGE" on stderr."""
    check(run.rc == 2, "exit status 2 expected", run)
    lines = run.err.splitlines()
    check(len(lines) == 1 and lines[0].startswith("scenetest: error: "),
          "one 'scenetest: error:' line expected", run)
    if message is not None:
        check(lines[0] == "scenetest: error: " + message,
              "message %r expected" % message, run)
    check(run.out == "", "nothing on stdout expected", run)


# The comments a case may add after its point (docs/reports.md, trust).
TAP_LINE = re.compile(r"^(TAP version 13|1\.\.\d+( # SKIP .*)?|"
                      r"(not )?ok \d+ - \S+::\S+( # SKIP.*)?|  .*|"
                      r"# \d+ cases: \d+ passed, \d+ failed, \d+ errors, "
                      r"\d+ skipped, \d+ xfail, \d+ xpass|"
                      r"# (mistrusted|warning|quarantined): \S+::\S+: .*)$")


def tap_lines_only(run):
    for line in run.out.splitlines():
        check(TAP_LINE.match(line), "not a TAP line: %r" % line, run)








# --- version, help, usage errors -------------------------------------------

@test
def version_prints_version():
    r = Run(["--version"])
    # meson.build's project version, handed over by tests/cli/meson.build.
    want = "scenetest %s\n" % os.environ["ST_MESON_VERSION"]
    check(r.rc == 0 and r.out == want, "version", r)


@test
def help_lists_every_option():
    r = Run(["--help"])
    check(r.rc == 0, "exit 0", r)
    for opt in ["run", "list", "check", "--platform", "--case", "--manual",
                "--rounds", "--skip-golden", "--seed", "--jobs", "-j",
                "--golden-threads", "--fail-fast", "--format", "--output",
                "--events", "--log-level", "--max-arg-bytes",
                "--require-cases", "--strict-record", "--watch", "--plugin",
                "--version", "--help"]:
        check(opt in r.out, "--help mentions %s" % opt, r)
    r2 = Run(["run", GOOD_F, "-h"])
    check(r2.rc == 0 and r2.out == r.out, "-h after a command", r2)


@test
def no_command_is_usage_error():
    usage_error(Run([]))


@test
def unknown_command_is_usage_error():
    usage_error(Run(["frobnicate", GOOD_F]),
                "unknown command 'frobnicate'; commands: run, bench, list, check, "
                "timing, compare, merge")


@test
def measure_commands_read_logs():
    # timing and compare exist (tests/cli/test_measure.py): a missing log
    # is a usage error.
    usage_error(Run(["timing", "x.log"]),
                "cannot read 'x.log': No such file or directory")
    usage_error(Run(["compare", "a.log", "b.log"]),
                "cannot read 'a.log': No such file or directory")


@test
def unknown_option_is_usage_error():
    usage_error(Run(["run", "--bogus", GOOD_F]),
                "unknown option '--bogus'; see 'scenetest --help'")
    usage_error(Run(["run", "-Z", GOOD_F]),
                "unknown option '-Z'; see 'scenetest --help'")


@test
def missing_value_is_usage_error():
    usage_error(Run(["run", GOOD_F, "--seed"]),
                "option '--seed' needs a value")


@test
def bad_values_are_usage_errors():
    usage_error(Run(["run", "--rounds", "0", GOOD_F]),
                "--rounds must be at least 1 (got 0)")
    usage_error(Run(["run", "--rounds=x", GOOD_F]),
                "--rounds: 'x' is not a non-negative integer")
    usage_error(Run(["run", "--seed", "-1", GOOD_F]),
                "--seed: '-1' is not a non-negative integer")
    usage_error(Run(["run", "--seed", "18446744073709551616", GOOD_F]))
    usage_error(Run(["run", "-j", "0", GOOD_F]),
                "--jobs must be at least 1 (got 0)")
    usage_error(Run(["run", "--manual", "sometimes", GOOD_F]),
                "--manual must be exclude, include or only (got 'sometimes')")
    usage_error(Run(["run", "--log-level", "loud", GOOD_F]))
    usage_error(Run(["run", "--fail-fast=yes", GOOD_F]),
                "option '--fail-fast' takes no value")
    usage_error(Run(["run", "--format", "xml", GOOD_F]),
                "--format must be text, tap, junit, json or html (got 'xml')")
    usage_error(Run(["run", "--watch", "nonsense", GOOD_F]))


@test
def later_formats_and_options_not_implemented():
    usage_error(Run(["run", "--plugin", "lazy:/x.so", GOOD_F]),
                "plugin '/x.so': No such file or directory")


@test
def unknown_platform_lists_platforms():
    # --no-default-plugins: the build tree's binary declares the plugins
    # built beside it (docs/cli.md).
    usage_error(Run(["run", "--no-default-plugins", "--platform", "nope",
                     GOOD_F]),
                "unknown platform 'nope'; platforms: cpu, threads")


@test
def no_path_is_usage_error():
    usage_error(Run(["run", "--format", "tap"]))


@test
def option_for_another_command_is_usage_error():
    usage_error(Run(["check", "--rounds", "2", GOOD_F]),
                "option '--rounds' does not apply to 'check'")


# --- load errors --------------------------------------------------------------

@test
def bad_yaml_reports_file_line_column():
    for cmd in ("run", "check", "list"):
        r = Run([cmd, GOOD_F, BAD_F])
        check(r.rc == 2, "exit 2", r)
        check(r.out == "", "nothing on stdout", r)
        lines = r.err.splitlines()
        check(len(lines) >= 1, "an error line", r)
        for line in lines:
            check(re.match(re.escape(BAD_F) + r":\d+:\d+: error: \S", line),
                  "FILE:LINE:COL: error: line expected, got %r" % line, r)


@test
def missing_file_is_load_error():
    r = Run(["run", os.path.join(TMP, "absent.yaml")])
    check(r.rc == 2 and r.out == "", "exit 2", r)
    check("absent.yaml" in r.err and "error" in r.err, "names the file", r)


# --- run: verdicts and exit codes ------------------------------------------------

@test
def run_passing_scene_tap():
    r = Run(["run", "--format", "tap", GOOD_F])
    check(r.rc == 0, "exit 0", r)
    check(r.out == "TAP version 13\n1..2\nok 1 - vadd::small\n"
          "ok 2 - vadd::cpu_only\n"
          "# 2 cases: 2 passed, 0 failed, 0 errors, 0 skipped, 0 xfail, 0 xpass\n", "exact TAP", r)


@test
def run_defaults_to_tap_off_a_terminal():
    r = Run(["run", GOOD_F])
    check(r.rc == 0 and r.out.startswith("TAP version 13\n1..2\n"),
          "TAP when stdout is a pipe", r)


@test
def options_after_paths_and_equals_form():
    r = Run(["run", GOOD_F, "--format=tap", "--seed=5", "--rounds", "2",
             "-j2", "--case=vadd::small"])
    check(r.rc == 0 and r.out == "TAP version 13\n1..1\n"
          "ok 1 - vadd::small\n"
          "# 1 cases: 1 passed, 0 failed, 0 errors, 0 skipped, 0 xfail, 0 xpass\n", "one case", r)
    r = Run(["run", "--format", "tap", "--", GOOD_F])
    check(r.rc == 0, "-- ends the options", r)


@test
def run_directory_recursively():
    r = Run(["list", DIR])
    check(r.rc == 0 and r.out == "vadd::small\nvadd::cpu_only\n",
          "finds dir/sub/good.yml, skips dotfiles", r)


@test
def run_text_format():
    r = Run(["run", "--format", "text", GOOD_F, MISMATCH_F])
    check(r.rc == 1, "exit 1", r)
    check("PASS  vadd::small (" in r.out, "PASS line", r)
    check("FAIL  mismatch::wrong (" in r.out, "FAIL line", r)
    # docs/cli.md#output: the program as it was invoked, the file as given.
    check("      rerun: " + EXE + " run --case 'mismatch::wrong' --seed 0 "
          "--platform cpu " + MISMATCH_F + "\n" in r.out, "rerun line", r)
    check(re.search(r"^4 cases: 2 passed, 2 failed, 0 errors, 0 skipped in "
                    r"[0-9.]+ (us|ms|s)$", r.out, re.M), "totals line", r)
    check("\033" not in r.out, "no colour off a terminal", r)


@test
def failing_case_exit_1_with_rerun():
    r = Run(["run", "--format", "tap", "--seed", "3", MISMATCH_F])
    check(r.rc == 1, "exit 1", r)
    check(r.out.startswith("TAP version 13\n1..2\nnot ok 1 - mismatch::wrong"
                           "\n  ---\n  message: \""), "not ok + YAML", r)
    check("  severity: fail\n" in r.out, "severity fail", r)
    check("    rerun: \"" + EXE + " run --case 'mismatch::wrong' --seed 3 "
          "--platform cpu " + MISMATCH_F + "\"\n" in r.out, "rerun", r)
    tap_lines_only(r)


@test
def rerun_command_reruns_the_case():
    import shlex
    for path, case in ((MISMATCH_F, "mismatch::wrong"),
                       (NO_OP_F, "no_op::missing")):
        r = Run(["run", "--format", "tap", "--rounds", "2", path] +
                (NO_OP_RUN[1:] if path == NO_OP_F else []))
        m = re.search(r"rerun: \"" + re.escape(EXE) + r" run (.*)\"\n", r.out)
        check(m is not None, "rerun present", r)
        # Undo the YAML double-quoted escapes (\\ and \") first.
        args = shlex.split(re.sub(r"\\(.)", r"\1", m.group(1)))
        check(args[-1] == path and "--rounds" in args, "file and rounds", r)
        r2 = Run(["run", "--format", "tap"] + args)
        check(r2.rc == 1 and r2.out.startswith(
            "TAP version 13\n1..1\nnot ok 1 - %s\n" % case),
            "the rerun runs just that case", r2)


@test
def missing_op_is_case_error():
    r = Run(["run", "--format", "tap"] + NO_OP_RUN)
    check(r.rc == 1, "exit 1 (a case error, not a load error)", r)
    check("not ok 1 - no_op::missing\n" in r.out, "not ok", r)
    check("  severity: error\n" in r.out, "severity error", r)
    check(NO_OP_F + ":2:9: warning: op 'no_such_op' for 'kernel' is neither "
          "built in nor registered by a plugin loaded so far; a lazy plugin "
          "may provide it when the case runs\n" in r.err,
          "a warning at load time", r)


def builtin_ops():
    """The built-in ops in the order of harness/base/op_list.h's rows."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                        "..", "harness", "base", "op_list.h")
    return re.findall(r"^  XX\(P, (\w+),", open(path).read(), re.M)


@test
def missing_op_without_plugin_is_load_error():
    ops = ", ".join(builtin_ops())
    check(ops.startswith("copy, add, "), "op_list.h read: %r" % ops)
    for cmd in ("run", "list", "check"):
        r = Run([cmd, NO_OP_F])
        check(r.rc == 2 and r.out == "" and r.err ==
              NO_OP_F + ":2:9: error: unknown op 'no_such_op' for 'kernel'; "
              "expected a built-in op (" + ops + ") or one that a "
              "--plugin provides\n", cmd + ": exit 2, one line", r)


@test
def fail_fast_skips_the_rest():
    r = Run(["run", "--format", "tap", "--fail-fast", MISMATCH_F, GOOD_F])
    check(r.rc == 1, "exit 1", r)
    pts = [l for l in r.out.splitlines() if re.match(r"(not )?ok ", l)]
    check(len(pts) == 4 and pts[0].startswith("not ok 1 - mismatch::wrong")
          and all(re.match(r"ok \d - \S+ # SKIP", p) for p in pts[1:]),
          "rest reported as skipped", r)


@test
def jobs_keep_tap_numbering():
    r = Run(["run", "--format", "tap", "-j", "4", GOOD_F, MISMATCH_F,
             *NO_OP_RUN, "--manual", "include"])
    check(r.rc == 1, "exit 1", r)
    nums = [int(m.group(2)) for m in
            re.finditer(r"^(not )?ok (\d+) ", r.out, re.M)]
    check(nums == [1, 2, 3, 4, 5, 6], "points numbered in order", r)
    tap_lines_only(r)


# --- selection ----------------------------------------------------------------

@test
def selector_matching_nothing():
    usage_error(Run(["run", "--case", "vadd::nothing", GOOD_F, MISMATCH_F]),
                "--case 'vadd::nothing' matches no case; scenes: vadd, "
                "mismatch")


@test
def selector_matching_only_manual():
    usage_error(Run(["run", "--case", "vadd::big", GOOD_F]),
                "--case 'vadd::big' matches only manual cases; run them with "
                "--manual include or --manual only")
    r = Run(["run", "--format", "tap", "--case", "vadd::big", "--manual",
             "include", GOOD_F])
    check(r.rc == 0 and "ok 1 - vadd::big\n" in r.out, "included", r)
    r = Run(["list", "--manual", "only", GOOD_F])
    check(r.rc == 0 and r.out == "vadd::big  (manual)\n", "only, marked", r)


@test
def globs_select():
    r = Run(["list", "--case", "*::*_*", "--case", "mis*", GOOD_F,
             MISMATCH_F])
    check(r.rc == 0 and r.out == "vadd::cpu_only\nmismatch::wrong\n"
          "mismatch::after\n", "globs, set order", r)


@test
def no_cases_selected_exit_0_or_2():
    r = Run(["run", "--format", "tap", "--platform", "threads", CPU_ONLY_F])
    check(r.rc == 0, "exit 0", r)
    check("no cases selected" in r.err, "says so on stderr", r)
    check(r.out == "TAP version 13\n1..0 # SKIP no cases selected\n",
          "an empty TAP plan", r)
    r = Run(["run", "--require-cases", "--platform", "threads", CPU_ONLY_F])
    check(r.rc == 2 and "no cases selected" in r.err, "exit 2", r)
    check(r.out == "", "nothing on stdout", r)
    r = Run(["list", "--platform", "threads", CPU_ONLY_F])
    check(r.rc == 0 and r.out == "" and "no cases selected" in r.err,
          "list too", r)


@test
def list_prints_selection():
    r = Run(["list", GOOD_F, MISMATCH_F])
    check(r.rc == 0 and r.out == "vadd::small\nvadd::cpu_only\n"
          "mismatch::wrong\nmismatch::after\n", "list", r)
    r = Run(["list", "--platform", "threads", GOOD_F])
    check(r.rc == 0 and r.out == "vadd::small\n", "platform filter", r)


@test
def check_validates_only():
    r = Run(["check", GOOD_F, MISMATCH_F] + NO_OP_RUN)
    check(r.rc == 0, "with a plugin, a missing op is no load error", r)
    check(r.out == "ok: 3 scenes, 6 cases\n", "summary", r)
    r = Run(["check", "--max-arg-bytes", "16", GOOD_F])
    check(r.rc == 2 and r.out == "" and GOOD_F + ":" in r.err,
          "the byte cap is a load error", r)


# --- outputs -------------------------------------------------------------------

@test
def output_file_gets_the_report():
    out = os.path.join(TMP, "report.tap")
    r = Run(["run", "--output", out, GOOD_F])
    check(r.rc == 0 and r.out == "", "stdout empty", r)
    with open(out) as f:
        text = f.read()
    check(text.startswith("TAP version 13\n1..2\n"), "TAP in file: " + text)


EVENT_KEYS = {"scene", "case", "platform", "status", "message", "output",
              "pid", "duration_ns", "record_stale", "env", "tags",
              "mistrusted", "warnings", "quarantine", "events"}
PHASE_KEYS = {"name", "round", "start_ns", "dur_ns", "status", "loaded"}


@test
def events_jsonl_fields():
    path = os.path.join(TMP, "events.jsonl")
    r = Run(["run", "--format", "tap", "--events", path, "--rounds", "2",
             GOOD_F, MISMATCH_F])
    check(r.rc == 1, "exit 1", r)
    with open(path, "rb") as f:
        lines = f.read().decode("utf-8").splitlines()
    check(len(lines) == 4, "one line per case: %r" % lines)
    objs = [json.loads(l) for l in lines]
    for o in objs:
        check(set(o) == EVENT_KEYS, "case keys %r" % sorted(o))
        check(o["status"] in ("pass", "fail", "error", "skip"), "status")
        check(o["platform"] == "cpu" and isinstance(o["pid"], int), "pid")
        check(o["record_stale"] is False, "record_stale")
        names = [e["name"] for e in o["events"] if e["name"] != "load"]
        for e in o["events"]:
            if e["name"] == "load":
                check(set(e) == {"name", "object", "phase"}, "load keys")
                continue
            want = PHASE_KEYS | ({"emitted"} if e["name"] == "record"
                                 else set())
            check(set(e) == want, "event keys %r" % sorted(e))
            check(e["round"] is None or isinstance(e["round"], int), "round")
        if o["status"] == "pass":
            check(o["message"] is None, "no message on pass")
            check(names == ["args", "golden", "record", "run", "compare",
                            "reset", "run", "compare"], "phases %r" % names)
    check(objs[0]["scene"] == "vadd" and objs[0]["case"] == "small",
          "finish order")
    check(objs[2]["status"] == "fail" and objs[2]["message"], "fail message")
    rounds = [e["round"] for e in objs[0]["events"] if e["name"] == "run"]
    check(rounds == [0, 1], "rounds %r" % rounds)


@test
def logs_never_reach_the_report():
    r = Run(["run", "--format", "tap", "--log-level", "debug", GOOD_F,
             MISMATCH_F, *NO_OP_RUN])
    check(r.rc == 1, "exit 1", r)
    tap_lines_only(r)
    check("[TIMING]" in r.err, "TIMING lines go to stderr", r)


def prove_reads(tap_text):
    """Runs prove on the text; returns (exit status, combined output)."""
    path = os.path.join(TMP, "prove-%d.tap" % len(tap_text))
    with open(path, "w") as f:
        f.write(tap_text)
    p = subprocess.run(["prove", "-e", "cat", path], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=60)
    return p.returncode, p.stdout.decode("utf-8", "replace")


@test
def prove_reads_tap_without_warnings():
    if shutil.which("prove") is None:
        return "SKIP prove is not installed"
    r = Run(["run", "--format", "tap", GOOD_F])
    rc, out = prove_reads(r.out)
    check(rc == 0 and "Result: PASS" in out, "prove passes:\n" + out)
    r = Run(["run", "--format", "tap", GOOD_F, MISMATCH_F, *NO_OP_RUN,
             "--manual", "include"])
    rc, out = prove_reads(r.out)
    check(rc != 0 and "Result: FAIL" in out, "prove fails:\n" + out)
    check("Failed 3/6 subtests" in out, "three failures:\n" + out)
    for bad in ("Parse errors", "Unknown", "unknown", "out of sequence",
                "Bad plan", "YAML"):
        check(bad not in out, "prove complains (%s):\n%s" % (bad, out))
    r = Run(["run", "--format", "tap", "--platform", "threads", CPU_ONLY_F])
    rc, out = prove_reads(r.out)
    check(rc == 0 and "skipped" in out and "Parse errors" not in out,
          "empty plan is a skip:\n" + out)


MESON_PARSE = r"""
import sys
from mesonbuild.mtest import TAPParser
bad = 0
for ev in TAPParser().parse(iter(sys.stdin.read().splitlines())):
    if isinstance(ev, (TAPParser.Error, TAPParser.UnknownLine)):
        print("problem:", ev)
        bad += 1
    elif isinstance(ev, TAPParser.Version) and ev.version != 13:
        print("problem: version", ev.version); bad += 1
sys.exit(1 if bad else 0)
"""


def meson_python():
    meson = shutil.which("meson")
    if meson is None:
        return None
    with open(meson, "rb") as f:
        first = f.readline().decode("utf-8", "replace")
    if not first.startswith("#!"):
        return None
    interp = first[2:].split()
    p = subprocess.run(interp + ["-c", "import mesonbuild.mtest"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return interp if p.returncode == 0 else None


@test
def meson_reads_tap_without_errors():
    interp = meson_python()
    if interp is None:
        return "SKIP meson's Python modules are not importable"
    for args in (["run", "--format", "tap", GOOD_F, MISMATCH_F, *NO_OP_RUN],
                 ["run", "--format", "tap", "--platform", "threads",
                  CPU_ONLY_F],
                 ["run", "--format", "tap", "--fail-fast", MISMATCH_F,
                  GOOD_F]):
        r = Run(args)
        p = subprocess.run(interp + ["-c", MESON_PARSE], input=r.out.encode(),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=60)
        check(p.returncode == 0, "meson's TAPParser: %s" %
              p.stdout.decode("utf-8", "replace"), r)


if __name__ == "__main__":
    sys.exit(main(TMP))
