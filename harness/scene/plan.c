/* SPDX-License-Identifier: MIT */
/* Plan resolution (st__plan_resolve): one case of a scene with its params
 * substituted into dtypes, shapes, init parameters, scalar values and
 * tolerances, every value checked to fit its dtype exactly, shape
 * products overflow-checked and the byte cap applied; and the default
 * tolerances per dtype. The loader calls it for every case so that
 * everything docs/scene-format.md#dtypes lists is checked at load time; the
 * runner calls it again when the case runs. */
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "scene/params.h"
#include "scene/expr.h"
#include "scene/golden_view.h"
#include "scene/plan_bound.h"
#include "scene/scene.h"
#include "scene/suggest.h"

/* ------------------------------------------------------------------ */
/* Tolerances and dtype ranges                                         */

/* Pinned from torch.testing.assert_close (torch/testing/_comparison.py,
 * _DTYPE_PRECISIONS; integers and bool compare exactly). */
void st__default_tolerance(st_dtype dtype, double *rtol, double *atol) {
  switch (dtype) {
  case ST_DTYPE_FLOAT16:
    *rtol = 1e-3;
    *atol = 1e-5;
    return;
  case ST_DTYPE_BFLOAT16:
    *rtol = 1.6e-2;
    *atol = 1e-5;
    return;
  case ST_DTYPE_FLOAT32:
    *rtol = 1.3e-6;
    *atol = 1e-5;
    return;
  case ST_DTYPE_FLOAT64:
    *rtol = 1e-7;
    *atol = 1e-7;
    return;
  /* FP8: torch.testing has no defaults for them; these are one unit in
   * the last place (0.125 = 2^-3 for e4m3fn's 3 fraction bits, 0.25 for
   * e5m2's 2) and about the smallest normal (2^-6 for e4m3fn, 2^-14 for
   * e5m2), docs/scene-format.md#compare. */
  case ST_DTYPE_FLOAT8_E4M3FN:
    *rtol = 0.125;
    *atol = 0x1p-6;
    return;
  case ST_DTYPE_FLOAT8_E5M2:
    *rtol = 0.25;
    *atol = 0x1p-14;
    return;
  default:
    *rtol = 0;
    *atol = 0;
    return;
  }
}

static int dtype_int_range(st_dtype dt, int64_t *lo, int64_t *hi) {
  switch (dt) {
  case ST_DTYPE_INT8:
    *lo = INT8_MIN, *hi = INT8_MAX;
    return 1;
  case ST_DTYPE_INT16:
    *lo = INT16_MIN, *hi = INT16_MAX;
    return 1;
  case ST_DTYPE_INT32:
    *lo = INT32_MIN, *hi = INT32_MAX;
    return 1;
  case ST_DTYPE_INT64:
    *lo = INT64_MIN, *hi = INT64_MAX;
    return 1;
  case ST_DTYPE_UINT8:
    *lo = 0, *hi = UINT8_MAX;
    return 1;
  case ST_DTYPE_UINT16:
    *lo = 0, *hi = UINT16_MAX;
    return 1;
  case ST_DTYPE_UINT32:
    *lo = 0, *hi = UINT32_MAX;
    return 1;
  case ST_DTYPE_UINT64:
    /* A scene's numbers are int64 (docs/scene-format.md#dtypes): values
     * of 2^63 and above come only from kernels and random inits. */
    *lo = 0, *hi = INT64_MAX;
    return 1;
  case ST_DTYPE_BOOL:
    *lo = 0, *hi = 1;
    return 1;
  default:
    return 0;
  }
}

/* The largest finite value of a float dtype. */
static double dtype_float_max(st_dtype dt) {
  switch (dt) {
  case ST_DTYPE_FLOAT16:
    return 65504.0;
  case ST_DTYPE_BFLOAT16:
    return 3.38953138925153547590470800371487866880e38;
  case ST_DTYPE_FLOAT32:
    return FLT_MAX;
  case ST_DTYPE_FLOAT8_E4M3FN:
    return 448.0;
  case ST_DTYPE_FLOAT8_E5M2:
    return 57344.0;
  default:
    return DBL_MAX;
  }
}

/* 1 if num is an integer (an integer literal, or an integral finite
 * double that fits int64); the integer goes to *out. */
static int num_integral(const st__num *n, int64_t *out) {
  if (n->is_int) {
    *out = n->i;
    return 1;
  }
  /* 2^63 is exact as a double; [-2^63, 2^63) is int64's range. */
  if (!isfinite(n->f) || n->f != floor(n->f) || n->f < -9223372036854775808.0 ||
      n->f >= 9223372036854775808.0)
    return 0;
  *out = (int64_t)n->f;
  return 1;
}

/* 1 if the value is representable in dt: integers must be integral and in
 * range, bool is 0 or 1, a finite float must not exceed the dtype's largest
 * finite value (it would become infinite). Non-finite floats fit float
 * dtypes: the user wrote them on purpose. */
static int num_fits(st_dtype dt, const st__num *n) {
  int64_t lo, hi, v;
  if (dtype_int_range(dt, &lo, &hi))
    return num_integral(n, &v) && v >= lo && v <= hi;
  double f = n->is_int ? (double)n->i : n->f;
  if (!isfinite(f))
    return 1;
  return fabs(f) <= dtype_float_max(dt);
}

/* What "fits" means for dt, for messages. */
static void fit_expect(st_dtype dt, char *buf, size_t size) {
  int64_t lo, hi;
  if (dt == ST_DTYPE_BOOL)
    snprintf(buf, size, "0, 1, true or false");
  else if (dtype_int_range(dt, &lo, &hi))
    snprintf(buf, size, "an integer in [%" PRId64 ", %" PRId64 "]", lo, hi);
  else if (dt == ST_DTYPE_FLOAT16 || dt == ST_DTYPE_FLOAT8_E4M3FN ||
           dt == ST_DTYPE_FLOAT8_E5M2)
    snprintf(buf, size, "a value of magnitude at most %.0f",
             dtype_float_max(dt));
  else if (dt == ST_DTYPE_BFLOAT16)
    snprintf(buf, size, "a value of magnitude at most 3.38953e+38");
  else
    snprintf(buf, size, "a value of magnitude at most %g", dtype_float_max(dt));
}

static double num_f(const st__num *n) {
  return n->is_int ? (double)n->i : n->f;
}

/* ------------------------------------------------------------------ */
/* Plan resolution                                                     */

typedef struct rctx {
  const st_scene *scene;
  const st__case *kase;
  const st__param **sorted; /* the case's params sorted by name */
  st__plan_errs err;
} rctx;

static int param_cmp(const void *a, const void *b) {
  const st__param *const *pa = a, *const *pb = b;
  return strcmp((*pa)->name, (*pb)->name);
}

static const st__param *param_find(const rctx *c, const char *name) {
  size_t lo = 0, hi = c->kase->n_params;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int r = strcmp(name, c->sorted[mid]->name);
    if (r == 0)
      return c->sorted[mid];
    if (r < 0)
      hi = mid;
    else
      lo = mid + 1;
  }
  return NULL;
}

/* " in case 'x'" when a param was involved, so that messages of the same
 * problem in several cases stay distinct only when they really differ
 * (the loader drops exact duplicates). */
static const char *in_case(const rctx *c, int dep, char *buf, size_t size) {
  if (!dep) {
    buf[0] = '\0';
    return buf;
  }
  snprintf(buf, size, " in case '%s'", c->kase->name);
  return buf;
}

/* Resolves a number, a param name or an expression over params
 * (harness/scene/params.c) in domain. Returns 0 on success. */
static int resolve_num(rctx *c, const st__val *v, st__expr_domain dom,
                       const char *what, st__num *out, int *dep) {
  st__val_error e;
  if (v->kind == ST__VAL_NUM) {
    *out = v->num;
    return 0;
  }
  if (st__val_eval(c->kase, v, dom, what, out, dep, &e) == 0)
    return 0;
  st__plan_err(&c->err, e.line, e.column, "%s", e.message);
  return -1;
}

/* The list param a whole-list field names (shape: DIMS), or NULL after
 * the error. */
static const st__param *resolve_list(rctx *c, const st__val *v,
                                     const char *what) {
  const st__param *p;
  st__val_error e;
  if (st__val_list(c->kase, v, what, &p, &e) == 0)
    return p;
  st__plan_err(&c->err, e.line, e.column, "%s", e.message);
  return NULL;
}

/* Room for n resolved items of size bytes (at least one), or NULL with
 * the plan out of memory. */
static void *items_alloc(rctx *c, size_t n, size_t size) {
  void *p = malloc((n ? n : 1) * size);
  if (p == NULL)
    c->err.oom = 1;
  return p;
}

/* A whole-list field (values, ints): when ref names a list param, its
 * items into *items and *n and 1; 0 when it names none (*items and *n
 * untouched: the literal list); -1 after the error. */
static int list_items(rctx *c, const st__val *ref, const char *what,
                      const st__val **items, size_t *n) {
  if (ref->kind != ST__VAL_NAME)
    return 0;
  const st__param *p = resolve_list(c, ref, what);
  if (p == NULL)
    return -1;
  *items = p->list;
  *n = p->n_list;
  return 1;
}

/* Values of an integer dtype are computed in int64, of a float dtype in
 * double (docs/scene-format.md#params-expressions-and-lists). */
static st__expr_domain dom_of(st_dtype dt) {
  return st_dtype_is_float(dt) ? ST__EXPR_FLOAT : ST__EXPR_INT;
}

#define DTYPE_LIST                                                             \
  "float32, float64, float16, bfloat16, int8, int16, int32, int64, uint8, "    \
  "bool, uint16, uint32, uint64, float8_e4m3fn, float8_e5m2"

static int resolve_dtype(rctx *c, const st__arg *a, st_dtype *out, int *dep) {
  const st__val *v = &a->dtype;
  if (v->kind == ST__VAL_NAME && st_dtype_parse(v->name, out) == ST_OK)
    return 0;
  if (v->kind != ST__VAL_NAME) {
    st__plan_err(&c->err, v->line, v->column,
                 "dtype of '%s': expected one of: " DTYPE_LIST, a->name);
    return -1;
  }
  *dep = 1;
  const st__param *p = param_find(c, v->name);
  if (p == NULL) {
    /* docs/scene-format.md: a misspelt dtype word gets its nearest. */
    const char *names[ST_DTYPE_COUNT];
    for (int i = 0; i < ST_DTYPE_COUNT; i++)
      names[i] = st_dtype_name((st_dtype)i);
    const char *dym = st__suggest(v->name, names, ST_DTYPE_COUNT);
    if (dym != NULL) {
      st__plan_err(&c->err, v->line, v->column,
                   "dtype '%s' of '%s' is neither a dtype nor a param of case "
                   "'%s'; did you mean '%s'?",
                   v->name, a->name, c->kase->name, dym);
      return -1;
    }
    st__plan_err(
        &c->err, v->line, v->column,
        "dtype '%s' of '%s' is neither a dtype nor a param of case '%s'; "
        "expected one of: " DTYPE_LIST,
        v->name, a->name, c->kase->name);
    return -1;
  }
  if (!p->is_str) {
    char nb[160];
    if (p->is_list)
      snprintf(nb, sizeof nb, "a list");
    else if (p->expr.kind == ST__VAL_NAME)
      snprintf(nb, sizeof nb, "the expression '%.100s'", p->expr.name);
    else
      st__num_str(&p->num, nb, sizeof nb);
    st__plan_err(
        &c->err, v->line, v->column,
        "dtype of '%s': param '%s' of case '%s' is %s; expected a dtype "
        "name, one of: " DTYPE_LIST,
        a->name, v->name, c->kase->name, nb);
    return -1;
  }
  if (st_dtype_parse(p->str, out) != ST_OK) {
    st__plan_err(&c->err, v->line, v->column,
                 "dtype of '%s': param '%s' of case '%s' is '%s'; expected one "
                 "of: " DTYPE_LIST,
                 a->name, v->name, c->kase->name, p->str);
    return -1;
  }
  return 0;
}

/* Checks that n fits dt; reports "WHAT V of 'ARG' does not fit DTYPE". */
static int check_fits(rctx *c, const st__val *where, st_dtype dt,
                      const st__num *n, int dep, const char *what,
                      const char *arg) {
  char nb[64], eb[96], cb[200];
  if (num_fits(dt, n))
    return 0;
  st__num_str(n, nb, sizeof nb);
  fit_expect(dt, eb, sizeof eb);
  st__plan_err(&c->err, where->line, where->column,
               "%s %s of '%s' does not fit %s%s; expected %s", what, nb, arg,
               st_dtype_name(dt), in_case(c, dep, cb, sizeof cb), eb);
  return -1;
}

static int resolve_shape(rctx *c, const st__arg *a, st__rarg *r, int *dep) {
  uint64_t numel = 1;
  int overflow = 0, bad = 0;
  const st__val *dims = a->shape;
  size_t ndim = a->ndim;
  if (a->shape_list.kind == ST__VAL_NAME) {
    const st__param *p = resolve_list(c, &a->shape_list, "shape");
    if (p == NULL)
      return -1;
    *dep = 1;
    if (p->n_list > ST_MAX_DIMS) {
      st__plan_err(
          &c->err, a->shape_list.line, a->shape_list.column,
          "shape of '%s': list param '%s' of case '%s' has %zu entries; "
          "expected at most %d dimensions",
          a->name, p->name, c->kase->name, p->n_list, ST_MAX_DIMS);
      return -1;
    }
    dims = p->list;
    ndim = p->n_list;
  }
  r->ndim = (int)ndim;
  for (size_t d = 0; d < ndim; d++) {
    const st__val *v = &dims[d];
    st__num n;
    int64_t dim;
    int pdep = a->shape_list.kind == ST__VAL_NAME;
    if (resolve_num(c, v, ST__EXPR_INT, "shape", &n, &pdep) != 0) {
      bad = 1;
      continue;
    }
    *dep |= pdep;
    if (!n.is_int || n.i < 0) {
      char nb[64], cb[200];
      st__num_str(&n, nb, sizeof nb);
      /* A float such as 4.0 prints as "4": say why it is not an integer. */
      st__plan_err(
          &c->err, v->line, v->column,
          "dimension %zu of '%s' is %s%s%s; expected a non-negative integer", d,
          a->name, nb,
          !n.is_int && isfinite(n.f) && floor(n.f) == n.f ? " (a float)" : "",
          in_case(c, pdep, cb, sizeof cb));
      bad = 1;
      continue;
    }
    dim = n.i;
    r->shape[d] = dim;
    if (__builtin_mul_overflow(numel, (uint64_t)dim, &numel))
      overflow = 1;
  }
  if (bad)
    return -1;
  /* A zero dimension makes an empty tensor wherever it stands: the
   * product is 0 even if the dimensions before it overflowed. */
  for (int d = 0; d < r->ndim; d++)
    if (r->shape[d] == 0)
      numel = 0, overflow = 0;
  size_t esize = st_dtype_size(r->dtype);
  uint64_t nbytes = 0;
  if (overflow || numel > (uint64_t)INT64_MAX || numel > SIZE_MAX ||
      __builtin_mul_overflow(numel, (uint64_t)esize, &nbytes) ||
      nbytes > SIZE_MAX) {
    char cb[200];
    st__plan_err(&c->err, a->line, a->column,
                 "shape of '%s' has too many elements: the product of its "
                 "dimensions overflows%s",
                 a->name, in_case(c, *dep, cb, sizeof cb));
    return -1;
  }
  r->numel = (size_t)numel;
  r->nbytes = (size_t)nbytes;
  return 0;
}

/* An init's two numbers, in->a into r->a and in->b into r->b (what_a and
 * what_b name them in messages), each resolved even when the other
 * fails, so that both errors are told; -1 if either failed. */
static int resolve_pair(rctx *c, const st__init *in, st__expr_domain dom,
                        const char *what_a, const char *what_b, st__rarg *r,
                        int *da, int *db) {
  int rc = 0;
  if (resolve_num(c, &in->a, dom, what_a, &r->a, da) != 0)
    rc = -1;
  if (resolve_num(c, &in->b, dom, what_b, &r->b, db) != 0)
    rc = -1;
  return rc;
}

/* One function per init form; each reports its own errors and returns
 * 0 when the init fits the tensor. dep says whether a param was already
 * involved (the dtype or the shape named one). */

static int init_fill(rctx *c, const st__arg *a, st__rarg *r, int dep) {
  const st__init *in = &a->init;
  if (resolve_num(c, &in->a, dom_of(r->dtype), "fill", &r->a, &dep) != 0)
    return -1;
  return check_fits(c, &in->a, r->dtype, &r->a, dep, "fill value", a->name);
}

/* The last element of a range, computed exactly for integer dtypes. */
static int range_last(rctx *c, const st__arg *a, const st__rarg *r, int da,
                      int db, st__num *last) {
  const st__init *in = &a->init;
  st_dtype dt = r->dtype;
  char cb[200], nb[64], eb[96];
  int64_t s = 0, t = 0, lo, hi;
  if (!dtype_int_range(dt, &lo, &hi)) {
    last->is_int = 0;
    last->f = num_f(&r->a) + num_f(&r->b) * (double)(r->numel - 1);
    return 0;
  }
  if (!num_integral(&r->b, &t)) {
    st__num_str(&r->b, nb, sizeof nb);
    st__plan_err(
        &c->err, in->b.line, in->b.column,
        "range step %s of '%s' is not an integer%s; expected an integer "
        "step for %s",
        nb, a->name, in_case(c, db, cb, sizeof cb), st_dtype_name(dt));
    return -1;
  }
  (void)num_integral(&r->a, &s);
  int64_t prod;
  last->is_int = 1;
  if (__builtin_mul_overflow(t, (int64_t)(r->numel - 1), &prod) ||
      __builtin_add_overflow(s, prod, &last->i)) {
    fit_expect(dt, eb, sizeof eb);
    st__plan_err(
        &c->err, in->line, in->column,
        "range of '%s' overflows before its last element%s; expected every "
        "element to be %s",
        a->name, in_case(c, da | db, cb, sizeof cb), eb);
    return -1;
  }
  last->f = (double)last->i;
  return 0;
}

static int init_range(rctx *c, const st__arg *a, st__rarg *r, int dep) {
  const st__init *in = &a->init;
  int da = dep, db = dep;
  char cb[200], nb[64], eb[96];
  if (resolve_pair(c, in, dom_of(r->dtype), "range start", "range step", r, &da,
                   &db) != 0)
    return -1;
  if (check_fits(c, &in->a, r->dtype, &r->a, da, "range start", a->name) != 0)
    return -1;
  if (r->numel <= 1)
    return 0;
  st__num last;
  if (range_last(c, a, r, da, db, &last) != 0)
    return -1;
  if (num_fits(r->dtype, &last))
    return 0;
  st__num_str(&last, nb, sizeof nb);
  fit_expect(r->dtype, eb, sizeof eb);
  st__plan_err(
      &c->err, in->line, in->column,
      "range of '%s' ends at %s, which does not fit %s%s; expected every "
      "element to be %s",
      a->name, nb, st_dtype_name(r->dtype), in_case(c, da | db, cb, sizeof cb),
      eb);
  return -1;
}

/* uniform: [LO, HI) and normal: [MEAN, STD], float dtypes only. */
static int init_float_random(rctx *c, const st__arg *a, st__rarg *r, int dep) {
  const st__init *in = &a->init;
  st_dtype dt = r->dtype;
  int da = dep, db = dep;
  char cb[200], nb[64];
  const char *form = in->kind == ST__INIT_UNIFORM ? "uniform" : "normal";
  if (!st_dtype_is_float(dt)) {
    st__plan_err(
        &c->err, in->line, in->column,
        "%s init of '%s' needs a float dtype, got %s%s; expected one of: "
        "float32, float64, float16, bfloat16, float8_e4m3fn, float8_e5m2",
        form, a->name, st_dtype_name(dt), in_case(c, dep, cb, sizeof cb));
    return -1;
  }
  if (resolve_pair(c, in, ST__EXPR_FLOAT, form, form, r, &da, &db) != 0)
    return -1;
  double x = num_f(&r->a), y = num_f(&r->b);
  if (in->kind == ST__INIT_UNIFORM) {
    if (check_fits(c, &in->a, dt, &r->a, da, "uniform low", a->name) != 0 ||
        check_fits(c, &in->b, dt, &r->b, db, "uniform high", a->name) != 0)
      return -1;
    if (!isfinite(x) || !isfinite(y) || !(x < y)) {
      st__plan_err(&c->err, in->line, in->column,
                   "uniform bounds of '%s' must be finite with LO < HI%s",
                   a->name, in_case(c, da | db, cb, sizeof cb));
      return -1;
    }
    return 0;
  }
  if (check_fits(c, &in->a, dt, &r->a, da, "normal mean", a->name) != 0)
    return -1;
  if (!isfinite(x) || !isfinite(y) || !(y >= 0)) {
    st__num_str(&r->b, nb, sizeof nb);
    st__plan_err(
        &c->err, in->line, in->column,
        "normal init of '%s' has std %s%s; expected a finite mean and a "
        "finite STD >= 0",
        a->name, nb, in_case(c, da | db, cb, sizeof cb));
    return -1;
  }
  return 0;
}

static int init_randint(rctx *c, const st__arg *a, st__rarg *r, int dep) {
  const st__init *in = &a->init;
  st_dtype dt = r->dtype;
  int da = dep, db = dep;
  char cb[200], nb[64], eb[96];
  int64_t lo, hi;
  if (resolve_pair(c, in, ST__EXPR_INT, "randint", "randint", r, &da, &db) != 0)
    return -1;
  if (!num_integral(&r->a, &lo) || !num_integral(&r->b, &hi)) {
    st__plan_err(&c->err, in->line, in->column,
                 "randint bounds of '%s' must be integers%s", a->name,
                 in_case(c, da | db, cb, sizeof cb));
    return -1;
  }
  if (!(lo < hi)) {
    st__plan_err(&c->err, in->line, in->column,
                 "randint bounds of '%s' are [%" PRId64 ", %" PRId64
                 ")%s; expected LO < HI (HI is exclusive)",
                 a->name, lo, hi, in_case(c, da | db, cb, sizeof cb));
    return -1;
  }
  /* HI is exclusive, as in torch.randint: [0, 256) is every uint8 value,
   * so the largest value drawn, HI - 1, is what must fit. */
  st__num top = {1, hi - 1, (double)(hi - 1)};
  st__num bot = {1, lo, (double)lo};
  if (check_fits(c, &in->a, dt, &bot, da, "randint low", a->name) != 0)
    return -1;
  if (!num_fits(dt, &top)) {
    st__num_str(&r->b, nb, sizeof nb);
    fit_expect(dt, eb, sizeof eb);
    st__plan_err(
        &c->err, in->b.line, in->b.column,
        "randint high %s of '%s' is exclusive, so values reach %" PRId64
        ", which does not fit %s%s; expected HI - 1 to be %s",
        nb, a->name, hi - 1, st_dtype_name(dt), in_case(c, db, cb, sizeof cb),
        eb);
    return -1;
  }
  r->a = bot;
  r->b.is_int = 1;
  r->b.i = hi;
  r->b.f = (double)hi;
  return 0;
}

static int init_values(rctx *c, const st__arg *a, st__rarg *r, int dep) {
  const st__init *in = &a->init;
  st_dtype dt = r->dtype;
  int rc = 0;
  char cb[200], nb[64], eb[96];
  const st__val *vals = in->values;
  size_t n = in->n_values;
  const int listed = list_items(c, &in->values_list, "values", &vals, &n);
  if (listed < 0)
    return -1;
  dep |= listed;
  if (n != r->numel) {
    st__plan_err(
        &c->err, in->line, in->column,
        "values of '%s' has %zu entries%s; expected %zu (the element count "
        "of its shape)",
        a->name, n, in_case(c, dep, cb, sizeof cb), r->numel);
    return -1;
  }
  if ((r->values = items_alloc(c, n, sizeof *r->values)) == NULL)
    return -1;
  r->n_values = n;
  size_t bad = 0, first_bad = 0;
  for (size_t i = 0; i < n; i++) {
    const st__val *v = &vals[i];
    int vd = dep;
    if (v->kind == ST__VAL_NUM) {
      r->values[i] = v->num;
    } else if (resolve_num(c, v, dom_of(dt), "values", &r->values[i], &vd) !=
               0) {
      rc = -1;
      continue;
    }
    if (!num_fits(dt, &r->values[i]) && bad++ == 0)
      first_bad = i;
  }
  if (bad) {
    /* One error per list, not one per entry: a list of a million entries
     * must not turn into a million lines. */
    const st__val *v = &vals[first_bad];
    st__num_str(&r->values[first_bad], nb, sizeof nb);
    fit_expect(dt, eb, sizeof eb);
    st__plan_err(
        &c->err, v->line, v->column,
        "values[%zu] of '%s' is %s, which does not fit %s%s; expected %s "
        "(%zu of %zu values do not fit)",
        first_bad, a->name, nb, st_dtype_name(dt),
        in_case(c, dep, cb, sizeof cb), eb, bad, n);
    return -1;
  }
  return rc;
}

static int init_file(rctx *c, const st__arg *a, st__rarg *r, int dep) {
  const st__init *in = &a->init;
  struct stat sb;
  char cb[200];
  const char *shown = in->path_given ? in->path_given : in->path;
  r->path = in->path;
  if (in->path == NULL || stat(in->path, &sb) != 0) {
    st__plan_err(&c->err, in->line, in->column, "cannot open file '%s': %s",
                 shown, in->path ? strerror(errno) : "no path");
    return -1;
  }
  if (S_ISDIR(sb.st_mode)) {
    st__plan_err(&c->err, in->line, in->column,
                 "file '%s' is a directory; expected a regular file", shown);
    return -1;
  }
  if (!S_ISREG(sb.st_mode)) {
    st__plan_err(&c->err, in->line, in->column,
                 "file '%s' is not a regular file; expected a regular file",
                 shown);
    return -1;
  }
  if ((uint64_t)sb.st_size != (uint64_t)r->nbytes) {
    st__plan_err(
        &c->err, in->line, in->column,
        "file '%s' has %lld bytes%s; expected %zu (the byte size of '%s')",
        shown, (long long)sb.st_size, in_case(c, dep, cb, sizeof cb), r->nbytes,
        a->name);
    return -1;
  }
  return 0;
}

static int resolve_init(rctx *c, const st__arg *a, st__rarg *r, int dep) {
  r->init = a->init.kind;
  switch (a->init.kind) {
  case ST__INIT_ZEROS:
  case ST__INIT_ONES:
    return 0;
  case ST__INIT_FILL:
    return init_fill(c, a, r, dep);
  case ST__INIT_RANGE:
    return init_range(c, a, r, dep);
  case ST__INIT_UNIFORM:
  case ST__INIT_NORMAL:
    return init_float_random(c, a, r, dep);
  case ST__INIT_RANDINT:
    return init_randint(c, a, r, dep);
  case ST__INIT_VALUES:
    return init_values(c, a, r, dep);
  case ST__INIT_FILE:
    return init_file(c, a, r, dep);
  case ST__INIT_EXACT:
    return 0; /* its range comes from the op: st__plan_bound */
  }
  return 0;
}

/* A tolerance that names a param
 * (docs/scene-format.md#params-expressions-and-lists), for this case. */
static int tol_param(rctx *c, const st__val *v, const char *key, double *out) {
  st__num n;
  int dep = 0;
  char what[64];
  snprintf(what, sizeof what, "%s", key);
  if (resolve_num(c, v, ST__EXPR_FLOAT, what, &n, &dep) != 0)
    return -1;
  double f = num_f(&n);
  if (!isfinite(f) || f < 0) {
    char nb[64];
    st__num_str(&n, nb, sizeof nb);
    st__plan_err(
        &c->err, v->line, v->column,
        "%s: %s '%s' of case '%s' is %s; expected a finite number >= 0", key,
        st__expr_is_name(v->name) ? "param" : "expression", v->name,
        c->kase->name, nb);
    return -1;
  }
  *out = f;
  return 0;
}

/* One of rtol/atol: tensor > case > scene > the dtype's default. */
static int pick_tol(rctx *c, int a_has, double a_val, const st__val *a_par,
                    int k_has, double k_val, int s_has, double s_val,
                    const st__val *s_par, const char *key, double *out) {
  if (a_has) {
    *out = a_val;
    return 0;
  }
  if (a_par->kind == ST__VAL_NAME)
    return tol_param(c, a_par, key, out);
  if (k_has) {
    *out = k_val;
    return 0;
  }
  if (s_has) {
    *out = s_val;
    return 0;
  }
  if (s_par->kind == ST__VAL_NAME)
    return tol_param(c, s_par, key, out);
  return 0;
}

static int resolve_tolerance(rctx *c, const st__arg *a, st__rarg *r) {
  const st_scene *s = c->scene;
  const st__case *k = c->kase;
  int rc = 0;
  st__default_tolerance(r->dtype, &r->rtol, &r->atol);
  rc |= pick_tol(c, a->has_rtol, a->rtol, &a->rtol_param, k->has_rtol, k->rtol,
                 s->has_rtol, s->rtol, &s->rtol_param, "rtol", &r->rtol);
  rc |= pick_tol(c, a->has_atol, a->atol, &a->atol_param, k->has_atol, k->atol,
                 s->has_atol, s->atol, &s->atol_param, "atol", &r->atol);
  r->equal_nan = a->equal_nan >= 0   ? a->equal_nan
                 : k->equal_nan >= 0 ? k->equal_nan
                                     : s->equal_nan;
  return rc;
}

/* {scalar, ints: [...]} and {scalar, string: S} (docs/torch.md#aten-ops): ints
 * are integers (or params holding one); both carry dtype int64. */
static int resolve_scalar_form(rctx *c, const st__arg *a, st__rarg *r) {
  r->dtype = ST_DTYPE_INT64;
  r->string = a->string;
  if (a->scalar_kind != ST_SCALAR_INTS)
    return 0;
  const st__val *ints = a->ints;
  size_t n = a->n_ints;
  if (list_items(c, &a->ints_list, "ints", &ints, &n) < 0)
    return -1;
  if ((r->ints = items_alloc(c, n, sizeof *r->ints)) == NULL)
    return -1;
  r->n_ints = n;
  for (size_t i = 0; i < n; i++) {
    st__num v;
    int dep = 0;
    if (resolve_num(c, &ints[i], ST__EXPR_INT, "ints", &v, &dep) != 0)
      return -1;
    if (!v.is_int) {
      st__plan_err(&c->err, ints[i].line, ints[i].column,
                   "ints of '%s': %g is not an integer; expected integers",
                   a->name, v.f);
      return -1;
    }
    r->ints[i] = v.i;
  }
  return 0;
}

/* `expected:` (docs/scene-format.md): an init of the tensor's own dtype
 * and shape, resolved as its init is, into r->expected. */
static int resolve_expected(rctx *c, const st__arg *a, st__rarg *r, int dep) {
  st__arg as_init = *a;
  st__rarg *x = malloc(sizeof *x);
  if (x == NULL) {
    c->err.oom = 1;
    return -1;
  }
  *x = *r;
  x->values = NULL;
  x->n_values = 0;
  x->ints = NULL;
  x->expected = NULL;
  r->expected = x;
  as_init.init = a->expected;
  return resolve_init(c, &as_init, x, dep);
}

static int resolve_arg(rctx *c, const st__arg *a, st__rarg *r) {
  int dep = 0;
  r->arg = a;
  r->name = a->name;
  r->is_tensor = a->is_tensor;
  r->role = a->role;
  r->compare = a->compare;
  /* A scratch arg takes no init: it is always poisoned. */
  r->poison = (a->role == ST_ROLE_OUTPUT || a->role == ST_ROLE_SCRATCH) &&
              !a->init.given;
  r->scalar_kind = a->scalar_kind;
  if (!a->is_tensor && a->scalar_kind != ST_SCALAR_NUMBER)
    return resolve_scalar_form(c, a, r);
  if (resolve_dtype(c, a, &r->dtype, &dep) != 0)
    return -1;
  if (resolve_tolerance(c, a, r) != 0)
    return -1;
  if (!a->is_tensor) {
    int vd = dep;
    if (resolve_num(c, &a->value, dom_of(r->dtype), "value", &r->value, &vd) !=
        0)
      return -1;
    return check_fits(c, &a->value, r->dtype, &r->value, vd, "value", a->name);
  }
  if (resolve_shape(c, a, r, &dep) != 0)
    return -1;
  if (resolve_init(c, a, r, dep) != 0)
    return -1;
  return a->has_expected ? resolve_expected(c, a, r, dep) : 0;
}

st_status st__plan_resolve(const st_scene *scene, size_t case_index,
                           uint64_t max_arg_bytes, st__plan *out,
                           st_error_list *errors) {
  rctx c;
  st_status rc = ST_OK;
  memset(out, 0, sizeof *out);
  memset(&c, 0, sizeof c);
  if (case_index >= scene->n_cases)
    return ST_EINVAL;
  c.scene = scene;
  c.kase = &scene->cases[case_index];
  c.err.file = scene->file;
  c.err.errors = errors;
  c.err.one_line = 1;
  out->scene = scene;
  out->kase = c.kase;

  if (c.kase->n_params) {
    c.sorted = malloc(c.kase->n_params * sizeof *c.sorted);
    if (c.sorted == NULL)
      return ST_ENOMEM;
    for (size_t i = 0; i < c.kase->n_params; i++)
      c.sorted[i] = &c.kase->params[i];
    qsort(c.sorted, c.kase->n_params, sizeof *c.sorted, param_cmp);
  }
  out->args = st__zalloc(scene->n_args ? scene->n_args : 1, sizeof *out->args);
  if (out->args == NULL) {
    rc = ST_ENOMEM;
    goto out;
  }
  out->n_args = scene->n_args;
  uint64_t total = 0;
  int total_overflow = 0, skipped = 0;
  for (size_t i = 0; i < scene->n_args; i++) {
    const st__arg *a = &scene->args[i];
    if (a->invalid) {
      /* The loader already reported this arg; its fields may be partial.
       * The byte total would be partial too, so no cap check. */
      skipped = 1;
      continue;
    }
    if (resolve_arg(&c, a, &out->args[i]) != 0)
      continue;
    if (a->is_tensor) {
      out->n_tensors++;
      if (__builtin_add_overflow(total, (uint64_t)out->args[i].nbytes, &total))
        total_overflow = 1;
    }
  }
  out->total_bytes = total;
  if (c.err.n_errors == 0 && !skipped) {
    /* tolerance: bound and init: exact (scene/plan_bound.h). */
    const int nb = st__plan_bound(scene, c.kase, out, errors);
    if (nb < 0)
      c.err.oom = 1;
    else
      c.err.n_errors += nb;
  }
  if (c.err.n_errors == 0 && !skipped &&
      (total_overflow || total > max_arg_bytes))
    st__plan_err(&c.err, c.kase->line, c.kase->column,
                 "case '%s' declares %s%" PRIu64
                 " bytes of tensors, over the limit of %" PRIu64
                 " bytes; raise the limit with --max-arg-bytes",
                 c.kase->name, total_overflow ? "more than " : "",
                 total_overflow ? UINT64_MAX : total, max_arg_bytes);
  if (c.err.oom)
    rc = ST_ENOMEM;
  else if (c.err.n_errors || skipped)
    rc = ST_ELOAD;
out:
  free(c.sorted);
  if (rc != ST_OK)
    st__plan_free(out);
  return rc;
}

static int same_val(const st__val *a, const st__val *b) {
  if (a->kind != b->kind)
    return 0;
  if (a->kind == ST__VAL_NONE)
    return 1;
  if (a->line != b->line || a->column != b->column)
    return 0;
  if (a->kind == ST__VAL_NAME)
    return strcmp(a->name, b->name) == 0;
  return a->kind != ST__VAL_NUM ||
         (a->num.is_int == b->num.is_int && a->num.i == b->num.i &&
          memcmp(&a->num.f, &b->num.f, sizeof a->num.f) == 0);
}

/* Keep in step with what rctx's users read of c->kase: its params
 * through param_find, and resolve_tolerance's fields. */
int st__plan_same_inputs(const st_scene *scene, size_t a, size_t b) {
  const st__case *x = &scene->cases[a], *y = &scene->cases[b];
  if (x->n_params != y->n_params || x->has_rtol != y->has_rtol ||
      x->has_atol != y->has_atol || x->equal_nan != y->equal_nan ||
      (x->has_rtol && memcmp(&x->rtol, &y->rtol, sizeof x->rtol) != 0) ||
      (x->has_atol && memcmp(&x->atol, &y->atol, sizeof x->atol) != 0) ||
      !st__tolspec_same(&x->tol, &y->tol) || !st__golden_view_same(scene, x, y))
    return 0;
  for (size_t i = 0; i < x->n_params; i++) {
    const st__param *p = &x->params[i], *q = &y->params[i];
    /* memcmp, not ==: -0.0 and 0.0 print apart, and a NaN is itself. */
    if (p->name == NULL || q->name == NULL || strcmp(p->name, q->name) != 0 ||
        p->is_str != q->is_str)
      return 0;
    if (p->is_str ? strcmp(p->str, q->str) != 0
                  : p->num.is_int != q->num.is_int || p->num.i != q->num.i ||
                        memcmp(&p->num.f, &q->num.f, sizeof p->num.f) != 0)
      return 0;
    /* An expression or a list resolves alike only from the same text at
     * the same place (its messages carry the position). */
    if (!same_val(&p->expr, &q->expr) || p->is_list != q->is_list ||
        p->n_list != q->n_list)
      return 0;
    for (size_t j = 0; j < p->n_list; j++)
      if (!same_val(&p->list[j], &q->list[j]))
        return 0;
  }
  return 1;
}

void st__plan_free(st__plan *plan) {
  if (plan == NULL)
    return;
  if (plan->args) {
    for (size_t i = 0; i < plan->n_args; i++) {
      free(plan->args[i].values);
      free(plan->args[i].ints);
      if (plan->args[i].expected != NULL)
        free(plan->args[i].expected->values);
      free(plan->args[i].expected);
    }
    free(plan->args);
  }
  memset(plan, 0, sizeof *plan);
}
