/* SPDX-License-Identifier: MIT */
/* The in-memory scene model (what the loader builds) and its per-case
 * resolution into a plan: dtypes, shapes, byte counts, init parameters and
 * effective tolerances with params substituted. No libyaml here. */
#ifndef SCENETEST_HARNESS_SCENE_H
#define SCENETEST_HARNESS_SCENE_H

#include <scenetest/run.h>
#include <scenetest/scene.h>
#include <scenetest/tensor.h>

#include "base/util.h"

/* A numeric literal: exact integer when is_int, else double. For an
 * integer literal f holds (double)i too. */
typedef struct st__num {
  int is_int;
  int64_t i;
  double f;
} st__num;

/* A value as written: a number, or a name (a param, a dtype, a string). */
typedef enum st__val_kind {
  ST__VAL_NONE = 0,
  ST__VAL_NUM = 1,
  ST__VAL_NAME = 2
} st__val_kind;

/* ST__VAL_NAME holds a param name or an expression over params
 * (docs/scene-format.md#params-expressions-and-lists): one grammar,
 * harness/scene/expr.c, reads both. */
typedef struct st__val {
  st__val_kind kind;
  st__num num;
  char *name; /* ST__VAL_NAME; owned */
  int line;   /* 1-based position of the value in the file */
  int column;
  int text_column; /* column of the text's first character when its byte
                      offsets map one to one onto columns (one line, no
                      quote escapes), so that an expression's error points
                      at its token; 0: point at column */
} st__val;

typedef enum st__init_kind {
  ST__INIT_ZEROS = 0,
  ST__INIT_ONES,
  ST__INIT_FILL,
  ST__INIT_RANGE,
  ST__INIT_UNIFORM,
  ST__INIT_NORMAL,
  ST__INIT_RANDINT,
  ST__INIT_VALUES,
  ST__INIT_FILE,
  ST__INIT_EXACT /* integers in [-R, R], R from the op (plan_bound.c) */
} st__init_kind;

typedef struct st__init {
  st__init_kind kind;
  st__val a; /* fill V; range start; uniform LO; normal MEAN; randint LO */
  st__val b; /* range step; uniform HI; normal STD; randint HI */
  st__val *values; /* ST__INIT_VALUES; owned */
  size_t n_values;
  char *path; /* ST__INIT_FILE: resolved absolute path; owned */
  int line;
  int column;
  char *path_given;    /* ST__INIT_FILE: the path as written (for messages,
                          which must not depend on where the tree lives);
                          owned. Added by the loader. */
  int given;           /* 1 when the scene wrote `init:` (0: the default
                          zeros), so that outputs with no explicit init can be
                          poisoned
                          (docs/reliability.md#guard-zones-guard-pages-and-poisoning) */
  st__val values_list; /* `values: lens`: a list param (ST__VAL_NAME) that
                          gives every value, resolved per case */
} st__init;

/* `tolerance`, `bound_factor` and `compute_dtype` as one level (scene,
 * case or tensor) writes them (docs/scene-format.md#the-error-bound). */
typedef enum st__tolmode {
  ST__TOL_UNSET = 0,
  ST__TOL_ALLCLOSE = 1, /* rtol and atol */
  ST__TOL_BOUND = 2
} st__tolmode;
typedef struct st__tolspec { /* all zero: nothing written */
  st__tolmode mode;
  double factor; /* bound_factor; 0 unset, else > 0 */
  int has_compute_dtype;
  st_dtype compute_dtype;
  int line, column;       /* where `tolerance` is written (mode set) */
  int cd_line, cd_column; /* where `compute_dtype` is written */
} st__tolspec;

typedef struct st__arg {
  char *name; /* owned */
  int is_tensor;
  int line;
  int column;
  st__val dtype;  /* ST__VAL_NAME: a dtype name or a param name */
  st__val *shape; /* tensors; owned */
  size_t ndim;
  st__init init; /* tensors */
  st_role role;  /* tensors; default input */
  int has_rtol, has_atol;
  double rtol, atol;
  st__val rtol_param, atol_param; /* a param name (ST__VAL_NAME) instead of
                                     a number: resolved per case */
  int equal_nan;                  /* -1 unset, else 0/1 */
  int compare;                    /* outputs; default 1 */
  st__val value;                  /* scalars: ST_SCALAR_NUMBER */
  st_scalar_kind scalar_kind;     /* scalars; default number */
  st__val *ints; /* ST_SCALAR_INTS: numbers or param names; owned */
  size_t n_ints;
  char *string;       /* ST_SCALAR_STRING; owned */
  st__val shape_list; /* `shape: DIMS`: the list param that gives the whole
                         shape (ST__VAL_NAME), resolved per case */
  st__val ints_list;  /* `ints: lens` likewise */
  st__init expected;  /* outputs and inouts: `expected:`, the value compare
                         wants instead of golden's (has_expected) */
  int has_expected;
  st__tolspec tol; /* the tensor's own */
  int invalid;     /* loader only: this arg had errors, so plans skip it
                      (every other arg is still checked). Added by the
                      loader; never set on a loaded scene. */
} st__arg;

typedef struct st__param {
  char *name; /* owned */
  int is_str; /* a dtype name (the only strings a param holds) */
  st__num num;
  char *str; /* owned, is_str */
  int line;
  int column;
  int used;      /* some field names it, directly or through another param's
                    expression (set by the loader) */
  st__val expr;  /* ST__VAL_NAME: an expression over the params written
                    before it (or, in a matrix, over the case's others),
                    evaluated in the domain of the field that uses it;
                    ST__VAL_NONE otherwise. Text owned. */
  st__val *list; /* a list param (lens: [33, 17, 128]): numbers or
                    expressions; owned, each entry's text too */
  size_t n_list;
  int is_list;
} st__param;

/* `env:` of a scene or a case (docs/scene-format.md): NAME = VALUE pairs
 * in written order, each value the scalar's text as written. */
typedef struct st__env {
  char **kv; /* 2 * n strings: name, value, ...; owned */
  size_t n;
  int line, column; /* where `env:` is written */
} st__env;

typedef struct st__case {
  char *name; /* owned */
  int line;
  int column;
  st__param *params; /* owned */
  size_t n_params;
  int has_platforms;
  char **platforms; /* owned */
  size_t n_platforms;
  int manual_all;          /* manual: true */
  char **manual_platforms; /* manual: [p, ...]; owned */
  size_t n_manual;
  int skip_golden; /* -1 unset */
  unsigned rounds; /* 0 unset */
  int has_rtol, has_atol;
  double rtol, atol;
  double timeout; /* 0 unset */
  /* `flops`, `bytes` (the case's, else the scene's; docs/bench.md): the
   * work of one run; has_work[i] 0: not given. */
  int has_work[2];
  double work[2];
  int equal_nan;   /* -1 unset, else 0/1 */
  int expect_fail; /* resolved: the case's `expect`, else the
                      scene's (docs/scene-format.md#matrix-cases) */
  size_t base_len; /* a matrix case: the length of NAME in
                      NAME[P=v,...]; else strlen(name) */
  int platforms_line, platforms_column; /* where the lists are written */
  int manual_line, manual_column;
  char *golden_platform; /* owned; NULL unset */
  int expect_error;      /* resolved like expect_fail: `expect: error`
                            (docs/scene-format.md) */
  char *expect_message;  /* owned; NULL: the scene's */
  size_t *golden_args;   /* owned: indices into the scene's args, in
                            the order written; NULL: the scene's */
  size_t n_golden_args;
  int golden_device; /* ST__DEVICE_* (scene/program.h); unset 0 */
  void *block;       /* owned; when set, name, params and the
                        params' names live in it, not owned one
                        by one (a case as written: one allocation
                        a case, not one a string) */
  st__env env;       /* the case's own; scene/env.c merges */
  struct st__quarantine *quarantine; /* owned; resolved: the case's
                                `expect` mapping, else the scene's (a
                                copy); NULL: none (scene/quarantine.h) */
  char **tags;                       /* owned: the case's own tags, each once */
  size_t n_tags;
  st__tolspec tol; /* the case's own */
} st__case;

struct st_scene {
  char *name; /* owned */
  char *file; /* owned: the path as given */
  char *dir;  /* owned: realpath of the file's directory */
  int line;
  int column;
  int level;                      /* 2 or 3 */
  char *kernel;                   /* owned */
  char *golden;                   /* owned: defaults to kernel */
  int kernel_line, kernel_column; /* where the ops are named (golden: */
  int golden_line, golden_column; /* the kernel's when not given) */
  int has_rtol, has_atol;
  double rtol, atol;
  unsigned workers;               /* level 3; default 2 */
  int skip_golden;                /* default 0 */
  st__val rtol_param, atol_param; /* param-named tolerances, per case */
  int equal_nan;                  /* default 0 */
  int expect_fail;                /* default 0 */
  char *golden_platform;          /* owned; NULL: reference (or the CLI's) */
  int expect_error;               /* default 0 */
  char *expect_message;           /* owned; NULL: any message */
  size_t *golden_args; /* owned: indices into args; NULL: every arg but
                          scratch (scene/golden_view.h) */
  size_t n_golden_args;
  struct st__program *program; /* owned: `golden:` as a program (golden is
                                  then ST_PROGRAM_OP); NULL: an op name */
  int golden_device;           /* ST__DEVICE_* (scene/program.h); unset 0 */
  st__arg *args;               /* owned */
  size_t n_args;
  st__case *cases; /* owned */
  size_t n_cases;
  st__env env; /* every case's, under its own (scene/env.c) */
  struct st__quarantine *quarantine; /* owned: `expect` as a mapping;
                                        NULL: none */
  char **tags;                       /* owned: every case's, before its own */
  size_t n_tags;
  st__tolspec tol; /* every case's, under its own */
};

struct st_scene_set {
  st_scene **scenes; /* owned */
  size_t count;
  size_t capacity;
  /* The loader's hash index of scene names (slot = index + 1, 0 empty),
   * so duplicate checks stay O(1) for thousands of scenes. Added by the
   * loader; owned, freed by st_scene_set_free. */
  size_t *name_index;
  size_t name_index_cap;
  /* (device, inode) of every file loaded into the set: a file named twice
   * (say, a directory and a file in it) is loaded once, as pytest does,
   * instead of clashing with itself. Added by the loader; owned, freed by
   * st_scene_set_free. */
  struct st__file_id {
    unsigned long long dev, ino;
  } * files;
  size_t n_files, files_cap;
};

/* One argument of one case, resolved. */
typedef struct st__rarg {
  const st__arg *arg;
  const char *name; /* borrowed from arg */
  int is_tensor;
  st_dtype dtype;
  st_role role;
  int compare;
  int ndim;
  int64_t shape[ST_MAX_DIMS];
  size_t numel;
  size_t nbytes;
  st__init_kind init;
  int poison;      /* an output (not inout) with no explicit init: filled
                      with the poison before each run and checked for
                      never-written elements by compare
                      (docs/reliability.md#guard-zones-guard-pages-and-poisoning) */
  st__num a, b;    /* init parameters, params substituted */
  st__num *values; /* ST__INIT_VALUES; owned by the plan */
  size_t n_values;
  const char *path;  /* ST__INIT_FILE; borrowed from arg */
  double rtol, atol; /* effective: tensor > case > scene > dtype default */
  int equal_nan;     /* effective: tensor > case > scene > false */
  st__num value;     /* scalars */
  st_scalar_kind scalar_kind;
  int64_t *ints; /* ST_SCALAR_INTS; owned by the plan */
  size_t n_ints;
  const char *string;        /* ST_SCALAR_STRING; borrowed from arg */
  struct st__rarg *expected; /* `expected:` resolved as an init of this
                                tensor's dtype and shape; owned by the
                                plan; NULL: golden's */
  /* `tolerance: bound` on this output (scene/plan_bound.c): the allowed
   * difference is bound_factor * (gamma(n) * magsum + u_o * (|actual| +
   * |expected|)) + atol, magsum from the reference golden; rtol unused.
   * bound_n 0 with bound_softmax: n is per element (the golden gives it). */
  int bound;
  int bound_softmax;
  uint64_t bound_n;
  double bound_gamma; /* gamma(bound_n) in bound_uc */
  double bound_uc;    /* the compute dtype's unit roundoff */
  double bound_uo;    /* the output dtype's */
  double bound_factor;
} st__rarg;

/* One case, resolved: what args, golden and compare need. */
typedef struct st__plan {
  const st_scene *scene;
  const st__case *kase;
  st__rarg *args; /* owned; tensors first */
  size_t n_args;
  size_t n_tensors;
  uint64_t total_bytes; /* sum of tensor nbytes */
} st__plan;

/* Resolves case case_index of scene: substitutes params, checks dtypes,
 * shape products (overflow), the byte cap, that every value fits its dtype
 * exactly. Every problem is appended to errors (may be NULL) with its
 * position; returns ST_ELOAD if there was any (out is then freed).
 * Thread-safety: any thread. */
st_status st__plan_resolve(const st_scene *scene /* IN */, size_t case_index,
                           uint64_t max_arg_bytes, st__plan *out /* OUT */,
                           st_error_list *errors /* OUT */) ST_WUR;
/* Accepts a zeroed plan. */
void st__plan_free(st__plan *plan /* IN/OUT */);
/* 1 if cases a and b of scene resolve to the same plan (but for its
 * kase), so that a plan without errors of one stands for the other: the
 * same params (names, order, values) and the same case-level rtol, atol
 * and equal_nan, which is all that resolution reads of a case beside the
 * name and position its messages give. The loader resolves every case of
 * a scene at load time, and most cases of a long scene share a plan.
 * Thread-safety: any thread. */
int st__plan_same_inputs(const st_scene *scene /* IN */, size_t a, size_t b);

/* Default tolerances per dtype (torch.testing.assert_close). */
void st__default_tolerance(st_dtype dtype, double *rtol /* OUT */,
                           double *atol /* OUT */);

/* ------------------------------------------------------------------ */
/* Load-time checks above the model (docs/scene-format.md#load-errors) */

/* Where a check reports: the loader's list of a file's errors (sorted by
 * position with the others; any error keeps the file out of the set), or
 * its warnings. Exact repeats are dropped (a matrix case repeats its
 * positions). */
typedef struct st__diag st__diag;
void st__diag_error(st__diag *d /* IN/OUT */, int line, int column,
                    const char *fmt /* IN: printf format */, ...)
    ST_PRINTF(4, 5);
void st__diag_warning(st__diag *d /* IN/OUT */, int line, int column,
                      const char *fmt /* IN: printf format */, ...)
    ST_PRINTF(4, 5);

/* A validation pass the loader runs without knowing what it checks: the
 * layer above (harness/ops/validate.c) knows the registry and the ops,
 * which the loader must not depend on. Work handed down as a struct of
 * function pointers, as libuv's uv__work. Either callback may be NULL. */
typedef struct st__scene_check {
  void *data;
  /* Every case whose plan resolved, with that plan. */
  void (*kase)(void *data, const st_scene *scene, size_t case_index,
               const st__plan *plan, st__diag *diag);
  /* 1: what kase says of a case depends on its plan only (the case's
   * name and position aside), so after it said nothing of one case it is
   * not called for the next cases whose plans are the same
   * (st__plan_same_inputs). */
  int kase_by_plan;
  /* Once per scene document, after its cases; valid[i] says whether case
   * i loaded without errors (fields of an invalid one may be NULL). The
   * scene itself may have errors too: every field may be NULL. */
  void (*scene)(void *data, const st_scene *scene, const unsigned char *valid,
                st__diag *diag);
} st__scene_check;

/* What the CLI adds to a load beyond st_load_options. */
typedef struct st__load_ext {
  const st__scene_check *check; /* NULL: none */
  st_error_list *warnings;      /* NULL: warnings dropped */
  const char *const *ignore;    /* --ignore globs for directory scans */
  size_t n_ignore;
} st__load_ext;

/* st_scene_set_load_path with the extensions (ext may be NULL).
 * Thread-safety: one thread per set. */
st_status st__scene_set_load_path_ext(st_scene_set *set /* IN/OUT */,
                                      const char *path /* IN */,
                                      const st_load_options *opts /* IN */,
                                      const st__load_ext *ext /* IN */,
                                      st_error_list *errors /* OUT */) ST_WUR;
/* st_scene_set_load_string with the extensions (ext may be NULL). */
st_status st__scene_set_load_string_ext(st_scene_set *set /* IN/OUT */,
                                        const char *name /* IN */,
                                        const char *text /* IN */,
                                        size_t length,
                                        const st_load_options *opts /* IN */,
                                        const st__load_ext *ext /* IN */,
                                        st_error_list *errors /* OUT */) ST_WUR;

/* The environment case case_index of scene runs under: the scene's
 * pairs with the case's values over them, then the case's other names
 * (case entries win). *kv is a malloc'd array of 2 * *n borrowed strings
 * (NULL when *n is 0). ST_ENOMEM. Thread-safety: any thread. */
st_status st__case_env(const st_scene *scene /* IN */, size_t case_index,
                       const char ***kv /* OUT */, size_t *n /* OUT */) ST_WUR;
/* The tags of case case_index of scene (scene/tags.c): the scene's, then
 * the case's own not among them. *out is a malloc'd array of *n borrowed
 * strings (NULL when *n is 0). ST_ENOMEM. Thread-safety: any thread. */
st_status st__case_tags(const st_scene *scene /* IN */, size_t case_index,
                        const char ***out /* OUT */,
                        size_t *n /* OUT */) ST_WUR;
/* 1 when some case of scene has an environment. */
int st__scene_has_env(const st_scene *scene /* IN */);
/* Frees what an st__env owns. */
void st__env_free(st__env *env /* IN/OUT */);

/* Frees what a case owns (not the case itself). */
void st__case_free_fields(st__case *c /* IN/OUT */);

/* Frees one scene; accepts NULL. */
void st__scene_free(st_scene *scene /* IN, owned */);

#endif
