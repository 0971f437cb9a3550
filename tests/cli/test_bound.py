# SPDX-License-Identifier: MIT
"""`tolerance: bound` and `init: exact` through the CLI
(docs/scene-format.md#the-error-bound, #exact-inputs). Prints TAP 13.

- A difference over the bound (a kernel that flips one ulp on every
  second call, tests/plugins/flaky.c, with bound_factor 0.25) fails, and
  every format shows the element's bound: text, TAP, JUnit (checked by
  xmllint), JSON (checked against docs/report.schema.json) and HTML; the
  same ulp within bound_factor 1 passes; --dump-on-fail writes the
  bound's .npy.
- --golden-platform over a bound is the case's error.
- init: exact at the largest float32 matmul K for R = 8 (2^18, so K*R^2
  = 2^24): cpu, threads and golden agree bit for bit (the default
  tolerance is 0, which a golden that differs shows: rtol 0, atol 0).

Usage: test_bound.py SCENETEST SOURCE_ROOT FLAKY_PLUGIN
Needs Debian's python3-jsonschema (run it with /usr/bin/python3); without
it, it skips."""
import json
import os
import sys
import tempfile

try:
    import jsonschema  # noqa: F401 (taptest.validate_json uses it)
    import numpy
except ImportError as e:  # not Debian's python: nothing to check with
    print("1..0 # SKIP %s" % e)
    sys.exit(0)

EXE = os.path.abspath(sys.argv[1])
ROOT = os.path.abspath(sys.argv[2])
FLAKY = os.path.abspath(sys.argv[3])
TMP = tempfile.mkdtemp(prefix="scenetest-bound-")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import taptest  # noqa: E402
from taptest import Run, check, main, test  # noqa: E402

taptest.setup_reports(EXE, TMP, ROOT)

# out = a + b = [3, 4, 5, 6]; the flaky kernel flips the last bit of
# out[1] (4 becomes 4 + 2^-21) on its second call. The bound there:
# gamma(1) * (2 + 2) + 2^-24 * (4 + 4 + 2^-21), about 7.15e-7 >= 4.77e-7
# (one ulp of 4); with bound_factor 0.25, 1.79e-7 < 4.77e-7.
FL = taptest.write(TMP, "fl.yaml", """\
scene: fl
kernel: add
tolerance: bound
args:
  - {tensor: a, dtype: float32, shape: [4], init: {values: [1, 2, 3, 4]}}
  - {tensor: b, dtype: float32, shape: [4], init: {fill: 2.0}}
  - {tensor: out, dtype: float32, shape: [4], role: output}
cases:
  - name: within
  - name: over
    bound_factor: 0.25
""")
BOUND = "bound 1.78814e-07"
ROW = "4.76837e-07  1.78814e-07  2.66667"


def run(args):
    return Run(["run", "--no-default-plugins", "--plugin", FLAKY,
                "--platform", "flaky", "--rounds", "2"] + args)


@test
def bound_in_every_format():
    for fmt in ["text", "tap", "junit", "json", "html"]:
        out = os.path.join(TMP, "fl." + fmt)
        r = run(["--format", fmt, "--output", out, FL])
        check(r.rc == 1, "%s: the over case fails" % fmt, r)
        text = open(out).read()
        # HTML escapes nothing in these lines but splits the table.
        check(BOUND in text, "%s: no %r" % (fmt, BOUND), r)
        check("diff/bound" in text, "%s: no bound column" % fmt, r)
        if fmt != "html":
            check(ROW in text, "%s: no row %r" % (fmt, ROW), r)
        if fmt == "json":
            doc = json.loads(text)
            taptest.validate_json(doc)
            st = {c["scene"] + "::" + c["case"]: c["status"]
                  for c in doc["cases"]}
            check(st == {"fl::within": "pass", "fl::over": "fail"}, repr(st))
        if fmt == "junit":
            rc, err = taptest.xmllint(out)
            check(rc == 0, err, r)
        if fmt == "tap":
            check("ok 1 - fl::within" in text and
                  "not ok 2 - fl::over" in text, "verdicts", r)


@test
def dump_writes_the_bound():
    d = os.path.join(TMP, "dump")
    r = run(["--dump-on-fail", d, "--format", "json", FL])
    check(r.rc == 1, "fails", r)
    base = os.path.join(d, "fl", "over")
    b = numpy.load(os.path.join(base, "out.bound.npy"))
    a = numpy.load(os.path.join(base, "out.actual.npy")).astype(numpy.float64)
    e = numpy.load(os.path.join(base, "out.expected.npy")).astype(numpy.float64)
    u = 2.0 ** -24
    g = u / (1 - u)
    want = 0.25 * (g * numpy.array([3, 4, 5, 6]) +
                   u * (numpy.abs(a) + numpy.abs(e)))
    check(b.dtype == numpy.float64 and numpy.allclose(b, want, rtol=1e-15,
                                                      atol=0),
          "bound %r, want %r" % (b, want), r)
    check(abs(a[1] - e[1]) > b[1] and (abs(a - e) <= b)[[0, 2, 3]].all(),
          "only out[1] is over", r)


@test
def golden_platform_over_a_bound_is_an_error():
    r = Run(["run", "--no-default-plugins", "--golden-platform", "cpu",
             "--format", "json", FL])
    doc = json.loads(r.out)
    msg = {c["case"]: (c["status"], c["message"]) for c in doc["cases"]}
    check(msg["within"] == ("error", "golden: tolerance: bound needs the "
                            "reference golden; the golden platform is 'cpu'"),
          repr(msg), r)


# K = 2^18 and R = 8: K * R^2 = 2^24, float32's largest exact integer
# run; `exact` takes [-8, 8].
MM = taptest.write(TMP, "mm.yaml", """\
scene: mm
kernel: matmul
args:
  - {tensor: a, dtype: float32, shape: [2, 262144], init: INIT}
  - {tensor: b, dtype: float32, shape: [262144, 2], init: INIT}
  - {tensor: c, dtype: float32, shape: [2, 2], role: output}
cases:
  - name: k
""".replace("INIT", "exact"))


@test
def exact_matmul_is_bit_identical_on_cpu_threads_and_golden():
    for plat in ["cpu", "threads"]:
        out = os.path.join(TMP, "mm-%s.json" % plat)
        r = Run(["run", "--no-default-plugins", "--platform", plat,
                 "--format", "json", "--output", out, MM])
        check(r.rc == 0, plat, r)
        c = json.load(open(out))["cases"][0]
        check(c["status"] == "pass", plat, r)
    # Passing means equal to golden: the exact default tolerance is 0, as
    # the message of a golden that differs (sub) says.
    sub = taptest.write(TMP, "sub.yaml", """\
scene: sub
kernel: add
golden: sub
args:
  - {tensor: a, dtype: float32, shape: [2], init: exact}
  - {tensor: b, dtype: float32, shape: [2], init: exact}
  - {tensor: out, dtype: float32, shape: [2], role: output}
cases:
  - name: c
""")
    r = Run(["run", "--no-default-plugins", "--platform", "cpu",
             "--format", "json", sub])
    c = json.loads(r.out)["cases"][0]
    check(c["status"] == "fail" and "rtol 0, atol 0" in c["message"],
          c["message"], r)


if __name__ == "__main__":
    sys.exit(main(TMP))
