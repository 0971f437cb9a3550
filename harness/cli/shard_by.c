/* SPDX-License-Identifier: MIT */
/* --shard-by durations:FILE (docs/cli.md#sharding): the shards balanced
 * by an earlier run's durations instead of the case-name hash. FILE is a
 * JSON report or --events file (read by rerun_parse.c's hardened JSON
 * reader); the selection is split longest processing time first: cases
 * in order of falling duration (ties: case id, byte order), each to the
 * shard with the least total so far (ties: fewer cases, then the lower
 * index). A case FILE does not record takes the median of the selected
 * cases it does (none: 0). Every shard process computes the same whole
 * assignment from the same FILE and selection, so the shards are
 * disjoint and complete. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "cli/cli_internal.h"
#include "cli/shard_by.h"

int st__shard_by_parse(const char *text, const char **path) {
  static const char prefix[] = "durations:";
  if (strncmp(text, prefix, sizeof prefix - 1) != 0 ||
      text[sizeof prefix - 1] == '\0')
    return st__cli_usage("--shard-by must be durations:FILE (got '%s')", text);
  *path = text + sizeof prefix - 1;
  return 0;
}

static int cmp_entry(const void *a, const void *b) {
  return strcmp(((const st__duration *)a)->name,
                ((const st__duration *)b)->name);
}

/* Line and column (1-based, bytes) of offset at in text. */
static void line_col(const char *text, size_t at, size_t *line, size_t *col) {
  size_t i;
  *line = 1;
  *col = 1;
  for (i = 0; i < at; i++) {
    if (text[i] == '\n') {
      (*line)++;
      *col = 1;
    } else {
      (*col)++;
    }
  }
}

/* Sorts by name and folds the entries of one name (--repeat iterations)
 * into their mean. */
static void fold(st__durations *d) {
  size_t i = 0, o = 0;
  qsort(d->items, d->n, sizeof *d->items, cmp_entry);
  while (i < d->n) {
    size_t j = i + 1;
    uint64_t sum = d->items[i].ns, k;
    while (j < d->n && strcmp(d->items[j].name, d->items[i].name) == 0) {
      sum +=
          d->items[j].ns > UINT64_MAX - sum ? UINT64_MAX - sum : d->items[j].ns;
      free(d->items[j].name);
      j++;
    }
    k = (uint64_t)(j - i);
    d->items[o] = d->items[i];
    d->items[o].ns = sum / k;
    o++;
    i = j;
  }
  d->n = o;
}

int st__durations_read(const char *path, st__durations *d) {
  char *text, **names = NULL;
  uint64_t *durs = NULL;
  size_t len, n = 0, stop = 0, i, line, col;
  int rc;

  memset(d, 0, sizeof *d);
  if ((rc = st__cli_read_report("--shard-by", path, &text, &len)) != 0)
    return rc;
  rc = st__durations_parse(text, len, &names, &durs, &n, &stop);
  line_col(text, stop, &line, &col);
  free(text);
  if (rc == ST__RERUN_NOMEM)
    return st__cli_read_oom("--shard-by");
  if (rc != 0) {
    fprintf(stderr,
            "%s:%zu:%zu: error: --shard-by: not a JSON report or --events "
            "file of scenetest (expected a JSON object of cases with "
            "\"scene\", \"case\", \"status\" and \"duration_ns\")\n",
            path, line, col);
    return 2;
  }
  if (n == 0) {
    free(names);
    free(durs);
    return st__cli_usage("--shard-by: '%s' records no case durations (a JSON "
                         "report or --events file of scenetest with at least "
                         "one case is expected)",
                         path);
  }
  d->items = malloc(n * sizeof *d->items);
  if (d->items == NULL) {
    st__names_free(names, n);
    free(durs);
    fputs("scenetest: error: internal error: out of memory\n", stderr);
    return 3;
  }
  for (i = 0; i < n; i++) {
    d->items[i].name = names[i];
    d->items[i].ns = durs[i];
  }
  d->n = n;
  free(names);
  free(durs);
  fold(d);
  return 0;
}

void st__durations_free(st__durations *d) {
  size_t i;
  for (i = 0; i < d->n; i++)
    free(d->items[i].name);
  free(d->items);
  memset(d, 0, sizeof *d);
}

/* The recorded duration of name: 1 with *ns, else 0. */
static int lookup(const st__durations *d, const char *name, uint64_t *ns) {
  st__duration key, *hit;
  key.name = (char *)name;
  key.ns = 0;
  hit = bsearch(&key, d->items, d->n, sizeof *d->items, cmp_entry);
  if (hit == NULL)
    return 0;
  *ns = hit->ns;
  return 1;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

typedef struct job {
  const char *id;
  uint64_t ns;
  size_t at; /* index in the caller's ids */
} job;

static int cmp_job(const void *a, const void *b) {
  const job *x = a, *y = b;
  if (x->ns != y->ns)
    return x->ns > y->ns ? -1 : 1;
  return strcmp(x->id, y->id);
}

int st__shard_by_assign(const st__durations *d, const char *const *ids,
                        size_t n, unsigned total, unsigned *shard_of) {
  uint64_t *known = NULL, *load = NULL, median = 0;
  size_t *count = NULL, n_known = 0, i;
  job *jobs = NULL;
  unsigned s;
  int rc = -1;

  if (n == 0)
    return 0;
  known = malloc(n * sizeof *known);
  jobs = malloc(n * sizeof *jobs);
  load = calloc(total, sizeof *load);
  count = calloc(total, sizeof *count);
  if (known == NULL || jobs == NULL || load == NULL || count == NULL)
    goto out;
  for (i = 0; i < n; i++)
    if (lookup(d, ids[i], &known[n_known]))
      n_known++;
  if (n_known > 0) {
    qsort(known, n_known, sizeof *known, cmp_u64);
    median =
        n_known % 2
            ? known[n_known / 2]
            : known[n_known / 2 - 1] / 2 + known[n_known / 2] / 2 +
                  (known[n_known / 2 - 1] % 2 + known[n_known / 2] % 2) / 2;
  }
  for (i = 0; i < n; i++) {
    jobs[i].id = ids[i];
    jobs[i].at = i;
    if (!lookup(d, ids[i], &jobs[i].ns))
      jobs[i].ns = median;
  }
  qsort(jobs, n, sizeof *jobs, cmp_job);
  for (i = 0; i < n; i++) {
    unsigned best = 0;
    for (s = 1; s < total; s++)
      if (load[s] < load[best] ||
          (load[s] == load[best] && count[s] < count[best]))
        best = s;
    shard_of[jobs[i].at] = best;
    load[best] = jobs[i].ns > UINT64_MAX - load[best] ? UINT64_MAX
                                                      : load[best] + jobs[i].ns;
    count[best]++;
  }
  rc = 0;
out:
  free(known);
  free(jobs);
  free(load);
  free(count);
  return rc;
}
