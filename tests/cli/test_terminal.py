# SPDX-License-Identifier: MIT
"""The text report on a terminal (docs/cli.md#text, issue 11): log lines print above
a progress line that stays the last line on the screen, the autoload record
is shown in words, and NO_COLOR / TERM=dumb give no escape bytes.

Usage: test_terminal.py PATH/TO/scenetest PATH/TO/st_plugin_waits.so

The screen is tmux's (Debian's tmux): the run is held with a case in flight
by a kernel that blocks on a FIFO until the test writes to it, and the test
reads the screen with `tmux capture-pane` in a bounded poll. The raw bytes
are read from a pseudo-terminal the test opens itself (pty). Prints TAP
lines for a reader; meson reads the exit status (protocol exitcode): 0 all
passed, 1 a failure, 77 skipped (no tmux).
"""

import fcntl
import os
import pty
import re
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import termios
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import taptest  # noqa: E402  (after sys.path)
from taptest import Failure, check, main, skip_all, test  # noqa: E402

EXE = os.path.abspath(sys.argv[1])
WAITS = os.path.abspath(sys.argv[2])  # platform 'waiter'
TMP = tempfile.mkdtemp(prefix="scenetest-term-")
FIFO = os.path.join(TMP, "release")
SOCK = "scenetest-%d" % os.getpid()
# Longer than the pane is wide: its progress line must be clipped.
TWO = "two_" + "x" * 66
PROGRESS2 = ("[2/3] w::" + TWO)[:59]

SCENE = """\
scene: w
kernel: add
args:
  - {tensor: a, dtype: float32, shape: [N], init: ones}
  - {tensor: b, dtype: float32, shape: [N], init: ones}
  - {tensor: out, dtype: float32, shape: [N], role: output}
cases:
  - {name: one, params: {N: 8}}
  - {name: %s, params: {N: 8}}
  - {name: three, params: {N: 8}}
"""


def tmux(*args):
    return subprocess.run(["tmux", "-L", SOCK, "-f", os.devnull] +
                          list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=30)


def screen(joined=False):
    """The visible screen, one string per row (trailing blanks dropped);
    joined: wrapped lines joined back into one."""
    r = tmux("capture-pane", "-p", "-t", "t", *(["-J"] if joined else []))
    return [ln.rstrip() for ln in r.stdout.decode("utf-8", "replace")
            .split("\n")]


def poll(cond, what, timeout=30.0):
    """Bounded poll of the screen: returns it once cond(rows) holds."""
    end = time.monotonic() + timeout
    while True:
        rows = screen()
        if cond(rows):
            return rows
        if time.monotonic() > end:
            raise Failure("timed out waiting for %s; screen:\n%s"
                          % (what, "\n".join(rows)))
        time.sleep(0.02)


# The test's end of the FIFO, open for the whole test (O_RDWR does not
# block on Linux): bytes written wait in the pipe for the next kernel call,
# and a kernel call finding it empty blocks.
GATE = None


def release(n=1):
    """Lets n kernel calls go on, now or when they come."""
    os.write(GATE, b"x" * n)


def last_nonempty(rows):
    rows = [r for r in rows if r.strip()]
    return rows[-1] if rows else ""


def progress_line_stays_at_the_bottom(scene):
    # SCENETEST_LOG_LEVEL=timing: a level set explicitly shows the TIMING
    # lines at a terminal (docs/cli.md, the terminal rule).
    cmd = ("env TERM=xterm NO_COLOR=1 SCENETEST_LOG_LEVEL=timing "
           "ST_TEST_WAIT_FIFO=%s %s run --plugin "
           "%s --platform waiter --skip-golden %s; echo EXIT=$?"
           % (FIFO, EXE, WAITS, scene))
    # 60 columns: the TIMING lines (about 100) wrap, the progress line is
    # clipped.
    r = tmux("new-session", "-d", "-s", "t", "-x", "60", "-y", "30", cmd)
    check(r.returncode == 0, "tmux starts: %r" % r.stderr)
    try:
        tmux("set-option", "-t", "t", "remain-on-exit", "on")
        release()  # case one's run
        rows = poll(lambda rs: last_nonempty(rs).startswith("[2/3] w::two"),
                    "case two in flight")
        text = "\n".join(rows)
        logical = screen(joined=True)
        check("autoload: TORCH_DEVICE_BACKEND_AUTOLOAD" in text,
              "the record in words:\n" + text)
        check("PASS  w::one" in text, "case one's verdict:\n" + text)
        bottom = [i for i, ln in enumerate(rows) if ln.strip()][-1]
        above = "\n".join(rows[:bottom])
        check("[TIMING] phase" in above and "name=record" in above,
              "log lines above the progress line:\n" + text)
        check(rows[bottom] == PROGRESS2, "the progress line alone on the "
              "last line, clipped to 59 of 60 columns:\n" + text)
        check(text.count("[1/3]") == 0 and text.count("[2/3]") == 1,
              "one progress line on screen:\n" + text)
        # In order: case one's verdict, case two's phase lines, then the
        # progress line last.
        order = ["PASS  w::one", "case=%s name=args" % TWO,
                 "case=%s name=record" % TWO]
        at = [next((i for i, ln in enumerate(logical) if o in ln), -1)
              for o in order]
        check(-1 not in at and at == sorted(at),
              "verdict, then case two's log lines: %r\n%s"
              % (at, "\n".join(logical)))
        release(2)
        rows = poll(lambda rs: any(ln.startswith("EXIT=") for ln in rs),
                    "the run's end")
        text = "\n".join(rows)
        check("EXIT=0" in text and "3 cases: 3 passed" in text,
              "the summary:\n" + text)
        check("[3/3]" not in text, "no progress line left:\n" + text)
    finally:
        tmux("kill-server")


def timing_lines_held_back(scene):
    """The terminal rule (docs/cli.md): at a terminal with no level set,
    the progress line and the verdicts show, no TIMING line does, and the
    run's last line counts those held back (as many as the same run
    writes to a pipe) and says how to get them."""
    # A server of its own: the previous test's may still be going away.
    global SOCK
    SOCK = "scenetest-held-%d" % os.getpid()
    cmd = ("env -u SCENETEST_LOG_LEVEL TERM=xterm NO_COLOR=1 "
           "ST_TEST_WAIT_FIFO=%s %s run --no-config --plugin %s --platform "
           "waiter --skip-golden %s; echo EXIT=$?" % (FIFO, EXE, WAITS, scene))
    r = tmux("new-session", "-d", "-s", "t", "-x", "200", "-y", "40", cmd)
    check(r.returncode == 0, "tmux starts: %r" % r.stderr)
    try:
        tmux("set-option", "-t", "t", "remain-on-exit", "on")
        release()
        rows = poll(lambda rs: last_nonempty(rs).startswith("[2/3] w::two"),
                    "case two in flight")
        text = "\n".join(rows)
        check("PASS  w::one" in text, "case one's verdict:\n" + text)
        check("[TIMING]" not in text, "no TIMING line:\n" + text)
        check("autoload: TORCH_DEVICE_BACKEND_AUTOLOAD" in text,
              "the record still in words:\n" + text)
        release(2)
        rows = poll(lambda rs: any(ln.startswith("EXIT=") for ln in rs),
                    "the run's end")
        lines = [ln for ln in rows if ln.strip()]
        text = "\n".join(lines)
        check("[TIMING]" not in text, "no TIMING line at all:\n" + text)
        end = lines.index(next(ln for ln in lines if ln.startswith("EXIT=")))
        check(end >= 2 and "3 cases: 3 passed" in lines[end - 2] and
              lines[end] == "EXIT=0", "summary, hint, exit:\n" + text)
        hint = lines[end - 1]
        m = re.match(r"scenetest: (\d+) TIMING lines held back from the "
                     r"terminal; --log-level timing shows them, --log-file "
                     r"FILE keeps them$", hint)
        check(m is not None, "the closing hint is the last line: %r" % hint)
    finally:
        tmux("kill-server")
    # Off a terminal nothing changes: the same run's stderr (a pipe)
    # carries exactly the lines the hint counted.
    release(3)
    e = dict(os.environ, ST_TEST_WAIT_FIFO=FIFO)
    e.pop("SCENETEST_LOG_LEVEL", None)
    p = subprocess.run([EXE, "run", "--no-config", "--plugin", WAITS,
                        "--platform", "waiter", "--skip-golden", scene],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       env=e, timeout=60)
    err = p.stderr.decode()
    n = sum(1 for ln in err.splitlines() if ln.startswith("[TIMING]"))
    check(p.returncode == 0 and n == int(m.group(1)) and
          "held back" not in err,
          "a pipe gets all %s lines (got %d):\n%s" % (m.group(1), n, err))


def raw_bytes(scene, env, extra=()):
    """The bytes the run writes to a terminal (stdout and stderr on one
    pty), released kernels and all."""
    master, slave = pty.openpty()
    # 50 columns, told the way a terminal tells it (TIOCGWINSZ).
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 50, 0, 0))
    e = dict(os.environ)
    e.pop("NO_COLOR", None)
    e.update(env)
    e["ST_TEST_WAIT_FIFO"] = FIFO
    p = subprocess.Popen([EXE, "run", "--plugin", WAITS, "--platform",
                          "waiter", "--skip-golden"] + list(extra) + [scene],
                         stdin=slave,
                         stdout=slave, stderr=slave, env=e)
    os.close(slave)
    out = b""
    release(3)
    end = time.monotonic() + 60
    while time.monotonic() < end:
        ready, _, _ = select.select([master], [], [], 0.05)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            out += chunk
        elif p.poll() is not None:
            break
    p.wait(timeout=30)
    os.close(master)
    return p.returncode, out


def escape_bytes(scene):
    rc, out = raw_bytes(scene, {"TERM": "xterm"})
    check(rc == 0 and b"\x1b[" in out,
          "control: colour on a terminal (rc %d): %r" % (rc, out[-300:]))
    check(b"[1/3] w::one\r" in out, "control: a progress line: %r"
          % out[:300])
    rc, out = raw_bytes(scene, {"TERM": "xterm", "NO_COLOR": "1"})
    check(rc == 0 and b"\x1b" not in out, "NO_COLOR: no escape byte: %r"
          % out[:400])
    check(b"[1/3] w::one\r" in out, "NO_COLOR keeps the progress line")
    check(b"[2/3] w::" + TWO[:40].encode() + b"\r" in out,
          "clipped to 49 of the pty's 50 columns: %r" % out[:600])
    rc, out = raw_bytes(scene, {"TERM": "dumb"})
    check(rc == 0 and b"\x1b" not in out, "TERM=dumb: no escape byte: %r"
          % out[:400])
    check(b"[1/3]" not in out, "TERM=dumb: no progress line")
    check(b"autoload: TORCH_DEVICE_BACKEND_AUTOLOAD" in out,
          "TERM=dumb: the record in words")
    # Isolated children write their lines to the --log-file themselves;
    # the terminal still shows the record in words, and no TIMING line.
    log = os.path.join(TMP, "iso.log")
    rc, out = raw_bytes(scene, {"TERM": "xterm", "NO_COLOR": "1"},
                        ["--isolate", "--log-file", log])
    check(rc == 0 and out.count(b"autoload: TORCH_DEVICE_BACKEND_AUTOLOAD")
          == 1 and b"[TIMING]" not in out,
          "--isolate --log-file: words once, no TIMING line: %r" % out[:600])
    with open(log) as f:
        check(f.read().count("torch_backend_autoload") == 3,
              "one record per isolated child in the file")


def explicit_levels(scene):
    """The terminal rule on a pty: a `log-level: timing` in the
    configuration file counts as set explicitly (every TIMING line shows,
    no hint); `--log-level warning` shows none and holds none back; with
    --log-file nothing is held back either (the file has the lines)."""
    conf = os.path.join(TMP, "conf.yaml")
    with open(conf, "w") as f:
        f.write("log-level: timing\n")
    env = {"TERM": "xterm", "NO_COLOR": "1", "SCENETEST_LOG_LEVEL": ""}
    rc, out = raw_bytes(scene, env, ["--config", conf])
    check(rc == 0 and out.count(b"[TIMING] phase") == 9 and
          b"held back" not in out,
          "config log-level: timing shows them: %r" % out[-600:])
    rc, out = raw_bytes(scene, env, ["--no-config"])
    check(rc == 0 and b"[TIMING]" not in out and
          b"TIMING lines held back from the terminal" in out,
          "default: held back: %r" % out[-600:])
    rc, out = raw_bytes(scene, env, ["--no-config", "--log-level",
                                     "warning"])
    check(rc == 0 and b"[TIMING]" not in out and b"held back" not in out,
          "--log-level warning: nothing to hold: %r" % out[-600:])
    log = os.path.join(TMP, "held.log")
    rc, out = raw_bytes(scene, env, ["--no-config", "--log-file", log])
    with open(log) as f:
        n = f.read().count("[TIMING] phase")
    check(rc == 0 and b"[TIMING]" not in out and b"held back" not in out
          and n == 9, "--log-file keeps them (%d): %r" % (n, out[-600:]))


SCENE_FILE = os.path.join(TMP, "w.yaml")


@test
def terminal__progress_line_stays_at_the_bottom():
    progress_line_stays_at_the_bottom(SCENE_FILE)


@test
def terminal__timing_lines_held_back():
    timing_lines_held_back(SCENE_FILE)


@test
def terminal__explicit_levels():
    explicit_levels(SCENE_FILE)


@test
def terminal__escape_bytes():
    escape_bytes(SCENE_FILE)


if __name__ == "__main__":
    if shutil.which("tmux") is None:
        sys.exit(skip_all("tmux is not installed", TMP))
    os.mkfifo(FIFO)
    GATE = os.open(FIFO, os.O_RDWR)
    with open(SCENE_FILE, "w") as f:
        f.write(SCENE % TWO)
    sys.exit(main(TMP))
