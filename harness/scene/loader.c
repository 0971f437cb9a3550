/* SPDX-License-Identifier: MIT */
/* The scene loader: the only file that includes <yaml.h>. It streams
 * libyaml's parser events (the document loader API is 3-5x slower) into a
 * small node tree of its own, kept in an arena per document, expanding
 * aliases by sharing nodes under a node budget (so an alias bomb errors
 * after max_nodes, not after exhausting memory) and a nesting limit. Each
 * finished document is validated into the model of harness/scene.h, and
 * every case is resolved with st__plan_resolve so that SPEC §1 is checked
 * at load time. All errors of a file are collected (its first syntax error
 * included), sorted by position; a file with any error adds nothing. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <strings.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <yaml.h>

#include "base/buf.h"
#include "base/options.h"
#include "scene/expr.h"
#include "scene/params.h"
#include "scene/program.h"
#include "scene/quarantine.h"
#include "scene/scene.h"
#include "scene/suggest.h"

/* Deeper than any scene needs (about 5 levels); low enough that nothing
 * downstream can be troubled by it. */
#define MAX_DEPTH 64
/* After this many errors in one file, stop reporting: a generated file
 * with a systematic mistake should not print a million lines. */
#define MAX_ERRORS 100
#define MAX_IDENT 128

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
/* Nodes                                                               */

enum { N_SCALAR, N_SEQ, N_MAP };
enum { S_NULL, S_INT, S_FLOAT, S_BOOL, S_STR, S_NAME };

typedef struct node {
  unsigned char kind;   /* N_* */
  unsigned char sk;     /* S_*, scalars */
  unsigned char poison; /* stands for an unknown alias (already reported):
                           errors about it would only repeat that one */
  unsigned char nul;    /* a scalar whose value holds a NUL byte (a "\0"
                           escape): found once here, not by a strlen at
                           every is_str */
  int line, col;        /* 1-based */
  int text_col;         /* scalars: the column of the value's first
                           character when its bytes map one to one onto
                           columns (one line, no escapes), else 0: where
                           an expression's error points (st__val) */
  size_t size;          /* nodes in this subtree, aliases expanded */
  /* Kept small (56 bytes): a values list of a million numbers is a
   * million nodes. */
  union {
    struct { /* N_SEQ, N_MAP (key, value, key, ...) */
      struct node **kids;
      size_t n;
    };
    struct {           /* N_SCALAR */
      const char *str; /* NUL-terminated, len bytes */
      size_t len;
      int64_t i; /* S_INT, S_BOOL (0/1) */
      double f;  /* S_INT (as double), S_FLOAT, S_BOOL */
    };
  };
} node;

static st__num node_num(const node *n) {
  st__num v;
  v.is_int = n->sk != S_FLOAT;
  v.i = v.is_int ? n->i : 0;
  v.f = n->f;
  return v;
}

typedef struct anchor {
  const char *name;
  node *target;
} anchor;

typedef struct open_coll {
  node *n;
  const char *anchor;
  size_t base; /* height of the kid stack when it opened */
} open_coll;

typedef struct loader {
  size_t n_diag;    /* st__diag_error and _warning calls (the check hooks') */
  const char *file; /* as given */
  const char *buf;
  size_t len;
  char *dir; /* realpath of the file's directory; NULL if unknown */
  const st_load_options *opts;
  const st__load_ext *ext; /* NULL: no checks above the model */
  const st_scene_set *set;
  st_error_list errs;
  st_error_list warns;
  size_t raised; /* errors found, including those not listed (a poisoned
                    node's, or past MAX_ERRORS): what validity checks use */
  int too_many;
  int oom;
  int fatal;  /* stop parsing */
  int merges; /* a `<<` scalar was seen: mappings may have merge keys */
  arena ar;
  size_t nodes; /* budget used, over the whole file */
  anchor *anchors;
  size_t n_anchors, cap_anchors; /* open addressing, power of two */
  open_coll *stack;
  size_t depth;
  node **kids;
  size_t n_kids, cap_kids;
  node *root;
  unsigned char *valid_cases; /* of the scene being validated */
  uint64_t matrix_total;      /* matrix combinations so far in this scene */
  st_scene **scenes;          /* built from this file, not yet in the set */
  size_t n_scenes, cap_scenes;
  size_t *index; /* of scenes[] by name */
  size_t index_cap;
  /* The scene's flops and bytes nodes while its cases are taken
   * (docs/bench.md#the-work-model); NULL: none. */
  const node *scene_work[2];
} loader;

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

static void lerr_v(loader *L, int line, int col, const char *fmt, va_list ap) {
  st_error e;
  L->raised++;
  if (L->errs.count >= MAX_ERRORS) {
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

static void lerr(loader *L, int line, int col, const char *fmt, ...)
    ST_PRINTF(4, 5);
static void lerr(loader *L, int line, int col, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  lerr_v(L, line, col, fmt, ap);
  va_end(ap);
}

static void nerr(loader *L, const node *n, const char *fmt, ...)
    ST_PRINTF(3, 4);
static void nerr(loader *L, const node *n, const char *fmt, ...) {
  va_list ap;
  if (n->poison) {
    L->raised++;
    return;
  }
  va_start(ap, fmt);
  lerr_v(L, n->line, n->col, fmt, ap);
  va_end(ap);
}

/* The validation pass's view of the loader (scene.h). */
struct st__diag {
  loader *L;
};

static int same_error(const st_error *a, const st_error *b) {
  return a->line == b->line && a->column == b->column &&
         strcmp(a->message, b->message) == 0;
}

static int listed(const st_error_list *l, const st_error *e) {
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
  if (listed(&d->L->errs, &e))
    return;
  lerr(d->L, line, column, "%s", e.message);
}

void st__diag_warning(st__diag *d, int line, int column, const char *fmt, ...) {
  st_error e;
  va_list ap;
  loader *L = d->L;
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
  if (L->warns.count >= MAX_ERRORS || listed(&L->warns, &e))
    return;
  if (st_error_list_add(&L->warns, &e) != ST_OK)
    L->oom = 1;
}

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

/* strtod in the C locale whatever the process's locale is. */
static locale_t c_locale;
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;
static void c_locale_init(void) {
  c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

static double strtod_c(const char *s, char **end) {
  pthread_once(&c_locale_once, c_locale_init);
  if (c_locale == (locale_t)0)
    return strtod(s, end);
  return strtod_l(s, end, c_locale);
}

/* Clinger's fast path for the common numbers: a decimal of at most 15
 * digits scaled by at most 10^22 converts with one IEEE multiplication or
 * division of two exact doubles, which is correctly rounded, so it is the
 * double strtod returns. An integer of at most 18 digits cannot overflow
 * int64. Returns S_INT, S_FLOAT, or -1 when the slow path must decide. */
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
    return S_INT;
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
  return S_FLOAT;
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

/* SPEC §1: a plain scalar that strtoll parses in full is an integer, else
 * one that strtod parses in full a float; true/false are booleans. */
static void scalar_type(node *n) {
  const char *s = n->str;
  size_t len = n->len;
  char *end;
  char c0 = s[0];
  if (len == 0 || (len == 1 && c0 == '~') ||
      (len == 4 && memcmp(s, "null", 4) == 0)) {
    n->sk = S_NULL;
    return;
  }
  if ((len == 4 && memcmp(s, "true", 4) == 0) ||
      (len == 5 && memcmp(s, "false", 5) == 0)) {
    n->sk = S_BOOL;
    n->i = c0 == 't';
    n->f = (double)n->i;
    return;
  }
  n->sk = S_NAME;
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
    n->sk = S_FLOAT;
    return;
  }
  /* A plain scalar holds no NUL (the reader rejects the byte and only
   * double quotes have escapes), so s is exactly len bytes. */
  int k = fast_number(s, len, &n->i, &n->f);
  if (k == S_INT) {
    n->sk = S_INT;
    n->f = (double)n->i;
    return;
  }
  if (k == S_FLOAT) {
    n->sk = S_FLOAT;
    return;
  }
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (*end == '\0' && end != s && errno == 0) {
    n->sk = S_INT;
    n->i = v;
    n->f = (double)v;
    return;
  }
  double d = strtod_c(s, &end);
  if (*end == '\0' && end != s) {
    n->sk = S_FLOAT;
    n->f = d;
  }
}

static node *node_new(loader *L, int kind, yaml_mark_t m) {
  node *n = arena_alloc(&L->ar, sizeof *n);
  if (n == NULL) {
    L->oom = 1;
    return NULL;
  }
  memset(n, 0, sizeof *n);
  n->kind = (unsigned char)kind;
  n->line = mark_line(m);
  n->col = mark_col(m);
  n->size = 1;
  return n;
}

/* FNV-1a. */
static size_t str_hash(const char *s) {
  size_t h = 1469598103934665603ULL;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211ULL;
  return h;
}

static anchor *anchor_slot(loader *L, const char *name) {
  size_t mask = L->cap_anchors - 1;
  for (size_t i = str_hash(name) & mask;; i = (i + 1) & mask)
    if (L->anchors[i].name == NULL || strcmp(L->anchors[i].name, name) == 0)
      return &L->anchors[i];
}

static void anchor_set(loader *L, const char *name, node *target) {
  if (L->n_anchors * 2 >= L->cap_anchors) {
    size_t cap = L->cap_anchors ? L->cap_anchors * 2 : 64;
    anchor *old = L->anchors;
    size_t oldcap = L->cap_anchors;
    L->anchors = st__zalloc(cap, sizeof *L->anchors);
    if (L->anchors == NULL) {
      L->anchors = old;
      L->oom = 1;
      return;
    }
    L->cap_anchors = cap;
    L->n_anchors = 0;
    for (size_t i = 0; i < oldcap; i++)
      if (old[i].name) {
        *anchor_slot(L, old[i].name) = old[i];
        L->n_anchors++;
      }
    free(old);
  }
  anchor *a = anchor_slot(L, name);
  if (a->name == NULL)
    L->n_anchors++;
  a->name = name;
  a->target = target; /* a redefined anchor: the latest wins (YAML) */
}

static node *anchor_get(loader *L, const char *name) {
  if (L->cap_anchors == 0)
    return NULL;
  anchor *a = anchor_slot(L, name);
  return a->name ? a->target : NULL;
}

static const char *arena_str(loader *L, const char *s, size_t len) {
  char *p = arena_alloc(&L->ar, len + 1);
  if (p == NULL) {
    L->oom = 1;
    return NULL;
  }
  memcpy(p, s, len);
  p[len] = '\0';
  return p;
}

static int budget(loader *L, size_t add, yaml_mark_t m) {
  if (add > L->opts->max_nodes || L->nodes > L->opts->max_nodes - add) {
    lerr(L, mark_line(m), mark_col(m),
         "aliases expand to more than %zu YAML nodes; expected at most "
         "the node budget of %zu per file (raise it with --max-nodes)",
         L->opts->max_nodes, L->opts->max_nodes);
    L->fatal = 1;
    return -1;
  }
  L->nodes += add;
  return 0;
}

/* Hands a finished node to the open collection, or makes it the root. */
static void attach(loader *L, node *n) {
  if (L->depth == 0) {
    L->root = n;
    return;
  }
  if (L->n_kids == L->cap_kids) {
    node **k = st__array_grow(L->kids, &L->cap_kids, L->n_kids, sizeof *k, 256);
    if (k == NULL) {
      L->oom = 1;
      L->fatal = 1;
      return;
    }
    L->kids = k;
  }
  L->kids[L->n_kids++] = n;
}

static int is_merge_key(const node *k) {
  return k->kind == N_SCALAR && k->sk == S_NAME && k->len == 2 &&
         k->str[0] == '<' && k->str[1] == '<';
}

static void on_scalar(loader *L, yaml_event_t *ev) {
  node *n = node_new(L, N_SCALAR, ev->start_mark);
  if (n == NULL)
    return;
  n->str =
      arena_str(L, (const char *)ev->data.scalar.value, ev->data.scalar.length);
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
    n->sk = S_STR;
  else
    scalar_type(n);
  if (is_merge_key(n))
    L->merges = 1;
  /* A number past the range of a double (1e400) would silently be an
   * infinity: an error at the scalar instead (issue 13, D16). Written
   * infinities (`inf`, `-inf`) are not affected. */
  if (n->sk == S_FLOAT && isinf(n->f) && !spelled_inf(n->str, n->len))
    lerr(L, n->line, n->col,
         "the number %s is out of the range of a double (its magnitude must "
         "be below about 1.8e308; write inf for an infinity)",
         n->str);
  if (ev->data.scalar.anchor) {
    const char *a = arena_str(L, (const char *)ev->data.scalar.anchor,
                              strlen((const char *)ev->data.scalar.anchor));
    if (a)
      anchor_set(L, a, n);
  }
  attach(L, n);
}

static void on_start(loader *L, yaml_event_t *ev, int kind) {
  const yaml_char_t *anc = kind == N_MAP ? ev->data.mapping_start.anchor
                                         : ev->data.sequence_start.anchor;
  if (L->depth >= MAX_DEPTH) {
    lerr(L, mark_line(ev->start_mark), mark_col(ev->start_mark),
         "nesting deeper than %d levels; expected a scene (a few levels "
         "deep)",
         MAX_DEPTH);
    L->fatal = 1;
    return;
  }
  node *n = node_new(L, kind, ev->start_mark);
  if (n == NULL) {
    L->fatal = 1;
    return;
  }
  if (L->stack == NULL) {
    L->stack = malloc(MAX_DEPTH * sizeof *L->stack);
    if (L->stack == NULL) {
      L->oom = 1;
      L->fatal = 1;
      return;
    }
  }
  open_coll *o = &L->stack[L->depth++];
  o->n = n;
  o->base = L->n_kids;
  o->anchor =
      anc ? arena_str(L, (const char *)anc, strlen((const char *)anc)) : NULL;
}

static int is_str(const node *n);
static void expected(loader *L, const node *n, const char *what,
                     const char *key);

static int same_key(const node *a, const node *b) {
  return is_str(a) && is_str(b) && a->len == b->len &&
         memcmp(a->str, b->str, a->len) == 0;
}

/* A set of key strings (open addressing), for merges of large maps. */
typedef struct keyset {
  const node **slot;
  size_t cap;
} keyset;

/* 1 if k was in the set; else adds it and returns 0 (-1 out of memory). */
static int keyset_add(keyset *ks, const node *k) {
  size_t mask = ks->cap - 1;
  for (size_t i = str_hash(k->str) & mask;; i = (i + 1) & mask) {
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
 * it is written (SPEC §13). Nothing is copied but pointers: the merged
 * mappings were counted against the node budget by their aliases. */
static void merge_keys(loader *L, node *n) {
  size_t i, n_merge = 0, total = 0;
  const node *first = NULL;
  for (i = 0; i + 1 < n->n; i += 2) {
    const node *k = n->kids[i], *v = n->kids[i + 1];
    if (!is_merge_key(k))
      continue;
    if (first) {
      nerr(L, k,
           "duplicate key '<<' (first given at %d:%d); expected one "
           "merge key, with a list of mappings to merge several",
           first->line, first->col);
      continue;
    }
    first = k;
    n_merge++;
    if (v->kind == N_MAP) {
      total += v->n;
    } else if (v->kind == N_SEQ) {
      for (size_t j = 0; j < v->n; j++) {
        if (v->kids[j]->kind == N_MAP)
          total += v->kids[j]->n;
        else
          expected(L, v->kids[j], "a mapping (an alias of one) to merge", "<<");
      }
    } else {
      expected(L, v, "a mapping or a list of mappings to merge", "<<");
    }
  }
  if (n_merge == 0)
    return;
  size_t cap = 16;
  while (cap < 2 * (n->n + total))
    cap *= 2;
  keyset ks = {st__zalloc(cap, sizeof *ks.slot), cap};
  node **kids = arena_alloc(&L->ar, (n->n + total) * sizeof *kids + 1);
  if (ks.slot == NULL || kids == NULL) {
    free(ks.slot);
    L->oom = 1;
    L->fatal = 1;
    return;
  }
  size_t out = 0;
  /* Explicit pairs first, duplicates kept (map_fields reports them). */
  for (i = 0; i + 1 < n->n; i += 2) {
    if (is_merge_key(n->kids[i]))
      continue;
    if (is_str(n->kids[i]))
      (void)keyset_add(&ks, n->kids[i]);
    kids[out++] = n->kids[i];
    kids[out++] = n->kids[i + 1];
  }
  for (i = 0; i + 1 < n->n; i += 2) {
    if (n->kids[i] != first)
      continue;
    const node *src = n->kids[i + 1];
    size_t n_src = src->kind == N_SEQ ? src->n : 1;
    for (size_t j = 0; j < n_src; j++) {
      const node *m = src->kind == N_SEQ ? src->kids[j] : src;
      if (m->kind != N_MAP)
        continue;
      for (size_t p = 0; p + 1 < m->n; p += 2) {
        const node *k = m->kids[p];
        if (is_str(k) && keyset_add(&ks, k) != 0)
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

static void on_end(loader *L) {
  if (L->depth == 0)
    return;
  open_coll *o = &L->stack[--L->depth];
  node *n = o->n;
  size_t k = L->n_kids - o->base;
  n->n = k;
  if (k) {
    n->kids = arena_alloc(&L->ar, k * sizeof *n->kids);
    if (n->kids == NULL) {
      L->oom = 1;
      L->fatal = 1;
      return;
    }
    memcpy(n->kids, L->kids + o->base, k * sizeof *n->kids);
    for (size_t i = 0; i < k; i++)
      n->size += n->kids[i]->size;
  }
  L->n_kids = o->base;
  /* No `<<` scalar in the file: no mapping has a merge key to look for. */
  if (n->kind == N_MAP && L->merges)
    merge_keys(L, n);
  /* Registered only now: an alias inside its own anchor's node refers to
   * an earlier anchor (or none), so the tree can have no cycle. */
  if (o->anchor)
    anchor_set(L, o->anchor, n);
  attach(L, n);
}

static void on_alias(loader *L, yaml_event_t *ev) {
  const char *name = (const char *)ev->data.alias.anchor;
  node *t = anchor_get(L, name);
  if (t == NULL) {
    lerr(L, mark_line(ev->start_mark), mark_col(ev->start_mark),
         "alias '*%.100s' refers to no anchor; expected an anchor '&%.100s' "
         "defined before it",
         name, name);
    if (budget(L, 1, ev->start_mark) != 0)
      return;
    node *n = node_new(L, N_SCALAR, ev->start_mark);
    if (n == NULL)
      return;
    n->str = "";
    n->sk = S_NULL;
    n->poison = 1;
    attach(L, n);
    return;
  }
  if (budget(L, t->size, ev->start_mark) != 0)
    return;
  attach(L, t);
}

/* ------------------------------------------------------------------ */
/* Validation helpers                                                  */

static void describe(const node *n, char *buf, size_t size) {
  if (n->kind == N_MAP) {
    snprintf(buf, size, "a mapping");
  } else if (n->kind == N_SEQ) {
    snprintf(buf, size, "a list");
  } else if (n->sk == S_NULL) {
    snprintf(buf, size, "nothing (null)");
  } else if (n->sk == S_STR || n->sk == S_NAME) {
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

static void expected(loader *L, const node *n, const char *what,
                     const char *key) {
  char got[100];
  describe(n, got, sizeof got);
  nerr(L, n, "expected %s for '%s', got %s", what, key, got);
}

/* expected(), and "; did you mean 'W'?" when a string value is near one
 * of the words cands[0..n) (docs/scene-format.md: role and init words). */
static void expected_word(loader *L, const node *n, const char *what,
                          const char *key, const char *const *cands,
                          size_t nc) {
  char got[100];
  const char *dym = is_str(n) ? st__suggest(n->str, cands, nc) : NULL;
  if (dym == NULL) {
    expected(L, n, what, key);
    return;
  }
  describe(n, got, sizeof got);
  nerr(L, n, "expected %s for '%s', got %s; did you mean '%s'?", what, key, got,
       dym);
}

static char *dupstr(loader *L, const char *s) {
  char *p = strdup(s);
  if (p == NULL)
    L->oom = 1;
  return p;
}

static int is_str(const node *n) {
  return n->kind == N_SCALAR && (n->sk == S_STR || n->sk == S_NAME) && !n->nul;
}

/* s holds len bytes and a NUL (a scalar's value): a NUL among them fails
 * the character test, so no strlen is needed to refuse one. */
static int ident_ok(const char *s, size_t len) {
  if (len == 0 || len > MAX_IDENT)
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

#define IDENT_EXPECT                                                           \
  "an identifier ([A-Za-z_][A-Za-z0-9_]*, at most 128 characters)"

/* 1 if n is an identifier (scene, case, arg, param name), else 0 after
 * the error. */
static int ident_valid(loader *L, const node *n, const char *key) {
  if (n->kind == N_SCALAR && ident_ok(n->str, n->len) &&
      (n->sk == S_INT || n->sk == S_FLOAT || n->sk == S_BOOL)) {
    /* `nan`, `inf`, `true`: identifier-shaped, but SPEC §1 makes a plain
     * scalar that strtod parses (or true/false) a number or a boolean;
     * say so, or "expected an identifier, got nan" reads as a paradox. */
    nerr(L, n,
         "expected %s for '%s', got %s, which is a %s; quote it to "
         "use it as a name",
         IDENT_EXPECT, key, n->str, n->sk == S_BOOL ? "boolean" : "number");
    return 0;
  }
  if (n->kind != N_SCALAR || !ident_ok(n->str, n->len) ||
      !(n->sk == S_STR || n->sk == S_NAME)) {
    expected(L, n, IDENT_EXPECT, key);
    return 0;
  }
  return 1;
}

/* An identifier, copied. */
static char *take_ident(loader *L, const node *n, const char *key) {
  return ident_valid(L, n, key) ? dupstr(L, n->str) : NULL;
}

/* A non-empty string (op and platform names, paths). */
static char *take_string(loader *L, const node *n, const char *what,
                         const char *key) {
  if (!is_str(n) || n->len == 0) {
    expected(L, n, what, key);
    return NULL;
  }
  return dupstr(L, n->str);
}

static int take_bool(loader *L, const node *n, const char *key, int *out) {
  if (n->kind != N_SCALAR || n->sk != S_BOOL) {
    expected(L, n, "true or false", key);
    return -1;
  }
  *out = (int)n->i;
  return 0;
}

static int take_int(loader *L, const node *n, const char *key, const char *what,
                    int64_t lo, int64_t hi, int64_t *out) {
  if (n->kind != N_SCALAR || n->sk != S_INT || n->i < lo || n->i > hi) {
    expected(L, n, what, key);
    return -1;
  }
  *out = n->i;
  return 0;
}

static int is_num(const node *n) {
  return n->kind == N_SCALAR && (n->sk == S_INT || n->sk == S_FLOAT);
}

/* v's position: scalar n's, and where its text starts (st__val). */
static void val_at(st__val *v, const node *n) {
  v->line = n->line;
  v->column = n->col;
  v->text_column = n->kind == N_SCALAR ? n->text_col : 0;
}

/* String scalar n as a param name or an expression over params
 * (docs/scene-format.md#params-expressions-and-lists): its syntax is
 * checked now, at the offending token, its names by each case that
 * resolves it (or by fn, when given). 0, or -1 after the error. */
static int take_expr(loader *L, const node *n, const char *key, st__val *out,
                     st__expr_name_fn fn, void *data) {
  st__expr_error xe;
  val_at(out, n);
  if (n->poison) {
    L->raised++;
    return -1;
  }
  if (st__expr_check(n->str, fn, data, &xe) != 0) {
    lerr(L, n->line, st__val_column(out, xe.offset), "%s: %s", key, xe.message);
    return -1;
  }
  out->kind = ST__VAL_NAME;
  out->name = dupstr(L, n->str);
  return out->name ? 0 : -1;
}

/* A scene's or tensor's tolerance: a number now, or a param name or an
 * expression that each case resolves (SPEC §13). */
static void take_tol_or_param(loader *L, const node *n, const char *key,
                              int *has, double *out, st__val *param) {
  if (is_str(n) && n->len > 0) {
    (void)take_expr(L, n, key, param, NULL, NULL);
    return;
  }
  if (!is_num(n) || !isfinite(n->f) || n->f < 0) {
    expected(L, n,
             is_num(n) ? "a finite number >= 0"
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
static void take_tolspec(loader *L, const node *tol, const node *factor,
                         const node *cdt, st__tolspec *out) {
  static const char *const modes[] = {"allclose", "bound"};
  st_dtype dt;
  if (tol && is_str(tol) && strcmp(tol->str, "bound") == 0)
    out->mode = ST__TOL_BOUND;
  else if (tol && is_str(tol) && strcmp(tol->str, "allclose") == 0)
    out->mode = ST__TOL_ALLCLOSE;
  else if (tol)
    expected_word(L, tol, "one of: allclose, bound", "tolerance", modes, 2);
  if (tol)
    out->line = tol->line, out->column = tol->col;
  if (factor && (!is_num(factor) || !isfinite(factor->f) || factor->f <= 0))
    expected(L, factor, "a finite number > 0", "bound_factor");
  else if (factor)
    out->factor = factor->f;
  if (cdt && is_str(cdt) && st_dtype_parse(cdt->str, &dt) == ST_OK &&
      st_dtype_is_float(dt)) {
    out->has_compute_dtype = 1;
    out->compute_dtype = dt;
    out->cd_line = cdt->line, out->cd_column = cdt->col;
  } else if (cdt) {
    expected(L, cdt,
             "a float dtype (float64, float32, float16, bfloat16, "
             "float8_e4m3fn, float8_e5m2)",
             "compute_dtype");
  }
}

/* A number, a param name or an expression (or true/false, which are 1
 * and 0). */
static int take_val(loader *L, const node *n, const char *key, st__val *out) {
  val_at(out, n);
  if (n->kind == N_SCALAR &&
      (n->sk == S_INT || n->sk == S_FLOAT || n->sk == S_BOOL)) {
    out->kind = ST__VAL_NUM;
    out->num = node_num(n);
    return 0;
  }
  if (is_str(n) && n->len > 0)
    return take_expr(L, n, key, out, NULL, NULL);
  expected(L, n, "a number, a param name or an expression", key);
  return -1;
}

/* `shape: DIMS`, `values: lens`, `ints: lens`: the name of a list param
 * that stands for the whole list, resolved per case. 1 when n is such a
 * name (taken into out), 0 when n is something else. */
static int take_list_name(loader *L, const node *n, st__val *out) {
  if (!is_str(n) || !ident_ok(n->str, n->len))
    return 0;
  val_at(out, n);
  out->kind = ST__VAL_NAME;
  out->name = dupstr(L, n->str);
  return 1;
}

/* The values of the known keys of a mapping; unknown and duplicate keys
 * are errors. vals[i] is NULL for a key not given. */
static void map_fields(loader *L, const node *map, const char *what,
                       const char *const *keys, size_t nkeys, const node **vals,
                       const node **knodes) {
  /* The key nodes are needed to name the first of a duplicate key even
   * when the caller does not want them. */
  const node *own[16];
  if (knodes == NULL && nkeys <= sizeof own / sizeof own[0])
    knodes = own;
  for (size_t i = 0; i < nkeys; i++) {
    vals[i] = NULL;
    if (knodes)
      knodes[i] = NULL;
  }
  for (size_t p = 0; p + 1 < map->n; p += 2) {
    const node *k = map->kids[p], *v = map->kids[p + 1];
    if (!is_str(k)) {
      char got[100];
      describe(k, got, sizeof got);
      nerr(L, k, "expected a key name in %s, got %s", what, got);
      continue;
    }
    size_t i;
    /* The first byte rejects most keys without a call (is_str: k->str
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
        nerr(L, k,
             "unknown key '%.100s' in %s: did you mean '%s'? expected one "
             "of: %s",
             k->str, what, dym, list);
      else
        nerr(L, k, "unknown key '%.100s' in %s; expected one of: %s", k->str,
             what, list);
      continue;
    }
    if (vals[i] != NULL) {
      const node *first = knodes ? knodes[i] : NULL;
      if (first)
        nerr(L, k, "duplicate key '%s' in %s (first given at %d:%d)", k->str,
             what, first->line, first->col);
      else
        nerr(L, k, "duplicate key '%s' in %s", k->str, what);
      continue;
    }
    vals[i] = v;
    if (knodes)
      knodes[i] = k;
  }
}

static void require(loader *L, const node *map, const char *what,
                    const char *key, const node *val) {
  if (val == NULL)
    nerr(L, map, "missing required key '%s' in %s", key, what);
}

/* Names that must be unique: sorted (by name, then position in the
 * file), so that a list of a million names is O(n log n). */
typedef struct named {
  const char *name;
  int line, col;
  size_t idx;
} named;

static int named_cmp(const void *a, const void *b) {
  const named *x = a, *y = b;
  int r = strcmp(x->name, y->name);
  if (r)
    return r;
  return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* 1 if two of the n names are the same, 0 if not, -1 out of memory. A
 * hash set, O(n): unique names are the rule, and the sort that reports
 * duplicates costs a strcmp-qsort of every case name of every scene. */
static int has_duplicate(const named *items, size_t n) {
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
    for (size_t h = str_hash(items[i].name) & (cap - 1);;
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
 * are found (which of them MAX_ERRORS keeps) stays the sort's. */
static void check_unique(loader *L, named *items, size_t n, const char *prefix,
                         const char *suffix) {
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
      lerr(L, items[i].line, items[i].col,
           "%s '%s' (given again through an alias of this node)%s", prefix,
           items[i].name, suffix);
    else
      lerr(L, items[i].line, items[i].col, "%s '%s' (first given at %d:%d)%s",
           prefix, items[i].name, items[first].line, items[first].col, suffix);
  }
}

/* ------------------------------------------------------------------ */
/* Args                                                                */

static const char *const tensor_keys[] = {
    "tensor", "dtype", "shape",   "init",      "role",
    "rtol",   "atol",  "compare", "equal_nan", "expected",
    "tolerance", "bound_factor", "compute_dtype"};
enum {
  T_TENSOR,
  T_DTYPE,
  T_SHAPE,
  T_INIT,
  T_ROLE,
  T_RTOL,
  T_ATOL,
  T_COMPARE,
  T_EQNAN,
  T_EXPECTED,
  T_TOL,
  T_BOUND_FACTOR,
  T_COMPUTE_DTYPE,
  T_NKEYS
};
static const char *const scalar_keys[] = {"scalar", "dtype", "value", "ints",
                                          "string"};
enum { A_SCALAR, A_DTYPE, A_VALUE, A_INTS, A_STRING };
static const char *const init_forms[] = {
    "fill", "range", "uniform", "normal", "randint", "values", "file"};
enum { I_FILL, I_RANGE, I_UNIFORM, I_NORMAL, I_RANDINT, I_VALUES, I_FILE };
static const char *const range_keys[] = {"start", "step"};

#define INIT_EXPECT                                                            \
  "zeros, ones, exact, {fill: V}, {range: {start: S, step: T}}, {uniform: [LO, "      \
  "HI]}, {normal: [MEAN, STD]}, {randint: [LO, HI]}, {values: [...]}, "        \
  "{file: PATH}"

static const char *const init_words[] = {"zeros", "ones", "exact"};
static const char *const role_words[] = {"input", "output", "inout", "scratch"};

static void take_dtype(loader *L, const node *n, st__val *out) {
  st_dtype dt;
  out->line = n->line;
  out->column = n->col;
  if (is_str(n) &&
      (st_dtype_parse(n->str, &dt) == ST_OK || ident_ok(n->str, n->len))) {
    out->kind = ST__VAL_NAME;
    out->name = dupstr(L, n->str);
    return;
  }
  expected(L, n,
           "a dtype (float32, float64, float16, bfloat16, int8, int16, "
           "int32, int64, uint8, bool, uint16, uint32, uint64, "
           "float8_e4m3fn, float8_e5m2) or a param name",
           "dtype");
}

/* A zeroed array for the items of sequence node n (one element when n is
 * empty, so that an empty list is not NULL), or NULL with L->oom set. */
static void *seq_alloc(loader *L, const node *n, size_t size) {
  void *p = st__zalloc(n->n ? n->n : 1, size);
  if (p == NULL)
    L->oom = 1;
  return p;
}

/* seq_alloc for a value that must be a list (`what` for `key`), or NULL
 * with the error given when it is not one. */
static void *take_seq(loader *L, const node *n, const char *what,
                      const char *key, size_t size) {
  if (n->kind != N_SEQ) {
    expected(L, n, what, key);
    return NULL;
  }
  return seq_alloc(L, n, size);
}

static void take_shape(loader *L, const node *n, st__arg *a) {
  if (take_list_name(L, n, &a->shape_list))
    return;
  if (n->kind != N_SEQ) {
    expected(L, n, "a list of dimensions or the name of a list param", "shape");
    return;
  }
  if (n->n > ST_MAX_DIMS) {
    nerr(L, n, "shape has %zu dimensions; expected at most %d", n->n,
         ST_MAX_DIMS);
    return;
  }
  a->shape = seq_alloc(L, n, sizeof *a->shape);
  if (a->shape == NULL)
    return;
  a->ndim = n->n;
  for (size_t i = 0; i < n->n; i++) {
    const node *d = n->kids[i];
    if (d->kind == N_SCALAR && d->sk == S_INT && d->i >= 0) {
      a->shape[i].kind = ST__VAL_NUM;
      a->shape[i].num = node_num(d);
      a->shape[i].line = d->line;
      a->shape[i].column = d->col;
    } else if (is_str(d) && d->len > 0) {
      (void)take_val(L, d, "shape", &a->shape[i]);
    } else {
      expected(L, d, "a non-negative integer or a param name", "shape");
    }
  }
}

static void take_pair(loader *L, const node *n, const char *form,
                      st__init *in) {
  if (n->kind != N_SEQ || n->n != 2) {
    char what[64];
    snprintf(what, sizeof what, "a list of two values [%s]",
             strcmp(form, "normal") == 0 ? "MEAN, STD" : "LO, HI");
    expected(L, n, what, form);
    return;
  }
  (void)take_val(L, n->kids[0], form, &in->a);
  (void)take_val(L, n->kids[1], form, &in->b);
}

/* `file:` paths are relative to the scene's directory and must stay
 * inside it (after symlinks), so a scene cannot read arbitrary files. */
static void take_file(loader *L, const node *n, st__init *in) {
  char *given = take_string(L, n, "a file path", "file");
  char *joined = NULL, *real = NULL;
  if (given == NULL)
    return;
  in->path_given = given;
  if (L->dir == NULL) {
    nerr(L, n,
         "cannot resolve file '%.200s': the scene's directory is "
         "unknown; expected a scene loaded from a file",
         given);
    return;
  }
  if (given[0] == '/')
    joined = dupstr(L, given);
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
    nerr(L, n, "cannot open file '%.200s': %s", given, strerror(errno));
    goto out;
  }
  size_t dl = strlen(L->dir);
  int inside = strncmp(real, L->dir, dl) == 0 &&
               (real[dl] == '/' || (dl == 1 && L->dir[0] == '/'));
  if (!inside) {
    nerr(L, n,
         "file '%.200s' is outside the scene's directory; expected a "
         "path inside it",
         given);
    goto out;
  }
  struct stat sb;
  if (stat(real, &sb) != 0) {
    nerr(L, n, "cannot open file '%.200s': %s", given, strerror(errno));
    goto out;
  }
  if (!S_ISREG(sb.st_mode)) {
    nerr(L, n, "file '%.200s' is %s; expected a regular file", given,
         S_ISDIR(sb.st_mode) ? "a directory" : "not a regular file");
    goto out;
  }
  in->path = real;
  real = NULL;
out:
  free(joined);
  free(real);
}

static void take_init(loader *L, const node *n, st__init *in) {
  in->line = n->line;
  in->column = n->col;
  if (n->kind == N_SCALAR && is_str(n) && strcmp(n->str, "zeros") == 0) {
    in->kind = ST__INIT_ZEROS;
    return;
  }
  if (n->kind == N_SCALAR && is_str(n) && strcmp(n->str, "ones") == 0) {
    in->kind = ST__INIT_ONES;
    return;
  }
  if (n->kind == N_SCALAR && is_str(n) && strcmp(n->str, "exact") == 0) {
    in->kind = ST__INIT_EXACT; /* the range: scene/plan_bound.c */
    return;
  }
  if (n->kind != N_MAP || n->n != 2) {
    if (n->kind == N_MAP && n->n > 2)
      nerr(L, n->kids[2],
           "init has more than one form; expected exactly "
           "one of: " INIT_EXPECT);
    else
      expected_word(L, n, "one of: " INIT_EXPECT, "init", init_words, 3);
    return;
  }
  const node *vals[7];
  map_fields(L, n, "init", init_forms, 7, vals, NULL);
  if (vals[I_FILL]) {
    in->kind = ST__INIT_FILL;
    (void)take_val(L, vals[I_FILL], "fill", &in->a);
  } else if (vals[I_RANGE]) {
    const node *r = vals[I_RANGE], *rv[2];
    in->kind = ST__INIT_RANGE;
    if (r->kind != N_MAP) {
      expected(L, r, "a mapping {start: S, step: T}", "range");
      return;
    }
    map_fields(L, r, "range", range_keys, 2, rv, NULL);
    require(L, r, "range", "start", rv[0]);
    require(L, r, "range", "step", rv[1]);
    if (rv[0])
      (void)take_val(L, rv[0], "start", &in->a);
    if (rv[1])
      (void)take_val(L, rv[1], "step", &in->b);
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
    const node *v = vals[I_VALUES];
    in->kind = ST__INIT_VALUES;
    if (take_list_name(L, v, &in->values_list))
      return;
    in->values = take_seq(L, v,
                          "a list of numbers or the name of a list "
                          "param",
                          "values", sizeof *in->values);
    if (in->values == NULL)
      return;
    in->n_values = v->n;
    for (size_t i = 0; i < v->n; i++) {
      const node *e = v->kids[i];
      /* The common case inline: a million numbers must load fast. */
      if (e->kind == N_SCALAR && (e->sk == S_INT || e->sk == S_FLOAT)) {
        in->values[i].kind = ST__VAL_NUM;
        in->values[i].num = node_num(e);
        in->values[i].line = e->line;
        in->values[i].column = e->col;
      } else if (take_val(L, e, "values", &in->values[i]) != 0 && L->too_many) {
        break;
      }
    }
  } else if (vals[I_FILE]) {
    in->kind = ST__INIT_FILE;
    take_file(L, vals[I_FILE], in);
  }
}

/* A scratch arg (docs/scene-format.md, role) is a workspace nobody
 * reads or checks: the keys that set its values or its comparison are
 * errors at the key, not ignored. */
static void check_scratch(loader *L, const node *const *v, const node *const *k,
                          const st__arg *a) {
  static const int keys[] = {T_INIT, T_EXPECTED, T_RTOL,
                             T_ATOL, T_EQNAN,    T_COMPARE};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
    if (v[keys[i]] != NULL)
      nerr(L, k[keys[i]],
           "scratch arg '%s' takes no '%s': nobody reads or checks a "
           "scratch tensor; expected only tensor, dtype, shape and role",
           a->name ? a->name : "?", tensor_keys[keys[i]]);
}

/* `expected:` (docs/scene-format.md): an output's or inout's expected
 * value, in any init form, instead of golden's. */
static void take_expected(loader *L, const node *n, const node *key,
                          const node *compare, st__arg *a) {
  if (a->role == ST_ROLE_INPUT) {
    nerr(L, key,
         "'expected' on input '%s'; expected it only on outputs and inouts "
         "(role: output or inout)",
         a->name ? a->name : "?");
    return;
  }
  if (compare != NULL && !a->compare) {
    nerr(L, key,
         "'expected' on output '%s', which has compare: false; expected "
         "'expected' only on a compared output",
         a->name ? a->name : "?");
    return;
  }
  take_init(L, n, &a->expected);
  a->expected.given = 1;
  a->has_expected = 1;
}

static void take_tensor(loader *L, const node *n, st__arg *a) {
  const node *v[T_NKEYS], *k[T_NKEYS];
  a->is_tensor = 1;
  a->compare = 1;
  a->equal_nan = -1;
  a->role = ST_ROLE_INPUT;
  map_fields(L, n, "tensor arg", tensor_keys, T_NKEYS, v, k);
  require(L, n, "tensor arg", "tensor", v[T_TENSOR]);
  require(L, n, "tensor arg", "dtype", v[T_DTYPE]);
  require(L, n, "tensor arg", "shape", v[T_SHAPE]);
  if (v[T_TENSOR])
    a->name = take_ident(L, v[T_TENSOR], "tensor");
  if (v[T_DTYPE])
    take_dtype(L, v[T_DTYPE], &a->dtype);
  if (v[T_SHAPE])
    take_shape(L, v[T_SHAPE], a);
  if (v[T_INIT]) {
    take_init(L, v[T_INIT], &a->init);
    a->init.given = 1;
  } else {
    a->init.kind = ST__INIT_ZEROS; /* SPEC §1: the default */
    a->init.line = n->line;
    a->init.column = n->col;
  }
  if (v[T_ROLE]) {
    const node *r = v[T_ROLE];
    if (is_str(r) && strcmp(r->str, "input") == 0)
      a->role = ST_ROLE_INPUT;
    else if (is_str(r) && strcmp(r->str, "output") == 0)
      a->role = ST_ROLE_OUTPUT;
    else if (is_str(r) && strcmp(r->str, "inout") == 0)
      a->role = ST_ROLE_INOUT;
    else if (is_str(r) && strcmp(r->str, "scratch") == 0)
      a->role = ST_ROLE_SCRATCH;
    else
      expected_word(L, r, "one of: input, output, inout, scratch", "role",
                    role_words, 4);
  }
  if (a->role == ST_ROLE_SCRATCH) {
    a->compare = 0;
    check_scratch(L, v, k, a);
    return;
  }
  if (v[T_RTOL])
    take_tol_or_param(L, v[T_RTOL], "rtol", &a->has_rtol, &a->rtol,
                      &a->rtol_param);
  if (v[T_ATOL])
    take_tol_or_param(L, v[T_ATOL], "atol", &a->has_atol, &a->atol,
                      &a->atol_param);
  if (v[T_EQNAN])
    (void)take_bool(L, v[T_EQNAN], "equal_nan", &a->equal_nan);
  if (v[T_COMPARE] && take_bool(L, v[T_COMPARE], "compare", &a->compare) == 0 &&
      !a->compare && a->role != ST_ROLE_OUTPUT)
    nerr(L, v[T_COMPARE],
         "compare: false on %s '%s'; expected it only on outputs (role: "
         "output), since inputs and inouts are always checked",
         a->role == ST_ROLE_INOUT ? "inout" : "input", a->name ? a->name : "?");
  if (v[T_EXPECTED])
    take_expected(L, v[T_EXPECTED], k[T_EXPECTED], v[T_COMPARE], a);
  take_tolspec(L, v[T_TOL], v[T_BOUND_FACTOR], v[T_COMPUTE_DTYPE], &a->tol);
}

/* SPEC §12's two forms for ATen schemas, besides {scalar, dtype, value}:
 * {scalar: N, ints: [...]} (an int[]; entries may name params) and
 * {scalar: N, string: S}. Each form takes only its own keys. */
static void take_scalar_form(loader *L, const node *const *v, st__arg *a) {
  const char *form = v[A_INTS] ? "ints" : "string";
  if (v[A_INTS] && v[A_STRING])
    nerr(L, v[A_STRING],
         "scalar arg has both 'ints' and 'string'; expected one of value, "
         "ints, string");
  if (v[A_VALUE])
    nerr(L, v[A_VALUE],
         "scalar arg has both '%s' and 'value'; expected one "
         "of value, ints, string",
         form);
  if (v[A_DTYPE])
    nerr(L, v[A_DTYPE],
         "scalar arg with '%s' takes no dtype; expected "
         "{scalar: NAME, %s: ...}",
         form, form);
  if (v[A_INTS]) {
    const node *l = v[A_INTS];
    a->scalar_kind = ST_SCALAR_INTS;
    if (take_list_name(L, l, &a->ints_list))
      return;
    a->ints = take_seq(L, l,
                       "a list of integers or param names, or the "
                       "name of a list param",
                       "ints", sizeof *a->ints);
    if (a->ints == NULL)
      return;
    a->n_ints = l->n;
    for (size_t i = 0; i < l->n; i++)
      (void)take_val(L, l->kids[i], "ints", &a->ints[i]);
    return;
  }
  a->scalar_kind = ST_SCALAR_STRING;
  a->string = take_string(L, v[A_STRING], "a string", "string");
}

static void take_scalar(loader *L, const node *n, st__arg *a) {
  const node *v[5];
  a->is_tensor = 0;
  map_fields(L, n, "scalar arg", scalar_keys, 5, v, NULL);
  require(L, n, "scalar arg", "scalar", v[A_SCALAR]);
  if (v[A_SCALAR])
    a->name = take_ident(L, v[A_SCALAR], "scalar");
  if (v[A_INTS] || v[A_STRING]) {
    take_scalar_form(L, v, a);
    return;
  }
  require(L, n, "scalar arg", "dtype", v[A_DTYPE]);
  require(L, n, "scalar arg", "value", v[A_VALUE]);
  if (v[A_DTYPE])
    take_dtype(L, v[A_DTYPE], &a->dtype);
  if (v[A_VALUE])
    (void)take_val(L, v[A_VALUE], "value", &a->value);
}

static void take_args(loader *L, const node *n, st_scene *s) {
  s->args = take_seq(L, n, "a list of tensor and scalar args", "args",
                     sizeof *s->args);
  if (s->args == NULL)
    return;
  named *names = seq_alloc(L, n, sizeof *names);
  size_t n_names = 0;
  if (names == NULL)
    return;
  s->n_args = n->n;
  int seen_scalar = 0;
  for (size_t i = 0; i < n->n; i++) {
    const node *item = n->kids[i];
    st__arg *a = &s->args[i];
    a->line = item->line;
    a->column = item->col;
    a->invalid = 1; /* until it validates */
    if (item->kind != N_MAP) {
      char got[100];
      describe(item, got, sizeof got);
      nerr(L, item,
           "expected an arg mapping {tensor: NAME, ...} or {scalar: NAME, "
           "...}, got %s",
           got);
      continue;
    }
    int is_tensor = -1;
    for (size_t p = 0; p + 1 < item->n; p += 2) {
      const node *k = item->kids[p];
      if (is_str(k) && strcmp(k->str, "tensor") == 0) {
        is_tensor = 1;
        break;
      }
      if (is_str(k) && strcmp(k->str, "scalar") == 0) {
        is_tensor = 0;
        break;
      }
    }
    if (is_tensor < 0) {
      nerr(L, item,
           "arg has neither 'tensor' nor 'scalar'; expected {tensor: NAME, "
           "dtype, shape, ...} or {scalar: NAME, dtype, value}");
      continue;
    }
    if (is_tensor && seen_scalar)
      nerr(L, item, "tensor after scalar: tensors must come first");
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
  check_unique(L, names, n_names, "duplicate arg name",
               "; expected names unique across tensors and scalars");
  free(names);
}

/* ------------------------------------------------------------------ */
/* Cases                                                               */

/* golden_device: cpu or cuda. */
static int take_device(loader *L, const node *n) {
  if (is_str(n) && strcmp(n->str, "cpu") == 0)
    return ST__DEVICE_CPU;
  if (is_str(n) && strcmp(n->str, "cuda") == 0)
    return ST__DEVICE_CUDA;
  expected(L, n, "cpu or cuda", "golden_device");
  return ST__DEVICE_UNSET;
}

static const char *const case_keys[] = {"name",        "params",
                                        "matrix",      "exclude",
                                        "platforms",   "manual",
                                        "skip_golden", "rounds",
                                        "rtol",        "atol",
                                        "timeout",     "equal_nan",
                                        "expect",      "golden_platform",
                                        "golden_args", "expect_message",
                                        "env",         "golden_device",
                                        "tags",        "flops",
                                        "bytes",       "tolerance",
                                        "bound_factor", "compute_dtype"};
enum {
  C_NAME,
  C_PARAMS,
  C_MATRIX,
  C_EXCLUDE,
  C_PLATFORMS,
  C_MANUAL,
  C_SKIP,
  C_ROUNDS,
  C_RTOL,
  C_ATOL,
  C_TIMEOUT,
  C_EQNAN,
  C_EXPECT,
  C_GOLDEN_PLATFORM,
  C_GOLDEN_ARGS,
  C_EXPECT_MESSAGE,
  C_ENV,
  C_GOLDEN_DEVICE,
  C_TAGS,
  C_FLOPS,
  C_BYTES,
  C_TOL,
  C_BOUND_FACTOR,
  C_COMPUTE_DTYPE,
  C_NKEYS
};

/* SPEC §13: the matrix cases of one scene, counted before exclusions. */
#define MATRIX_CAP 100000
/* A bound of our own: a case name carries every key, so a matrix of a
 * thousand one-value keys would make an unreadable name. */
#define MATRIX_MAX_KEYS 32

static char **take_platforms(loader *L, const node *n, const char *key,
                             size_t *count) {
  char **v = seq_alloc(L, n, sizeof *v);
  if (v == NULL)
    return NULL;
  *count = n->n;
  for (size_t i = 0; i < n->n; i++)
    v[i] = take_string(L, n->kids[i], "a platform name", key);
  return v;
}

/* `tags: [NAME, ...]` (docs/scene-format.md#tags): names that --tag
 * expressions can say, so neither an operator word nor a character the
 * expression grammar uses; a name written twice counts once. */
static char **take_tags(loader *L, const node *n, size_t *count) {
  static const char *const words[] = {"and", "or", "not"};
  char **v;
  *count = 0;
  if ((v = take_seq(L, n, "a list of tag names", "tags", sizeof *v)) == NULL)
    return NULL;
  for (size_t i = 0; i < n->n; i++) {
    const node *t = n->kids[i];
    int ok = is_str(t) && t->len > 0 && t->len <= MAX_IDENT;
    for (size_t j = 0; ok && j < t->len; j++) {
      char ch = t->str[j];
      ok = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
           (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' || ch == '.';
    }
    for (size_t j = 0; ok && j < 3; j++)
      ok = strcmp(t->str, words[j]) != 0;
    if (!ok) {
      expected(L, t,
               "a tag name ([A-Za-z0-9_.-]+, none of the words and, or, "
               "not; at most 128 characters)",
               "tags");
      continue;
    }
    size_t k = 0;
    while (k < *count && strcmp(v[k], t->str) != 0)
      k++;
    if (k == *count && (v[*count] = dupstr(L, t->str)) != NULL)
      (*count)++;
  }
  return v;
}

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
  size_t n;        /* params of c written before this one */
  const node *map; /* the params mapping, to tell a later name apart */
} prior;

static int prior_name(void *data, const char *name, size_t offset,
                      st__expr_error *err) {
  const prior *pr = data;
  (void)offset;
  for (size_t i = 0; i < pr->n; i++)
    if (pr->c->params[i].name && strcmp(pr->c->params[i].name, name) == 0)
      return 0;
  for (size_t i = 2 * (pr->n + 1); i + 1 < pr->map->n; i += 2)
    if (is_str(pr->map->kids[i]) && strcmp(pr->map->kids[i]->str, name) == 0) {
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
static void take_param_num(loader *L, const node *v, const char *key,
                           st__val *out, const prior *pr) {
  if (is_num(v)) {
    val_at(out, v);
    out->kind = ST__VAL_NUM;
    out->num = node_num(v);
  } else if (is_str(v) && v->len > 0 && pr == NULL) {
    val_at(out, v);
    out->kind = ST__VAL_NAME;
    out->name = dupstr(L, v->str);
  } else if (is_str(v) && v->len > 0) {
    (void)take_expr(L, v, key, out, prior_name, (void *)pr);
  } else {
    expected(L, v, "a number or an expression", key);
  }
}

/* A param's value: a number, a dtype name, an expression over params or
 * a list of numbers (docs/scene-format.md#params-expressions-and-lists).
 * pr: what an expression may name (NULL: a matrix value, whose names
 * take_matrix checked). */
static void take_param_value(loader *L, const node *v, st__param *p,
                             const prior *pr) {
  char key[MAX_IDENT + 32];
  st_dtype dt;
  snprintf(key, sizeof key, "param '%s'", p->name ? p->name : "?");
  if (is_str(v) && st_dtype_parse(v->str, &dt) == ST_OK) {
    p->is_str = 1;
    p->str = dupstr(L, v->str);
  } else if (is_num(v) || (is_str(v) && v->len > 0)) {
    take_param_num(L, v, key, &p->expr, pr);
    if (p->expr.kind == ST__VAL_NUM) {
      p->num = p->expr.num;
      memset(&p->expr, 0, sizeof p->expr);
    }
  } else if (v->kind == N_SEQ) {
    p->is_list = 1;
    p->list = seq_alloc(L, v, sizeof *p->list);
    if (p->list == NULL)
      return;
    p->n_list = v->n;
    for (size_t i = 0; i < v->n; i++) {
      char ek[MAX_IDENT + 48];
      snprintf(ek, sizeof ek, "param '%s' [%zu]", p->name ? p->name : "?", i);
      take_param_num(L, v->kids[i], ek, &p->list[i], pr);
    }
  } else {
    expected(L, v,
             "a number, a dtype name, an expression or a list of "
             "numbers",
             p->name ? p->name : "params");
  }
}

/* A param name must not be a dtype name: `dtype: T` reads T as a dtype
 * first. 0, or -1 after the error. */
static int param_name_ok(loader *L, const node *k) {
  st_dtype dt;
  if (st_dtype_parse(k->str, &dt) != ST_OK)
    return 0;
  nerr(L, k,
       "param name '%s' is a dtype name; expected a name that is "
       "not a dtype",
       k->str);
  return -1;
}

/* Copies scalar n's value into the case block at *at (room made for it
 * by case_block). */
static char *block_str(char **at, const node *n) {
  char *p = *at;
  memcpy(p, n->str, n->len + 1);
  *at += n->len + 1;
  return p;
}

/* c->block for a case as written: its params (params, when a mapping),
 * then room for its name and its params' names, the scalars among
 * name_n and params' keys. Returns where the strings go, or NULL (no
 * block: nothing to hold, or out of memory, with L->oom set). */
static char *case_block(loader *L, st__case *c, const node *name_n,
                        const node *params) {
  size_t np = params && params->kind == N_MAP ? params->n / 2 : 0;
  size_t head = (np ? np : 1) * sizeof *c->params, size = head;
  if ((name_n == NULL || name_n->kind != N_SCALAR) && np == 0 &&
      (params == NULL || params->kind != N_MAP))
    return NULL;
  if (name_n && name_n->kind == N_SCALAR)
    size += name_n->len + 1;
  for (size_t i = 0; i < np; i++)
    if (params->kids[2 * i]->kind == N_SCALAR)
      size += params->kids[2 * i]->len + 1;
  c->block = st__zalloc(1, size);
  if (c->block == NULL) {
    L->oom = 1;
    return NULL;
  }
  return (char *)c->block + head;
}

/* The params of case c into its block (strings at *at). */
static void take_params(loader *L, const node *n, st__case *c, char **at) {
  if (n->kind != N_MAP) {
    expected(L, n, "a mapping of param names to values", "params");
    return;
  }
  size_t np = n->n / 2;
  /* A case has a few params: their names are checked from the stack, not
   * from an allocation per case. */
  named own[8];
  c->params = c->block;
  named *names =
      np <= sizeof own / sizeof own[0] ? own : st__zalloc(np, sizeof *names);
  size_t n_names = 0;
  if (names == NULL) {
    L->oom = 1;
    return;
  }
  c->n_params = np;
  for (size_t i = 0; i < np; i++) {
    const node *k = n->kids[2 * i], *v = n->kids[2 * i + 1];
    st__param *p = &c->params[i];
    p->line = k->line;
    p->column = k->col;
    if (k->kind != N_SCALAR || !ident_ok(k->str, k->len)) {
      char got[100];
      describe(k, got, sizeof got);
      nerr(L, k, "expected a param name (" IDENT_EXPECT ") in params, got %s",
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
  check_unique(L, names, n_names, "duplicate param",
               "; expected each param once");
  if (names != own)
    free(names);
}

/* What `expect` says of a case (docs/scene-format.md). */
enum {
  EXPECT_PASS = 0,
  EXPECT_FAIL = 1,
  EXPECT_ERROR = 2,
  EXPECT_QUARANTINE = 3
};

/* `expect: {fail: true, reason, until, platforms, strict}`: a quarantine
 * (docs/scene-format.md#quarantine); *out is set only when it is whole. */
static int take_quarantine(loader *L, const node *n, st__quarantine **out) {
  enum { Q_FAIL, Q_REASON, Q_UNTIL, Q_PLATFORMS, Q_STRICT, Q_NKEYS };
  static const char *const keys[Q_NKEYS] = {"fail", "reason", "until",
                                            "platforms", "strict"};
  const node *v[Q_NKEYS];
  int fail = 0, strict = 1;
  size_t errs = L->raised;
  map_fields(L, n, "expect", keys, Q_NKEYS, v, NULL);
  require(L, n, "expect", "fail", v[Q_FAIL]);
  require(L, n, "expect", "reason", v[Q_REASON]);
  require(L, n, "expect", "until", v[Q_UNTIL]);
  if (v[Q_FAIL] && take_bool(L, v[Q_FAIL], "fail", &fail) == 0 && !fail)
    nerr(L, v[Q_FAIL],
         "expected 'fail: true' in a quarantine (expect as a "
         "mapping); write 'expect: pass' for a case expected to pass");
  if (v[Q_STRICT])
    (void)take_bool(L, v[Q_STRICT], "strict", &strict);
  if (v[Q_UNTIL] &&
      (!is_str(v[Q_UNTIL]) || !st__quarantine_date_ok(v[Q_UNTIL]->str)))
    expected(L, v[Q_UNTIL], "a date YYYY-MM-DD", "until");
  if (v[Q_PLATFORMS] && v[Q_PLATFORMS]->kind != N_SEQ)
    expected(L, v[Q_PLATFORMS], "a list of platform names", "platforms");
  else if (v[Q_PLATFORMS] && v[Q_PLATFORMS]->n == 0)
    nerr(L, v[Q_PLATFORMS],
         "expected at least one platform in 'platforms' "
         "(leave it out for every platform), got []");
  char *reason =
      v[Q_REASON] ? take_string(L, v[Q_REASON], "a reason", "reason") : NULL;
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
        take_platforms(L, v[Q_PLATFORMS], "platforms", &q->n_platforms);
  st__quarantine_free(*out);
  *out = q;
  return EXPECT_QUARANTINE;
}

/* `expect: pass|fail|error`, or a quarantine as a mapping; EXPECT_*, -1
 * on error. */
static int take_expect(loader *L, const node *n, st__quarantine **q) {
  if (n->kind == N_MAP)
    return take_quarantine(L, n, q);
  if (is_str(n) && strcmp(n->str, "fail") == 0)
    return EXPECT_FAIL;
  if (is_str(n) && strcmp(n->str, "pass") == 0)
    return EXPECT_PASS;
  if (is_str(n) && strcmp(n->str, "error") == 0)
    return EXPECT_ERROR;
  expected(L, n,
           "pass, fail, error or a quarantine {fail: true, reason, "
           "until, ...}",
           "expect");
  return -1;
}

/* `golden_args: [NAME, ...]` (docs/scene-format.md): the args an op
 * golden binds to, as indices into the scene's args, in the order
 * written. Every entry names an arg of the scene that is not scratch,
 * once. */
static size_t *take_golden_args(loader *L, const node *n, const st_scene *s,
                                size_t *count) {
  size_t *idx;
  if (n->kind == N_SEQ && n->n == 0) {
    nerr(L, n,
         "golden_args is empty; expected the names of the args the "
         "golden binds to");
    return NULL;
  }
  idx = take_seq(L, n, "a list of arg names", "golden_args", sizeof *idx);
  if (idx == NULL)
    return NULL;
  for (size_t i = 0; i < n->n; i++) {
    const node *e = n->kids[i];
    size_t j;
    if (!is_str(e)) {
      expected(L, e, "an arg name", "golden_args");
      continue;
    }
    for (j = 0; j < s->n_args; j++)
      if (s->args[j].name && strcmp(s->args[j].name, e->str) == 0)
        break;
    if (j == s->n_args) {
      nerr(L, e,
           "golden_args names '%.100s', which is not an arg of scene "
           "'%s'; expected one of its args",
           e->str, s->name ? s->name : "?");
      continue;
    }
    if (s->args[j].role == ST_ROLE_SCRATCH && s->args[j].is_tensor) {
      nerr(L, e,
           "golden_args names scratch arg '%s'; expected no scratch "
           "arg (a golden never sees one)",
           e->str);
      continue;
    }
    for (size_t p = 0; p < i; p++)
      if (idx[p] == j + 1)
        nerr(L, e, "golden_args names '%s' twice; expected each arg once",
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
static void take_expect_message(loader *L, const node *n, const node *key,
                                int expect_error, char **out) {
  *out = take_string(L, n, "a text the kernel's error message contains",
                     "expect_message");
  if (!expect_error)
    nerr(L, key,
         "'expect_message' without 'expect: error'; expected it "
         "only on a negative test");
}

/* `env: {NAME: VALUE, ...}` of a scene or a case (docs/scene-format.md):
 * names are identifiers, each given once; a value is any scalar but null,
 * kept as its text (`0` is "0"), without NUL bytes (setenv would cut it). */
static void take_env(loader *L, const node *n, st__env *env) {
  if (n->kind != N_MAP) {
    expected(L, n, "a mapping of variable names to values", "env");
    return;
  }
  size_t np = n->n / 2;
  named *names = st__zalloc(np ? np : 1, sizeof *names);
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
    const node *key = n->kids[2 * i], *v = n->kids[2 * i + 1];
    char got[100];
    if (key->kind != N_SCALAR || key->nul || !ident_ok(key->str, key->len)) {
      describe(key, got, sizeof got);
      nerr(L, key, "expected a variable name (" IDENT_EXPECT ") in env, got %s",
           got);
      continue;
    }
    if (v->kind != N_SCALAR || v->sk == S_NULL || v->nul) {
      describe(v, got, sizeof got);
      nerr(L, v,
           "expected a string or number as the value of env '%s' (write "
           "\"\" for an empty one), got %s%s",
           key->str, v->nul ? "a value holding a NUL byte: " : "", got);
      continue;
    }
    names[k].name = key->str;
    names[k].line = key->line;
    names[k].col = key->col;
    names[k].idx = k;
    env->kv[2 * k] = dupstr(L, key->str);
    env->kv[2 * k + 1] = dupstr(L, v->str);
    k++;
  }
  env->n = k;
  check_unique(L, names, k, "duplicate env variable",
               "; expected each variable once");
  free(names);
}

/* A case's keys, as nodes: the fields that may name a param (rounds,
 * rtol, atol, timeout) are resolved for each concrete case, after a
 * matrix has added its params. */
typedef struct case_src {
  const node *v[C_NKEYS];
  const node *k[C_NKEYS];
} case_src;

static void take_case(loader *L, const node *n, st__case *c, const st_scene *s,
                      case_src *src) {
  c->skip_golden = -1;
  c->equal_nan = -1;
  c->expect_fail = s->expect_fail;
  c->expect_error = s->expect_error;
  {
    int oom = 0;
    c->quarantine = st__quarantine_copy(s->quarantine, &oom);
    L->oom |= oom;
  }
  map_fields(L, n, "case", case_keys, C_NKEYS, src->v, src->k);
  const node **v = src->v;
  /* The scene's flops/bytes (docs/bench.md#the-work-model), evaluated in
   * each case that has none of its own. */
  if (v[C_FLOPS] == NULL)
    v[C_FLOPS] = L->scene_work[0];
  if (v[C_BYTES] == NULL)
    v[C_BYTES] = L->scene_work[1];
  require(L, n, "case", "name", v[C_NAME]);
  char *at = case_block(L, c, v[C_NAME], v[C_PARAMS]);
  if (c->block == NULL && L->oom)
    return;
  if (v[C_NAME]) {
    if (ident_valid(L, v[C_NAME], "name")) {
      c->name = block_str(&at, v[C_NAME]);
      c->base_len = v[C_NAME]->len;
    }
    c->line = v[C_NAME]->line;
    c->column = v[C_NAME]->col;
  }
  if (v[C_PARAMS])
    take_params(L, v[C_PARAMS], c, &at);
  if (v[C_PLATFORMS]) {
    if (v[C_PLATFORMS]->kind != N_SEQ)
      expected(L, v[C_PLATFORMS], "a list of platform names", "platforms");
    else {
      c->has_platforms = 1;
      c->platforms_line = v[C_PLATFORMS]->line;
      c->platforms_column = v[C_PLATFORMS]->col;
      c->platforms =
          take_platforms(L, v[C_PLATFORMS], "platforms", &c->n_platforms);
    }
  }
  if (v[C_TAGS])
    c->tags = take_tags(L, v[C_TAGS], &c->n_tags);
  if (v[C_MANUAL]) {
    const node *m = v[C_MANUAL];
    if (m->kind == N_SCALAR && m->sk == S_BOOL)
      c->manual_all = (int)m->i;
    else if (m->kind == N_SEQ) {
      c->manual_line = m->line;
      c->manual_column = m->col;
      c->manual_platforms = take_platforms(L, m, "manual", &c->n_manual);
    } else
      expected(L, m, "true, false or a list of platform names", "manual");
  }
  if (v[C_SKIP])
    (void)take_bool(L, v[C_SKIP], "skip_golden", &c->skip_golden);
  take_tolspec(L, v[C_TOL], v[C_BOUND_FACTOR], v[C_COMPUTE_DTYPE], &c->tol);
  if (v[C_GOLDEN_PLATFORM])
    c->golden_platform = take_string(L, v[C_GOLDEN_PLATFORM], "a platform name",
                                     "golden_platform");
  if (v[C_GOLDEN_DEVICE])
    c->golden_device = take_device(L, v[C_GOLDEN_DEVICE]);
  if (v[C_EQNAN])
    (void)take_bool(L, v[C_EQNAN], "equal_nan", &c->equal_nan);
  if (v[C_EXPECT]) {
    st__quarantine *q = NULL;
    int e = take_expect(L, v[C_EXPECT], &q);
    if (e >= 0) {
      c->expect_fail = e == EXPECT_FAIL;
      c->expect_error = e == EXPECT_ERROR;
      st__quarantine_free(c->quarantine);
      c->quarantine = q;
    }
  }
  if (v[C_EXPECT_MESSAGE])
    take_expect_message(L, v[C_EXPECT_MESSAGE], src->k[C_EXPECT_MESSAGE],
                        c->expect_error, &c->expect_message);
  if (v[C_GOLDEN_ARGS])
    c->golden_args =
        take_golden_args(L, v[C_GOLDEN_ARGS], s, &c->n_golden_args);
  if (v[C_ENV])
    take_env(L, v[C_ENV], &c->env);
  if (v[C_EXCLUDE] && v[C_MATRIX] == NULL)
    nerr(L, src->k[C_EXCLUDE],
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
static int case_num(loader *L, st__case *c, const node *n, const char *key,
                    st__expr_domain dom, st__num *out, const char **via) {
  st__val v;
  st__val_error e;
  *via = NULL;
  if (is_num(n)) {
    *out = node_num(n);
    return 0;
  }
  if (!is_str(n) || n->len == 0)
    return 1;
  memset(&v, 0, sizeof v);
  if (take_expr(L, n, key, &v, NULL, NULL) != 0)
    return -1;
  use_val(c, &v);
  int rc = st__val_eval(c, &v, dom, key, out, NULL, &e);
  free(v.name);
  if (rc != 0) {
    lerr(L, e.line, e.column, "%s", e.message);
    return -1;
  }
  *via = n->str;
  return 0;
}

/* An error for a case-level number that resolved but is out of range. */
static void case_num_bad(loader *L, const st__case *c, const node *n,
                         const char *key, const char *what, const char *via,
                         const st__num *x) {
  if (via == NULL) {
    expected(L, n, what, key);
    return;
  }
  char nb[64];
  if (x->is_int)
    snprintf(nb, sizeof nb, "%" PRId64, x->i);
  else
    snprintf(nb, sizeof nb, "%.17g", x->f);
  nerr(L, n, "expected %s for '%s', got %s (%s '%s' of case '%s')", what, key,
       nb, ident_ok(via, strlen(via)) ? "param" : "expression", via,
       c->name ? c->name : "?");
}

/* rounds, rtol, atol and timeout of one concrete case. */
static void finish_case(loader *L, st__case *c, const case_src *src) {
  const node *const *v = src->v;
  const char *via;
  st__num x;
  int r;
  if (v[C_ROUNDS]) {
    /* The bound is --rounds's, and the message names it (D16). */
    const char *what = "an integer from 1 to 1000000000";
    r = case_num(L, c, v[C_ROUNDS], "rounds", ST__EXPR_INT, &x, &via);
    if (r == 1)
      expected(L, v[C_ROUNDS],
               "an integer from 1 to 1000000000 or a param name", "rounds");
    else if (r == 0 && (!x.is_int || x.i < 1 || x.i > 1000000000))
      case_num_bad(L, c, v[C_ROUNDS], "rounds", what, via, &x);
    else if (r == 0)
      c->rounds = (unsigned)x.i;
  }
  static const char *const tol_key[2] = {"rtol", "atol"};
  for (int t = 0; t < 2; t++) {
    const node *n = v[t ? C_ATOL : C_RTOL];
    if (n == NULL)
      continue;
    r = case_num(L, c, n, tol_key[t], ST__EXPR_FLOAT, &x, &via);
    if (r == 1)
      expected(L, n, "a finite number >= 0 or a param name", tol_key[t]);
    else if (r == 0 && (!isfinite(x.f) || x.f < 0))
      case_num_bad(L, c, n, tol_key[t], "a finite number >= 0", via, &x);
    else if (r == 0 && t == 0)
      c->has_rtol = 1, c->rtol = x.f;
    else if (r == 0)
      c->has_atol = 1, c->atol = x.f;
  }
  static const char *const work_key[2] = {"flops", "bytes"};
  for (int t = 0; t < 2; t++) {
    const node *n = v[t ? C_BYTES : C_FLOPS];
    if (n == NULL)
      continue;
    r = case_num(L, c, n, work_key[t], ST__EXPR_FLOAT, &x, &via);
    if (r == 0 && x.is_int)
      x.f = (double)x.i;
    if (r == 1)
      expected(L, n, "a number >= 0, a param name or an expression",
               work_key[t]);
    else if (r == 0 && (!isfinite(x.f) || x.f < 0))
      case_num_bad(L, c, n, work_key[t], "a finite number >= 0", via, &x);
    else if (r == 0)
      c->work[t] = x.f, c->has_work[t] = 1;
  }
  if (v[C_TIMEOUT]) {
    r = case_num(L, c, v[C_TIMEOUT], "timeout", ST__EXPR_INT, &x, &via);
    if (r == 1)
      expected(L, v[C_TIMEOUT], "a number of seconds > 0 or a param name",
               "timeout");
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

static st__case *casevec_push(loader *L, casevec *cv, size_t hint) {
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
static int matrix_text_ok(const node *n) {
  if (n->kind != N_SCALAR || n->len == 0 || strlen(n->str) != n->len ||
      !(is_num(n) || is_str(n)))
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
  const node *mx;
} mx_names;

static int matrix_name(void *data, const char *name, size_t offset,
                       st__expr_error *err) {
  const mx_names *m = data;
  (void)offset;
  if (st__case_param(m->t, name) != NULL)
    return 0;
  for (size_t i = 0; i + 1 < m->mx->n; i += 2)
    if (is_str(m->mx->kids[i]) && strcmp(m->mx->kids[i]->str, name) == 0)
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
  const node **keys;  /* key nodes, written order */
  const node **lists; /* their value lists */
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

/* Checks `matrix` and `exclude` of template t; 0 when they are usable.
 * Long because: every error a matrix or an exclude list can have is
 * reported here in one pass, each with its own message and position, so
 * that a user sees all of them at once (the loader collects errors). */
static int take_matrix(loader *L, const node *mx, const node *ex,
                       const st__case *t, matrix *m) {
  size_t before = L->raised;
  memset(m, 0, sizeof *m);
  if (mx->kind != N_MAP || mx->n == 0) {
    expected(L, mx, "a mapping of param names to lists of values", "matrix");
    return -1;
  }
  size_t nk = mx->n / 2;
  if (nk > MATRIX_MAX_KEYS) {
    nerr(L, mx, "matrix has %zu keys; expected at most %d", nk,
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
    const node *k = mx->kids[2 * i], *l = mx->kids[2 * i + 1];
    m->keys[i] = k;
    m->lists[i] = l;
    if (k->kind != N_SCALAR || !ident_ok(k->str, k->len)) {
      char got[100];
      describe(k, got, sizeof got);
      nerr(L, k, "expected a param name (" IDENT_EXPECT ") in matrix, got %s",
           got);
      continue;
    }
    for (size_t j = 0; j < i; j++)
      if (is_str(m->keys[j]) && strcmp(m->keys[j]->str, k->str) == 0)
        nerr(L, k, "duplicate key '%s' in matrix (first given at %d:%d)",
             k->str, m->keys[j]->line, m->keys[j]->col);
    for (size_t j = 0; j < t->n_params; j++)
      if (t->params[j].name && strcmp(t->params[j].name, k->str) == 0)
        nerr(L, k,
             "'%s' is in both params (at %d:%d) and matrix; expected each "
             "param in one of them",
             k->str, t->params[j].line, t->params[j].column);
    if (l->kind == N_SEQ && l->n == 0) {
      nerr(L, l,
           "matrix list for '%s' is empty; expected at least one "
           "value",
           k->str);
      continue;
    }
    if (l->kind != N_SEQ) {
      expected(L, l, "a list of values", k->str);
      continue;
    }
    named *names = st__zalloc(l->n, sizeof *names);
    if (names == NULL) {
      L->oom = 1;
      return -1;
    }
    (void)param_name_ok(L, k);
    for (size_t j = 0; j < l->n; j++) {
      const node *e = l->kids[j];
      st_dtype dt;
      st__val tmp;
      mx_names mn = {t, mx};
      if (!matrix_text_ok(e))
        expected(L, e,
                 "a number, a name or an expression (letters, digits, "
                 "spaces and _ . + - * / % ( ) ,)",
                 k->str);
      else if (is_str(e) && st_dtype_parse(e->str, &dt) != ST_OK) {
        char key[MAX_IDENT + 32];
        memset(&tmp, 0, sizeof tmp);
        snprintf(key, sizeof key, "matrix '%s'", k->str);
        if (take_expr(L, e, key, &tmp, matrix_name, &mn) == 0)
          free(tmp.name);
      }
      names[j].name = e->kind == N_SCALAR ? e->str : "";
      names[j].line = e->line;
      names[j].col = e->col;
      names[j].idx = j;
    }
    check_unique(L, names, l->n, "duplicate value",
                 "; expected each value once in a matrix list");
    free(names);
    if (__builtin_mul_overflow(m->product, (uint64_t)l->n, &m->product) ||
        m->product > MATRIX_CAP)
      m->product = MATRIX_CAP + 1;
  }
  if (L->raised != before)
    return -1;
  if (ex == NULL)
    return 0;
  if (ex->kind != N_SEQ) {
    expected(L, ex, "a list of mappings {PARAM: VALUE, ...}", "exclude");
    return -1;
  }
  m->excl = st__zalloc((ex->n ? ex->n : 1) * nk, sizeof *m->excl);
  if (m->excl == NULL) {
    L->oom = 1;
    return -1;
  }
  m->n_excl = ex->n;
  for (size_t e = 0; e < ex->n; e++) {
    const node *ent = ex->kids[e];
    size_t *row = &m->excl[e * nk];
    for (size_t i = 0; i < nk; i++)
      row[i] = SIZE_MAX;
    if (ent->kind != N_MAP || ent->n == 0) {
      expected(L, ent, "a mapping {PARAM: VALUE, ...} of matrix keys",
               "exclude");
      continue;
    }
    for (size_t p = 0; p + 1 < ent->n; p += 2) {
      const node *k = ent->kids[p], *val = ent->kids[p + 1];
      size_t i;
      for (i = 0; i < nk; i++)
        if (is_str(k) && strcmp(m->keys[i]->str, k->str) == 0)
          break;
      if (i == nk) {
        const char *cand[MATRIX_MAX_KEYS];
        char got[100];
        for (size_t j = 0; j < nk; j++)
          cand[j] = m->keys[j]->str;
        describe(k, got, sizeof got);
        const char *dym = is_str(k) ? st__suggest(k->str, cand, nk) : NULL;
        if (dym)
          nerr(L, k,
               "exclude names %s, which is not a matrix key: did you mean "
               "'%s'? expected a key of the matrix",
               got, dym);
        else
          nerr(L, k,
               "exclude names %s, which is not a matrix key; expected "
               "a key of the matrix",
               got);
        continue;
      }
      if (row[i] != SIZE_MAX) {
        nerr(L, k, "duplicate key '%s' in an exclude entry", k->str);
        continue;
      }
      const node *l = m->lists[i];
      size_t j;
      for (j = 0; j < l->n; j++)
        if (val->kind == N_SCALAR && strcmp(l->kids[j]->str, val->str) == 0)
          break;
      if (j == l->n) {
        char got[100];
        describe(val, got, sizeof got);
        nerr(L, val,
             "exclude gives %s for '%s', which is not one of its matrix "
             "values; expected one of the values listed at %d:%d",
             got, k->str, l->line, l->col);
        continue;
      }
      row[i] = j;
    }
  }
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

static char **copy_strv(loader *L, char *const *v, size_t n) {
  if (v == NULL)
    return NULL;
  char **out = st__zalloc(n ? n : 1, sizeof *out);
  if (out == NULL) {
    L->oom = 1;
    return NULL;
  }
  for (size_t i = 0; i < n; i++)
    if (v[i] && (out[i] = dupstr(L, v[i])) == NULL)
      break;
  return out;
}

/* One combination of a matrix case: the template's fields deep-copied,
 * its params plus the matrix's, named NAME[P1=v1,P2=v2] (SPEC §13). */
static int matrix_case(loader *L, const st__case *t, const matrix *m,
                       const size_t *idx, st__case *c) {
  *c = *t;
  c->name = NULL;
  c->params = NULL;
  c->block = NULL; /* the template's: this case owns its strings */
  c->platforms = copy_strv(L, t->platforms, t->n_platforms);
  c->manual_platforms = copy_strv(L, t->manual_platforms, t->n_manual);
  c->tags = copy_strv(L, t->tags, t->n_tags);
  c->golden_platform =
      t->golden_platform ? dupstr(L, t->golden_platform) : NULL;
  c->expect_message = t->expect_message ? dupstr(L, t->expect_message) : NULL;
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
    p->name = tp->name ? dupstr(L, tp->name) : NULL; /* NULL: an error */
    p->str = tp->str ? dupstr(L, tp->str) : NULL;
    p->expr.name = tp->expr.name ? dupstr(L, tp->expr.name) : NULL;
    p->list = NULL;
    if (tp->list && (p->list = st__zalloc(tp->n_list ? tp->n_list : 1,
                                          sizeof *p->list)) == NULL) {
      L->oom = 1;
      p->n_list = 0;
    }
    for (size_t j = 0; p->list && j < tp->n_list; j++) {
      p->list[j] = tp->list[j];
      p->list[j].name = tp->list[j].name ? dupstr(L, tp->list[j].name) : NULL;
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
    const node *val = m->lists[i]->kids[idx[i]];
    st__param *p = &c->params[t->n_params + i];
    off += (size_t)snprintf(c->name + off, len - off, "%s%s=%s", i ? "," : "",
                            m->keys[i]->str, val->str);
    p->name = dupstr(L, m->keys[i]->str);
    p->line = m->keys[i]->line;
    p->column = m->keys[i]->col;
    take_param_value(L, val, p, NULL);
  }
  snprintf(c->name + off, len - off, "]");
  c->base_len = strlen(t->name);
  return L->oom ? -1 : 0;
}

/* Expands a matrix case into cv; the template stays the caller's. */
static void expand_matrix(loader *L, const st__case *t, const case_src *src,
                          int valid, casevec *cv) {
  matrix m;
  size_t idx[MATRIX_MAX_KEYS] = {0}, made = 0;
  if (take_matrix(L, src->v[C_MATRIX], src->v[C_EXCLUDE], t, &m) != 0 ||
      t->name == NULL) {
    matrix_free(&m);
    return;
  }
  if (m.product > MATRIX_CAP - L->matrix_total) {
    nerr(L, src->k[C_MATRIX],
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
    nerr(L, src->k[C_EXCLUDE],
         "exclude drops every combination of matrix case '%s'; expected at "
         "least one left",
         t->name);
  matrix_free(&m);
}

static void take_cases(loader *L, const node *n, st_scene *s) {
  casevec cv = {0};
  if (n->kind != N_SEQ) {
    expected(L, n, "a list of cases", "cases");
    return;
  }
  if (n->n == 0) {
    nerr(L, n,
         "a scene needs at least one case; expected a list of cases "
         "with a name each");
    return;
  }
  /* Names as written: a plain case's own (its string does not move when
   * the case array grows), a matrix case's base name copied, since its
   * template is freed once expanded. */
  named *names = st__zalloc(n->n, sizeof *names);
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
    const node *item = n->kids[i];
    if (item->kind != N_MAP) {
      char got[100];
      describe(item, got, sizeof got);
      nerr(L, item, "expected a case mapping {name: NAME, ...}, got %s", got);
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
    if (t.name && (!is_matrix || (copies[n_names] = dupstr(L, t.name)))) {
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
  check_unique(L, names, n_names, "duplicate case name",
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

/* ------------------------------------------------------------------ */
/* Golden programs (docs/torch.md; the model is scene/program.h)       */

static const char *const golden_keys[] = {"torchscript", "file", "function",
                                          "steps", "returns"};
enum { G_TS, G_FILE, G_FUNCTION, G_STEPS, G_RETURNS, G_NKEYS };
static const char *const step_keys[] = {"op", "args", "out"};
enum { P_OP, P_ARGS, P_OUT, P_NKEYS };

/* A golden program's source file is read whole at load time (so `check`
 * can compile it); this bounds it. */
#define PROGRAM_FILE_MAX ((size_t)1 << 20)

/* Where line 1, column 1 of an inline source is: a block scalar's content
 * starts on the line after its indicator, at the indentation of its first
 * non-blank line; any other scalar at its own position (one past a
 * quote). */
static void source_start(const loader *L, const node *n, int *line, int *col) {
  const char *p = L->buf, *end = L->buf + L->len;
  *line = n->line;
  *col = n->col;
  for (int l = 1; l < n->line && p < end; p++)
    if (*p == '\n')
      l++;
  if (p + n->col - 1 >= end)
    return;
  char c = p[n->col - 1];
  if (c == '"' || c == '\'') {
    (*col)++;
    return;
  }
  if (c != '|' && c != '>')
    return;
  *line = n->line + 1;
  for (int l = n->line; p < end; l++) {
    const char *q = memchr(p, '\n', (size_t)(end - p));
    if (q == NULL)
      break;
    p = q + 1;
    size_t ind = 0;
    while (p + ind < end && p[ind] == ' ')
      ind++;
    if (p + ind < end && p[ind] != '\n' && p[ind] != '\r') {
      *col = (int)ind + 1;
      return;
    }
    (void)l;
  }
}

/* `file:`: contained in the scene's directory as `file:` inits are, read
 * whole. Errors point at the path. */
static void take_program_file(loader *L, const node *n, st__program *p) {
  st__init tmp;
  memset(&tmp, 0, sizeof tmp);
  take_file(L, n, &tmp);
  if (tmp.path != NULL) {
    FILE *f = fopen(tmp.path, "rb");
    char *text = f ? malloc(PROGRAM_FILE_MAX + 1) : NULL;
    size_t got = text ? fread(text, 1, PROGRAM_FILE_MAX + 1, f) : 0;
    if (f == NULL)
      nerr(L, n, "cannot open file '%.200s': %s", tmp.path_given,
           strerror(errno));
    else if (text == NULL)
      L->oom = 1;
    else if (got > PROGRAM_FILE_MAX || memchr(text, '\0', got) != NULL)
      nerr(L, n,
           "file '%.200s' is %s; expected TorchScript source of at "
           "most 1 MiB",
           tmp.path_given,
           got > PROGRAM_FILE_MAX ? "larger than 1 MiB"
                                  : "binary (a NUL "
                                    "byte)");
    else {
      text[got] = '\0';
      p->pub.source = text;
      text = NULL;
      const char *slash = strrchr(L->file, '/');
      if (tmp.path_given[0] == '/' || slash == NULL)
        p->src_file = dupstr(L, tmp.path_given);
      else if (asprintf(&p->src_file, "%.*s/%s", (int)(slash - L->file),
                        L->file, tmp.path_given) < 0)
        p->src_file = NULL, L->oom = 1;
      p->src_line = p->src_column = 1;
      p->in_file = 1;
    }
    free(text);
    if (f)
      fclose(f);
  }
  free(tmp.path);
  free(tmp.path_given);
}

/* A step argument: a number, a bool, a name or string, a list of ints. */
static int take_step_value(loader *L, const node *n, st_program_value *v,
                           int64_t **ints) {
  memset(v, 0, sizeof *v);
  if (n->kind == N_SCALAR && (n->sk == S_INT || n->sk == S_BOOL)) {
    v->kind = n->sk == S_INT ? ST_PROGRAM_INT : ST_PROGRAM_BOOL;
    v->i = n->i;
    v->f = n->f;
    return 0;
  }
  if (n->kind == N_SCALAR && n->sk == S_FLOAT) {
    v->kind = ST_PROGRAM_FLOAT;
    v->f = n->f;
    return 0;
  }
  if (is_str(n)) {
    v->kind = ident_ok(n->str, n->len) ? ST_PROGRAM_NAME : ST_PROGRAM_STRING;
    v->text = n->str;
    return 0;
  }
  if (n->kind == N_SEQ) {
    *ints = seq_alloc(L, n, sizeof **ints);
    if (*ints == NULL)
      return -1;
    for (size_t i = 0; i < n->n; i++) {
      if (n->kids[i]->kind != N_SCALAR || n->kids[i]->sk != S_INT) {
        expected(L, n->kids[i], "an integer", "args");
        return -1;
      }
      (*ints)[i] = n->kids[i]->i;
    }
    v->kind = ST_PROGRAM_INTS;
    v->ints = *ints;
    v->n_ints = n->n;
    return 0;
  }
  expected(L, n,
           "a value name, a number, true or false, a string or a "
           "list of integers",
           "args");
  return -1;
}

static void take_step(loader *L, const node *n, st__program *p) {
  const node *v[P_NKEYS];
  if (n->kind != N_MAP) {
    expected(L, n, "a step mapping {op: aten::NAME, args: {...}, out: NAME}",
             "steps");
    return;
  }
  map_fields(L, n, "step", step_keys, P_NKEYS, v, NULL);
  require(L, n, "step", "op", v[P_OP]);
  if (v[P_OP] == NULL)
    return;
  const node *op = v[P_OP];
  if (!is_str(op) || strncmp(op->str, "aten::", 6) != 0 || op->len <= 6) {
    expected(L, op, "an ATen operator (aten::NAME[.OVERLOAD])", "op");
    return;
  }
  if (st__program_add_step(p, op->str, n->line, n->col) < 0) {
    L->oom = 1;
    return;
  }
  if (v[P_ARGS] && v[P_ARGS]->kind != N_MAP)
    expected(L, v[P_ARGS], "a mapping of schema argument names to values",
             "args");
  else
    for (size_t i = 0; v[P_ARGS] && i + 1 < v[P_ARGS]->n; i += 2) {
      const node *k = v[P_ARGS]->kids[i];
      st_program_value val;
      int64_t *ints = NULL;
      if (!ident_valid(L, k, "args"))
        continue;
      if (take_step_value(L, v[P_ARGS]->kids[i + 1], &val, &ints) == 0 &&
          st__program_add_arg(p, k->str, &val) < 0)
        L->oom = 1;
      free(ints);
    }
  const node *out = v[P_OUT];
  if (out && out->kind == N_SEQ) {
    for (size_t i = 0; i < out->n; i++)
      if (ident_valid(L, out->kids[i], "out") &&
          st__program_add_out(p, out->kids[i]->str) < 0)
        L->oom = 1;
  } else if (out && ident_valid(L, out, "out") &&
             st__program_add_out(p, out->str) < 0) {
    L->oom = 1;
  }
}

/* `golden:` as a mapping: a TorchScript program (inline or from a file)
 * or a list of ATen steps. The golden op becomes ST_PROGRAM_OP. */
static void take_golden_program(loader *L, const node *n, st_scene *s) {
  const node *v[G_NKEYS], *k[G_NKEYS];
  map_fields(L, n, "golden", golden_keys, G_NKEYS, v, k);
  int forms = (v[G_TS] != NULL) + (v[G_FILE] != NULL) + (v[G_STEPS] != NULL);
  if (forms != 1) {
    nerr(L, n,
         "%s in golden; expected exactly one of torchscript, file "
         "and steps",
         forms ? "more than one program" : "no program");
    return;
  }
  st__program *p =
      st__program_new(v[G_STEPS] ? ST_PROGRAM_STEPS : ST_PROGRAM_TORCHSCRIPT);
  if (p == NULL) {
    L->oom = 1;
    return;
  }
  s->program = p;
  p->line = p->function_line = p->returns_line = n->line;
  p->column = p->function_column = p->returns_column = n->col;
  if (v[G_STEPS] && v[G_FUNCTION])
    nerr(L, k[G_FUNCTION],
         "'function' names a TorchScript function; "
         "expected it with torchscript or file, not steps");
  if (!v[G_STEPS] && v[G_RETURNS])
    nerr(L, k[G_RETURNS],
         "'returns' maps outputs to the values of steps; "
         "expected it with steps (a TorchScript function returns them)");
  if (v[G_TS]) {
    if (!is_str(v[G_TS]) || v[G_TS]->len == 0)
      expected(L, v[G_TS], "TorchScript source", "torchscript");
    else {
      p->pub.source = dupstr(L, v[G_TS]->str);
      p->src_file = dupstr(L, L->file);
      source_start(L, v[G_TS], &p->src_line, &p->src_column);
    }
  }
  if (v[G_FILE])
    take_program_file(L, v[G_FILE], p);
  if (!v[G_STEPS]) {
    p->pub.function = v[G_FUNCTION] ? take_ident(L, v[G_FUNCTION], "function")
                                    : dupstr(L, "golden");
    if (v[G_FUNCTION]) {
      p->function_line = v[G_FUNCTION]->line;
      p->function_column = v[G_FUNCTION]->col;
    }
    return;
  }
  if (v[G_STEPS]->kind != N_SEQ || v[G_STEPS]->n == 0)
    expected(L, v[G_STEPS], "a non-empty list of steps", "steps");
  else
    for (size_t i = 0; i < v[G_STEPS]->n; i++)
      take_step(L, v[G_STEPS]->kids[i], p);
  const node *r = v[G_RETURNS];
  if (r == NULL)
    return;
  p->returns_line = r->line;
  p->returns_column = r->col;
  if (r->kind != N_MAP) {
    expected(L, r, "a mapping of output names to value names", "returns");
    return;
  }
  p->pub.has_returns = 1;
  for (size_t i = 0; i + 1 < r->n; i += 2)
    if (ident_valid(L, r->kids[i], "returns") &&
        ident_valid(L, r->kids[i + 1], "returns") &&
        st__program_add_return(p, r->kids[i]->str, r->kids[i + 1]->str) < 0)
      L->oom = 1;
}

/* A golden program is computed by torch whatever --golden-platform says;
 * a golden_platform naming another backend contradicts it. golden_device
 * says where a program runs: without one it means nothing. */
static void check_golden_program(loader *L, const st_scene *s, const node *gp,
                                 const node *dev) {
  if (s->program == NULL) {
    if (dev)
      nerr(L, dev,
           "'golden_device' says where a golden program runs; "
           "expected it only with golden: {torchscript|file|steps: ...}");
    for (size_t i = 0; i < s->n_cases; i++)
      if (s->cases[i].golden_device != ST__DEVICE_UNSET)
        lerr(L, s->cases[i].line, s->cases[i].column,
             "case '%s' sets 'golden_device', which says where a golden "
             "program runs; expected it only with golden: "
             "{torchscript|file|steps: ...}",
             s->cases[i].name ? s->cases[i].name : "?");
    return;
  }
  if (s->golden_platform && strcmp(s->golden_platform, "torch") != 0)
    nerr(L, gp,
         "golden_platform '%s' contradicts the golden program, which "
         "torch computes; expected torch or no golden_platform",
         s->golden_platform);
  for (size_t i = 0; i < s->n_cases; i++) {
    const st__case *c = &s->cases[i];
    if (c->golden_platform && strcmp(c->golden_platform, "torch") != 0)
      lerr(L, c->line, c->column,
           "case '%s': golden_platform '%s' contradicts the golden program, "
           "which torch computes; expected torch or no golden_platform",
           c->name ? c->name : "?", c->golden_platform);
  }
}

/* ------------------------------------------------------------------ */
/* Scenes                                                              */

static const char *const scene_keys[] = {"scene",
                                         "level",
                                         "kernel",
                                         "golden",
                                         "rtol",
                                         "atol",
                                         "workers",
                                         "skip_golden",
                                         "equal_nan",
                                         "expect",
                                         "args",
                                         "cases",
                                         "golden_platform",
                                         "golden_args",
                                         "expect_message",
                                         "env",
                                         "golden_device",
                                         "tags",
                                         "flops",
                                         "bytes",
                                         "tolerance",
                                         "bound_factor",
                                         "compute_dtype"};
enum {
  K_SCENE,
  K_LEVEL,
  K_KERNEL,
  K_GOLDEN,
  K_RTOL,
  K_ATOL,
  K_WORKERS,
  K_SKIP,
  K_EQNAN,
  K_EXPECT,
  K_ARGS,
  K_CASES,
  K_GOLDEN_PLATFORM,
  K_GOLDEN_ARGS,
  K_EXPECT_MESSAGE,
  K_ENV,
  K_GOLDEN_DEVICE,
  K_TAGS,
  K_FLOPS,
  K_BYTES,
  K_TOL,
  K_BOUND_FACTOR,
  K_COMPUTE_DTYPE,
  K_NKEYS
};

/* Open addressing over an array of scenes: slot = index + 1, 0 = empty. */
static const st_scene *index_find(st_scene *const *arr, const size_t *slots,
                                  size_t cap, const char *name) {
  if (cap == 0)
    return NULL;
  for (size_t i = str_hash(name) & (cap - 1);; i = (i + 1) & (cap - 1)) {
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
  size_t i = str_hash(arr[idx]->name) & (*cap - 1);
  while ((*slots)[i] != 0)
    i = (i + 1) & (*cap - 1);
  (*slots)[i] = idx + 1;
  return 0;
}

static const st_scene *find_scene(const loader *L, const char *name) {
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
  loader *L;
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
  const char *copy = arena_str(nl->L, name, strlen(name));
  if (copy)
    nl->v[nl->n++] = copy;
  return 0;
}

static void gather(namelist *nl, const st__val *v) {
  st__expr_error xe;
  if (v->kind == ST__VAL_NAME && v->name)
    (void)st__expr_check(v->name, gather_cb, nl, &xe);
}

/* Marks used each case's params that a field names, directly or through
 * other params' expressions (the unused-param warning reads `used`). */
static void mark_used(loader *L, st_scene *s) {
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
static void resolve_cases(loader *L, const st_scene *s) {
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
      size_t j;
      for (j = 0; j < L->errs.count; j++)
        if (same_error(&L->errs.items[j], &tmp.items[e]))
          break;
      if (j < L->errs.count)
        continue;
      lerr(L, tmp.items[e].line, tmp.items[e].column, "%s",
           tmp.items[e].message);
    }
    tmp.count = 0;
  }
  st__plan_free(&plan);
  st_error_list_free(&tmp);
}

/* `workers`: an integer from 1 to 64, or an expression of numbers (a
 * scene has no params of its own). */
static int take_workers(loader *L, const node *n, int64_t *out) {
  st__val v;
  st__expr_error xe;
  st__num x;
  if (!is_str(n) || n->len == 0)
    return take_int(L, n, "workers", "an integer from 1 to 64", 1, 64, out);
  memset(&v, 0, sizeof v);
  val_at(&v, n);
  if (st__expr_eval(n->str, ST__EXPR_INT, NULL, NULL, &x, &xe) != 0) {
    lerr(L, n->line, st__val_column(&v, xe.offset), "workers: %s%s", xe.message,
         strncmp(xe.message, "unknown name", 12) == 0
             ? "; expected numbers only (a scene has no params)"
             : "");
    return -1;
  }
  if (!x.is_int || x.i < 1 || x.i > 64) {
    expected(L, n, "an integer from 1 to 64", "workers");
    return -1;
  }
  *out = x.i;
  return 0;
}

/* One scene document into L->scenes. Long because: it takes each of the
 * scene's top-level keys in turn (one short block per key, in SPEC §2's
 * order), then resolves and indexes the scene; splitting by key would
 * only move those blocks apart. */
static void take_scene(loader *L, const node *root) {
  const node *v[K_NKEYS], *k[K_NKEYS];
  char got[100];
  size_t before = L->raised;
  int64_t x;
  if (root->kind != N_MAP) {
    describe(root, got, sizeof got);
    nerr(L, root,
         "expected a scene mapping (scene, kernel, args, cases, ...), got %s",
         got);
    return;
  }
  st_scene *s = st__zalloc(1, sizeof *s);
  if (s == NULL) {
    L->oom = 1;
    return;
  }
  s->level = 2;
  s->workers = 2;
  s->line = root->line;
  s->column = root->col;
  s->file = dupstr(L, L->file);
  if (L->dir)
    s->dir = dupstr(L, L->dir);
  map_fields(L, root, "scene", scene_keys, K_NKEYS, v, k);
  require(L, root, "scene", "scene", v[K_SCENE]);
  require(L, root, "scene", "kernel", v[K_KERNEL]);
  require(L, root, "scene", "args", v[K_ARGS]);
  require(L, root, "scene", "cases", v[K_CASES]);
  if (v[K_SCENE]) {
    s->name = take_ident(L, v[K_SCENE], "scene");
    s->line = v[K_SCENE]->line;
    s->column = v[K_SCENE]->col;
  }
  int level_ok = 1;
  if (v[K_LEVEL]) {
    level_ok =
        take_int(L, v[K_LEVEL], "level", "2 (chip) or 3 (node)", 2, 3, &x) == 0;
    if (level_ok)
      s->level = (int)x;
  }
  if (v[K_KERNEL]) {
    s->kernel = take_string(L, v[K_KERNEL], "an op name", "kernel");
    s->kernel_line = s->golden_line = v[K_KERNEL]->line;
    s->kernel_column = s->golden_column = v[K_KERNEL]->col;
  }
  if (v[K_GOLDEN] && v[K_GOLDEN]->kind == N_MAP) {
    take_golden_program(L, v[K_GOLDEN], s);
    s->golden = dupstr(L, ST_PROGRAM_OP);
    s->golden_line = v[K_GOLDEN]->line;
    s->golden_column = v[K_GOLDEN]->col;
  } else if (v[K_GOLDEN]) {
    s->golden = take_string(L, v[K_GOLDEN], "an op name", "golden");
    s->golden_line = v[K_GOLDEN]->line;
    s->golden_column = v[K_GOLDEN]->col;
  } else if (s->kernel) {
    s->golden = dupstr(L, s->kernel);
  }
  if (v[K_RTOL])
    take_tol_or_param(L, v[K_RTOL], "rtol", &s->has_rtol, &s->rtol,
                      &s->rtol_param);
  if (v[K_ATOL])
    take_tol_or_param(L, v[K_ATOL], "atol", &s->has_atol, &s->atol,
                      &s->atol_param);
  if (v[K_EQNAN])
    (void)take_bool(L, v[K_EQNAN], "equal_nan", &s->equal_nan);
  take_tolspec(L, v[K_TOL], v[K_BOUND_FACTOR], v[K_COMPUTE_DTYPE], &s->tol);
  if (v[K_EXPECT]) {
    int e = take_expect(L, v[K_EXPECT], &s->quarantine);
    if (e >= 0) {
      s->expect_fail = e == EXPECT_FAIL;
      s->expect_error = e == EXPECT_ERROR;
    }
  }
  if (v[K_EXPECT_MESSAGE])
    take_expect_message(L, v[K_EXPECT_MESSAGE], k[K_EXPECT_MESSAGE],
                        s->expect_error, &s->expect_message);
  if (v[K_WORKERS]) {
    if (take_workers(L, v[K_WORKERS], &x) == 0)
      s->workers = (unsigned)x;
    /* With a bad level, which one was meant is unknown: that error is
     * enough (the first cause wins). */
    if (s->level != 3 && level_ok)
      nerr(L, k[K_WORKERS],
           "'workers' is only valid at level 3; expected no 'workers' in a "
           "level-%d scene",
           s->level);
  }
  if (v[K_SKIP])
    (void)take_bool(L, v[K_SKIP], "skip_golden", &s->skip_golden);
  if (v[K_GOLDEN_PLATFORM])
    s->golden_platform = take_string(L, v[K_GOLDEN_PLATFORM], "a platform name",
                                     "golden_platform");
  if (v[K_ENV])
    take_env(L, v[K_ENV], &s->env);
  if (v[K_TAGS])
    s->tags = take_tags(L, v[K_TAGS], &s->n_tags);
  if (v[K_ARGS])
    take_args(L, v[K_ARGS], s);
  if (v[K_GOLDEN_ARGS])
    s->golden_args =
        take_golden_args(L, v[K_GOLDEN_ARGS], s, &s->n_golden_args);
  if (v[K_GOLDEN_DEVICE])
    s->golden_device = take_device(L, v[K_GOLDEN_DEVICE]);
  L->scene_work[0] = v[K_FLOPS];
  L->scene_work[1] = v[K_BYTES];
  if (v[K_CASES])
    take_cases(L, v[K_CASES], s);
  L->scene_work[0] = L->scene_work[1] = NULL;
  mark_used(L, s);
  check_golden_program(L, s, v[K_GOLDEN_PLATFORM],
                       s->golden_device ? v[K_GOLDEN_DEVICE] : NULL);
  if (s->name) {
    const st_scene *prev = find_scene(L, s->name);
    if (prev)
      nerr(L, v[K_SCENE], "duplicate scene '%s' (first defined at %s:%d:%d)",
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

/* ------------------------------------------------------------------ */
/* Parsing                                                             */

static void syntax_error(loader *L, const yaml_parser_t *p) {
  int line, col;
  switch (p->error) {
  case YAML_MEMORY_ERROR:
    L->oom = 1;
    return;
  case YAML_READER_ERROR:
    offset_pos(L->buf, L->len, p->problem_offset, &line, &col);
    if (p->problem_value == 0 && p->problem &&
        strcmp(p->problem, "control characters are not allowed") == 0)
      lerr(L, line, col, "NUL byte; expected UTF-8 text without NUL bytes");
    else
      lerr(L, line, col, "%s (0x%02X); expected valid UTF-8 text",
           p->problem ? p->problem : "invalid input",
           (unsigned)p->problem_value);
    return;
  case YAML_SCANNER_ERROR:
  case YAML_PARSER_ERROR:
    if (p->context)
      lerr(L, mark_line(p->problem_mark), mark_col(p->problem_mark),
           "syntax error: %s (%s that starts at %d:%d)",
           p->problem ? p->problem : "invalid YAML", p->context,
           mark_line(p->context_mark), mark_col(p->context_mark));
    else
      lerr(L, mark_line(p->problem_mark), mark_col(p->problem_mark),
           "syntax error: %s", p->problem ? p->problem : "invalid YAML");
    return;
  default:
    lerr(L, 1, 1, "syntax error: %s", p->problem ? p->problem : "unknown");
    return;
  }
}

static void parse(loader *L) {
  yaml_parser_t p;
  yaml_event_t ev;
  int docs = 0, done = 0;
  if (!yaml_parser_initialize(&p)) {
    L->oom = 1;
    return;
  }
  yaml_parser_set_input_string(&p, (const unsigned char *)L->buf, L->len);
  while (!done && !L->fatal && !L->oom) {
    if (!yaml_parser_parse(&p, &ev)) {
      syntax_error(L, &p);
      break;
    }
    switch (ev.type) {
    case YAML_DOCUMENT_START_EVENT:
      docs++;
      arena_reset(&L->ar);
      if (L->anchors)
        memset(L->anchors, 0, L->cap_anchors * sizeof *L->anchors);
      L->n_anchors = 0;
      L->root = NULL;
      L->depth = 0;
      L->n_kids = 0;
      break;
    case YAML_DOCUMENT_END_EVENT:
      if (L->root)
        take_scene(L, L->root);
      L->root = NULL;
      break;
    case YAML_SCALAR_EVENT:
      on_scalar(L, &ev);
      break;
    case YAML_SEQUENCE_START_EVENT:
      on_start(L, &ev, N_SEQ);
      break;
    case YAML_MAPPING_START_EVENT:
      on_start(L, &ev, N_MAP);
      break;
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
      on_end(L);
      break;
    case YAML_ALIAS_EVENT:
      on_alias(L, &ev);
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
    lerr(L, 1, 1, "empty file; expected a scene document");
  yaml_parser_delete(&p);
  arena_free(&L->ar);
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
  /* Stable insertion sort by position: at most MAX_ERRORS + 1 items. */
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

static st_status load_buffer(st_scene_set *set, const char *name,
                             const char *text, size_t length,
                             const st_load_options *opts,
                             const st__load_ext *ext, st_error_list *errors) {
  loader L;
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

  parse(&L);

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
                    "too many errors; stopped after %d", MAX_ERRORS);
    if (st_error_list_add(&L.errs, &e) != ST_OK)
      L.oom = 1;
  }
  if (L.oom) {
    rc = ST_ENOMEM;
  } else if (L.errs.count || L.raised) {
    rc = ST_ELOAD;
  } else {
    if (set->count + L.n_scenes > set->capacity) {
      size_t cap = set->capacity ? set->capacity : 8;
      while (cap < set->count + L.n_scenes)
        cap *= 2;
      st_scene **p = realloc(set->scenes, cap * sizeof *p);
      if (p == NULL) {
        rc = ST_ENOMEM;
        goto out;
      }
      set->scenes = p;
      set->capacity = cap;
    }
    for (size_t i = 0; i < L.n_scenes; i++) {
      set->scenes[set->count] = L.scenes[i];
      if (index_add(set->scenes, &set->name_index, &set->name_index_cap,
                    set->count + 1, set->count) != 0) {
        /* The scenes added so far stay (indexed); the rest are freed. */
        memmove(L.scenes, L.scenes + i, (L.n_scenes - i) * sizeof *L.scenes);
        L.n_scenes -= i;
        rc = ST_ENOMEM;
        goto out;
      }
      set->count++;
    }
    L.n_scenes = 0;
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
  free(L.anchors);
  free(L.stack);
  free(L.kids);
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

/* ------------------------------------------------------------------ */
/* Files and directories                                               */

static st_status io_error(st_error_list *errors, const char *fmt,
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

static st_status load_file(st_scene_set *set, const char *path,
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
    return io_error(errors, "cannot open '%s': %s", path, errno);
  if (fstat(fd, &sb) != 0) {
    rc = io_error(errors, "cannot read '%s': %s", path, errno);
    goto out;
  }
  if (S_ISDIR(sb.st_mode)) {
    rc = io_error(errors, "cannot read '%s': %s", path, EISDIR);
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
      rc = io_error(errors, "cannot read '%s': %s", path, errno);
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

typedef struct pathlist {
  char **v;
  size_t n, cap;
} pathlist;

static int has_suffix(const char *s, const char *suf) {
  size_t a = strlen(s), b = strlen(suf);
  return a >= b && strcmp(s + a - b, suf) == 0;
}

/* What a directory scan skips (SPEC §13): names starting with '.',
 * `subprojects` and `build*` directories at any depth, and the --ignore
 * and .scenetestignore globs, matched with fnmatch against the path
 * relative to the command-line directory and against the basename. */
typedef struct scan {
  const char *root;
  size_t root_len;
  const char *const *globs; /* --ignore */
  size_t n_globs;
  char **file_globs; /* .scenetestignore; owned */
  size_t n_file_globs;
} scan;

static int glob_hit(const char *const *g, size_t n, const char *rel,
                    const char *base) {
  for (size_t i = 0; i < n; i++)
    if (fnmatch(g[i], rel, 0) == 0 || fnmatch(g[i], base, 0) == 0)
      return 1;
  return 0;
}

static int ignored(const scan *sc, const char *path, const char *base,
                   int is_dir) {
  if (is_dir &&
      (strcmp(base, "subprojects") == 0 || strncmp(base, "build", 5) == 0))
    return 1;
  const char *rel = path + sc->root_len;
  while (*rel == '/')
    rel++;
  return glob_hit(sc->globs, sc->n_globs, rel, base) ||
         glob_hit((const char *const *)sc->file_globs, sc->n_file_globs, rel,
                  base);
}

/* Reads DIR/.scenetestignore, if any: one glob a line, '#' comments. */
static st_status read_ignore_file(scan *sc) {
  char *p;
  if (asprintf(&p, "%s/.scenetestignore", sc->root) < 0)
    return ST_ENOMEM;
  FILE *f = fopen(p, "re");
  free(p);
  if (f == NULL)
    return ST_OK;
  char line[4096];
  st_status rc = ST_OK;
  while (fgets(line, sizeof line, f) != NULL) {
    size_t len = strlen(line);
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r' ||
                       line[len - 1] == ' ' || line[len - 1] == '\t' ||
                       line[len - 1] == '/'))
      line[--len] = '\0';
    char *g = line;
    while (*g == ' ' || *g == '\t')
      g++;
    if (*g == '\0' || *g == '#')
      continue;
    char **v = realloc(sc->file_globs, (sc->n_file_globs + 1) * sizeof *v);
    if (v == NULL || (v[sc->n_file_globs] = strdup(g)) == NULL) {
      if (v)
        sc->file_globs = v;
      rc = ST_ENOMEM;
      break;
    }
    sc->file_globs = v;
    sc->n_file_globs++;
  }
  fclose(f);
  return rc;
}

/* How deep a directory search goes below a path given on the command
 * line. */
#define ST__SCAN_MAX_DEPTH 64

static st_status collect(const scan *sc, const char *dir, pathlist *out,
                         int depth, st_error_list *errors) {
  DIR *d;
  struct dirent *de;
  st_status rc = ST_OK;
  /* Real directories only (symlinked ones are not followed), so there is
   * no loop; the depth cap guards against absurd trees anyway. A tree
   * deeper than the cap is an error, never a silent "0 scenes" (issue
   * 13, D12). */
  if (depth > ST__SCAN_MAX_DEPTH) {
    st_error e;
    st_error_clear(&e);
    st_error_set(&e, ST_ELOAD,
                 "cannot search '%s': directories nest deeper than %d levels "
                 "below the path given; name a deeper directory on the "
                 "command line",
                 dir, ST__SCAN_MAX_DEPTH);
    if (errors != NULL && st_error_list_add(errors, &e) != ST_OK)
      return ST_ENOMEM;
    return ST_ELOAD;
  }
  d = opendir(dir);
  if (d == NULL)
    return io_error(errors, "cannot open directory '%s': %s", dir, errno);
  while ((de = readdir(d)) != NULL) {
    struct stat sb;
    char *p;
    if (de->d_name[0] == '.')
      continue;
    if (asprintf(&p, "%s%s%s", dir, has_suffix(dir, "/") ? "" : "/",
                 de->d_name) < 0) {
      rc = ST_ENOMEM;
      break;
    }
    if (lstat(p, &sb) == 0 && S_ISDIR(sb.st_mode)) {
      st_status r = ST_OK;
      if (!ignored(sc, p, de->d_name, 1))
        r = collect(sc, p, out, depth + 1, errors);
      free(p);
      if (r == ST_ENOMEM) {
        rc = r;
        break;
      }
      if (r != ST_OK)
        rc = r;
      continue;
    }
    /* scenetest.yaml is the configuration file (docs/cli.md). */
    if (!(has_suffix(de->d_name, ".yaml") || has_suffix(de->d_name, ".yml")) ||
        strcmp(de->d_name, "scenetest.yaml") == 0 || stat(p, &sb) != 0 ||
        S_ISDIR(sb.st_mode) || ignored(sc, p, de->d_name, 0)) {
      free(p);
      continue;
    }
    char **v = st__array_grow(out->v, &out->cap, out->n, sizeof *v, 16);
    if (v == NULL) {
      free(p);
      rc = ST_ENOMEM;
      break;
    }
    out->v = v;
    out->v[out->n++] = p;
  }
  closedir(d);
  return rc;
}

static int path_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

st_status st__scene_set_load_path_ext(st_scene_set *set, const char *path,
                                      const st_load_options *opts,
                                      const st__load_ext *ext,
                                      st_error_list *errors) {
  struct stat sb;
  st_load_options taken;
  st_error bad;
  st_error_clear(&bad);
  /* Checked here too: a directory without scenes loads no buffer. */
  if (st__load_options_take(opts, &taken, &bad) != ST_OK) {
    if (errors != NULL && st_error_list_add(errors, &bad) != ST_OK)
      return ST_ENOMEM;
    return bad.code;
  }
  /* Files named on the command line are never ignored (SPEC §13). */
  if (stat(path, &sb) != 0)
    return io_error(errors, "cannot open '%s': %s", path, errno);
  if (!S_ISDIR(sb.st_mode))
    return load_file(set, path, &taken, ext, errors);

  pathlist pl = {0};
  scan sc = {path,
             strlen(path),
             ext ? ext->ignore : NULL,
             ext ? ext->n_ignore : 0,
             NULL,
             0};
  st_status rc = read_ignore_file(&sc);
  if (rc == ST_OK)
    rc = collect(&sc, path, &pl, 0, errors);
  if (rc != ST_ENOMEM) {
    if (pl.n > 1) /* an empty directory has no array at all */
      qsort(pl.v, pl.n, sizeof *pl.v, path_cmp);
    for (size_t i = 0; i < pl.n; i++) {
      st_status r = load_file(set, pl.v[i], &taken, ext, errors);
      if (r == ST_ENOMEM) {
        rc = r;
        break;
      }
      if (r != ST_OK)
        rc = ST_ELOAD;
    }
  }
  for (size_t i = 0; i < pl.n; i++)
    free(pl.v[i]);
  free(pl.v);
  for (size_t i = 0; i < sc.n_file_globs; i++)
    free(sc.file_globs[i]);
  free(sc.file_globs);
  return rc;
}

st_status st_scene_set_load_path(st_scene_set *set, const char *path,
                                 const st_load_options *opts,
                                 st_error_list *errors) {
  return st__scene_set_load_path_ext(set, path, opts, NULL, errors);
}
