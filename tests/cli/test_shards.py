# SPDX-License-Identifier: MIT
"""Beyond one machine (docs/ci.md, docs/cli.md#sharding): CircleCI's and
Buildkite's shard variables beside the others, `--shard-by durations:FILE`
(longest processing time first over an earlier run's durations) and
`scenetest merge` (several shards' reports become one, in every format,
each read back by its real consumer).

Usage: test_shards.py SCENETEST_EXE SOURCE_ROOT"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

try:
    import jsonschema  # noqa: F401 (taptest.validate_json uses it)
    import junitparser
except ImportError as e:  # not Debian's python: nothing to check with
    print("1..0 # SKIP %s" % e)
    sys.exit(0)  # the 1..0 plan is meson's TAP skip

EXE = os.path.abspath(sys.argv[1])
ROOT = os.path.abspath(sys.argv[2])
SCENES = os.path.join(ROOT, "scenes")
NO_TORCH = ["--ignore", "torch"]
TMP = tempfile.mkdtemp(prefix="scenetest-shards-")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import taptest  # noqa: E402
from taptest import (Run, check, fnv1a64, listed, main, path,  # noqa: E402
                     run_json, test, validate_json, xmllint)

taptest.setup_reports(EXE, TMP, ROOT)


write = taptest.writer(TMP)


# --- CircleCI and Buildkite -----------------------------------------------

@test
def ci__circleci_and_buildkite_pairs_shard_run_0_based():
    want = {c for c in listed([*NO_TORCH, SCENES]) if fnv1a64(c) % 3 == 1}
    forms = [
        ({"CIRCLE_NODE_INDEX": "1", "CIRCLE_NODE_TOTAL": "3"},
         "CIRCLE_NODE_INDEX/CIRCLE_NODE_TOTAL"),
        ({"BUILDKITE_PARALLEL_JOB": "1", "BUILDKITE_PARALLEL_JOB_COUNT": "3"},
         "BUILDKITE_PARALLEL_JOB/BUILDKITE_PARALLEL_JOB_COUNT"),
        # Agreeing pairs: the first in the documented order names the
        # source.
        ({"CIRCLE_NODE_INDEX": "1", "CIRCLE_NODE_TOTAL": "3",
          "BUILDKITE_PARALLEL_JOB": "1", "BUILDKITE_PARALLEL_JOB_COUNT": "3"},
         "CIRCLE_NODE_INDEX/CIRCLE_NODE_TOTAL"),
        ({"CI_NODE_INDEX": "2", "CI_NODE_TOTAL": "3",
          "CIRCLE_NODE_INDEX": "1", "CIRCLE_NODE_TOTAL": "3"},
         "CI_NODE_INDEX/CI_NODE_TOTAL"),
        # A total of 1 is unsharded and never disagrees.
        ({"GTEST_SHARD_INDEX": "0", "GTEST_TOTAL_SHARDS": "1",
          "BUILDKITE_PARALLEL_JOB": "1", "BUILDKITE_PARALLEL_JOB_COUNT": "3"},
         "BUILDKITE_PARALLEL_JOB/BUILDKITE_PARALLEL_JOB_COUNT"),
        ({"CIRCLE_NODE_INDEX": "0", "CIRCLE_NODE_TOTAL": "1",
          "TEST_SHARD_INDEX": "1", "TEST_TOTAL_SHARDS": "3"},
         "TEST_SHARD_INDEX/TEST_TOTAL_SHARDS"),
    ]
    for env, source in forms:
        r, doc = run_json([*NO_TORCH, SCENES], env=env)
        check(r.rc == 0 and doc is not None, "exit 0 for %r" % env, r)
        got = {c["id"] for c in doc["cases"]}
        check(got == want, "shard 1/3 from %r: %r" % (env, sorted(got)), r)
        check(doc["run"]["shard"] == {"index": 1, "total": 3,
                                      "source": source},
              "shard metadata %r" % doc["run"]["shard"], r)


@test
def ci__total_of_one_is_unsharded_and_list_ignores_the_variables():
    everything = set(listed([*NO_TORCH, SCENES]))
    for env in ({"CIRCLE_NODE_INDEX": "0", "CIRCLE_NODE_TOTAL": "1"},
                {"BUILDKITE_PARALLEL_JOB": "0",
                 "BUILDKITE_PARALLEL_JOB_COUNT": "1"}):
        r, doc = run_json([*NO_TORCH, SCENES], env=env)
        check(r.rc == 0 and {c["id"] for c in doc["cases"]} == everything
              and doc["run"]["shard"] is None, "unsharded for %r" % env, r)
    env = {"CIRCLE_NODE_INDEX": "1", "CIRCLE_NODE_TOTAL": "3"}
    check(set(listed([*NO_TORCH, SCENES], env=env)) == everything,
          "list does not read the CI variables")
    # --shard 0/1 says unsharded, and agrees with any pair.
    r, doc = run_json(["--shard", "0/1", *NO_TORCH, SCENES], env=env)
    check(r.rc == 0 and doc["run"]["shard"] is None and
          {c["id"] for c in doc["cases"]} == everything, "--shard 0/1", r)


@test
def ci__half_pairs_garbage_and_disagreement_are_usage_errors():
    cases = [
        ({"CIRCLE_NODE_INDEX": "0"}, "CIRCLE_NODE_INDEX is set but "
         "CIRCLE_NODE_TOTAL is not; set both or neither"),
        ({"CIRCLE_NODE_TOTAL": "2"}, "CIRCLE_NODE_TOTAL is set but "
         "CIRCLE_NODE_INDEX is not; set both or neither"),
        ({"BUILDKITE_PARALLEL_JOB": "0"}, "BUILDKITE_PARALLEL_JOB is set "
         "but BUILDKITE_PARALLEL_JOB_COUNT is not; set both or neither"),
        ({"BUILDKITE_PARALLEL_JOB_COUNT": "2"}, "BUILDKITE_PARALLEL_JOB_COUNT"
         " is set but BUILDKITE_PARALLEL_JOB is not; set both or neither"),
        ({"CIRCLE_NODE_INDEX": "2", "CIRCLE_NODE_TOTAL": "2"},
         "CIRCLE_NODE_INDEX='2' and CIRCLE_NODE_TOTAL='2' do not name a "
         "shard"),
        ({"CIRCLE_NODE_INDEX": "x", "CIRCLE_NODE_TOTAL": "2"},
         "CIRCLE_NODE_INDEX='x' and CIRCLE_NODE_TOTAL='2' do not name"),
        ({"BUILDKITE_PARALLEL_JOB": "0", "BUILDKITE_PARALLEL_JOB_COUNT": "0"},
         "BUILDKITE_PARALLEL_JOB='0' and BUILDKITE_PARALLEL_JOB_COUNT='0' "
         "do not name a shard"),
        ({"BUILDKITE_PARALLEL_JOB": "-1",
          "BUILDKITE_PARALLEL_JOB_COUNT": "2"}, "do not name a shard"),
        ({"BUILDKITE_PARALLEL_JOB": "0",
          "BUILDKITE_PARALLEL_JOB_COUNT": "65537"}, "do not name a shard"),
        ({"CIRCLE_NODE_INDEX": "0", "CIRCLE_NODE_TOTAL": "2",
          "BUILDKITE_PARALLEL_JOB": "1", "BUILDKITE_PARALLEL_JOB_COUNT": "2"},
         "CIRCLE_NODE_INDEX/CIRCLE_NODE_TOTAL says shard 0/2 but "
         "BUILDKITE_PARALLEL_JOB/BUILDKITE_PARALLEL_JOB_COUNT says shard "
         "1/2"),
        ({"GTEST_SHARD_INDEX": "0", "GTEST_TOTAL_SHARDS": "2",
          "CIRCLE_NODE_INDEX": "0", "CIRCLE_NODE_TOTAL": "3"},
         "GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS says shard 0/2 but "
         "CIRCLE_NODE_INDEX/CIRCLE_NODE_TOTAL says shard 0/3"),
    ]
    for env, msg in cases:
        r = Run(["run", *NO_TORCH, SCENES], env=env)
        check(r.rc == 2 and r.err.startswith("scenetest: error: ") and
              msg in r.err and r.err.count("\n") == 1,
              "usage error %r for %r" % (msg, env), r)
    r = Run(["run", "--shard", "0/2", *NO_TORCH, SCENES],
            env={"BUILDKITE_PARALLEL_JOB": "1",
                 "BUILDKITE_PARALLEL_JOB_COUNT": "2"})
    check(r.rc == 2 and "--shard says shard 0/2 but BUILDKITE_PARALLEL_JOB/"
          "BUILDKITE_PARALLEL_JOB_COUNT says shard 1/2" in r.err,
          "option vs env", r)


# --- --shard-by durations:FILE --------------------------------------------

def suite(name, cases, scene="w"):
    """One scene of copy cases, c-named as given."""
    return write(name + ".yaml",
                 "scene: %s\nkernel: copy\nargs:\n"
                 "  - {tensor: x, dtype: float32, shape: [2]}\n"
                 "  - {tensor: y, dtype: float32, shape: [2], role: output}\n"
                 "cases:\n" % scene +
                 "".join("  - name: %s\n" % c for c in cases))


def events(name, durations, scene="w"):
    """An --events file recording durations {case: ns}."""
    return write(name, "".join(
        json.dumps({"scene": scene, "case": c, "platform": "cpu",
                    "status": "pass", "message": None, "output": None,
                    "pid": 1, "duration_ns": ns, "record_stale": False,
                    "events": [{"name": "run", "round": 0, "start_ns": 1,
                                "dur_ns": ns, "status": "ok",
                                "loaded": []}]}) + "\n"
        for c, ns in durations.items()))


def split(target, n, durations_file, cmd="list", env=None):
    parts = []
    for k in range(n):
        if cmd == "list":
            parts.append(listed(["--shard", "%d/%d" % (k, n), "--shard-by",
                                 "durations:" + durations_file, target]))
        else:
            e = dict(env(k, n)) if env else {}
            r, doc = run_json(["--shard-by", "durations:" + durations_file,
                               target], env=e)
            check(r.rc == 0, "shard %d/%d runs" % (k, n), r)
            parts.append([c["id"] for c in doc["cases"]] if doc else [])
    return parts


def lpt(durations, ids, n):
    """docs/cli.md#sharding's split, written from its text."""
    known = sorted(durations[i] for i in ids if i in durations)
    m = len(known)
    median = 0 if m == 0 else (known[m // 2] if m % 2 else
                               (known[m // 2 - 1] + known[m // 2]) // 2)
    dur = {i: durations.get(i, median) for i in ids}
    load, count, out = [0] * n, [0] * n, [[] for _ in range(n)]
    for i in sorted(ids, key=lambda i: (-dur[i], i.encode())):
        best = min(range(n), key=lambda s: (load[s], count[s], s))
        out[best].append(i)
        load[best] += dur[i]
        count[best] += 1
    return out, max(load)


@test
def shard_by__the_worked_example_whole_assignment():
    target = suite("lpt", ["c%d" % i for i in range(1, 8)])
    # c6 is missing: it takes the median of the others, (20 + 30) / 2;
    # c4 and c7 tie at 20 and go by id.
    durs = events("lpt.jsonl", {"c1": 50, "c2": 40, "c3": 30, "c4": 20,
                                "c5": 10, "c7": 20})
    got = split(target, 3, durs)
    want = [["w::c1", "w::c7"], ["w::c2", "w::c4"],
            ["w::c3", "w::c5", "w::c6"]]
    check(got == want, "LPT of the worked example: %r" % got)
    # The same split as run reads it from each engine's variables, each
    # shard its own process.
    engines = [
        lambda k, n: {"GTEST_SHARD_INDEX": str(k),
                      "GTEST_TOTAL_SHARDS": str(n)},
        lambda k, n: {"CI_NODE_INDEX": str(k + 1), "CI_NODE_TOTAL": str(n)},
        lambda k, n: {"BUILDKITE_PARALLEL_JOB": str(k),
                      "BUILDKITE_PARALLEL_JOB_COUNT": str(n)},
    ]
    for env in engines:
        parts = split(target, 3, durs, "run", env)
        check(parts == want, "run under %r: %r" % (env(0, 3), parts))


@test
def shard_by__disjoint_complete_and_as_documented_for_n_1_to_9():
    names = ["k%02d" % i for i in range(30)]
    target = suite("many", names, scene="m")
    durations = {"m::" + c: (i * 7919) % 1000 for i, c in enumerate(names)
                 if i % 4}  # every fourth missing: the median
    durs = events("many.jsonl", {k[3:]: v for k, v in durations.items()},
                  scene="m")
    ids = ["m::" + c for c in names]
    for n in range(1, 10):
        parts = split(target, n, durs)
        union = [c for p in parts for c in p]
        check(sorted(union) == sorted(ids) and len(set(union)) == len(ids),
              "disjoint and complete for %d" % n)
        want, _ = lpt(durations, ids, n)
        check([sorted(p) for p in parts] == [sorted(p) for p in want],
              "the documented split for %d" % n)


@test
def shard_by__zero_durations_more_shards_than_cases_and_repeats():
    target = suite("zero", ["c%d" % i for i in range(1, 8)])
    # All zero: every load ties, so the case count decides: round-robin
    # over the ids.
    durs = events("zero.jsonl", {"c%d" % i: 0 for i in range(1, 8)})
    got = split(target, 3, durs)
    check(got == [["w::c1", "w::c4", "w::c7"], ["w::c2", "w::c5"],
                  ["w::c3", "w::c6"]], "zero durations: %r" % got)
    # More shards than cases: one case each, the rest empty.
    got = split(target, 10, durs)
    check(got == [["w::c%d" % i] for i in range(1, 8)] + [[], [], []],
          "ten shards of seven cases: %r" % got)
    r, doc = run_json(["--shard", "9/10", "--shard-by", "durations:" + durs,
                       target])
    check(r.rc == 0 and "no cases selected" in r.err, "an empty shard", r)
    # A case recorded twice (--repeat) counts the mean of its runs: c1 at
    # (10 + 90) / 2 = 50 is the longest; c4..c7 tie at 20 and go by id,
    # equal loads to the shard with fewer cases.
    rep = write("rep.jsonl", "".join(json.dumps(
        {"scene": "w", "case": c, "status": "pass", "duration_ns": ns}) + "\n"
        for c, ns in [("c1@1", 10), ("c1@2", 90), ("c2", 40), ("c3", 30),
                      ("c4", 20), ("c5", 20), ("c6", 20), ("c7", 20)]))
    got = split(target, 2, rep)
    check(got == [["w::c1", "w::c4", "w::c5", "w::c7"],
                  ["w::c2", "w::c3", "w::c6"]],
          "repeats folded to their mean: %r" % got)


@test
def shard_by__balances_a_skewed_suite_better_than_count():
    # A few large matmuls and many small adds, as one earlier run
    # recorded them.
    names = ["big%d" % i for i in range(5)] + ["add%02d" % i
                                               for i in range(40)]
    target = suite("skew", names, scene="s")
    durations = {"s::" + c: (1000000 if c.startswith("big") else 10000)
                 for c in names}
    durs = events("skew.jsonl", {k[3:]: v for k, v in durations.items()},
                  scene="s")
    ids = sorted(durations)
    total = sum(durations.values())
    for n in (2, 4, 8):
        parts = split(target, n, durs)
        lpt_max = max(sum(durations[c] for c in p) for p in parts)
        rr = [ids[k::n] for k in range(n)]  # round-robin by count
        rr_max = max(sum(durations[c] for c in p) for p in rr)
        hashed = [[c for c in ids if fnv1a64(c) % n == k] for k in range(n)]
        hash_max = max(sum(durations[c] for c in p) for p in hashed)
        check(lpt_max < rr_max and lpt_max <= hash_max,
              "N=%d: slowest shard %d (durations) vs %d (round-robin), %d "
              "(hash); ideal %d" % (n, lpt_max, rr_max, hash_max,
                                    total // n))
        print("# N=%d ideal %d durations %d round-robin %d hash %d" %
              (n, total // n, lpt_max, rr_max, hash_max))


@test
def shard_by__unreadable_and_foreign_files_are_usage_errors():
    target = suite("errs", ["c1", "c2"])
    nul = path("nul.json")
    with open(nul, "wb") as f:
        f.write(b'{"scene": "w", "case": "c1",\n "status": "pa\x00ss"}')
    cases = [
        (["--shard-by", "c1"], "--shard-by must be durations:FILE (got "
         "'c1')"),
        (["--shard-by", "durations:"], "--shard-by must be durations:FILE"),
        (["--shard-by", "durations:" + path("absent.json")],
         "--shard-by: cannot read '%s'" % path("absent.json")),
        (["--shard-by", "durations:" + write("cut.json",
                                             '{"cases": [\n  {"scene": ')],
         "%s:2:13: error: --shard-by: not a JSON report" % path("cut.json")),
        (["--shard-by", "durations:" + write("tap.txt", "TAP version 13\n")],
         "%s:1:1: error: --shard-by: not a JSON report" % path("tap.txt")),
        (["--shard-by", "durations:" + nul],
         "%s:2:15: error: --shard-by: not a JSON report" % nul),
        (["--shard-by", "durations:" + write("foreign.json",
                                             '{"name": "pkg"}\n')],
         "records no case durations"),
    ]
    for args, msg in cases:
        for cmd in (["list", "--shard", "0/2"], ["run", "--shard", "1/2"]):
            r = Run(cmd + args + [target])
            check(r.rc == 2 and msg in r.err and r.err.count("\n") == 1 and
                  r.out == "", "%r: %r" % (args, msg), r)


# --- scenetest merge -------------------------------------------------------

SHARDS = {}


def shard_reports():
    """The suite run unsharded and as 3 GitLab shards (CI_NODE_*), each
    leaving a JSON report and an --events file."""
    if not SHARDS:
        full = path("full.json")
        r = Run(["run", "--report", "json:" + full, "--log-level", "warning",
                 *NO_TORCH, SCENES])
        check(r.rc == 0, "unsharded run", r)
        SHARDS["full"] = json.load(open(full))
        SHARDS["json"], SHARDS["events"] = [], []
        for node in (1, 2, 3):
            j, e = path("shard%d.json" % node), path("shard%d.jsonl" % node)
            r = Run(["run", "--report", "json:" + j, "--events", e,
                     "--log-level", "warning", *NO_TORCH, SCENES],
                    env={"CI_NODE_INDEX": str(node), "CI_NODE_TOTAL": "3"})
            check(r.rc == 0, "shard %d" % node, r)
            SHARDS["json"].append(j)
            SHARDS["events"].append(e)
    return SHARDS


def outcomes(doc):
    return sorted((c["id"], c["status"]) for c in doc["cases"])


@test
def merge__json_shards_equal_the_unsharded_run_in_every_format():
    sh = shard_reports()
    full = sh["full"]
    out = {f: path("merged." + f) for f in ("json", "xml", "tap", "html",
                                            "txt")}
    r = Run(["merge", "--format", "text", "--output", out["txt"],
             "--report", "json:" + out["json"], "--report",
             "junit:" + out["xml"], "--report", "tap:" + out["tap"],
             "--report", "html:" + out["html"]] + sh["json"])
    check(r.rc == 0 and r.err == "", "merge exits 0 quietly", r)
    doc = json.load(open(out["json"]))
    validate_json(doc)
    check(outcomes(doc) == outcomes(full) and len(doc["cases"]) > 100,
          "merged cases = the unsharded run's (%d)" % len(doc["cases"]))
    check(doc["summary"] == full["summary"], "summary %r" % doc["summary"])
    check([i["path"] for i in doc["inputs"]] == sh["json"] and
          [i["shard"] for i in doc["inputs"]] ==
          [{"index": k, "total": 3, "source": "CI_NODE_INDEX/CI_NODE_TOTAL"}
           for k in range(3)] and
          all(i["record"] is not None and i["fingerprint"] is None
              for i in doc["inputs"]),
          "inputs: path, shard, record, fingerprint %r" % doc["inputs"])
    check(doc["run"]["shard"] is None and doc["run"]["argv"][1] == "merge",
          "the merged run section is merge's own")
    durs = {c["id"]: c["duration_ns"] for c in full["cases"]}
    merged_durs = {}
    for j in sh["json"]:
        merged_durs.update({c["id"]: c["duration_ns"]
                            for c in json.load(open(j))["cases"]})
    check({c["id"]: c["duration_ns"] for c in doc["cases"]} == merged_durs
          and set(merged_durs) == set(durs), "durations are the inputs'")
    # JUnit: the strict schema, and junitparser reads every case back.
    rc, err = xmllint(out["xml"])
    check(rc == 0, "merged JUnit validates: " + err)
    xml = junitparser.JUnitXml.fromfile(out["xml"])
    names = sorted("%s::%s" % (c.classname, c.name) for s in xml for c in s)
    check(names == sorted(c["id"] for c in full["cases"]),
          "junitparser reads the merged cases")
    # TAP: prove reads it as all passed.
    if shutil.which("prove"):
        p = subprocess.run(["prove", "-e", "cat", out["tap"]],
                           capture_output=True, text=True)
        check(p.returncode == 0 and "Result: PASS" in p.stdout,
              "prove passes the merged TAP:\n" + p.stdout + p.stderr)
    text = open(out["txt"]).read()
    check("%d cases: %d passed" % (len(durs), len(durs)) in text,
          "text summary:\n" + text[-300:])
    # HTML: Chromium renders the page with every case in it.
    if os.path.exists("/usr/bin/chromium"):
        p = subprocess.run(
            ["/usr/bin/chromium", "--headless", "--no-sandbox",
             "--disable-gpu", "--no-first-run", "--disable-sync",
             "--user-data-dir=" + tempfile.mkdtemp(dir=TMP), "--dump-dom",
             "file://" + out["html"]], capture_output=True, text=True,
            timeout=120)
        check(p.returncode == 0 and
              all(c["id"] in p.stdout for c in full["cases"]),
              "Chromium shows every merged case")


@test
def merge__the_gitlab_recipe_balanced_then_merged_equals_unsharded():
    # docs/ci.md's pipeline, locally: 4 GitLab shards as processes, each
    # balanced by the last run's JSON report, then merged.
    sh = shard_reports()
    last = path("full.json")
    parts = []
    for node in (1, 2, 3, 4):
        j = path("gl-%d.json" % node)
        r = Run(["run", "--shard-by", "durations:" + last, "--format", "tap",
                 "--report", "json:" + j, "--log-level", "warning",
                 *NO_TORCH, SCENES],
                env={"CI_NODE_INDEX": str(node), "CI_NODE_TOTAL": "4"})
        check(r.rc == 0, "balanced shard %d" % node, r)
        parts.append(j)
    merged = path("gl-merged.json")
    r = Run(["merge", "--format", "text", "--report", "junit:" +
             path("gl-merged.xml"), "--report", "json:" + merged] + parts)
    check(r.rc == 0, "merge", r)
    doc = json.load(open(merged))
    validate_json(doc)
    check(outcomes(doc) == outcomes(sh["full"]),
          "balanced shards merged = the unsharded run")
    check(xmllint(path("gl-merged.xml"))[0] == 0, "merged JUnit validates")


@test
def merge__events_inputs_and_json_out_on_stdout():
    sh = shard_reports()
    r = Run(["merge", "--format", "json"] + sh["events"])
    check(r.rc == 0, "merge of events files", r)
    doc = json.loads(r.out)
    validate_json(doc)
    check(outcomes(doc) == outcomes(sh["full"]), "same cases as unsharded")
    check(all(i["shard"] is None and i["record"] is None
              for i in doc["inputs"]), "events say no shard or record")
    # Mixed: a JSON report and events files.
    r = Run(["merge", "--format", "tap", sh["json"][0]] + sh["events"][1:])
    check(r.rc == 0 and r.out.count("\nok ") == len(sh["full"]["cases"]),
          "mixed inputs", r)


@test
def merge__a_case_twice_is_exit_2_naming_it_and_both_inputs():
    sh = shard_reports()
    a, b = sh["json"][0], sh["json"][1]
    case = json.load(open(a))["cases"][0]
    doc = json.load(open(b))
    doc["cases"].append(case)
    dup = write("dup.json", json.dumps(doc))
    r = Run(["merge", "--format", "json", a, dup])
    check(r.rc == 2 and r.out == "" and r.err ==
          "scenetest: error: merge: case '%s' (iteration 1) is in both '%s' "
          "and '%s'; merge the reports of disjoint shards, or of --repeat "
          "iterations\n" % (case["id"], a, dup), "duplicate refused", r)
    r = Run(["merge", sh["events"][0], sh["events"][0]])
    check(r.rc == 2 and "is in both '%s' and '%s'" % (sh["events"][0],
                                                       sh["events"][0])
          in r.err, "the same input twice", r)


@test
def merge__repeat_iterations_stay_apart():
    reps = []
    for k in (0, 1):
        j = path("rep%d.json" % k)
        r = Run(["run", "--repeat", "2", "--shard", "%d/2" % k,
                 "--report", "json:" + j, "--case", "vector_add",
                 "--log-level", "warning", *NO_TORCH, SCENES])
        check(r.rc == 0, "repeat shard %d" % k, r)
        reps.append(j)
    ids = [c["id"] for j in reps for c in json.load(open(j))["cases"]]
    r = Run(["merge", "--format", "json"] + reps)
    check(r.rc == 0, "merge of repeated runs", r)
    doc = json.loads(r.out)
    validate_json(doc)
    check(sorted(c["id"] for c in doc["cases"]) == sorted(ids) and
          any(i.endswith("@2") for i in ids) and doc["run"]["repeat"] == 2,
          "every iteration kept: %r" % sorted(ids))
    # An events file of a repeated run: a case's k-th line is iteration k.
    ev = path("rep.jsonl")
    Run(["run", "--repeat", "2", "--events", ev, "--case",
         "vector_add::small", "--log-level", "warning", *NO_TORCH, SCENES])
    r = Run(["merge", "--format", "json", ev])
    check(r.rc == 0 and [c["id"] for c in json.loads(r.out)["cases"]] ==
          ["vector_add::small@1", "vector_add::small@2"], "events repeats",
          r)


@test
def merge__exit_status_and_differing_records():
    sh = shard_reports()
    doc = json.load(open(sh["json"][1]))
    doc["cases"][0]["status"] = "fail"
    doc["cases"][0]["message"] = "mismatch"
    failed = write("failed.json", json.dumps(doc))
    r = Run(["merge", "--format", "json", sh["json"][0], failed])
    check(r.rc == 1 and json.loads(r.out)["summary"]["fail"] == 1,
          "a failed case in one input fails the merged run", r)
    doc = json.load(open(sh["json"][1]))
    doc["cases"][0]["status"] = "xfail"
    r = Run(["merge", "--format", "tap", sh["json"][0],
             write("xfail.json", json.dumps(doc))])
    check(r.rc == 0, "an expected failure passes", r)
    doc = json.load(open(sh["json"][2]))
    doc["autoload"][0]["raw"] = '"0"'
    doc["run"]["fingerprint"] = "abc"
    other = write("other.json", json.dumps(doc))
    r = Run(["merge", "--format", "json", sh["json"][0], other])
    check(r.rc == 0 and "scenetest: warning: merge: the autoload records of "
          "'%s' and '%s' differ" % (sh["json"][0], other) in r.err,
          "differing records warned, not refused", r)
    check(json.loads(r.out)["inputs"][1]["fingerprint"] == "abc",
          "the fingerprint listed")


@test
def merge__bad_inputs_are_exit_2_with_file_line_col():
    sh = shard_reports()
    nul = path("nul.jsonl")
    with open(nul, "wb") as f:
        f.write(b'{"scene": "a", "case": "b"}\n{"sce\x00ne": 1}\n')
    good = open(sh["json"][0]).read()
    cut = write("cut.json", good[:len(good) // 2])
    lines = good[:len(good) // 2].split("\n")
    cases = [
        ([cut], "%s:%d:" % (cut, len(lines))),
        ([write("junk.json", '{"a": 1}\n{"b": tru}\n')],
         "junk.json:2:7: error: merge: not JSON: expected a value"),
        ([nul], "nul.jsonl:2:6: error: merge: not JSON: expected"),
        ([write("deep.json", "[" * 100)], "deep.json:1:65: error: merge: "
         "not JSON: expected at most 64 nested"),
        ([write("nocase.jsonl", '{"scene": "a", "status": "pass"}\n')],
         "nocase.jsonl:1:1: error: merge: a case needs \"scene\" and "
         "\"case\""),
        ([write("status.jsonl", '\n  {"scene": "a", "case": "b", '
                '"status": "won", "duration_ns": 1}\n')],
         "status.jsonl:2:3: error: merge: a case needs \"status\""),
        ([write("dur.jsonl", '{"scene": "a", "case": "b", "status": '
                '"pass", "duration_ns": -1}\n')],
         "dur.jsonl:1:1: error: merge: a case needs \"duration_ns\""),
        ([write("ev.jsonl", '{"scene": "a", "case": "b", "status": "pass", '
                '"duration_ns": 1, "events": [{"name": "run"}]}\n')],
         "ev.jsonl:1:76: error: merge: an event needs \"status\""),
        ([write("nocases.json", '{"format_version": 1, "run": {}}')],
         "nocases.json:1:1: error: merge: a JSON report needs \"cases\""),
        ([write("scalar.jsonl", '3\n')],
         "scalar.jsonl:1:1: error: merge: expected a case object"),
        ([path("absent.json")], "merge: cannot read '%s'" %
         path("absent.json")),
        ([], "merge: no input"),
        (["--format", "xml", cut], "merge: --format must be text, tap"),
        (["--report", "text:" + path("x.txt"), cut],
         "merge: --report must be FORMAT:PATH"),
        (["--bogus", cut], "merge: unknown option '--bogus'"),
        (["--output", sh["json"][0], sh["json"][0]], "merge input"),
    ]
    for args, msg in cases:
        r = Run(["merge"] + args)
        check(r.rc == 2 and msg in r.err and r.err.count("\n") == 1 and
              r.out == "", "%r: %r" % (args, msg), r)


sys.exit(main(TMP))
