/* SPDX-License-Identifier: MIT */
/* Tensor buffers (tbuf.h): 64-byte aligned blocks between guard zones,
 * cached for reuse inside a run, or placed against a PROT_NONE page.
 *
 * A guard-page block is an mmap'd run of pages laid out as
 *   [slack][header 64][front guard 64][data: nbytes] | PROT_NONE page
 * with data + nbytes exactly at the protected page, so the data's start is
 * aligned only as far as nbytes allows (tbuf.h) and its header sits at the
 * 64-byte boundary at or below data - 128.
 *
 * A malloc'd block is laid out as
 *   [slack][header 64][front guard 64][data: cap bytes][64 more]
 * with the rear guard at data + nbytes, so it moves with the size asked
 * for when a cached block of a larger capacity is reused. The alignment is
 * done by hand over a malloc'd block rather than with posix_memalign:
 * glibc's aligned allocations leave holes that small allocations fill,
 * and then the next aligned request fits none of them (issue 14). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "case/tbuf.h"

#define ALIGN 64u
#define HDR 64u
#define MAGIC 0x54425546u /* "TBUF" */
#define KIND_HEAP 1u
#define KIND_PAGES 2u

/* Cache bounds: enough for the buffers of a few cases in flight at -j. */
#define CACHE_BLOCKS 64
#define CACHE_BYTES ((size_t)512 << 20)

typedef struct hdr {
  void *raw;     /* what malloc or mmap returned */
  size_t rawlen; /* mmap: the mapping's length */
  size_t nbytes; /* usable bytes asked for */
  size_t cap;    /* heap: bytes the data area holds (rear zone after it) */
  size_t rear;   /* bytes of canary after data + nbytes */
  uint32_t magic;
  uint32_t kind;
} hdr;

_Static_assert(sizeof(hdr) <= HDR, "the header fits its 64 bytes");

/* The canary: bytes that are no small float (as float32 it reads about
 * -1.35e38, as float16 NaNs and huge values) nor a small integer, so a
 * kernel writing ordinary values past the end always changes it. */
static const unsigned char canary[8] = {0xFB, 0xED, 0xCA, 0xFE,
                                        0xDB, 0xAD, 0xF0, 0x8D};

/* The canary repeated: pattern + (address & 7) is what a zone of up to
 * ST__TBUF_GUARD bytes at that address holds, so arming and checking a
 * zone of a heap block is one memcpy or memcmp (they run every case, for
 * every buffer), not a loop over bytes. */
#define PATTERN_BYTES (ST__TBUF_GUARD + 8u)
static const unsigned char pattern[PATTERN_BYTES] = {
#define C8 0xFB, 0xED, 0xCA, 0xFE, 0xDB, 0xAD, 0xF0, 0x8D
    C8, C8, C8, C8, C8,
    C8, C8, C8, C8
#undef C8
};
_Static_assert(PATTERN_BYTES == 72u, "nine copies of the canary");

static void arm(unsigned char *p, size_t n) {
  if (n <= ST__TBUF_GUARD) {
    memcpy(p, pattern + ((uintptr_t)p & 7u), n);
    return;
  }
  for (size_t i = 0; i < n; i++)
    p[i] = canary[((uintptr_t)(p + i)) & 7u];
}

/* 1 when the n bytes at p (n <= ST__TBUF_GUARD) are all canary. */
static int zone_intact(const unsigned char *p, size_t n) {
  return n <= ST__TBUF_GUARD &&
         memcmp(p, pattern + ((uintptr_t)p & 7u), n) == 0;
}

static int armed(const unsigned char *p, size_t i) {
  return p[i] == canary[((uintptr_t)(p + i)) & 7u];
}

/* For a heap block (data 64-aligned) this is data - 128; for a
 * guard-page block the boundary at or below it. */
static hdr *header_of(const void *data) {
  return (hdr *)(void *)(((uintptr_t)data - ST__TBUF_GUARD - HDR) &
                         ~(uintptr_t)(ALIGN - 1));
}

/* The cache. guarded by: cache_mu */
static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;
static hdr *cache[CACHE_BLOCKS]; /* guarded by: cache_mu */
static size_t cache_n;           /* guarded by: cache_mu */
static size_t cache_bytes;       /* guarded by: cache_mu */
static unsigned scope_depth;     /* guarded by: cache_mu */

static atomic_int guard_pages_on;

/* Live guard-page buffers, for the fault handler: the guard page's start
 * (0 = free slot), the buffer's size and the name its tensor was given.
 * A full table only means a fault there is reported as a plain signal.
 * The name is a copy (the handler must never follow a pointer into memory
 * that may be gone); a handler racing a rename may read it torn, which
 * costs a message, never a fault. */
#define GUARD_SLOTS 4096
static _Atomic(uintptr_t) guard_page_at[GUARD_SLOTS];
static _Atomic(size_t) guard_nbytes[GUARD_SLOTS];
static char guard_name[GUARD_SLOTS][ST__TBUF_NAME_MAX];

static size_t page_size(void) {
  static atomic_size_t cached;
  size_t p = atomic_load_explicit(&cached, memory_order_relaxed);
  if (p == 0) {
    long v = sysconf(_SC_PAGESIZE);
    p = v > 0 ? (size_t)v : 4096u;
    atomic_store_explicit(&cached, p, memory_order_relaxed);
  }
  return p;
}

static void arm_block(hdr *h, unsigned char *data) {
  arm(data - ST__TBUF_GUARD, ST__TBUF_GUARD);
  arm(data + h->nbytes, h->rear);
}

static void *heap_alloc(size_t nbytes) {
  size_t cap = (nbytes + ALIGN - 1) & ~(size_t)(ALIGN - 1);
  if (cap < nbytes)
    return NULL;
  const size_t extra = HDR + ST__TBUF_GUARD + ST__TBUF_GUARD + ALIGN - 1;
  if (cap > SIZE_MAX - extra)
    return NULL;
  unsigned char *raw = malloc(cap + extra);
  if (raw == NULL)
    return NULL;
  uintptr_t d = ((uintptr_t)raw + HDR + ST__TBUF_GUARD + ALIGN - 1) &
                ~(uintptr_t)(ALIGN - 1);
  unsigned char *data = (unsigned char *)d;
  hdr *h = header_of(data);
  h->raw = raw;
  h->rawlen = 0;
  h->cap = cap;
  h->magic = MAGIC;
  h->kind = KIND_HEAP;
  return data;
}

static void register_guard(uintptr_t page, size_t nbytes) {
  for (size_t i = 0; i < GUARD_SLOTS; i++) {
    uintptr_t zero = 0;
    if (atomic_compare_exchange_strong(&guard_page_at[i], &zero, page)) {
      guard_name[i][0] = '\0';
      atomic_store(&guard_nbytes[i], nbytes);
      return;
    }
  }
}

static size_t guard_slot(uintptr_t page) {
  for (size_t i = 0; i < GUARD_SLOTS; i++)
    if (atomic_load(&guard_page_at[i]) == page)
      return i;
  return GUARD_SLOTS;
}

static void unregister_guard(uintptr_t page) {
  const size_t i = guard_slot(page);
  if (i < GUARD_SLOTS)
    atomic_store(&guard_page_at[i], 0);
}

/* The data ends exactly at a PROT_NONE page: the first byte past the end
 * faults. */
static void *pages_alloc(size_t nbytes) {
  const size_t pg = page_size();
  const size_t front = HDR + ST__TBUF_GUARD + ALIGN;
  if (nbytes > SIZE_MAX - front - 2 * pg)
    return NULL;
  const size_t body = ((front + nbytes + pg - 1) / pg) * pg;
  const size_t len = body + pg;
  unsigned char *raw = mmap(NULL, len, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED)
    return NULL;
  if (mprotect(raw + body, pg, PROT_NONE) != 0) {
    munmap(raw, len);
    return NULL;
  }
  unsigned char *data = raw + body - nbytes;
  hdr *h = header_of(data);
  h->raw = raw;
  h->rawlen = len;
  h->cap = nbytes;
  h->magic = MAGIC;
  h->kind = KIND_PAGES;
  register_guard((uintptr_t)(raw + body), nbytes);
  return data;
}

static void release(hdr *h) {
  if (h->kind == KIND_PAGES) {
    unregister_guard((uintptr_t)h->raw + h->rawlen - page_size());
    munmap(h->raw, h->rawlen);
  } else {
    free(h->raw);
  }
}

/* Takes the smallest cached block that holds nbytes without wasting more
 * than about half of it. */
static unsigned char *cache_take(size_t nbytes) {
  unsigned char *data = NULL;
  pthread_mutex_lock(&cache_mu);
  size_t best = cache_n;
  for (size_t i = 0; i < cache_n; i++) {
    const size_t cap = cache[i]->cap;
    if (cap >= nbytes && cap / 2 <= nbytes + ALIGN &&
        (best == cache_n || cap < cache[best]->cap))
      best = i;
  }
  if (best < cache_n) {
    hdr *h = cache[best];
    cache[best] = cache[--cache_n];
    cache_bytes -= h->cap;
    data = (unsigned char *)h + HDR + ST__TBUF_GUARD;
  }
  pthread_mutex_unlock(&cache_mu);
  return data;
}

void *st__tbuf_alloc(size_t nbytes) {
  unsigned char *data;
  if (atomic_load_explicit(&guard_pages_on, memory_order_relaxed)) {
    data = pages_alloc(nbytes);
  } else {
    data = cache_take(nbytes);
    if (data == NULL)
      data = heap_alloc(nbytes);
  }
  if (data == NULL)
    return NULL;
  hdr *h = header_of(data);
  h->nbytes = nbytes;
  h->rear = h->kind == KIND_PAGES
                ? (size_t)(((uintptr_t)h->raw + h->rawlen - page_size()) -
                           ((uintptr_t)data + nbytes))
                : ST__TBUF_GUARD;
  arm_block(h, data);
  return data;
}

void st__tbuf_free(void *data) {
  if (data == NULL)
    return;
  hdr *h = header_of(data);
  if (h->kind == KIND_HEAP) {
    pthread_mutex_lock(&cache_mu);
    if (scope_depth > 0 && cache_n < CACHE_BLOCKS &&
        h->cap <= CACHE_BYTES - cache_bytes) {
      cache[cache_n++] = h;
      cache_bytes += h->cap;
      h = NULL;
    }
    pthread_mutex_unlock(&cache_mu);
  }
  if (h != NULL)
    release(h);
}

size_t st__tbuf_size(const void *data) {
  return data == NULL ? 0 : header_of(data)->nbytes;
}

int st__tbuf_check(const void *data, st__tbuf_damage *out) {
  out->before = 0;
  out->after = 0;
  if (data == NULL)
    return 0;
  const hdr *h = header_of(data);
  const unsigned char *front = (const unsigned char *)data - ST__TBUF_GUARD;
  const unsigned char *rear = (const unsigned char *)data + h->nbytes;
  if (zone_intact(front, ST__TBUF_GUARD) && zone_intact(rear, h->rear))
    return 0; /* the common case: nothing to locate */
  for (size_t i = 0; i < ST__TBUF_GUARD; i++) {
    if (!armed(front, i)) {
      out->before = ST__TBUF_GUARD - i;
      break;
    }
  }
  for (size_t i = h->rear; i > 0; i--) {
    if (!armed(rear, i - 1)) {
      out->after = i;
      break;
    }
  }
  return out->before != 0 || out->after != 0;
}

void st__tbuf_zones_arm(void *data, size_t nbytes) {
  arm((unsigned char *)data - ST__TBUF_GUARD, ST__TBUF_GUARD);
  arm((unsigned char *)data + nbytes, ST__TBUF_GUARD);
}

int st__tbuf_zones_check(const void *data, size_t nbytes,
                         st__tbuf_damage *out) {
  const unsigned char *front = (const unsigned char *)data - ST__TBUF_GUARD;
  const unsigned char *rear = (const unsigned char *)data + nbytes;
  out->before = 0;
  out->after = 0;
  for (size_t i = 0; i < ST__TBUF_GUARD; i++) {
    if (!armed(front, i)) {
      out->before = ST__TBUF_GUARD - i;
      break;
    }
  }
  for (size_t i = ST__TBUF_GUARD; i > 0; i--) {
    if (!armed(rear, i - 1)) {
      out->after = i;
      break;
    }
  }
  return out->before != 0 || out->after != 0;
}

void st__tbuf_rearm(void *data) {
  if (data != NULL)
    arm_block(header_of(data), data);
}

void st__tbuf_run_begin(void) {
  pthread_mutex_lock(&cache_mu);
  scope_depth++;
  pthread_mutex_unlock(&cache_mu);
}

void st__tbuf_run_end(void) {
  hdr *drop[CACHE_BLOCKS];
  size_t n = 0;
  pthread_mutex_lock(&cache_mu);
  if (scope_depth > 0 && --scope_depth == 0) {
    n = cache_n;
    memcpy(drop, cache, n * sizeof drop[0]);
    cache_n = 0;
    cache_bytes = 0;
  }
  pthread_mutex_unlock(&cache_mu);
  for (size_t i = 0; i < n; i++)
    release(drop[i]);
}

void st__tbuf_set_guard_pages(int on) {
  atomic_store(&guard_pages_on, on != 0);
}

int st__tbuf_guard_pages(void) { return atomic_load(&guard_pages_on); }

void st__tbuf_set_name(void *data, const char *name) {
  if (data == NULL || name == NULL || header_of(data)->kind != KIND_PAGES)
    return;
  const hdr *h = header_of(data);
  const size_t i = guard_slot((uintptr_t)h->raw + h->rawlen - page_size());
  if (i >= GUARD_SLOTS)
    return;
  size_t n = strlen(name);
  if (n >= ST__TBUF_NAME_MAX)
    n = ST__TBUF_NAME_MAX - 1;
  memcpy(guard_name[i], name, n);
  guard_name[i][n] = '\0';
}

int st__tbuf_guard_hit(const void *addr, st__tbuf_hit *out) {
  const uintptr_t a = (uintptr_t)addr;
  const size_t pg = page_size();
  for (size_t i = 0; i < GUARD_SLOTS; i++) {
    const uintptr_t p =
        atomic_load_explicit(&guard_page_at[i], memory_order_relaxed);
    if (p != 0 && a >= p && a < p + pg) {
      out->offset = (size_t)(a - p);
      out->nbytes =
          atomic_load_explicit(&guard_nbytes[i], memory_order_relaxed);
      out->name = guard_name[i];
      return 1;
    }
  }
  return 0;
}
