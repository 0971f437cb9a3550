/* SPDX-License-Identifier: MIT */
/* The segment pool and the rehost of a case's tensors (rehost.h).
 *
 * Why a pool: copying into a freshly created memfd mapping pays a page
 * fault per page (the kernel zero-fills shmem pages on first touch, about
 * 12 us each on the machine this was written on: ~0.3 GB/s), while a copy
 * into a segment whose pages are already resident runs at memcpy speed.
 * So released segments stay mapped and are handed out again, best fit
 * first, until the idle cap is reached (docs/level3.md). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "case/level3/rehost.h"
#include "case/tbuf.h"

int st__rehost_fail_at;

typedef struct seg_pool {
  pthread_mutex_t lock;
  st__seg *list;    /* guarded by: lock; every live segment */
  uint64_t next_id; /* guarded by: lock */
  uint64_t clock;   /* guarded by: lock */
  size_t cap_bytes; /* guarded by: lock */
  size_t cap_count; /* guarded by: lock */
} seg_pool;

static seg_pool pool = {
    PTHREAD_MUTEX_INITIALIZER, NULL, 1, 0, ST__SEG_POOL_CAP_BYTES,
    ST__SEG_POOL_CAP_COUNT};

static size_t page_round(size_t n) {
  long pg = sysconf(_SC_PAGESIZE);
  size_t p = pg > 0 ? (size_t)pg : 4096;
  if (n > SIZE_MAX - p)
    return 0;
  return (n + p - 1) / p * p;
}

static void seg_destroy(st__seg *s) {
  if (s->map != NULL && s->map != MAP_FAILED)
    munmap(s->map, s->size);
  if (s->fd >= 0)
    close(s->fd);
  free(s);
}

/* Unlinks s from the pool's list. Caller holds the lock. */
static void unlink_seg(st__seg *s) {
  st__seg **pp;
  for (pp = &pool.list; *pp != NULL; pp = &(*pp)->next)
    if (*pp == s) {
      *pp = s->next;
      return;
    }
}

/* Destroys least recently released idle segments until the idle ones fit
 * the cap. Caller holds the lock. */
static void apply_cap(void) {
  for (;;) {
    size_t bytes = 0, count = 0;
    st__seg *s, *oldest = NULL;
    for (s = pool.list; s != NULL; s = s->next) {
      if (s->in_use)
        continue;
      bytes += s->size;
      count++;
      if (oldest == NULL || s->last_used < oldest->last_used)
        oldest = s;
    }
    if (oldest == NULL || (bytes <= pool.cap_bytes && count <= pool.cap_count))
      return;
    unlink_seg(oldest);
    seg_destroy(oldest);
  }
}

static st_status seg_create(size_t size, st__seg **out, st_error *err) {
  st__seg *s = calloc(1, sizeof *s);
  if (s == NULL)
    return st_error_set(err, ST_ENOMEM, "rehost: out of memory");
  s->map = MAP_FAILED;
  /* Anonymous: nothing is left in /dev/shm if the run is killed, unlike
   * named POSIX shm. CLOEXEC: a plugin that execs must not inherit it. */
  s->fd = memfd_create("scenetest-seg", MFD_CLOEXEC);
  if (s->fd < 0) {
    int e = errno;
    free(s);
    return st_error_set(err, ST_ENOMEM, "rehost: memfd_create: %s",
                        strerror(e));
  }
  if (ftruncate(s->fd, (off_t)size) != 0) {
    int e = errno;
    seg_destroy(s);
    return st_error_set(err, ST_ENOMEM,
                        "rehost: cannot size a %zu-byte segment: %s", size,
                        strerror(e));
  }
  s->map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
  if (s->map == MAP_FAILED) {
    int e = errno;
    seg_destroy(s);
    return st_error_set(err, ST_ENOMEM,
                        "rehost: cannot map a %zu-byte segment: %s", size,
                        strerror(e));
  }
  s->size = size;
  *out = s;
  return ST_OK;
}

st_status st__seg_acquire(size_t nbytes, st__seg **out, st_error *err) {
  st__seg *s, *best = NULL;
  size_t size = page_round(nbytes ? nbytes : 1);
  st_status rc;

  *out = NULL;
  if (size == 0)
    return st_error_set(err, ST_ELIMIT, "rehost: %zu bytes is too large",
                        nbytes);
  if (st__rehost_fail_at > 0 && --st__rehost_fail_at == 0)
    return st_error_set(err, ST_ENOMEM,
                        "rehost: cannot create a %zu-byte segment (injected "
                        "fault)",
                        nbytes);
  pthread_mutex_lock(&pool.lock);
  /* Best fit among idle segments, but not one more than twice the size
   * (plus a little): a small tensor must not pin a huge segment. */
  for (s = pool.list; s != NULL; s = s->next)
    if (!s->in_use && s->size >= size &&
        s->size - size <= size + ((size_t)64 << 10) &&
        (best == NULL || s->size < best->size))
      best = s;
  if (best != NULL) {
    best->in_use = 1;
    pthread_mutex_unlock(&pool.lock);
    *out = best;
    return ST_OK;
  }
  pthread_mutex_unlock(&pool.lock);
  rc = seg_create(size, &s, err);
  if (rc != ST_OK)
    return rc;
  pthread_mutex_lock(&pool.lock);
  s->id = pool.next_id++;
  s->in_use = 1;
  s->next = pool.list;
  pool.list = s;
  pthread_mutex_unlock(&pool.lock);
  *out = s;
  return ST_OK;
}

void st__seg_release(st__seg *seg) {
  if (seg == NULL)
    return;
  pthread_mutex_lock(&pool.lock);
  seg->in_use = 0;
  seg->last_used = ++pool.clock;
  apply_cap();
  pthread_mutex_unlock(&pool.lock);
}

void st__seg_pool_drain(void) {
  st__seg **pp;
  pthread_mutex_lock(&pool.lock);
  pp = &pool.list;
  while (*pp != NULL) {
    st__seg *s = *pp;
    if (s->in_use) {
      pp = &s->next;
      continue;
    }
    *pp = s->next;
    seg_destroy(s);
  }
  pthread_mutex_unlock(&pool.lock);
}

void st__seg_pool_set_cap(size_t bytes, size_t count) {
  pthread_mutex_lock(&pool.lock);
  pool.cap_bytes = bytes;
  pool.cap_count = count;
  apply_cap();
  pthread_mutex_unlock(&pool.lock);
}

void st__seg_pool_stats(size_t *in_use, size_t *idle, size_t *idle_bytes) {
  size_t u = 0, i = 0, b = 0;
  st__seg *s;
  pthread_mutex_lock(&pool.lock);
  for (s = pool.list; s != NULL; s = s->next) {
    if (s->in_use) {
      u++;
    } else {
      i++;
      b += s->size;
    }
  }
  pthread_mutex_unlock(&pool.lock);
  if (in_use)
    *in_use = u;
  if (idle)
    *idle = i;
  if (idle_bytes)
    *idle_bytes = b;
}

void st__seg_pool_forget_after_fork(void) {
  st__seg *s = pool.list;
  /* The child is single-threaded and the forking thread did not hold the
   * lock (forks happen outside pool calls), so the list is consistent. A
   * fresh mutex replaces the inherited one all the same. */
  pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
  /* Written only if they differ: copy-on-write faults (level3.c). */
  if (memcmp(&pool.lock, &fresh, sizeof fresh) != 0)
    pool.lock = fresh;
  while (s != NULL) {
    st__seg *next = s->next;
    seg_destroy(s);
    s = next;
  }
  if (pool.list != NULL)
    pool.list = NULL;
}

typedef struct span {
  const char *start;
  size_t nbytes;
  size_t index;
} span;

static int span_cmp(const void *a, const void *b) {
  const span *x = a, *y = b;
  if (x->start != y->start)
    return x->start < y->start ? -1 : 1;
  return x->index < y->index ? -1 : (x->index > y->index);
}

/* Two tensors whose byte ranges overlap cannot each get their own segment
 * without changing what the kernel sees (a write through one would no
 * longer show through the other), so they are refused. */
static st_status check_aliasing(const st__argset *args, st_error *err) {
  span *v;
  size_t i, n = 0;
  st_status rc = ST_OK;
  if (args->n_tensors < 2)
    return ST_OK;
  v = calloc(args->n_tensors, sizeof *v);
  if (v == NULL)
    return st_error_set(err, ST_ENOMEM, "rehost: out of memory");
  for (i = 0; i < args->n_tensors; i++) {
    const st_tensor *t = &args->tensors[i];
    if (t->nbytes == 0 || t->data == NULL)
      continue;
    v[n].start = t->data;
    v[n].nbytes = t->nbytes;
    v[n].index = i;
    n++;
  }
  qsort(v, n, sizeof *v, span_cmp);
  /* Sorted by start, an overlapping pair implies an overlapping
   * neighbour pair. */
  for (i = 0; i + 1 < n; i++) {
    if ((size_t)(v[i + 1].start - v[i].start) < v[i].nbytes) {
      size_t a = v[i].index < v[i + 1].index ? v[i].index : v[i + 1].index;
      size_t b = v[i].index < v[i + 1].index ? v[i + 1].index : v[i].index;
      rc = st_error_set(err, ST_EINVAL,
                        "rehost: tensors '%s' and '%s' overlap in memory; "
                        "level 3 gives every tensor its own shared segment, "
                        "so arguments must not alias",
                        args->tensors[a].name ? args->tensors[a].name : "?",
                        args->tensors[b].name ? args->tensors[b].name : "?");
      break;
    }
  }
  free(v);
  return rc;
}

st_status st__rehost_args(st__argset *args, st__rehost *out, st_error *err) {
  size_t i, n = 0;
  st_status rc;

  memset(out, 0, sizeof *out);
  rc = check_aliasing(args, err);
  if (rc != ST_OK)
    return rc;
  for (i = 0; i < args->n_tensors; i++)
    if (args->tensors[i].nbytes > 0)
      n++;
  if (n == 0)
    return ST_OK;
  out->segs = calloc(n, sizeof *out->segs);
  out->tensor = calloc(n, sizeof *out->tensor);
  out->orig = calloc(n, sizeof *out->orig);
  if (out->segs == NULL || out->tensor == NULL || out->orig == NULL) {
    rc = st_error_set(err, ST_ENOMEM, "rehost: out of memory");
    goto fail;
  }
  /* Fill every segment first and touch args only once all exist, so a
   * failure leaves the arguments exactly as they were. */
  for (i = 0; i < args->n_tensors; i++) {
    st_tensor *t = &args->tensors[i];
    st__seg *s;
    if (t->nbytes == 0)
      continue;
    if (t->nbytes > SIZE_MAX - 2 * ST__SEG_DATA_AT) {
      rc = st_error_set(err, ST_ELIMIT, "rehost: %zu bytes is too large",
                        t->nbytes);
      goto fail;
    }
    /* [guard zone][data][guard zone], as the tensor allocator's. */
    rc = st__seg_acquire(t->nbytes + 2 * ST__SEG_DATA_AT, &s, err);
    if (rc != ST_OK)
      goto fail;
    if (t->data != NULL)
      memcpy((char *)s->map + ST__SEG_DATA_AT, t->data, t->nbytes);
    st__tbuf_zones_arm((char *)s->map + ST__SEG_DATA_AT, t->nbytes);
    out->segs[out->n] = s;
    out->tensor[out->n] = i;
    out->n++;
  }
  for (i = 0; i < out->n; i++) {
    st_tensor *t = &args->tensors[out->tensor[i]];
    out->orig[i] = t->data;
    t->data = (char *)out->segs[i]->map + ST__SEG_DATA_AT;
  }
  return ST_OK;
fail:
  while (out->n > 0) {
    out->n--;
    st__seg_release(out->segs[out->n]);
  }
  free(out->segs);
  free(out->tensor);
  free(out->orig);
  memset(out, 0, sizeof *out);
  return rc;
}

void st__rehost_commit(st__rehost *rh, st__argset *args) {
  size_t i;
  (void)args;
  /* The argset owns its buffers (st__tbuf_free on st__argset_free); from here
   * each tensor lives in its segment, which release takes back. */
  for (i = 0; i < rh->n; i++) {
    st__tbuf_free(rh->orig[i]);
    rh->orig[i] = NULL;
  }
}

int st__rehost_check(st__rehost *rh, size_t k, size_t nbytes,
                     st__tbuf_damage *out) {
  char *data = (char *)rh->segs[k]->map + ST__SEG_DATA_AT;
  if (!st__tbuf_zones_check(data, nbytes, out))
    return 0;
  st__tbuf_zones_arm(data, nbytes);
  return 1;
}

void st__rehost_release(st__rehost *rh, st__argset *args) {
  if (rh == NULL)
    return;
  /* LIFO, as the field's harness frees: the last made goes first. */
  while (rh->n > 0) {
    size_t k = --rh->n;
    if (args != NULL && rh->tensor[k] < args->n_tensors &&
        args->tensors[rh->tensor[k]].data ==
            (char *)rh->segs[k]->map + ST__SEG_DATA_AT)
      args->tensors[rh->tensor[k]].data = rh->orig[k];
    else
      st__tbuf_free(rh->orig[k]);
    rh->orig[k] = NULL;
    st__seg_release(rh->segs[k]);
  }
  free(rh->segs);
  free(rh->tensor);
  free(rh->orig);
  memset(rh, 0, sizeof *rh);
}
