# SPDX-License-Identifier: MIT
"""Plugins and -j through the binary (SPEC §5, §6), printing TAP 13.

Usage: test_plugins.py SCENETEST PLUGIN_DIR EXAMPLE_PLUGIN SCENES_DIR

- the example plugin: add passes on `example`, copy passes through its
  `common` implementation, matmul errors with the exact message;
- lazy loading through the CLI, and the refusals (exit 2, path and reason);
- an init that fails: a WARNING, and the case still passes after repair;
- a kernel that prints to stdout cannot corrupt the TAP report;
- -j 2 and -j 1 give identical events (less timings and pids) on scenes/.
"""

import json
import os
import subprocess
import sys
import tempfile

EXE, PLUGINS, EXAMPLE, SCENES = sys.argv[1:5]
TMP = tempfile.mkdtemp(prefix="scenetest-plugins-")
results = []


def plugin(kind):
    return os.path.join(PLUGINS, "st_plugin_%s.so" % kind)


def write(name, text):
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def run(*args):
    p = subprocess.run([EXE] + list(args), capture_output=True, text=True,
                       errors="replace")
    return p.returncode, p.stdout, p.stderr


def check(name, cond, detail=""):
    results.append((name, bool(cond), detail))


OPS = write("ops.yaml", """\
scene: plug
kernel: add
args:
  - {tensor: a, dtype: float32, shape: [N], init: {uniform: [-1, 1]}}
  - {tensor: b, dtype: float32, shape: [N], init: {fill: 3.0}}
  - {tensor: out, dtype: float32, shape: [N], role: output}
cases:
  - {name: small, params: {N: 100}}
---
scene: plug_copy
kernel: copy
args:
  - {tensor: x, dtype: float64, shape: [7], init: {range: {start: 1, step: 2}}}
  - {tensor: y, dtype: float64, shape: [7], role: output}
cases:
  - {name: via_common}
---
scene: plug_matmul
kernel: matmul
args:
  - {tensor: a, dtype: float32, shape: [2, 3], init: ones}
  - {tensor: b, dtype: float32, shape: [3, 2], init: ones}
  - {tensor: c, dtype: float32, shape: [2, 2], role: output}
cases:
  - {name: missing}
""")


def tap_lines(out):
    return [l for l in out.splitlines() if l.startswith(("ok ", "not ok "))]


# The example plugin.
rc, out, err = run("run", "--format", "tap", "--log-level", "warning",
                   "--plugin", EXAMPLE, "--platform", "example", OPS)
lines = tap_lines(out)
check("example: exit 1 (matmul errors)", rc == 1, "rc=%d %s" % (rc, err))
check("example: add passes", "ok 1 - plug::small" in lines, out)
check("example: copy passes via common",
      "ok 2 - plug_copy::via_common" in lines, out)
check("example: matmul is not ok", "not ok 3 - plug_matmul::missing" in lines,
      out)
check("example: exact missing-implementation message",
      "BackendImplementationMissing: backend 'example' is missing required "
      "implementation: kernel for op 'matmul' (implemented by: cpu, "
      "reference, threads)" in out, out)

# Lazy: the same through lazy:PATH.
rc, out, err = run("run", "--format", "tap", "--log-level", "warning",
                   "--plugin", "lazy:" + EXAMPLE, "--platform", "example",
                   "--case", "plug", "--case", "plug_copy", OPS)
check("lazy example: add and copy pass", rc == 0 and
      len(tap_lines(out)) == 2, "rc=%d\n%s\n%s" % (rc, out, err))

# list and check accept plugins; an unknown platform lists the lazy one.
rc, out, err = run("list", "--plugin", "lazy:" + plugin("good"),
                   "--platform", "nowhere", OPS)
check("unknown platform lists lazy platforms", rc == 2 and
      "scenetest: error: unknown platform 'nowhere'; platforms: cpu, "
      "lazyplat, threads" in err, err)
rc, out, err = run("check", "--plugin", EXAMPLE, OPS)
check("check loads plugins", rc == 0, err)

# Refusals: exit 2 naming the path and the reason.
for kind, reason in [("badabi", "ABI version 99, this scenetest has ABI "
                                "version 2"),
                     ("abi1", "ABI version 1, this scenetest has ABI "
                              "version 2"),
                     ("noname", "module without a name"),
                     ("nodesc", "no 'scenetest_module' descriptor")]:
    rc, out, err = run("run", "--plugin", plugin(kind), OPS)
    check("refuses %s" % kind, rc == 2 and
          ("scenetest: error: plugin '%s': %s" %
           (plugin(kind), reason)) in err, err)
    check("refuses %s before running anything" % kind, out == "", out)
rc, out, err = run("run", "--plugin", os.path.join(TMP, "missing.so"), OPS)
check("refuses a missing file", rc == 2 and "No such file or directory" in
      err, err)
rc, out, err = run("run", "--plugin", "lazy:" + plugin("nonote"), OPS)
check("refuses a lazy plugin without a note", rc == 2 and
      "no platform declaration" in err, err)

# A failing init is a warning; the repair makes the case pass.
FLAKY = write("flaky.yaml", """\
scene: flaky_add
kernel: add
args:
  - {tensor: a, dtype: float32, shape: [5], init: ones}
  - {tensor: b, dtype: float32, shape: [5], init: ones}
  - {tensor: out, dtype: float32, shape: [5], role: output}
cases:
  - {name: repaired}
""")
rc, out, err = run("run", "--format", "tap", "--plugin", plugin("failinit"),
                   "--platform", "flaky", FLAKY)
check("failing init: warning names the plugin", "[WARNING] plugin '%s'" %
      plugin("failinit") in err and "device busy on first init" in err, err)
check("failing init: repaired, case passes", rc == 0 and
      "ok 1 - flaky_add::repaired" in out, out + err)

# A kernel that prints cannot corrupt the report.
rc, out, err = run("run", "--format", "tap", "--plugin", plugin("prints"),
                   "--platform", "printer", FLAKY)
check("printing kernel: passes", rc == 0, out + err)
check("printing kernel: stdout is only the report",
      out.splitlines() == ["TAP version 13", "1..1",
                           "ok 1 - flaky_add::repaired"], repr(out))
check("printing kernel: its output went to stderr",
      "ok 999 - printed by a kernel" in err and
      "kernel diagnostics on stderr" in err, err)

# Isolated, what the kernel printed is captured and kept in the events.
EVP = os.path.join(TMP, "printed.jsonl")
rc, out, err = run("run", "--format", "tap", "--isolate", "--events", EVP,
                   "--plugin", plugin("prints"), "--platform", "printer",
                   FLAKY)
with open(EVP) as f:
    objs = [json.loads(l) for l in f if l.strip()]
check("isolated printing kernel: output in the events",
      rc == 0 and len(objs) == 1 and
      "ok 999 - printed by a kernel" in (objs[0].get("output") or "") and
      "kernel diagnostics on stderr" in (objs[0].get("output") or ""),
      repr(objs))
check("isolated printing kernel: report intact",
      out.splitlines() == ["TAP version 13", "1..1",
                           "ok 1 - flaky_add::repaired"], repr(out))


# -j 2 gives the same events as -j 1, less timings and pids.
def events(jobs, *extra):
    path = os.path.join(TMP, "events-j%d%s.jsonl" % (jobs, "".join(extra)))
    rc, out, err = run("run", "--format", "tap", "--log-level", "warning",
                       "-j", str(jobs), "--events", path, *extra, SCENES)
    with open(path) as f:
        objs = [json.loads(l) for l in f if l.strip()]
    for o in objs:
        o.pop("pid", None)
        o.pop("duration_ns", None)
        for ev in o["events"]:
            ev.pop("start_ns", None)
            ev.pop("dur_ns", None)
            # Which run emits the process's record is not about -j.
            ev.pop("emitted", None)
    objs.sort(key=lambda o: (o["scene"], o["case"]))
    return rc, objs


rc1, e1 = events(1)
rc2, e2 = events(2)
check("-j 1 passes on scenes/", rc1 == 0 and len(e1) > 10, "rc=%d" % rc1)
check("-j 2 passes on scenes/", rc2 == 0, "rc=%d" % rc2)
check("-j 2 events equal -j 1 events", e1 == e2,
      "first difference: %s" % next(((a, b) for a, b in zip(e1, e2)
                                     if a != b), None))


def summary(objs):
    return [(o["scene"], o["case"], o["status"],
             [ev["name"] for ev in o["events"]]) for o in objs]


rc3, e3 = events(2, "--isolate")
check("--isolate -j 2 passes on scenes/", rc3 == 0, "rc=%d" % rc3)
check("--isolate -j 2 writes every case's events, as -j 1",
      summary(e3) == summary(e1),
      "first difference: %s" % next(((a, b) for a, b in
                                     zip(summary(e1), summary(e3))
                                     if a != b), None))

print("TAP version 13")
print("1..%d" % len(results))
for i, (name, ok, detail) in enumerate(results, 1):
    print("%s %d - %s" % ("ok" if ok else "not ok", i, name))
    if not ok:
        print("  ---")
        print("  message: %s" % json.dumps(detail[-2000:]))
        print("  ...")
