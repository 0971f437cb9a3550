/* SPDX-License-Identifier: MIT */
/* Loading scene text into a scene set: st_scene_set_load_string, and one
 * file's load for the path scan (scene/scan.c). scene/yaml_tree.c parses the
 * file into one node tree per document; each document is taken here into the
 * model of scene/scene.h (its top-level keys; args, golden program and cases by
 * their sections, scene/load.h), and every case is resolved with
 * st__plan_resolve so that docs/scene-format.md's rules are checked at
 * load time. All errors of a file are collected (its first syntax error
 * included), sorted by position; a file with any error adds nothing. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "base/buf.h"
#include "base/options.h"
#include "scene/expr.h"
#include "scene/load.h"
#include "scene/params.h"

/* A scene's keys (docs/scene-format.md#scene-keys), one row each: a new key is
 * a row here and its branch in take_scene_keys (and its line in
 * docs/scene.schema.json, which tests/lint/schema_check.py compares). */
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
  X(K_BYTES, "bytes")                                                          \
  X(K_TOL, "tolerance")                                                        \
  X(K_BOUND_FACTOR, "bound_factor")                                            \
  X(K_COMPUTE_DTYPE, "compute_dtype")
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
  st__schema_tolspec(L, v[K_TOL], v[K_BOUND_FACTOR], v[K_COMPUTE_DTYPE],
                     &s->tol);
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
    st_scene **p = st__array_resize(set->scenes, cap, sizeof *p);
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
  /* docs/scene-format.md#shapes-and-limits: the size bound is --max-file-bytes;
   * the node budget bounds only what aliases expand to, so a big honest file
   * loads. */
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
  /* docs/scene-format.md#shapes-and-limits: a path that is not a regular file
   * is an error before any read: /dev/zero would otherwise be read until memory
   * runs out. */
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
