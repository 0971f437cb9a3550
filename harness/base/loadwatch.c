/* SPDX-License-Identifier: MIT */
/* Observing the dynamic loader's list with dl_iterate_phdr: the set of
 * objects already seen in this process, and which objects are new. What is
 * loaded is always read from the loader, never remembered from our own
 * dlopen calls, so a library loaded behind our back (by a kernel, by a
 * dependency of golden) is seen too. */
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/loadwatch.h"
#include "base/util.h"

static pthread_mutex_t watch_lock = PTHREAD_MUTEX_INITIALIZER;
static char **seen;                  /* guarded by: watch_lock; sorted */
static size_t n_seen, cap_seen;      /* guarded by: watch_lock */
static unsigned long long last_adds; /* guarded by: watch_lock */
static unsigned long long last_subs; /* guarded by: watch_lock */
static size_t last_count;            /* guarded by: watch_lock: list length */
static int primed;                   /* guarded by: watch_lock */
static st__loadwatch_stats stats;    /* guarded by: watch_lock */

typedef struct st__counts {
  unsigned long long adds, subs;
} st__counts;

static int adds_cb(struct dl_phdr_info *info, size_t size, void *data) {
  st__counts *c = data;
  (void)size;
  /* dlpi_adds/dlpi_subs count every object ever loaded and unloaded;
   * they are the same in every entry, so one callback suffices. */
  c->adds = info->dlpi_adds;
  c->subs = info->dlpi_subs;
  return 1;
}

typedef struct st__collect {
  char **items;
  size_t n, cap;
  size_t index; /* entries of the list visited so far */
  size_t skip;  /* entries at the front known to be seen already */
  int oom;
} st__collect;

static int collect_cb(struct dl_phdr_info *info, size_t size, void *data) {
  st__collect *c = data;
  (void)size;
  /* The loader appends what it loads: while nothing was unloaded, the
   * first `skip` entries are those of the last look, and only the rest
   * can be new. Reading their names is what costs, not visiting. */
  if (c->index++ < c->skip)
    return 0;
  if (info->dlpi_name == NULL || info->dlpi_name[0] == '\0')
    return 0;
  stats.names_examined++;
  char **p = st__array_grow(c->items, &c->cap, c->n, sizeof *p, 64);
  if (p == NULL) {
    c->oom = 1;
    return 1;
  }
  c->items = p;
  c->items[c->n] = strdup(info->dlpi_name);
  if (c->items[c->n] == NULL) {
    c->oom = 1;
    return 1;
  }
  c->n++;
  return 0;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Searches the sorted prefix [0, sorted) of seen. */
static int is_seen(const char *path, size_t sorted) {
  return sorted > 0 &&
         bsearch(&path, seen, sorted, sizeof *seen, cmp_str) != NULL;
}

void st__loadwatch_free(char **list, size_t n) {
  size_t i;
  for (i = 0; i < n; i++)
    free(list[i]);
  free(list);
}

st_status st__loadwatch_poll(char ***out, size_t *n) {
  st__counts now = {0, 0};
  st__collect c = {0};
  char **fresh = NULL;
  size_t n_fresh = 0, i, sorted;
  st_status rc = ST_OK;

  *out = NULL;
  *n = 0;
  pthread_mutex_lock(&watch_lock);
  stats.polls++;
  dl_iterate_phdr(adds_cb, &now);
  if (primed && now.adds == last_adds && now.subs == last_subs)
    goto out;
  c.skip = primed && now.subs == last_subs ? last_count : 0;
  dl_iterate_phdr(collect_cb, &c);
  if (c.oom) {
    rc = ST_ENOMEM;
    goto out;
  }
  fresh = calloc(c.n ? c.n : 1, sizeof *fresh);
  if (fresh == NULL) {
    rc = ST_ENOMEM;
    goto out;
  }
  sorted = n_seen;
  /* Everything that can fail comes before anything is marked seen: an
   * object is either seen and reported, or neither (and the next call
   * reports it), never seen and lost. */
  if (n_seen + c.n > cap_seen) {
    size_t cap = cap_seen ? cap_seen : 64;
    char **p;
    while (cap < n_seen + c.n)
      cap *= 2;
    p = st__array_resize(seen, cap, sizeof *p);
    if (p == NULL) {
      rc = ST_ENOMEM;
      goto out;
    }
    seen = p;
    cap_seen = cap;
  }
  /* Reported only after the first call: what was loaded before anyone
   * looked belongs to no phase. */
  for (i = 0; i < c.n && primed; i++) {
    if (is_seen(c.items[i], sorted))
      continue;
    fresh[n_fresh] = strdup(c.items[i]);
    if (fresh[n_fresh] == NULL) {
      rc = ST_ENOMEM;
      goto out;
    }
    n_fresh++;
  }
  for (i = 0; i < c.n; i++) {
    if (is_seen(c.items[i], sorted))
      continue;
    seen[n_seen++] = c.items[i];
    c.items[i] = NULL;
  }
  /* Sorted only when it grew: a look that finds nothing new costs one
   * callback, whatever is loaded (libtorch brings ~287 objects). */
  if (n_seen > sorted) {
    qsort(seen, n_seen, sizeof *seen, cmp_str);
    stats.sorts++;
  }
  last_adds = now.adds;
  last_subs = now.subs;
  last_count = c.index;
  primed = 1;
out:
  pthread_mutex_unlock(&watch_lock);
  st__loadwatch_free(c.items, c.n);
  if (rc != ST_OK || n_fresh == 0) {
    st__loadwatch_free(fresh, n_fresh);
    return rc;
  }
  *out = fresh;
  *n = n_fresh;
  return ST_OK;
}

void st__loadwatch_get_stats(st__loadwatch_stats *out) {
  pthread_mutex_lock(&watch_lock);
  *out = stats;
  pthread_mutex_unlock(&watch_lock);
}

typedef struct st__each_ctx {
  int (*fn)(const char *, void *);
  void *data;
} st__each_ctx;

static int each_cb(struct dl_phdr_info *info, size_t size, void *data) {
  st__each_ctx *e = data;
  (void)size;
  if (info->dlpi_name == NULL || info->dlpi_name[0] == '\0')
    return 0;
  return e->fn(info->dlpi_name, e->data);
}

void st__loadwatch_each(int (*fn)(const char *path, void *data), void *data) {
  st__each_ctx e = {fn, data};
  dl_iterate_phdr(each_cb, &e);
}

void st__loadwatch_prime(void) {
  char **l;
  size_t nl;
  if (st__loadwatch_poll(&l, &nl) == ST_OK)
    st__loadwatch_free(l, nl);
}
