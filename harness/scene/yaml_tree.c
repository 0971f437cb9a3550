/* SPDX-License-Identifier: MIT */
/* The scene loader's YAML tree: the only file that includes <yaml.h>. It
 * streams libyaml's parser events (the document loader API is 3-5x
 * slower) into a small node tree of its own, kept in an arena per
 * document, expanding aliases by sharing nodes under a node budget (so an
 * alias bomb errors after max_nodes, not after exhausting memory) and a
 * nesting limit, and applying merge keys. Each finished document's root
 * goes to the caller (scene/load.c), which checks it against the scene
 * format; the tree knows nothing of scenes. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <yaml.h>

#include "base/buf.h"
#include "scene/expr.h"
#include "scene/scene.h"
#include "scene/yaml_tree.h"

/* Deeper than any scene needs (about 5 levels); low enough that nothing
 * downstream can be troubled by it. */
#define MAX_DEPTH 64

/* ------------------------------------------------------------------ */
/* Arena                                                               */

typedef struct chunk {
  struct chunk *next;
  size_t used, cap;
  max_align_t data[];
} chunk;

typedef struct arena {
  chunk *head;
  chunk *spare; /* standard chunks of earlier documents, for reuse */
} arena;

#define CHUNK_SIZE ((size_t)64 * 1024)

/* arena_alloc's slow path: a new chunk (a spare one when there is one),
 * or a big block of its own. */
static void *arena_grow(arena *a, size_t size) {
  chunk *c = a->head;
  size_t cap = size > CHUNK_SIZE / 4 ? size : CHUNK_SIZE;
  chunk *n = a->spare;
  if (cap == CHUNK_SIZE && n != NULL)
    a->spare = n->next;
  else if ((n = malloc(sizeof *n + cap)) == NULL)
    return NULL;
  n->used = size;
  n->cap = cap;
  if (c != NULL && cap != CHUNK_SIZE) {
    /* A big block goes behind the current chunk, which keeps serving
     * small allocations. */
    n->next = c->next;
    c->next = n;
    return (char *)n->data;
  }
  n->next = c;
  a->head = n;
  return (char *)n->data;
}

/* Inline: a node or a string a scalar, and most fit the current chunk. */
static inline void *arena_alloc(arena *a, size_t size) {
  size = (size + 15) & ~(size_t)15;
  chunk *c = a->head;
  if (c == NULL || c->cap - c->used < size)
    return arena_grow(a, size);
  void *p = (char *)c->data + c->used;
  c->used += size;
  return p;
}

/* Empties the arena but keeps its standard chunks for the next document:
 * a stream of documents then allocates no memory per document, and a
 * long one's chunks are not given back to the system (heap trimming)
 * only to be faulted in again, page by page, for the next. What is kept
 * is at most the largest document's tree, until arena_free. */
static void arena_reset(arena *a) {
  chunk *c = a->head;
  while (c) {
    chunk *n = c->next;
    if (c->cap == CHUNK_SIZE) {
      c->used = 0;
      c->next = a->spare;
      a->spare = c;
    } else {
      free(c);
    }
    c = n;
  }
  a->head = NULL;
}

static void arena_free(arena *a) {
  arena_reset(a);
  chunk *c = a->spare;
  while (c) {
    chunk *n = c->next;
    free(c);
    c = n;
  }
  a->spare = NULL;
}

/* ------------------------------------------------------------------ */
/* The tree being built                                                */

typedef struct anchor {
  const char *name;
  st__ynode *target;
} anchor;

typedef struct open_coll {
  st__ynode *n;
  const char *anchor;
  size_t base; /* height of the kid stack when it opened */
} open_coll;

struct st__ytree {
  const char *buf;
  size_t len;
  size_t max_nodes;
  const st__ytree_sink *sink;
  int oom;    /* out of memory, or a sink function said stop */
  int fatal;  /* stop parsing */
  int merges; /* a `<<` scalar was seen: mappings may have merge keys */
  arena ar;
  size_t nodes; /* budget used, over the whole file */
  anchor *anchors;
  size_t n_anchors, cap_anchors; /* open addressing, power of two */
  open_coll *stack;
  size_t depth;
  st__ynode **kids;
  size_t n_kids, cap_kids;
  st__ynode *root;
};

static void tree_error_v(st__ytree *t, const st__ynode *at, int line, int col,
                         const char *fmt, va_list ap) {
  if (t->sink->error(t->sink->ctx, at, line, col, fmt, ap) != 0)
    t->oom = 1;
}

static void tree_error_at(st__ytree *t, int line, int col, const char *fmt, ...)
    ST_PRINTF(4, 5);
static void tree_error_at(st__ytree *t, int line, int col, const char *fmt,
                          ...) {
  va_list ap;
  va_start(ap, fmt);
  tree_error_v(t, NULL, line, col, fmt, ap);
  va_end(ap);
}

static void tree_error(st__ytree *t, const st__ynode *n, const char *fmt, ...)
    ST_PRINTF(3, 4);
static void tree_error(st__ytree *t, const st__ynode *n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tree_error_v(t, n, n->line, n->col, fmt, ap);
  va_end(ap);
}

/* The loader's message for a value of the wrong kind (scene/schema.c
 * words it alike). */
static void tree_expected(st__ytree *t, const st__ynode *n, const char *what,
                          const char *key) {
  char got[100];
  st__ynode_describe(n, got, sizeof got);
  tree_error(t, n, "expected %s for '%s', got %s", what, key, got);
}

/* ------------------------------------------------------------------ */
/* Marks and scalars                                                   */

static int mark_line(yaml_mark_t m) {
  return m.line >= (size_t)INT_MAX ? INT_MAX : (int)m.line + 1;
}
static int mark_col(yaml_mark_t m) {
  return m.column >= (size_t)INT_MAX ? INT_MAX : (int)m.column + 1;
}

/* Line and column (characters, 1-based) of a byte offset, for libyaml's
 * reader errors, which carry only an offset. Line breaks as libyaml counts
 * them: LF, CR LF, or a lone CR. */
static void offset_pos(const char *buf, size_t len, size_t off, int *line,
                       int *col) {
  int l = 1, c = 1;
  if (off > len)
    off = len;
  for (size_t i = 0; i < off; i++) {
    unsigned char ch = (unsigned char)buf[i];
    if (ch == '\n' || (ch == '\r' && (i + 1 >= len || buf[i + 1] != '\n'))) {
      l++;
      c = 1;
    } else if ((ch & 0xC0) != 0x80 && ch != '\r') {
      c++;
    }
  }
  *line = l;
  *col = c;
}

/* Clinger's fast path for the common numbers: a decimal of at most 15
 * digits scaled by at most 10^22 converts with one IEEE multiplication or
 * division of two exact doubles, which is correctly rounded, so it is the
 * double strtod returns. An integer of at most 18 digits cannot overflow
 * int64. Returns ST__YS_INT, ST__YS_FLOAT, or -1 when the slow path must
 * decide. */
static int fast_number(const char *s, size_t len, int64_t *iv, double *fv) {
  static const double p10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                               1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                               1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  const char *p = s, *end = s + len;
  int neg = 0, digits = 0, frac = 0, exp = 0;
  uint64_t m = 0;
  if (p < end && (*p == '-' || *p == '+'))
    neg = *p++ == '-';
  for (; p < end && *p >= '0' && *p <= '9'; p++, digits++)
    m = m * 10 + (uint64_t)(*p - '0');
  if (p == end) {
    if (digits == 0 || digits > 18)
      return -1;
    *iv = neg ? -(int64_t)m : (int64_t)m;
    return ST__YS_INT;
  }
  if (*p == '.') {
    for (p++; p < end && *p >= '0' && *p <= '9'; p++, digits++, frac++)
      m = m * 10 + (uint64_t)(*p - '0');
  }
  if (digits == 0 || digits > 15)
    return -1;
  if (p < end && (*p == 'e' || *p == 'E')) {
    int eneg = 0, ed = 0;
    p++;
    if (p < end && (*p == '-' || *p == '+'))
      eneg = *p++ == '-';
    for (; p < end && *p >= '0' && *p <= '9' && ed < 4; p++, ed++)
      exp = exp * 10 + (*p - '0');
    if (ed == 0 || ed >= 4)
      return -1;
    if (eneg)
      exp = -exp;
  }
  if (p != end)
    return -1;
  int scale = exp - frac;
  if (scale < -22 || scale > 22)
    return -1;
  double d = (double)m;
  d = scale < 0 ? d / p10[-scale] : d * p10[scale];
  *fv = neg ? -d : d;
  return ST__YS_FLOAT;
}

/* 1 if s[0..len) is one of YAML 1.1's three spellings of word (nan:
 * nan NaN NAN; inf: inf Inf INF). */
static int yaml_special(const char *s, size_t len, const char *word) {
  static const char *const nan3[] = {"nan", "NaN", "NAN"};
  static const char *const inf3[] = {"inf", "Inf", "INF"};
  const char *const *v = word[0] == 'n' ? nan3 : inf3;
  if (len != 3)
    return 0;
  for (int i = 0; i < 3; i++)
    if (memcmp(s, v[i], 3) == 0)
      return 1;
  return 0;
}

/* YAML 1.1's special floats (docs/scene-format.md#values-and-scalars-in-yaml):
 * .nan .NaN .NAN, and .inf .Inf .INF with an optional sign. strtod reads
 * the spellings without the dot (nan, inf, -inf) itself. Returns 1 with
 * *out for one of them. */
static int yaml_special_float(const char *s, size_t len, double *out) {
  double sign = 1;
  if (len == 4 && s[0] == '.' && yaml_special(s + 1, 3, "nan")) {
    *out = NAN;
    return 1;
  }
  if (len == 5 && (s[0] == '+' || s[0] == '-')) {
    sign = s[0] == '-' ? -1 : 1;
    s++;
    len--;
  }
  if (len == 4 && s[0] == '.' && yaml_special(s + 1, 3, "inf")) {
    *out = sign * INFINITY;
    return 1;
  }
  return 0;
}

/* 1 if s[0..len) spells an infinity (strtod accepts inf and infinity in
 * any case, with a sign), as opposed to a finite number that overflows. */
static int spelled_inf(const char *s, size_t len) {
  if (len > 0 && (s[0] == '+' || s[0] == '-')) {
    s++;
    len--;
  }
  if (len == 4 && s[0] == '.')
    return yaml_special(s + 1, 3, "inf");
  return (len == 3 && strncasecmp(s, "inf", 3) == 0) ||
         (len == 8 && strncasecmp(s, "infinity", 8) == 0);
}

/* docs/scene-format.md#values-and-scalars-in-yaml: a plain scalar that strtoll
 * parses in full is an integer, else one that strtod parses in full a float;
 * true/false are booleans. */
static void scalar_type(st__ynode *n) {
  const char *s = n->str;
  size_t len = n->len;
  char *end;
  char c0 = s[0];
  if (len == 0 || (len == 1 && c0 == '~') ||
      (len == 4 && memcmp(s, "null", 4) == 0)) {
    n->sk = ST__YS_NULL;
    return;
  }
  if ((len == 4 && memcmp(s, "true", 4) == 0) ||
      (len == 5 && memcmp(s, "false", 5) == 0)) {
    n->sk = ST__YS_BOOL;
    n->i = c0 == 't';
    n->f = (double)n->i;
    return;
  }
  n->sk = ST__YS_NAME;
  /* Only these can start a number strtod accepts (no leading space in a
   * plain scalar): skip the conversions for every key and name. */
  if (!((c0 >= '0' && c0 <= '9') || c0 == '-' || c0 == '+' || c0 == '.' ||
        c0 == 'i' || c0 == 'I' || c0 == 'n' || c0 == 'N'))
    return;
  /* Of the words, strtod takes only inf, infinity and nan (nan(...)), in
   * any case, and strtoll none: a key such as `name` or `N` (one in every
   * case) is a name without the two failed conversions. */
  if ((c0 == 'i' || c0 == 'I' || c0 == 'n' || c0 == 'N') &&
      !(len >= 3 &&
        ((c0 | 0x20) == 'i' ? (s[1] | 0x20) == 'n' && (s[2] | 0x20) == 'f'
                            : (s[1] | 0x20) == 'a' && (s[2] | 0x20) == 'n')))
    return;
  if (len >= 4 && len <= 5 && yaml_special_float(s, len, &n->f)) {
    n->sk = ST__YS_FLOAT;
    return;
  }
  /* A plain scalar holds no NUL (the reader rejects the byte and only
   * double quotes have escapes), so s is exactly len bytes. */
  int k = fast_number(s, len, &n->i, &n->f);
  if (k == ST__YS_INT) {
    n->sk = ST__YS_INT;
    n->f = (double)n->i;
    return;
  }
  if (k == ST__YS_FLOAT) {
    n->sk = ST__YS_FLOAT;
    return;
  }
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (*end == '\0' && end != s && errno == 0) {
    n->sk = ST__YS_INT;
    n->i = v;
    n->f = (double)v;
    return;
  }
  double d = st__strtod_c(s, &end);
  if (*end == '\0' && end != s) {
    n->sk = ST__YS_FLOAT;
    n->f = d;
  }
}

/* ------------------------------------------------------------------ */
/* Nodes, anchors and aliases                                          */

static st__ynode *node_new(st__ytree *t, int kind, yaml_mark_t m) {
  st__ynode *n = arena_alloc(&t->ar, sizeof *n);
  if (n == NULL) {
    t->oom = 1;
    return NULL;
  }
  memset(n, 0, sizeof *n);
  n->kind = (unsigned char)kind;
  n->line = mark_line(m);
  n->col = mark_col(m);
  n->size = 1;
  return n;
}

static anchor *anchor_slot(st__ytree *t, const char *name) {
  size_t mask = t->cap_anchors - 1;
  for (size_t i = st__ytree_hash(name) & mask;; i = (i + 1) & mask)
    if (t->anchors[i].name == NULL || strcmp(t->anchors[i].name, name) == 0)
      return &t->anchors[i];
}

static void anchor_set(st__ytree *t, const char *name, st__ynode *target) {
  if (t->n_anchors * 2 >= t->cap_anchors) {
    size_t cap = t->cap_anchors ? t->cap_anchors * 2 : 64;
    anchor *old = t->anchors;
    size_t oldcap = t->cap_anchors;
    t->anchors = st__zalloc(cap, sizeof *t->anchors);
    if (t->anchors == NULL) {
      t->anchors = old;
      t->oom = 1;
      return;
    }
    t->cap_anchors = cap;
    t->n_anchors = 0;
    for (size_t i = 0; i < oldcap; i++)
      if (old[i].name) {
        *anchor_slot(t, old[i].name) = old[i];
        t->n_anchors++;
      }
    free(old);
  }
  anchor *a = anchor_slot(t, name);
  if (a->name == NULL)
    t->n_anchors++;
  a->name = name;
  a->target = target; /* a redefined anchor: the latest wins (YAML) */
}

static st__ynode *anchor_get(st__ytree *t, const char *name) {
  if (t->cap_anchors == 0)
    return NULL;
  anchor *a = anchor_slot(t, name);
  return a->name ? a->target : NULL;
}

static const char *arena_str(st__ytree *t, const char *s, size_t len) {
  char *p = arena_alloc(&t->ar, len + 1);
  if (p == NULL) {
    t->oom = 1;
    return NULL;
  }
  memcpy(p, s, len);
  p[len] = '\0';
  return p;
}

static int budget(st__ytree *t, size_t add, yaml_mark_t m) {
  if (add > t->max_nodes || t->nodes > t->max_nodes - add) {
    tree_error_at(
        t, mark_line(m), mark_col(m),
        "aliases expand to more than %zu YAML nodes; expected at most "
        "the node budget of %zu per file (raise it with --max-nodes)",
        t->max_nodes, t->max_nodes);
    t->fatal = 1;
    return -1;
  }
  t->nodes += add;
  return 0;
}

/* Hands a finished node to the open collection, or makes it the root. */
static void attach(st__ytree *t, st__ynode *n) {
  if (t->depth == 0) {
    t->root = n;
    return;
  }
  if (t->n_kids == t->cap_kids) {
    st__ynode **k =
        st__array_grow(t->kids, &t->cap_kids, t->n_kids, sizeof *k, 256);
    if (k == NULL) {
      t->oom = 1;
      t->fatal = 1;
      return;
    }
    t->kids = k;
  }
  t->kids[t->n_kids++] = n;
}

static int is_merge_key(const st__ynode *k) {
  return k->kind == ST__YN_SCALAR && k->sk == ST__YS_NAME && k->len == 2 &&
         k->str[0] == '<' && k->str[1] == '<';
}

static void on_scalar(st__ytree *t, yaml_event_t *ev) {
  st__ynode *n = node_new(t, ST__YN_SCALAR, ev->start_mark);
  if (n == NULL)
    return;
  n->str =
      arena_str(t, (const char *)ev->data.scalar.value, ev->data.scalar.length);
  if (n->str == NULL)
    return;
  n->len = ev->data.scalar.length;
  {
    /* A quoted scalar's text starts after its quote; escapes or folded
     * lines make the text shorter than its span, and then no byte offset
     * maps onto a column. */
    yaml_scalar_style_t st = ev->data.scalar.style;
    size_t q = st == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
                       st == YAML_DOUBLE_QUOTED_SCALAR_STYLE
                   ? 1
                   : 0;
    if ((q || st == YAML_PLAIN_SCALAR_STYLE) &&
        ev->start_mark.line == ev->end_mark.line &&
        ev->end_mark.column - ev->start_mark.column == n->len + 2 * q &&
        n->col < INT_MAX - 1)
      n->text_col = n->col + (int)q;
  }
  /* Only a double-quoted scalar can hold a NUL (its "\0" escape): the
   * reader rejects the byte itself. */
  n->nul = ev->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE &&
           memchr(n->str, '\0', n->len) != NULL;
  const char *tag = (const char *)ev->data.scalar.tag;
  if (ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE ||
      (tag && strcmp(tag, YAML_STR_TAG) == 0))
    n->sk = ST__YS_STR;
  else
    scalar_type(n);
  if (is_merge_key(n))
    t->merges = 1;
  /* A number past the range of a double (1e400) would silently be an
   * infinity: an error at the scalar instead (issue 13, D16). Written
   * infinities (`inf`, `-inf`) are not affected. */
  if (n->sk == ST__YS_FLOAT && isinf(n->f) && !spelled_inf(n->str, n->len))
    tree_error_at(
        t, n->line, n->col,
        "the number %s is out of the range of a double (its magnitude must "
        "be below about 1.8e308; write inf for an infinity)",
        n->str);
  if (ev->data.scalar.anchor) {
    const char *a = arena_str(t, (const char *)ev->data.scalar.anchor,
                              strlen((const char *)ev->data.scalar.anchor));
    if (a)
      anchor_set(t, a, n);
  }
  attach(t, n);
}

static void on_start(st__ytree *t, yaml_event_t *ev, int kind) {
  const yaml_char_t *anc = kind == ST__YN_MAP ? ev->data.mapping_start.anchor
                                              : ev->data.sequence_start.anchor;
  if (t->depth >= MAX_DEPTH) {
    tree_error_at(
        t, mark_line(ev->start_mark), mark_col(ev->start_mark),
        "nesting deeper than %d levels; expected a scene (a few levels "
        "deep)",
        MAX_DEPTH);
    t->fatal = 1;
    return;
  }
  st__ynode *n = node_new(t, kind, ev->start_mark);
  if (n == NULL) {
    t->fatal = 1;
    return;
  }
  if (t->stack == NULL) {
    t->stack = malloc(MAX_DEPTH * sizeof *t->stack);
    if (t->stack == NULL) {
      t->oom = 1;
      t->fatal = 1;
      return;
    }
  }
  open_coll *o = &t->stack[t->depth++];
  o->n = n;
  o->base = t->n_kids;
  o->anchor =
      anc ? arena_str(t, (const char *)anc, strlen((const char *)anc)) : NULL;
}

static int same_key(const st__ynode *a, const st__ynode *b) {
  return st__ynode_is_str(a) && st__ynode_is_str(b) && a->len == b->len &&
         memcmp(a->str, b->str, a->len) == 0;
}

/* A set of key strings (open addressing), for merges of large maps. */
typedef struct keyset {
  const st__ynode **slot;
  size_t cap;
} keyset;

/* 1 if k was in the set; else adds it and returns 0 (-1 out of memory). */
static int keyset_add(keyset *ks, const st__ynode *k) {
  size_t mask = ks->cap - 1;
  for (size_t i = st__ytree_hash(k->str) & mask;; i = (i + 1) & mask) {
    if (ks->slot[i] == NULL) {
      ks->slot[i] = k;
      return 0;
    }
    if (same_key(ks->slot[i], k))
      return 1;
  }
}

/* YAML 1.1 merge keys (yaml.org/type/merge.html): `<<: MAP` or `<<: [MAP,
 * ...]` inserts the keys of those mappings that the mapping does not have;
 * explicit keys win, and of several merged mappings the earlier wins. The
 * merged pairs keep their own nodes, so an error about one points where
 * it is written (docs/scene-format.md#load-errors). Nothing is copied but
 * pointers: the merged mappings were counted against the node budget by their
 * aliases. */
static void merge_keys(st__ytree *t, st__ynode *n) {
  size_t i, n_merge = 0, total = 0;
  const st__ynode *first = NULL;
  for (i = 0; i + 1 < n->n; i += 2) {
    const st__ynode *k = n->kids[i], *v = n->kids[i + 1];
    if (!is_merge_key(k))
      continue;
    if (first) {
      tree_error(t, k,
                 "duplicate key '<<' (first given at %d:%d); expected one "
                 "merge key, with a list of mappings to merge several",
                 first->line, first->col);
      continue;
    }
    first = k;
    n_merge++;
    if (v->kind == ST__YN_MAP) {
      total += v->n;
    } else if (v->kind == ST__YN_SEQ) {
      for (size_t j = 0; j < v->n; j++) {
        if (v->kids[j]->kind == ST__YN_MAP)
          total += v->kids[j]->n;
        else
          tree_expected(t, v->kids[j], "a mapping (an alias of one) to merge",
                        "<<");
      }
    } else {
      tree_expected(t, v, "a mapping or a list of mappings to merge", "<<");
    }
  }
  if (n_merge == 0)
    return;
  size_t cap = 16;
  while (cap < 2 * (n->n + total))
    cap *= 2;
  keyset ks = {st__zalloc(cap, sizeof *ks.slot), cap};
  st__ynode **kids = arena_alloc(&t->ar, (n->n + total) * sizeof *kids + 1);
  if (ks.slot == NULL || kids == NULL) {
    free(ks.slot);
    t->oom = 1;
    t->fatal = 1;
    return;
  }
  size_t out = 0;
  /* Explicit pairs first, duplicates kept (st__schema_fields reports them). */
  for (i = 0; i + 1 < n->n; i += 2) {
    if (is_merge_key(n->kids[i]))
      continue;
    if (st__ynode_is_str(n->kids[i]))
      (void)keyset_add(&ks, n->kids[i]);
    kids[out++] = n->kids[i];
    kids[out++] = n->kids[i + 1];
  }
  for (i = 0; i + 1 < n->n; i += 2) {
    if (n->kids[i] != first)
      continue;
    const st__ynode *src = n->kids[i + 1];
    size_t n_src = src->kind == ST__YN_SEQ ? src->n : 1;
    for (size_t j = 0; j < n_src; j++) {
      const st__ynode *m = src->kind == ST__YN_SEQ ? src->kids[j] : src;
      if (m->kind != ST__YN_MAP)
        continue;
      for (size_t p = 0; p + 1 < m->n; p += 2) {
        const st__ynode *k = m->kids[p];
        if (st__ynode_is_str(k) && keyset_add(&ks, k) != 0)
          continue; /* an explicit or earlier key wins */
        kids[out++] = m->kids[p];
        kids[out++] = m->kids[p + 1];
      }
    }
  }
  free(ks.slot);
  n->kids = kids;
  n->n = out;
}

static void on_end(st__ytree *t) {
  if (t->depth == 0)
    return;
  open_coll *o = &t->stack[--t->depth];
  st__ynode *n = o->n;
  size_t k = t->n_kids - o->base;
  n->n = k;
  if (k) {
    n->kids = arena_alloc(&t->ar, k * sizeof *n->kids);
    if (n->kids == NULL) {
      t->oom = 1;
      t->fatal = 1;
      return;
    }
    memcpy(n->kids, t->kids + o->base, k * sizeof *n->kids);
    for (size_t i = 0; i < k; i++)
      n->size += n->kids[i]->size;
  }
  t->n_kids = o->base;
  /* No `<<` scalar in the file: no mapping has a merge key to look for. */
  if (n->kind == ST__YN_MAP && t->merges)
    merge_keys(t, n);
  /* Registered only now: an alias inside its own anchor's node refers to
   * an earlier anchor (or none), so the tree can have no cycle. */
  if (o->anchor)
    anchor_set(t, o->anchor, n);
  attach(t, n);
}

static void on_alias(st__ytree *t, yaml_event_t *ev) {
  const char *name = (const char *)ev->data.alias.anchor;
  st__ynode *target = anchor_get(t, name);
  if (target == NULL) {
    tree_error_at(
        t, mark_line(ev->start_mark), mark_col(ev->start_mark),
        "alias '*%.100s' refers to no anchor; expected an anchor '&%.100s' "
        "defined before it",
        name, name);
    if (budget(t, 1, ev->start_mark) != 0)
      return;
    st__ynode *n = node_new(t, ST__YN_SCALAR, ev->start_mark);
    if (n == NULL)
      return;
    n->str = "";
    n->sk = ST__YS_NULL;
    n->poison = 1;
    attach(t, n);
    return;
  }
  if (budget(t, target->size, ev->start_mark) != 0)
    return;
  attach(t, target);
}

void st__ynode_describe(const st__ynode *n, char *buf, size_t size) {
  if (n->kind == ST__YN_MAP) {
    snprintf(buf, size, "a mapping");
  } else if (n->kind == ST__YN_SEQ) {
    snprintf(buf, size, "a list");
  } else if (n->sk == ST__YS_NULL) {
    snprintf(buf, size, "nothing (null)");
  } else if (n->sk == ST__YS_STR || n->sk == ST__YS_NAME) {
    /* All len bytes: a NUL (from a "\0" escape) shown as \0, not the end
     * of the value (D16). Other control bytes are printable()'s. */
    size_t o = 0, i;
    if (size < 3)
      return;
    buf[o++] = '\'';
    for (i = 0; i < n->len && i < 80 && o + 4 < size; i++) {
      if (n->str[i] == '\0') {
        buf[o++] = '\\';
        buf[o++] = '0';
      } else {
        buf[o++] = n->str[i];
      }
    }
    buf[o++] = '\'';
    buf[o] = '\0';
  } else {
    snprintf(buf, size, "%.80s", n->str);
  }
}

/* ------------------------------------------------------------------ */
/* Parsing                                                             */

static void syntax_error(st__ytree *t, const yaml_parser_t *p) {
  int line, col;
  switch (p->error) {
  case YAML_MEMORY_ERROR:
    t->oom = 1;
    return;
  case YAML_READER_ERROR:
    offset_pos(t->buf, t->len, p->problem_offset, &line, &col);
    if (p->problem_value == 0 && p->problem &&
        strcmp(p->problem, "control characters are not allowed") == 0)
      tree_error_at(t, line, col,
                    "NUL byte; expected UTF-8 text without NUL bytes");
    else
      tree_error_at(t, line, col, "%s (0x%02X); expected valid UTF-8 text",
                    p->problem ? p->problem : "invalid input",
                    (unsigned)p->problem_value);
    return;
  case YAML_SCANNER_ERROR:
  case YAML_PARSER_ERROR:
    if (p->context)
      tree_error_at(t, mark_line(p->problem_mark), mark_col(p->problem_mark),
                    "syntax error: %s (%s that starts at %d:%d)",
                    p->problem ? p->problem : "invalid YAML", p->context,
                    mark_line(p->context_mark), mark_col(p->context_mark));
    else
      tree_error_at(t, mark_line(p->problem_mark), mark_col(p->problem_mark),
                    "syntax error: %s",
                    p->problem ? p->problem : "invalid YAML");
    return;
  default:
    tree_error_at(t, 1, 1, "syntax error: %s",
                  p->problem ? p->problem : "unknown");
    return;
  }
}

static void parse(st__ytree *t) {
  yaml_parser_t p;
  yaml_event_t ev;
  int docs = 0, done = 0;
  if (!yaml_parser_initialize(&p)) {
    t->oom = 1;
    return;
  }
  yaml_parser_set_input_string(&p, (const unsigned char *)t->buf, t->len);
  while (!done && !t->fatal && !t->oom) {
    if (!yaml_parser_parse(&p, &ev)) {
      syntax_error(t, &p);
      break;
    }
    switch (ev.type) {
    case YAML_DOCUMENT_START_EVENT:
      docs++;
      arena_reset(&t->ar);
      if (t->anchors)
        memset(t->anchors, 0, t->cap_anchors * sizeof *t->anchors);
      t->n_anchors = 0;
      t->root = NULL;
      t->depth = 0;
      t->n_kids = 0;
      break;
    case YAML_DOCUMENT_END_EVENT:
      if (t->root && t->sink->document(t->sink->ctx, t, t->root) != 0)
        t->oom = 1;
      t->root = NULL;
      break;
    case YAML_SCALAR_EVENT:
      on_scalar(t, &ev);
      break;
    case YAML_SEQUENCE_START_EVENT:
      on_start(t, &ev, ST__YN_SEQ);
      break;
    case YAML_MAPPING_START_EVENT:
      on_start(t, &ev, ST__YN_MAP);
      break;
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
      on_end(t);
      break;
    case YAML_ALIAS_EVENT:
      on_alias(t, &ev);
      break;
    case YAML_STREAM_END_EVENT:
      done = 1;
      break;
    default:
      break;
    }
    yaml_event_delete(&ev);
  }
  if (done && docs == 0)
    tree_error_at(t, 1, 1, "empty file; expected a scene document");
  yaml_parser_delete(&p);
  arena_free(&t->ar);
}

int st__ytree_parse(const char *buf, size_t len, size_t max_nodes,
                    const st__ytree_sink *sink) {
  st__ytree t;
  memset(&t, 0, sizeof t);
  t.buf = buf;
  t.len = len;
  t.max_nodes = max_nodes;
  t.sink = sink;
  parse(&t);
  free(t.anchors);
  free(t.stack);
  free(t.kids);
  return t.oom ? -1 : 0;
}

const char *st__ytree_keep(st__ytree *t, const char *s, size_t len) {
  return arena_str(t, s, len);
}

/* ------------------------------------------------------------------ */
/* Events one by one                                                   */

struct st__yevents {
  yaml_parser_t parser;
  yaml_event_t ev;
  int have_ev;
};

st__yevents *st__yevents_open(FILE *f) {
  st__yevents *r = st__zalloc(1, sizeof *r);
  if (r == NULL)
    return NULL;
  if (!yaml_parser_initialize(&r->parser)) {
    free(r);
    return NULL;
  }
  yaml_parser_set_input_file(&r->parser, f);
  return r;
}

static st__yevent_type event_type(yaml_event_type_t t) {
  switch (t) {
  case YAML_STREAM_END_EVENT:
    return ST__YE_STREAM_END;
  case YAML_SCALAR_EVENT:
    return ST__YE_SCALAR;
  case YAML_SEQUENCE_START_EVENT:
    return ST__YE_SEQ_START;
  case YAML_SEQUENCE_END_EVENT:
    return ST__YE_SEQ_END;
  case YAML_MAPPING_START_EVENT:
    return ST__YE_MAP_START;
  case YAML_MAPPING_END_EVENT:
    return ST__YE_MAP_END;
  case YAML_ALIAS_EVENT:
    return ST__YE_ALIAS;
  default:
    return ST__YE_OTHER;
  }
}

int st__yevents_next(st__yevents *r, st__yevent *ev, const char **problem,
                     int *line, int *col) {
  const yaml_event_t *e = &r->ev;
  if (r->have_ev)
    yaml_event_delete(&r->ev);
  r->have_ev = 0;
  memset(ev, 0, sizeof *ev);
  if (!yaml_parser_parse(&r->parser, &r->ev)) {
    if (r->parser.error == YAML_MEMORY_ERROR)
      return -2;
    *problem = r->parser.problem;
    *line = (int)r->parser.problem_mark.line + 1;
    *col = (int)r->parser.problem_mark.column + 1;
    return -1;
  }
  r->have_ev = 1;
  ev->type = event_type(e->type);
  ev->line = (int)e->start_mark.line + 1;
  ev->col = (int)e->start_mark.column + 1;
  if (e->type == YAML_SCALAR_EVENT) {
    ev->value = (const char *)e->data.scalar.value;
    ev->len = e->data.scalar.length;
    ev->has_anchor = e->data.scalar.anchor != NULL;
    ev->has_tag = e->data.scalar.tag != NULL;
  } else if (e->type == YAML_SEQUENCE_START_EVENT) {
    ev->has_anchor = e->data.sequence_start.anchor != NULL;
    ev->has_tag = e->data.sequence_start.tag != NULL;
  } else if (e->type == YAML_MAPPING_START_EVENT) {
    ev->has_anchor = e->data.mapping_start.anchor != NULL;
    ev->has_tag = e->data.mapping_start.tag != NULL;
  }
  return 0;
}

void st__yevents_close(st__yevents *r) {
  if (r == NULL)
    return;
  if (r->have_ev)
    yaml_event_delete(&r->ev);
  yaml_parser_delete(&r->parser);
  free(r);
}
