/* SPDX-License-Identifier: MIT */
/* A scene's `cases:` (docs/scene-format.md#case-keys): each case's keys, its
 * params (numbers, dtype names, expressions over earlier params, lists),
 * and matrix cases expanded into one case per combination of the
 * matrix's values that `exclude` leaves. The case-level numbers that may
 * name a param (rounds, rtol, atol, timeout, flops, bytes) are resolved
 * per concrete case with scene/expr.c and scene/params.c. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "scene/expr.h"
#include "scene/load.h"
#include "scene/params.h"
#include "scene/quarantine.h"
#include "scene/suggest.h"

/* A case's keys (docs/scene-format.md#case-keys), one row each: a new key is
 * a row here and its branch in take_case_keys, or in finish_case for a number
 * that may name a param (and its line in docs/scene.schema.json, which
 * tests/lint/schema_check.py compares). */
#define CASE_KEYS(X)                                                           \
  X(C_NAME, "name")                                                            \
  X(C_PARAMS, "params")                                                        \
  X(C_MATRIX, "matrix")                                                        \
  X(C_EXCLUDE, "exclude")                                                      \
  X(C_PLATFORMS, "platforms")                                                  \
  X(C_MANUAL, "manual")                                                        \
  X(C_SKIP, "skip_golden")                                                     \
  X(C_ROUNDS, "rounds")                                                        \
  X(C_RTOL, "rtol")                                                            \
  X(C_ATOL, "atol")                                                            \
  X(C_TIMEOUT, "timeout")                                                      \
  X(C_EQNAN, "equal_nan")                                                      \
  X(C_EXPECT, "expect")                                                        \
  X(C_GOLDEN_PLATFORM, "golden_platform")                                      \
  X(C_GOLDEN_ARGS, "golden_args")                                              \
  X(C_EXPECT_MESSAGE, "expect_message")                                        \
  X(C_ENV, "env")                                                              \
  X(C_GOLDEN_DEVICE, "golden_device")                                          \
  X(C_TAGS, "tags")                                                            \
  X(C_FLOPS, "flops")                                                          \
  X(C_BYTES, "bytes")                                                          \
  X(C_TOL, "tolerance")                                                        \
  X(C_BOUND_FACTOR, "bound_factor")                                            \
  X(C_COMPUTE_DTYPE, "compute_dtype")
enum { CASE_KEYS(ST__KEY_ID) C_NKEYS };
static const char *const case_keys[] = {CASE_KEYS(ST__KEY_NAME)};

/* docs/scene-format.md#matrix-cases: the matrix cases of one scene, counted
 * before exclusions. */
#define MATRIX_CAP 100000
/* A bound of our own: a case name carries every key, so a matrix of a
 * thousand one-value keys would make an unreadable name. */
#define MATRIX_MAX_KEYS 32

/* "; did you mean the dtype 'float16'?" when an unknown name is near a
 * dtype name (a typo in `T: float61` makes an expression), else "". */
static const char *dtype_hint(const char *name, char *buf, size_t size) {
  const char *names[ST_DTYPE_COUNT];
  for (int i = 0; i < ST_DTYPE_COUNT; i++)
    names[i] = st_dtype_name((st_dtype)i);
  const char *dym = st__suggest(name, names, ST_DTYPE_COUNT);
  if (dym == NULL)
    buf[0] = '\0';
  else
    snprintf(buf, size, ": did you mean the dtype '%s'?", dym);
  return buf;
}

/* What a param's expression may name
 * (docs/scene-format.md#params-expressions-and-lists): in `params`, the params
 * written before it; NULL (a matrix value, checked by take_matrix): anything.
 */
typedef struct prior {
  const st__case *c;
  size_t n;             /* params of c written before this one */
  const st__ynode *map; /* the params mapping, to tell a later name apart */
} prior;

static int prior_name(void *data, const char *name, size_t offset,
                      st__expr_error *err) {
  const prior *pr = data;
  (void)offset;
  for (size_t i = 0; i < pr->n; i++)
    if (pr->c->params[i].name && strcmp(pr->c->params[i].name, name) == 0)
      return 0;
  for (size_t i = 2 * (pr->n + 1); i + 1 < pr->map->n; i += 2)
    if (st__ynode_is_str(pr->map->kids[i]) &&
        strcmp(pr->map->kids[i]->str, name) == 0) {
      snprintf(err->message, sizeof err->message,
               "'%s' is written after it; expected only params written "
               "before it",
               name);
      return -1;
    }
  char hint[64];
  dtype_hint(name, hint, sizeof hint);
  snprintf(err->message, sizeof err->message,
           "'%s' is not a param written before it%s%s expected a number, a "
           "dtype name or the name of an earlier param",
           name, hint, hint[0] ? "" : ";");
  return -1;
}

/* One number of a param: a number, or an expression (checked against pr
 * unless pr is NULL). */
static void take_param_num(st__loader *L, const st__ynode *v, const char *key,
                           st__val *out, const prior *pr) {
  if (st__ynode_is_num(v)) {
    st__schema_val_at(out, v);
    out->kind = ST__VAL_NUM;
    out->num = st__schema_num(v);
  } else if (st__ynode_is_str(v) && v->len > 0 && pr == NULL) {
    st__schema_val_at(out, v);
    out->kind = ST__VAL_NAME;
    out->name = st__schema_strdup(L, v->str);
  } else if (st__ynode_is_str(v) && v->len > 0) {
    (void)st__schema_expr(L, v, key, out, prior_name, (void *)pr);
  } else {
    st__schema_expected(L, v, "a number or an expression", key);
  }
}

/* A param's value: a number, a dtype name, an expression over params or
 * a list of numbers (docs/scene-format.md#params-expressions-and-lists).
 * pr: what an expression may name (NULL: a matrix value, whose names
 * take_matrix checked). */
static void take_param_value(st__loader *L, const st__ynode *v, st__param *p,
                             const prior *pr) {
  char key[ST__MAX_IDENT + 32];
  st_dtype dt;
  snprintf(key, sizeof key, "param '%s'", p->name ? p->name : "?");
  if (st__ynode_is_str(v) && st_dtype_parse(v->str, &dt) == ST_OK) {
    p->is_str = 1;
    p->str = st__schema_strdup(L, v->str);
  } else if (st__ynode_is_num(v) || (st__ynode_is_str(v) && v->len > 0)) {
    take_param_num(L, v, key, &p->expr, pr);
    if (p->expr.kind == ST__VAL_NUM) {
      p->num = p->expr.num;
      memset(&p->expr, 0, sizeof p->expr);
    }
  } else if (v->kind == ST__YN_SEQ) {
    p->is_list = 1;
    p->list = st__schema_seq_alloc(L, v, sizeof *p->list);
    if (p->list == NULL)
      return;
    p->n_list = v->n;
    for (size_t i = 0; i < v->n; i++) {
      char ek[ST__MAX_IDENT + 48];
      snprintf(ek, sizeof ek, "param '%s' [%zu]", p->name ? p->name : "?", i);
      take_param_num(L, v->kids[i], ek, &p->list[i], pr);
    }
  } else {
    st__schema_expected(L, v,
                        "a number, a dtype name, an expression or a list of "
                        "numbers",
                        p->name ? p->name : "params");
  }
}

/* A param name must not be a dtype name: `dtype: T` reads T as a dtype
 * first. 0, or -1 after the error. */
static int param_name_ok(st__loader *L, const st__ynode *k) {
  st_dtype dt;
  if (st_dtype_parse(k->str, &dt) != ST_OK)
    return 0;
  st__schema_error(L, k,
                   "param name '%s' is a dtype name; expected a name that is "
                   "not a dtype",
                   k->str);
  return -1;
}

/* Copies scalar n's value into the case block at *at (room made for it
 * by case_block). */
static char *block_str(char **at, const st__ynode *n) {
  char *p = *at;
  memcpy(p, n->str, n->len + 1);
  *at += n->len + 1;
  return p;
}

/* c->block for a case as written: its params (params, when a mapping),
 * then room for its name and its params' names, the scalars among
 * name_n and params' keys. Returns where the strings go, or NULL (no
 * block: nothing to hold, or out of memory, with L->oom set). */
static char *case_block(st__loader *L, st__case *c, const st__ynode *name_n,
                        const st__ynode *params) {
  size_t np = params && params->kind == ST__YN_MAP ? params->n / 2 : 0;
  size_t head = (np ? np : 1) * sizeof *c->params, size = head;
  if ((name_n == NULL || name_n->kind != ST__YN_SCALAR) && np == 0 &&
      (params == NULL || params->kind != ST__YN_MAP))
    return NULL;
  if (name_n && name_n->kind == ST__YN_SCALAR)
    size += name_n->len + 1;
  for (size_t i = 0; i < np; i++)
    if (params->kids[2 * i]->kind == ST__YN_SCALAR)
      size += params->kids[2 * i]->len + 1;
  c->block = st__zalloc(1, size);
  if (c->block == NULL) {
    L->oom = 1;
    return NULL;
  }
  return (char *)c->block + head;
}

/* The params of case c into its block (strings at *at). */
static void take_params(st__loader *L, const st__ynode *n, st__case *c,
                        char **at) {
  if (n->kind != ST__YN_MAP) {
    st__schema_expected(L, n, "a mapping of param names to values", "params");
    return;
  }
  size_t np = n->n / 2;
  /* A case has a few params: their names are checked from the stack, not
   * from an allocation per case. */
  st__named own[8];
  c->params = c->block;
  st__named *names =
      np <= sizeof own / sizeof own[0] ? own : st__zalloc(np, sizeof *names);
  size_t n_names = 0;
  if (names == NULL) {
    L->oom = 1;
    return;
  }
  c->n_params = np;
  for (size_t i = 0; i < np; i++) {
    const st__ynode *k = n->kids[2 * i], *v = n->kids[2 * i + 1];
    st__param *p = &c->params[i];
    p->line = k->line;
    p->column = k->col;
    if (st__schema_name_key(L, k, "param name", "params")) {
      p->name = block_str(at, k);
      names[n_names].name = p->name;
      names[n_names].line = k->line;
      names[n_names].col = k->col;
      names[n_names].idx = i;
      n_names++;
      (void)param_name_ok(L, k);
    }
    prior pr = {c, i, n};
    take_param_value(L, v, p, &pr);
  }
  /* A param name that failed validation is left NULL; st__plan_resolve
   * only runs on scenes without errors, so it never sees one. */
  st__schema_unique(L, names, n_names, "duplicate param",
                    "; expected each param once");
  if (names != own)
    free(names);
}

/* A case's keys, as nodes: the fields that may name a param (rounds,
 * rtol, atol, timeout) are resolved for each concrete case, after a
 * matrix has added its params. */
typedef struct case_src {
  const st__ynode *v[C_NKEYS];
  const st__ynode *k[C_NKEYS];
} case_src;

/* The case's keys from platforms on, each taken in turn (a new case key
 * is taken here, or in finish_case for a number that may name a param). */
static void take_case_keys(st__loader *L, const st__ynode *const *v,
                           const st__ynode *const *k, st__case *c,
                           const st_scene *s) {
  if (v[C_PLATFORMS]) {
    if (v[C_PLATFORMS]->kind != ST__YN_SEQ)
      st__schema_expected(L, v[C_PLATFORMS], "a list of platform names",
                          "platforms");
    else {
      c->has_platforms = 1;
      c->platforms_line = v[C_PLATFORMS]->line;
      c->platforms_column = v[C_PLATFORMS]->col;
      c->platforms =
          st__schema_platforms(L, v[C_PLATFORMS], "platforms", &c->n_platforms);
    }
  }
  if (v[C_TAGS])
    c->tags = st__schema_tags(L, v[C_TAGS], &c->n_tags);
  if (v[C_MANUAL]) {
    const st__ynode *m = v[C_MANUAL];
    if (m->kind == ST__YN_SCALAR && m->sk == ST__YS_BOOL)
      c->manual_all = (int)m->i;
    else if (m->kind == ST__YN_SEQ) {
      c->manual_line = m->line;
      c->manual_column = m->col;
      c->manual_platforms = st__schema_platforms(L, m, "manual", &c->n_manual);
    } else
      st__schema_expected(L, m, "true, false or a list of platform names",
                          "manual");
  }
  if (v[C_SKIP])
    (void)st__schema_bool(L, v[C_SKIP], "skip_golden", &c->skip_golden);
  st__schema_tolspec(L, v[C_TOL], v[C_BOUND_FACTOR], v[C_COMPUTE_DTYPE],
                     &c->tol);
  if (v[C_GOLDEN_PLATFORM])
    c->golden_platform = st__schema_string(
        L, v[C_GOLDEN_PLATFORM], "a platform name", "golden_platform");
  if (v[C_GOLDEN_DEVICE])
    c->golden_device = st__schema_device(L, v[C_GOLDEN_DEVICE]);
  if (v[C_EQNAN])
    (void)st__schema_bool(L, v[C_EQNAN], "equal_nan", &c->equal_nan);
  if (v[C_EXPECT]) {
    st__quarantine *q = NULL;
    int e = st__schema_expect(L, v[C_EXPECT], &q);
    if (e >= 0) {
      c->expect_fail = e == ST__EXPECT_FAIL;
      c->expect_error = e == ST__EXPECT_ERROR;
      st__quarantine_free(c->quarantine);
      c->quarantine = q;
    }
  }
  if (v[C_EXPECT_MESSAGE])
    st__schema_expect_message(L, v[C_EXPECT_MESSAGE], k[C_EXPECT_MESSAGE],
                              c->expect_error, &c->expect_message);
  if (v[C_GOLDEN_ARGS])
    c->golden_args =
        st__schema_golden_args(L, v[C_GOLDEN_ARGS], s, &c->n_golden_args);
  if (v[C_ENV])
    st__schema_env(L, v[C_ENV], &c->env);
  if (v[C_EXCLUDE] && v[C_MATRIX] == NULL)
    st__schema_error(
        L, k[C_EXCLUDE],
        "'exclude' without 'matrix'; expected it only in a matrix case");
}

/* A case as written into c (a matrix case's template): its name and
 * params, then take_case_keys. src keeps its key nodes for finish_case. */
static void take_case(st__loader *L, const st__ynode *n, st__case *c,
                      const st_scene *s, case_src *src) {
  c->skip_golden = -1;
  c->equal_nan = -1;
  c->expect_fail = s->expect_fail;
  c->expect_error = s->expect_error;
  {
    int oom = 0;
    c->quarantine = st__quarantine_copy(s->quarantine, &oom);
    L->oom |= oom;
  }
  st__schema_fields(L, n, "case", case_keys, C_NKEYS, src->v, src->k);
  const st__ynode **v = src->v;
  /* The scene's flops/bytes (docs/bench.md#the-work-model), evaluated in
   * each case that has none of its own. */
  if (v[C_FLOPS] == NULL)
    v[C_FLOPS] = L->scene_work[0];
  if (v[C_BYTES] == NULL)
    v[C_BYTES] = L->scene_work[1];
  st__schema_require(L, n, "case", "name", v[C_NAME]);
  char *at = case_block(L, c, v[C_NAME], v[C_PARAMS]);
  if (c->block == NULL && L->oom)
    return;
  if (v[C_NAME]) {
    if (st__schema_ident_valid(L, v[C_NAME], "name")) {
      c->name = block_str(&at, v[C_NAME]);
      c->base_len = v[C_NAME]->len;
    }
    c->line = v[C_NAME]->line;
    c->column = v[C_NAME]->col;
  }
  if (v[C_PARAMS])
    take_params(L, v[C_PARAMS], c, &at);
  take_case_keys(L, v, src->k, c, s);
}

/* A case-level number: a literal, a param name or an expression over the
 * case's params (docs/scene-format.md#params-expressions-and-lists),
 * evaluated in dom. Returns 0 with *out, -1 after an error, 1 when n is
 * neither (the caller says what it expected). *via is the text. */
static int case_num(st__loader *L, st__case *c, const st__ynode *n,
                    const char *key, st__expr_domain dom, st__num *out,
                    const char **via) {
  st__val v;
  st__val_error e;
  *via = NULL;
  if (st__ynode_is_num(n)) {
    *out = st__schema_num(n);
    return 0;
  }
  if (!st__ynode_is_str(n) || n->len == 0)
    return 1;
  memset(&v, 0, sizeof v);
  if (st__schema_expr(L, n, key, &v, NULL, NULL) != 0)
    return -1;
  st__case_val_use(c, &v);
  int rc = st__val_eval(c, &v, dom, key, out, NULL, &e);
  free(v.name);
  if (rc != 0) {
    st__schema_error_at(L, e.line, e.column, "%s", e.message);
    return -1;
  }
  *via = n->str;
  return 0;
}

/* An error for a case-level number that resolved but is out of range. */
static void case_num_bad(st__loader *L, const st__case *c, const st__ynode *n,
                         const char *key, const char *what, const char *via,
                         const st__num *x) {
  if (via == NULL) {
    st__schema_expected(L, n, what, key);
    return;
  }
  char nb[64];
  if (x->is_int)
    snprintf(nb, sizeof nb, "%" PRId64, x->i);
  else
    snprintf(nb, sizeof nb, "%.17g", x->f);
  st__schema_error(
      L, n, "expected %s for '%s', got %s (%s '%s' of case '%s')", what, key,
      nb, st__schema_ident_ok(via, strlen(via)) ? "param" : "expression", via,
      c->name ? c->name : "?");
}

/* rounds, rtol, atol and timeout of one concrete case. */
static void finish_case(st__loader *L, st__case *c, const case_src *src) {
  const st__ynode *const *v = src->v;
  const char *via;
  st__num x;
  int r;
  if (v[C_ROUNDS]) {
    /* The bound is --rounds's, and the message names it (D16). */
    const char *what = "an integer from 1 to 1000000000";
    r = case_num(L, c, v[C_ROUNDS], "rounds", ST__EXPR_INT, &x, &via);
    if (r == 1)
      st__schema_expected(L, v[C_ROUNDS],
                          "an integer from 1 to 1000000000 or a param name",
                          "rounds");
    else if (r == 0 && (!x.is_int || x.i < 1 || x.i > 1000000000))
      case_num_bad(L, c, v[C_ROUNDS], "rounds", what, via, &x);
    else if (r == 0)
      c->rounds = (unsigned)x.i;
  }
  /* rtol, atol, then the work counts: each a finite number >= 0. */
  static const struct {
    int key;
    const char *name, *expected;
  } nums[4] = {
      {C_RTOL, "rtol", "a finite number >= 0 or a param name"},
      {C_ATOL, "atol", "a finite number >= 0 or a param name"},
      {C_FLOPS, "flops", "a number >= 0, a param name or an expression"},
      {C_BYTES, "bytes", "a number >= 0, a param name or an expression"}};
  double *const dst[4] = {&c->rtol, &c->atol, &c->work[0], &c->work[1]};
  int *const has[4] = {&c->has_rtol, &c->has_atol, &c->has_work[0],
                       &c->has_work[1]};
  for (int t = 0; t < 4; t++) {
    const st__ynode *n = v[nums[t].key];
    if (n == NULL)
      continue;
    r = case_num(L, c, n, nums[t].name, ST__EXPR_FLOAT, &x, &via);
    if (r == 0 && t >= 2 && x.is_int)
      x.f = (double)x.i;
    if (r == 1)
      st__schema_expected(L, n, nums[t].expected, nums[t].name);
    else if (r == 0 && (!isfinite(x.f) || x.f < 0))
      case_num_bad(L, c, n, nums[t].name, "a finite number >= 0", via, &x);
    else if (r == 0)
      *has[t] = 1, *dst[t] = x.f;
  }
  if (v[C_TIMEOUT]) {
    r = case_num(L, c, v[C_TIMEOUT], "timeout", ST__EXPR_INT, &x, &via);
    if (r == 1)
      st__schema_expected(L, v[C_TIMEOUT],
                          "a number of seconds > 0 or a param name", "timeout");
    else if (r == 0 && (!isfinite(x.f) || !(x.f > 0)))
      case_num_bad(L, c, v[C_TIMEOUT], "timeout", "a number of seconds > 0",
                   via, &x);
    else if (r == 0)
      c->timeout = x.f;
  }
}

/* The cases of a scene as they are built: a matrix case adds many. */
typedef struct casevec {
  st__case *v;
  unsigned char *valid;
  size_t n, cap;
} casevec;

static st__case *casevec_push(st__loader *L, casevec *cv, size_t hint) {
  if (cv->n == cv->cap) {
    size_t cap = cv->cap ? cv->cap * 2 : hint ? hint : 8;
    st__case *v = st__array_resize(cv->v, cap, sizeof *v);
    if (v == NULL) {
      L->oom = 1;
      return NULL;
    }
    cv->v = v;
    unsigned char *ok = st__array_resize(cv->valid, cap, 1);
    if (ok == NULL) {
      L->oom = 1;
      return NULL;
    }
    cv->valid = ok;
    cv->cap = cap;
  }
  st__case *c = &cv->v[cv->n];
  memset(c, 0, sizeof *c);
  cv->valid[cv->n] = 0;
  cv->n++;
  return c;
}

/* A matrix value must read back as itself inside a case name, a TAP
 * line and a --case selector: numbers, names and expressions, whose
 * characters are these (a space among them: the places that quote case
 * names quote those, docs/scene-format.md#matrix-cases). */
static int matrix_text_ok(const st__ynode *n) {
  if (n->kind != ST__YN_SCALAR || n->len == 0 || strlen(n->str) != n->len ||
      !(st__ynode_is_num(n) || st__ynode_is_str(n)))
    return 0;
  for (size_t i = 0; i < n->len; i++) {
    char ch = n->str[i];
    if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
          (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' || ch == '+' ||
          ch == '-' || ch == ' ' || ch == '*' || ch == '/' || ch == '%' ||
          ch == '(' || ch == ')' || ch == ','))
      return 0;
  }
  return 1;
}

/* The names a matrix value's expression may use: the case's params and
 * the matrix's keys (a cycle among them is found when a case resolves). */
typedef struct mx_names {
  const st__case *t;
  const st__ynode *mx;
} mx_names;

static int matrix_name(void *data, const char *name, size_t offset,
                       st__expr_error *err) {
  const mx_names *m = data;
  (void)offset;
  if (st__case_param(m->t, name) != NULL)
    return 0;
  for (size_t i = 0; i + 1 < m->mx->n; i += 2)
    if (st__ynode_is_str(m->mx->kids[i]) &&
        strcmp(m->mx->kids[i]->str, name) == 0)
      return 0;
  char hint[64];
  dtype_hint(name, hint, sizeof hint);
  snprintf(err->message, sizeof err->message,
           "'%s' is not a param of case '%s'%s%s expected a number, a dtype "
           "name or the name of a param or matrix key",
           name, m->t->name ? m->t->name : "?", hint, hint[0] ? "" : ";");
  return -1;
}

typedef struct matrix {
  const st__ynode **keys;  /* key nodes, written order */
  const st__ynode **lists; /* their value lists */
  size_t n;
  size_t *excl; /* n_excl rows of n value indexes (SIZE_MAX: any) */
  size_t n_excl;
  uint64_t product;
} matrix;

static void matrix_free(matrix *m) {
  free(m->keys);
  free(m->lists);
  free(m->excl);
}

/* Checks `matrix` of template t into m: its keys, and each key's list of
 * values. Every error is reported (the loader collects them); -1 stops
 * only where nothing more can be checked. */
static int check_matrix(st__loader *L, const st__ynode *mx, const st__case *t,
                        matrix *m) {
  if (mx->kind != ST__YN_MAP || mx->n == 0) {
    st__schema_expected(L, mx, "a mapping of param names to lists of values",
                        "matrix");
    return -1;
  }
  size_t nk = mx->n / 2;
  if (nk > MATRIX_MAX_KEYS) {
    st__schema_error(L, mx, "matrix has %zu keys; expected at most %d", nk,
                     MATRIX_MAX_KEYS);
    return -1;
  }
  m->keys = st__zalloc(nk, sizeof *m->keys);
  m->lists = st__zalloc(nk, sizeof *m->lists);
  if (m->keys == NULL || m->lists == NULL) {
    L->oom = 1;
    return -1;
  }
  m->n = nk;
  m->product = 1;
  for (size_t i = 0; i < nk; i++) {
    const st__ynode *k = mx->kids[2 * i], *l = mx->kids[2 * i + 1];
    m->keys[i] = k;
    m->lists[i] = l;
    if (!st__schema_name_key(L, k, "param name", "matrix"))
      continue;
    for (size_t j = 0; j < i; j++)
      if (st__ynode_is_str(m->keys[j]) && strcmp(m->keys[j]->str, k->str) == 0)
        st__schema_error(L, k,
                         "duplicate key '%s' in matrix (first given at %d:%d)",
                         k->str, m->keys[j]->line, m->keys[j]->col);
    for (size_t j = 0; j < t->n_params; j++)
      if (t->params[j].name && strcmp(t->params[j].name, k->str) == 0)
        st__schema_error(
            L, k,
            "'%s' is in both params (at %d:%d) and matrix; expected each "
            "param in one of them",
            k->str, t->params[j].line, t->params[j].column);
    if (l->kind == ST__YN_SEQ && l->n == 0) {
      st__schema_error(L, l,
                       "matrix list for '%s' is empty; expected at least one "
                       "value",
                       k->str);
      continue;
    }
    if (l->kind != ST__YN_SEQ) {
      st__schema_expected(L, l, "a list of values", k->str);
      continue;
    }
    st__named *names = st__zalloc(l->n, sizeof *names);
    if (names == NULL) {
      L->oom = 1;
      return -1;
    }
    (void)param_name_ok(L, k);
    for (size_t j = 0; j < l->n; j++) {
      const st__ynode *e = l->kids[j];
      st_dtype dt;
      st__val tmp;
      mx_names mn = {t, mx};
      if (!matrix_text_ok(e))
        st__schema_expected(
            L, e,
            "a number, a name or an expression (letters, digits, "
            "spaces and _ . + - * / % ( ) ,)",
            k->str);
      else if (st__ynode_is_str(e) && st_dtype_parse(e->str, &dt) != ST_OK) {
        char key[ST__MAX_IDENT + 32];
        memset(&tmp, 0, sizeof tmp);
        snprintf(key, sizeof key, "matrix '%s'", k->str);
        if (st__schema_expr(L, e, key, &tmp, matrix_name, &mn) == 0)
          free(tmp.name);
      }
      names[j].name = e->kind == ST__YN_SCALAR ? e->str : "";
      names[j].line = e->line;
      names[j].col = e->col;
      names[j].idx = j;
    }
    st__schema_unique(L, names, l->n, "duplicate value",
                      "; expected each value once in a matrix list");
    free(names);
    if (__builtin_mul_overflow(m->product, (uint64_t)l->n, &m->product) ||
        m->product > MATRIX_CAP)
      m->product = MATRIX_CAP + 1;
  }
  return 0;
}

/* Checks `exclude` (a list of partial combinations of the matrix's keys
 * and values) into m's rows; every error is reported. -1 when it is not
 * a list or out of memory. */
static int check_exclude(st__loader *L, const st__ynode *ex, matrix *m) {
  size_t nk = m->n;
  if (ex->kind != ST__YN_SEQ) {
    st__schema_expected(L, ex, "a list of mappings {PARAM: VALUE, ...}",
                        "exclude");
    return -1;
  }
  m->excl = st__zalloc((ex->n ? ex->n : 1) * nk, sizeof *m->excl);
  if (m->excl == NULL) {
    L->oom = 1;
    return -1;
  }
  m->n_excl = ex->n;
  for (size_t e = 0; e < ex->n; e++) {
    const st__ynode *ent = ex->kids[e];
    size_t *row = &m->excl[e * nk];
    for (size_t i = 0; i < nk; i++)
      row[i] = SIZE_MAX;
    if (ent->kind != ST__YN_MAP || ent->n == 0) {
      st__schema_expected(
          L, ent, "a mapping {PARAM: VALUE, ...} of matrix keys", "exclude");
      continue;
    }
    for (size_t p = 0; p + 1 < ent->n; p += 2) {
      const st__ynode *k = ent->kids[p], *val = ent->kids[p + 1];
      size_t i;
      for (i = 0; i < nk; i++)
        if (st__ynode_is_str(k) && strcmp(m->keys[i]->str, k->str) == 0)
          break;
      if (i == nk) {
        const char *cand[MATRIX_MAX_KEYS];
        char got[100];
        for (size_t j = 0; j < nk; j++)
          cand[j] = m->keys[j]->str;
        st__ynode_describe(k, got, sizeof got);
        const char *dym =
            st__ynode_is_str(k) ? st__suggest(k->str, cand, nk) : NULL;
        if (dym)
          st__schema_error(
              L, k,
              "exclude names %s, which is not a matrix key: did you mean "
              "'%s'? expected a key of the matrix",
              got, dym);
        else
          st__schema_error(
              L, k,
              "exclude names %s, which is not a matrix key; expected "
              "a key of the matrix",
              got);
        continue;
      }
      if (row[i] != SIZE_MAX) {
        st__schema_error(L, k, "duplicate key '%s' in an exclude entry",
                         k->str);
        continue;
      }
      const st__ynode *l = m->lists[i];
      size_t j;
      for (j = 0; j < l->n; j++)
        if (val->kind == ST__YN_SCALAR &&
            strcmp(l->kids[j]->str, val->str) == 0)
          break;
      if (j == l->n) {
        char got[100];
        st__ynode_describe(val, got, sizeof got);
        st__schema_error(
            L, val,
            "exclude gives %s for '%s', which is not one of its matrix "
            "values; expected one of the values listed at %d:%d",
            got, k->str, l->line, l->col);
        continue;
      }
      row[i] = j;
    }
  }
  return 0;
}

/* Checks `matrix` and `exclude` of template t; 0 when they are usable.
 * The exclude list is checked only against a matrix without errors. */
static int take_matrix(st__loader *L, const st__ynode *mx, const st__ynode *ex,
                       const st__case *t, matrix *m) {
  size_t before = L->raised;
  memset(m, 0, sizeof *m);
  if (check_matrix(L, mx, t, m) != 0 || L->raised != before)
    return -1;
  if (ex == NULL)
    return 0;
  if (check_exclude(L, ex, m) != 0)
    return -1;
  return L->raised != before ? -1 : 0;
}

static int excluded(const matrix *m, const size_t *idx) {
  for (size_t e = 0; e < m->n_excl; e++) {
    const size_t *row = &m->excl[e * m->n];
    size_t i;
    for (i = 0; i < m->n; i++)
      if (row[i] != SIZE_MAX && row[i] != idx[i])
        break;
    if (i == m->n)
      return 1;
  }
  return 0;
}

static char **copy_strv(st__loader *L, char *const *v, size_t n) {
  if (v == NULL)
    return NULL;
  char **out = st__zalloc(n ? n : 1, sizeof *out);
  if (out == NULL) {
    L->oom = 1;
    return NULL;
  }
  for (size_t i = 0; i < n; i++)
    if (v[i] && (out[i] = st__schema_strdup(L, v[i])) == NULL)
      break;
  return out;
}

/* One combination of a matrix case: the template's fields deep-copied,
 * its params plus the matrix's, named NAME[P1=v1,P2=v2]
 * (docs/scene-format.md#matrix-cases). */
static int matrix_case(st__loader *L, const st__case *t, const matrix *m,
                       const size_t *idx, st__case *c) {
  *c = *t;
  c->name = NULL;
  c->params = NULL;
  c->block = NULL; /* the template's: this case owns its strings */
  c->platforms = copy_strv(L, t->platforms, t->n_platforms);
  c->manual_platforms = copy_strv(L, t->manual_platforms, t->n_manual);
  c->tags = copy_strv(L, t->tags, t->n_tags);
  c->golden_platform =
      t->golden_platform ? st__schema_strdup(L, t->golden_platform) : NULL;
  c->expect_message =
      t->expect_message ? st__schema_strdup(L, t->expect_message) : NULL;
  {
    int oom = 0;
    c->quarantine = st__quarantine_copy(t->quarantine, &oom);
    L->oom |= oom;
  }
  if (t->golden_args != NULL &&
      (c->golden_args = st__zalloc(t->n_golden_args, sizeof *c->golden_args)) !=
          NULL)
    memcpy(c->golden_args, t->golden_args,
           t->n_golden_args * sizeof *c->golden_args);
  else if (t->golden_args != NULL)
    L->oom = 1;
  c->env.kv = copy_strv(L, t->env.kv, 2 * t->env.n);
  c->params = st__zalloc(t->n_params + m->n, sizeof *c->params);
  if (c->params == NULL) {
    L->oom = 1;
    return -1;
  }
  c->n_params = t->n_params + m->n;
  for (size_t i = 0; i < t->n_params; i++) {
    const st__param *tp = &t->params[i];
    st__param *p = &c->params[i];
    *p = *tp;
    p->name =
        tp->name ? st__schema_strdup(L, tp->name) : NULL; /* NULL: an error */
    p->str = tp->str ? st__schema_strdup(L, tp->str) : NULL;
    p->expr.name = tp->expr.name ? st__schema_strdup(L, tp->expr.name) : NULL;
    p->list = NULL;
    if (tp->list && (p->list = st__zalloc(tp->n_list ? tp->n_list : 1,
                                          sizeof *p->list)) == NULL) {
      L->oom = 1;
      p->n_list = 0;
    }
    for (size_t j = 0; p->list && j < tp->n_list; j++) {
      p->list[j] = tp->list[j];
      p->list[j].name =
          tp->list[j].name ? st__schema_strdup(L, tp->list[j].name) : NULL;
    }
  }
  size_t len = strlen(t->name) + 3;
  for (size_t i = 0; i < m->n; i++)
    len += strlen(m->keys[i]->str) + 2 + m->lists[i]->kids[idx[i]]->len;
  c->name = malloc(len);
  if (c->name == NULL) {
    L->oom = 1;
    return -1;
  }
  size_t off = (size_t)snprintf(c->name, len, "%s[", t->name);
  for (size_t i = 0; i < m->n; i++) {
    const st__ynode *val = m->lists[i]->kids[idx[i]];
    st__param *p = &c->params[t->n_params + i];
    off += (size_t)snprintf(c->name + off, len - off, "%s%s=%s", i ? "," : "",
                            m->keys[i]->str, val->str);
    p->name = st__schema_strdup(L, m->keys[i]->str);
    p->line = m->keys[i]->line;
    p->column = m->keys[i]->col;
    take_param_value(L, val, p, NULL);
  }
  snprintf(c->name + off, len - off, "]");
  c->base_len = strlen(t->name);
  return L->oom ? -1 : 0;
}

/* Expands a matrix case into cv; the template stays the caller's. */
static void expand_matrix(st__loader *L, const st__case *t, const case_src *src,
                          int valid, casevec *cv) {
  matrix m;
  size_t idx[MATRIX_MAX_KEYS] = {0}, made = 0;
  if (take_matrix(L, src->v[C_MATRIX], src->v[C_EXCLUDE], t, &m) != 0 ||
      t->name == NULL) {
    matrix_free(&m);
    return;
  }
  if (m.product > MATRIX_CAP - L->matrix_total) {
    st__schema_error(
        L, src->k[C_MATRIX],
        "matrix of case '%s' makes %s%" PRIu64 " combinations, with %" PRIu64
        " before it in this scene; expected at most %d per scene (counted "
        "before exclude)",
        t->name, m.product > MATRIX_CAP ? "more than " : "",
        m.product > MATRIX_CAP ? (uint64_t)MATRIX_CAP : m.product,
        L->matrix_total, MATRIX_CAP);
    matrix_free(&m);
    return;
  }
  L->matrix_total += m.product;
  for (;;) {
    if (!excluded(&m, idx)) {
      st__case *c = casevec_push(L, cv, (size_t)m.product);
      if (c == NULL)
        break;
      size_t before = L->raised;
      if (matrix_case(L, t, &m, idx, c) != 0)
        break;
      finish_case(L, c, src);
      cv->valid[cv->n - 1] = valid && L->raised == before;
      made++;
    }
    /* The last key varies fastest. */
    size_t i = m.n;
    while (i > 0 && ++idx[i - 1] == m.lists[i - 1]->n)
      idx[--i] = 0;
    if (i == 0)
      break;
  }
  if (made == 0 && !L->oom)
    st__schema_error(
        L, src->k[C_EXCLUDE],
        "exclude drops every combination of matrix case '%s'; expected at "
        "least one left",
        t->name);
  matrix_free(&m);
}

void st__load_cases(st__loader *L, const st__ynode *n, st_scene *s) {
  casevec cv = {0};
  if (n->kind != ST__YN_SEQ) {
    st__schema_expected(L, n, "a list of cases", "cases");
    return;
  }
  if (n->n == 0) {
    st__schema_error(
        L, n,
        "a scene needs at least one case; expected a list of cases "
        "with a name each");
    return;
  }
  /* Names as written: a plain case's own (its string does not move when
   * the case array grows), a matrix case's base name copied, since its
   * template is freed once expanded. */
  st__named *names = st__zalloc(n->n, sizeof *names);
  char **copies = st__zalloc(n->n, sizeof *copies);
  size_t n_names = 0;
  if (names == NULL || copies == NULL) {
    L->oom = 1;
    free(names);
    free(copies);
    return;
  }
  L->matrix_total = 0;
  for (size_t i = 0; i < n->n && !L->oom; i++) {
    const st__ynode *item = n->kids[i];
    if (item->kind != ST__YN_MAP) {
      char got[100];
      st__ynode_describe(item, got, sizeof got);
      st__schema_error(
          L, item, "expected a case mapping {name: NAME, ...}, got %s", got);
      continue;
    }
    st__case t;
    case_src src;
    memset(&t, 0, sizeof t);
    t.line = item->line;
    t.column = item->col;
    size_t before = L->raised;
    take_case(L, item, &t, s, &src);
    int is_matrix = src.v[C_MATRIX] != NULL;
    if (t.name &&
        (!is_matrix || (copies[n_names] = st__schema_strdup(L, t.name)))) {
      names[n_names].name = is_matrix ? copies[n_names] : t.name;
      names[n_names].line = t.line;
      names[n_names].col = t.column;
      names[n_names].idx = i;
      n_names++;
    }
    if (src.v[C_MATRIX] != NULL) {
      expand_matrix(L, &t, &src, L->raised == before, &cv);
      st__case_free_fields(&t);
      continue;
    }
    st__case *c = casevec_push(L, &cv, n->n);
    if (c == NULL) {
      st__case_free_fields(&t);
      break;
    }
    *c = t;
    finish_case(L, c, &src);
    cv.valid[cv.n - 1] = L->raised == before;
  }
  st__schema_unique(L, names, n_names, "duplicate case name",
                    "; expected case names unique in a scene");
  for (size_t i = 0; i < n_names; i++)
    free(copies[i]);
  free(copies);
  free(names);
  s->cases = cv.v;
  s->n_cases = cv.n;
  free(L->valid_cases);
  L->valid_cases = cv.valid;
}
