/* SPDX-License-Identifier: MIT */
/* The scene loader's state and its schema checks (scene/schema.c), shared
 * by the loader's files: load.c (a file's scenes), load_args.c,
 * load_golden.c and cases.c (their sections). A check takes one node of
 * the YAML tree (scene/yaml_tree.h) as docs/scene-format.md says it must
 * be, or reports why not, in one FILE:LINE:COL line, and goes on: all
 * errors of a file are collected. */
#ifndef SCENETEST_HARNESS_SCENE_SCHEMA_H
#define SCENETEST_HARNESS_SCENE_SCHEMA_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "scene/expr.h"
#include "scene/quarantine.h"
#include "scene/scene.h"
#include "scene/yaml_tree.h"

/* After this many errors in one file, stop reporting: a generated file
 * with a systematic mistake should not print a million lines. */
#define ST__LOAD_MAX_ERRORS 100
#define ST__MAX_IDENT 128
#define ST__IDENT_EXPECT                                                       \
  "an identifier ([A-Za-z_][A-Za-z0-9_]*, at most 128 characters)"

/* A table of keys is one X-macro of rows X(ID, "name"): these make its
 * enum of IDs and its array of names, in the same order
 * (tests/lint/schema_check.py reads the rows). */
#define ST__KEY_ID(id, name) id,
#define ST__KEY_NAME(id, name) name,

/* One file's load. */
typedef struct st__loader {
  size_t n_diag;    /* st__diag_error and _warning calls (the check hooks') */
  const char *file; /* as given */
  const char *buf;
  size_t len;
  char *dir; /* realpath of the file's directory; NULL if unknown */
  const st_load_options *opts;
  const st__load_ext *ext; /* NULL: no checks above the model */
  const st_scene_set *set;
  st__ytree *tree; /* of the document being taken */
  st_error_list errs;
  st_error_list warns;
  size_t raised; /* errors found, including those not listed (a poisoned
                    node's, or past ST__LOAD_MAX_ERRORS): what validity
                    checks use */
  int too_many;
  int oom;
  unsigned char *valid_cases; /* of the scene being validated */
  uint64_t matrix_total;      /* matrix combinations so far in this scene */
  st_scene **scenes;          /* built from this file, not yet in the set */
  size_t n_scenes, cap_scenes;
  size_t *index; /* of scenes[] by name */
  size_t index_cap;
  /* The scene's flops and bytes nodes while its cases are taken
   * (docs/bench.md#the-work-model); NULL: none. */
  const st__ynode *scene_work[2];
} st__loader;

/* The validation pass's view of the loader (scene.h). */
struct st__diag {
  st__loader *L;
};

/* Names that must be unique: sorted (by name, then position in the
 * file), so that a list of a million names is O(n log n). */
typedef struct st__named {
  const char *name;
  int line, col;
  size_t idx;
} st__named;

/* What `expect` says of a case (docs/scene-format.md). */
enum {
  ST__EXPECT_PASS = 0,
  ST__EXPECT_FAIL = 1,
  ST__EXPECT_ERROR = 2,
  ST__EXPECT_QUARANTINE = 3
};

/* A number or bool scalar's value (inline: a list of a million numbers
 * takes each through it). */
static inline st__num st__schema_num(const st__ynode *n /* IN */) {
  st__num v;
  v.is_int = n->sk != ST__YS_FLOAT;
  v.i = v.is_int ? n->i : 0;
  v.f = n->f;
  return v;
}

/* Errors. An error at line:col (made printable, one line; the same one
 * at the same place is listed once); at node n unless n is poisoned
 * (its alias's error was reported: then only counted). */
void st__schema_error_v(st__loader *L /* IN/OUT */, int line, int col,
                        const char *fmt, va_list ap);
void st__schema_error_at(st__loader *L /* IN/OUT */, int line, int col,
                         const char *fmt, ...) ST_PRINTF(4, 5);
void st__schema_error(st__loader *L /* IN/OUT */, const st__ynode *n /* IN */,
                      const char *fmt, ...) ST_PRINTF(3, 4);
/* 1 if l holds an error of e's position and message. */
int st__schema_listed(const st_error_list *l /* IN */,
                      const st_error *e /* IN */);
/* "expected WHAT for 'KEY', got N"; _word adds "; did you mean 'W'?"
 * when a string value is near one of cands[0..nc). */
void st__schema_expected(st__loader *L /* IN/OUT */,
                         const st__ynode *n /* IN */, const char *what,
                         const char *key);
void st__schema_expected_word(st__loader *L /* IN/OUT */,
                              const st__ynode *n /* IN */, const char *what,
                              const char *key, const char *const *cands,
                              size_t nc);

/* Plain values. Each returns what it took (owned by the caller) or an
 * error status after reporting the error; out of memory sets L->oom. */
char *st__schema_strdup(st__loader *L /* IN/OUT */, const char *s /* IN */);
int st__schema_ident_ok(const char *s /* IN */, size_t len);
int st__schema_ident_valid(st__loader *L /* IN/OUT */,
                           const st__ynode *n /* IN */, const char *key);
/* A key of a mapping of names (params, matrix, env) that is an
 * identifier: 1, else 0 after "expected a WHAT (...) in WHERE, got K". */
int st__schema_name_key(st__loader *L /* IN/OUT */, const st__ynode *k /* IN */,
                        const char *what, const char *where);
char *st__schema_ident(st__loader *L /* IN/OUT */, const st__ynode *n /* IN */,
                       const char *key);
char *st__schema_string(st__loader *L /* IN/OUT */, const st__ynode *n /* IN */,
                        const char *what, const char *key);
int st__schema_bool(st__loader *L /* IN/OUT */, const st__ynode *n /* IN */,
                    const char *key, int *out /* OUT */);
int st__schema_int(st__loader *L /* IN/OUT */, const st__ynode *n /* IN */,
                   const char *key, const char *what, int64_t lo, int64_t hi,
                   int64_t *out /* OUT */);
void st__schema_val_at(st__val *v /* OUT */, const st__ynode *n /* IN */);
int st__schema_expr(st__loader *L /* IN/OUT */, const st__ynode *n /* IN */,
                    const char *key, st__val *out /* OUT */,
                    st__expr_name_fn fn, void *data);
void st__schema_tol(st__loader *L /* IN/OUT */, const st__ynode *n /* IN */,
                    const char *key, int *has /* OUT */, double *out /* OUT */,
                    st__val *param /* OUT */);
int st__schema_val(st__loader *L /* IN/OUT */, const st__ynode *n /* IN */,
                   const char *key, st__val *out /* OUT */);
/* `tolerance`, `bound_factor`, `compute_dtype` (any may be NULL: not
 * given) into *out. */
void st__schema_tolspec(st__loader *L /* IN/OUT */,
                        const st__ynode *tol /* IN */,
                        const st__ynode *factor /* IN */,
                        const st__ynode *cdt /* IN */,
                        st__tolspec *out /* OUT */);
int st__schema_list_name(st__loader *L /* IN/OUT */,
                         const st__ynode *n /* IN */, st__val *out /* OUT */);
void st__schema_dtype(st__loader *L /* IN/OUT */, const st__ynode *n /* IN */,
                      st__val *out /* OUT */);

/* Structure. st__schema_fields: the values (and key nodes, knodes may be
 * NULL) of a mapping's known keys[0..nkeys), NULL for one not given;
 * unknown and duplicate keys are errors. */
void st__schema_fields(st__loader *L /* IN/OUT */,
                       const st__ynode *map /* IN */, const char *what,
                       const char *const *keys, size_t nkeys,
                       const st__ynode **vals /* OUT */,
                       const st__ynode **knodes /* OUT, may be NULL */);
void st__schema_require(st__loader *L /* IN/OUT */,
                        const st__ynode *map /* IN */, const char *what,
                        const char *key, const st__ynode *val /* IN */);
/* Every later duplicate of items[0..n) (sorted here when there is one)
 * as "PREFIX 'name' (first given at L:C)SUFFIX". */
void st__schema_unique(st__loader *L /* IN/OUT */,
                       st__named *items /* IN/OUT */, size_t n,
                       const char *prefix, const char *suffix);
/* A zeroed array for sequence n's items (one when it is empty), or NULL
 * with L->oom set; _seq first checks that n is a list (`what` for
 * `key`). */
void *st__schema_seq_alloc(st__loader *L /* IN/OUT */,
                           const st__ynode *n /* IN */, size_t size);
void *st__schema_seq(st__loader *L /* IN/OUT */, const st__ynode *n /* IN */,
                     const char *what, const char *key, size_t size);

/* Keys that scenes and cases (and args) share. */
void st__schema_file(st__loader *L /* IN/OUT */, const st__ynode *n /* IN */,
                     st__init *in /* OUT: path, path_given */);
int st__schema_device(st__loader *L /* IN/OUT */, const st__ynode *n /* IN */);
char **st__schema_platforms(st__loader *L /* IN/OUT */,
                            const st__ynode *n /* IN */, const char *key,
                            size_t *count /* OUT */);
char **st__schema_tags(st__loader *L /* IN/OUT */, const st__ynode *n /* IN */,
                       size_t *count /* OUT */);
/* ST__EXPECT_*, or -1 after an error; *q set only for a whole
 * quarantine. */
int st__schema_expect(st__loader *L /* IN/OUT */, const st__ynode *n /* IN */,
                      st__quarantine **q /* IN/OUT */);
size_t *st__schema_golden_args(st__loader *L /* IN/OUT */,
                               const st__ynode *n /* IN */,
                               const st_scene *s /* IN */,
                               size_t *count /* OUT */);
void st__schema_expect_message(st__loader *L /* IN/OUT */,
                               const st__ynode *n /* IN */,
                               const st__ynode *key /* IN */, int expect_error,
                               char **out /* OUT */);
void st__schema_env(st__loader *L /* IN/OUT */, const st__ynode *n /* IN */,
                    st__env *env /* OUT */);

#endif
