# SPDX-License-Identifier: MIT
"""The machine reports and CI distribution (docs/cli.md#junit, docs/cli.md#several-reports-and-the-ci-engines-report-variables), checked with
their real consumers: xmllint against Jenkins' xUnit schema
(tests/data/junit-10.xsd), junitparser, and a JSON Schema 2020-12
validator over docs/report.schema.json. Also sharding (hash, environment
variables of GoogleTest, Bazel and GitLab), --repeat, --shuffle,
--rerun-failed, --report, GTEST_OUTPUT, XML_OUTPUT_FILE and list --format
json. Prints TAP 13.

Usage: test_reports.py SCENETEST HOSTILE_PLUGIN SOURCE_ROOT
Needs Debian's python3-junitparser and python3-jsonschema (run it with
/usr/bin/python3) and xmllint; without them it skips (a 1..0 # SKIP plan)."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

try:
    import junitparser
    import jsonschema  # noqa: F401 (taptest.validate_json uses it)
except ImportError as e:  # not Debian's python: nothing to check with
    print("1..0 # SKIP %s" % e)
    sys.exit(0)  # the 1..0 plan is meson's TAP skip
if shutil.which("xmllint") is None:
    print("1..0 # SKIP xmllint not installed")
    sys.exit(0)  # the 1..0 plan is meson's TAP skip

EXE = os.path.abspath(sys.argv[1])
HOSTILE = os.path.abspath(sys.argv[2])
ROOT = os.path.abspath(sys.argv[3])
SCENES = os.path.join(ROOT, "scenes")
# scenes/torch/ computes its golden with the torch plugin (its own test,
# cli_torch): these runs leave it out.
NO_TORCH = ["--ignore", "torch"]
TMP = tempfile.mkdtemp(prefix="scenetest-reports-")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import taptest  # noqa: E402
from taptest import (Run, check, fnv1a64, listed, main, path,  # noqa: E402
                     run_json, test, validate_json, xmllint)

taptest.setup_reports(EXE, TMP, ROOT)


write = taptest.writer(TMP)


def spec_shuffle(items, seed):
    """docs/cli.md#repeat-and-shuffle's permutation, written from its text."""
    items = list(items)
    state = seed & (2 ** 64 - 1)
    mask = 2 ** 64 - 1

    def nxt():
        nonlocal state
        state = (state + 0x9e3779b97f4a7c15) & mask
        z = state
        z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & mask
        z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & mask
        return z ^ (z >> 31)
    for i in range(len(items) - 1, 0, -1):
        j = nxt() % (i + 1)
        items[i], items[j] = items[j], items[i]
    return items


# A suite with every outcome on the "hostile" platform (tests/plugins/
# hostile.c): pass with captured output, fail, skip, kernel error, crash,
# timeout, missing implementation.
SUITE = """\
scene: prints
kernel: add
args:
  - {tensor: a, dtype: float32, shape: [4], init: ones}
  - {tensor: b, dtype: float32, shape: [4], init: ones}
  - {tensor: out, dtype: float32, shape: [4], role: output}
cases:
  - name: pass
---
scene: mismatch
kernel: add
golden: sub
args:
  - {tensor: a, dtype: float32, shape: [4], init: {uniform: [-1, 1]}}
  - {tensor: b, dtype: float32, shape: [4], init: {fill: 2.0}}
  - {tensor: out, dtype: float32, shape: [4], role: output}
cases:
  - name: wrong
---
scene: declines
kernel: copy
args:
  - {tensor: x, dtype: float32, shape: [4]}
  - {tensor: y, dtype: float32, shape: [4], role: output}
cases:
  - name: skipped
---
scene: kernel_error
kernel: relu
args:
  - {tensor: x, dtype: float32, shape: [4]}
  - {tensor: y, dtype: float32, shape: [4], role: output}
cases:
  - name: fails
---
scene: crash
kernel: mul
args:
  - {tensor: a, dtype: float32, shape: [4], init: ones}
  - {tensor: b, dtype: float32, shape: [4], init: ones}
  - {tensor: out, dtype: float32, shape: [4], role: output}
cases:
  - name: segv
---
scene: hang
kernel: sub
args:
  - {tensor: a, dtype: float32, shape: [4], init: ones}
  - {tensor: b, dtype: float32, shape: [4], init: ones}
  - {tensor: out, dtype: float32, shape: [4], role: output}
cases:
  - name: forever
    timeout: 0.3
---
scene: missing
kernel: scale
args:
  - {tensor: x, dtype: float32, shape: [4], init: ones}
  - {tensor: y, dtype: float32, shape: [4], role: output}
  - {scalar: s, dtype: float32, value: 2}
cases:
  - name: impl
"""
# The scene file sits in a directory whose name holds bytes XML cannot
# carry as they are (invalid UTF-8, a control character, "]]>", markup).
HOSTILE_DIR = os.path.join(os.fsencode(TMP), b"dir \xff\x01]]><&\"")
os.makedirs(HOSTILE_DIR)
SUITE_F = os.path.join(HOSTILE_DIR, b"suite.yaml")
with open(SUITE_F, "w") as f:
    f.write(SUITE)
HOSTILE_ARGS = ["--plugin", HOSTILE, "--platform", "hostile", "--isolate",
                "--log-level", "warning"]
WANT = {  # case -> (junitparser result class or None, type)
    "prints::pass": (None, None),
    "mismatch::wrong": (junitparser.Failure, "mismatch"),
    "declines::skipped": (junitparser.Skipped, None),
    "kernel_error::fails": (junitparser.Error, "error"),
    "crash::segv": (junitparser.Error, "crash"),
    "hang::forever": (junitparser.Error, "timeout"),
    "missing::impl": (junitparser.Error, "BackendImplementationMissing"),
}


def run_bytes(args, env=None, cwd=None):
    """Like Run, for argument lists that hold bytes (the hostile path)."""
    e = dict(os.environ)
    e["NO_COLOR"] = "1"
    e.update(env or {})
    p = subprocess.run([os.fsencode(EXE), b"run"] + [
        a if isinstance(a, bytes) else a.encode() for a in args],
        capture_output=True, env=e, cwd=cwd, timeout=120)
    return p


def xml_expected(text):
    """What the JUnit writer makes of a string the --events JSON holds:
    characters XML 1.0 cannot carry become U+FFFD (the JSON writer already
    turned invalid UTF-8 into U+FFFD)."""
    out = []
    for ch in text:
        cp = ord(ch)
        ok = (cp in (9, 10, 13) or 0x20 <= cp <= 0xD7FF or
              0xE000 <= cp <= 0xFFFD or 0x10000 <= cp <= 0x10FFFF)
        out.append(ch if ok else "\ufffd")
    return "".join(out)


def suite_reports(extra=()):
    """Runs the hostile suite once with a JUnit report and --events;
    returns (process, junit path, events list)."""
    junit = path("suite.xml")
    events = path("suite.jsonl")
    p = run_bytes(HOSTILE_ARGS + ["--format", "tap", "--report",
                                  "junit:" + junit, "--events", events] +
                  list(extra) + [SUITE_F])
    with open(events) as f:
        ev = [json.loads(line) for line in f]
    return p, junit, ev


@test
def junit__every_outcome_validates_and_reads_back_without_loss():
    p, junit, events = suite_reports()
    check(p.returncode == 1, "exit 1: %r" % p.stderr)
    rc, err = xmllint(junit)
    check(rc == 0, "xmllint --schema junit-10.xsd: " + err)
    xml = junitparser.JUnitXml.fromfile(junit)
    by_event = {e["scene"] + "::" + e["case"]: e for e in events}
    seen = {}
    for suite in xml:
        for case in suite:
            name = case.classname + "::" + case.name
            seen[name] = case
            ev = by_event[name]
            cls, typ = WANT[name]
            res = case.result
            if cls is None:
                check(res == [], "%s passes: %r" % (name, res))
            else:
                check(len(res) == 1 and isinstance(res[0], cls),
                      "%s is a %s: %r" % (name, cls.__name__, res))
                check(res[0].message == xml_expected(ev["message"]),
                      "%s message without loss:\n%r\n%r" %
                      (name, res[0].message, ev["message"]))
                if typ is not None:
                    check(res[0].type == typ, "%s type %r" % (name,
                                                            res[0].type))
            check(abs(case.time - ev["duration_ns"] / 1e9) < 2e-6,
                  "%s time %r vs %d ns" % (name, case.time,
                                           ev["duration_ns"]))
            if ev["output"] is not None:
                check(case.system_err == xml_expected(ev["output"]),
                      "%s captured output:\n%r\n%r" %
                      (name, case.system_err, ev["output"]))
    check(sorted(seen) == sorted(WANT), "every case: %r" % sorted(seen))
    out = by_event["prints::pass"]["output"]
    check("stderr: bad" in out and "after-nul" in out and "]]>" in out,
          "the child's stdout and stderr, past a NUL byte: %r" % out)
    check(xml.tests == 7 and xml.failures == 1 and xml.errors == 4,
          "root counts %d/%d/%d" % (xml.tests, xml.failures, xml.errors))
    files = {s.name: s._elem.get("file") for s in xml}
    check(all("\ufffd]]><&\"" in f for f in files.values()),
          "file attribute carries the hostile path: %r" % files)


@test
def junit__properties_carry_the_run_and_the_autoload_record():
    env = {"TORCH_DEVICE_BACKEND_AUTOLOAD": "ye\"s\x01"}
    junit = path("props.xml")
    p = run_bytes(["--format", "junit", "--output", junit, "--seed", "7",
                   "--shard", "0/2", "--log-level", "timing", *NO_TORCH, SCENES],
                  env=env)
    check(p.returncode == 0, "exit 0: %r" % p.stderr)
    rc, err = xmllint(junit)
    check(rc == 0, "valid: " + err)
    rec = [l for l in p.stderr.decode().splitlines()
           if "torch_backend_autoload" in l]
    # One line per dispatching process (docs/measuring.md#when-it-is-taken, docs/reliability.md#the-process-model): supervised, each
    # child emits its own (scenes/ has level-3 cases, each in a fresh
    # child); all say the same but for the pid.
    check(len(rec) >= 1 and
          len({re.sub(r" pid=\d+$", "", l) for l in rec}) == 1,
          "one distinct record line: %r" % rec)
    fields = dict(kv.split("=", 1) for kv in re.findall(
        r'(\w+=(?:"(?:[^"\\]|\\.)*"|\S+))', rec[0].split(
            "torch_backend_autoload ", 1)[1]))
    xml = junitparser.JUnitXml.fromfile(junit)
    for suite in xml:
        props = {pr.name: pr.value for pr in suite.properties()}
        check(props["platform"] == "cpu" and props["seed"] == "7" and
              props["shard"] == "0/2", "run properties %r" % props)
        for k, v in fields.items():
            check(props.get("autoload." + k) == v,
                  "autoload.%s = %r, record says %r" %
                  (k, props.get("autoload." + k), v))
        check(props["autoload.distinct"] == "1", "one distinct record")
        check(props["autoload.setting"] == "invalid" and
              props["autoload.raw"] == '"ye\\"s\\001"', "raw escaped: %r" %
              props["autoload.raw"])


@test
def junit__golden_platform_property_is_the_scenes_or_the_flags():
    """The golden_platform property of a testsuite says which backend
    computed the scene's golden: the scene's golden_platform (it said
    `reference` whatever the scene said), or --golden-platform over it."""
    scenes = [write("gp/own.yaml", taptest.vadd_scene(
        "gp_own", "  - name: c\n    params: {N: 4}\n",
        "golden_platform: threads\n")),
        write("gp/plain.yaml", taptest.vadd_scene(
            "gp_plain", "  - name: c\n    params: {N: 4}\n"))]
    for extra, want in (([], {"gp_own": "threads", "gp_plain": "reference"}),
                        (["--golden-platform", "cpu"],
                         {"gp_own": "cpu", "gp_plain": "cpu"})):
        junit = path("gp.xml")
        p = run_bytes(["--format", "junit", "--output", junit, *NO_TORCH,
                       *extra, *scenes])
        check(p.returncode == 0, "exit 0: %r" % p.stderr)
        got = {suite.name: {pr.name: pr.value for pr in suite.properties()}
               ["golden_platform"]
               for suite in junitparser.JUnitXml.fromfile(junit)}
        check(got == want, "%r: golden_platform %r, want %r" %
              (extra, got, want))


@test
def junit__xunit1_adds_file_and_line_which_the_strict_schema_refuses():
    junit = path("x1.xml")
    r = Run(["run", "--format", "junit", "--junit-family", "xunit1",
             "--output", junit, "--case", "vector_add::small", *NO_TORCH, SCENES,
             "--log-level", "warning"])
    check(r.rc == 0, "exit 0", r)
    case = next(iter(next(iter(junitparser.JUnitXml.fromfile(junit)))))
    check(case._elem.get("file", "").endswith("elementwise.yaml") and
          case._elem.get("line") == "28", "file and line %r" %
          dict(case._elem.attrib))
    rc, _ = xmllint(junit)
    check(rc != 0, "junit-10.xsd refuses testcase file/line")
    r = Run(["run", "--junit-family", "xunit3", *NO_TORCH, SCENES])
    check(r.rc == 2 and "--junit-family must be xunit2 or xunit1" in r.err,
          "unknown family", r)


@test
def json__document_validates_against_the_schema():
    p = run_bytes(HOSTILE_ARGS + ["--format", "json", SUITE_F])
    check(p.returncode == 1, "exit 1")
    doc = json.loads(p.stdout)
    validate_json(doc)
    check(doc["summary"] == {"pass": 1, "fail": 1, "error": 4, "skip": 1,
                             "xfail": 0, "xpass": 0},
          "summary %r" % doc["summary"])
    check(doc["run"]["shard"] is None and doc["run"]["shuffle_seed"] is None
          and doc["run"]["repeat"] == 1, "run %r" % doc["run"])
    check([c["id"] for c in doc["cases"]] == list(WANT),
          "ids in order: %r" % [c["id"] for c in doc["cases"]])
    # Every isolated child emitted its own record; the conditions are the
    # same, so they are one distinct record.
    check(len(doc["autoload"]) == 1 and
          doc["autoload"][0]["modules"] == {"torch": False,
                                            "torch_npu": False},
          "distinct records %r" % doc["autoload"])
    check(doc["run"]["argv"][0] == EXE and "json" in doc["run"]["argv"],
          "argv")


@test
def json__watched_modules_appear_in_modules():
    r = Run(["run", "--format", "json", "--watch", "mylib=libm.so*",
             "--case", "vector_add::small", *NO_TORCH, SCENES, "--log-level", "null"])
    doc = json.loads(r.out)
    validate_json(doc)
    check(set(doc["autoload"][0]["modules"]) == {"torch", "torch_npu",
                                                 "mylib"},
          "modules %r" % doc["autoload"][0]["modules"], r)


# --- sharding -----------------------------------------------------------

def gen_suite(n_scenes, n_cases, name="gen"):
    text = []
    for s in range(n_scenes):
        text.append("scene: s%03d\nkernel: copy\nargs:\n"
                    "  - {tensor: x, dtype: float32, shape: [2]}\n"
                    "  - {tensor: y, dtype: float32, shape: [2], "
                    "role: output}\ncases:\n" %
                    s + "".join("  - name: c%03d\n" % c
                                for c in range(n_cases)))
    return write(name + ".yaml", "---\n".join(text))


@test
def shard__disjoint_and_complete_for_n_1_to_16():
    big = gen_suite(40, 25)  # 1000 cases
    for target in (SCENES, big):
        everything = listed([target])
        check(len(everything) == (1000 if target == big else
                                  len(everything)), "size")
        for n in range(1, 17):
            union = []
            for k in range(n):
                part = listed(["--shard", "%d/%d" % (k, n), target])
                # The hash is documented: another tool predicts it.
                check(all(fnv1a64(c) % n == k for c in part),
                      "shard %d/%d holds exactly its hash class" % (k, n))
                union += part
            check(sorted(union) == sorted(everything) and
                  len(union) == len(set(union)),
                  "shards of %d are disjoint and complete" % n)


@test
def shard__a_case_stays_when_cases_are_added():
    small = gen_suite(10, 10, "grow_a")
    grown = gen_suite(20, 15, "grow_b")
    for n in (3, 7):
        for k in range(n):
            a = set(listed(["--shard", "%d/%d" % (k, n), small]))
            b = set(listed(["--shard", "%d/%d" % (k, n), grown]))
            check(a <= b, "shard %d/%d keeps its cases when cases are added"
                  % (k, n))


@test
def shard__worked_example_of_the_spec():
    check(fnv1a64("vector_add::small") == 0x5e3ff868c8d241c5, "hash")
    for k in range(3):
        part = listed(["--shard", "%d/3" % k, "--case", "vector_add::small",
                       *NO_TORCH, SCENES])
        check((part == ["vector_add::small"]) == (k == 2),
              "vector_add::small is in shard 2 of 3 only (%d: %r)" %
              (k, part))


@test
def shard__every_environment_form():
    want = {c for c in listed([*NO_TORCH, SCENES]) if fnv1a64(c) % 3 == 1}
    forms = [
        ({"GTEST_SHARD_INDEX": "1", "GTEST_TOTAL_SHARDS": "3"},
         "GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS"),
        ({"TEST_SHARD_INDEX": "1", "TEST_TOTAL_SHARDS": "3"},
         "TEST_SHARD_INDEX/TEST_TOTAL_SHARDS"),
        ({"CI_NODE_INDEX": "2", "CI_NODE_TOTAL": "3"},
         "CI_NODE_INDEX/CI_NODE_TOTAL"),
        # Agreeing pairs: the first in the order of docs/cli.md#sharding names the source.
        ({"TEST_SHARD_INDEX": "1", "TEST_TOTAL_SHARDS": "3",
          "CI_NODE_INDEX": "2", "CI_NODE_TOTAL": "3"},
         "TEST_SHARD_INDEX/TEST_TOTAL_SHARDS"),
        ({"GTEST_SHARD_INDEX": "1", "GTEST_TOTAL_SHARDS": "3",
          "CI_NODE_TOTAL": "1"}, "GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS"),
    ]
    for env, source in forms:
        r, doc = run_json([*NO_TORCH, SCENES], env=env)
        check(r.rc == 0 and doc is not None, "exit 0 for %r" % env, r)
        got = {c["id"] for c in doc["cases"]}
        check(got == want, "shard 1/3 from %r: %r" % (env, sorted(got)), r)
        check(doc["run"]["shard"] == {"index": 1, "total": 3,
                                      "source": source},
              "shard metadata %r" % doc["run"]["shard"], r)
    # --shard agreeing with the environment is fine; --shard wins the
    # source.
    r, doc = run_json(["--shard", "1/3", *NO_TORCH, SCENES],
                      env={"GTEST_SHARD_INDEX": "1",
                           "GTEST_TOTAL_SHARDS": "3"})
    check(r.rc == 0 and doc["run"]["shard"]["source"] == "--shard", "agree",
          r)


@test
def shard__gitlab_total_of_one_is_unsharded():
    everything = set(listed([*NO_TORCH, SCENES]))
    for env in ({"CI_NODE_TOTAL": "1"},
                {"CI_NODE_TOTAL": "1", "CI_NODE_INDEX": "1"},
                {"CI_NODE_TOTAL": "4"}):
        r, doc = run_json([*NO_TORCH, SCENES], env=env)
        check(r.rc == 0 and {c["id"] for c in doc["cases"]} == everything
              and doc["run"]["shard"] is None, "unsharded for %r" % env, r)


@test
def shard__conflicts_and_malformed_values_are_usage_errors():
    cases = [
        ({"GTEST_SHARD_INDEX": "0"}, "GTEST_SHARD_INDEX is set but "
         "GTEST_TOTAL_SHARDS is not; set both or neither"),
        ({"GTEST_TOTAL_SHARDS": "2"}, "GTEST_TOTAL_SHARDS is set but "
         "GTEST_SHARD_INDEX is not; set both or neither"),
        ({"TEST_SHARD_INDEX": "0"}, "TEST_SHARD_INDEX is set but "
         "TEST_TOTAL_SHARDS is not"),
        ({"TEST_TOTAL_SHARDS": "2"}, "TEST_TOTAL_SHARDS is set but "
         "TEST_SHARD_INDEX is not"),
        ({"CI_NODE_INDEX": "1"}, "CI_NODE_INDEX is set but CI_NODE_TOTAL "
         "is not"),
        ({"GTEST_SHARD_INDEX": "x", "GTEST_TOTAL_SHARDS": "2"},
         "GTEST_SHARD_INDEX='x' and GTEST_TOTAL_SHARDS='2' do not name a "
         "shard"),
        ({"GTEST_SHARD_INDEX": "2", "GTEST_TOTAL_SHARDS": "2"},
         "GTEST_SHARD_INDEX='2' and GTEST_TOTAL_SHARDS='2' do not name"),
        ({"TEST_SHARD_INDEX": "0", "TEST_TOTAL_SHARDS": "0"},
         "TEST_SHARD_INDEX='0' and TEST_TOTAL_SHARDS='0' do not name"),
        ({"TEST_SHARD_INDEX": "0", "TEST_TOTAL_SHARDS": "65537"},
         "do not name a shard"),
        ({"TEST_SHARD_INDEX": "-1", "TEST_TOTAL_SHARDS": "2"},
         "do not name a shard"),
        ({"CI_NODE_INDEX": "0", "CI_NODE_TOTAL": "3"},
         "CI_NODE_INDEX='0' and CI_NODE_TOTAL='3' do not name a shard"),
        ({"CI_NODE_INDEX": "4", "CI_NODE_TOTAL": "3"}, "do not name"),
        ({"GTEST_SHARD_INDEX": "0", "GTEST_TOTAL_SHARDS": "2",
          "TEST_SHARD_INDEX": "1", "TEST_TOTAL_SHARDS": "2"},
         "GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS says shard 0/2 but "
         "TEST_SHARD_INDEX/TEST_TOTAL_SHARDS says shard 1/2"),
        ({"GTEST_SHARD_INDEX": "0", "GTEST_TOTAL_SHARDS": "2",
          "CI_NODE_INDEX": "1", "CI_NODE_TOTAL": "3"},
         "says shard 0/2 but CI_NODE_INDEX/CI_NODE_TOTAL says shard 0/3"),
    ]
    for env, msg in cases:
        r = Run(["run", *NO_TORCH, SCENES], env=env)
        check(r.rc == 2 and r.err.startswith("scenetest: error: ") and
              msg in r.err and r.err.count("\n") == 1,
              "usage error %r for %r" % (msg, env), r)
    r = Run(["run", "--shard", "0/2", *NO_TORCH, SCENES],
            env={"GTEST_SHARD_INDEX": "1", "GTEST_TOTAL_SHARDS": "2"})
    check(r.rc == 2 and "--shard says shard 0/2 but GTEST_SHARD_INDEX/"
          "GTEST_TOTAL_SHARDS says shard 1/2" in r.err, "option vs env", r)
    for bad in ("2", "1/1", "2/2", "a/b", "0/0", "0/65537", "-1/2", "0/2x",
                "/2", "0/"):
        r = Run(["run", "--shard", bad, *NO_TORCH, SCENES])
        check(r.rc == 2 and "--shard must be K/N with 0 <= K < N <= 65536 "
              "(got '%s')" % bad in r.err, "malformed --shard %r" % bad, r)


@test
def shard__bazel_status_file_is_touched():
    status = path("shard_status")
    r = Run(["run", "--log-level", "warning", *NO_TORCH, SCENES],
            env={"TEST_SHARD_INDEX": "0", "TEST_TOTAL_SHARDS": "2",
                 "TEST_SHARD_STATUS_FILE": status})
    check(r.rc == 0 and os.path.exists(status), "created", r)
    os.utime(status, (1000000000, 1000000000))
    r = Run(["run", "--log-level", "warning", *NO_TORCH, SCENES],
            env={"TEST_SHARD_INDEX": "1", "TEST_TOTAL_SHARDS": "2",
                 "TEST_SHARD_STATUS_FILE": status})
    check(r.rc == 0 and os.stat(status).st_mtime > 1000000000,
          "mtime updated", r)
    r = Run(["run", *NO_TORCH, SCENES], env={"TEST_SHARD_STATUS_FILE":
                                  path("no/such/dir/file")})
    check(r.rc == 2 and "cannot touch TEST_SHARD_STATUS_FILE" in r.err,
          "an untouchable status file is an error", r)


@test
def shard__empty_shard_exits_0_or_2_and_still_reports_its_shard():
    one = write("one.yaml", "scene: one\nkernel: copy\nargs:\n"
                "  - {tensor: x, dtype: float32, shape: [2]}\n"
                "  - {tensor: y, dtype: float32, shape: [2], role: output}\n"
                "cases:\n  - name: only\n")
    k = fnv1a64("one::only") % 2
    empty = "%d/2" % (1 - k)
    junit, js = path("empty.xml"), path("empty.json")
    r = Run(["run", "--shard", empty, "--format", "tap", "--report",
             "junit:" + junit, "--report", "json:" + js, one])
    check(r.rc == 0 and "no cases selected" in r.err and
          r.out == "TAP version 13\n1..0 # SKIP no cases selected\n",
          "exit 0, no cases selected", r)
    check(xmllint(junit)[0] == 0, "the empty JUnit report validates")
    props = {p.name: p.value for s in junitparser.JUnitXml.fromfile(junit)
             for p in s.properties()}
    check(props["shard"] == empty, "the empty report names its shard")
    doc = json.load(open(js))
    validate_json(doc)
    check(doc["cases"] == [] and doc["run"]["shard"]["total"] == 2, "json")
    r = Run(["run", "--shard", empty, "--require-cases", one])
    check(r.rc == 2, "--require-cases makes it 2", r)


@test
def headers__shard_and_shuffle_seed_in_every_report():
    r = Run(["run", "--format", "tap", "--shard", "1/3", "--shuffle-seed",
             "42", "--log-level", "warning", *NO_TORCH, SCENES])
    lines = r.out.splitlines()
    check(r.rc == 0 and lines[0] == "TAP version 13" and
          re.match(r"^1\.\.\d+$", lines[1]) and lines[2] == "# shard 1/3" and
          lines[3] == "# shuffle seed 42", "TAP header order", r)
    r = Run(["run", "--format", "text", "--shard", "1/3", "--shuffle",
             "--log-level", "warning", *NO_TORCH, SCENES])
    lines = r.out.splitlines()
    check(lines[0] == "shard 1/3" and re.match(r"^shuffle seed \d+$",
                                               lines[1]), "text header", r)
    seed = int(lines[1].split()[-1])
    check(seed < 2 ** 32, "the default seed is below 2^32")
    junit = path("hdr.xml")
    Run(["run", "--format", "junit", "--output", junit, "--shuffle-seed",
         "9", *NO_TORCH, SCENES, "--log-level", "warning"])
    props = {p.name: p.value for s in junitparser.JUnitXml.fromfile(junit)
             for p in s.properties()}
    check(props["shuffle_seed"] == "9", "JUnit property")


# --- repeat and shuffle ---------------------------------------------------

@test
def repeat__names_iterations_and_timing_lines():
    r = Run(["run", "--format", "tap", "--repeat", "3", "--case",
             "vector_add::small", "--case", "copy::f32", *NO_TORCH, SCENES])
    check(r.rc == 0, "exit 0", r)
    names = re.findall(r"^ok \d+ - (\S+)$", r.out, re.M)
    check(names == ["copy::f32@1", "vector_add::small@1", "copy::f32@2",
                    "vector_add::small@2", "copy::f32@3",
                    "vector_add::small@3"], "names %r" % names, r)
    iters = re.findall(r"\[TIMING\] phase .*case=small name=run .* "
                       r"iter=(\d+)$", r.err, re.M)
    check(iters == ["1", "2", "3"], "iter=K on phase lines %r" % iters, r)
    r, doc = run_json(["--repeat", "2", "--case", "copy::f32", *NO_TORCH, SCENES])
    check([(c["id"], c["iteration"]) for c in doc["cases"]] ==
          [("copy::f32@1", 1), ("copy::f32@2", 2)], "json ids", r)
    r = Run(["run", "--format", "tap", "--case", "copy::f32", *NO_TORCH, SCENES])
    check("ok 1 - copy::f32\n" in r.out and " iter=" not in r.err,
          "no suffix and no iter without --repeat", r)
    r = Run(["run", "--repeat", "0", *NO_TORCH, SCENES])
    check(r.rc == 2 and "--repeat must be at least 1" in r.err, "0", r)


MISMATCHES = """\
scene: mm
kernel: add
golden: sub
args:
  - {tensor: a, dtype: float32, shape: [8], init: {uniform: [-1, 1]}}
  - {tensor: b, dtype: float32, shape: [8], init: {normal: [0, 1]}}
  - {tensor: out, dtype: float32, shape: [8], role: output}
cases:
""" + "".join("  - name: c%d\n" % i for i in range(12))


@test
def shuffle__exactly_the_spec_permutation_and_same_results():
    f = write("mm.yaml", MISMATCHES)
    base = ["mm::c%d" % i for i in range(12)]
    r0, plain = run_json([f])
    check(r0.rc == 1, "the cases fail (with data-dependent messages)", r0)
    for seed in (0, 1, 42, 2 ** 32 - 1):
        r, doc = run_json(["--shuffle-seed", str(seed), "--repeat", "2", f])
        ids = [c["id"] for c in doc["cases"]]
        want = ["%s@1" % c for c in spec_shuffle(base, seed)] + \
               ["%s@2" % c for c in spec_shuffle(base, seed + 1)]
        check(ids == want, "seed %d order\n%r\n%r" % (seed, ids, want), r)
        check(doc["run"]["shuffle_seed"] == seed, "seed in json", r)
        msgs = {c["id"].split("@")[0]: c["message"] for c in doc["cases"]}
        check(msgs == {c["id"]: c["message"] for c in plain["cases"]},
              "messages (values of the generated data) do not depend on "
              "the order", r)
    # The same seed replays the same order.
    a = run_json(["--shuffle-seed", "5", f])[1]
    b = run_json(["--shuffle-seed", "5", "-j", "3", f])[1]
    check([c["id"] for c in a["cases"]] == [c["id"] for c in b["cases"]],
          "replayed under -j 3")


# --- rerun-failed ---------------------------------------------------------

RERUN_SCENE = taptest.mismatch_scene(
    "rr", "  - name: bad\n  - name: worse\n") + """\
---
scene: ok
kernel: add
args:
  - {tensor: a, dtype: float32, shape: [4], init: ones}
  - {tensor: b, dtype: float32, shape: [4], init: ones}
  - {tensor: out, dtype: float32, shape: [4], role: output}
cases:
  - name: fine
---
scene: er
kernel: no_such_op_anywhere
golden: copy
args:
  - {tensor: x, dtype: float32, shape: [4]}
  - {tensor: y, dtype: float32, shape: [4], role: output}
cases:
  - name: missing
"""


@test
def rerun_failed__from_events_json_and_junit():
    # With a plugin given, an op no built-in has is the plugin's to
    # provide: a case error when it runs (not a load error).
    f = write("rr.yaml", RERUN_SCENE)
    ev, js, xml = path("rr.jsonl"), path("rr.json"), path("rr.xml")
    r = Run(["run", "--plugin", HOSTILE, "--format", "tap", "--repeat", "2", "--events", ev,
             "--report", "json:" + js, "--report", "junit:" + xml,
             "--log-level", "warning", f])
    check(r.rc == 1, "exit 1", r)
    want = ["rr::bad", "rr::worse", "er::missing"]
    for report in (ev, js, xml):
        r2 = Run(["list", "--plugin", HOSTILE, "--rerun-failed", report, f])
        check(r2.rc == 0 and r2.out.splitlines() == want,
              "from %s: %r" % (os.path.basename(report), r2.out), r2)
        r3 = Run(["run", "--plugin", HOSTILE, "--format", "tap", "--rerun-failed", report,
                  "--case", "rr", "--log-level", "warning", f])
        check(r3.rc == 1 and re.findall(r"^not ok \d+ - (\S+)$", r3.out,
                                        re.M) == ["rr::bad", "rr::worse"],
              "intersected with --case", r3)
    # Nothing failed: nothing selected.
    ok = path("ok.jsonl")
    Run(["run", "--plugin", HOSTILE, "--case", "ok", "--events", ok, f])
    r = Run(["run", "--plugin", HOSTILE, "--rerun-failed", ok, f])
    check(r.rc == 0 and "no cases selected" in r.err, "exit 0", r)
    r = Run(["run", "--plugin", HOSTILE, "--rerun-failed", ok, "--require-cases", f])
    check(r.rc == 2, "--require-cases: 2", r)
    # Names that no longer exist warn.
    gone = write("gone.jsonl", json.dumps(
        {"scene": "rr", "case": "vanished", "status": "fail"}) + "\n" +
        json.dumps({"scene": "rr", "case": "bad", "status": "error"}) + "\n")
    r = Run(["run", "--plugin", HOSTILE, "--format", "tap", "--rerun-failed", gone, f])
    check(r.rc == 1 and "[WARNING] --rerun-failed: 'rr::vanished'" in r.err
          and "1..1\nnot ok 1 - rr::bad" in r.out, "warning", r)
    for bad, what in ((write("notreport.txt", "hello\n"), "is not an"),
                      (write("notjunit.xml", "<html><p>x</p></html>\n"),
                       "is not an"),
                      (write("cut.xml", "<testsuites><testcase name=\"a\""
                             " classname=\"b\"><failure/>"), "is not an"),
                      (write("badjson.jsonl", "{\"scene\": \n"), "is not an"),
                      (path("absent.json"), "cannot read")):
        r = Run(["run", "--plugin", HOSTILE, "--rerun-failed", bad, f])
        check(r.rc == 2 and what in r.err and
              r.err.startswith("scenetest: error: --rerun-failed"),
              "bad file %s" % bad, r)


# --- several reports ------------------------------------------------------

@test
def report__several_at_once_while_the_terminal_keeps_its_report():
    tap, junit, js = path("m.tap"), path("m.xml"), path("m.json")
    r = Run(["run", "--format", "text", "--report", "tap:" + tap,
             "--report", "junit:" + junit, "--report", "json:" + js,
             "--log-level", "warning", *NO_TORCH, SCENES])
    check(r.rc == 0 and re.search(r"^\d+ cases: ", r.out, re.M),
          "text on stdout", r)
    check(open(tap).read().startswith("TAP version 13\n"), "tap file")
    check(xmllint(junit)[0] == 0, "junit file")
    validate_json(json.load(open(js)))


@test
def report__gtest_output_and_xml_output_file():
    d = path("gt")
    os.makedirs(os.path.join(d, "out"), exist_ok=True)
    for value, where, fmt in (
            ("xml", os.path.join(d, "test_detail.xml"), "xml"),
            ("xml:out/", os.path.join(d, "out", "scenetest.xml"), "xml"),
            ("xml:named.xml", os.path.join(d, "named.xml"), "xml"),
            ("json:r.json", os.path.join(d, "r.json"), "json")):
        r = Run(["run", "--format", "tap", "--log-level", "warning",
                 *NO_TORCH, SCENES], env={"GTEST_OUTPUT": value}, cwd=d)
        check(r.rc == 0 and r.out.startswith("TAP version 13"),
              "tap still on stdout for %s" % value, r)
        check(os.path.exists(where), "GTEST_OUTPUT=%s writes %s" %
              (value, where), r)
        if fmt == "xml":
            check(xmllint(where)[0] == 0, "valid")
        else:
            validate_json(json.load(open(where)))
    bz = os.path.join(d, "bazel.xml")
    r = Run(["run", "--log-level", "warning", *NO_TORCH, SCENES],
            env={"XML_OUTPUT_FILE": bz})
    check(r.rc == 0 and xmllint(bz)[0] == 0, "XML_OUTPUT_FILE", r)
    # The same (format, file) from two sources is written once.
    r = Run(["run", "--log-level", "warning", "--report", "junit:" + bz,
             *NO_TORCH, SCENES], env={"XML_OUTPUT_FILE": bz, "GTEST_OUTPUT":
                           "xml:" + bz})
    check(r.rc == 0 and xmllint(bz)[0] == 0 and
          open(bz).read().count("<testsuites") == 1, "written once", r)
    r = Run(["run", *NO_TORCH, SCENES], env={"GTEST_OUTPUT": "yaml:x"})
    check(r.rc == 2 and "GTEST_OUTPUT='yaml:x': expected xml" in r.err,
          "unknown GTEST_OUTPUT", r)


@test
def report__aliasing_is_a_usage_error():
    x = path("alias.out")
    scene = os.path.join(SCENES, "elementwise.yaml")
    for args, env, msg in (
            (["--report", "junit:" + x, "--events", x], {},
             "is also the --events file"),
            (["--report", "tap:" + x, "--report", "junit:" + x], {},
             "are the same file"),
            (["--format", "tap", "--output", x, "--report", "junit:" + x],
             {}, "are the same file"),
            (["--report", "json:" + scene], {}, "is also the scene file"),
            ([], {"XML_OUTPUT_FILE": scene}, "is also the scene file"),
            (["--report", "json:" + SCENES], {}, "is also the input"),
            (["--events", x], {"GTEST_OUTPUT": "json:" + x},
             "is also the --events file"),
            (["--report", "junit:" + x, "--log-file", x], {},
             "is also the --log-file")):
        r = Run(["run"] + args + [*NO_TORCH, SCENES], env=env)
        check(r.rc == 2 and msg in r.err and r.err.count("\n") == 1,
              "%r: %s" % (args, msg), r)
    check(os.path.exists(os.path.join(SCENES, "elementwise.yaml")) and
          os.path.getsize(scene) > 100, "the scene survived")
    for spec, msg in (("xml:x", "unknown format 'xml'"),
                      ("junit", "must be FORMAT:PATH"),
                      ("junit:", "must be FORMAT:PATH")):
        r = Run(["run", "--report", spec, *NO_TORCH, SCENES])
        check(r.rc == 2 and msg in r.err, "--report %s" % spec, r)
    r = Run(["run", "--report", "junit:" + path("no/such/dir/r.xml"),
             *NO_TORCH, SCENES])
    check(r.rc == 2 and "cannot open --report '%s'" %
          path("no/such/dir/r.xml") in r.err, "unopenable report", r)
    for bad in ("-1", "x", "18446744073709551616"):
        r = Run(["run", "--shuffle-seed", bad, *NO_TORCH, SCENES])
        check(r.rc == 2 and "--shuffle-seed" in r.err, "seed %s" % bad, r)
    # Same format, same file, two spellings: once, not an error.
    r = Run(["run", "--format", "junit", "--output", x, "--report",
             "junit:" + os.path.join(TMP, ".", "alias.out"), *NO_TORCH, SCENES,
             "--log-level", "warning"])
    check(r.rc == 0 and xmllint(x)[0] == 0, "one file", r)


# --- list ---------------------------------------------------------------

@test
def list__json_and_manual_marks():
    f = write("lst.yaml", "scene: lst\nkernel: copy\nargs:\n"
              "  - {tensor: x, dtype: float32, shape: [2]}\n"
              "  - {tensor: y, dtype: float32, shape: [2], role: output}\n"
              "cases:\n  - name: a\n    platforms: [cpu]\n"
              "  - name: b\n    manual: true\n"
              "  - name: c\n    manual: [threads]\n")
    r = Run(["list", "--format", "json", "--manual", "include", f])
    doc = json.loads(r.out)
    check(doc == [
        {"scene": "lst", "case": "a", "file": f, "line": 7,
         "platforms": ["cpu"], "tags": [], "manual": False},
        {"scene": "lst", "case": "b", "file": f, "line": 9,
         "platforms": None, "tags": [], "manual": True},
        {"scene": "lst", "case": "c", "file": f, "line": 11,
         "platforms": None, "tags": [],
         "manual": ["threads"]}], "json %r" % doc, r)
    r = Run(["list", "--manual", "include", f])
    check(r.out == "lst::a\nlst::b  (manual)\nlst::c\n", "text marks", r)
    r = Run(["list", "--manual", "include", "--platform", "threads", f])
    check(r.out == "lst::b  (manual)\nlst::c  (manual)\n",
          "manual on threads", r)
    r = Run(["list", "--format", "tap", f])
    check(r.rc == 2 and "list: --format must be text or json" in r.err,
          "list formats", r)


@test
def expect_fail__xfail_and_xpass_in_junit_json_and_rerun():
    f = write("xf.yaml", "scene: xf\nkernel: add\ngolden: sub\nexpect: fail\n"
              "args:\n"
              "  - {tensor: a, dtype: float32, shape: [4], init: ones}\n"
              "  - {tensor: b, dtype: float32, shape: [4], init: ones}\n"
              "  - {tensor: out, dtype: float32, shape: [4], role: output}\n"
              "---\nscene: xp\nkernel: add\nexpect: fail\nargs:\n"
              "  - {tensor: a, dtype: float32, shape: [4], init: ones}\n"
              "  - {tensor: b, dtype: float32, shape: [4], init: ones}\n"
              "  - {tensor: out, dtype: float32, shape: [4], role: output}\n"
              "cases:\n  - name: passes\n")
    f = write("xf.yaml", open(f).read().replace(
        "role: output}\n---", "role: output}\ncases:\n  - name: fails\n---"))
    junit, js = path("xf.xml"), path("xf.json")
    r = Run(["run", "--report", "junit:" + junit, "--report", "json:" + js,
             "--log-level", "warning", f])
    check(r.rc == 1, "xpass fails the run", r)
    check(xmllint(junit)[0] == 0, "valid: " + xmllint(junit)[1])
    res = {c.classname: c.result for s in junitparser.JUnitXml.fromfile(junit)
           for c in s}
    check(isinstance(res["xf"][0], junitparser.Skipped) and
          res["xf"][0].type == "xfail" and
          res["xf"][0].message.startswith("expected failure: "),
          "xfail is <skipped type=xfail>: %r" % res["xf"])
    check(isinstance(res["xp"][0], junitparser.Failure) and
          res["xp"][0].type == "xpass", "xpass is <failure type=xpass>")
    doc = json.load(open(js))
    validate_json(doc)
    check(doc["summary"]["xfail"] == 1 and doc["summary"]["xpass"] == 1,
          "summary %r" % doc["summary"])
    for report in (junit, js):
        r = Run(["list", "--rerun-failed", report, f])
        check(r.out == "xp::passes\n", "rerun-failed takes xpass, not "
              "xfail: %r" % r.out, r)


@test
def help__names_the_ci_options():
    r = Run(["--help"])
    for opt in ("--shard K/N", "--rerun-failed FILE", "--repeat N",
                "--shuffle ", "--shuffle-seed S", "--report FMT:PATH",
                "--junit-family F", "text|tap|junit|json|html", "GTEST_OUTPUT"):
        check(opt in r.out, "--help names %r" % opt, r)


# --- the GitLab demonstration ---------------------------------------------

@test
def gitlab__three_shards_merge_into_the_unsharded_suite():
    full = path("full.xml")
    Run(["run", "--format", "junit", "--output", full, "--log-level",
         "warning", *NO_TORCH, SCENES])
    merged = junitparser.JUnitXml()
    for node in (1, 2, 3):
        part = path("shard%d.xml" % node)
        r = Run(["run", "--report", "junit:" + part, "--log-level",
                 "warning", *NO_TORCH, SCENES],
                env={"CI_NODE_INDEX": str(node), "CI_NODE_TOTAL": "3"})
        check(r.rc == 0 and xmllint(part)[0] == 0, "shard %d" % node, r)
        merged += junitparser.JUnitXml.fromfile(part)

    def names(xml):
        return sorted((c.classname, c.name) for s in xml for c in s)
    want = names(junitparser.JUnitXml.fromfile(full))
    check(names(merged) == want and len(want) > 10,
          "merged shards = unsharded run (%d cases)" % len(want))


sys.exit(main(TMP))
