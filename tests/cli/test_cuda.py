# SPDX-License-Identifier: MIT
"""The CUDA platform plugin on a real GPU (docs/plugins.md#loading, docs/accelerators.md),
printing TAP 13.

Usage: test_cuda.py SCENETEST CUDA_PLUGIN|'' SCENES_DIR

Exits 77 (meson's skip) when the plugin was not built (no nvcc: -Dcuda
found none) or when this machine has no usable CUDA device (every case
declined with "no usable CUDA device"): a run without a GPU is reported as
skipped, never as passed. On a GPU: scenes/ (scenes/cuda included: level 2
and level 3 with 2 workers) on --platform cuda in one process, and under
--isolate -j 4 (a context per child); every selected case must pass, none
may be skipped. (ci/device-cuda.sh adds -j 4 threads sharing a context.)
"""
import json
import os
import re
import sys
import tempfile

import taptest
from taptest import Run, check, test, main

taptest.EXE = os.path.abspath(sys.argv[1])
PLUGIN = sys.argv[2]
SCENES = os.path.abspath(sys.argv[3])
TMP = tempfile.mkdtemp(prefix="scenetest-cuda-")

if not PLUGIN:
    print("1..0 # SKIP the CUDA plugin was not built (no nvcc found)")
    sys.exit(77)


def cuda(*args):
    # scenes/torch needs the torch plugin's golden: not this test's (it
    # has its own, tests/cli/test_torch.py).
    return Run(["run", "--plugin", PLUGIN, "--platform", "cuda", "--format",
                "tap", "--log-level", "warning", "--ignore", "torch"] +
               list(args))


probe = cuda("--case", "cuda_add_float::f32_one", SCENES)
if "no usable CUDA device" in probe.out:
    print("1..0 # SKIP no usable CUDA device: %s" %
          re.search(r"no usable CUDA device[^\n]*", probe.out).group(0))
    sys.exit(77)


# Cases of scenes/ whose dtypes the cuda plugin has no kernels for (FP8,
# uint16/32/64, mixed dtypes), as "scene::case" prefixes: seen declined
# on the H200.
DECLINED_SCENES = ("fp8_", "mixed_", "level3_mixed_", "unsigned_add::",
                   "uint64_beyond_2_53::", "level3_dtypes_add::")


def summary(r):
    oks = re.findall(r"^ok \d+ - (\S+)(.*)$", r.out, re.M)
    fails = re.findall(r"^not ok \d+ - (\S+)", r.out, re.M)
    skips = [n for n, rest in oks if "# SKIP" in rest]
    return len(oks) - len(skips), len(fails), skips


def all_pass(r, what):
    passed, failed, skips = summary(r)
    check(r.rc == 0 and failed == 0, "%s: every case passes" % what, r)
    # The cuda plugin has no FP8, uint16/32/64 or mixed-dtype kernels: it
    # declines those cases (docs/accelerators.md#the-cuda-platform); any other
    # decline is a kernel gone missing.
    unexpected = [n for n in skips if not n.startswith(DECLINED_SCENES)]
    check(not unexpected, "%s: nothing declined but FP8 and mixed-dtype "
          "cases: %r" % (what, unexpected[:5]), r)
    check(passed > 300, "%s: the whole set ran (%d passed)" % (what, passed),
          r)
    print("# %s: %d passed, %d failed, %d skipped" %
          (what, passed, failed, len(skips)))


@test
def scenes_level2_and_level3():
    all_pass(cuda(SCENES), "scenes/ on cuda")


@test
def scenes_isolated():
    all_pass(cuda("--isolate", "-j", "4", SCENES), "scenes/ on cuda, --isolate")


@test
def run_events_carry_device_times():
    events = os.path.join(TMP, "ev.jsonl")
    r = cuda("--events", events, "--case", "cuda_matmul::f32_odd", SCENES)
    check(r.rc == 0, "passes", r)
    with open(events) as f:
        case = json.loads(f.read())
    run = [e for e in case["events"] if e["name"] == "run"][0]
    check(run["device_ns"] > 0 and run["copy_ns"] > 0,
          "device and copy time reported: %r" % run)
    check(run["device_ns"] + run["copy_ns"] <= run["dur_ns"],
          "within the run phase's host time: %r" % run)


@test
def bench_hooks_ceilings_flush_describe():
    # The bench hooks (plugins/cuda/bench_hooks.cu): ceilings measured
    # before the first case (in a forked child: the bench process then
    # makes its own context for the cases), the flush under --cold-cache,
    # and the cuda.* fingerprint fields, start and end clocks where NVML is
    # (the default log level: the start is the logged fingerprint's).
    r = Run(["bench", "--plugin", PLUGIN, "--platform", "cuda", "--format",
             "json", "--cold-cache",
             "--allow-suspicious", "--min-rounds", "3", "--min-time-ms", "1",
             "--case", "cuda_matmul::f32_odd", SCENES])
    check(r.rc == 0, "bench passes", r)
    doc = json.loads(r.out)
    ceil = doc["ceilings"]
    # An H200's D2D copy is about 4 TB/s (read + write) and its FP32 FMA
    # rate tens of TFLOP/s; a bound far below either is a broken measure.
    check(ceil["bytes_per_s"] > 1e11 and ceil["flops_per_s"]["float32"] > 1e12
          and ceil["flops_per_s"]["float64"] > 1e11
          and ceil["flops_per_s"]["half"] == ceil["flops_per_s"]["float32"],
          "device ceilings: %r" % ceil)
    fp = doc["fingerprint"]
    check(all(k in fp for k in ("cuda.device", "cuda.cc", "cuda.driver",
                                "cuda.runtime", "cuda.sm_mhz_max")),
          "cuda fingerprint fields: %r" % fp)
    check(("cuda.sm_mhz_start" in fp) == ("cuda.sm_mhz_end" in fp),
          "start and end clocks together: %r" % fp)
    case = doc["cases"][0]
    check(case["status"] == "pass" and case["flops_fraction"] is not None
          and 0 < case["flops_fraction"] < 1.05, "a fraction: %r" % case)


sys.exit(main(TMP))
