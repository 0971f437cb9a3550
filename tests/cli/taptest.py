# SPDX-License-Identifier: MIT
"""What the CLI test scripts share: running the binary, checks that fail
with the run's output, a test registry, the TAP 13 main loop, and the
helpers more than one script needs (writing files, reading --events and
TAP documents, prove, the report consumers).

Usage in a script:  from taptest import Run, check, test, main
                    ...  sys.exit(main(TMP))
A script that cannot run at all (a tool or module missing) ends with
sys.exit(skip_all(reason, TMP)): a TAP plan of 0 with the reason, exit 77
(a skip for meson's exitcode protocol too).
Run needs taptest.EXE set first (the scenetest binary); path() needs
taptest.TMP (the script's scratch directory), the report consumers
taptest.ROOT (the source root).

Why this runner and not pytest: each script is one meson test that prints
TAP with one line per check, so meson reports every check by name. pytest
would need the pytest-tap plugin for that (not installed here) and is only
in Debian's /usr/bin/python3, while most scripts run on any python3; and
the scripts' tests are plain functions that share state built at module
level, which this loop runs as they are. A hundred lines here keep the
scripts free of any dependency beyond the standard library."""
import json
import os
import re
import shutil
import subprocess
import tempfile
import traceback

EXE = None
TESTS = []
TMP = None  # the script's scratch directory, for path()
ROOT = None  # the source root, for the report consumers


class Run:
    """One run of the binary: rc, out, err; NO_COLOR set. With shell=True,
    args is a shell command line instead; other keywords (preexec_fn...)
    go to subprocess.run."""

    def __init__(self, args, env=None, cwd=None, stdout=subprocess.PIPE,
                 shell=False, timeout=120, **kw):
        e = dict(os.environ)
        e["NO_COLOR"] = "1"
        e.update(env or {})
        cmd = args if shell else [EXE] + args
        p = subprocess.run(cmd, stdout=stdout, stderr=subprocess.PIPE, env=e,
                           cwd=cwd, timeout=timeout, shell=shell, **kw)
        self.args = args
        self.rc = p.returncode
        self.out = (p.stdout or b"").decode("utf-8", "replace")
        self.err = p.stderr.decode("utf-8", "replace")

    def describe(self):
        return "args=%r rc=%d\nstdout:\n%s\nstderr:\n%s" % (
            self.args, self.rc, self.out, self.err)


class Failure(Exception):
    pass


# The vadd scene's three tensors: a + b into out, float32, shape [N].
VADD_ARGS = """\
args:
  - {tensor: a, dtype: float32, shape: [N], init: {uniform: [-1, 1]}}
  - {tensor: b, dtype: float32, shape: [N], init: {fill: 3.0}}
  - {tensor: out, dtype: float32, shape: [N], role: output}
"""


def vadd_scene(scene, cases, keys=""):
    """A float32 add scene named scene over VADD_ARGS; keys are extra
    scene-level lines after kernel, cases the text under cases:."""
    return "scene: %s\nkernel: add\n%s%scases:\n%s" % (scene, keys,
                                                        VADD_ARGS, cases)


# The smallest scene that passes on every platform: one float32 add
# case; the CLI scripts start from it.
VADD_SCENE = vadd_scene("vadd", "  - name: small\n    params: {N: 16}\n")


# The kernel adds, the golden subtracts: every case of the scene is a wrong
# result (fail).
MISMATCH_ARGS = """\
args:
  - {tensor: a, dtype: float32, shape: [4], init: ones}
  - {tensor: b, dtype: float32, shape: [4], init: {fill: 2.0}}
  - {tensor: out, dtype: float32, shape: [4], role: output}
"""


def mismatch_scene(scene, cases):
    """An add scene golden sub named scene over MISMATCH_ARGS; cases is the
    text under cases:."""
    return "scene: %s\nkernel: add\ngolden: sub\n%scases:\n%s" % (
        scene, MISMATCH_ARGS, cases)


# The test plugins that misbehave as a scalar says (misbehave, intruder):
# kernel scale over int32 x and y of 64 elements, the behaviour in B.
SCALE_ARGS = """\
args:
  - {tensor: x, dtype: int32, shape: [64], init: {randint: [-100, 100]}}
  - {tensor: y, dtype: int32, shape: [64], role: output}
  - {scalar: s, dtype: int32, value: B}
"""


def scale_scene(scene, cases, keys=""):
    """A scale scene named scene over SCALE_ARGS; keys are extra
    scene-level lines before kernel, cases the case lines under cases:
    (a line each)."""
    return "scene: %s\n%skernel: scale\n%scases:\n%s\n" % (
        scene, keys, SCALE_ARGS, "\n".join(cases))


def check(cond, what, run=None):
    if not cond:
        raise Failure(what + ("\n" + run.describe() if run else ""))


def run_exe(args, env=None, **kw):
    """Run(args, env, **kw) as the tuple (rc, out, err)."""
    r = Run(args, env=env, **kw)
    return r.rc, r.out, r.err


def path(name):
    """TMP/name."""
    return os.path.join(TMP, name)


def write(tmp, name, text):
    """Writes text to tmp/name (directories made) and returns the path."""
    path = os.path.join(tmp, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    return path


def writer(tmp):
    """write with tmp bound: write(name, text) -> the path."""
    return lambda name, text: write(tmp, name, text)


def events(path):
    """The objects of an --events file (JSON Lines), blank lines skipped."""
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def tap_points(tap):
    """(plan, points) of a TAP 13 document whose header is checked: each
    point a match of its line, groups (ok|not ok), number, name, rest."""
    lines = tap.splitlines()
    check(lines[:1] == ["TAP version 13"], "TAP header:\n" + tap)
    plan = int(re.match(r"1\.\.(\d+)", lines[1]).group(1))
    pts = [re.match(r"(ok|not ok) (\d+) - (\S+)(.*)", ln) for ln in lines
           if ln.startswith("ok ") or ln.startswith("not ok ")]
    return plan, pts


def prove_ok(tap, expect_bail=None):
    """prove reads the document without 'Parse errors' (the plan matches
    the points); with expect_bail True or False, 'Bailout called' is
    checked to be there or not. Returns prove's (rc, output)."""
    with tempfile.NamedTemporaryFile("w", suffix=".tap") as f:
        f.write(tap)
        f.flush()
        p = subprocess.run(["prove", "-e", "cat", f.name],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    text = p.stdout.decode("utf-8", "replace")
    check("Parse errors" not in text and
          (expect_bail is None or ("Bailout called" in text) == expect_bail),
          "prove reads the TAP:\n" + text + "\n" + tap)
    return p.returncode, text


def squash(seq):
    """Runs of load events of one phase become one entry (libtorch brings
    some 280 objects; their count is the system's business)."""
    out = []
    for s in seq:
        if not (s.startswith("load:") and out and out[-1] == s):
            out.append(s)
    return out


def sequence(case):
    """The case's events as names, each load event as load:PHASE."""
    return [e["name"] if e["name"] != "load" else "load:" + e["phase"]
            for e in case["events"]]


# --- The machine reports and CI distribution (test_reports, test_shards) ---

# The CI engines' variables: those of the machine a script runs on must not
# leak into its runs (clear_ci_vars).
CI_VARS = ["GTEST_SHARD_INDEX", "GTEST_TOTAL_SHARDS", "TEST_SHARD_INDEX",
           "TEST_TOTAL_SHARDS", "TEST_SHARD_STATUS_FILE", "CI_NODE_INDEX",
           "CI_NODE_TOTAL", "CIRCLE_NODE_INDEX", "CIRCLE_NODE_TOTAL",
           "BUILDKITE_PARALLEL_JOB", "BUILDKITE_PARALLEL_JOB_COUNT",
           "GTEST_OUTPUT", "XML_OUTPUT_FILE"]


def clear_ci_vars():
    for v in CI_VARS:
        os.environ.pop(v, None)


def setup_reports(exe, tmp, root):
    """What a script that checks the run's reports sets first: the binary,
    its scratch directory and the source root (for the report consumers),
    and no CI engine's variables of the machine it runs on leaking in."""
    global EXE, TMP, ROOT
    EXE, TMP, ROOT = exe, tmp, root
    clear_ci_vars()


_SCHEMA = []


def validate_json(doc):
    """Validates doc against ROOT/docs/report.schema.json (Draft 2020-12;
    jsonschema is Debian's, imported by the scripts that call this)."""
    import jsonschema
    if not _SCHEMA:
        with open(os.path.join(ROOT, "docs", "report.schema.json")) as f:
            _SCHEMA.append(json.load(f))
    jsonschema.Draft202012Validator(_SCHEMA[0]).validate(doc)


def xmllint(file):
    """xmllint against Jenkins' xUnit schema, ROOT/tests/data/junit-10.xsd:
    (rc, stderr)."""
    xsd = os.path.join(ROOT, "tests", "data", "junit-10.xsd")
    p = subprocess.run(["xmllint", "--noout", "--schema", xsd, file],
                       capture_output=True, text=True)
    return p.returncode, p.stderr


def fnv1a64(name):
    """FNV-1a, 64 bits, of the name's UTF-8: what --shard hashes."""
    h = 0xcbf29ce484222325
    for b in name.encode():
        h = ((h ^ b) * 0x100000001b3) & (2 ** 64 - 1)
    return h


def listed(args, env=None):
    """The non-empty lines of `list ARGS`, which must exit 0."""
    r = Run(["list"] + args, env=env)
    check(r.rc == 0, "list exit 0", r)
    return [l for l in r.out.splitlines() if l]


def run_json(args, env=None):
    """`run --format json` (warnings only on stderr): (Run, the document
    validated, or None when stdout is not one)."""
    r = Run(["run", "--format", "json", "--log-level", "warning"] + args,
            env=env)
    doc = json.loads(r.out) if r.out.startswith("{") else None
    if doc is not None:
        validate_json(doc)
    return r, doc


def test(fn):
    """Registers fn as a test: it passes by returning, fails by raising;
    returning "SKIP reason" skips it."""
    TESTS.append(fn)
    return fn


def skip_all(reason, tmp=None):
    """Prints a TAP plan that skips everything, removes tmp; returns 77,
    meson's skip for tests of protocol 'exitcode'. (A test of protocol
    'tap' skips with the same plan and exit 0: there any non-zero exit is
    an error.)"""
    print("TAP version 13")
    print("1..0 # SKIP %s" % reason)
    if tmp:
        shutil.rmtree(tmp, ignore_errors=True)
    return 77


def torch_or_skip(torch):
    """For the scripts that need the torch plugin (path torch): without it,
    the TAP skip plan and exit 0 (they are registered with protocol 'tap',
    where any non-zero exit is an error); with it, the variables the tests
    set themselves cleared from the environment."""
    if torch == "" or not os.path.exists(torch):
        skip_all("the torch plugin is not built (libtorch not found; "
                 "docs/torch.md)")
        raise SystemExit(0)
    for var in ("TORCH_DEVICE_BACKEND_AUTOLOAD", "SCENETEST_PLUGIN_PATH"):
        os.environ.pop(var, None)


def main(tmp):
    """Runs every registered test, prints TAP 13, removes tmp; returns the
    exit status (1 if any failed)."""
    print("TAP version 13")
    print("1..%d" % len(TESTS))
    failed = 0
    for i, fn in enumerate(TESTS, 1):
        name = fn.__name__
        try:
            res = fn()
        except Failure as e:
            failed += 1
            print("not ok %d - %s" % (i, name))
            for line in str(e).splitlines():
                print("# " + line)
            continue
        except Exception:  # a crash of the test itself
            failed += 1
            print("not ok %d - %s" % (i, name))
            for line in traceback.format_exc().splitlines():
                print("# " + line)
            continue
        if isinstance(res, str) and res.startswith("SKIP "):
            print("ok %d - %s # SKIP %s" % (i, name, res[5:]))
        else:
            print("ok %d - %s" % (i, name))
    shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failed else 0
