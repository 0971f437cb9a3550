#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench_scale: per-case cost, fixed cost and peak memory of `scenetest run`
as a suite grows (issue 14), and the same suite through the pytest+numpy
peer (bench/peer_scenes.py) as a ratio, alternated with ours.

    bench_scale.py SCENETEST [--sizes 200,2000,20000,200000] [--peer 200,2000]
                   [--reps 10]

The suite is N cases of a 64x64 float32 `add` (scenes of 1,000 cases each,
in one file), run as `scenetest run --log-level warning --format tap` with
the report sent to /dev/null. For each size: the best wall time of --reps
runs up to 2,000 cases (3 at 20,000, 1 beyond), the per-case cost (best(N) - best(1)) / (N - 1), the fixed cost
best(1), and the peak RSS of the run (getrusage of the child). The peer
runs only where /usr/bin/python3 has pytest and numpy; its runs alternate
with ours so that both see the same machine. Ratios, not absolute figures,
are what this measures: the machines are shared and noisy.

Exits 1 if a run fails (a broken harness must not look fast)."""
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PEER_PY = "/usr/bin/python3"


def write_suite(path, n):
    per_scene = 1000
    with open(path, "w") as f:
        left, k = n, 0
        while left > 0:
            m = min(per_scene, left)
            f.write("---\nscene: add_%d\nkernel: add\nargs:\n"
                    "  - {tensor: a, dtype: float32, shape: [N, N], init: {uniform: [-1, 1]}}\n"
                    "  - {tensor: b, dtype: float32, shape: [N, N], init: {uniform: [-1, 1]}}\n"
                    "  - {tensor: out, dtype: float32, shape: [N, N], role: output}\n"
                    "cases:\n" % k)
            for i in range(m):
                f.write("  - {name: c%d, params: {N: 64}}\n" % i)
            left -= m
            k += 1


def timed(argv, env=None):
    """Runs argv; returns (wall seconds, peak RSS in MB, exit status, the
    tail of its stderr). stderr goes to a file, not a pipe: a pipe read
    only after wait4 would block a child that writes more than it holds."""
    with tempfile.TemporaryFile() as errf:
        t0 = time.monotonic()
        p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=errf,
                             env=env)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.monotonic() - t0
        errf.seek(0)
        err = errf.read()[-4096:].decode(errors="replace")
    return wall, ru.ru_maxrss / 1024.0, os.waitstatus_to_exitcode(status), err


def have_peer():
    if not os.path.exists(PEER_PY):
        return False
    r = subprocess.run([PEER_PY, "-c", "import pytest, numpy"],
                       capture_output=True)
    return r.returncode == 0


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    exe = argv[1]
    sizes = [200, 2000, 20000, 200000]
    peer_sizes = [200, 2000]
    reps = 10
    args = argv[2:]
    while args:
        opt = args.pop(0)
        val = args.pop(0) if args else ""
        if opt == "--sizes":
            sizes = [int(x) for x in val.split(",") if x]
        elif opt == "--peer":
            peer_sizes = [int(x) for x in val.split(",") if x]
        elif opt == "--reps":
            reps = int(val)
        else:
            print("bench_scale: unknown option %s" % opt, file=sys.stderr)
            return 2
    env_sizes = os.environ.get("BENCH_SCALE_SIZES")
    if env_sizes:
        sizes = [int(x) for x in env_sizes.split(",") if x]
    peer = have_peer()
    tmp = tempfile.mkdtemp(prefix="bench_scale.")
    ours = {}
    theirs = {}
    rss = {}

    def run_ours(n, path):
        wall, mb, rc, err = timed([exe, "run", "--log-level", "warning",
                                   "--format", "tap", "--max-nodes",
                                   "100000000", path])
        if rc != 0:
            print("bench_scale: scenetest exited %d at %d cases: %s"
                  % (rc, n, err.strip()[-500:]), file=sys.stderr)
            sys.exit(1)
        ours[n] = min(ours.get(n, wall), wall)
        rss[n] = max(rss.get(n, 0.0), mb)

    def run_peer(n):
        env = dict(os.environ, PEER_CASES=str(n))
        wall, _, rc, err = timed([PEER_PY, "-m", "pytest", "-q", "-p",
                                  "no:cacheprovider",
                                  os.path.join(HERE, "peer_scenes.py")],
                                 env=env)
        if rc != 0:
            print("bench_scale: the peer failed at %d cases: %s"
                  % (n, err.strip()[-500:]), file=sys.stderr)
            sys.exit(1)
        theirs[n] = min(theirs.get(n, wall), wall)

    one = os.path.join(tmp, "one.yaml")
    write_suite(one, 1)
    for _ in range(max(reps, 5)):
        run_ours(1, one)
    for n in sizes:
        path = os.path.join(tmp, "suite_%d.yaml" % n)
        write_suite(path, n)
        # Alternated with the peer, best of each: reps runs up to 2,000
        # cases (a run of ours there is milliseconds, so the best of a few
        # is mostly the machine's noise), 3 at 20,000, 1 beyond.
        r = reps if n <= 2000 else 3 if n <= 20000 else 1
        for _ in range(r):
            run_ours(n, path)
            if peer and n in peer_sizes:
                run_peer(n)
        os.unlink(path)
    os.unlink(one)
    os.rmdir(tmp)

    fixed = ours[1]
    print("fixed cost (1 case): %.1f ms" % (fixed * 1e3))
    print("%9s %10s %12s %10s %12s %10s" % ("cases", "wall ms", "us/case",
                                           "peak MB", "peer s", "peer/ours"))
    per = {}
    for n in sizes:
        per[n] = (ours[n] - fixed) / (n - 1) * 1e6 if n > 1 else 0.0
        ps = "%.2f" % theirs[n] if n in theirs else "-"
        ratio = "%.1fx" % (theirs[n] / ours[n]) if n in theirs else "-"
        print("%9d %10.1f %12.1f %10.1f %12s %10s" % (n, ours[n] * 1e3, per[n],
                                                      rss[n], ps, ratio))
    if 2000 in per and 200000 in per and per[2000] > 0:
        print("per-case cost 200,000 / 2,000: %.2fx (target <= 1.2)"
              % (per[200000] / per[2000]))
    if 200000 in rss:
        print("peak RSS at 200,000 cases: %.0f MB (target <= 512)"
              % rss[200000])
    for n, target in ((200, 100), (2000, 50)):
        if n in theirs:
            print("peer/scenetest at %d cases: %.1fx (target >= %d)"
                  % (n, theirs[n] / ours[n], target))
    if not peer:
        print("peer not run: /usr/bin/python3 lacks pytest or numpy")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
