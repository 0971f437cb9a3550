# SPDX-License-Identifier: MIT
"""The rerun command a failure prints, and how the CLI treats its inputs
and outputs (docs/scene-format.md#scene-keys, docs/cli.md#output, docs/reliability.md#untrusted-text-and-files), printing TAP 13 through taptest:
- rerun__*: the printed command repeats the load, timeout and plugin
  options and, run again, fails the same case;
- load__*: the same file twice (by path, directory or symlink) loads once,
  the same scene in a copy is an error naming both, number-shaped names
  say to quote them;
- a bad --watch names the option once; --events is truncated when nothing
  is selected; a full stdout is exit 3 with a message.

Usage: test_rerun_load.py PATH/TO/scenetest PATH/TO/st_plugin_prints.so

Each test pins one behaviour a user relies on (each was once found wrong
and fixed), run through the binary on scene files written to a temporary
directory. Standard library only.
"""

import json
import os
import shlex
import sys
import tempfile

EXE = os.path.abspath(sys.argv[1])
PLUGIN = os.path.abspath(sys.argv[2])  # provides platform 'printer', op add
TMP = tempfile.mkdtemp(prefix="scenetest-rerun-load-")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import taptest  # noqa: E402  (after sys.path)
from taptest import Failure, Run, check, main, test  # noqa: E402,F401

taptest.EXE = EXE
write = taptest.writer(TMP)

GOOD = taptest.VADD_SCENE

# The kernel adds, the golden subtracts: a wrong result (fail).
MISMATCH = taptest.mismatch_scene("mismatch", "  - name: wrong\n")




GOOD_F = write("dir/good.yaml", GOOD)
MISMATCH_F = write("mismatch.yaml", MISMATCH)
EMPTY_DIR = os.path.join(TMP, "empty")
os.makedirs(EMPTY_DIR)











@test
def watch__bad_spec_names_the_option_once():
    r = Run(["run", "--watch", "bad", GOOD_F])
    check(r.rc == 2 and r.out == "", "exit 2, nothing on stdout", r)
    check(r.err == "scenetest: error: --watch 'bad': expected NAME=GLOB"
          "[,GLOB...] with NAME an identifier\n", "one plain line", r)


@test
def rerun__repeats_the_load_and_timeout_options():
    r = Run(["run", "--format", "tap", "--log-level", "warning",
             "--max-nodes", "5000", "--timeout", "60", MISMATCH_F])
    check(r.rc == 1, "exit 1", r)
    want = ("    rerun: \"" + EXE + " run --case 'mismatch::wrong' --seed 0 "
            "--platform cpu --max-nodes 5000 --timeout 60 %s\"\n"
            % MISMATCH_F)
    check(want in r.out, "rerun line %r" % want, r)
    # The printed command reproduces the failure, and only that case.
    line = [l for l in r.out.splitlines() if l.startswith("    rerun: ")][0]
    argv = shlex.split(json.loads(line[len("    rerun: "):]))
    check(argv[0] == EXE, "starts with the program as invoked", r)
    again = Run(argv[1:] + ["--format", "tap", "--log-level", "warning"])
    check(again.rc == 1 and "\nnot ok 1 - mismatch::wrong\n" in again.out
          and "1..1\n" in again.out, "the rerun fails the same case", again)


@test
def rerun__repeats_the_plugin():
    r = Run(["run", "--format", "text", "--log-level", "warning",
             "--plugin", PLUGIN, "--platform", "printer", MISMATCH_F])
    check(r.rc == 1, "exit 1", r)
    want = ("      rerun: " + EXE + " run --case 'mismatch::wrong' --seed 0 "
            "--platform printer --plugin %s %s\n" % (PLUGIN, MISMATCH_F))
    check(want in r.out, "rerun line %r" % want, r)
    argv = shlex.split(want.split("rerun: ", 1)[1])
    again = Run(argv[1:] + ["--format", "tap", "--log-level", "warning"])
    check(again.rc == 1 and "\nnot ok 1 - mismatch::wrong\n" in again.out,
          "without --plugin the platform would not exist", again)


@test
def load__same_file_twice_loads_once():
    r = Run(["list", GOOD_F, GOOD_F])
    check(r.rc == 0 and r.out == "vadd::small\n", "listed once", r)
    r = Run(["list", os.path.dirname(GOOD_F), GOOD_F])
    check(r.rc == 0 and r.out == "vadd::small\n",
          "a directory and a file in it", r)
    link = os.path.join(TMP, "link.yaml")
    os.symlink(GOOD_F, link)
    r = Run(["list", GOOD_F, link])
    check(r.rc == 0 and r.out == "vadd::small\n", "a symlink to it", r)


@test
def load__same_scene_in_a_copy_is_an_error():
    copy = write("copy.yaml", GOOD)
    r = Run(["check", GOOD_F, copy])
    check(r.rc == 2 and r.out == "", "exit 2", r)
    check(r.err == "%s:1:8: error: duplicate scene 'vadd' (first defined at "
          "%s:1:8)\n" % (copy, GOOD_F), "names both files", r)


@test
def events__written_when_nothing_is_selected():
    path = write("stale.jsonl", "stale\n")
    r = Run(["run", "--format", "tap", "--events", path, EMPTY_DIR])
    check(r.rc == 0 and "no cases selected" in r.err, "exit 0", r)
    with open(path) as f:
        check(f.read() == "", "the events file is truncated to no lines")


@test
def stdout__write_error_is_exit_3_with_a_message():
    if not os.path.exists("/dev/full"):
        return "SKIP no /dev/full"
    for cmd in ("list", "check"):
        with open("/dev/full", "wb") as full:
            r = Run([cmd, GOOD_F], stdout=full)
        check(r.rc == 3, "%s: exit 3" % cmd, r)
        check(r.err.startswith("scenetest: error: writing to standard output "
                               "failed"), "%s: says why" % cmd, r)


@test
def load__number_shaped_names_say_quote_them():
    path = write("nan.yaml", GOOD.replace("scene: vadd", "scene: nan"))
    r = Run(["check", path])
    check(r.rc == 2, "exit 2", r)
    check(r.err == "%s:1:8: error: expected an identifier ([A-Za-z_]"
          "[A-Za-z0-9_]*, at most 128 characters) for 'scene', got nan, which "
          "is a number; quote it to use it as a name\n" % path, "message", r)
    path = write("nanq.yaml", GOOD.replace("scene: vadd", 'scene: "nan"'))
    r = Run(["list", path])
    check(r.rc == 0 and r.out == "nan::small\n", "quoted it is a name", r)


if __name__ == "__main__":
    sys.exit(main(TMP))
