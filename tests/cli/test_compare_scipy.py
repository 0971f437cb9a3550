# SPDX-License-Identifier: MIT
"""`scenetest compare` against SciPy and numpy on real logs (docs/cli.md#logs): two
runs of scenes/ with --log-file, then every row's p-value is recomputed
with SciPy's mannwhitneyu (the arguments docs/measuring.md#the-statistics names) and every median
with numpy.median from the raw log lines, the cold rule applied as docs/measuring.md#timing-what-one-log-says
states it. Needs Debian's python3-scipy and python3-numpy: run with
/usr/bin/python3; exit 77 (skip) without them, 0 pass, 1 fail.

Usage: /usr/bin/python3 test_compare_scipy.py PATH/TO/scenetest SCENES_DIR
"""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import taptest  # noqa: E402  (after sys.path)
from taptest import check, main, skip_all, test  # noqa: E402

try:
    import numpy
    from scipy.stats import mannwhitneyu
except ImportError:
    sys.exit(skip_all("needs python3-scipy and python3-numpy"))

EXE, SCENES = sys.argv[1], sys.argv[2]
# The example scenes outside scenes/torch/, whose golden needs the torch
# plugin.
SCENE_FILES = ["--ignore", "torch", SCENES]
TMP = tempfile.mkdtemp(prefix="scenetest-scipy-")
# A scene= or case= value is a bare word, or double-quoted and escaped
# (\\ \" \n \t \r \ooo) when it holds a space or such (docs/measuring.md).
NAME = r'("(?:[^"\\]|\\.)*"|\S+)'
LINE = re.compile(r"\[TIMING\] phase pid=(\d+) scene=" + NAME + " case=" +
                  NAME + r" name=(\S+) round=(\S+) dur_ns=(\d+) status=ok")
ESCAPES = {"n": b"\n", "t": b"\t", "r": b"\r", "\\": b"\\", '"': b'"'}


def unquote(v):
    """A name as the TIMING line prints it, decoded (octal escapes are
    bytes of the UTF-8 name)."""
    if not v.startswith('"'):
        return v
    out, body, i = bytearray(), v[1:-1], 0
    while i < len(body):
        if body[i] != "\\":
            out += body[i].encode()
            i += 1
        elif body[i + 1] in ESCAPES:
            out += ESCAPES[body[i + 1]]
            i += 2
        else:
            out.append(int(body[i + 1:i + 4], 8))
            i += 4
    return out.decode("utf-8", "replace")


def samples(path):
    """(scene, case, phase) -> durations; round 0 of the per-round phases
    dropped (one iteration per process here)."""
    out = {}
    with open(path) as f:
        for ln in f:
            m = LINE.search(ln)
            if not m:
                continue
            _, scene, case, phase, rnd, dur = m.groups()
            scene, case = unquote(scene), unquote(case)
            if phase in ("reset", "run", "compare") and rnd == "0":
                continue
            out.setdefault((scene, case, phase), []).append(int(dur))
    return out


@test
def compare__rows_agree_with_scipy_and_numpy():
    logs = []
    for side in ("base", "new"):
        log = os.path.join(TMP, side + ".log")
        env = dict(os.environ, TORCH_DEVICE_BACKEND_AUTOLOAD="0")
        r = subprocess.run([EXE, "run", "--format", "tap", "--rounds", "8",
                            "--no-default-plugins", "--log-file", log]
                           + SCENE_FILES, env=env,
                           stdout=subprocess.DEVNULL, timeout=300)
        check(r.returncode == 0, "the runs pass (rc %d)" % r.returncode)
        logs.append(log)
    r = subprocess.run([EXE, "compare", "--format", "json"] + logs,
                       stdout=subprocess.PIPE, timeout=60)
    doc = json.loads(r.stdout)
    a, b = samples(logs[0]), samples(logs[1])
    bad = []
    for row in doc["rows"]:
        k = (row["scene"], row["case"], row["phase"])
        x, y = a[k], b[k]
        p = mannwhitneyu(x, y, alternative="two-sided", use_continuity=True,
                         method="auto").pvalue
        if (len(x), len(y)) != (row["n_base"], row["n_new"]):
            bad.append("%r: n %d/%d, log has %d/%d" % (
                k, row["n_base"], row["n_new"], len(x), len(y)))
        if abs(p - row["p"]) > 1e-9:
            bad.append("%r: p %r, SciPy %r" % (k, row["p"], p))
        if (numpy.median(x) != row["median_base_ns"] or
                numpy.median(y) != row["median_new_ns"]):
            bad.append("%r: medians %r %r, numpy %r %r" % (
                k, row["median_base_ns"], row["median_new_ns"],
                numpy.median(x), numpy.median(y)))
    check(r.returncode == 0 and doc["rows"] and not bad,
          "%d rows agree with SciPy and numpy\n%s" % (
              len(doc["rows"]), "\n".join(bad[:20])))


if __name__ == "__main__":
    sys.exit(main(TMP))
