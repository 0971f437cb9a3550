/* SPDX-License-Identifier: MIT */
/* `tolerance: bound` and `init: exact` in a case's plan
 * (scene/plan_bound.h; docs/scene-format.md#the-error-bound and
 * #exact-inputs). The op is the scene's golden op, its tensors in the
 * order the golden binds them (scene/golden_view.h); the arithmetic is
 * base/bound.c's, each op's models its columns of base/op_list.h. A plan
 * whose shapes do not fit the op is left alone: the binding check
 * (ops/validate.c) reports that. */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bound.h"
#include "base/op_list.h"
#include "scene/golden_view.h"
#include "scene/plan_bound.h"

typedef struct bctx {
  const st_scene *scene;
  const st__case *kase;
  st__plan *plan;
  st__plan_errs err;
} bctx;

void st__plan_err(st__plan_errs *c, int line, int column, const char *fmt,
                  ...) {
  st_error e;
  va_list ap;
  c->n_errors++;
  if (c->errors == NULL)
    return;
  st_error_clear(&e);
  st_error_set_at(&e, ST_ELOAD, c->file, line, column, "%s", "");
  va_start(ap, fmt);
  vsnprintf(e.message, sizeof e.message, fmt, ap);
  va_end(ap);
  for (char *p = e.message; c->one_line && *p; p++)
    if (*p == '\n' || *p == '\r')
      *p = ' ';
  if (st_error_list_add(c->errors, &e) != ST_OK)
    c->oom = 1;
}

/* The shape rules of base/op_list.h that say where n comes from. */
typedef enum shape_rule {
  SHAPES_SAME,
  SHAPES_MATMUL, /* a[M,K]: n is K */
  SHAPES_ROWS,   /* x[R,C]: softmax's n is at least C + 4 */
  SHAPES_TRANSPOSE,
  SHAPES_REDUCE /* n is x's element count */
} shape_rule;

/* Each built-in op's columns the bound reads, from the one op list. */
typedef struct bound_op {
  const char *op;
  unsigned written; /* bit i: tensor i is written */
  unsigned read;    /* bit i: tensor i is read */
  shape_rule shapes;
  st__bound_n_model n;
  st__bound_r_model r;
} bound_op;

static const bound_op builtin[] = {
#define XX(name, n_tensors, t0, t1, t2, scalar, dtypes, shapes, written, read, \
           widen, flops, per, bound_n, exact_r, ...)                           \
  {#name,                                                                      \
   written,                                                                    \
   read,                                                                       \
   SHAPES_##shapes,                                                            \
   ST__BOUND_N_##bound_n,                                                      \
   ST__BOUND_R_##exact_r},
    ST__BUILTIN_OP_MAP(XX)
#undef XX
};

/* The golden op's tensors (plan args, in the golden's order), the first
 * scalar, which one it writes, and its accumulation input. */
typedef struct opview {
  const char *op;      /* NULL: the golden is not a built-in op */
  const bound_op *row; /* op's row */
  st__rarg *t[3];
  size_t nt;
  const st__rarg *scalar;
  int out;       /* index into t of the (first) written tensor */
  unsigned read; /* bit i: t[i] is read */
  uint64_t n;    /* matmul K, reduce_sum the element count, else 0 */
  int unbound;   /* a built-in op whose tensors do not bind */
} opview;

static int op_view(bctx *c, opview *v) {
  const st_scene *s = c->scene;
  size_t idx_small[16], *idx = idx_small;
  memset(v, 0, sizeof *v);
  if (s->program != NULL || s->golden == NULL)
    return 0;
  for (size_t i = 0; i < sizeof builtin / sizeof builtin[0]; i++)
    if (strcmp(s->golden, builtin[i].op) == 0)
      v->row = &builtin[i], v->op = builtin[i].op;
  if (v->op == NULL)
    return 0;
  if (s->n_args > 16 && (idx = malloc(s->n_args * sizeof *idx)) == NULL) {
    c->err.oom = 1;
    return -1;
  }
  const size_t m = st__golden_view(s, c->kase, idx);
  for (size_t i = 0; i < m; i++) {
    if (idx[i] >= c->plan->n_args)
      continue;
    st__rarg *r = &c->plan->args[idx[i]];
    if (r->is_tensor && v->nt < 3)
      v->t[v->nt++] = r;
    else if (!r->is_tensor && v->scalar == NULL)
      v->scalar = r;
  }
  if (idx != idx_small)
    free(idx);
  v->out = 0;
  while (v->out < 3 && !(v->row->written & (1u << v->out)))
    v->out++;
  v->read = v->row->read & 7u;
  if ((size_t)v->out >= v->nt || (v->read >> v->nt) != 0) {
    v->op = NULL; /* the binding check says what is missing */
    v->unbound = 1;
    return 0;
  }
  if (v->row->shapes == SHAPES_MATMUL && v->t[0]->ndim == 2)
    v->n = (uint64_t)v->t[0]->shape[1];
  else if (v->row->shapes == SHAPES_REDUCE)
    v->n = v->t[0]->numel;
  return 0;
}

static int atol_given(const st_scene *s, const st__case *k, const st__arg *a) {
  return a->has_atol || a->atol_param.kind == ST__VAL_NAME || k->has_atol ||
         s->has_atol || s->atol_param.kind == ST__VAL_NAME;
}

static int rtol_given(const st_scene *s, const st__case *k, const st__arg *a) {
  return a->has_rtol || a->rtol_param.kind == ST__VAL_NAME || k->has_rtol ||
         s->has_rtol || s->rtol_param.kind == ST__VAL_NAME;
}

/* The spec in force for arg a: each field tensor > case > scene. */
static st__tolspec effective(const bctx *c, const st__arg *a) {
  const st__tolspec *lv[3] = {&a->tol, &c->kase->tol, &c->scene->tol};
  st__tolspec e;
  memset(&e, 0, sizeof e);
  for (int i = 2; i >= 0; i--) {
    if (lv[i]->mode != ST__TOL_UNSET)
      e.mode = lv[i]->mode, e.line = lv[i]->line, e.column = lv[i]->column;
    if (lv[i]->factor > 0)
      e.factor = lv[i]->factor;
    if (lv[i]->has_compute_dtype) {
      e.has_compute_dtype = 1;
      e.compute_dtype = lv[i]->compute_dtype;
      e.cd_line = lv[i]->cd_line, e.cd_column = lv[i]->cd_column;
    }
  }
  return e;
}

/* u as a power of two for messages: "2^-24". */
static int u_exp(double u) {
  int e;
  (void)frexp(u, &e);
  return e - 1;
}

static void bound_arg(bctx *c, const opview *v, st__rarg *r) {
  const st__arg *a = r->arg;
  const st__tolspec e = effective(c, a);
  const st_scene *s = c->scene;
  const char *gp =
      c->kase->golden_platform ? c->kase->golden_platform : s->golden_platform;
  if (e.mode != ST__TOL_BOUND)
    return;
  if (v->unbound)
    return; /* ops/validate.c reports the binding */
  if (s->program != NULL || v->op == NULL) {
    st__plan_err(
        &c->err, e.line, e.column,
        "tolerance: bound on '%s' needs the reference golden of a built-in "
        "op; golden is %s%s%s",
        r->name, s->program ? "a program" : "'",
        s->program ? "" : (s->golden ? s->golden : "?"), s->program ? "" : "'");
    return;
  }
  if (gp != NULL && strcmp(gp, "reference") != 0) {
    st__plan_err(
        &c->err, e.line, e.column,
        "tolerance: bound on '%s' needs the reference golden; golden_platform "
        "is '%s'",
        r->name, gp);
    return;
  }
  if (r != v->t[v->out]) {
    st__plan_err(
        &c->err, e.line, e.column,
        "tolerance: bound on '%s', which golden op '%s' does not write",
        r->name, v->op);
    return;
  }
  if (a->has_expected) {
    st__plan_err(
        &c->err, e.line, e.column,
        "tolerance: bound on '%s', which has expected:; the bound needs "
        "golden's magnitude sums",
        r->name);
    return;
  }
  if (!st_dtype_is_float(r->dtype))
    return; /* integers and bool compare exactly, as without the bound */
  r->rtol = 0;
  if (!atol_given(s, c->kase, a))
    r->atol = 0;
  uint64_t n;
  const int softmax = v->row->n == ST__BOUND_N_SOFTMAX;
  if (softmax)
    n = v->row->shapes == SHAPES_ROWS && v->t[0]->ndim == 2
            ? (uint64_t)v->t[0]->shape[1] + 4
            : 4;
  else if (!st__bound_n_of(v->row->n, v->n, v->n, &n))
    return;
  if (n == 0)
    return; /* copy, relu, transpose: exact, the bound is atol */
  const st_dtype cd = e.has_compute_dtype ? e.compute_dtype : r->dtype;
  const double uc = st__bound_unit_roundoff(cd);
  double g;
  if (!st__bound_gamma(n, uc, &g)) {
    st__plan_err(
        &c->err, e.line, e.column,
        "tolerance: bound on '%s' is meaningless: n*u >= 1 (op '%s', n = "
        "%" PRIu64 "%s, compute dtype %s, u = 2^%d) in case '%s'; use rtol "
        "and atol, or a wider compute_dtype",
        r->name, v->op, n, softmax ? " at least" : "", st_dtype_name(cd),
        u_exp(uc), c->kase->name);
    return;
  }
  r->bound = 1;
  r->bound_softmax = softmax;
  r->bound_n = softmax ? 0 : n;
  r->bound_gamma = softmax ? 0 : g;
  r->bound_uc = uc;
  r->bound_uo = st__bound_unit_roundoff(r->dtype);
  r->bound_factor = e.factor > 0 ? e.factor : 1;
}

/* `init: exact` of input r: its range, or an error. 1 when set. */
static int exact_arg(bctx *c, const opview *v, st__rarg *r, uint64_t *range) {
  const st__arg *a = r->arg;
  const int line = a->init.line, col = a->init.column;
  int read = 0;
  if (r->role != ST_ROLE_INPUT && r->role != ST_ROLE_INOUT) {
    st__plan_err(&c->err, line, col,
                 "init: exact on '%s', which is not an input", r->name);
    return 0;
  }
  if (v->unbound)
    return 0;
  if (v->op == NULL) {
    st__plan_err(
        &c->err, line, col,
        "init: exact on '%s' needs the golden to be a built-in op; golden "
        "is %s%s%s",
        r->name, c->scene->program ? "a program" : "'",
        c->scene->program ? "" : (c->scene->golden ? c->scene->golden : "?"),
        c->scene->program ? "" : "'");
    return 0;
  }
  if (v->row->r == ST__BOUND_R_NONE) {
    /* Only softmax has no range: its reason is its model's. */
    st__plan_err(&c->err, line, col,
                 "init: exact on '%s': %s has no exact inputs%s", r->name,
                 v->op,
                 v->row->n == ST__BOUND_N_SOFTMAX ? " (exp is not exact)" : "");
    return 0;
  }
  for (int i = 0; i < 3; i++)
    read |= (v->read & (1u << i)) && v->t[i] == r;
  if (!read) {
    st__plan_err(&c->err, line, col,
                 "init: exact on '%s', which golden op '%s' does not read",
                 r->name, v->op);
    return 0;
  }
  if (!st_dtype_is_float(r->dtype)) {
    st__plan_err(&c->err, line, col,
                 "init: exact on '%s' of dtype %s; expected a float dtype",
                 r->name, st_dtype_name(r->dtype));
    return 0;
  }
  const st_dtype out = v->t[v->out]->dtype;
  uint64_t R = 0;
  (void)st__bound_exact_range_of(v->row->r, v->n, r->dtype, out, &R);
  if (R < 1) {
    st__plan_err(
        &c->err, line, col,
        "init: exact on '%s': no range [-R, R] with R >= 1 keeps op '%s' "
        "exact in %s (%d significand bits, %s = %" PRIu64 ") in case '%s'",
        r->name, v->op, st_dtype_name(out), st__bound_bits(out),
        v->row->shapes == SHAPES_MATMUL ? "K" : "N", v->n, c->kase->name);
    return 0;
  }
  r->a.is_int = 1, r->a.i = -(int64_t)R, r->a.f = -(double)R;
  r->b.is_int = 1, r->b.i = (int64_t)R + 1, r->b.f = (double)R + 1;
  *range = R;
  return 1;
}

/* The scalar of scale and axpy keeps the op exact when it is an integer
 * within [-R, R]. */
static int scalar_exact(const st__rarg *s, uint64_t R) {
  double f;
  if (s == NULL)
    return 1;
  f = s->value.is_int ? (double)s->value.i : s->value.f;
  return f == floor(f) && fabs(f) <= (double)R;
}

int st__plan_bound(const st_scene *scene, const st__case *kase, st__plan *plan,
                   st_error_list *errors) {
  bctx c = {scene, kase, plan, {scene->file, errors, 0, 0, 0}};
  opview v;
  uint64_t rmin = UINT64_MAX;
  int any_exact = 0;
  if (op_view(&c, &v) != 0)
    return -1;
  for (size_t i = 0; i < plan->n_args; i++) {
    st__rarg *r = &plan->args[i];
    if (r->arg == NULL || !r->is_tensor)
      continue;
    if (r->expected != NULL && r->expected->init == ST__INIT_EXACT)
      st__plan_err(&c.err, r->arg->expected.line, r->arg->expected.column,
                   "expected: exact on '%s'; exact is an init of inputs",
                   r->name);
    if (r->init == ST__INIT_EXACT) {
      uint64_t R;
      if (exact_arg(&c, &v, r, &R)) {
        any_exact = 1;
        rmin = R < rmin ? R : rmin;
      }
    }
    if (r->role != ST_ROLE_INPUT && r->role != ST_ROLE_SCRATCH && r->compare)
      bound_arg(&c, &v, r);
  }
  /* Every input the op reads exact (and its scalar an integer in range):
   * the output's default tolerance is 0, an exact check. */
  if (c.err.n_errors == 0 && any_exact && v.op != NULL) {
    int all = scalar_exact(v.scalar, rmin);
    for (int i = 0; i < 3; i++)
      if (v.read & (1u << i))
        all &= v.t[i]->init == ST__INIT_EXACT;
    st__rarg *o = v.t[v.out];
    if (all && !o->bound && effective(&c, o->arg).mode != ST__TOL_BOUND) {
      if (!rtol_given(scene, kase, o->arg))
        o->rtol = 0;
      if (!atol_given(scene, kase, o->arg))
        o->atol = 0;
    }
  }
  return c.err.oom ? -1 : c.err.n_errors;
}

int st__tolspec_same(const st__tolspec *x, const st__tolspec *y) {
  return x->mode == y->mode &&
         memcmp(&x->factor, &y->factor, sizeof x->factor) == 0 &&
         x->has_compute_dtype == y->has_compute_dtype &&
         (!x->has_compute_dtype || x->compute_dtype == y->compute_dtype) &&
         x->line == y->line && x->column == y->column;
}
