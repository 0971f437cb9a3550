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
    import jsonschema
    import junitparser
except ImportError as e:  # not Debian's python: nothing to check with
    print("1..0 # SKIP %s" % e)
    sys.exit(0)  # the 1..0 plan is meson's TAP skip

EXE = os.path.abspath(sys.argv[1])
ROOT = os.path.abspath(sys.argv[2])
SCHEMA = json.load(open(os.path.join(ROOT, "docs", "report.schema.json")))
XSD = os.path.join(ROOT, "tests", "data", "junit-10.xsd")
SCENES = os.path.join(ROOT, "scenes")
NO_TORCH = ["--ignore", "torch"]
TMP = tempfile.mkdtemp(prefix="scenetest-shards-")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import taptest  # noqa: E402
from taptest import Run, check, main, test  # noqa: E402

taptest.EXE = EXE
# The CI engines' variables of the machine this runs on must not leak in.
CI_VARS = ["GTEST_SHARD_INDEX", "GTEST_TOTAL_SHARDS", "TEST_SHARD_INDEX",
           "TEST_TOTAL_SHARDS", "TEST_SHARD_STATUS_FILE", "CI_NODE_INDEX",
           "CI_NODE_TOTAL", "CIRCLE_NODE_INDEX", "CIRCLE_NODE_TOTAL",
           "BUILDKITE_PARALLEL_JOB", "BUILDKITE_PARALLEL_JOB_COUNT",
           "GTEST_OUTPUT", "XML_OUTPUT_FILE"]
for v in CI_VARS:
    os.environ.pop(v, None)


def write(name, text):
    return taptest.write(TMP, name, text)


def path(name):
    return os.path.join(TMP, name)


def validate_json(doc):
    jsonschema.Draft202012Validator(SCHEMA).validate(doc)


def fnv1a64(name):
    h = 0xcbf29ce484222325
    for b in name.encode():
        h = ((h ^ b) * 0x100000001b3) & (2 ** 64 - 1)
    return h


def listed(args, env=None):
    r = Run(["list"] + args, env=env)
    check(r.rc == 0, "list exit 0", r)
    return [l for l in r.out.splitlines() if l]


def run_json(args, env=None):
    r = Run(["run", "--format", "json", "--log-level", "warning"] + args,
            env=env)
    doc = json.loads(r.out) if r.out.startswith("{") else None
    if doc is not None:
        validate_json(doc)
    return r, doc


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


sys.exit(main(TMP))
