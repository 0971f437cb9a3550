/* SPDX-License-Identifier: MIT */
/* Argument binding of the built-in ops: the signature table (tensor and
 * scalar names, the dtypes each op accepts, which tensors it writes),
 * generated from op_list.h, and
 * st_op_check, which names the first mismatch in the call's message. Also
 * st_op_call_fail and st_shard_range, the helpers every implementation
 * (built-in or plugin) uses. Binding is checked when an implementation
 * runs, not when a scene loads, because a plugin may provide the op. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <scenetest/op.h>

#include "base/abi.h"
#include "base/op_list.h"

/* The first layout of st_op_call (ABI 2) ends with message. */
#define CALL_MIN_SIZE ST__SIZE_THROUGH(st_op_call, message)

/* Dtype classes an op accepts. */
typedef enum st__dtype_class {
  CLASS_ANY = 0,     /* every dtype, bool included */
  CLASS_NUMERIC = 1, /* float and integer dtypes, not bool */
  CLASS_FLOAT = 2    /* float32, float64, float16, bfloat16, FP8 */
} st__dtype_class;

typedef enum st__shape_rule {
  SHAPE_SAME = 0,  /* every tensor has the first one's shape */
  SHAPE_MATMUL,    /* a[M,K], b[K,N], c[M,N] */
  SHAPE_ROWS,      /* x[R,C], y[R,C] */
  SHAPE_TRANSPOSE, /* x[R,C], y[C,R] */
  SHAPE_REDUCE     /* x any shape, out one element: [] or [1] */
} st__shape_rule;

typedef struct st__op_sig {
  const char *op;
  const char *tensors[3];
  size_t n_tensors;
  const char *scalar; /* NULL: no scalar */
  st__dtype_class dtypes;
  st__shape_rule shapes;
  unsigned written; /* bit i: tensor i is written (must not be an input) */
  int widen;        /* a written tensor may be any float dtype */
} st__op_sig;

/* The built-in signatures, from the one op list. */
static const st__op_sig sigs[] = {
#define XX(name, n, t0, t1, t2, scalar, dtypes, shapes, written, read, widen,  \
           ...)                                                                \
  {#name,          {t0, t1, t2},   n,       scalar,                            \
   CLASS_##dtypes, SHAPE_##shapes, written, widen},
    ST__BUILTIN_OP_MAP(XX)
#undef XX
};

void st_op_call_init(st_op_call *call) {
  memset(call, 0, sizeof *call);
  call->size = sizeof *call;
  call->shard_count = 1;
  call->max_threads = 1;
  call->device_ns = ST_NS_NONE;
  call->copy_ns = ST_NS_NONE;
}

st_status st_op_call_fail(st_op_call *call, st_status code, const char *fmt,
                          ...) {
  if (call == NULL || call->message[0] != '\0')
    return code;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(call->message, sizeof call->message, fmt, ap);
  va_end(ap);
  for (char *p = call->message; *p; p++)
    if (*p == '\n' || *p == '\r')
      *p = ' ';
  return code;
}

void st_shard_range(size_t n, unsigned shard_index, unsigned shard_count,
                    size_t *begin, size_t *end) {
  if (shard_count == 0 || shard_index >= shard_count) {
    *begin = *end = n;
    return;
  }
  size_t base = n / shard_count, extra = n % shard_count;
  size_t i = shard_index;
  *begin = i * base + (i < extra ? i : extra);
  *end = *begin + base + (i < extra ? 1 : 0);
}

/* The dtype's name for messages: st_op_check runs before (and so also on)
 * a tensor whose dtype is out of range. */
static const char *dtype_str(st_dtype d) {
  const char *name = st_dtype_name(d);
  return name ? name : "invalid";
}

static int in_class(st_dtype d, st__dtype_class c) {
  switch (c) {
  case CLASS_ANY:
    return 1;
  case CLASS_NUMERIC:
    return d != ST_DTYPE_BOOL;
  case CLASS_FLOAT:
    return st_dtype_is_float(d);
  }
  return 0;
}

static const char *class_str(st__dtype_class c) {
  switch (c) {
  case CLASS_ANY:
    return "any dtype";
  case CLASS_NUMERIC:
    return "a float or integer dtype (not bool)";
  case CLASS_FLOAT:
    return "a float dtype (float32, float64, float16, bfloat16, "
           "float8_e4m3fn, float8_e5m2)";
  }
  return "?";
}

static const char *tname(const st_tensor *t) { return t->name ? t->name : "?"; }

static void format_shape(const st_tensor *t, char *buf, size_t size) {
  size_t len = 0;
  len += (size_t)snprintf(buf, size, "[");
  for (int d = 0; d < t->ndim && len < size; d++)
    len += (size_t)snprintf(buf + len, size - len, "%s%lld", d ? ", " : "",
                            (long long)t->shape[d]);
  if (len < size)
    snprintf(buf + len, size - len, "]");
}

static const char *plural(size_t n) { return n == 1 ? "" : "s"; }

static ST_WUR st_status check_count(st_op_call *call, const st__op_sig *s) {
  size_t want_scalars = s->scalar ? 1 : 0;
  if (call->n_tensors == s->n_tensors && call->n_scalars == want_scalars)
    return ST_OK;
  char names[96] = "";
  for (size_t i = 0; i < s->n_tensors; i++) {
    size_t len = strlen(names);
    snprintf(names + len, sizeof names - len, "%s%s", i ? ", " : "",
             s->tensors[i]);
  }
  char scalars[48] = "";
  if (s->scalar)
    snprintf(scalars, sizeof scalars, " (%s)", s->scalar);
  return st_op_call_fail(
      call, ST_EBIND,
      "op '%s': expected %zu tensor%s (%s) and %zu scalar%s%s, got %zu "
      "tensor%s and %zu scalar%s",
      s->op, s->n_tensors, plural(s->n_tensors), names, want_scalars,
      plural(want_scalars), scalars, call->n_tensors, plural(call->n_tensors),
      call->n_scalars, plural(call->n_scalars));
}

/* A tensor whose fields disagree with each other would make a kernel read
 * or write out of bounds; plugins and tests build tensors by hand. */
static ST_WUR st_status check_consistent(st_op_call *call, const st_tensor *t) {
  if ((unsigned)t->dtype >= (unsigned)ST_DTYPE_COUNT)
    return st_op_call_fail(call, ST_EBIND,
                           "op '%s': tensor '%s' has an invalid dtype (%d)",
                           call->op, tname(t), (int)t->dtype);
  if (t->ndim < 0 || t->ndim > ST_MAX_DIMS)
    return st_op_call_fail(
        call, ST_EBIND,
        "op '%s': tensor '%s' has %d dimensions (0..%d allowed)", call->op,
        tname(t), t->ndim, ST_MAX_DIMS);
  size_t numel = 1;
  for (int d = 0; d < t->ndim; d++) {
    if (t->shape[d] < 0 ||
        (numel != 0 && (uint64_t)t->shape[d] > SIZE_MAX / numel))
      return st_op_call_fail(call, ST_EBIND,
                             "op '%s': tensor '%s' has an invalid shape",
                             call->op, tname(t));
    numel *= (size_t)t->shape[d];
  }
  size_t size = st_dtype_size(t->dtype);
  if (numel != t->numel || (numel != 0 && size > SIZE_MAX / numel) ||
      t->nbytes != numel * size || (t->nbytes != 0 && t->data == NULL))
    return st_op_call_fail(call, ST_EBIND,
                           "op '%s': tensor '%s' is inconsistent (shape gives "
                           "%zu elements, numel is %zu, nbytes is %zu)",
                           call->op, tname(t), numel, t->numel, t->nbytes);
  return ST_OK;
}

static ST_WUR st_status want_2d(st_op_call *call, const st_tensor *t,
                                const char *dims) {
  if (t->ndim == 2)
    return ST_OK;
  return st_op_call_fail(call, ST_EBIND,
                         "op '%s': tensor '%s' has %d dimension%s, expected 2 "
                         "(%s)",
                         call->op, tname(t), t->ndim, plural((size_t)t->ndim),
                         dims);
}

static ST_WUR st_status check_shapes(st_op_call *call, const st__op_sig *s) {
  st_tensor *t = call->tensors;
  char got[160];
  st_status rc;
  switch (s->shapes) {
  case SHAPE_SAME:
    for (size_t i = 1; i < s->n_tensors; i++) {
      int same = t[i].ndim == t[0].ndim;
      for (int d = 0; same && d < t[0].ndim; d++)
        same = t[i].shape[d] == t[0].shape[d];
      if (!same) {
        char want[160];
        format_shape(&t[i], got, sizeof got);
        format_shape(&t[0], want, sizeof want);
        return st_op_call_fail(
            call, ST_EBIND,
            "op '%s': tensor '%s' has shape %s, expected %s (the shape of "
            "tensor '%s')",
            call->op, tname(&t[i]), got, want, tname(&t[0]));
      }
    }
    return ST_OK;
  case SHAPE_MATMUL: {
    if ((rc = want_2d(call, &t[0], "[M, K]")) != ST_OK ||
        (rc = want_2d(call, &t[1], "[K, N]")) != ST_OK ||
        (rc = want_2d(call, &t[2], "[M, N]")) != ST_OK)
      return rc;
    long long m = t[0].shape[0], k = t[0].shape[1], n = t[1].shape[1];
    if (t[1].shape[0] != k) {
      format_shape(&t[1], got, sizeof got);
      return st_op_call_fail(call, ST_EBIND,
                             "op '%s': tensor '%s' has shape %s, expected "
                             "[%lld, N] (K = %lld from tensor '%s')",
                             call->op, tname(&t[1]), got, k, k, tname(&t[0]));
    }
    if (t[2].shape[0] != m || t[2].shape[1] != n) {
      format_shape(&t[2], got, sizeof got);
      return st_op_call_fail(
          call, ST_EBIND,
          "op '%s': tensor '%s' has shape %s, expected [%lld, %lld] (M = "
          "%lld from tensor '%s', N = %lld from tensor '%s')",
          call->op, tname(&t[2]), got, m, n, m, tname(&t[0]), n, tname(&t[1]));
    }
    return ST_OK;
  }
  case SHAPE_ROWS:
  case SHAPE_TRANSPOSE: {
    if ((rc = want_2d(call, &t[0], "[R, C]")) != ST_OK ||
        (rc = want_2d(call, &t[1],
                      s->shapes == SHAPE_ROWS ? "[R, C]" : "[C, R]")) != ST_OK)
      return rc;
    long long r = t[0].shape[0], c = t[0].shape[1];
    long long w0 = s->shapes == SHAPE_ROWS ? r : c;
    long long w1 = s->shapes == SHAPE_ROWS ? c : r;
    if (t[1].shape[0] != w0 || t[1].shape[1] != w1) {
      format_shape(&t[1], got, sizeof got);
      return st_op_call_fail(call, ST_EBIND,
                             "op '%s': tensor '%s' has shape %s, expected "
                             "[%lld, %lld] (%s of tensor '%s', shape [%lld, "
                             "%lld])",
                             call->op, tname(&t[1]), got, w0, w1,
                             s->shapes == SHAPE_ROWS ? "the shape"
                                                     : "the transpose",
                             tname(&t[0]), r, c);
    }
    return ST_OK;
  }
  case SHAPE_REDUCE:
    if (t[1].numel == 1 &&
        (t[1].ndim == 0 || (t[1].ndim == 1 && t[1].shape[0] == 1)))
      return ST_OK;
    format_shape(&t[1], got, sizeof got);
    return st_op_call_fail(call, ST_EBIND,
                           "op '%s': tensor '%s' has shape %s, expected [] or "
                           "[1] (one element)",
                           call->op, tname(&t[1]), got);
  }
  return ST_OK;
}

/* An integer tensor takes the scalar as int64: a float scalar outside that
 * range (or NaN) has no value to convert to. */
static ST_WUR st_status check_scalar(st_op_call *call, const st__op_sig *s) {
  const st_scalar *sc = &call->scalars[0];
  if (sc->kind != ST_SCALAR_NUMBER)
    return st_op_call_fail(call, ST_EBIND,
                           "op '%s': scalar '%s' (%s) is given as %s; "
                           "expected {scalar: NAME, dtype, value}",
                           call->op, sc->name ? sc->name : s->scalar, s->scalar,
                           sc->kind == ST_SCALAR_INTS ? "ints" : "a string");
  if (st_dtype_is_float(call->tensors[0].dtype) || sc->is_int)
    return ST_OK;
  /* 2^63 is exact in double; the int64 range is [-2^63, 2^63). */
  if (isfinite(sc->f) && sc->f >= -9223372036854775808.0 &&
      sc->f < 9223372036854775808.0)
    return ST_OK;
  return st_op_call_fail(call, ST_EBIND,
                         "op '%s': scalar '%s' (%s) = %g does not fit int64, "
                         "needed for %s tensor '%s'",
                         call->op, sc->name ? sc->name : s->scalar, s->scalar,
                         sc->f, dtype_str(call->tensors[0].dtype),
                         tname(&call->tensors[0]));
}

st_status st_op_check(st_op_call *call) {
  const st__op_sig *s = NULL;
  /* message lies inside every layout since ABI 2, so it can say so. */
  if (call->size < CALL_MIN_SIZE)
    return st_op_call_fail(call, ST_EINVAL,
                           "st_op_call has size %zu, less than the %zu of "
                           "its first layout: initialise it with "
                           "st_op_call_init()",
                           call->size, (size_t)CALL_MIN_SIZE);
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
    if (call->op != NULL && strcmp(call->op, sigs[i].op) == 0)
      s = &sigs[i];
  if (s == NULL)
    return ST_OK;
  st_status rc = check_count(call, s);
  if (rc != ST_OK)
    return rc;
  st_tensor *t = call->tensors;
  for (size_t i = 0; i < s->n_tensors; i++)
    if ((rc = check_consistent(call, &t[i])) != ST_OK)
      return rc;
  if (!in_class(t[0].dtype, s->dtypes))
    return st_op_call_fail(
        call, ST_EBIND, "op '%s': tensor '%s' has dtype %s, expected %s",
        call->op, tname(&t[0]), dtype_str(t[0].dtype), class_str(s->dtypes));
  /* Mixed precision (docs/scene-format.md#ops): the tensors the op reads
   * share one dtype; a tensor it only writes may have any float dtype when
   * they are float, and the reference rounds once to it. */
  for (size_t i = 1; i < s->n_tensors; i++)
    if (s->widen && (s->written & (1u << i)) && st_dtype_is_float(t[0].dtype)) {
      if (!st_dtype_is_float(t[i].dtype))
        return st_op_call_fail(call, ST_EBIND,
                               "op '%s': tensor '%s' has dtype %s, expected "
                               "a float dtype (tensor '%s' is %s; the output "
                               "of float inputs may be any float dtype)",
                               call->op, tname(&t[i]), dtype_str(t[i].dtype),
                               tname(&t[0]), dtype_str(t[0].dtype));
    } else if (t[i].dtype != t[0].dtype)
      return st_op_call_fail(call, ST_EBIND,
                             "op '%s': tensor '%s' has dtype %s, expected %s "
                             "(the dtype of tensor '%s')",
                             call->op, tname(&t[i]), dtype_str(t[i].dtype),
                             dtype_str(t[0].dtype), tname(&t[0]));
  if ((rc = check_shapes(call, s)) != ST_OK)
    return rc;
  for (size_t i = 0; i < s->n_tensors; i++)
    if ((s->written & (1u << i)) && t[i].role == ST_ROLE_INPUT)
      return st_op_call_fail(call, ST_EBIND,
                             "op '%s': tensor '%s' is written by the op (as "
                             "'%s') but has role input; give it role output "
                             "or inout",
                             call->op, tname(&t[i]), s->tensors[i]);
  if (s->scalar && (rc = check_scalar(call, s)) != ST_OK)
    return rc;
  return ST_OK;
}
