# SPDX-License-Identifier: MIT
"""Everyday selection and run control (docs/cli.md): tags on scenes and
cases, --tag and -k (pytest's expression grammar, its precedence and
every error with its column), --skip, --maxfail and -x (also under -j 2
and --isolate), --durations (text, TAP read by prove, JSON validated
against docs/report.schema.json), JUnit tags read by junitparser, and
the last-failed state (--lf, --ff, --cache-dir, --no-cache: written,
read, missing, corrupt). Prints TAP 13.

Usage: test_selection.py SCENETEST SOURCE_ROOT
Needs Debian's python3-junitparser and python3-jsonschema (run it with
/usr/bin/python3); without them those checks skip."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

EXE = os.path.abspath(sys.argv[1])
ROOT = os.path.abspath(sys.argv[2])
TMP = tempfile.mkdtemp(prefix="scenetest-everyday-")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import taptest  # noqa: E402  (after sys.path)
from taptest import Run, check, main, test  # noqa: E402

taptest.EXE = EXE

try:
    import jsonschema
except ImportError:
    jsonschema = None
try:
    import junitparser
except ImportError:
    junitparser = None

ARGS = """\
args:
  - {tensor: a, dtype: float32, shape: [N], init: {uniform: [-1, 1]}}
  - {tensor: b, dtype: float32, shape: [N], init: {fill: 2.0}}
  - {tensor: out, dtype: float32, shape: [N], role: output}
"""

# vadd passes; sub's golden subtracts where the kernel adds: both of its
# cases fail.
TAGGED = ("scene: vadd\nkernel: add\ntags: [fast, bf16]\n" + ARGS +
          """cases:
  - name: small
    params: {N: 16}
    tags: [nightly]
  - name: mid
    params: {N: 32}
  - name: Large
    params: {N: 64}
    tags: [slow, nightly, fast]
---
scene: sub
kernel: add
golden: sub
""" + ARGS + """cases:
  - name: wrong
    params: {N: 4}
    tags: [slow]
  - name: after
    params: {N: 4}
""")

ALL = ["vadd::small", "vadd::mid", "vadd::Large", "sub::wrong", "sub::after"]

# Six failing cases, for --maxfail.
MANY = ("scene: many\nkernel: add\ngolden: sub\n" + ARGS + "cases:\n" +
        "".join("  - {name: f%d, params: {N: 4}}\n" % i for i in range(1, 7)))


write = taptest.writer(TMP)


F = write("tagged.yaml", TAGGED)
MANY_F = write("many.yaml", MANY)


def listed(*args):
    r = Run(["list", F, "--no-cache"] + list(args))
    check(r.rc == 0, "list exits 0", r)
    return r.out.splitlines()


def usage_error(run, message):
    check(run.rc == 2, "exit 2", run)
    check(run.err == "scenetest: error: " + message + "\n",
          "the one error line %r" % message, run)
    check(run.out == "", "nothing on stdout", run)


def points(tap):
    return [line for line in tap.splitlines()
            if line.startswith("ok ") or line.startswith("not ok ")]


@test
def tag__names_and_or_not():
    check(listed("--tag", "nightly") == ["vadd::small", "vadd::Large"],
          "nightly: the case's own tags")
    check(listed("--tag", "bf16") == ["vadd::small", "vadd::mid",
                                      "vadd::Large"],
          "bf16: the scene's tag is every case's")
    check(listed("--tag", "not slow") == ["vadd::small", "vadd::mid",
                                          "sub::after"], "not slow")
    check(listed("--tag", "bf16 and not nightly") == ["vadd::mid"],
          "bf16 and not nightly")
    check(listed("--tag", "nope") == [], "an unknown tag selects nothing")


@test
def tag__precedence_and_parentheses():
    # not binds tighter than and, and than or: 'not slow and fast or
    # slow' is ((not slow) and fast) or slow.
    check(listed("--tag", "not slow and fast or slow") ==
          ["vadd::small", "vadd::mid", "vadd::Large", "sub::wrong"],
          "not, and, or precedence")
    check(listed("--tag", "not (slow and fast or slow)") ==
          ["vadd::small", "vadd::mid", "sub::after"], "parentheses")
    check(listed("--tag", "fast and (nightly or slow)") ==
          ["vadd::small", "vadd::Large"], "and over a parenthesised or")
    check(listed("--tag", "fast and nightly or slow") ==
          ["vadd::small", "vadd::Large", "sub::wrong"],
          "and before or without parentheses")
    check(listed("--tag", "not not slow") == ["vadd::Large", "sub::wrong"],
          "not not")


@test
def k__case_insensitive_substrings_of_the_id():
    check(listed("-k", "large") == ["vadd::Large"], "case ignored")
    check(listed("-k", "SUB::") == ["sub::wrong", "sub::after"],
          "the scene part of the id")
    check(listed("-k", "vadd and not (small or mid)") == ["vadd::Large"],
          "the grammar")
    check(listed("--keyword", "wrong or after") == ["sub::wrong",
                                                    "sub::after"],
          "--keyword is -k")
    check(listed("-k", "r", "--tag", "slow") == ["vadd::Large",
                                                 "sub::wrong"],
          "-k and --tag both apply")


@test
def tag_and_k__errors_name_the_column():
    for opt, expr, msg in [
        ("--tag", "slow and", "at column 9: expected a name, 'not' or '(', "
         "got the end of the expression"),
        ("--tag", "(slow", "at column 6: expected 'and', 'or' or ')', got "
         "the end of the expression"),
        ("--tag", "slow)", "at column 5: expected 'and', 'or' or the end of "
         "the expression, got ')'"),
        ("--tag", "or slow", "at column 1: expected a name, 'not' or '(', "
         "got 'or'"),
        ("--tag", "not", "at column 4: expected a name, 'not' or '(', got "
         "the end of the expression"),
        ("--tag", "a $ b", "at column 3: expected 'and', 'or' or the end of "
         "the expression, got '$'"),
        ("--tag", "()", "at column 2: expected a name, 'not' or '(', got "
         "')'"),
        ("-k", "small mid", "at column 7: expected 'and', 'or' or the end "
         "of the expression, got 'mid'"),
        ("-k", "a and and b", "at column 7: expected a name, 'not' or '(', "
         "got 'and'"),
        ("-k", "   ", "at column 4: expected a name, 'not' or '(', got the "
         "end of the expression"),
    ]:
        usage_error(Run(["list", F, opt, expr]),
                    "%s '%s': %s" % (opt, expr, msg))
    usage_error(Run(["list", F, "--tag", "(" * 300 + "a" + ")" * 300]),
                "--tag '%s': at column 201: nested more than 200 deep" %
                ("(" * 300 + "a" + ")" * 300))
    usage_error(Run(["list", F, "--tag", ""]), "--tag needs an expression")
    usage_error(Run(["check", F, "--tag", "a"]),
                "option '--tag' does not apply to 'check'")


@test
def skip__deselects_with_the_case_syntax():
    check(listed("--skip", "vadd") == ["sub::wrong", "sub::after"],
          "a scene")
    check(listed("--skip", "::*a*") == ["vadd::mid", "sub::wrong"],
          "a glob over case names")
    check(listed("--skip", "vadd::mid", "--skip", "sub::after") ==
          ["vadd::small", "vadd::Large", "sub::wrong"], "repeatable")
    check(listed("--case", "vadd", "--skip", "::small") ==
          ["vadd::mid", "vadd::Large"], "after --case")
    usage_error(Run(["list", F, "--skip", "nope"]),
                "--skip 'nope' matches no case")


@test
def filters__before_the_shard_and_absent_from_reports():
    r = Run(["run", F, "--no-cache", "--format", "json", "--tag", "fast",
             "--skip", "::mid"])
    check(r.rc == 0, "exit 0", r)
    doc = json.loads(r.out)
    check([c["id"] for c in doc["cases"]] == ["vadd::small", "vadd::Large"],
          "left-out cases are absent", r)
    check(doc["summary"]["skip"] == 0, "not skips", r)
    # The shard splits what the filters kept: both shards together are
    # the filtered set.
    got = []
    for k in (0, 1):
        got += listed("--tag", "fast", "--shard", "%d/2" % k)
    check(sorted(got) == sorted(["vadd::small", "vadd::mid", "vadd::Large"]),
          "the shards partition the filtered cases: %r" % got)


@test
def tags__in_json_list_and_run():
    r = Run(["list", "--format", "json", F, "--no-cache"])
    check(r.rc == 0, "exit 0", r)
    tags = {c["scene"] + "::" + c["case"]: c["tags"] for c in
            json.loads(r.out)}
    check(tags == {"vadd::small": ["fast", "bf16", "nightly"],
                   "vadd::mid": ["fast", "bf16"],
                   "vadd::Large": ["fast", "bf16", "slow", "nightly"],
                   "sub::wrong": ["slow"], "sub::after": []},
          "the scene's, then the case's own, each once: %r" % tags, r)
    r = Run(["run", "--format", "json", F, "--no-cache"])
    doc = json.loads(r.out)
    check([c["tags"] for c in doc["cases"]] ==
          [tags[c["id"]] for c in doc["cases"]], "run's JSON agrees", r)
    if jsonschema is not None:
        jsonschema.validate(doc, json.load(open(
            os.path.join(ROOT, "docs", "report.schema.json"))))


@test
def tags__in_junit():
    if junitparser is None:
        return "SKIP junitparser is not installed"
    path = os.path.join(TMP, "tags.xml")
    r = Run(["run", F, "--no-cache", "--format", "junit", "--output", path])
    check(r.rc == 1, "exit 1 (sub::wrong fails)", r)
    xml = junitparser.JUnitXml.fromfile(path)
    suites = {s.name: s for s in xml}
    props = {s: {p.name: p.value for p in suites[s].properties()}
             for s in suites}
    check(props["vadd"].get("tags") == "fast, bf16",
          "the scene's tags as a property: %r" % props["vadd"])
    check("tags" not in props["sub"], "no property for no tags")
    out = {c.name: c.system_out for s in xml for c in s}
    check(out["small"] == "tags: nightly\n", "small: %r" % out["small"])
    check(out["Large"] == "tags: slow, nightly\n",
          "the case's own, not the scene's again: %r" % out["Large"])
    check(out["mid"] is None and out["after"] is None,
          "no system-out without own tags")
    check(out["wrong"] == "tags: slow\n", "beside a failure")


@test
def maxfail__stops_and_skips_the_rest():
    for args, want_fail in [(["--maxfail", "2"], 2), (["-x"], 1),
                            (["--fail-fast"], 1), (["--maxfail", "4"], 4)]:
        r = Run(["run", MANY_F, "--no-cache", "--format", "tap"] + args)
        check(r.rc == 1, "exit 1", r)
        pts = points(r.out)
        check(len(pts) == 6, "every case reported", r)
        check(all(p.startswith("not ok") for p in pts[:want_fail]),
              "the first %d fail" % want_fail, r)
        check(all(p.endswith("# SKIP not run: --maxfail")
                  for p in pts[want_fail:]), "the rest not run", r)
    usage_error(Run(["run", MANY_F, "--maxfail", "0"]),
                "--maxfail must be at least 1 (got 0)")
    usage_error(Run(["list", MANY_F, "-x"]),
                "option '-x' does not apply to 'list'")


@test
def maxfail__with_jobs_2():
    # Supervised (the default), under --isolate and in threads: cases
    # already running when the limit is reached finish (docs/cli.md), so
    # between N and N + 1 fail at -j 2; every other case is not run.
    for mode in ([], ["--isolate"], ["--no-supervise"]):
        r = Run(["run", MANY_F, "--no-cache", "--format", "tap", "-j", "2",
                 "--maxfail", "2"] + mode)
        check(r.rc == 1, "exit 1", r)
        pts = points(r.out)
        failed = [p for p in pts if p.startswith("not ok")]
        skipped = [p for p in pts if p.endswith("# SKIP not run: --maxfail")]
        check(len(pts) == 6 and 2 <= len(failed) <= 3 and
              len(failed) + len(skipped) == 6,
              "%s: N..N+1 failures, the rest not run" % mode, r)
        check(pts[:len(failed)] == failed, "in selection order", r)


@test
def durations__text_tap_json():
    r = Run(["run", F, "--no-cache", "--format", "text", "--durations",
             "2"])
    lines = r.out.splitlines()
    i = lines.index("slowest 2 cases:")
    block = lines[i + 1:i + 3]
    check(all(line.startswith("  ") and "s  " in line and
              "(slowest phase: " in line for line in block),
          "two case lines", r)
    check(lines[i + 3].startswith("5 cases:"), "then the summary", r)
    r = Run(["run", F, "--no-cache", "--format", "tap", "--durations", "10"])
    tap = r.out.splitlines()
    i = tap.index("# slowest 10 cases:")
    # Then the totals, TAP's last line (docs/cli.md).
    check(len(tap) - i - 2 == 5 and all(l.startswith("#   ")
                                        for l in tap[i + 1:-1]) and
          tap[-1].startswith("# 5 cases: "),
          "five ranked cases as # lines, then the totals", r)
    if shutil.which("prove") is not None:
        path = os.path.join(TMP, "durations.tap")
        with open(path, "w") as f:
            f.write(r.out)
        p = subprocess.run(["prove", "-e", "cat", path],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        out = p.stdout.decode()
        check("Failed 2/5 subtests" in out and "Parse errors" not in out,
              "prove reads it:\n" + out)
    r = Run(["run", MANY_F, "--no-cache", "--format", "json", "-x",
             "--durations", "3"])
    doc = json.loads(r.out)
    check(len(doc["slowest"]) == 1 and doc["slowest"][0]["id"] == "many::f1",
          "skipped cases are not ranked", r)
    r = Run(["run", F, "--no-cache", "--format", "json", "--durations", "3"])
    doc = json.loads(r.out)
    s = doc["slowest"]
    check(len(s) == 3 and all(a["duration_ns"] >= b["duration_ns"]
                              for a, b in zip(s, s[1:])),
          "slowest first", r)
    check(all(x["phase"] in ("args", "golden", "record", "run", "compare")
              and x["phase_ns"] <= x["duration_ns"] for x in s),
          "each with its slowest phase", r)
    if jsonschema is not None:
        jsonschema.validate(doc, json.load(open(
            os.path.join(ROOT, "docs", "report.schema.json"))))
    r = Run(["run", F, "--no-cache", "--format", "json"])
    check("slowest" not in json.loads(r.out), "absent without --durations")


def state(cwd, name=".scenetest-cache"):
    with open(os.path.join(cwd, name, "lastfailed")) as f:
        return json.load(f)


def workdir(name, scene=TAGGED):
    d = os.path.join(TMP, name)
    os.makedirs(d)
    with open(os.path.join(d, "s.yaml"), "w") as f:
        f.write(scene)
    return d


@test
def lastfailed__written_read_and_updated():
    d = workdir("lf")
    r = Run(["run", "s.yaml", "--format", "tap"], cwd=d)
    check(r.rc == 1, "a failing run", r)
    check(state(d) == {"sub::wrong": True, "sub::after": True},
          "the failures entered")
    with open(os.path.join(d, ".scenetest-cache", ".gitignore")) as f:
        check(f.read().splitlines()[-1] == "*", ".gitignore of *")
    check(not [n for n in os.listdir(os.path.join(d, ".scenetest-cache"))
               if n not in ("lastfailed", ".gitignore")],
          "no temporary file left")
    r = Run(["run", "s.yaml", "--format", "tap", "--lf"], cwd=d)
    check([p.split(" - ")[1] for p in points(r.out)] == ["sub::wrong",
                                                         "sub::after"],
          "--lf runs only the failed cases", r)
    check("running the 2 selected cases that failed last time" in r.err,
          "says so", r)
    r = Run(["run", "s.yaml", "--format", "tap", "--ff"], cwd=d)
    check([p.split(" - ")[1].split(" ")[0] for p in points(r.out)] ==
          ["sub::wrong", "sub::after", "vadd::small", "vadd::mid",
           "vadd::Large"], "--ff runs them first, then the rest", r)
    r = Run(["list", "s.yaml", "--lf"], cwd=d)
    check(r.out.splitlines() == ["sub::wrong", "sub::after"], "list --lf", r)
    r = Run(["run", "s.yaml", "--format", "tap", "--ff", "--tag", "nope"],
            cwd=d)
    check(r.rc == 0 and r.out == "TAP version 13\n1..0 # SKIP no cases "
          "selected\n", "--ff over an empty selection", r)
    # One passes now, the other is not run: it leaves, the other stays.
    with open(os.path.join(d, ".scenetest-cache", "lastfailed"), "w") as f:
        f.write('{"vadd::mid": true, "sub::wrong": true}')
    r = Run(["run", "s.yaml", "--format", "tap", "--lf", "--case", "vadd"],
            cwd=d)
    check([p.split(" - ")[1] for p in points(r.out)] == ["vadd::mid"],
          "--lf within --case", r)
    check(state(d) == {"sub::wrong": True}, "the pass left, the rest kept")
    # A case not run (left out by --case) keeps its entry; one that
    # passes leaves it.
    with open(os.path.join(d, "s.yaml"), "w") as f:
        f.write(TAGGED.replace("golden: sub", "golden: add"))
    r = Run(["run", "s.yaml", "--format", "tap", "--case", "vadd"], cwd=d)
    check(state(d) == {"sub::wrong": True}, "kept when not run")
    r = Run(["run", "s.yaml", "--format", "tap", "--lf"], cwd=d)
    check(r.rc == 0 and state(d) == {}, "the pass cleared it", r)
    r = Run(["run", "s.yaml", "--format", "tap", "--lf"], cwd=d)
    check(len(points(r.out)) == 5 and
          "no failed cases recorded in .scenetest-cache; running every "
          "selected case" in r.err, "an empty state: a full run, said", r)


@test
def lastfailed__missing_corrupt_and_options():
    d = workdir("lf2")
    r = Run(["run", "s.yaml", "--format", "tap", "--lf"], cwd=d)
    check(len(points(r.out)) == 5, "no state: every case", r)
    check("scenetest: --last-failed: no last-failed state in "
          ".scenetest-cache; running every selected case" in r.err,
          "says so", r)
    for bad in ["{", "[]", '{"a::b": 1}', '{"a::b": true,}', "\0",
                '{"a::b": true} x', '{"\\ud800": true}']:
        with open(os.path.join(d, ".scenetest-cache", "lastfailed"),
                  "w") as f:
            f.write(bad)
        r = Run(["run", "s.yaml", "--format", "tap", "--lf"], cwd=d)
        check(r.rc == 1 and len(points(r.out)) == 5, "a full run", r)
        check("[WARNING] .scenetest-cache/lastfailed: the last-failed state "
              "is corrupt" in r.err, "a warning for %r" % bad, r)
        check(state(d) == {"sub::wrong": True, "sub::after": True},
              "rewritten after the run")
    # --cache-dir and --no-cache.
    r = Run(["run", "s.yaml", "--format", "tap", "--cache-dir", "c2"], cwd=d)
    check(state(d, "c2") == {"sub::wrong": True, "sub::after": True},
          "--cache-dir", r)
    e = workdir("lf3")
    r = Run(["run", "s.yaml", "--format", "tap", "--no-cache"], cwd=e)
    check(not os.path.exists(os.path.join(e, ".scenetest-cache")),
          "--no-cache writes nothing", r)
    usage_error(Run(["run", "s.yaml", "--lf", "--no-cache"], cwd=e),
                "--no-cache leaves no state for --last-failed")
    open(os.path.join(e, "empty.json"), "w").close()
    usage_error(Run(["run", "s.yaml", "--lf", "--rerun-failed",
                     "empty.json"], cwd=e),
                "--last-failed and --rerun-failed both choose the cases; "
                "give one")
    # A state naming only cases that are not selected: every case.
    with open(os.path.join(d, ".scenetest-cache", "lastfailed"), "w") as f:
        f.write('{"gone::case": true, "sub::wrong": true}')
    r = Run(["run", "s.yaml", "--format", "tap", "--lf", "--case", "vadd"],
            cwd=d)
    check(len(points(r.out)) == 3 and "none of the recorded failed cases "
          "is selected" in r.err, "nothing of it selected: all", r)
    check(state(d) == {"gone::case": True, "sub::wrong": True},
          "entries of cases not run are kept")
    # A large state (a suite that failed wholesale) reads and updates in
    # linear time: 200000 names, then the run keeps them all.
    big = {"gone::c%d" % i: True for i in range(200000)}
    big["sub::wrong"] = True
    with open(os.path.join(d, ".scenetest-cache", "lastfailed"), "w") as f:
        json.dump(big, f)
    r = Run(["run", "s.yaml", "--format", "tap", "--lf"], cwd=d)
    check([p.split(" - ")[1] for p in points(r.out)] == ["sub::wrong"],
          "a large state: its one selected case", r)
    check(len(state(d)) == 200001, "every entry kept")
    # A cache directory that cannot be made: a warning, the run's status.
    r = Run(["run", "s.yaml", "--format", "tap", "--cache-dir",
             "s.yaml/sub"], cwd=d)
    check(r.rc == 1 and "[WARNING] cannot create the cache directory "
          "'s.yaml/sub'" in r.err, "unwritable: a warning", r)


sys.exit(main(TMP))
