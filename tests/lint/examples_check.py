#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The integration examples, tried as a new user would, each from a clean
directory (TAP 13):

  - examples/subproject/: scenetest as a Meson subproject; find_program
    ('scenetest') finds the harness, -Dscenetest:tests=false (the
    example's default_options) adds none of our tests to the parent's
    `meson test`, and the parent's TAP suite shows each case and, with
    --print-errorlogs, a failing case's message;
  - examples/installed/: after `meson install`, a program and a cmocka
    test built with pkg-config's flags for scenetest, run by meson test;
    and the command of docs/api.md that builds a program which runs
    without LD_LIBRARY_PATH;
  - examples/cmake/: after `meson install`, Debian's cmake configures the
    example from a clean directory (find_package(scenetest)), builds its
    plugin and program, and ctest runs one test per case, a failing case
    failing its own test only (docs/ci.md, "CMake and CTest");
  - -Dtests=false builds neither bench/ nor the CUDA plugin.

Usage: examples_check.py SOURCE_ROOT BUILD_ROOT. A plan of 0 (skip)
without meson, ninja or pkg-config on PATH; the CMake test skips without
cmake or ctest."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT, BUILD = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
for tool in ("meson", "ninja", "pkg-config"):
    if shutil.which(tool) is None:
        print("1..0 # SKIP %s not on PATH" % tool)
        sys.exit(0)  # the 1..0 plan is meson's TAP skip; 77 would be an error
TMP = tempfile.mkdtemp(prefix="scenetest-examples-")
sys.path.insert(0, os.path.join(ROOT, "tests", "cli"))
import taptest  # noqa: E402
from taptest import check, main, test  # noqa: E402


class Cmd:
    def __init__(self, args, cwd, env=None):
        e = dict(os.environ)
        e.update(env or {})
        p = subprocess.run(args, cwd=cwd, env=e, capture_output=True,
                           text=True, timeout=900)
        self.args, self.rc, self.out, self.err = args, p.returncode, \
            p.stdout, p.stderr

    def describe(self):
        return "%r rc=%d\n%s\n%s" % (self.args, self.rc, self.out[-3000:],
                                     self.err[-3000:])


def ok(cmd, what):
    check(cmd.rc == 0, what + "\n" + cmd.describe())
    return cmd


def listed_tests(out):
    """The test names of `meson test --list`: meson 1.0 prints "NAME",
    1.1 and later "PROJECT:NAME" (and ninja may say what it rebuilt)."""
    names = []
    for line in out.splitlines():
        line = line.strip()
        if not line or line.startswith("ninja:"):
            continue
        names.append(re.sub(r"^[^ :]+:(?!:)", "", line, count=1))
    return names


SOURCES = None


def source_copy():
    """A clean copy of the tracked sources (no build directories of
    ours), made once: TMP/source, or None outside a git checkout."""
    global SOURCES
    if SOURCES is not None:
        return SOURCES or None
    files = subprocess.run(["git", "-C", ROOT, "ls-files", "-co",
                            "--exclude-standard"], capture_output=True,
                           text=True).stdout.split()
    SOURCES = ""
    if not files:
        return None
    dest = os.path.join(TMP, "source")
    for f in files:
        src = os.path.join(ROOT, f)
        if not os.path.isfile(src) or f.startswith("build"):
            continue
        dst = os.path.join(dest, f)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(src, dst)
    SOURCES = dest
    return dest


DEST = None


def installed():
    """The build tree installed once under TMP/dest (meson install
    --destdir): returns (dest, the directory of scenetest.pc, the
    directory of libscenetest.so, the directory of the program)."""
    global DEST
    if DEST is None:
        dest = os.path.join(TMP, "dest")
        ok(Cmd(["meson", "install", "-C", BUILD, "--no-rebuild",
                "--destdir", dest], ROOT), "meson install --destdir")
        pcs = [os.path.join(d, f) for d, _, fs in os.walk(dest) for f in fs
               if f == "scenetest.pc"]
        check(len(pcs) == 1, "one scenetest.pc installed: %r" % pcs)
        libdir = [d for d, _, fs in os.walk(dest)
                  if "libscenetest.so" in fs]
        check(len(libdir) == 1, "one libscenetest.so: %r" % libdir)
        exe = [d for d, _, fs in os.walk(dest) if "scenetest" in fs and
               os.path.basename(d) == "bin"]
        check(len(exe) == 1, "one bin/scenetest: %r" % exe)
        DEST = (dest, os.path.dirname(pcs[0]), libdir[0], exe[0])
    return DEST


@test
def listed_tests__meson_1_0_and_1_1_forms():
    check(listed_tests("scenes\n") == ["scenes"], "meson 1.0: NAME")
    check(listed_tests("ninja: no work to do.\nparent:scenes\n") ==
          ["scenes"], "meson >= 1.1: PROJECT:NAME")
    check(listed_tests("parent:a::b\n  \n") == ["a::b"],
          "only the project prefix goes")
    check(listed_tests("a::b\n") == ["a::b"], "a name with :: stays")


@test
def subproject__find_program_tap_suite_and_no_tests_of_ours():
    proj = os.path.join(TMP, "parent")
    shutil.copytree(os.path.join(ROOT, "examples", "subproject"), proj)
    os.makedirs(os.path.join(proj, "subprojects"))
    src = source_copy()
    if src is None:
        return "SKIP not a git checkout"
    shutil.copytree(src, os.path.join(proj, "subprojects", "scenetest"))
    # One failing case, so that the parent's log shows its message.
    with open(os.path.join(proj, "scenes", "wrong.yaml"), "w") as f:
        f.write("scene: my_wrong\nkernel: add\ngolden: sub\nargs:\n"
                "  - {tensor: a, dtype: float32, shape: [4], init: ones}\n"
                "  - {tensor: b, dtype: float32, shape: [4], init: ones}\n"
                "  - {tensor: out, dtype: float32, shape: [4], "
                "role: output}\ncases:\n  - name: differs\n")
    ok(Cmd(["meson", "setup", "build"], proj), "meson setup")
    tests = ok(Cmd(["meson", "test", "-C", "build", "--list"], proj),
               "meson test --list")
    listed = listed_tests(tests.out)
    check(listed == ["scenes"], "only the parent's test: %r" % listed)
    # -Dscenetest:tests=false: no benchmark and no CUDA plugin either.
    targets = json.loads(ok(Cmd(["meson", "introspect", "--targets",
                                 "build"], proj), "introspect").out)
    extra = [t["name"] for t in targets
             if re.search(r"/(bench|plugins/cuda)/", t["defined_in"])]
    check(not extra, "-Dscenetest:tests=false builds %r" % extra)
    # --print-errorlogs shows the failing case and its message (the
    # harness logs it on stderr under TAP: meson keeps the YAML
    # diagnostics out of its console); --verbose shows every case.
    quiet = Cmd(["meson", "test", "-C", "build", "--print-errorlogs"], proj)
    log = quiet.out + quiet.err
    check(quiet.rc != 0 and "my_wrong::differs" in log and
          "[ERROR] my_wrong::differs: fail: tensor 'out': 4 of 4 elements "
          "differ" in log, "the failing case and its message\n" +
          quiet.describe())
    run = Cmd(["meson", "test", "-C", "build", "--verbose"], proj)
    for want in ("my_add::small OK", "my_add::odd OK",
                 "my_wrong::differs FAIL"):
        check(want in run.out, "%r in meson test --verbose\n%s" %
              (want, run.describe()))


def pkg_env(dest, pcdir):
    """pkg-config finds the installed scenetest.pc first; the inherited
    path still finds yaml-0.1, which it requires (on a machine whose
    libyaml is not in the default pkg-config path)."""
    inherited = os.environ.get("PKG_CONFIG_PATH")
    return {"PKG_CONFIG_PATH": pcdir +
            (os.pathsep + inherited if inherited else ""),
            "PKG_CONFIG_SYSROOT_DIR": dest}


@test
def installed__program_and_cmocka_test_with_pkg_config():
    dest, pcdir, libdir, _ = installed()
    env = pkg_env(dest, pcdir)
    env["LD_LIBRARY_PATH"] = libdir
    flags = ok(Cmd(["pkg-config", "--cflags", "--libs", "scenetest"], TMP,
                   env), "pkg-config --cflags --libs scenetest")
    check(dest in flags.out, "the flags point into the installed tree: " +
          flags.out)
    proj = os.path.join(TMP, "installed")
    shutil.copytree(os.path.join(ROOT, "examples", "installed"), proj)
    ok(Cmd(["meson", "setup", "build"], proj, env), "meson setup")
    run = ok(Cmd(["meson", "test", "-C", "build", "--print-errorlogs"],
                 proj, env), "meson test")
    check("2/2" in run.out or "Ok:                 2" in run.out,
          "both tests ran\n" + run.describe())


@test
def installed__api_md_rpath_command_runs_without_ld_library_path():
    """docs/api.md: a program built with pkg-config's flags alone needs
    LD_LIBRARY_PATH outside the loader's default directories; the
    documented command with -Wl,-rpath runs without it."""
    with open(os.path.join(ROOT, "docs", "api.md")) as f:
        lines = [l.strip() for l in f if "-Wl,-rpath" in l and
                 l.startswith("cc ")]
    check(len(lines) == 1, "one cc command with -Wl,-rpath in docs/api.md: "
          "%r" % lines)
    dest, pcdir, _, _ = installed()
    env = pkg_env(dest, pcdir)
    work = os.path.join(TMP, "rpath")
    os.makedirs(work)
    # The command builds embed from embed.c: the installed example's
    # program, which loads and runs a scene.
    shutil.copy(os.path.join(ROOT, "examples", "installed", "run_scene.c"),
                os.path.join(work, "embed.c"))
    ok(Cmd(["sh", "-c", lines[0]], work, env), "the documented command")
    env.pop("LD_LIBRARY_PATH", None)
    clean = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    clean.update(env)
    p = subprocess.run([os.path.join(work, "embed")], cwd=work, env=clean,
                       capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, "embed runs without LD_LIBRARY_PATH: rc=%d\n%s"
          % (p.returncode, p.stderr))
    # Without the rpath the loader does not find the library: what the
    # page says LD_LIBRARY_PATH (or the rpath) is for.
    bare = re.sub(r"\s*-Wl,-rpath,(\$\([^)]*\)|\S+)", "", lines[0]).replace(
        "-o embed", "-o bare")
    ok(Cmd(["sh", "-c", bare], work, env), "the command without the rpath")
    p = subprocess.run([os.path.join(work, "bare")], cwd=work, env=clean,
                       capture_output=True, text=True, timeout=120)
    check(p.returncode != 0 and "libscenetest.so" in p.stderr,
          "without the rpath the library is not found: rc=%d %s" %
          (p.returncode, p.stderr))


# The example's failing case, added to its copy: a fails only its own
# CTest test.
WRONG = ("scene: my_wrong\nkernel: add\ngolden: sub\nargs:\n"
         "  - {tensor: a, dtype: float32, shape: [4], init: ones}\n"
         "  - {tensor: b, dtype: float32, shape: [4], init: ones}\n"
         "  - {tensor: out, dtype: float32, shape: [4], role: output}\n"
         "cases:\n  - name: differs\n")


@test
def cmake__find_package_and_one_ctest_test_per_case():
    for tool in ("cmake", "ctest"):
        if shutil.which(tool) is None:
            return "SKIP %s not on PATH" % tool
    dest, _, _, bindir = installed()
    prefix = os.path.dirname(bindir)
    proj = os.path.join(TMP, "cmake")
    shutil.copytree(os.path.join(ROOT, "examples", "cmake"), proj)
    with open(os.path.join(proj, "scenes", "wrong.yaml"), "w") as f:
        f.write(WRONG)
    build = os.path.join(proj, "build")
    # A clean environment for the consumer: no LD_LIBRARY_PATH (the
    # imported target's path gives the program its rpath).
    env = {"LD_LIBRARY_PATH": ""}
    ok(Cmd(["cmake", "-S", proj, "-B", build, "-DCMAKE_PREFIX_PATH=" +
            prefix], proj, env), "cmake configure")
    ok(Cmd(["cmake", "--build", build], proj, env), "cmake --build")
    shown = json.loads(ok(Cmd(["ctest", "--show-only=json-v1"], build, env),
                          "ctest --show-only").out)
    tests = {t["name"]: t for t in shown["tests"]}
    # The cases as the installed scenetest lists them, with the same
    # plugin and platform.
    plugin = os.path.join(build, "mydev.so")
    listing = json.loads(ok(Cmd(
        [os.path.join(bindir, "scenetest"), "list", "--format", "json",
         "--platform", "mydev", "--plugin", plugin,
         os.path.join(proj, "scenes")], proj, env), "scenetest list").out)
    want = {"mykernels/%s::%s" % (c["scene"], c["case"]): c
            for c in listing}
    check(len(want) == 6 and "mykernels/my_add::sweep[N=1000]" in want,
          "six cases, matrix ones included: %r" % sorted(want))
    check(set(tests) == set(want) | {"version_check"},
          "one CTest test per case: %r, want %r" % (sorted(tests),
                                                   sorted(want)))
    check(want["mykernels/my_add::sweep[N=1000]"].get("tags") ==
          ["add", "sweep"], "the list gives the scenes' real tags: %r" %
          want["mykernels/my_add::sweep[N=1000]"])
    for name, case in want.items():
        props = {p["name"]: p["value"] for p in tests[name]["properties"]}
        labels = ["scenes"] + case.get("tags", [])
        check(sorted(props.get("LABELS", [])) == sorted(labels),
              "%s labels %r, want %r (LABELS and the case's tags)" %
              (name, props.get("LABELS"), labels))
        cmd = tests[name]["command"]
        check(cmd[1:4] == ["run", "--format", "tap"] and
              "%s::%s" % (case["scene"], case["case"]) in cmd and
              cmd[cmd.index("--platform") + 1] == "mydev" and
              cmd[cmd.index("--seed") + 1] == "1",
              "%s runs one case on mydev with ARGS: %r" % (name, cmd))
    run = Cmd(["ctest", "--output-on-failure", "--output-junit",
               "ctest.xml"], build, env)
    check(run.rc != 0, "a case failed: ctest fails\n" + run.describe())
    import xml.etree.ElementTree as ET
    got = {tc.get("name"): tc.get("status")
           for tc in ET.parse(os.path.join(build, "ctest.xml")).iter(
               "testcase")}
    failed = sorted(n for n, st in got.items() if st == "fail")
    skipped = sorted(n for n, st in got.items() if st == "notrun")
    check(failed == ["mykernels/my_wrong::differs"] and len(got) == 7,
          "only the failing case's test fails: %r\n%s" % (got,
                                                         run.describe()))
    # The case the plugin declines (bfloat16) is a skipped test.
    check(skipped == ["mykernels/my_add_bf16::declined"] and
          sum(st == "run" for st in got.values()) == 5,
          "the declined case is skipped: %r" % got)
    check("[ERROR] my_wrong::differs" in run.out or
          "not ok 1 - my_wrong::differs" in run.out,
          "its output shows the failure\n" + run.describe())
    # A scene that does not load: one failing test NAME/list, showing
    # the error.
    with open(os.path.join(proj, "scenes", "broken.yaml"), "w") as f:
        f.write("scene: broken\n")
    run = Cmd(["ctest", "--output-on-failure"], build, env)
    check(run.rc != 0 and "mykernels/list" in run.out and
          "broken.yaml:1:1: error:" in run.out,
          "a load error is the failing test mykernels/list\n" +
          run.describe())


@test
def cmake__discover_scenes_usage_errors():
    """scenetest_discover_scenes() refuses a call it cannot turn into
    tests, at configure time, naming what is wrong."""
    for tool in ("cmake", "ctest"):
        if shutil.which(tool) is None:
            return "SKIP %s not on PATH" % tool
    _, _, _, bindir = installed()
    prefix = os.path.dirname(bindir)
    cmake_dir = [d for d, _, fs in os.walk(os.path.dirname(prefix))
                 if "scenetestDiscoverScenes.cmake" in fs]
    check(len(cmake_dir) == 1, "one package directory: %r" % cmake_dir)
    find = "find_package(scenetest REQUIRED)\n"
    cases = [
        # (After a list keyword, a word is one more value of it.)
        (find + "scenetest_discover_scenes(s BOGUS 1 PATHS x)",
         "scenetest_discover_scenes(s): unknown arguments: BOGUS;1"),
        (find + "scenetest_discover_scenes(s LABELS a)",
         "scenetest_discover_scenes(s): no PATHS given"),
        (find + "scenetest_discover_scenes(a::b PATHS x)",
         "NAME 'a::b' must be non-empty and without '::'"),
        # The function without the package's targets.
        ('include("%s/scenetestDiscoverScenes.cmake")\n'
         "scenetest_discover_scenes(s PATHS x)" % cmake_dir[0],
         "no target scenetest::cli (find_package(scenetest) first)"),
        # A version the package is not compatible with.
        ("find_package(scenetest 0.1 REQUIRED)", "scenetestConfig.cmake, "
         "version: "),
    ]
    for k, (body, want) in enumerate(cases):
        proj = os.path.join(TMP, "cmake-usage-%d" % k)
        os.makedirs(proj)
        with open(os.path.join(proj, "CMakeLists.txt"), "w") as f:
            f.write("cmake_minimum_required(VERSION 3.19)\n"
                    "project(usage NONE)\nenable_testing()\n" + body + "\n")
        # No language (fast): CMake then knows no library architecture
        # to search lib/<arch>/cmake under a prefix, so point at the
        # package itself.
        r = Cmd(["cmake", "-S", proj, "-B", os.path.join(proj, "build"),
                 "-Dscenetest_DIR=" + cmake_dir[0]], proj)
        err = re.sub(r"\s+", " ", r.err)
        check(r.rc != 0 and want in err, "%r: want %r\n%s" %
              (body, want, r.describe()))


# A stand-in for the scenetest program: `list` prints cases with tags
# (what the list gives once scenes have tags) and a name full of what
# CMake quoting must survive; `run` passes.
FAKE_CLI = r"""#!/bin/sh
if [ "$1" = list ]; then
  cat <<'JSON'
[{"scene": "s", "case": "plain", "tags": ["slow", "bf16"]},
 {"scene": "s", "case": "odd[T=a;b,Q=\"x\" ]==]", "tags": []},
 {"scene": "s", "case": "untagged"}]
JSON
fi
exit 0
"""


@test
def cmake__discover_scenes_tags_as_labels_and_quoting():
    """The case's tags become CTest labels besides LABELS (where `list
    --format json` gives tags), and a case name with ';', quotes and
    ']==]' reaches its test name and --case intact."""
    for tool in ("cmake", "ctest"):
        if shutil.which(tool) is None:
            return "SKIP %s not on PATH" % tool
    dest, _, _, _ = installed()
    cmake_dir = [d for d, _, fs in os.walk(dest)
                 if "scenetestDiscoverScenes.cmake" in fs][0]
    proj = os.path.join(TMP, "cmake-tags")
    os.makedirs(proj)
    fake = os.path.join(proj, "fake-scenetest")
    with open(fake, "w") as f:
        f.write(FAKE_CLI)
    os.chmod(fake, 0o755)
    with open(os.path.join(proj, "CMakeLists.txt"), "w") as f:
        f.write("cmake_minimum_required(VERSION 3.19)\n"
                "project(tags NONE)\nenable_testing()\n"
                "add_executable(scenetest::cli IMPORTED)\n"
                "set_target_properties(scenetest::cli PROPERTIES "
                "IMPORTED_LOCATION \"%s\")\n"
                "include(\"%s/scenetestDiscoverScenes.cmake\")\n"
                "scenetest_discover_scenes(t PATHS scenes LABELS all)\n"
                % (fake, cmake_dir))
    build = os.path.join(proj, "build")
    ok(Cmd(["cmake", "-S", proj, "-B", build], proj), "cmake configure")
    shown = json.loads(ok(Cmd(["ctest", "--show-only=json-v1"], build),
                          "ctest --show-only").out)
    got = {}
    for t in shown["tests"]:
        props = {p["name"]: p["value"] for p in t["properties"]}
        got[t["name"]] = (sorted(props.get("LABELS", [])),
                          t["command"][t["command"].index("--case") + 1])
    odd = 's::odd[T=a;b,Q="x" ]==]'
    want = {"t/s::plain": (["all", "bf16", "slow"], "s::plain"),
            "t/" + odd: (["all"], odd),
            "t/s::untagged": (["all"], "s::untagged")}
    check(got == want, "tests %r, want %r" % (got, want))
    run = Cmd(["ctest"], build)
    check(run.rc == 0 and "100% tests passed" in run.out,
          "the three run\n" + run.describe())


@test
def tests_false__no_bench_no_cuda_plugin():
    """-Dtests=false at the top level: neither bench/ nor the CUDA plugin
    (unless -Dcuda=enabled asks for it)."""
    src = source_copy()
    if src is None:
        return "SKIP not a git checkout"
    build = os.path.join(TMP, "notests")
    ok(Cmd(["meson", "setup", build, "-Dtests=false", "-Dtorch=disabled"],
           src), "meson setup -Dtests=false")
    targets = json.loads(ok(Cmd(["meson", "introspect", "--targets",
                                 build], src), "introspect").out)
    extra = [t["name"] for t in targets
             if re.search(r"/(bench|plugins/cuda|tests)/", t["defined_in"])]
    check(not extra, "-Dtests=false builds %r" % extra)
    check(any(t["name"] == "scenetest" for t in targets),
          "the program is still built")


sys.exit(main(TMP))
