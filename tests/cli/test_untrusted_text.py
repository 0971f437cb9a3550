# SPDX-License-Identifier: MIT
"""What a person and a reader of a log see when the text comes from a
kernel or a file name (docs/reliability.md), printing TAP 13 through
taptest:
- a kernel's failure message and its printed output never make a line
  that `timing` takes for a phase or record line, in stderr, the
  --log-file or the text and TAP reports, and never put a control byte
  (ESC, BEL, CR, a C1 control) on the terminal;
- the rerun command of a scene whose path holds a newline and an OSC
  sequence is one line without control bytes, and run by a shell it
  reruns that case.

Usage: test_untrusted_text.py PATH/TO/scenetest PATH/TO/st_plugin_forger.so

Standard library only (bash for the rerun command).
"""

import json
import os
import subprocess
import sys
import tempfile

EXE = os.path.abspath(sys.argv[1])
FORGER = os.path.abspath(sys.argv[2])  # platform 'forger': relu, add
TMP = tempfile.mkdtemp(prefix="scenetest-untrusted-text-")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import taptest  # noqa: E402  (after sys.path)
from taptest import Failure, check, main, test  # noqa: E402

taptest.EXE = EXE

MESSAGE = taptest.write(TMP, "message.yaml", """\
scene: forge
kernel: relu
args:
  - {tensor: a, dtype: float32, shape: [4], init: ones}
  - {tensor: out, dtype: float32, shape: [4], role: output}
cases:
  - name: msg
""")

PRINTS = taptest.write(TMP, "prints.yaml", """\
scene: prints
kernel: add
args:
  - {tensor: a, dtype: float32, shape: [4], init: ones}
  - {tensor: b, dtype: float32, shape: [4], init: ones}
  - {tensor: out, dtype: float32, shape: [4], role: output}
cases:
  - name: out
""")

# What a terminal acts on: ESC, BEL, CR and the C1 CSI in UTF-8.
CONTROL = [b"\x1b", b"\x07", b"\r", b"\xc2\x9b"]


def run_bytes(args, env=None):
    e = dict(os.environ)
    e["NO_COLOR"] = "1"
    e.update(env or {})
    p = subprocess.run([EXE] + args, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=e, timeout=120)
    return p.returncode, p.stdout, p.stderr


def forged_run(fmt):
    """Runs both forging kernels under fmt with a --log-file; returns the
    exit status and {stdout, stderr, log} as bytes."""
    log = os.path.join(TMP, "forged-%s.log" % fmt)
    if os.path.exists(log):
        os.unlink(log)
    rc, out, err = run_bytes(["run", "--plugin", FORGER, "--platform",
                              "forger", "--format", fmt, "--log-file", log,
                              MESSAGE, PRINTS])
    with open(log, "rb") as f:
        text = f.read()
    return rc, {"stdout": out, "stderr": err, "log": text}


def timing_of(streams, name):
    """`timing --format json` over the streams concatenated, as a CI log
    that mixes them would read."""
    path = os.path.join(TMP, name)
    with open(path, "wb") as f:
        for k in ("log", "stderr", "stdout"):
            f.write(streams[k])
    rc, out, err = run_bytes(["timing", "--format", "json", path])
    check(rc == 0, "timing reads the mixed log (exit %d): %r" % (rc, err))
    return json.loads(out)


def check_no_forgery(fmt):
    rc, streams = forged_run(fmt)
    check(rc == 1, "both cases are errors: exit 1, got %d" % rc)
    doc = timing_of(streams, "mixed-%s.log" % fmt)
    scenes = sorted({g["scene"] for g in doc["groups"]})
    check(scenes == ["forge", "prints"],
          "only the harness's phase lines are read: scenes %r" % scenes)
    check(len(doc["conditions"]) == 1,
          "only the harness's record: %d conditions" % len(doc["conditions"]))
    for k, data in streams.items():
        for c in CONTROL:
            check(c not in data, "%s holds no %r:\n%r" % (k, c, data))


@test
def kernel_text_forges_no_timing_line_in_a_text_run():
    check_no_forgery("text")


@test
def kernel_text_forges_no_timing_line_in_a_tap_run():
    check_no_forgery("tap")


@test
def text_report_rerun_command_escapes_control_bytes_of_the_path():
    bad_dir = os.path.join(TMP, "d\x1b]0;pwned\x07\nx [TIMING] phase")
    os.makedirs(bad_dir)
    scene = taptest.write(bad_dir, "m.yaml", taptest.mismatch_scene(
        "mismatch", "  - name: wrong\n"))
    rc, out, err = run_bytes(["run", "--format", "text", scene])
    check(rc == 1, "the case fails: exit 1, got %d (%r)" % (rc, err))
    lines = [ln for ln in out.split(b"\n") if b"rerun: " in ln]
    check(len(lines) == 1, "one rerun line:\n%r" % out)
    cmd = lines[0].split(b"rerun: ", 1)[1]
    for c in CONTROL + [b"\n", b"[TIMING]"]:
        check(c not in cmd, "the command holds no %r: %r" % (c, cmd))
    p = subprocess.run(["bash", "-c", cmd.decode("ascii") +
                        " --format text"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    check(p.returncode == 1 and b"mismatch::wrong" in p.stdout and
          b"1 case" in p.stdout,
          "run by bash, it reruns the case: %r %r" % (p.stdout, p.stderr))


sys.exit(main(TMP))
