/* SPDX-License-Identifier: MIT */
/* The scene loader's schema checks (docs/scene-format.md): the errors of
 * a file collected (made printable, one line each, the same one listed
 * once), and the checks of one node each: a mapping's key set with its
 * unknown and duplicate keys ("did you mean" near a known one),
 * identifiers, strings, numbers, expressions, dtypes, lists, unique
 * names, and the keys that scenes and cases share (platforms, tags,
 * env, expect, golden_args, file paths). The YAML tree is
 * scene/yaml_tree.c's; which key holds what is decided by load.c and the
 * sections (scene/load.h). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "scene/expr.h"
#include "scene/params.h"
#include "scene/program.h"
#include "scene/quarantine.h"
#include "scene/schema.h"
#include "scene/suggest.h"

/* ------------------------------------------------------------------ */
/* Errors                                                              */

/* Appends byte c of a message to out (size bytes, NUL kept room for) as
 * a terminal shows it harmlessly: control bytes (ESC above all: a scene
 * value must not recolour or move the user's terminal, D16 of issue 13)
 * and UTF-8's C1 controls (U+0080..U+009F, CSI among them) as escapes.
 * Line breaks become spaces: a message is one line. */
static void printable(const char *in, char *out, size_t size) {
  size_t o = 0;
  const unsigned char *p = (const unsigned char *)in;
  for (; *p != '\0'; p++) {
    char esc[8];
    size_t k;
    if (*p == '\n' || *p == '\r')
      snprintf(esc, sizeof esc, " ");
    else if (*p == '\t')
      snprintf(esc, sizeof esc, "\\t");
    else if (*p < 0x20 || *p == 0x7f)
      snprintf(esc, sizeof esc, "\\x%02x", *p);
    else if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
      snprintf(esc, sizeof esc, "\\u%04x", p[1]);
      p++;
    } else {
      esc[0] = (char)*p;
      esc[1] = '\0';
    }
    k = strlen(esc);
    if (o + k >= size)
      break;
    memcpy(out + o, esc, k);
    o += k;
  }
  out[o] = '\0';
}

void st__schema_error_v(st__loader *L, int line, int col, const char *fmt,
                        va_list ap) {
  st_error e;
  L->raised++;
  if (L->errs.count >= ST__LOAD_MAX_ERRORS) {
    L->too_many = 1;
    return;
  }
  st_error_clear(&e);
  e.code = ST_ELOAD;
  e.line = line;
  e.column = col;
  snprintf(e.file, sizeof e.file, "%s", L->file);
  {
    char raw[sizeof e.message];
    vsnprintf(raw, sizeof raw, fmt, ap);
    printable(raw, e.message, sizeof e.message);
  }
  /* A node shared through an alias or a merge key is checked once per
   * use; its problem is reported once, where it is written. */
  for (size_t j = 0; j < L->errs.count; j++)
    if (L->errs.items[j].line == line && L->errs.items[j].column == col &&
        strcmp(L->errs.items[j].message, e.message) == 0)
      return;
  if (st_error_list_add(&L->errs, &e) != ST_OK)
    L->oom = 1;
}

void st__schema_error_at(st__loader *L, int line, int col, const char *fmt,
                         ...) {
  va_list ap;
  va_start(ap, fmt);
  st__schema_error_v(L, line, col, fmt, ap);
  va_end(ap);
}

void st__schema_error(st__loader *L, const st__ynode *n, const char *fmt, ...) {
  va_list ap;
  if (n->poison) {
    L->raised++;
    return;
  }
  va_start(ap, fmt);
  st__schema_error_v(L, n->line, n->col, fmt, ap);
  va_end(ap);
}

static int same_error(const st_error *a, const st_error *b) {
  return a->line == b->line && a->column == b->column &&
         strcmp(a->message, b->message) == 0;
}

int st__schema_listed(const st_error_list *l, const st_error *e) {
  for (size_t j = 0; j < l->count; j++)
    if (same_error(&l->items[j], e))
      return 1;
  return 0;
}

void st__diag_error(st__diag *d, int line, int column, const char *fmt, ...) {
  st_error e;
  va_list ap;
  d->L->n_diag++;
  st_error_clear(&e);
  e.line = line;
  e.column = column;
  va_start(ap, fmt);
  vsnprintf(e.message, sizeof e.message, fmt, ap);
  va_end(ap);
  if (st__schema_listed(&d->L->errs, &e))
    return;
  st__schema_error_at(d->L, line, column, "%s", e.message);
}

void st__diag_warning(st__diag *d, int line, int column, const char *fmt, ...) {
  st_error e;
  va_list ap;
  st__loader *L = d->L;
  L->n_diag++;
  st_error_clear(&e);
  e.code = ST_ELOAD;
  e.line = line;
  e.column = column;
  snprintf(e.file, sizeof e.file, "%s", L->file);
  va_start(ap, fmt);
  vsnprintf(e.message, sizeof e.message, fmt, ap);
  va_end(ap);
  for (char *p = e.message; *p; p++)
    if (*p == '\n' || *p == '\r')
      *p = ' ';
  if (L->warns.count >= ST__LOAD_MAX_ERRORS || st__schema_listed(&L->warns, &e))
    return;
  if (st_error_list_add(&L->warns, &e) != ST_OK)
    L->oom = 1;
}

/* ------------------------------------------------------------------ */
/* Values                                                              */

void st__schema_expected(st__loader *L, const st__ynode *n, const char *what,
                         const char *key) {
  char got[100];
  st__ynode_describe(n, got, sizeof got);
  st__schema_error(L, n, "expected %s for '%s', got %s", what, key, got);
}

/* expected(), and "; did you mean 'W'?" when a string value is near one
 * of the words cands[0..n) (docs/scene-format.md: role and init words). */
void st__schema_expected_word(st__loader *L, const st__ynode *n,
                              const char *what, const char *key,
                              const char *const *cands, size_t nc) {
  char got[100];
  const char *dym = st__ynode_is_str(n) ? st__suggest(n->str, cands, nc) : NULL;
  if (dym == NULL) {
    st__schema_expected(L, n, what, key);
    return;
  }
  st__ynode_describe(n, got, sizeof got);
  st__schema_error(L, n, "expected %s for '%s', got %s; did you mean '%s'?",
                   what, key, got, dym);
}

char *st__schema_strdup(st__loader *L, const char *s) {
  char *p = strdup(s);
  if (p == NULL)
    L->oom = 1;
  return p;
}

/* s holds len bytes and a NUL (a scalar's value): a NUL among them fails
 * the character test, so no strlen is needed to refuse one. */
int st__schema_ident_ok(const char *s, size_t len) {
  if (len == 0 || len > ST__MAX_IDENT)
    return 0;
  if (!((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z') ||
        s[0] == '_'))
    return 0;
  for (size_t i = 1; i < len; i++) {
    char c = s[i];
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
          (c >= '0' && c <= '9') || c == '_'))
      return 0;
  }
  return 1;
}

/* 1 if n is an identifier (scene, case, arg, param name), else 0 after
 * the error. */
int st__schema_ident_valid(st__loader *L, const st__ynode *n, const char *key) {
  if (n->kind == ST__YN_SCALAR && st__schema_ident_ok(n->str, n->len) &&
      (n->sk == ST__YS_INT || n->sk == ST__YS_FLOAT || n->sk == ST__YS_BOOL)) {
    /* `nan`, `inf`, `true`: identifier-shaped, but
     * docs/scene-format.md#values-and-scalars-in-yaml makes a plain scalar that
     * strtod parses (or true/false) a number or a boolean; say so, or "expected
     * an identifier, got nan" reads as a paradox. */
    st__schema_error(L, n,
                     "expected %s for '%s', got %s, which is a %s; quote it to "
                     "use it as a name",
                     ST__IDENT_EXPECT, key, n->str,
                     n->sk == ST__YS_BOOL ? "boolean" : "number");
    return 0;
  }
  if (n->kind != ST__YN_SCALAR || !st__schema_ident_ok(n->str, n->len) ||
      !(n->sk == ST__YS_STR || n->sk == ST__YS_NAME)) {
    st__schema_expected(L, n, ST__IDENT_EXPECT, key);
    return 0;
  }
  return 1;
}

/* 1 if key k of a mapping of names (params, a matrix, env) is an
 * identifier, else 0 after "expected a WHAT (...) in WHERE, got K". */
int st__schema_name_key(st__loader *L, const st__ynode *k, const char *what,
                        const char *where) {
  char got[100];
  if (k->kind == ST__YN_SCALAR && st__schema_ident_ok(k->str, k->len))
    return 1;
  st__ynode_describe(k, got, sizeof got);
  st__schema_error(L, k, "expected a %s (" ST__IDENT_EXPECT ") in %s, got %s",
                   what, where, got);
  return 0;
}

/* An identifier, copied. */
char *st__schema_ident(st__loader *L, const st__ynode *n, const char *key) {
  return st__schema_ident_valid(L, n, key) ? st__schema_strdup(L, n->str)
                                           : NULL;
}

/* A non-empty string (op and platform names, paths). */
char *st__schema_string(st__loader *L, const st__ynode *n, const char *what,
                        const char *key) {
  if (!st__ynode_is_str(n) || n->len == 0) {
    st__schema_expected(L, n, what, key);
    return NULL;
  }
  return st__schema_strdup(L, n->str);
}

int st__schema_bool(st__loader *L, const st__ynode *n, const char *key,
                    int *out) {
  if (n->kind != ST__YN_SCALAR || n->sk != ST__YS_BOOL) {
    st__schema_expected(L, n, "true or false", key);
    return -1;
  }
  *out = (int)n->i;
  return 0;
}

int st__schema_int(st__loader *L, const st__ynode *n, const char *key,
                   const char *what, int64_t lo, int64_t hi, int64_t *out) {
  if (n->kind != ST__YN_SCALAR || n->sk != ST__YS_INT || n->i < lo ||
      n->i > hi) {
    st__schema_expected(L, n, what, key);
    return -1;
  }
  *out = n->i;
  return 0;
}

/* v's position: scalar n's, and where its text starts (st__val). */
void st__schema_val_at(st__val *v, const st__ynode *n) {
  v->line = n->line;
  v->column = n->col;
  v->text_column = n->kind == ST__YN_SCALAR ? n->text_col : 0;
}

/* String scalar n as a param name or an expression over params
 * (docs/scene-format.md#params-expressions-and-lists): its syntax is
 * checked now, at the offending token, its names by each case that
 * resolves it (or by fn, when given). 0, or -1 after the error. */
int st__schema_expr(st__loader *L, const st__ynode *n, const char *key,
                    st__val *out, st__expr_name_fn fn, void *data) {
  st__expr_error xe;
  st__schema_val_at(out, n);
  if (n->poison) {
    L->raised++;
    return -1;
  }
  if (st__expr_check(n->str, fn, data, &xe) != 0) {
    st__schema_error_at(L, n->line, st__val_column(out, xe.offset), "%s: %s",
                        key, xe.message);
    return -1;
  }
  out->kind = ST__VAL_NAME;
  out->name = st__schema_strdup(L, n->str);
  return out->name ? 0 : -1;
}

/* A scene's or tensor's tolerance: a number now, or a param name or an
 * expression that each case resolves (docs/scene-format.md#load-errors). */
void st__schema_tol(st__loader *L, const st__ynode *n, const char *key,
                    int *has, double *out, st__val *param) {
  if (st__ynode_is_str(n) && n->len > 0) {
    (void)st__schema_expr(L, n, key, param, NULL, NULL);
    return;
  }
  if (!st__ynode_is_num(n) || !isfinite(n->f) || n->f < 0) {
    st__schema_expected(L, n,
                        st__ynode_is_num(n)
                            ? "a finite number >= 0"
                            : "a finite number >= 0 or a param name",
                        key);
    return;
  }
  *has = 1;
  *out = n->f;
}

/* `tolerance`, `bound_factor` and `compute_dtype` of a scene, a case or
 * a tensor (docs/scene-format.md#the-error-bound): literals only; the
 * plan (scene/plan_bound.c) checks them against the op. */
void st__schema_tolspec(st__loader *L, const st__ynode *tol,
                        const st__ynode *factor, const st__ynode *cdt,
                        st__tolspec *out) {
  static const char *const modes[] = {"allclose", "bound"};
  st_dtype dt;
  if (tol && st__ynode_is_str(tol) && strcmp(tol->str, "bound") == 0)
    out->mode = ST__TOL_BOUND;
  else if (tol && st__ynode_is_str(tol) && strcmp(tol->str, "allclose") == 0)
    out->mode = ST__TOL_ALLCLOSE;
  else if (tol)
    st__schema_expected_word(L, tol, "one of: allclose, bound", "tolerance",
                             modes, 2);
  if (tol)
    out->line = tol->line, out->column = tol->col;
  if (factor &&
      (!st__ynode_is_num(factor) || !isfinite(factor->f) || factor->f <= 0))
    st__schema_expected(L, factor, "a finite number > 0", "bound_factor");
  else if (factor)
    out->factor = factor->f;
  if (cdt && st__ynode_is_str(cdt) && st_dtype_parse(cdt->str, &dt) == ST_OK &&
      st_dtype_is_float(dt)) {
    out->has_compute_dtype = 1;
    out->compute_dtype = dt;
    out->cd_line = cdt->line, out->cd_column = cdt->col;
  } else if (cdt) {
    st__schema_expected(L, cdt,
                        "a float dtype (float64, float32, float16, bfloat16, "
                        "float8_e4m3fn, float8_e5m2)",
                        "compute_dtype");
  }
}

/* A number, a param name or an expression (or true/false, which are 1
 * and 0). */
int st__schema_val(st__loader *L, const st__ynode *n, const char *key,
                   st__val *out) {
  st__schema_val_at(out, n);
  if (n->kind == ST__YN_SCALAR &&
      (n->sk == ST__YS_INT || n->sk == ST__YS_FLOAT || n->sk == ST__YS_BOOL)) {
    out->kind = ST__VAL_NUM;
    out->num = st__schema_num(n);
    return 0;
  }
  if (st__ynode_is_str(n) && n->len > 0)
    return st__schema_expr(L, n, key, out, NULL, NULL);
  st__schema_expected(L, n, "a number, a param name or an expression", key);
  return -1;
}

/* `shape: DIMS`, `values: lens`, `ints: lens`: the name of a list param
 * that stands for the whole list, resolved per case. 1 when n is such a
 * name (taken into out), 0 when n is something else. */
int st__schema_list_name(st__loader *L, const st__ynode *n, st__val *out) {
  if (!st__ynode_is_str(n) || !st__schema_ident_ok(n->str, n->len))
    return 0;
  st__schema_val_at(out, n);
  out->kind = ST__VAL_NAME;
  out->name = st__schema_strdup(L, n->str);
  return 1;
}

/* ------------------------------------------------------------------ */
/* Mappings, lists and unique names                                    */

/* The values of the known keys of a mapping; unknown and duplicate keys
 * are errors. vals[i] is NULL for a key not given. */
void st__schema_fields(st__loader *L, const st__ynode *map, const char *what,
                       const char *const *keys, size_t nkeys,
                       const st__ynode **vals, const st__ynode **knodes) {
  /* The key nodes are needed to name the first of a duplicate key even
   * when the caller does not want them. */
  const st__ynode *own[16];
  if (knodes == NULL && nkeys <= sizeof own / sizeof own[0])
    knodes = own;
  for (size_t i = 0; i < nkeys; i++) {
    vals[i] = NULL;
    if (knodes)
      knodes[i] = NULL;
  }
  for (size_t p = 0; p + 1 < map->n; p += 2) {
    const st__ynode *k = map->kids[p], *v = map->kids[p + 1];
    if (!st__ynode_is_str(k)) {
      char got[100];
      st__ynode_describe(k, got, sizeof got);
      st__schema_error(L, k, "expected a key name in %s, got %s", what, got);
      continue;
    }
    size_t i;
    /* The first byte rejects most keys without a call (st__ynode_is_str: k->str
     * has at least its NUL). */
    for (i = 0; i < nkeys; i++)
      if (keys[i][0] == k->str[0] && strcmp(keys[i], k->str) == 0)
        break;
    if (i == nkeys) {
      char list[512];
      size_t off = 0;
      list[0] = '\0';
      for (size_t j = 0; j < nkeys && off < sizeof list; j++)
        off += (size_t)snprintf(list + off, sizeof list - off, "%s%s",
                                j ? ", " : "", keys[j]);
      const char *dym = st__suggest(k->str, keys, nkeys);
      if (dym)
        st__schema_error(
            L, k,
            "unknown key '%.100s' in %s: did you mean '%s'? expected one "
            "of: %s",
            k->str, what, dym, list);
      else
        st__schema_error(L, k,
                         "unknown key '%.100s' in %s; expected one of: %s",
                         k->str, what, list);
      continue;
    }
    if (vals[i] != NULL) {
      const st__ynode *first = knodes ? knodes[i] : NULL;
      if (first)
        st__schema_error(L, k,
                         "duplicate key '%s' in %s (first given at %d:%d)",
                         k->str, what, first->line, first->col);
      else
        st__schema_error(L, k, "duplicate key '%s' in %s", k->str, what);
      continue;
    }
    vals[i] = v;
    if (knodes)
      knodes[i] = k;
  }
}

void st__schema_require(st__loader *L, const st__ynode *map, const char *what,
                        const char *key, const st__ynode *val) {
  if (val == NULL)
    st__schema_error(L, map, "missing required key '%s' in %s", key, what);
}

static int named_cmp(const void *a, const void *b) {
  const st__named *x = a, *y = b;
  int r = strcmp(x->name, y->name);
  if (r)
    return r;
  return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* 1 if two of the n names are the same, 0 if not, -1 out of memory. A
 * hash set, O(n): unique names are the rule, and the sort that reports
 * duplicates costs a strcmp-qsort of every case name of every scene. */
static int has_duplicate(const st__named *items, size_t n) {
  if (n <= 8) {
    for (size_t i = 1; i < n; i++)
      for (size_t j = 0; j < i; j++)
        if (strcmp(items[i].name, items[j].name) == 0)
          return 1;
    return 0;
  }
  size_t cap = 16;
  while (cap < 2 * n)
    cap *= 2;
  const char **slot = st__zalloc(cap, sizeof *slot);
  if (slot == NULL)
    return -1;
  int dup = 0;
  for (size_t i = 0; i < n && !dup; i++) {
    for (size_t h = st__ytree_hash(items[i].name) & (cap - 1);;
         h = (h + 1) & (cap - 1)) {
      if (slot[h] == NULL) {
        slot[h] = items[i].name;
        break;
      }
      if (strcmp(slot[h], items[i].name) == 0) {
        dup = 1;
        break;
      }
    }
  }
  free(slot);
  return dup;
}

/* Reports every later duplicate as "PREFIX 'name' (first ... at L:C)SUFFIX".
 * Only a list with a duplicate is sorted: the order in which the errors
 * are found (which of them ST__LOAD_MAX_ERRORS keeps) stays the sort's. */
void st__schema_unique(st__loader *L, st__named *items, size_t n,
                       const char *prefix, const char *suffix) {
  if (n < 2)
    return;
  int dup = has_duplicate(items, n);
  if (dup == 0)
    return;
  /* Out of memory (-1): the sort needs none, so it still decides. */
  qsort(items, n, sizeof *items, named_cmp);
  size_t first = 0;
  for (size_t i = 1; i < n; i++) {
    if (strcmp(items[i].name, items[first].name) != 0) {
      first = i;
      continue;
    }
    /* An alias repeats its anchor's node, positions included. */
    if (items[i].line == items[first].line && items[i].col == items[first].col)
      st__schema_error_at(
          L, items[i].line, items[i].col,
          "%s '%s' (given again through an alias of this node)%s", prefix,
          items[i].name, suffix);
    else
      st__schema_error_at(
          L, items[i].line, items[i].col, "%s '%s' (first given at %d:%d)%s",
          prefix, items[i].name, items[first].line, items[first].col, suffix);
  }
}

/* ------------------------------------------------------------------ */
/* Dtypes                                                              */

void st__schema_dtype(st__loader *L, const st__ynode *n, st__val *out) {
  st_dtype dt;
  out->line = n->line;
  out->column = n->col;
  if (st__ynode_is_str(n) && (st_dtype_parse(n->str, &dt) == ST_OK ||
                              st__schema_ident_ok(n->str, n->len))) {
    out->kind = ST__VAL_NAME;
    out->name = st__schema_strdup(L, n->str);
    return;
  }
  st__schema_expected(
      L, n,
      "a dtype (float32, float64, float16, bfloat16, int8, int16, "
      "int32, int64, uint8, bool, uint16, uint32, uint64, "
      "float8_e4m3fn, float8_e5m2) or a param name",
      "dtype");
}

/* A zeroed array for the items of sequence node n (one element when n is
 * empty, so that an empty list is not NULL), or NULL with L->oom set. */
void *st__schema_seq_alloc(st__loader *L, const st__ynode *n, size_t size) {
  void *p = st__zalloc(n->n ? n->n : 1, size);
  if (p == NULL)
    L->oom = 1;
  return p;
}

/* st__schema_seq_alloc for a value that must be a list (`what` for `key`), or
 * NULL with the error given when it is not one. */
void *st__schema_seq(st__loader *L, const st__ynode *n, const char *what,
                     const char *key, size_t size) {
  if (n->kind != ST__YN_SEQ) {
    st__schema_expected(L, n, what, key);
    return NULL;
  }
  return st__schema_seq_alloc(L, n, size);
}

/* ------------------------------------------------------------------ */
/* Keys that scenes and cases share                                    */

/* `file:` paths are relative to the scene's directory and must stay
 * inside it (after symlinks), so a scene cannot read arbitrary files. */
void st__schema_file(st__loader *L, const st__ynode *n, st__init *in) {
  char *given = st__schema_string(L, n, "a file path", "file");
  char *joined = NULL, *real = NULL;
  if (given == NULL)
    return;
  in->path_given = given;
  if (L->dir == NULL) {
    st__schema_error(L, n,
                     "cannot resolve file '%.200s': the scene's directory is "
                     "unknown; expected a scene loaded from a file",
                     given);
    return;
  }
  if (given[0] == '/')
    joined = st__schema_strdup(L, given);
  else if (asprintf(&joined, "%s/%s", L->dir, given) < 0)
    joined = NULL, L->oom = 1;
  if (joined == NULL)
    return;
  real = realpath(joined, NULL);
  if (real == NULL && errno == ENOMEM) {
    /* realpath allocates its result: not a problem of the file. */
    L->oom = 1;
    goto out;
  }
  if (real == NULL) {
    st__schema_error(L, n, "cannot open file '%.200s': %s", given,
                     strerror(errno));
    goto out;
  }
  size_t dl = strlen(L->dir);
  int inside = strncmp(real, L->dir, dl) == 0 &&
               (real[dl] == '/' || (dl == 1 && L->dir[0] == '/'));
  if (!inside) {
    st__schema_error(
        L, n,
        "file '%.200s' is outside the scene's directory; expected a "
        "path inside it",
        given);
    goto out;
  }
  struct stat sb;
  if (stat(real, &sb) != 0) {
    st__schema_error(L, n, "cannot open file '%.200s': %s", given,
                     strerror(errno));
    goto out;
  }
  if (!S_ISREG(sb.st_mode)) {
    st__schema_error(
        L, n, "file '%.200s' is %s; expected a regular file", given,
        S_ISDIR(sb.st_mode) ? "a directory" : "not a regular file");
    goto out;
  }
  in->path = real;
  real = NULL;
out:
  free(joined);
  free(real);
}

/* golden_device: cpu or cuda. */
int st__schema_device(st__loader *L, const st__ynode *n) {
  if (st__ynode_is_str(n) && strcmp(n->str, "cpu") == 0)
    return ST__DEVICE_CPU;
  if (st__ynode_is_str(n) && strcmp(n->str, "cuda") == 0)
    return ST__DEVICE_CUDA;
  st__schema_expected(L, n, "cpu or cuda", "golden_device");
  return ST__DEVICE_UNSET;
}

char **st__schema_platforms(st__loader *L, const st__ynode *n, const char *key,
                            size_t *count) {
  char **v = st__schema_seq_alloc(L, n, sizeof *v);
  if (v == NULL)
    return NULL;
  *count = n->n;
  for (size_t i = 0; i < n->n; i++)
    v[i] = st__schema_string(L, n->kids[i], "a platform name", key);
  return v;
}

/* `tags: [NAME, ...]` (docs/scene-format.md#tags): names that --tag
 * expressions can say, so neither an operator word nor a character the
 * expression grammar uses; a name written twice counts once. */
char **st__schema_tags(st__loader *L, const st__ynode *n, size_t *count) {
  static const char *const words[] = {"and", "or", "not"};
  char **v;
  *count = 0;
  if ((v = st__schema_seq(L, n, "a list of tag names", "tags", sizeof *v)) ==
      NULL)
    return NULL;
  for (size_t i = 0; i < n->n; i++) {
    const st__ynode *t = n->kids[i];
    int ok = st__ynode_is_str(t) && t->len > 0 && t->len <= ST__MAX_IDENT;
    for (size_t j = 0; ok && j < t->len; j++) {
      char ch = t->str[j];
      ok = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
           (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' || ch == '.';
    }
    for (size_t j = 0; ok && j < 3; j++)
      ok = strcmp(t->str, words[j]) != 0;
    if (!ok) {
      st__schema_expected(
          L, t,
          "a tag name ([A-Za-z0-9_.-]+, none of the words and, or, "
          "not; at most 128 characters)",
          "tags");
      continue;
    }
    size_t k = 0;
    while (k < *count && strcmp(v[k], t->str) != 0)
      k++;
    if (k == *count && (v[*count] = st__schema_strdup(L, t->str)) != NULL)
      (*count)++;
  }
  return v;
}

/* `expect: {fail: true, reason, until, platforms, strict}`: a quarantine
 * (docs/scene-format.md#quarantine); *out is set only when it is whole. */
static int take_quarantine(st__loader *L, const st__ynode *n,
                           st__quarantine **out) {
  enum { Q_FAIL, Q_REASON, Q_UNTIL, Q_PLATFORMS, Q_STRICT, Q_NKEYS };
  static const char *const keys[Q_NKEYS] = {"fail", "reason", "until",
                                            "platforms", "strict"};
  const st__ynode *v[Q_NKEYS];
  int fail = 0, strict = 1;
  size_t errs = L->raised;
  st__schema_fields(L, n, "expect", keys, Q_NKEYS, v, NULL);
  st__schema_require(L, n, "expect", "fail", v[Q_FAIL]);
  st__schema_require(L, n, "expect", "reason", v[Q_REASON]);
  st__schema_require(L, n, "expect", "until", v[Q_UNTIL]);
  if (v[Q_FAIL] && st__schema_bool(L, v[Q_FAIL], "fail", &fail) == 0 && !fail)
    st__schema_error(
        L, v[Q_FAIL],
        "expected 'fail: true' in a quarantine (expect as a "
        "mapping); write 'expect: pass' for a case expected to pass");
  if (v[Q_STRICT])
    (void)st__schema_bool(L, v[Q_STRICT], "strict", &strict);
  if (v[Q_UNTIL] && (!st__ynode_is_str(v[Q_UNTIL]) ||
                     !st__quarantine_date_ok(v[Q_UNTIL]->str)))
    st__schema_expected(L, v[Q_UNTIL], "a date YYYY-MM-DD", "until");
  if (v[Q_PLATFORMS] && v[Q_PLATFORMS]->kind != ST__YN_SEQ)
    st__schema_expected(L, v[Q_PLATFORMS], "a list of platform names",
                        "platforms");
  else if (v[Q_PLATFORMS] && v[Q_PLATFORMS]->n == 0)
    st__schema_error(L, v[Q_PLATFORMS],
                     "expected at least one platform in 'platforms' "
                     "(leave it out for every platform), got []");
  char *reason = v[Q_REASON]
                     ? st__schema_string(L, v[Q_REASON], "a reason", "reason")
                     : NULL;
  if (L->raised != errs || L->oom) {
    free(reason);
    return -1;
  }
  st__quarantine *q = st__zalloc(1, sizeof *q);
  if (q == NULL) {
    L->oom = 1;
    free(reason);
    return -1;
  }
  q->reason = reason;
  memcpy(q->until, v[Q_UNTIL]->str, sizeof q->until);
  q->strict = strict;
  if (v[Q_PLATFORMS])
    q->platforms =
        st__schema_platforms(L, v[Q_PLATFORMS], "platforms", &q->n_platforms);
  st__quarantine_free(*out);
  *out = q;
  return ST__EXPECT_QUARANTINE;
}

/* `expect: pass|fail|error`, or a quarantine as a mapping; EXPECT_*, -1
 * on error. */
int st__schema_expect(st__loader *L, const st__ynode *n, st__quarantine **q) {
  if (n->kind == ST__YN_MAP)
    return take_quarantine(L, n, q);
  if (st__ynode_is_str(n) && strcmp(n->str, "fail") == 0)
    return ST__EXPECT_FAIL;
  if (st__ynode_is_str(n) && strcmp(n->str, "pass") == 0)
    return ST__EXPECT_PASS;
  if (st__ynode_is_str(n) && strcmp(n->str, "error") == 0)
    return ST__EXPECT_ERROR;
  st__schema_expected(L, n,
                      "pass, fail, error or a quarantine {fail: true, reason, "
                      "until, ...}",
                      "expect");
  return -1;
}

/* `golden_args: [NAME, ...]` (docs/scene-format.md): the args an op
 * golden binds to, as indices into the scene's args, in the order
 * written. Every entry names an arg of the scene that is not scratch,
 * once. */
size_t *st__schema_golden_args(st__loader *L, const st__ynode *n,
                               const st_scene *s, size_t *count) {
  size_t *idx;
  if (n->kind == ST__YN_SEQ && n->n == 0) {
    st__schema_error(L, n,
                     "golden_args is empty; expected the names of the args the "
                     "golden binds to");
    return NULL;
  }
  idx = st__schema_seq(L, n, "a list of arg names", "golden_args", sizeof *idx);
  if (idx == NULL)
    return NULL;
  for (size_t i = 0; i < n->n; i++) {
    const st__ynode *e = n->kids[i];
    size_t j;
    if (!st__ynode_is_str(e)) {
      st__schema_expected(L, e, "an arg name", "golden_args");
      continue;
    }
    for (j = 0; j < s->n_args; j++)
      if (s->args[j].name && strcmp(s->args[j].name, e->str) == 0)
        break;
    if (j == s->n_args) {
      st__schema_error(
          L, e,
          "golden_args names '%.100s', which is not an arg of scene "
          "'%s'; expected one of its args",
          e->str, s->name ? s->name : "?");
      continue;
    }
    if (s->args[j].role == ST_ROLE_SCRATCH && s->args[j].is_tensor) {
      st__schema_error(
          L, e,
          "golden_args names scratch arg '%s'; expected no scratch "
          "arg (a golden never sees one)",
          e->str);
      continue;
    }
    for (size_t p = 0; p < i; p++)
      if (idx[p] == j + 1)
        st__schema_error(L, e,
                         "golden_args names '%s' twice; expected each arg once",
                         e->str);
    idx[i] = j + 1; /* 0 marks an entry in error */
  }
  for (size_t i = 0; i < n->n; i++)
    idx[i] = idx[i] ? idx[i] - 1 : 0;
  *count = n->n;
  return idx;
}

/* `expect_message` only with `expect: error`: a check that nothing
 * would make is an error, not ignored. */
void st__schema_expect_message(st__loader *L, const st__ynode *n,
                               const st__ynode *key, int expect_error,
                               char **out) {
  *out = st__schema_string(L, n, "a text the kernel's error message contains",
                           "expect_message");
  if (!expect_error)
    st__schema_error(L, key,
                     "'expect_message' without 'expect: error'; expected it "
                     "only on a negative test");
}

/* `env: {NAME: VALUE, ...}` of a scene or a case (docs/scene-format.md):
 * names are identifiers, each given once; a value is any scalar but null,
 * kept as its text (`0` is "0"), without NUL bytes (setenv would cut it). */
void st__schema_env(st__loader *L, const st__ynode *n, st__env *env) {
  if (n->kind != ST__YN_MAP) {
    st__schema_expected(L, n, "a mapping of variable names to values", "env");
    return;
  }
  size_t np = n->n / 2;
  st__named *names = st__zalloc(np ? np : 1, sizeof *names);
  env->kv = st__zalloc(2 * (np ? np : 1), sizeof *env->kv);
  if (names == NULL || env->kv == NULL) {
    free(names);
    L->oom = 1;
    return;
  }
  env->line = n->line;
  env->column = n->col;
  size_t k = 0;
  for (size_t i = 0; i < np; i++) {
    const st__ynode *key = n->kids[2 * i], *v = n->kids[2 * i + 1];
    char got[100];
    /* A NUL byte in the name fails st__schema_ident_ok. */
    if (!st__schema_name_key(L, key, "variable name", "env"))
      continue;
    if (v->kind != ST__YN_SCALAR || v->sk == ST__YS_NULL || v->nul) {
      st__ynode_describe(v, got, sizeof got);
      st__schema_error(
          L, v,
          "expected a string or number as the value of env '%s' (write "
          "\"\" for an empty one), got %s%s",
          key->str, v->nul ? "a value holding a NUL byte: " : "", got);
      continue;
    }
    names[k].name = key->str;
    names[k].line = key->line;
    names[k].col = key->col;
    names[k].idx = k;
    env->kv[2 * k] = st__schema_strdup(L, key->str);
    env->kv[2 * k + 1] = st__schema_strdup(L, v->str);
    k++;
  }
  env->n = k;
  st__schema_unique(L, names, k, "duplicate env variable",
                    "; expected each variable once");
  free(names);
}
