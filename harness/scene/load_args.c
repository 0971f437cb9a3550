/* SPDX-License-Identifier: MIT */
/* A scene's `args:` (docs/scene-format.md#arguments): tensor args with their
 * shape, init, role and comparison, and scalar args in their three forms
 * ({value}, {ints}, {string}), each checked as it is taken. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scene/load.h"

/* A tensor arg's keys (docs/scene-format.md#arguments), one row each: a new
 * key is a row here and its branch in take_tensor (and its line in
 * docs/scene.schema.json, which tests/lint/schema_check.py compares). */
#define TENSOR_KEYS(X)                                                         \
  X(T_TENSOR, "tensor")                                                        \
  X(T_DTYPE, "dtype")                                                          \
  X(T_SHAPE, "shape")                                                          \
  X(T_INIT, "init")                                                            \
  X(T_ROLE, "role")                                                            \
  X(T_RTOL, "rtol")                                                            \
  X(T_ATOL, "atol")                                                            \
  X(T_COMPARE, "compare")                                                      \
  X(T_EQNAN, "equal_nan")                                                      \
  X(T_EXPECTED, "expected")                                                    \
  X(T_TOL, "tolerance")                                                        \
  X(T_BOUND_FACTOR, "bound_factor")                                            \
  X(T_COMPUTE_DTYPE, "compute_dtype")
enum { TENSOR_KEYS(ST__KEY_ID) T_NKEYS };
static const char *const tensor_keys[] = {TENSOR_KEYS(ST__KEY_NAME)};
static const char *const scalar_keys[] = {"scalar", "dtype", "value", "ints",
                                          "string"};
enum { A_SCALAR, A_DTYPE, A_VALUE, A_INTS, A_STRING };

/* The init forms that are a mapping {FORM: ...}, one row each: a new
 * form is a row here and its branch in take_init_form. */
#define INIT_FORMS(X)                                                          \
  X(I_FILL, "fill")                                                            \
  X(I_RANGE, "range")                                                          \
  X(I_UNIFORM, "uniform")                                                      \
  X(I_NORMAL, "normal")                                                        \
  X(I_RANDINT, "randint")                                                      \
  X(I_VALUES, "values")                                                        \
  X(I_FILE, "file")
enum { INIT_FORMS(ST__KEY_ID) I_NFORMS };
static const char *const init_forms[] = {INIT_FORMS(ST__KEY_NAME)};
static const char *const range_keys[] = {"start", "step"};

#define INIT_EXPECT                                                            \
  "zeros, ones, exact, {fill: V}, {range: {start: S, step: T}}, {uniform: "    \
  "[LO, "                                                                      \
  "HI]}, {normal: [MEAN, STD]}, {randint: [LO, HI]}, {values: [...]}, "        \
  "{file: PATH}"

/* The init forms that are one word, one row each: the kind it sets and
 * the word. */
#define INIT_WORDS(X)                                                          \
  X(ST__INIT_ZEROS, "zeros")                                                   \
  X(ST__INIT_ONES, "ones")                                                     \
  X(ST__INIT_EXACT, "exact") /* the range: scene/plan_bound.c */
static const int init_word_kinds[] = {INIT_WORDS(ST__KEY_ID)};
static const char *const init_words[] = {INIT_WORDS(ST__KEY_NAME)};
#define N_INIT_WORDS (sizeof init_words / sizeof init_words[0])
static const char *const role_words[] = {"input", "output", "inout", "scratch"};

static void take_shape(st__loader *L, const st__ynode *n, st__arg *a) {
  if (st__schema_list_name(L, n, &a->shape_list))
    return;
  if (n->kind != ST__YN_SEQ) {
    st__schema_expected(
        L, n, "a list of dimensions or the name of a list param", "shape");
    return;
  }
  if (n->n > ST_MAX_DIMS) {
    st__schema_error(L, n, "shape has %zu dimensions; expected at most %d",
                     n->n, ST_MAX_DIMS);
    return;
  }
  a->shape = st__schema_seq_alloc(L, n, sizeof *a->shape);
  if (a->shape == NULL)
    return;
  a->ndim = n->n;
  for (size_t i = 0; i < n->n; i++) {
    const st__ynode *d = n->kids[i];
    if (d->kind == ST__YN_SCALAR && d->sk == ST__YS_INT && d->i >= 0) {
      a->shape[i].kind = ST__VAL_NUM;
      a->shape[i].num = st__schema_num(d);
      a->shape[i].line = d->line;
      a->shape[i].column = d->col;
    } else if (st__ynode_is_str(d) && d->len > 0) {
      (void)st__schema_val(L, d, "shape", &a->shape[i]);
    } else {
      st__schema_expected(L, d, "a non-negative integer or a param name",
                          "shape");
    }
  }
}

static void take_pair(st__loader *L, const st__ynode *n, const char *form,
                      st__init *in) {
  if (n->kind != ST__YN_SEQ || n->n != 2) {
    char what[64];
    snprintf(what, sizeof what, "a list of two values [%s]",
             strcmp(form, "normal") == 0 ? "MEAN, STD" : "LO, HI");
    st__schema_expected(L, n, what, form);
    return;
  }
  (void)st__schema_val(L, n->kids[0], form, &in->a);
  (void)st__schema_val(L, n->kids[1], form, &in->b);
}

/* A whole-list field (values, ints): the name of a list param into
 * *list, or a sequence: its array of *n items of size bytes. NULL for a
 * name, or after the error (what: the error's expected form). */
static void *list_field(st__loader *L, const st__ynode *v, st__val *list,
                        const char *what, const char *key, size_t size,
                        size_t *n) {
  void *items;
  if (st__schema_list_name(L, v, list))
    return NULL;
  if ((items = st__schema_seq(L, v, what, key, size)) != NULL)
    *n = v->n;
  return items;
}

/* {values: [...]} (or the name of a list param) into in. */
static void take_init_values(st__loader *L, const st__ynode *v, st__init *in) {
  in->kind = ST__INIT_VALUES;
  in->values = list_field(L, v, &in->values_list,
                          "a list of numbers or the name of a list param",
                          "values", sizeof *in->values, &in->n_values);
  if (in->values == NULL)
    return;
  for (size_t i = 0; i < v->n; i++) {
    const st__ynode *e = v->kids[i];
    /* The common case inline: a million numbers must load fast. */
    if (e->kind == ST__YN_SCALAR &&
        (e->sk == ST__YS_INT || e->sk == ST__YS_FLOAT)) {
      in->values[i].kind = ST__VAL_NUM;
      in->values[i].num = st__schema_num(e);
      in->values[i].line = e->line;
      in->values[i].column = e->col;
    } else if (st__schema_val(L, e, "values", &in->values[i]) != 0 &&
               L->too_many) {
      break;
    }
  }
}

/* The mapping form of an init, one of vals[I_*] given, into in. */
static void take_init_form(st__loader *L, const st__ynode *const *vals,
                           st__init *in) {
  if (vals[I_FILL]) {
    in->kind = ST__INIT_FILL;
    (void)st__schema_val(L, vals[I_FILL], "fill", &in->a);
  } else if (vals[I_RANGE]) {
    const st__ynode *r = vals[I_RANGE], *rv[2];
    in->kind = ST__INIT_RANGE;
    if (r->kind != ST__YN_MAP) {
      st__schema_expected(L, r, "a mapping {start: S, step: T}", "range");
      return;
    }
    st__schema_fields(L, r, "range", range_keys, 2, rv, NULL);
    st__schema_require(L, r, "range", "start", rv[0]);
    st__schema_require(L, r, "range", "step", rv[1]);
    if (rv[0])
      (void)st__schema_val(L, rv[0], "start", &in->a);
    if (rv[1])
      (void)st__schema_val(L, rv[1], "step", &in->b);
  } else if (vals[I_UNIFORM]) {
    in->kind = ST__INIT_UNIFORM;
    take_pair(L, vals[I_UNIFORM], "uniform", in);
  } else if (vals[I_NORMAL]) {
    in->kind = ST__INIT_NORMAL;
    take_pair(L, vals[I_NORMAL], "normal", in);
  } else if (vals[I_RANDINT]) {
    in->kind = ST__INIT_RANDINT;
    take_pair(L, vals[I_RANDINT], "randint", in);
  } else if (vals[I_VALUES]) {
    take_init_values(L, vals[I_VALUES], in);
  } else if (vals[I_FILE]) {
    in->kind = ST__INIT_FILE;
    st__schema_file(L, vals[I_FILE], in);
  }
}

/* An init or an expected value (docs/scene-format.md#inits): a word of
 * INIT_WORDS, or a mapping with one of INIT_FORMS. */
static void take_init(st__loader *L, const st__ynode *n, st__init *in) {
  in->line = n->line;
  in->column = n->col;
  for (size_t i = 0; i < N_INIT_WORDS; i++)
    if (st__ynode_is_str(n) && strcmp(n->str, init_words[i]) == 0) {
      in->kind = init_word_kinds[i];
      return;
    }
  if (n->kind != ST__YN_MAP || n->n != 2) {
    if (n->kind == ST__YN_MAP && n->n > 2)
      st__schema_error(L, n->kids[2],
                       "init has more than one form; expected exactly "
                       "one of: " INIT_EXPECT);
    else
      st__schema_expected_word(L, n, "one of: " INIT_EXPECT, "init", init_words,
                               N_INIT_WORDS);
    return;
  }
  const st__ynode *vals[I_NFORMS];
  st__schema_fields(L, n, "init", init_forms, I_NFORMS, vals, NULL);
  take_init_form(L, vals, in);
}

/* A scratch arg (docs/scene-format.md, role) is a workspace nobody
 * reads or checks: the keys that set its values or its comparison are
 * errors at the key, not ignored. */
static void check_scratch(st__loader *L, const st__ynode *const *v,
                          const st__ynode *const *k, const st__arg *a) {
  static const int keys[] = {T_INIT, T_EXPECTED,     T_RTOL,
                             T_ATOL, T_EQNAN,        T_COMPARE,
                             T_TOL,  T_BOUND_FACTOR, T_COMPUTE_DTYPE};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
    if (v[keys[i]] != NULL)
      st__schema_error(
          L, k[keys[i]],
          "scratch arg '%s' takes no '%s': nobody reads or checks a "
          "scratch tensor; expected only tensor, dtype, shape and role",
          a->name ? a->name : "?", tensor_keys[keys[i]]);
}

/* `expected:` (docs/scene-format.md): an output's or inout's expected
 * value, in any init form, instead of golden's. */
static void take_expected(st__loader *L, const st__ynode *n,
                          const st__ynode *key, const st__ynode *compare,
                          st__arg *a) {
  if (a->role == ST_ROLE_INPUT) {
    st__schema_error(
        L, key,
        "'expected' on input '%s'; expected it only on outputs and inouts "
        "(role: output or inout)",
        a->name ? a->name : "?");
    return;
  }
  if (compare != NULL && !a->compare) {
    st__schema_error(
        L, key,
        "'expected' on output '%s', which has compare: false; expected "
        "'expected' only on a compared output",
        a->name ? a->name : "?");
    return;
  }
  take_init(L, n, &a->expected);
  a->expected.given = 1;
  a->has_expected = 1;
}

static void take_tensor(st__loader *L, const st__ynode *n, st__arg *a) {
  const st__ynode *v[T_NKEYS], *k[T_NKEYS];
  a->is_tensor = 1;
  a->compare = 1;
  a->equal_nan = -1;
  a->role = ST_ROLE_INPUT;
  st__schema_fields(L, n, "tensor arg", tensor_keys, T_NKEYS, v, k);
  st__schema_require(L, n, "tensor arg", "tensor", v[T_TENSOR]);
  st__schema_require(L, n, "tensor arg", "dtype", v[T_DTYPE]);
  st__schema_require(L, n, "tensor arg", "shape", v[T_SHAPE]);
  if (v[T_TENSOR])
    a->name = st__schema_ident(L, v[T_TENSOR], "tensor");
  if (v[T_DTYPE])
    st__schema_dtype(L, v[T_DTYPE], &a->dtype);
  if (v[T_SHAPE])
    take_shape(L, v[T_SHAPE], a);
  if (v[T_INIT]) {
    take_init(L, v[T_INIT], &a->init);
    a->init.given = 1;
  } else {
    a->init.kind = ST__INIT_ZEROS; /* docs/scene-format.md#inits: the default */
    a->init.line = n->line;
    a->init.column = n->col;
  }
  if (v[T_ROLE]) {
    const st__ynode *r = v[T_ROLE];
    if (st__ynode_is_str(r) && strcmp(r->str, "input") == 0)
      a->role = ST_ROLE_INPUT;
    else if (st__ynode_is_str(r) && strcmp(r->str, "output") == 0)
      a->role = ST_ROLE_OUTPUT;
    else if (st__ynode_is_str(r) && strcmp(r->str, "inout") == 0)
      a->role = ST_ROLE_INOUT;
    else if (st__ynode_is_str(r) && strcmp(r->str, "scratch") == 0)
      a->role = ST_ROLE_SCRATCH;
    else
      st__schema_expected_word(L, r, "one of: input, output, inout, scratch",
                               "role", role_words, 4);
  }
  if (a->role == ST_ROLE_SCRATCH) {
    a->compare = 0;
    check_scratch(L, v, k, a);
    return;
  }
  if (v[T_RTOL])
    st__schema_tol(L, v[T_RTOL], "rtol", &a->has_rtol, &a->rtol,
                   &a->rtol_param);
  if (v[T_ATOL])
    st__schema_tol(L, v[T_ATOL], "atol", &a->has_atol, &a->atol,
                   &a->atol_param);
  if (v[T_EQNAN])
    (void)st__schema_bool(L, v[T_EQNAN], "equal_nan", &a->equal_nan);
  if (v[T_COMPARE] &&
      st__schema_bool(L, v[T_COMPARE], "compare", &a->compare) == 0 &&
      !a->compare && a->role != ST_ROLE_OUTPUT)
    st__schema_error(
        L, v[T_COMPARE],
        "compare: false on %s '%s'; expected it only on outputs (role: "
        "output), since inputs and inouts are always checked",
        a->role == ST_ROLE_INOUT ? "inout" : "input", a->name ? a->name : "?");
  if (v[T_EXPECTED])
    take_expected(L, v[T_EXPECTED], k[T_EXPECTED], v[T_COMPARE], a);
  st__schema_tolspec(L, v[T_TOL], v[T_BOUND_FACTOR], v[T_COMPUTE_DTYPE],
                     &a->tol);
}

/* docs/torch.md#aten-ops's two forms for ATen schemas, besides {scalar, dtype,
 * value}: {scalar: N, ints: [...]} (an int[]; entries may name params) and
 * {scalar: N, string: S}. Each form takes only its own keys. */
static void take_scalar_form(st__loader *L, const st__ynode *const *v,
                             st__arg *a) {
  const char *form = v[A_INTS] ? "ints" : "string";
  if (v[A_INTS] && v[A_STRING])
    st__schema_error(
        L, v[A_STRING],
        "scalar arg has both 'ints' and 'string'; expected one of value, "
        "ints, string");
  if (v[A_VALUE])
    st__schema_error(L, v[A_VALUE],
                     "scalar arg has both '%s' and 'value'; expected one "
                     "of value, ints, string",
                     form);
  if (v[A_DTYPE])
    st__schema_error(L, v[A_DTYPE],
                     "scalar arg with '%s' takes no dtype; expected "
                     "{scalar: NAME, %s: ...}",
                     form, form);
  if (v[A_INTS]) {
    const st__ynode *l = v[A_INTS];
    a->scalar_kind = ST_SCALAR_INTS;
    a->ints = list_field(L, l, &a->ints_list,
                         "a list of integers or param names, or the name of "
                         "a list param",
                         "ints", sizeof *a->ints, &a->n_ints);
    if (a->ints == NULL)
      return;
    for (size_t i = 0; i < l->n; i++)
      (void)st__schema_val(L, l->kids[i], "ints", &a->ints[i]);
    return;
  }
  a->scalar_kind = ST_SCALAR_STRING;
  a->string = st__schema_string(L, v[A_STRING], "a string", "string");
}

static void take_scalar(st__loader *L, const st__ynode *n, st__arg *a) {
  const st__ynode *v[5];
  a->is_tensor = 0;
  st__schema_fields(L, n, "scalar arg", scalar_keys, 5, v, NULL);
  st__schema_require(L, n, "scalar arg", "scalar", v[A_SCALAR]);
  if (v[A_SCALAR])
    a->name = st__schema_ident(L, v[A_SCALAR], "scalar");
  if (v[A_INTS] || v[A_STRING]) {
    take_scalar_form(L, v, a);
    return;
  }
  st__schema_require(L, n, "scalar arg", "dtype", v[A_DTYPE]);
  st__schema_require(L, n, "scalar arg", "value", v[A_VALUE]);
  if (v[A_DTYPE])
    st__schema_dtype(L, v[A_DTYPE], &a->dtype);
  if (v[A_VALUE])
    (void)st__schema_val(L, v[A_VALUE], "value", &a->value);
}

void st__load_args(st__loader *L, const st__ynode *n, st_scene *s) {
  s->args = st__schema_seq(L, n, "a list of tensor and scalar args", "args",
                           sizeof *s->args);
  if (s->args == NULL)
    return;
  st__named *names = st__schema_seq_alloc(L, n, sizeof *names);
  size_t n_names = 0;
  if (names == NULL)
    return;
  s->n_args = n->n;
  int seen_scalar = 0;
  for (size_t i = 0; i < n->n; i++) {
    const st__ynode *item = n->kids[i];
    st__arg *a = &s->args[i];
    a->line = item->line;
    a->column = item->col;
    a->invalid = 1; /* until it validates */
    if (item->kind != ST__YN_MAP) {
      char got[100];
      st__ynode_describe(item, got, sizeof got);
      st__schema_error(
          L, item,
          "expected an arg mapping {tensor: NAME, ...} or {scalar: NAME, "
          "...}, got %s",
          got);
      continue;
    }
    int is_tensor = -1;
    for (size_t p = 0; p + 1 < item->n; p += 2) {
      const st__ynode *k = item->kids[p];
      if (st__ynode_is_str(k) && strcmp(k->str, "tensor") == 0) {
        is_tensor = 1;
        break;
      }
      if (st__ynode_is_str(k) && strcmp(k->str, "scalar") == 0) {
        is_tensor = 0;
        break;
      }
    }
    if (is_tensor < 0) {
      st__schema_error(
          L, item,
          "arg has neither 'tensor' nor 'scalar'; expected {tensor: NAME, "
          "dtype, shape, ...} or {scalar: NAME, dtype, value}");
      continue;
    }
    if (is_tensor && seen_scalar)
      st__schema_error(L, item, "tensor after scalar: tensors must come first");
    size_t before = L->raised;
    if (is_tensor) {
      take_tensor(L, item, a);
    } else {
      seen_scalar = 1;
      take_scalar(L, item, a);
    }
    a->invalid = L->raised != before;
    if (a->name) {
      names[n_names].name = a->name;
      names[n_names].line = item->line;
      names[n_names].col = item->col;
      names[n_names].idx = i;
      n_names++;
    }
  }
  st__schema_unique(L, names, n_names, "duplicate arg name",
                    "; expected names unique across tensors and scalars");
  free(names);
}
