# SPDX-License-Identifier: MIT
"""Bounded memory at scale (issue 14, docs/scene-format.md#shapes-and-limits): a supervised run of 20,000
cases under `ulimit -v` LIMIT_KIB, the limit a 200,000-case run of the same
suite also fits in (measured by hand, docs/benchmarks.md). Prints TAP 13.

Why this limit. The suite is 64x64 float32 `add` cases (48 KiB of tensors
each), as bench/bench_scale.py writes it. A 200,000-case run peaks at about
220 MiB RSS (results, events and the loaded model grow with the case
count; tensors do not) and runs under 384 MiB of address space. A run
that kept each case's tensors would need 20,000 * 48 KiB = 940 MiB at
20,000 cases and fails here; so does one whose per-case footprint grows
more than about 15-fold (20,000 cases at 384 MiB is 19 KiB a case).

The limit is RLIMIT_AS set in the child before exec (preexec_fn), so the
harness and every process it forks (the default run is supervised)
inherit it: the whole run is bounded, not only the first process.

Plain builds only: the sanitizers reserve terabytes of shadow address
space, so under ASan/TSan the whole test is skipped (TAP `1..0 # SKIP`).

Usage: test_bounded_memory.py SCENETEST SANITIZE
"""

import os
import resource
import subprocess
import sys
import tempfile

EXE = os.path.abspath(sys.argv[1])
SANITIZED = len(sys.argv) > 2 and sys.argv[2] not in ("", "none")
TMP = tempfile.mkdtemp(prefix="scenetest-boundedmem-")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import taptest  # noqa: E402  (after sys.path)
from taptest import check, main, skip_all, test  # noqa: E402

LIMIT_KIB = 384 * 1024
CASES = 20000


def write_suite(path, n):
    """bench/bench_scale.py's suite: scenes of 1,000 cases in one file."""
    with open(path, "w") as f:
        left, k = n, 0
        while left > 0:
            m = min(1000, left)
            f.write("---\nscene: add_%d\nkernel: add\nargs:\n"
                    "  - {tensor: a, dtype: float32, shape: [N, N], "
                    "init: {uniform: [-1, 1]}}\n"
                    "  - {tensor: b, dtype: float32, shape: [N, N], "
                    "init: {uniform: [-1, 1]}}\n"
                    "  - {tensor: out, dtype: float32, shape: [N, N], "
                    "role: output}\ncases:\n" % k)
            for i in range(m):
                f.write("  - {name: c%d, params: {N: 64}}\n" % i)
            left -= m
            k += 1


def limited(limit_kib):
    def pre():
        b = limit_kib * 1024
        resource.setrlimit(resource.RLIMIT_AS, (b, b))
    return pre


def run_limited(args, limit_kib):
    env = dict(os.environ, NO_COLOR="1")
    p = subprocess.run([EXE] + args, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=env, timeout=600,
                       preexec_fn=limited(limit_kib))
    return p.returncode, p.stdout.decode(errors="replace"), \
        p.stderr.decode(errors="replace")


@test
def bounded_memory__20000_cases_under_the_200000_case_limit():
    path = os.path.join(TMP, "suite.yaml")
    write_suite(path, CASES)
    rc, out, err = run_limited(["run", "--log-level", "warning", "--format",
                                "tap", path], LIMIT_KIB)
    tail = "rc=%d\nstderr:\n%s" % (rc, err[-2000:])
    check(rc == 0, "exit 0 under ulimit -v %d\n%s" % (LIMIT_KIB, tail))
    oks = sum(1 for line in out.splitlines() if line.startswith("ok "))
    check(oks == CASES, "all %d cases ok (%d)\n%s" % (CASES, oks, tail))


@test
def bounded_memory__the_limit_binds():
    """The same limit machinery with a limit the run cannot fit in fails
    (so the limit is applied, and the test above can fail): 16 MiB of
    address space does not hold the harness and its libraries."""
    path = os.path.join(TMP, "suite.yaml")
    if not os.path.exists(path):
        write_suite(path, CASES)
    rc, out, err = run_limited(["run", "--log-level", "warning", "--format",
                                "tap", path], 16 * 1024)
    check(rc != 0, "a run under ulimit -v 16384 fails (rc=%d)" % rc)
    check(out.count("\nok ") < CASES, "and does not pass every case")


if __name__ == "__main__":
    if SANITIZED:
        sys.exit(0 if skip_all("the sanitizers reserve shadow address "
                               "space; RLIMIT_AS cannot bound it", TMP) == 77
                 else 1)
    sys.exit(main(TMP))
