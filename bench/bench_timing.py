# SPDX-License-Identifier: MIT
"""`scenetest timing` and `compare` on a log of 1,000,000 TIMING lines
(docs/measuring.md: both are near-linear in the lines of a log).

Writes two synthetic logs of the shape a run writes (a record per process,
per case the args, golden and record phases and 3 rounds of run and
compare, with --repeat's iter field) and times, best of 3:
- `wc -l LOG`: the baseline, a plain read of the same file in the same
  run on the same machine;
- `timing --format json LOG` at 1/8 of the lines and at all of them: the
  ratio of the two is 8 when the work is linear;
- `compare BASE NEW` at all of them.
Each is printed in seconds, wall and CPU (user + system, steadier on a
shared machine), and as a ratio to the baseline.

Usage: bench_timing.py PATH/TO/scenetest [LINES]   (a benchmark, run by
`meson test --benchmark`; not a timed unit test)
"""

import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

EXE = os.path.abspath(sys.argv[1])
LINES = int(sys.argv[2]) if len(sys.argv) > 2 else 1000000
PER_CASE = 9  # args, golden, record, 3 x (run, compare)
PROCS = 16


def write_log(path, lines, seed):
    cases = max(1, lines // PER_CASE)
    with open(path, "w") as f:
        for pid in range(1000, 1000 + PROCS):
            f.write("[TIMING] torch_backend_autoload setting=unset raw=- "
                    "effective=enabled torch_imported=false "
                    "torch_npu_loaded=false pid=%d\n" % pid)
        for c in range(cases):
            pid = 1000 + c % PROCS
            scene = "scene%d" % (c // 1000)
            kase = "case%d[N=%d]" % (c, c % 97)
            it = 1 + (c // (PROCS * 1000)) % 2
            head = "[TIMING] phase pid=%d scene=%s case=%s" % (pid, scene,
                                                               kase)
            for name in ("args", "golden", "record"):
                f.write("%s name=%s round=- dur_ns=%d status=ok iter=%d\n"
                        % (head, name, 1000 + (c * seed) % 777, it))
            for r in range(3):
                f.write("%s name=run round=%d dur_ns=%d status=ok iter=%d\n"
                        % (head, r, 5000 + (c * seed + r) % 1013, it))
                f.write("%s name=compare round=%d dur_ns=%d status=ok "
                        "iter=%d\n" % (head, r, 300 + (c + r) % 31, it))
    return cases * PER_CASE + PROCS


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def best_of(cmd, n=3):
    """The best wall time and the best CPU time (user + system) of n runs:
    on a shared machine the CPU time is the steadier figure."""
    best, best_cpu = float("inf"), float("inf")
    for _ in range(n):
        c0 = children_cpu()
        t0 = time.perf_counter()
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE)
        dt = time.perf_counter() - t0
        if p.returncode not in (0, 1):
            sys.exit("bench_timing: %r failed (%d): %s"
                     % (cmd, p.returncode, p.stderr.decode()[:500]))
        best = min(best, dt)
        best_cpu = min(best_cpu, children_cpu() - c0)
    return best, best_cpu


def main():
    tmp = tempfile.mkdtemp(prefix="scenetest-bench-timing-")
    try:
        small = os.path.join(tmp, "small.log")
        base = os.path.join(tmp, "base.log")
        new = os.path.join(tmp, "new.log")
        n_small = write_log(small, LINES // 8, 3)
        n = write_log(base, LINES, 3)
        write_log(new, LINES, 5)
        runs = [("baseline (wc -l, a plain read)", ["wc", "-l", base]),
                ("baseline at 1/8", ["wc", "-l", small]),
                ("timing", [EXE, "timing", "--format", "json", base]),
                ("timing at 1/8", [EXE, "timing", "--format", "json",
                                   small]),
                ("compare (two logs)", [EXE, "compare", "--format", "json",
                                        base, new])]
        got = {name: best_of(cmd) for name, cmd in runs}
        print("lines: %d (and %d at 1/8); %d bytes"
              % (n, n_small, os.path.getsize(base)))
        for k, what in enumerate(("wall", "CPU")):
            read = got["baseline (wc -l, a plain read)"][k]
            small_read = got["baseline at 1/8"][k]
            for name, _ in runs:
                v = got[name][k]
                ref = small_read if name.endswith("1/8") else read
                if name.startswith("baseline"):
                    print("%s %s: %.3f s" % (what, name, v))
                else:
                    print("%s %s: %.3f s = %.1f x the baseline" % (
                        what, name, v, v / ref if ref > 0 else float("inf")))
            print("%s timing, all lines over 1/8: %.2f (8 when linear)"
                  % (what, got["timing"][k] / got["timing at 1/8"][k]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


sys.exit(main())
