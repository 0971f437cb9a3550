/* SPDX-License-Identifier: MIT */
/* fpcheck.h: each fingerprint is read as its KEY="VALUE" pairs (values
 * kept as written, escapes and all); two fingerprints are the same when
 * every pair but the clock and ignored ones is. */
#include <stdlib.h>
#include <string.h>

#include "tools/fpcheck.h"
#include "tools/timing.h"

#define MAX_PAIRS 64

typedef struct pair {
  const char *k, *v; /* into the text */
  size_t kn, vn;
} pair;

/* The pairs of text; returns their count. */
static size_t pairs_of(const char *s, pair *out) {
  size_t n = 0;
  while (*s != '\0' && n < MAX_PAIRS) {
    pair p;
    while (*s == ' ')
      s++;
    if (*s == '\0')
      break;
    p.k = s;
    while (*s != '\0' && *s != '=' && *s != ' ')
      s++;
    p.kn = (size_t)(s - p.k);
    if (s[0] != '=' || s[1] != '"')
      break;
    s += 2;
    p.v = s;
    while (*s != '\0' && *s != '"') {
      if (*s == '\\' && s[1] != '\0')
        s++;
      s++;
    }
    p.vn = (size_t)(s - p.v);
    if (*s == '"')
      s++;
    out[n++] = p;
  }
  return n;
}

int st__fp_is_clock(const char *key, size_t len) {
  size_t i;
  for (i = 0; i + 3 <= len; i++)
    if (memcmp(key + i, "mhz", 3) == 0 ||
        (i + 5 <= len && memcmp(key + i, "clock", 5) == 0))
      return 1;
  return 0;
}

static int ignored(const pair *p, const char *const *ignore, size_t n) {
  size_t i;
  if (st__fp_is_clock(p->k, p->kn))
    return 1;
  for (i = 0; i < n; i++)
    if (strlen(ignore[i]) == p->kn && memcmp(ignore[i], p->k, p->kn) == 0)
      return 1;
  return 0;
}

static const pair *find(const pair *ps, size_t n, const pair *k) {
  size_t i;
  for (i = 0; i < n; i++)
    if (ps[i].kn == k->kn && memcmp(ps[i].k, k->k, k->kn) == 0)
      return &ps[i];
  return NULL;
}

/* a and b the same but for clock and ignored fields. */
static int same(const char *a, const char *b, const char *const *ignore,
                size_t n_ignore) {
  pair pa[MAX_PAIRS], pb[MAX_PAIRS];
  size_t na = pairs_of(a, pa), nb = pairs_of(b, pb), i;
  for (i = 0; i < na; i++) {
    const pair *o = find(pb, nb, &pa[i]);
    if (ignored(&pa[i], ignore, n_ignore))
      continue;
    if (o == NULL || o->vn != pa[i].vn || memcmp(o->v, pa[i].v, o->vn) != 0)
      return 0;
  }
  for (i = 0; i < nb; i++)
    if (!ignored(&pb[i], ignore, n_ignore) && find(pa, na, &pb[i]) == NULL)
      return 0;
  return 1;
}

/* Every fingerprint of x has a match among y's. */
static int covered(const st__side *x, const st__side *y,
                   const char *const *ignore, size_t n_ignore,
                   const char **missing) {
  size_t i, j;
  for (i = 0; i < st__side_fingerprint_count(x); i++) {
    int found = 0;
    for (j = 0; j < st__side_fingerprint_count(y) && !found; j++)
      found = same(st__side_fingerprint(x, i), st__side_fingerprint(y, j),
                   ignore, n_ignore);
    if (!found) {
      *missing = st__side_fingerprint(x, i);
      return 0;
    }
  }
  return 1;
}

/* The fields of a (base) and b (new), one a line, a differing one that
 * counts marked '*', a differing clock or ignored one marked '~'. */
static void print_fields(FILE *err, const char *a, const char *b,
                         const char *const *ignore, size_t n_ignore) {
  pair pa[MAX_PAIRS], pb[MAX_PAIRS];
  size_t na = pairs_of(a, pa), nb = pairs_of(b, pb), i;
  for (i = 0; i < na + nb; i++) {
    const pair *p = i < na ? &pa[i] : &pb[i - na];
    const pair *x = find(pa, na, p), *y = find(pb, nb, p);
    int differs;
    if (i >= na && x != NULL)
      continue; /* printed with base's */
    differs = x == NULL || y == NULL || x->vn != y->vn ||
              memcmp(x->v, y->v, x->vn) != 0;
    fprintf(err, "  %c %.*s: %s%.*s%s | %s%.*s%s\n",
            !differs                       ? ' '
            : ignored(p, ignore, n_ignore) ? '~'
                                           : '*',
            (int)p->kn, p->k, x ? "\"" : "", x ? (int)x->vn : 1, x ? x->v : "-",
            x ? "\"" : "", y ? "\"" : "", y ? (int)y->vn : 1, y ? y->v : "-",
            y ? "\"" : "");
  }
}

int st__fp_check(const st__side *base, const st__side *nw,
                 const char *base_name, const char *new_name,
                 const char *const *ignore, size_t n_ignore, FILE *err) {
  const char *missing = NULL, *a, *b;
  int base_has = st__side_fingerprint_count(base) > 0,
      new_has = st__side_fingerprint_count(nw) > 0;
  if (!base_has || !new_has) {
    fprintf(err,
            "scenetest: warning: no fingerprint line in '%s' (a log from "
            "before it): the two sides' machines are not compared\n",
            !base_has ? base_name : new_name);
    return -1;
  }
  if (!covered(base, nw, ignore, n_ignore, &missing)) {
    /* A base fingerprint that new lacks, against new's first. */
    a = missing;
    b = st__side_fingerprint(nw, 0);
  } else if (!covered(nw, base, ignore, n_ignore, &missing)) {
    a = st__side_fingerprint(base, 0);
    b = missing;
  } else {
    a = st__side_fingerprint(base, 0);
    b = st__side_fingerprint(nw, 0);
    if (strcmp(a, b) != 0) {
      /* Shown, never refused. */
      fprintf(err, "scenetest: note: the fingerprints differ only in clock "
                   "or --ignore-env fields:\n  field: base | new\n");
      print_fields(err, a, b, ignore, n_ignore);
    }
    return -1;
  }
  fprintf(err,
          "scenetest: error: '%s' and '%s' were measured in different "
          "environments: their fingerprints differ ('*' a field that "
          "counts, '~' a clock or --ignore-env field, shown only); "
          "--ignore-env FIELD accepts a field\n  field: base | new\n",
          base_name, new_name);
  print_fields(err, a, b, ignore, n_ignore);
  return ST__TOOL_REFUSED;
}
