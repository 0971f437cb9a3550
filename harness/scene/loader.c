/* SPDX-License-Identifier: MIT */
/* The scene loader, while it is split into files of one concept each
 * (scene/yaml_tree.c builds the YAML tree; what is still here: the cases,
 * the scene documents and files). All errors of a file are collected,
 * sorted by position; a file with any error adds nothing. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/options.h"
#include "scene/expr.h"
#include "scene/load.h"
#include "scene/params.h"
#include "scene/quarantine.h"
#include "scene/suggest.h"

/* A case's keys (docs/scene-format.md#cases), one row each: a new key is
 * a row here and its branch in take_case, or in finish_case for a number
 * that may name a param (and its line in docs/scene.schema.json, which
 * tests/schema_check.py compares). */
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
  X(C_BYTES, "bytes")
enum { CASE_KEYS(ST__KEY_ID) C_NKEYS };
static const char *const case_keys[] = {CASE_KEYS(ST__KEY_NAME)};

/* SPEC §13: the matrix cases of one scene, counted before exclusions. */
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

/* What a param's expression may name (docs/scene-format.md#params-
 * expressions-and-lists): in `params`, the params written before it;
 * NULL (a matrix value, checked by take_matrix): anything. */
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
    if (k->kind != ST__YN_SCALAR || !st__schema_ident_ok(k->str, k->len)) {
      char got[100];
      st__ynode_describe(k, got, sizeof got);
      st__schema_error(L, k,
                       "expected a param name (" ST__IDENT_EXPECT
                       ") in params, got %s",
                       got);
    } else {
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
    st__schema_expect_message(L, v[C_EXPECT_MESSAGE], src->k[C_EXPECT_MESSAGE],
                              c->expect_error, &c->expect_message);
  if (v[C_GOLDEN_ARGS])
    c->golden_args =
        st__schema_golden_args(L, v[C_GOLDEN_ARGS], s, &c->n_golden_args);
  if (v[C_ENV])
    st__schema_env(L, v[C_ENV], &c->env);
  if (v[C_EXCLUDE] && v[C_MATRIX] == NULL)
    st__schema_error(
        L, src->k[C_EXCLUDE],
        "'exclude' without 'matrix'; expected it only in a matrix case");
}

static int use_cb(void *data, const char *name, size_t offset,
                  st__expr_error *err) {
  (void)offset;
  (void)err;
  st__case_param_use(data, name);
  return 0;
}

/* Marks every param the text of v names (and what those reach) used. */
static void use_val(st__case *c, const st__val *v) {
  st__expr_error xe;
  if (v->kind == ST__VAL_NAME && v->name)
    (void)st__expr_check(v->name, use_cb, c, &xe);
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
  use_val(c, &v);
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
  static const char *const tol_key[2] = {"rtol", "atol"};
  for (int t = 0; t < 2; t++) {
    const st__ynode *n = v[t ? C_ATOL : C_RTOL];
    if (n == NULL)
      continue;
    r = case_num(L, c, n, tol_key[t], ST__EXPR_FLOAT, &x, &via);
    if (r == 1)
      st__schema_expected(L, n, "a finite number >= 0 or a param name",
                          tol_key[t]);
    else if (r == 0 && (!isfinite(x.f) || x.f < 0))
      case_num_bad(L, c, n, tol_key[t], "a finite number >= 0", via, &x);
    else if (r == 0 && t == 0)
      c->has_rtol = 1, c->rtol = x.f;
    else if (r == 0)
      c->has_atol = 1, c->atol = x.f;
  }
  static const char *const work_key[2] = {"flops", "bytes"};
  for (int t = 0; t < 2; t++) {
    const st__ynode *n = v[t ? C_BYTES : C_FLOPS];
    if (n == NULL)
      continue;
    r = case_num(L, c, n, work_key[t], ST__EXPR_FLOAT, &x, &via);
    if (r == 0 && x.is_int)
      x.f = (double)x.i;
    if (r == 1)
      st__schema_expected(L, n, "a number >= 0, a param name or an expression",
                          work_key[t]);
    else if (r == 0 && (!isfinite(x.f) || x.f < 0))
      case_num_bad(L, c, n, work_key[t], "a finite number >= 0", via, &x);
    else if (r == 0)
      c->work[t] = x.f, c->has_work[t] = 1;
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
    st__case *v = realloc(cv->v, cap * sizeof *v);
    if (v == NULL) {
      L->oom = 1;
      return NULL;
    }
    cv->v = v;
    unsigned char *ok = realloc(cv->valid, cap);
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
    if (k->kind != ST__YN_SCALAR || !st__schema_ident_ok(k->str, k->len)) {
      char got[100];
      st__ynode_describe(k, got, sizeof got);
      st__schema_error(L, k,
                       "expected a param name (" ST__IDENT_EXPECT
                       ") in matrix, got %s",
                       got);
      continue;
    }
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
 * its params plus the matrix's, named NAME[P1=v1,P2=v2] (SPEC §13). */
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

/* A scene's keys (docs/scene-format.md), one row each: a new key is a
 * row here and its branch in take_scene_keys (and its line in
 * docs/scene.schema.json, which tests/schema_check.py compares). */
#define SCENE_KEYS(X)                                                          \
  X(K_SCENE, "scene")                                                          \
  X(K_LEVEL, "level")                                                          \
  X(K_KERNEL, "kernel")                                                        \
  X(K_GOLDEN, "golden")                                                        \
  X(K_RTOL, "rtol")                                                            \
  X(K_ATOL, "atol")                                                            \
  X(K_WORKERS, "workers")                                                      \
  X(K_SKIP, "skip_golden")                                                     \
  X(K_EQNAN, "equal_nan")                                                      \
  X(K_EXPECT, "expect")                                                        \
  X(K_ARGS, "args")                                                            \
  X(K_CASES, "cases")                                                          \
  X(K_GOLDEN_PLATFORM, "golden_platform")                                      \
  X(K_GOLDEN_ARGS, "golden_args")                                              \
  X(K_EXPECT_MESSAGE, "expect_message")                                        \
  X(K_ENV, "env")                                                              \
  X(K_GOLDEN_DEVICE, "golden_device")                                          \
  X(K_TAGS, "tags")                                                            \
  X(K_FLOPS, "flops")                                                          \
  X(K_BYTES, "bytes")
enum { SCENE_KEYS(ST__KEY_ID) K_NKEYS };
static const char *const scene_keys[] = {SCENE_KEYS(ST__KEY_NAME)};

/* Open addressing over an array of scenes: slot = index + 1, 0 = empty. */
static const st_scene *index_find(st_scene *const *arr, const size_t *slots,
                                  size_t cap, const char *name) {
  if (cap == 0)
    return NULL;
  for (size_t i = st__ytree_hash(name) & (cap - 1);; i = (i + 1) & (cap - 1)) {
    if (slots[i] == 0)
      return NULL;
    if (strcmp(arr[slots[i] - 1]->name, name) == 0)
      return arr[slots[i] - 1];
  }
}

/* Makes room for count entries (rehashing arr[0..count-1) when it grows),
 * then indexes arr[idx]. Returns -1 when out of memory. */
static int index_add(st_scene *const *arr, size_t **slots, size_t *cap,
                     size_t count, size_t idx) {
  if (count * 2 > *cap) {
    size_t ncap = *cap ? *cap : 16;
    while (count * 2 > ncap)
      ncap *= 2;
    size_t *ns = st__zalloc(ncap, sizeof *ns);
    if (ns == NULL)
      return -1;
    free(*slots);
    *slots = ns;
    *cap = ncap;
    for (size_t j = 0; j < count; j++)
      if (j != idx)
        (void)index_add(arr, slots, cap, count, j);
  }
  size_t i = st__ytree_hash(arr[idx]->name) & (*cap - 1);
  while ((*slots)[i] != 0)
    i = (i + 1) & (*cap - 1);
  (*slots)[i] = idx + 1;
  return 0;
}

static const st_scene *find_scene(const st__loader *L, const char *name) {
  const st_scene *s = NULL;
  if (L->set)
    s = index_find(L->set->scenes, L->set->name_index, L->set->name_index_cap,
                   name);
  if (s == NULL)
    s = index_find(L->scenes, L->index, L->index_cap, name);
  return s;
}

/* The names the scene's fields use, gathered once per scene. */
typedef struct namelist {
  st__loader *L;
  const char **v;
  size_t n, cap;
} namelist;

static int gather_cb(void *data, const char *name, size_t offset,
                     st__expr_error *err) {
  namelist *nl = data;
  (void)offset;
  (void)err;
  if (nl->n == nl->cap) {
    const char **v = st__array_grow(nl->v, &nl->cap, nl->n, sizeof *v, 16);
    if (v == NULL) {
      nl->L->oom = 1;
      return 0;
    }
    nl->v = v;
  }
  const char *copy = st__ytree_keep(nl->L->tree, name, strlen(name));
  if (copy)
    nl->v[nl->n++] = copy;
  else
    nl->L->oom = 1;
  return 0;
}

static void gather(namelist *nl, const st__val *v) {
  st__expr_error xe;
  if (v->kind == ST__VAL_NAME && v->name)
    (void)st__expr_check(v->name, gather_cb, nl, &xe);
}

/* Marks used each case's params that a field names, directly or through
 * other params' expressions (the unused-param warning reads `used`). */
static void mark_used(st__loader *L, st_scene *s) {
  namelist nl = {L, NULL, 0, 0};
  gather(&nl, &s->rtol_param);
  gather(&nl, &s->atol_param);
  for (size_t i = 0; s->args && i < s->n_args; i++) {
    const st__arg *a = &s->args[i];
    const st__val *one[] = {
        &a->dtype,      &a->value,     &a->rtol_param,
        &a->atol_param, &a->init.a,    &a->init.b,
        &a->shape_list, &a->ints_list, &a->init.values_list};
    for (size_t j = 0; j < sizeof one / sizeof one[0]; j++)
      gather(&nl, one[j]);
    for (size_t d = 0; a->shape && d < a->ndim; d++)
      gather(&nl, &a->shape[d]);
    for (size_t k = 0; a->init.values && k < a->init.n_values; k++)
      gather(&nl, &a->init.values[k]);
    for (size_t k = 0; a->ints && k < a->n_ints; k++)
      gather(&nl, &a->ints[k]);
  }
  for (size_t c = 0; c < s->n_cases; c++)
    for (size_t j = 0; j < nl.n; j++)
      st__case_param_use(&s->cases[c], nl.v[j]);
  free(nl.v);
}

/* Every case's plan, so that every case's params are checked now. The
 * same problem found in several cases is reported once. A plan without
 * errors is kept for the next case while that one resolves alike
 * (st__plan_same_inputs): a long list of cases with the same params
 * resolves once, and the check hook still sees every case. */
static void resolve_cases(st__loader *L, const st_scene *s) {
  const st__scene_check *chk = L->ext ? L->ext->check : NULL;
  st_error_list tmp;
  st__plan plan; /* the last plan that resolved, of case plan_i */
  size_t plan_i = 0;
  int have_plan = 0, quiet = 0; /* quiet: the hook said nothing of it */
  st_error_list_init(&tmp);
  memset(&plan, 0, sizeof plan);
  for (size_t i = 0; i < s->n_cases && !L->too_many; i++) {
    if (L->valid_cases == NULL || !L->valid_cases[i])
      continue;
    int alike = have_plan && st__plan_same_inputs(s, plan_i, i);
    if (!alike) {
      st__plan_free(&plan);
      st_status rc =
          st__plan_resolve(s, i, L->opts->max_arg_bytes, &plan, &tmp);
      have_plan = rc == ST_OK;
      plan_i = i;
      if (!have_plan)
        st__plan_free(&plan);
      if (rc == ST_ENOMEM)
        L->oom = 1;
    }
    /* A hook whose verdict is the plan's (kase_by_plan) said nothing of
     * this plan: nor will it of a case alike. */
    if (have_plan && chk != NULL && chk->kase != NULL &&
        !(alike && quiet && chk->kase_by_plan)) {
      st__diag d = {L};
      size_t before = L->n_diag;
      plan.kase = &s->cases[i];
      chk->kase(chk->data, s, i, &plan, &d);
      if (!alike)
        quiet = L->n_diag == before;
    }
    for (size_t e = 0; e < tmp.count; e++) {
      if (st__schema_listed(&L->errs, &tmp.items[e]))
        continue;
      st__schema_error_at(L, tmp.items[e].line, tmp.items[e].column, "%s",
                          tmp.items[e].message);
    }
    tmp.count = 0;
  }
  st__plan_free(&plan);
  st_error_list_free(&tmp);
}

/* `workers`: an integer from 1 to 64, or an expression of numbers (a
 * scene has no params of its own). */
static int take_workers(st__loader *L, const st__ynode *n, int64_t *out) {
  st__val v;
  st__expr_error xe;
  st__num x;
  if (!st__ynode_is_str(n) || n->len == 0)
    return st__schema_int(L, n, "workers", "an integer from 1 to 64", 1, 64,
                          out);
  memset(&v, 0, sizeof v);
  st__schema_val_at(&v, n);
  if (st__expr_eval(n->str, ST__EXPR_INT, NULL, NULL, &x, &xe) != 0) {
    st__schema_error_at(L, n->line, st__val_column(&v, xe.offset),
                        "workers: %s%s", xe.message,
                        strncmp(xe.message, "unknown name", 12) == 0
                            ? "; expected numbers only (a scene has no params)"
                            : "");
    return -1;
  }
  if (!x.is_int || x.i < 1 || x.i > 64) {
    st__schema_expected(L, n, "an integer from 1 to 64", "workers");
    return -1;
  }
  *out = x.i;
  return 0;
}

/* A new scene of root's document, with the defaults of
 * docs/scene-format.md (level 2, two workers); NULL when out of memory. */
static st_scene *scene_new(st__loader *L, const st__ynode *root) {
  st_scene *s = st__zalloc(1, sizeof *s);
  if (s == NULL) {
    L->oom = 1;
    return NULL;
  }
  s->level = 2;
  s->workers = 2;
  s->line = root->line;
  s->column = root->col;
  s->file = st__schema_strdup(L, L->file);
  if (L->dir)
    s->dir = st__schema_strdup(L, L->dir);
  return s;
}

/* The scene's keys from kernel to golden_device, each taken in turn (a
 * new scene key is taken here, or among the case keys for one that a
 * case may set too). */
static void take_scene_keys(st__loader *L, const st__ynode *const *v,
                            const st__ynode *const *k, st_scene *s,
                            int level_ok) {
  int64_t x;
  if (v[K_KERNEL]) {
    s->kernel = st__schema_string(L, v[K_KERNEL], "an op name", "kernel");
    s->kernel_line = s->golden_line = v[K_KERNEL]->line;
    s->kernel_column = s->golden_column = v[K_KERNEL]->col;
  }
  if (v[K_GOLDEN] && v[K_GOLDEN]->kind == ST__YN_MAP) {
    st__load_golden(L, v[K_GOLDEN], s);
    s->golden = st__schema_strdup(L, ST_PROGRAM_OP);
    s->golden_line = v[K_GOLDEN]->line;
    s->golden_column = v[K_GOLDEN]->col;
  } else if (v[K_GOLDEN]) {
    s->golden = st__schema_string(L, v[K_GOLDEN], "an op name", "golden");
    s->golden_line = v[K_GOLDEN]->line;
    s->golden_column = v[K_GOLDEN]->col;
  } else if (s->kernel) {
    s->golden = st__schema_strdup(L, s->kernel);
  }
  if (v[K_RTOL])
    st__schema_tol(L, v[K_RTOL], "rtol", &s->has_rtol, &s->rtol,
                   &s->rtol_param);
  if (v[K_ATOL])
    st__schema_tol(L, v[K_ATOL], "atol", &s->has_atol, &s->atol,
                   &s->atol_param);
  if (v[K_EQNAN])
    (void)st__schema_bool(L, v[K_EQNAN], "equal_nan", &s->equal_nan);
  if (v[K_EXPECT]) {
    int e = st__schema_expect(L, v[K_EXPECT], &s->quarantine);
    if (e >= 0) {
      s->expect_fail = e == ST__EXPECT_FAIL;
      s->expect_error = e == ST__EXPECT_ERROR;
    }
  }
  if (v[K_EXPECT_MESSAGE])
    st__schema_expect_message(L, v[K_EXPECT_MESSAGE], k[K_EXPECT_MESSAGE],
                              s->expect_error, &s->expect_message);
  if (v[K_WORKERS]) {
    if (take_workers(L, v[K_WORKERS], &x) == 0)
      s->workers = (unsigned)x;
    /* With a bad level, which one was meant is unknown: that error is
     * enough (the first cause wins). */
    if (s->level != 3 && level_ok)
      st__schema_error(
          L, k[K_WORKERS],
          "'workers' is only valid at level 3; expected no 'workers' in a "
          "level-%d scene",
          s->level);
  }
  if (v[K_SKIP])
    (void)st__schema_bool(L, v[K_SKIP], "skip_golden", &s->skip_golden);
  if (v[K_GOLDEN_PLATFORM])
    s->golden_platform = st__schema_string(
        L, v[K_GOLDEN_PLATFORM], "a platform name", "golden_platform");
  if (v[K_ENV])
    st__schema_env(L, v[K_ENV], &s->env);
  if (v[K_TAGS])
    s->tags = st__schema_tags(L, v[K_TAGS], &s->n_tags);
  if (v[K_ARGS])
    st__load_args(L, v[K_ARGS], s);
  if (v[K_GOLDEN_ARGS])
    s->golden_args =
        st__schema_golden_args(L, v[K_GOLDEN_ARGS], s, &s->n_golden_args);
  if (v[K_GOLDEN_DEVICE])
    s->golden_device = st__schema_device(L, v[K_GOLDEN_DEVICE]);
}

/* After the cases: the scene's name unique (name: its node), every case
 * resolved, the check hook; then the scene is kept (and indexed) if
 * nothing was wrong in it since before. */
static void finish_scene(st__loader *L, st_scene *s, const st__ynode *name,
                         size_t before) {
  if (s->name) {
    const st_scene *prev = find_scene(L, s->name);
    if (prev)
      st__schema_error(L, name,
                       "duplicate scene '%s' (first defined at %s:%d:%d)",
                       s->name, prev->file, prev->line, prev->column);
  }
  /* Resolve even when something else was wrong: every semantic error of
   * the file is wanted, and invalid args and cases are skipped, so what
   * is reported is never a consequence of an error already reported. */
  if (!L->oom)
    resolve_cases(L, s);
  if (!L->oom && L->ext && L->ext->check && L->ext->check->scene) {
    st__diag d = {L};
    L->ext->check->scene(L->ext->check->data, s, L->valid_cases, &d);
  }
  free(L->valid_cases);
  L->valid_cases = NULL;
  if (L->raised != before || L->oom || s->name == NULL) {
    st__scene_free(s);
    return;
  }
  st_scene **p =
      st__array_grow(L->scenes, &L->cap_scenes, L->n_scenes, sizeof *p, 4);
  if (p == NULL) {
    L->oom = 1;
    st__scene_free(s);
    return;
  }
  L->scenes = p;
  L->scenes[L->n_scenes] = s;
  if (index_add(L->scenes, &L->index, &L->index_cap, L->n_scenes + 1,
                L->n_scenes) != 0) {
    L->oom = 1;
    st__scene_free(s);
    return;
  }
  L->n_scenes++;
}

/* One scene document into L->scenes: its keys (SCENE_KEYS), its args and
 * its cases, then finish_scene. */
static void take_scene(st__loader *L, const st__ynode *root) {
  const st__ynode *v[K_NKEYS], *k[K_NKEYS];
  char got[100];
  size_t before = L->raised;
  int64_t x;
  if (root->kind != ST__YN_MAP) {
    st__ynode_describe(root, got, sizeof got);
    st__schema_error(
        L, root,
        "expected a scene mapping (scene, kernel, args, cases, ...), got %s",
        got);
    return;
  }
  st_scene *s = scene_new(L, root);
  if (s == NULL)
    return;
  st__schema_fields(L, root, "scene", scene_keys, K_NKEYS, v, k);
  st__schema_require(L, root, "scene", "scene", v[K_SCENE]);
  st__schema_require(L, root, "scene", "kernel", v[K_KERNEL]);
  st__schema_require(L, root, "scene", "args", v[K_ARGS]);
  st__schema_require(L, root, "scene", "cases", v[K_CASES]);
  if (v[K_SCENE]) {
    s->name = st__schema_ident(L, v[K_SCENE], "scene");
    s->line = v[K_SCENE]->line;
    s->column = v[K_SCENE]->col;
  }
  int level_ok = 1;
  if (v[K_LEVEL]) {
    level_ok = st__schema_int(L, v[K_LEVEL], "level", "2 (chip) or 3 (node)", 2,
                              3, &x) == 0;
    if (level_ok)
      s->level = (int)x;
  }
  take_scene_keys(L, v, k, s, level_ok);
  L->scene_work[0] = v[K_FLOPS];
  L->scene_work[1] = v[K_BYTES];
  if (v[K_CASES])
    st__load_cases(L, v[K_CASES], s);
  L->scene_work[0] = L->scene_work[1] = NULL;
  mark_used(L, s);
  st__load_golden_check(L, s, v[K_GOLDEN_PLATFORM],
                        s->golden_device ? v[K_GOLDEN_DEVICE] : NULL);
  finish_scene(L, s, v[K_SCENE], before);
}

/* The tree's problems are the file's errors; a poisoned node's only
 * count (its alias's error was reported). */
static int tree_error(void *ctx, const st__ynode *at, int line, int col,
                      const char *fmt, va_list ap) {
  st__loader *L = ctx;
  if (at != NULL && at->poison)
    L->raised++;
  else
    st__schema_error_v(L, line, col, fmt, ap);
  return L->oom;
}

static int tree_document(void *ctx, st__ytree *t, const st__ynode *root) {
  st__loader *L = ctx;
  L->tree = t;
  take_scene(L, root);
  L->tree = NULL;
  return L->oom;
}

static int err_cmp(const st_error *a, const st_error *b) {
  if (a->line != b->line)
    return a->line < b->line ? -1 : 1;
  if (a->column != b->column)
    return a->column < b->column ? -1 : 1;
  return 0;
}

/* NULL with errno ENOMEM when out of memory (realpath allocates too). */
static char *dir_of(const char *name) {
  char *copy = strdup(name), *slash, *real;
  int saved;
  if (copy == NULL)
    return NULL;
  slash = strrchr(copy, '/');
  if (slash == NULL)
    real = realpath(".", NULL);
  else if (slash == copy)
    real = realpath("/", NULL);
  else {
    *slash = '\0';
    real = realpath(copy, NULL);
  }
  saved = errno;
  free(copy);
  errno = saved;
  return real;
}

static void sort_errors(st_error_list *l) {
  /* Stable insertion sort by position: at most ST__LOAD_MAX_ERRORS + 1 items.
   */
  for (size_t i = 1; i < l->count; i++) {
    st_error e = l->items[i];
    size_t j = i;
    while (j > 0 && err_cmp(&l->items[j - 1], &e) > 0) {
      l->items[j] = l->items[j - 1];
      j--;
    }
    l->items[j] = e;
  }
}

/* Moves the file's scenes from L into set, indexed: ST_OK, or ST_ENOMEM
 * with those added so far kept (indexed) and the rest left in L. */
static st_status add_scenes(st_scene_set *set, st__loader *L) {
  if (set->count + L->n_scenes > set->capacity) {
    size_t cap = set->capacity ? set->capacity : 8;
    while (cap < set->count + L->n_scenes)
      cap *= 2;
    st_scene **p = realloc(set->scenes, cap * sizeof *p);
    if (p == NULL)
      return ST_ENOMEM;
    set->scenes = p;
    set->capacity = cap;
  }
  for (size_t i = 0; i < L->n_scenes; i++) {
    set->scenes[set->count] = L->scenes[i];
    if (index_add(set->scenes, &set->name_index, &set->name_index_cap,
                  set->count + 1, set->count) != 0) {
      /* The scenes added so far stay (indexed); the rest are freed. */
      memmove(L->scenes, L->scenes + i, (L->n_scenes - i) * sizeof *L->scenes);
      L->n_scenes -= i;
      return ST_ENOMEM;
    }
    set->count++;
  }
  L->n_scenes = 0;
  return ST_OK;
}

static st_status load_buffer(st_scene_set *set, const char *name,
                             const char *text, size_t length,
                             const st_load_options *opts,
                             const st__load_ext *ext, st_error_list *errors) {
  st__loader L;
  st_load_options taken;
  st_error bad;
  st_status rc = ST_OK;
  st_error_clear(&bad);
  if (st__load_options_take(opts, &taken, &bad) != ST_OK) {
    if (errors != NULL && st_error_list_add(errors, &bad) != ST_OK)
      return ST_ENOMEM;
    return bad.code;
  }
  opts = &taken;
  memset(&L, 0, sizeof L);
  L.file = name;
  L.buf = text;
  L.len = length;
  L.opts = opts;
  L.ext = ext;
  L.set = set;
  errno = 0;
  L.dir = dir_of(name);
  if (L.dir == NULL && errno == ENOMEM)
    L.oom = 1;
  st_error_list_init(&L.errs);
  st_error_list_init(&L.warns);
  if (!L.oom) {
    st__ytree_sink sink = {&L, tree_error, tree_document};
    if (st__ytree_parse(text, length, opts->max_nodes, &sink) != 0)
      L.oom = 1;
  }
  sort_errors(&L.errs);
  sort_errors(&L.warns);
  if (ext && ext->warnings)
    for (size_t i = 0; i < L.warns.count; i++)
      if (st_error_list_add(ext->warnings, &L.warns.items[i]) != ST_OK)
        L.oom = 1;
  /* Last, whatever its position: it is about the list, not the file. */
  if (L.too_many) {
    st_error e;
    st_error_clear(&e);
    st_error_set_at(&e, ST_ELOAD, name,
                    L.errs.count ? L.errs.items[L.errs.count - 1].line : 1,
                    L.errs.count ? L.errs.items[L.errs.count - 1].column : 1,
                    "too many errors; stopped after %d", ST__LOAD_MAX_ERRORS);
    if (st_error_list_add(&L.errs, &e) != ST_OK)
      L.oom = 1;
  }
  if (L.oom) {
    rc = ST_ENOMEM;
  } else if (L.errs.count || L.raised) {
    rc = ST_ELOAD;
  } else if ((rc = add_scenes(set, &L)) != ST_OK) {
    goto out;
  }
  if (errors) {
    for (size_t i = 0; i < L.errs.count; i++)
      if (st_error_list_add(errors, &L.errs.items[i]) != ST_OK)
        rc = ST_ENOMEM;
  }
out:
  for (size_t i = 0; i < L.n_scenes; i++)
    st__scene_free(L.scenes[i]);
  free(L.scenes);
  free(L.index);
  free(L.valid_cases);
  free(L.dir);
  st_error_list_free(&L.errs);
  st_error_list_free(&L.warns);
  return rc;
}

st_status st_scene_set_load_string(st_scene_set *set, const char *name,
                                   const char *text, size_t length,
                                   const st_load_options *opts,
                                   st_error_list *errors) {
  return load_buffer(set, name, text, length, opts, NULL, errors);
}

st_status st__scene_set_load_string_ext(st_scene_set *set, const char *name,
                                        const char *text, size_t length,
                                        const st_load_options *opts,
                                        const st__load_ext *ext,
                                        st_error_list *errors) {
  return load_buffer(set, name, text, length, opts, ext, errors);
}

st_status st__load_io_error(st_error_list *errors, const char *fmt,
                            const char *path, int errnum) {
  st_error e;
  st_error_clear(&e);
  st_error_set(&e, ST_ELOAD, fmt, path, strerror(errnum));
  if (errors && st_error_list_add(errors, &e) != ST_OK)
    return ST_ENOMEM;
  return ST_ELOAD;
}

/* 1 if the set already loaded this regular file, else records it and
 * returns 0; -1 when out of memory. */
static int file_seen(st_scene_set *set, const struct stat *sb) {
  struct st__file_id id = {(unsigned long long)sb->st_dev,
                           (unsigned long long)sb->st_ino};
  for (size_t i = 0; i < set->n_files; i++)
    if (set->files[i].dev == id.dev && set->files[i].ino == id.ino)
      return 1;
  struct st__file_id *v =
      st__array_grow(set->files, &set->files_cap, set->n_files, sizeof *v, 16);
  if (v == NULL)
    return -1;
  set->files = v;
  set->files[set->n_files++] = id;
  return 0;
}

st_status st__load_file(st_scene_set *set, const char *path,
                        const st_load_options *opts, const st__load_ext *ext,
                        st_error_list *errors) {
  /* Non-blocking, so that a FIFO (or a device) in a scene's place is
   * refused below instead of blocking the open until a writer comes
   * (issue 13, D3); for a regular file the flag changes nothing. */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  st__buf buf;
  st_status rc;
  struct stat sb;
  st__buf_init(&buf, SIZE_MAX);
  if (fd < 0)
    return st__load_io_error(errors, "cannot open '%s': %s", path, errno);
  if (fstat(fd, &sb) != 0) {
    rc = st__load_io_error(errors, "cannot read '%s': %s", path, errno);
    goto out;
  }
  if (S_ISDIR(sb.st_mode)) {
    rc = st__load_io_error(errors, "cannot read '%s': %s", path, EISDIR);
    goto out;
  }
  /* SPEC §7: the size bound is --max-file-bytes; the node budget bounds
   * only what aliases expand to, so a big honest file loads. */
  if (S_ISREG(sb.st_mode) && (uintmax_t)sb.st_size > opts->max_file_bytes) {
    st_error e;
    st_error_clear(&e);
    st_error_set_at(&e, ST_ELOAD, path, 1, 1,
                    "file of %jd bytes; expected at most %" PRIu64
                    " bytes (raise the limit with --max-file-bytes)",
                    (intmax_t)sb.st_size, opts->max_file_bytes);
    rc =
        errors && st_error_list_add(errors, &e) != ST_OK ? ST_ENOMEM : ST_ELOAD;
    goto out;
  }
  /* SPEC §7: a path that is not a regular file is an error before any
   * read: /dev/zero would otherwise be read until memory runs out. */
  if (!S_ISREG(sb.st_mode)) {
    const char *what = S_ISFIFO(sb.st_mode)   ? "a FIFO"
                       : S_ISCHR(sb.st_mode)  ? "a character device"
                       : S_ISBLK(sb.st_mode)  ? "a block device"
                       : S_ISSOCK(sb.st_mode) ? "a socket"
                                              : "not a regular file";
    st_error e;
    st_error_clear(&e);
    st_error_set(&e, ST_ELOAD,
                 "cannot read '%s': it is %s; expected a regular file", path,
                 what);
    rc =
        errors && st_error_list_add(errors, &e) != ST_OK ? ST_ENOMEM : ST_ELOAD;
    goto out;
  }
  {
    int seen = file_seen(set, &sb);
    if (seen != 0) {
      rc = seen > 0 ? ST_OK : ST_ENOMEM;
      goto out;
    }
  }
  /* The file's size, plus one byte to see the end of file in the first
   * read (a file that grew meanwhile grows the buffer). */
  size_t want = sb.st_size > 0 && (uintmax_t)sb.st_size < SIZE_MAX
                    ? (size_t)sb.st_size + 1
                    : 4096;
  for (;;) {
    if (buf.len == buf.cap &&
        st__buf_reserve(&buf, buf.cap ? buf.cap : want) != ST_OK) {
      rc = ST_ENOMEM;
      goto out;
    }
    ssize_t r = read(fd, buf.data + buf.len, buf.cap - buf.len);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0) {
      rc = st__load_io_error(errors, "cannot read '%s': %s", path, errno);
      goto out;
    }
    if (r == 0)
      break;
    st__buf_commit(&buf, (size_t)r);
  }
  rc = load_buffer(set, path, buf.data, buf.len, opts, ext, errors);
out:
  st__buf_free(&buf);
  close(fd);
  return rc;
}
