# SPDX-License-Identifier: MIT
"""--guard-pages and the guard zones (issue 13, docs/reliability.md)
against the misbehave plugin (tests/plugins/test_plugin_src.c), whose
kernel reads one element past the end of its input x (behaviour 19),
writes one past the end of its output y (20), or writes to address 8 (21,
a fault in no guard page). Each run: the bad case is an `error` whose
message names the tensor, every other case passes, exit 1; prove reads
the TAP and every --events line is JSON.

Usage: test_guard_pages.py SCENETEST PLUGIN SANITIZE"""
import json
import os
import platform
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import taptest  # noqa: E402
from taptest import check, main, prove_ok, test, write  # noqa: E402

taptest.EXE = EXE = os.path.abspath(sys.argv[1])
PLUGIN = os.path.abspath(sys.argv[2])
TMP = tempfile.mkdtemp(prefix="st_guard_pages_")

# ASan turns SIGSEGV into its own report and exit; these tests need the
# signal itself, as the supervisor sees it in a plain build.
ENV = dict(os.environ, NO_COLOR="1",
           ASAN_OPTIONS="handle_segv=0:detect_leaks=0:" +
           os.environ.get("ASAN_OPTIONS", ""))

BEHAVIOUR = {"good": 0, "read_past": 19, "write_past": 20, "wild": 21}
# x86-64 tells a read from a write (the page-fault error code); elsewhere
# the handler says "accessed".
X86 = platform.machine() in ("x86_64", "AMD64")


def verb(v):
    return v if X86 else "accessed"


def scene(name, bad, level=2):
    """good0, the bad case, after0 and after1: int32 x and y of 64
    elements (256 bytes)."""
    keys = "level: 3\nworkers: 2\n" if level == 3 else ""
    cases = ["  - {name: good0, params: {B: 0}}",
             "  - {name: %s, params: {B: %d}}" % (bad, BEHAVIOUR[bad]),
             "  - {name: after0, params: {B: 0}}",
             "  - {name: after1, params: {B: 0}}"]
    return write(TMP, name, taptest.scale_scene("gp", cases, keys))


def run(args):
    return taptest.run_exe(args, env=ENV)


def points(tap):
    plan, pts = taptest.tap_points(tap)
    check(len(pts) == plan, "plan %d = points:\n%s" % (plan, tap))
    return {m.group(3).split("::")[1]: m.group(1) == "ok" for m in pts}


def expect_error(bad, reason, extra, level=2):
    """The bad case is an error matching reason; the rest pass; exit 1."""
    path = scene("%s_l%d.yaml" % (bad, level), bad, level)
    ev = os.path.join(TMP, "events.jsonl")
    rc, out, err = run(["run", "--plugin", PLUGIN, "--platform",
                        "misbehave", "--format", "tap", "--log-level",
                        "error", "--events", ev] + list(extra) + [path])
    what = "%s %r level %d: rc=%d\n%s%s" % (bad, extra, level, rc, out, err)
    check(rc == 1, "exit 1: " + what)
    pts = points(out)
    check(sorted(pts) == sorted(["after0", "after1", bad, "good0"]),
          "every case reported: " + what)
    check(not pts[bad] and all(pts[c] for c in pts if c != bad),
          "only the bad case fails: " + what)
    msgs = re.findall(r'^  message: "(.*)"$', out, re.M)
    check(len(msgs) == 1 and re.search(reason, msgs[0]),
          "the reason matches %r: %s" % (reason, what))
    prove_ok(out)
    with open(ev) as f:
        evs = [json.loads(line) for line in f]
    check(sorted(e["case"] for e in evs) == sorted(pts) and
          [e["status"] for e in evs if e["case"] == bad] == ["error"],
          "--events: every case, the bad one an error: %r" % evs)


def page_reason(v, tensor, how):
    return (r"^kernel %s out of bounds of tensor '%s': 1 byte past its end "
            r"\(256 bytes long; guard page, SIGSEGV\); %s" %
            (verb(v), tensor, how))


SUPERVISED = (r"supervised child \(pid \d+\) killed by signal SIGSEGV .*"
              r"during phase 'run' \(round 0\)$")
ISOLATED = r"child process \(pid \d+\) killed by signal SIGSEGV"


@test
def guard_pages__read_past_input_end_is_error_naming_tensor():
    for extra in (["--guard-pages"], ["--guard-pages", "-j", "2"]):
        expect_error("read_past", page_reason("read", "x", SUPERVISED), extra)
    expect_error("read_past", page_reason("read", "x", ISOLATED),
                 ["--guard-pages", "--isolate"])


@test
def guard_pages__write_past_output_end_is_error_naming_tensor():
    for extra in (["--guard-pages"], ["--guard-pages", "-j", "2"]):
        expect_error("write_past", page_reason("wrote", "y", SUPERVISED),
                     extra)
    expect_error("write_past", page_reason("wrote", "y", ISOLATED),
                 ["--guard-pages", "--isolate"])


@test
def guard_pages__fault_elsewhere_keeps_the_plain_signal():
    # Address 8 is in no guard page: the message is today's, no note.
    expect_error("wild", r"^" + SUPERVISED, ["--guard-pages"])
    expect_error("wild", r"^" + ISOLATED, ["--guard-pages", "--isolate"])


@test
def guard_zone__write_past_end_caught_without_guard_pages():
    zone = (r"^run: kernel wrote out of bounds of tensor 'y': 4 bytes past "
            r"its end \(256 bytes long; guard zone\)$")
    expect_error("write_past", zone, [])
    expect_error("write_past", zone, ["--isolate"])


@test
def guard_zone__level3_shared_segment_write_past_end_is_error():
    # Level 3 keeps its tensors in shared segments, between guard zones;
    # --guard-pages does not apply there (docs/reliability.md).
    zone = (r"^run: kernel wrote out of bounds of tensor 'y': 4 bytes past "
            r"its end \(256 bytes long; guard zone; level-3 shared "
            r"segment\)$")
    expect_error("write_past", zone, [], level=3)
    expect_error("write_past", zone, ["--guard-pages"], level=3)


@test
def guard_pages__no_supervise_fault_ends_the_process_with_the_note():
    # Nobody is left to make it a case error: the handler writes the note
    # to stderr and the process dies of the signal (docs/reliability.md).
    path = scene("ns.yaml", "read_past")
    rc, out, err = run(["run", "--plugin", PLUGIN, "--platform", "misbehave",
                        "--format", "tap", "--log-level", "error",
                        "--guard-pages", "--no-supervise", path])
    check(rc == -11, "killed by SIGSEGV: rc=%d\n%s" % (rc, err))
    check(re.search(r"^scenetest: error: kernel %s out of bounds of tensor "
                    r"'x': 1 byte past its end \(256 bytes long; guard page, "
                    r"SIGSEGV\)$" % verb("read"), err, re.M),
          "the note on stderr:\n" + err)


sys.exit(main(TMP))
