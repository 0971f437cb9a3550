/* SPDX-License-Identifier: MIT */
/* The `compare` phase's checks: outputs against golden with torch's
 * allclose rule, inputs bit-exactly against their pre-run bytes, and the
 * mismatch messages (multi-index, both values, max abs diff).
 *
 * Built at -O3 (harness/meson.build). A passing compare is the common case
 * and the benchmark's: float32 and float64 have a vectorized pass that only
 * decides "all close"; the element-at-a-time pass that counts, finds the
 * first index and the max diff runs only when that pass finds a suspect. */
#include <float.h>
#include <inttypes.h>
#include <stdint.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "case/compare.h"
#include "base/dtype.h"
#include "base/hot.h"
#include "base/pool.h"

/* The closeness rule, in double, pinned to torch.isclose
 * (torch/_refs/__init__.py, isclose): close = (a == e) |
 * (isfinite(|a - e|) & (|a - e| <= atol + rtol * |e|)). So equal
 * infinities are close (a == e, although inf - inf is NaN), an infinity
 * against anything else is not (the difference is not finite), and NaN is
 * never close (equal_nan=False). */
static inline int is_close(double a, double e, double rtol, double atol) {
  const double d = fabs(a - e);
  return a == e || (d <= DBL_MAX && d <= atol + rtol * fabs(e));
}

int st__compare_element_close(double a, double e, double rtol, double atol,
                              int equal_nan) {
  return is_close(a, e, rtol, atol) || (equal_nan && isnan(a) && isnan(e));
}

/* Integers with both tolerances 0 compare as integers
 * (docs/scene-format.md#compare): through int64, uint64 as its bits, so
 * values beyond 2^53 that double would merge stay apart. */
int st__compare_at(const st_tensor *a, const st_tensor *e, size_t i,
                   double rtol, double atol, int equal_nan) {
  if (st__dtype_is_int(a->dtype) && rtol == 0 && atol == 0)
    return st_tensor_get_i64(a, i) == st_tensor_get_i64(e, i);
  return st__compare_element_close(
      st_tensor_get_f64(a, i), st_tensor_get_f64(e, i), rtol, atol, equal_nan);
}

double st__compare_abs_diff(const st_tensor *a, const st_tensor *e, size_t i) {
  if (st__dtype_is_int(a->dtype) && a->dtype == e->dtype) {
    /* Exact in uint64 (int64's extremes are 2^64 - 1 apart), then one
     * rounding to double. */
    const uint64_t x = (uint64_t)st_tensor_get_i64(a, i);
    const uint64_t y = (uint64_t)st_tensor_get_i64(e, i);
    const int less =
        st__dtype_is_unsigned(a->dtype) ? x < y : (int64_t)x < (int64_t)y;
    return (double)(less ? y - x : x - y);
  }
  return fabs(st_tensor_get_f64(a, i) - st_tensor_get_f64(e, i));
}

/* float32 in float32 arithmetic, 8 lanes with AVX2, conservatively: an
 * element passes here only if the float32 computation says it is close with
 * a margin that covers its rounding (every float32 operation is within a
 * relative 2^-24 of the double one; underflow adds at most 2^-150 absolute;
 * 2^-20 relative plus 2^-148 covers both). 1 if the element needs the
 * exact double check. Requires 0 <= rtol, atol <= 1e30 (the caller
 * checks), so the float tolerances are finite and not NaN. */
static inline int32_t suspect_f32(float x, float y, float rtol, float atol) {
  const float d = fabsf(x - y);
  const float tol = (atol + rtol * fabsf(y)) * (1.0f - 0x1p-20f) - 0x1p-148f;
  const int32_t eq = x == y, le = d <= tol, fin = d <= FLT_MAX;
  return ((eq | le) & fin) ^ 1;
}

/* float64: the exact rule itself; 1 if the element mismatches. */
static inline int64_t mismatch_f64(double x, double y, double rtol,
                                   double atol) {
  const double d = fabs(x - y);
  const int64_t eq = x == y, le = d <= atol + rtol * fabs(y),
                fin = d <= DBL_MAX;
  return ((eq | le) & fin) ^ 1;
}

/* The all-close pass over n elements, one loop for both float types (FT,
 * with UT its bits, ABS the mask of all bits but the sign, INF the bits of
 * +infinity, BAD the element rule above): block by block, first the cheap
 * question "are the two blocks' bits equal and free of NaN?" (an element
 * whose bits equal the expected's is close unless it is a NaN: a == e, or
 * for an infinity a == e as well), which is the common case of a passing
 * compare and costs a load, an XOR and an OR per element; only a block
 * where some bits differ runs the tolerance rule, on data still in L1.
 * Every loop is branch-free per element and vectorized (no early exit
 * inside a block); nonzero if any element needs the element-at-a-time
 * pass. */
#define ALLCLOSE_BLOCK 256
#define ALLCLOSE_PASS(NAME, FT, UT, ABS, INF, BAD)                             \
  ST_HOT_CLONES                                                                \
  static int NAME(const FT *restrict a, const FT *restrict e, size_t n,        \
                  FT rtol, FT atol) {                                          \
    for (size_t b0 = 0; b0 < n; b0 += ALLCLOSE_BLOCK) {                        \
      const size_t m = n - b0 < ALLCLOSE_BLOCK ? n - b0 : ALLCLOSE_BLOCK;      \
      const FT *restrict x = a + b0, *restrict y = e + b0;                     \
      UT diff = 0;                                                             \
      for (size_t i = 0; i < m; i++) {                                         \
        UT ux, uy;                                                             \
        memcpy(&ux, &x[i], sizeof ux);                                         \
        memcpy(&uy, &y[i], sizeof uy);                                         \
        diff |= (ux ^ uy) | (UT)((ux & (ABS)) > (INF));                        \
      }                                                                        \
      if (diff == 0)                                                           \
        continue;                                                              \
      UT bad = 0;                                                              \
      for (size_t i = 0; i < m; i++)                                           \
        bad |= (UT)BAD(x[i], y[i], rtol, atol);                                \
      if (bad != 0)                                                            \
        return 1;                                                              \
    }                                                                          \
    return 0;                                                                  \
  }

ALLCLOSE_PASS(suspects_f32, float, uint32_t, UINT32_C(0x7FFFFFFF),
              UINT32_C(0x7F800000), suspect_f32)
ALLCLOSE_PASS(mismatches_f64, double, uint64_t, UINT64_C(0x7FFFFFFFFFFFFFFF),
              UINT64_C(0x7FF0000000000000), mismatch_f64)

/* One core cannot read memory as fast as two: on the benchmark machine one
 * thread reads about 13 GB/s and two about 21 GB/s, and a compare reads
 * two tensors. Large tensors are therefore split between the calling
 * thread and one helper thread, joined before returning (no thread
 * outlives the call, so forking stays safe). Below the threshold, thread
 * start-up would cost more than it saves. */
#define SPLIT_MIN_BYTES ((size_t)8 << 20)

typedef struct half_job {
  const void *a, *e;
  size_t n;
  int is_f64;
  double rtol, atol;
  int result;
} half_job;

static int run_job(const half_job *j) {
  if (j->is_f64)
    return mismatches_f64(j->a, j->e, j->n, j->rtol, j->atol);
  return suspects_f32(j->a, j->e, j->n, (float)j->rtol, (float)j->atol);
}

static void *job_thread(void *arg) {
  half_job *j = arg;
  j->result = run_job(j);
  return NULL;
}

/* The vectorized pass over a whole tensor, split in two when it is large
 * and the machine has a second core. Nonzero if any element needs the
 * element-at-a-time pass. */
static int fast_pass(const st_tensor *act, const st_tensor *exp, int is_f64,
                     double rtol, double atol) {
  const size_t n = act->numel;
  const size_t es = is_f64 ? 8 : 4;
  half_job lo = {act->data, exp->data, n, is_f64, rtol, atol, 0};
  if (act->nbytes < SPLIT_MIN_BYTES || st__ncores() < 2)
    return run_job(&lo);
  /* Split on a 64-byte boundary so neither half starts mid-line. */
  const size_t mid = (n / 2) & ~(size_t)(64 / es - 1);
  half_job hi = {(const char *)act->data + mid * es,
                 (const char *)exp->data + mid * es,
                 n - mid,
                 is_f64,
                 rtol,
                 atol,
                 0};
  lo.n = mid;
  pthread_t th;
  if (pthread_create(&th, NULL, job_thread, &hi) != 0)
    return run_job(&lo) | run_job(&hi);
  const int r = run_job(&lo);
  pthread_join(th, NULL);
  return r | hi.result;
}

void st__format_index(const st_tensor *t, size_t i, char *buf, size_t size) {
  size_t idx[ST_MAX_DIMS];
  const int nd = t->ndim < 0             ? 0
                 : t->ndim > ST_MAX_DIMS ? ST_MAX_DIMS
                                         : t->ndim;
  size_t rest = i;
  for (int d = nd - 1; d >= 0; d--) {
    const size_t dim = t->shape[d] > 0 ? (size_t)t->shape[d] : 1;
    idx[d] = rest % dim;
    rest /= dim;
  }
  if (size == 0)
    return;
  size_t len = 0;
  buf[0] = '\0';
  len += (size_t)snprintf(buf + len, size - len, "[");
  for (int d = 0; d < nd && len < size; d++)
    len +=
        (size_t)snprintf(buf + len, size - len, "%s%zu", d ? ", " : "", idx[d]);
  if (len < size)
    snprintf(buf + len, size - len, "]");
}

void st__format_shape(const st_tensor *t, char *buf, size_t size) {
  size_t len = (size_t)snprintf(buf, size, "[");
  for (int d = 0; d < t->ndim && len < size; d++)
    len += (size_t)snprintf(buf + len, size - len, "%s%lld", d ? ", " : "",
                            (long long)t->shape[d]);
  if (len < size)
    snprintf(buf + len, size - len, "]");
}

void st__format_torch_index(const st_tensor *t, size_t i, char *buf,
                            size_t size) {
  if (t->ndim <= 1) {
    snprintf(buf, size, "%zu", i);
    return;
  }
  st__format_index(t, i, buf, size);
  size_t n = strlen(buf);
  if (n >= 2) {
    buf[0] = '(';
    buf[n - 1] = ')';
  }
}

static int same_layout(const st_tensor *a, const st_tensor *b) {
  if (a->dtype != b->dtype || a->ndim != b->ndim || a->numel != b->numel ||
      a->nbytes != b->nbytes)
    return 0;
  for (int d = 0; d < a->ndim && d < ST_MAX_DIMS; d++)
    if (a->shape[d] != b->shape[d])
      return 0;
  return 1;
}

/* One element as text: integers exactly, float64 with enough digits to
 * tell neighbours apart, narrower floats with %.9g. */
void st__compare_value_str(const st_tensor *t, size_t i, char *buf,
                           size_t size) {
  if (st__dtype_is_unsigned(t->dtype))
    snprintf(buf, size, "%" PRIu64, (uint64_t)st_tensor_get_i64(t, i));
  else if (!st_dtype_is_float(t->dtype))
    snprintf(buf, size, "%" PRId64, st_tensor_get_i64(t, i));
  else if (t->dtype == ST_DTYPE_FLOAT64)
    snprintf(buf, size, "%.17g", st_tensor_get_f64(t, i));
  else
    snprintf(buf, size, "%.9g", st_tensor_get_f64(t, i));
}

size_t st__compare_scan(const st_tensor *a, const st_tensor *e,
                        st__compare_pass_fn pass, const void *data,
                        size_t *first, double *maxd) {
  size_t count = 0;
  *first = 0;
  *maxd = 0.0;
  for (size_t i = 0; i < a->numel; i++) {
    if (pass(data, i))
      continue;
    if (count++ == 0)
      *first = i;
    const double d = st__compare_abs_diff(a, e, i);
    if (isnan(d) || isnan(*maxd))
      *maxd = NAN;
    else if (d > *maxd)
      *maxd = d;
  }
  return count;
}

typedef struct allclose {
  const st_tensor *act, *exp;
  double rtol, atol;
  int equal_nan;
} allclose;

static int allclose_at(const void *data, size_t i) {
  const allclose *c = data;
  return st__compare_at(c->act, c->exp, i, c->rtol, c->atol, c->equal_nan);
}

void st__element_strs(const st_tensor *a, const st_tensor *b, size_t i,
                      int torch_style, char ix[ST__INDEX_CHARS],
                      char va[ST__VALUE_CHARS], char vb[ST__VALUE_CHARS]) {
  if (torch_style)
    st__format_torch_index(a, i, ix, ST__INDEX_CHARS);
  else
    st__format_index(a, i, ix, ST__INDEX_CHARS);
  st__compare_value_str(a, i, va, ST__VALUE_CHARS);
  st__compare_value_str(b, i, vb, ST__VALUE_CHARS);
}

void st__detail_head(FILE *out, const char *name, const st_tensor *a,
                     const st_tensor *e, const char *tol, int equal_nan,
                     size_t count, size_t first) {
  char sh[ST_MAX_DIMS * 24 + 4], ix[ST__INDEX_CHARS], va[ST__VALUE_CHARS],
      ve[ST__VALUE_CHARS];
  st__format_shape(a, sh, sizeof sh);
  fprintf(out, "\ntensor '%s' (%s, shape %s, %s%s):", name,
          st_dtype_name(a->dtype), sh, tol, equal_nan ? ", equal_nan" : "");
  fprintf(out, "\n  Mismatched elements: %zu / %zu (%.1f%%)", count, a->numel,
          100.0 * (double)count / (double)a->numel);
  st__element_strs(a, e, first, 1, ix, va, ve);
  fprintf(out, "\n  First mismatch at index %s: actual %s, expected %s", ix, va,
          ve);
}

/* The detailed pass (st__compare_scan) and its message. */
static st_status report(const st_tensor *act, const st_tensor *exp, double rtol,
                        double atol, int equal_nan, char *msg, size_t size) {
  const allclose c = {act, exp, rtol, atol, equal_nan};
  size_t first;
  double maxd;
  const size_t count =
      st__compare_scan(act, exp, allclose_at, &c, &first, &maxd);
  if (count == 0)
    return ST_OK;
  if (msg != NULL && size > 0) {
    char index[ST__INDEX_CHARS], va[ST__VALUE_CHARS], ve[ST__VALUE_CHARS];
    st__element_strs(act, exp, first, 0, index, va, ve);
    snprintf(msg, size,
             "tensor '%s': %zu of %zu elements differ; first at %s: actual "
             "%s, expected %s; max abs diff %.9g; rtol %g, atol %g",
             exp->name ? exp->name : (act->name ? act->name : "?"), count,
             act->numel, index, va, ve, maxd, rtol, atol);
  }
  return ST_EMISMATCH;
}

st_status st__compare_close(const st_tensor *actual, const st_tensor *expected,
                            double rtol, double atol, char *msg, size_t size) {
  return st__compare_close_nan(actual, expected, rtol, atol, 0, msg, size);
}

/* With equal_nan the vectorized passes still flag NaN pairs (as
 * suspects), so they stay exact: the element pass decides. */
st_status st__compare_close_nan(const st_tensor *actual,
                                const st_tensor *expected, double rtol,
                                double atol, int equal_nan, char *msg,
                                size_t size) {
  if (msg != NULL && size > 0)
    msg[0] = '\0';
  if (!same_layout(actual, expected)) {
    if (msg != NULL && size > 0)
      snprintf(
          msg, size,
          "tensor '%s': cannot compare %s of %zu elements with %s of "
          "%zu elements (dtype or shape differs)",
          expected->name ? expected->name : "?",
          st_dtype_name(actual->dtype) ? st_dtype_name(actual->dtype) : "?",
          actual->numel,
          st_dtype_name(expected->dtype) ? st_dtype_name(expected->dtype) : "?",
          expected->numel);
    return ST_EINVAL;
  }
  const size_t n = actual->numel;
  if (n == 0)
    return ST_OK;
  switch (actual->dtype) {
  case ST_DTYPE_FLOAT32:
    if (rtol >= 0 && rtol <= 1e30 && atol >= 0 && atol <= 1e30 &&
        !fast_pass(actual, expected, 0, rtol, atol))
      return ST_OK;
    break;
  case ST_DTYPE_FLOAT64:
    if (!fast_pass(actual, expected, 1, rtol, atol))
      return ST_OK;
    break;
  case ST_DTYPE_FLOAT16:
  case ST_DTYPE_BFLOAT16:
  case ST_DTYPE_FLOAT8_E4M3FN:
  case ST_DTYPE_FLOAT8_E5M2:
    break; /* equal bits may be NaN, never close: the element pass */
  default:
    /* Integers and bool: equal bytes are equal values, which are close
     * under any tolerance (bool bytes other than 0/1 fall through to the
     * element pass, which reads them as true). */
    if (memcmp(actual->data, expected->data, actual->nbytes) == 0)
      return ST_OK;
    break;
  }
  return report(actual, expected, rtol, atol, equal_nan, msg, size);
}

st_status st__compare_exact(const st_tensor *after, const st_tensor *before,
                            char *msg, size_t size) {
  if (msg != NULL && size > 0)
    msg[0] = '\0';
  if (!same_layout(after, before)) {
    if (msg != NULL && size > 0)
      snprintf(msg, size, "input '%s': shape or dtype changed",
               before->name ? before->name : "?");
    return ST_EINVAL;
  }
  if (after->nbytes == 0 ||
      memcmp(after->data, before->data, after->nbytes) == 0)
    return ST_OK;
  const unsigned char *p = after->data, *q = before->data;
  size_t count = 0, first = 0;
  for (size_t i = 0; i < after->nbytes; i++) {
    if (p[i] != q[i]) {
      if (count++ == 0)
        first = i;
    }
  }
  if (msg != NULL && size > 0) {
    const size_t es =
        st_dtype_size(after->dtype) ? st_dtype_size(after->dtype) : 1;
    char index[ST_MAX_DIMS * 24 + 4];
    st__format_index(after, first / es, index, sizeof index);
    snprintf(msg, size,
             "input '%s' was modified by the kernel: %zu of %zu bytes "
             "differ; first at element %s",
             before->name ? before->name : "?", count, after->nbytes, index);
  }
  return ST_EMISMATCH;
}
