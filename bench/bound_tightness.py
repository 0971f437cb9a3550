#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""How tight is `tolerance: bound` (docs/scene-format.md#the-error-bound)?

For every case of the given scene files whose golden is a built-in op with
a bound (add, sub, mul, scale, axpy, matmul, reduce_sum, softmax), plus
float16 and bfloat16 matmul and softmax cases of its own, on each
platform: the largest |actual - expected| as a fraction of the bound
(bound_factor 1, atol 0), against the same difference as a fraction of
the case's hand-picked rtol/atol (atol + rtol * |expected|, tensor over
case over scene over the dtype's default). A fraction <= 1 passes.

How: each scene is rewritten with `tolerance: bound`, `bound_factor:
2^-40` and no rtol/atol, so that any difference fails the compare and
--dump-on-fail writes actual, expected and NAME.bound.npy (the bound at
that factor: times 2^40 it is the bound at factor 1). A case that still
passes has no difference (fraction 0). Cases the bound refuses (n*u >= 1,
integer outputs) are listed apart.

Usage: bound_tightness.py SCENETEST [--platform P]... SCENE.yaml...
Needs PyYAML and numpy (Debian's /usr/bin/python3 has both). Prints a
Markdown table."""
import argparse
import glob
import json
import math
import os
import re
import subprocess
import tempfile

import numpy
import yaml

FACTOR = 2.0 ** -40
BOUND_OPS = {"add", "sub", "mul", "scale", "axpy", "matmul", "reduce_sum",
             "softmax"}
DEFAULT_TOL = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5),
               "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7),
               "float8_e4m3fn": (0.125, 2.0 ** -6),
               "float8_e5m2": (0.25, 2.0 ** -14)}
FLOATS = set(DEFAULT_TOL)

# float16 and bfloat16 matmul and softmax, which scenes/ lacks; their
# hand-picked tolerance is the dtype's default.
EXTRA = """\
scene: x_matmul
kernel: matmul
args:
  - {tensor: a, dtype: T, shape: [32, K], init: {uniform: [-1, 1]}}
  - {tensor: b, dtype: T, shape: [K, 32], init: {uniform: [-1, 1]}}
  - {tensor: c, dtype: T, shape: [32, 32], role: output}
cases:
  - {name: f16_k16, params: {T: float16, K: 16}}
  - {name: f16_k256, params: {T: float16, K: 256}}
  - {name: bf16_k16, params: {T: bfloat16, K: 16}}
  - {name: bf16_k128, params: {T: bfloat16, K: 128}}
  - {name: f32_k1024, params: {T: float32, K: 1024}}
---
scene: x_softmax
kernel: softmax
args:
  - {tensor: x, dtype: T, shape: [32, 100], init: {normal: [0, 3]}}
  - {tensor: y, dtype: T, shape: [32, 100], role: output}
cases:
  - {name: f16, params: {T: float16}}
  - {name: bf16, params: {T: bfloat16}}
  - {name: f32, params: {T: float32}}
"""


def strip_tol(d):
    out = {k: v for k, v in d.items() if k not in ("rtol", "atol")}
    return out, d.get("rtol"), d.get("atol")


def rewrite(doc):
    """The bound-only scene, and per case the hand-picked (rtol, atol)
    sources: {case: (scene, case, {tensor: (rtol, atol)})}."""
    s, srtol, satol = strip_tol(doc)
    s["tolerance"] = "bound"
    s["bound_factor"] = FACTOR
    s.pop("expect", None)
    args, targs = [], {}
    for a in doc.get("args", []):
        a2, r, t = strip_tol(a)
        a2.pop("tolerance", None)
        a2.pop("bound_factor", None)
        args.append(a2)
        if "tensor" in a:
            targs[a["tensor"]] = (r, t, a)
    s["args"] = args
    cases, tols = [], {}
    for c in doc.get("cases", []):
        c2, r, t = strip_tol(c)
        for k in ("expect", "tolerance", "bound_factor"):
            c2.pop(k, None)
        cases.append(c2)
        tols[c["name"]] = (srtol, satol, r, t, targs)
    s["cases"] = cases
    return s, tols


def dtype_of(arg, params):
    dt = arg.get("dtype")
    return params.get(dt, dt)


def hand_tol(tols, name, tensor, dtype):
    srtol, satol, crtol, catol, targs = tols
    trtol, tatol, _ = targs[tensor]
    r, a = DEFAULT_TOL.get(dtype, (0, 0))
    for v in (srtol, crtol, trtol):
        if isinstance(v, (int, float)):
            r = v
    for v in (satol, catol, tatol):
        if isinstance(v, (int, float)):
            a = v
    return r, a


def load_f64(path_stem):
    for p in glob.glob(glob.escape(path_stem) + "*.npy"):
        return numpy.load(p).astype(numpy.float64)
    return None


def run_doc(exe, doc, platform, tmp, idx):
    s, tols = rewrite(doc)
    refused = {}
    while True:
        path = os.path.join(tmp, "s%d.yaml" % idx)
        with open(path, "w") as f:
            yaml.safe_dump(s, f, sort_keys=False)
        dump = os.path.join(tmp, "d%d-%s" % (idx, platform))
        rep = os.path.join(tmp, "r%d-%s.json" % (idx, platform))
        p = subprocess.run([exe, "run", "--platform", platform,
                            "--manual", "include", "--dump-on-fail", dump,
                            "--format", "json", "--output", rep, path],
                           capture_output=True, text=True)
        if p.returncode != 2:
            break
        named = set(re.findall(r"error: .* in case '([^']+)'", p.stderr))
        base = {n.split("[")[0] for n in named}
        if not base or not any(c["name"] in base for c in s["cases"]):
            return None, {"*": p.stderr.strip().splitlines()[0]}
        for c in s["cases"]:
            if c["name"] in base:
                refused[c["name"]] = [ln for ln in p.stderr.splitlines()
                                      if "'%s" % c["name"] in ln][0]
        s["cases"] = [c for c in s["cases"] if c["name"] not in base]
        if not s["cases"]:
            return [], refused
    rows = []
    for c in json.load(open(rep))["cases"]:
        name = c["case"]
        base = name.split("[")[0]
        kase = next(k for k in doc["cases"] if k["name"] == base)
        params = dict(kase.get("params", {}))
        m = re.findall(r"(\w+)=([^,\]]+)", name[len(base):])
        params.update({k: v for k, v in m})
        for a in doc["args"]:
            if a.get("role") not in ("output", "inout") or "tensor" not in a:
                continue
            dt = dtype_of(a, params)
            if dt not in FLOATS:
                continue
            t = a["tensor"]
            rtol, atol = hand_tol(tols[base], name, t, dt)
            row = {"scene": doc["scene"], "case": name, "tensor": t,
                   "dtype": dt, "platform": platform, "status": c["status"],
                   "rtol": rtol, "atol": atol, "bound": 0.0, "hand": 0.0}
            if c["status"] == "fail":
                d = os.path.join(dump, doc["scene"], name)
                act = load_f64(os.path.join(d, t + ".actual"))
                exp = load_f64(os.path.join(d, t + ".expected"))
                bnd = load_f64(os.path.join(d, t + ".bound"))
                if act is None or bnd is None:
                    row["status"] = "no dump"
                else:
                    diff = numpy.abs(act - exp)
                    with numpy.errstate(divide="ignore", invalid="ignore"):
                        fb = numpy.where(diff == 0, 0, diff / (bnd / FACTOR))
                        fh = numpy.where(diff == 0, 0,
                                         diff / (atol + rtol * numpy.abs(exp)))
                    row["bound"] = float(numpy.nanmax(fb))
                    row["hand"] = float(numpy.nanmax(fh))
                    row["maxdiff"] = float(diff.max())
            elif c["status"] != "pass":
                row["status"] = c["status"] + ": " + (c["message"] or "")[:80]
            rows.append(row)
    return rows, refused


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("exe")
    ap.add_argument("--platform", action="append")
    ap.add_argument("files", nargs="+")
    o = ap.parse_args()
    plats = o.platform or ["cpu", "threads"]
    docs = []
    for f in o.files:
        for d in yaml.safe_load_all(open(f)):
            if d:
                docs.append(d)
    docs += list(yaml.safe_load_all(EXTRA))
    tmp = tempfile.mkdtemp(prefix="bound-tightness-")
    print("| scene::case | tensor | dtype | platform | max diff / bound | "
          "max diff / (atol + rtol·\\|e\\|) | hand rtol, atol |")
    print("|---|---|---|---|---|---|---|")
    skipped = []
    for i, doc in enumerate(docs):
        op = doc.get("golden", doc.get("kernel"))
        if not isinstance(op, str) or op not in BOUND_OPS:
            skipped.append("%s: golden %r has no bound" % (doc.get("scene"),
                                                            op))
            continue
        for p in plats:
            rows, refused = run_doc(o.exe, doc, p, tmp, i)
            for k, v in refused.items():
                skipped.append("%s::%s on %s: %s" % (doc["scene"], k, p, v))
            for r in rows or []:
                if r["status"] in ("pass", "fail"):
                    fb, fh = "%.3g" % r["bound"], "%.3g" % r["hand"]
                else:
                    fb, fh = "— (%s)" % r["status"][:40], "—"
                print("| %s::%s | %s | %s | %s | %s | %s | %g, %g |" % (
                    r["scene"], r["case"], r["tensor"], r["dtype"], p, fb, fh,
                    r["rtol"], r["atol"]))
    if skipped:
        print("\nNot measured:\n")
        for s in skipped:
            print("- " + s)


if __name__ == "__main__":
    main()
