/* SPDX-License-Identifier: MIT */
/* Comparing outputs against golden (allclose) and inputs against their
 * pre-run bytes. */
#ifndef SCENETEST_HARNESS_COMPARE_H
#define SCENETEST_HARNESS_COMPARE_H

#include <stdio.h>

#include <scenetest/tensor.h>

/* |actual - expected| <= atol + rtol * |expected| element-wise, computed in
 * double (NaN never close, as torch.allclose with equal_nan=False; equal
 * infinities are close). Returns ST_OK, or ST_EMISMATCH with msg naming the
 * tensor, the mismatch count, the first mismatching multi-index with both
 * values, the max abs diff, rtol and atol. ST_EINVAL if shapes/dtypes
 * differ. Thread-safety: any thread. */
st_status st__compare_close(const st_tensor *actual /* IN */,
                            const st_tensor *expected /* IN */, double rtol,
                            double atol, char *msg /* OUT */,
                            size_t size) ST_WUR;
/* st__compare_close with equal_nan (docs/scene-format.md#compare): NaN in both
 * actual and expected is close, as torch.testing.assert_close(equal_nan=True).
 */
st_status st__compare_close_nan(const st_tensor *actual /* IN */,
                                const st_tensor *expected /* IN */, double rtol,
                                double atol, int equal_nan, char *msg /* OUT */,
                                size_t size) ST_WUR;
/* Bit-exact comparison of an input against its pre-run copy. ST_OK or
 * ST_EMISMATCH ("input 'a' was modified by the kernel: N of M bytes
 * differ; first at element [i, j]"). */
st_status st__compare_exact(const st_tensor *after /* IN */,
                            const st_tensor *before /* IN */,
                            char *msg /* OUT */, size_t size) ST_WUR;
/* The element rule itself, for reports that look at single elements
 * (harness/case/mismatch.c), so that they can never disagree with the
 * verdict. */
/* The verdict on element i of a against e: st__compare_element_close in
 * double, except integers with rtol and atol both 0, which compare as
 * integers (exact beyond 2^53). Thread-safety: any thread. */
int st__compare_at(const st_tensor *a /* IN */, const st_tensor *e /* IN */,
                   size_t i, double rtol, double atol, int equal_nan);
/* |a[i] - e[i]|: exact for integers before its one rounding to double. */
double st__compare_abs_diff(const st_tensor *a /* IN */,
                            const st_tensor *e /* IN */, size_t i);
int st__compare_element_close(double a, double e, double rtol, double atol,
                              int equal_nan);
/* Whether element i passes, for st__compare_scan; data is the caller's. */
typedef int (*st__compare_pass_fn)(const void *data, size_t i);

/* The detailed pass over a and e (same layout): the number of elements
 * that pass rejects, the first of them into *first and the max abs diff
 * over them into *maxd, NaN propagating. Pinned to torch's
 * make_tensor_mismatch_msg (torch/testing/_comparison.py), which zeroes
 * the matching elements' differences before torch.max. Thread-safety:
 * any thread. */
size_t st__compare_scan(const st_tensor *a /* IN */,
                        const st_tensor *e /* IN */, st__compare_pass_fn pass,
                        const void *data /* IN: for pass */,
                        size_t *first /* OUT */, double *maxd /* OUT */);

/* Formats flat index i of t as "[i0, i1, ...]". */
void st__format_index(const st_tensor *t /* IN */, size_t i,
                      char *buf /* OUT */, size_t size);
/* t's shape as "[d0, d1, ...]". Thread-safety: any thread. */
void st__format_shape(const st_tensor *t /* IN */, char *buf /* OUT */,
                      size_t size);
/* Flat index i of t as torch prints it (_unravel_index in
 * torch/testing/_comparison.py): a bare integer for a 0-d or 1-d tensor,
 * else a tuple "(i0, i1)". Thread-safety: any thread. */
void st__format_torch_index(const st_tensor *t /* IN */, size_t i,
                            char *buf /* OUT */, size_t size);

/* Element i of a and of b as text, with its index (as torch prints it
 * when torch_style, else as st__format_index): the three strings every
 * message that names an element shows. Thread-safety: any thread. */
#define ST__INDEX_CHARS (ST_MAX_DIMS * 24 + 4)
#define ST__VALUE_CHARS 48
void st__element_strs(const st_tensor *a /* IN */, const st_tensor *b /* IN */,
                      size_t i, int torch_style,
                      char ix[ST__INDEX_CHARS] /* OUT */,
                      char va[ST__VALUE_CHARS] /* OUT */,
                      char vb[ST__VALUE_CHARS] /* OUT */);

/* The first lines of a differing tensor's block in the compare phase's
 * failure report (case/mismatch.c): its name, dtype, shape and tolerance
 * (tol, as the caller words it), how many elements differ of a against
 * e, and the first of them (index first). Thread-safety: one thread per
 * out. */
void st__detail_head(FILE *out /* IN/OUT */, const char *name /* IN */,
                     const st_tensor *a /* IN */, const st_tensor *e /* IN */,
                     const char *tol /* IN */, int equal_nan, size_t count,
                     size_t first);

/* Element i of t as text into buf: integers exactly, float64 with %.17g
 * (enough digits to tell neighbours apart), narrower floats with %.9g.
 * Thread-safety: any thread. */
void st__compare_value_str(const st_tensor *t /* IN */, size_t i,
                           char *buf /* OUT */, size_t size);

#endif
