# SPDX-License-Identifier: MIT
"""The pytest+numpy peer of bench_scale's suite, written the plain way a
user would (issue 14): one parametrized test per case, three 64x64 float32
arrays from numpy's default generator, golden = a + b, the kernel
numpy.add into out, allclose. The case count comes from the environment
(PEER_CASES), so bench_scale can run the same file at every size.

Run as: PEER_CASES=2000 python3 -m pytest -q -p no:cacheprovider peer_scenes.py
"""
import os

import numpy
import pytest

N = int(os.environ.get("PEER_CASES", "200"))


@pytest.mark.parametrize("seed", range(N))
def test_add(seed):
    rng = numpy.random.default_rng(seed)
    a = rng.random((64, 64), dtype=numpy.float32)
    b = rng.random((64, 64), dtype=numpy.float32)
    out = rng.random((64, 64), dtype=numpy.float32)
    golden = a + b
    numpy.add(a, b, out=out)
    assert numpy.allclose(out, golden, rtol=1e-5, atol=1e-8)
