# SPDX-License-Identifier: MIT
"""The defects an attack on the harness found (issue 13), each reproduced
through the binary and pinned by a test named after its D-number, printing
TAP 13. docs/reliability.md lists them with the promise each one keeps.

Usage: test_hardening.py PATH/TO/scenetest SPAWNS_PLUGIN GOOD_PLUGIN
"""

import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile

EXE = os.path.abspath(sys.argv[1])
SPAWNS = os.path.abspath(sys.argv[2])
GOOD_PLUGIN = os.path.abspath(sys.argv[3])
TMP = tempfile.mkdtemp(prefix="scenetest-hardening-")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import taptest  # noqa: E402  (after sys.path)
from taptest import Run, check, main, test  # noqa: E402

taptest.EXE = EXE

GOOD = taptest.VADD_SCENE


write = taptest.writer(TMP)


@test
def d3__fifo_scene_refused_without_blocking():
    """A FIFO named as a scene used to block forever in open()."""
    fifo = os.path.join(TMP, "d3", "f.yaml")
    os.makedirs(os.path.dirname(fifo), exist_ok=True)
    os.mkfifo(fifo)
    for cmd in ("check", "list", "run"):
        r = Run([cmd, fifo])
        check(r.rc == 2, "%s of a FIFO exits 2" % cmd, r)
        check(r.err.strip() == "scenetest: error: cannot read '%s': it is a "
              "FIFO; expected a regular file" % fifo, "one clear line", r)


@test
def d3__dev_zero_refused_before_reading():
    """/dev/zero used to be read until memory ran out."""
    r = Run(["check", "/dev/zero"])
    check(r.rc == 2, "exit 2", r)
    check("it is a character device; expected a regular file" in r.err,
          "names what it is", r)


@test
def d3__symlink_to_dev_zero_in_scanned_directory():
    d = os.path.join(TMP, "d3scan")
    os.makedirs(d, exist_ok=True)
    write("d3scan/good.yaml", GOOD)
    os.symlink("/dev/zero", os.path.join(d, "z.yaml"))
    r = Run(["check", d])
    check(r.rc == 2, "exit 2: nothing runs when a file is bad", r)
    check("z.yaml': it is a character device" in r.err, "names the link", r)


@test
def d12__too_deep_directory_is_an_error_not_silence():
    """A scene 70 levels deep used to be dropped: "0 scenes", exit 0."""
    top = os.path.join(TMP, "d12")
    deep = os.path.join(top, *(["d"] * 70))
    os.makedirs(deep, exist_ok=True)
    write(os.path.join(deep, "s.yaml"), GOOD)
    for cmd in ("check", "run"):
        r = Run([cmd, top])
        check(r.rc == 2, "%s exits 2" % cmd, r)
        check("directories nest deeper than 64 levels" in r.err,
              "says why", r)
    # 60 levels is within the cap: the scene is found and runs.
    ok = os.path.join(TMP, "d12ok")
    os.makedirs(os.path.join(ok, *(["d"] * 60)), exist_ok=True)
    write(os.path.join(ok, *(["d"] * 60), "s.yaml"), GOOD)
    r = Run(["list", ok])
    check(r.rc == 0 and r.out == "vadd::small\n", "found at 60 levels", r)


def spawned_helpers(d):
    """The helpers the spawner plugin started: {pid: {fd: target}}, from
    the files its kernel wrote after each helper's exec."""
    out = {}
    for name in os.listdir(d):
        if not name.startswith("spawn."):
            continue
        fds = {}
        with open(os.path.join(d, name)) as f:
            for line in f:
                fd, target = line.rstrip("\n").split(" ", 1)
                fds[int(fd)] = target
        out[int(name.split(".")[1])] = fds
    return out


def kill_helpers(pids):
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@test
def d2__helper_process_holds_no_descriptor_of_ours():
    """A kernel that starts a helper (here `sleep 1000`, in a session of
    its own) used to hand it the --output report, so `scenetest run |
    prove` could hang after scenetest exited. Whatever mode runs the
    kernel, the helper holds fds 0-2 only, and none of them is the report
    pipe or one of our files; the pipe reaches EOF once scenetest exits."""
    d = os.path.join(TMP, "d2")
    os.makedirs(d, exist_ok=True)
    scene2 = write("d2/s.yaml", GOOD)
    scene3 = write("d2/l3.yaml", GOOD.replace(
        "scene: vadd", "scene: vadd3\nlevel: 3\nworkers: 1"))
    modes = [("supervised", [scene2]), ("--no-supervise", [scene2]),
             ("-j 2", [scene2]), ("level 3", [scene3])]
    for mode, extra in modes:
        sd = os.path.join(d, mode.replace(" ", "_").strip("-"))
        os.makedirs(sd)
        files = {k: os.path.join(sd, k) for k in
                 ("report.tap", "events.jsonl", "log.txt", "extra.json",
                  "stderr.txt")}
        args = ["run", "--plugin", SPAWNS, "--platform", "spawner",
                "--no-default-plugins", "--format", "tap",
                "--output", files["report.tap"],
                "--events", files["events.jsonl"],
                "--log-file", files["log.txt"],
                "--report", "json:" + files["extra.json"]]
        if mode.startswith("-"):
            args += mode.split()
        env = dict(os.environ, NO_COLOR="1", ST_TEST_SPAWN_DIR=sd)
        # Standard output is a pipe, as in `scenetest run | cat` (a second
        # run writes its TAP report there instead of to --output).
        pipes = []
        for to_stdout in (False, True):
            a = list(args)
            if to_stdout:
                i = a.index("--output")
                del a[i:i + 2]
            with open(files["stderr.txt"], "w") as err:
                p = subprocess.Popen([EXE] + a + extra, env=env,
                                     stdout=subprocess.PIPE, stderr=err)
            pipes.append((p, os.fstat(p.stdout.fileno()).st_ino))
            rc = p.wait(timeout=120)
            with open(files["stderr.txt"]) as f:
                check(rc == 0, "%s: the run passes (rc %d): %s"
                      % (mode, rc, f.read()))
        helpers = spawned_helpers(sd)
        try:
            check(len(helpers) >= 2, "%s: each run's kernel started a "
                  "helper: %r" % (mode, helpers))
            # Standard error is the kernel's to inherit (its output goes
            # there under --no-supervise); the rest is ours.
            ours = {os.path.realpath(f) for k, f in files.items()
                    if k != "stderr.txt"}
            ours |= {"pipe:[%d]" % ino for _, ino in pipes}
            for pid, fds in helpers.items():
                check(set(fds) <= {0, 1, 2}, "%s: helper %d holds only fds "
                      "0-2, not %r" % (mode, pid, fds))
                for fd, target in fds.items():
                    check(target not in ours, "%s: helper %d's fd %d is "
                          "ours: %s" % (mode, pid, fd, target))
            # The report pipe is at EOF now that scenetest has exited,
            # while the helpers still live (a bound, not a wait: EOF is
            # there at once or never).
            for p, _ in pipes:
                ready, _, _ = select.select([p.stdout], [], [], 30)
                check(ready, "%s: the report pipe reaches EOF" % mode)
                p.stdout.read()
        finally:
            kill_helpers(helpers)
            for p, _ in pipes:
                p.stdout.close()


@test
def d4__plugin_name_without_slash_is_relative_to_cwd():
    """`--plugin libm.so.6` used to be checked as ./libm.so.6 but handed
    to dlopen, which searches the library path: the system libm loaded
    (and for `lazy:` the declaration came from one file, the code from
    another). docs/plugins.md#loading: a name without '/' is ./NAME, one real path for
    the note and for dlopen."""
    d = os.path.join(TMP, "d4")
    empty = os.path.join(d, "empty")
    os.makedirs(empty)
    scene = write("d4/s.yaml", GOOD)
    for spec in ("libm.so.6", "lazy:libm.so.6"):
        r = Run(["run", "--no-default-plugins", "--plugin", spec, scene],
                cwd=empty)
        check(r.rc == 2, "%s with no ./libm.so.6: exit 2" % spec, r)
        check(r.err == "scenetest: error: plugin 'libm.so.6': ./libm.so.6: "
              "No such file or directory (a plugin path without a '/' is "
              "relative to the current directory, not a library search)\n",
              "%s: one clear line naming ./libm.so.6" % spec, r)
    # A file of that name in the current directory is the one loaded,
    # eagerly or lazily: a test plugin, not the system's libm.
    here = os.path.join(d, "here")
    os.makedirs(here)
    shutil.copy(GOOD_PLUGIN, os.path.join(here, "libm.so.6"))
    for spec in ("libm.so.6", "lazy:libm.so.6"):
        r = Run(["run", "--no-default-plugins", "--plugin", spec,
                 "--platform", "lazyplat", "--format", "tap", scene],
                cwd=here)
        check(r.rc == 0, "%s: ./libm.so.6 loads and runs" % spec, r)
        check("ok 1 - vadd::small" in r.out, "%s: the case ran" % spec, r)


@test
def d13__output_aliasing_an_input_or_the_events_file_refused():
    """--output used to overwrite an input scene, or share a file with
    --events, and exit 0."""
    scene = write("d13/s.yaml", GOOD)
    ev = os.path.join(TMP, "d13", "ev.jsonl")
    link = os.path.join(TMP, "d13", "same.jsonl")
    with open(ev, "w"):
        pass
    os.symlink(ev, link)
    for args, why in (
            (["--output", scene], "is also the input"),
            (["--output", link, "--events", ev], "is also the --events "
             "file")):
        r = Run(["run"] + args + [scene])
        check(r.rc == 2, "%r: exit 2" % args, r)
        check(r.err.startswith("scenetest: error: ") and why in r.err and
              r.err.count("\n") == 1, "%r: one line saying why" % args, r)
        with open(scene) as f:
            check(f.read() == GOOD, "the scene is untouched")


@test
def d16__fill_1e400_refused_not_infinity():
    scene = write("d16/big.yaml", GOOD.replace("fill: 3.0", "fill: 1e400"))
    r = Run(["check", scene])
    check(r.rc == 2, "exit 2", r)
    check("error: the number 1e400 is out of the range of a double" in r.err,
          "names the number and the range", r)


@test
def d16__rounds_error_names_the_bounds():
    scene = write("d16/s.yaml", GOOD)
    r = Run(["run", "--rounds", "99999999999", scene])
    check(r.rc == 2 and r.err == "scenetest: error: --rounds: 99999999999 is "
          "too large (at most 1000000000)\n", "names the upper bound", r)
    r = Run(["run", "--rounds", "0", scene])
    check(r.rc == 2 and "at least 1" in r.err, "names the lower bound", r)


@test
def d16__nul_escape_shown_in_full():
    """A "\\0" in a double-quoted value used to end the quoted value in
    the message: got 'a'."""
    scene = write("d16/nul.yaml", GOOD.replace("scene: vadd",
                                               'scene: "a\\0b"'))
    r = Run(["check", scene])
    check(r.rc == 2, "exit 2", r)
    check("for 'scene', got 'a\\0b'" in r.err, "the whole value, NUL as "
          "\\0", r)


@test
def d16__escape_sequences_in_messages_not_printed_raw():
    """An ESC from a scene value or a command-line argument used to reach
    the terminal raw (recolouring it); now \\x1b, and a C1 CSI \\u009b."""
    scene = write("d16/esc.yaml", GOOD.replace(
        "scene: vadd", 'scene: "a\\e[31mRED\\u009b2J"'))
    r = Run(["check", scene])
    check(r.rc == 2, "exit 2", r)
    check("\x1b" not in r.err and "\xc2\x9b" not in r.err and
          "\u009b" not in r.err, "no raw ESC or CSI", r)
    check("got 'a\\x1b[31mRED\\u009b2J'" in r.err, "shown escaped", r)
    r = Run(["run", "--platform", "\x1b]0;title\x07", scene])
    check(r.rc == 2 and "\x1b" not in r.err and "\x07" not in r.err,
          "usage error: no raw control bytes", r)
    check("unknown platform '\\x1b]0;title\\x07'" in r.err,
          "usage error: shown escaped", r)


BAD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                   "scenes", "bad")
DIAG = re.compile(r"^[^ ]+:\d+:\d+: (error|warning): \S")
SANITIZER = re.compile(r"AddressSanitizer|LeakSanitizer|runtime error:")


@test
def bad_fixtures__check_and_list_fail_cleanly_with_the_check_hooks():
    """Every bad fixture through the CLI, where the registry's check hooks
    see each case the loader kept (test_loader.c loads them without): a
    scalar before a tensor made the hook index before its scalars
    (a heap overflow under ASan, a silent one without)."""
    names = sorted(n for n in os.listdir(BAD) if n.endswith(".yaml"))
    check(len(names) > 100, "the fixtures are there: %d" % len(names))
    for name in names:
        path = os.path.join(BAD, name)
        r = Run(["check", path])
        lines = [ln for ln in r.err.splitlines() if ln]
        check(r.rc == 2 and lines and all(DIAG.match(ln) for ln in lines) and
              any(": error: " in ln for ln in lines) and
              not SANITIZER.search(r.err), "check " + r.describe())
        r = Run(["list", path])
        check(r.rc in (0, 2) and not SANITIZER.search(r.err),
              "list " + r.describe())


if __name__ == "__main__":
    sys.exit(main(TMP))
