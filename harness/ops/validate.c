/* SPDX-License-Identifier: MIT */
/* The load-time validation pass (docs/scene-format.md#load-errors): the checks
 * that need more than the scene model, run by the loader through
 * st__scene_check so that their errors join the file's other errors in the same
 * pass. It owns: unknown ops (an error with did-you-mean when no plugin is
 * given, else a warning), unknown platforms in `platforms` and `manual` (a
 * warning with did-you-mean, an error under `check` or --strict-platforms),
 * unused params (a warning), and the static binding of built-in ops: their
 * signatures are fixed whoever implements them, so st_op_check runs on
 * every case's plan with tensors that have shapes but no data, and a
 * binding error is a load error at the case's line. It sits in ops/
 * because it needs the registry and the signature table; the loader
 * below it knows only the hooks. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <scenetest/op.h>

#include "base/util.h"
#include "ops/avail.h"
#include "ops/backends.h"
#include "ops/registry_internal.h"
#include "ops/validate.h"
#include "scene/golden_view.h"
#include "scene/suggest.h"

static int is_builtin_op(const char *op) {
  for (size_t i = 0; st__builtin_ops[i] != NULL; i++)
    if (strcmp(st__builtin_ops[i], op) == 0)
      return 1;
  return 0;
}

static size_t n_builtin_ops(void) {
  size_t n = 0;
  while (st__builtin_ops[n] != NULL)
    n++;
  return n;
}

/* "copy, add, ..., transpose": the built-in ops in op_list.h's order. */
static const char *builtin_list(char *buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; st__builtin_ops[i] != NULL && used < size; i++)
    used += (size_t)snprintf(buf + used, size - used, "%s%s", i > 0 ? ", " : "",
                             st__builtin_ops[i]);
  return buf;
}

/* The case name as written: a matrix case's base name, so that what its
 * combinations share is reported once. */
#define CASE_FMT "%.*s"
#define CASE_ARG(c) (int)(c)->base_len, (c)->name

static void check_op(const st__validate *v, const char *op, const char *key,
                     int line, int column, st__diag *d) {
  /* docs/torch.md#aten-ops: aten:: names are the torch plugin's to resolve when
   * the case runs (lazily: it is not loaded yet); without it they are a case
   * error naming the plugin, not a load error. */
  if (op != NULL &&
      (strncmp(op, "aten::", 6) == 0 || strcmp(op, ST_PROGRAM_OP) == 0))
    return;
  if (op == NULL || is_builtin_op(op) || st__registry_has_op(v->registry, op))
    return;
  const char *dym = st__suggest(op, st__builtin_ops, n_builtin_ops());
  char hint[160] = "";
  if (dym)
    snprintf(hint, sizeof hint, ": did you mean '%s'?", dym);
  char ops[512];
  if (!v->have_plugins)
    st__diag_error(d, line, column,
                   "unknown op '%s' for '%s'%s%s expected a built-in op "
                   "(%s) or one that a --plugin provides",
                   op, key, hint, dym ? "" : ";",
                   builtin_list(ops, sizeof ops));
  else
    st__diag_warning(d, line, column,
                     "op '%s' for '%s' is neither built in nor registered "
                     "by a plugin loaded so far%s%s a lazy plugin may "
                     "provide it when the case runs",
                     op, key, hint, dym ? "" : ";");
}

static void check_platform_list(const st__validate *v, const st__case *c,
                                char *const *list, size_t n, const char *key,
                                int line, int column, st__diag *d) {
  for (size_t i = 0; i < n; i++) {
    if (list[i] == NULL || st_registry_has_platform(v->registry, list[i]))
      continue;
    const char *dym = st__suggest(list[i], v->platforms, v->n_platforms);
    char hint[160] = "";
    if (dym)
      snprintf(hint, sizeof hint, ": did you mean '%s'?", dym);
    if (v->strict_platforms)
      st__diag_error(d, line, column,
                     "'%s' of case '" CASE_FMT "' names platform '%s', which "
                     "no backend provides%s%s expected one of: %s",
                     key, CASE_ARG(c), list[i], hint, dym ? "" : ";",
                     v->platform_text);
    else
      st__diag_warning(d, line, column,
                       "'%s' of case '" CASE_FMT "' names platform '%s', "
                       "which no backend provides%s%s known platforms: %s",
                       key, CASE_ARG(c), list[i], hint, dym ? "" : ";",
                       v->platform_text);
  }
}

/* Case ci's golden backend, when the run lacks it: a load error at the
 * case under --strict-platforms, else counted for `check` (ops/avail.h). */
static void check_needs(st__validate *v, const st_scene *s, size_t ci,
                        st__diag *d) {
  const st__case *c = &s->cases[ci];
  int skip = v->skip_golden        ? 1
             : c->skip_golden >= 0 ? c->skip_golden
                                   : s->skip_golden;
  const char *backend, *dym;
  char why[512], hint[160] = "";
  size_t k;
  if (skip)
    return;
  backend = st__golden_backend(v->cli_golden, s, ci);
  if (st__backend_available(v->registry, backend))
    return;
  /* A name a known platform is close to is likely a typo: said at the
   * case, with the did-you-mean, in every command
   * (docs/scene-format.md#load-errors). */
  dym = st__suggest(backend, v->platforms, v->n_platforms);
  if (dym)
    snprintf(hint, sizeof hint, ": did you mean '%s'?", dym);
  if (v->strict_needs) {
    st__backend_missing(backend, why, sizeof why);
    st__diag_error(d, c->line, c->column,
                   "case '" CASE_FMT "' needs golden backend '%s', which is "
                   "%s%s%s%s (--strict-platforms)",
                   CASE_ARG(c), backend, why, dym ? " (did you mean '" : "",
                   dym ? dym : "", dym ? "'?)" : "");
    return;
  }
  if (dym)
    st__diag_warning(d, c->line, c->column,
                     "'golden_platform' of case '" CASE_FMT "' names "
                     "platform '%s', which no backend provides%s known "
                     "platforms: %s",
                     CASE_ARG(c), backend, hint, v->platform_text);
  for (k = 0; k < v->n_missing; k++)
    if (strcmp(v->missing[k].backend, backend) == 0)
      break;
  if (k == v->n_missing) {
    if (k == sizeof v->missing / sizeof v->missing[0])
      return;
    snprintf(v->missing[k].backend, sizeof v->missing[k].backend, "%s",
             backend);
    v->n_missing++;
  }
  v->missing[k].cases++;
}

/* The names the scene's args and tolerances use, sorted: a param none of
 * them names (and no case-level field) is unused. */
typedef struct names {
  const char **v;
  size_t n, cap;
} names;

static int names_add(names *ns, const st__val *val) {
  if (val->kind != ST__VAL_NAME || val->name == NULL)
    return 0;
  const char **p = st__array_grow(ns->v, &ns->cap, ns->n, sizeof *p, 32);
  if (p == NULL)
    return -1;
  ns->v = p;
  ns->v[ns->n++] = val->name;
  return 0;
}

static int str_cmp(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int scene_names(const st_scene *s, names *ns) {
  int rc = names_add(ns, &s->rtol_param) | names_add(ns, &s->atol_param);
  for (size_t i = 0; i < s->n_args && rc == 0; i++) {
    const st__arg *a = &s->args[i];
    rc |= names_add(ns, &a->dtype) | names_add(ns, &a->value) |
          names_add(ns, &a->rtol_param) | names_add(ns, &a->atol_param) |
          names_add(ns, &a->init.a) | names_add(ns, &a->init.b);
    for (size_t d = 0; a->shape && d < a->ndim; d++)
      rc |= names_add(ns, &a->shape[d]);
    for (size_t k = 0; a->init.values && k < a->init.n_values; k++)
      rc |= names_add(ns, &a->init.values[k]);
    rc |= names_add(ns, &a->expected.a) | names_add(ns, &a->expected.b);
    for (size_t k = 0; a->expected.values && k < a->expected.n_values; k++)
      rc |= names_add(ns, &a->expected.values[k]);
  }
  if (ns->n > 1)
    qsort(ns->v, ns->n, sizeof *ns->v, str_cmp);
  return rc;
}

static int names_has(const names *ns, const char *name) {
  return ns->n > 0 &&
         bsearch(&name, ns->v, ns->n, sizeof *ns->v, str_cmp) != NULL;
}

static void on_scene(void *data, const st_scene *s, const unsigned char *valid,
                     st__diag *d) {
  st__validate *v = data;
  names ns = {0};
  check_op(v, s->kernel, "kernel", s->kernel_line, s->kernel_column, d);
  if (s->program != NULL && v->compile_programs)
    st__validate_program(v, s, d);
  if (s->golden && (s->kernel == NULL || strcmp(s->golden, s->kernel) != 0))
    check_op(v, s->golden, "golden", s->golden_line, s->golden_column, d);
  int names_ok = scene_names(s, &ns) == 0;
  for (size_t i = 0; valid != NULL && i < s->n_cases; i++) {
    const st__case *c = &s->cases[i];
    if (!valid[i] || c->name == NULL)
      continue;
    check_platform_list(v, c, c->platforms, c->n_platforms, "platforms",
                        c->platforms_line, c->platforms_column, d);
    check_platform_list(v, c, c->manual_platforms, c->n_manual, "manual",
                        c->manual_line, c->manual_column, d);
    /* The golden backend (golden_platform, or torch for an aten::
     * golden): one the run lacks makes the case a skip when it runs, an
     * error under --strict-platforms (docs/cli.md). */
    check_needs(v, s, i, d);
    for (size_t p = 0; names_ok && p < c->n_params; p++) {
      const st__param *pa = &c->params[p];
      if (pa->name == NULL || pa->used || names_has(&ns, pa->name))
        continue;
      st__diag_warning(d, pa->line, pa->column,
                       "param '%s' of case '" CASE_FMT "' is not used: no "
                       "dtype, shape, init, value or tolerance names it",
                       pa->name, CASE_ARG(c));
    }
  }
  free(ns.v);
}

/* A byte that stands for tensor data: st_op_check wants data for a
 * non-empty tensor but never reads it. */
static unsigned char no_data;

static void bind_op(const char *op, const char *key, const st__plan *plan,
                    st_tensor *tensors, size_t n_tensors, st_scalar *scalars,
                    size_t n_scalars, st__diag *d) {
  st_op_call call;
  if (op == NULL || !is_builtin_op(op))
    return;
  st_op_call_init(&call);
  call.op = op;
  call.backend = "static";
  call.tensors = tensors;
  call.n_tensors = n_tensors;
  call.scalars = scalars;
  call.n_scalars = n_scalars;
  call.shard_count = 1;
  if (st_op_check(&call) != ST_OK)
    st__diag_error(d, plan->kase->line, plan->kase->column,
                   "case '%s': the arguments do not bind to %s op '%s': %s",
                   plan->kase->name, key, op, call.message);
}

/* The golden binds to its view of the args (golden_view.h), not to
 * every arg: a kernel's scratch and config args are not its. */
static void bind_golden(const st_scene *s, const st__plan *plan,
                        const st_tensor *t, size_t nt, const st_scalar *sc,
                        st__diag *d) {
  size_t n = plan->n_args ? plan->n_args : 1;
  size_t *idx = calloc(n, sizeof *idx);
  st_tensor *vt = calloc(n, sizeof *vt);
  st_scalar *vs = calloc(n, sizeof *vs);
  size_t m, gt = 0, gs = 0;
  if (idx == NULL || vt == NULL || vs == NULL)
    goto out; /* the run binds again */
  m = st__golden_view(s, plan->kase, idx);
  for (size_t i = 0; i < m; i++) {
    if (idx[i] < nt)
      vt[gt++] = t[idx[i]];
    else if (idx[i] - nt < plan->n_args - nt)
      vs[gs++] = sc[idx[i] - nt];
  }
  bind_op(s->golden, "golden", plan, vt, gt, vs, gs, d);
out:
  free(idx);
  free(vt);
  free(vs);
}

static void on_case(void *data, const st_scene *s, size_t ci,
                    const st__plan *plan, st__diag *d) {
  st_tensor *t = calloc(plan->n_args ? plan->n_args : 1, sizeof *t);
  st_scalar *sc = calloc(plan->n_args ? plan->n_args : 1, sizeof *sc);
  (void)data;
  (void)ci;
  if (t == NULL || sc == NULL) {
    free(t);
    free(sc);
    return; /* the run binds again; nothing is lost but the early error */
  }
  /* Tensors and scalars each in their own order: a scene that puts a
   * scalar first is an error of its own (the loader's), but its case
   * still comes here, and must not index before either array. */
  size_t nt = 0, ns = 0;
  for (size_t i = 0; i < plan->n_args; i++) {
    const st__rarg *r = &plan->args[i];
    if (r->is_tensor) {
      st_tensor *x = &t[nt++];
      x->name = r->name;
      x->dtype = r->dtype;
      x->role = r->role;
      x->ndim = r->ndim;
      for (int k = 0; k < r->ndim; k++)
        x->shape[k] = r->shape[k];
      x->numel = r->numel;
      x->nbytes = r->nbytes;
      x->data = &no_data;
    } else {
      st_scalar *y = &sc[ns++];
      y->name = r->name;
      y->dtype = r->dtype;
      y->is_int = !st_dtype_is_float(r->dtype);
      y->i = r->value.is_int ? r->value.i : (int64_t)r->value.f;
      y->f = r->value.is_int ? (double)r->value.i : r->value.f;
    }
  }
  bind_op(s->kernel, "kernel", plan, t, nt, sc, ns, d);
  if (s->golden && st__golden_needed(s, plan->kase) &&
      (s->kernel == NULL || strcmp(s->golden, s->kernel) != 0 ||
       !st__golden_view_is_all(s, plan->kase)))
    bind_golden(s, plan, t, nt, sc, d);
  free(t);
  free(sc);
}

st_status st__validate_init(st__validate *v, st_registry *registry,
                            int have_plugins, int strict_platforms,
                            st__scene_check *hooks) {
  memset(v, 0, sizeof *v);
  memset(hooks, 0, sizeof *hooks);
  v->registry = registry;
  v->have_plugins = have_plugins;
  v->strict_platforms = strict_platforms;
  v->platform_text = malloc(4096);
  if (v->platform_text == NULL)
    return ST_ENOMEM;
  st_registry_platforms(registry, v->platform_text, 4096);
  size_t n = 1;
  for (const char *p = v->platform_text; *p; p++)
    n += *p == ',';
  v->platforms = calloc(n, sizeof *v->platforms);
  char *copy = strdup(v->platform_text);
  if (v->platforms == NULL || copy == NULL) {
    free(copy);
    st__validate_free(v);
    return ST_ENOMEM;
  }
  /* The list is "a, b, c"; split a copy, kept after the text. */
  char *save = NULL;
  for (char *tok = strtok_r(copy, ", ", &save); tok;
       tok = strtok_r(NULL, ", ", &save))
    v->platforms[v->n_platforms++] = tok;
  if (v->n_platforms == 0)
    free(copy);
  hooks->data = v;
  hooks->kase = on_case;
  hooks->kase_by_plan = 1; /* it binds the plan's args to the scene's ops */
  hooks->scene = on_scene;
  return ST_OK;
}

void st__validate_free(st__validate *v) {
  if (v == NULL)
    return;
  if (v->n_platforms > 0)
    free((char *)v->platforms[0]);
  free(v->platforms);
  free(v->platform_text);
  memset(v, 0, sizeof *v);
}
